"""What a person uses at a board: the terminal game, grading, replays and the page in the browser.

- :mod:`~nnsweeper.players.play`: ``nnsweeper play``, the terminal game (Textual), its saved
  games (:class:`~nnsweeper.players.play.GameLog`).
- :mod:`~nnsweeper.players.grading`: a finished game graded move by move
  (:func:`~nnsweeper.players.grading.grade`, also ``nnsweeper.grade``).
- :mod:`~nnsweeper.players.replays`: players' replay files (AVF, RMV, MVF, EVF) read as games.
- :mod:`~nnsweeper.players.serve`: ``nnsweeper serve``, the page and its JSON endpoints, its
  static files as package data.

The core they build on stays at the package root (the game, what a player sees, seeds and
errors) and in the engine and solver packages; nothing there imports this package.
"""
