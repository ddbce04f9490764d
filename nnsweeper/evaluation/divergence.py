"""Where two players of the same game first choose differently, and what kind of choice it was.

Two solvers that play the same seeded game see the same board until one of them guesses
where the other does not. Both open every cell proved safe before they guess (the order of
those moves changes nothing: the board they lead to is the same), so each game is a
sequence of *guess positions*: the board before a move on a cell not proved safe, and the
cell chosen. :func:`first_divergence` replays both players' moves and finds the first guess
position where they differ, the board or the cell, and :func:`classify` names the kind of
choice made there, so that the games one player wins and the other loses can be counted by
what decided them (:func:`tally`).

The kinds, the first that applies:

``"position"``
    The boards differ at the same guess: one player guessed where the other still had
    a move (or had already guessed on another board).
``"50/50"``
    The board holds two cells that must be guessed between at even odds
    (:func:`~nnsweeper.solvers.search.forced_guess`), and one player took one of them.
``"dead cell"``
    One player's cell shows the same number in every layout where it is safe: it teaches
    nothing.
``"endgame"``
    At most :data:`ENDGAME_LAYOUTS` mine layouts fit the board: the position is small
    enough for an exact game-tree search.
``"off-edge"``
    One cell is next to a number and the other is not (an interior cell).
``"first guess"``
    The game's first guess, between two cells next to numbers or two interior ones.
``"look-ahead"``
    A later guess, between two cells next to numbers or two interior ones.

Analysis reads the hidden board only to replay the moves the players made; what it
reports of a position (probabilities, layouts) is the exact engine's, from what the
board shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from nnsweeper.engine import analyze, each_outcome
from nnsweeper.errors import NnsweeperError
from nnsweeper.game import Game, Rules
from nnsweeper.observation import Observation

__all__ = ["ENDGAME_LAYOUTS", "KINDS", "Click", "Divergence", "DivergenceError", "classify",
           "first_divergence", "guess_positions", "tally"]

#: Boards with at most this many mine layouts count as endgames (``search`` searches the game
#: tree exactly up to 2,000 layouts, and up to 20,000 on dense boards).
ENDGAME_LAYOUTS = 20_000
#: Every kind :func:`classify` names, in the order it tries them.
KINDS = ("position", "50/50", "dead cell", "endgame", "off-edge", "first guess", "look-ahead")


class DivergenceError(NnsweeperError, ValueError):
    """A move list that cannot be replayed on its game."""


@dataclass(frozen=True)
class Click:
    """One move of a player: the cell it revealed and whether it knew the cell was safe."""

    cell: tuple[int, int]
    certain: bool


@dataclass(frozen=True)
class GuessPosition:
    """A board on which a player revealed a cell not proved safe, and that cell."""

    grid: np.ndarray = field(repr=False)
    cell: tuple[int, int]

    def key(self) -> bytes:
        return self.grid.tobytes()


@dataclass(frozen=True)
class Divergence:
    """The first guess position at which two players of one game differ.

    Attributes
    ----------
    seed : int
        The game's seed.
    guess : int
        How many guesses both made before it (0: the game's first guess).
    kind : str
        One of :data:`KINDS`.
    cells : (cell or None, cell or None)
        Each player's cell there (None: that player made no guess on this board).
    probabilities : (float or None, float or None)
        The exact P(mine) of each cell on the board of the first player (None where no cell).
    covered : int
        Covered cells on that board.
    layouts : int
        Mine layouts that fit it.
    """

    seed: int
    guess: int
    kind: str
    cells: tuple
    probabilities: tuple
    covered: int
    layouts: int


def guess_positions(rules: Rules, seed: int, clicks: Iterable[Click]) -> list[GuessPosition]:
    """Replay ``clicks`` on game ``seed`` and return the boards on which a guess was made.

    Clicks on cells already revealed are skipped (a flood fill may have opened them),
    also after the game ended.

    Raises
    ------
    DivergenceError
        A click off the board, or a click on a covered cell after the game ended.
    """
    game = Game(rules, seed)
    out = []
    clicks = list(clicks)
    ended = None  # the move that ended the game
    for k, click in enumerate(clicks):
        i, j = click.cell
        if not (0 <= i < rules.rows and 0 <= j < rules.cols):
            raise DivergenceError(f"move {k} of game {seed}: cell {click.cell} is off the "
                                  f"{rules.rows}x{rules.cols} board")
        grid = game.observe()
        if grid[i, j] >= 0:
            continue
        if ended is not None:
            raise DivergenceError(f"game {seed} ended at move {ended}, but {len(clicks) - ended - 1} "
                                  "moves follow")
        if not click.certain:
            out.append(GuessPosition(grid, (int(i), int(j))))
        _, done, _ = game.open_cell(i, j)
        if done:
            ended = k
    return out


def first_divergence(rules: Rules, seed: int, first: Sequence[Click],
                     second: Sequence[Click]) -> Divergence | None:
    """The first guess position where the two players of game ``seed`` differ, classified.

    None when they made the same guesses on the same boards (then the game ended alike
    for both).
    """
    a = guess_positions(rules, seed, first)
    b = guess_positions(rules, seed, second)
    for k in range(max(len(a), len(b))):
        pa = a[k] if k < len(a) else None
        pb = b[k] if k < len(b) else None
        if pa is not None and pb is not None and pa.key() == pb.key() and pa.cell == pb.cell:
            continue
        return classify(rules, seed, k, pa, pb)
    return None


def classify(rules: Rules, seed: int, guess: int, a: GuessPosition | None,
             b: GuessPosition | None) -> Divergence:
    """The :class:`Divergence` of guess ``guess``, where the players' positions ``a`` and ``b`` differ."""
    shown = a if a is not None else b
    analysis = analyze(shown.grid, rules.mines)
    cells = (a.cell if a else None, b.cell if b else None)
    same_board = a is not None and b is not None and a.key() == b.key()
    # Each cell's P(mine) on the board shown (the other player's cell only when it is the same board).
    probs = tuple(None if c is None or (not same_board and c != shown.cell)
                  else float(analysis.probabilities[c]) for c in cells)
    if not same_board:
        kind = "position"
    elif _takes_forced(shown.grid, analysis, cells):
        kind = "50/50"
    elif any(_dead(shown.grid, rules.mines, c) for c in cells):
        kind = "dead cell"
    elif analysis.layouts <= ENDGAME_LAYOUTS:
        kind = "endgame"
    elif analysis.frontier[cells[0]] != analysis.frontier[cells[1]]:
        kind = "off-edge"
    else:
        kind = "first guess" if guess == 0 else "look-ahead"
    return Divergence(seed=int(seed), guess=guess, kind=kind, cells=cells, probabilities=probs,
                      covered=int(analysis.unknown.sum()), layouts=int(analysis.layouts))


def _takes_forced(grid, analysis, cells) -> bool:
    from nnsweeper.solvers.search import forced_guess

    pair = forced_guess(grid, analysis.mines)
    return pair is not None and any(c in pair for c in cells)


def _dead(grid, mines: int, cell) -> bool:
    """Whether ``cell`` shows one number in every layout where it is safe (exact)."""
    return sum(1 for _ in each_outcome(Observation.of(grid, mines), cell)) == 1


def tally(divergences: Iterable[tuple[Divergence, bool]], games: int) -> dict[str, dict]:
    """Discordant games per kind: ``{kind: {"first": n, "second": m, "points": x}}``.

    ``divergences`` pairs each discordant game's divergence with whether the first player
    won it; ``points`` is the net gap the kind makes, ``100 * (n - m) / games``.
    """
    out = {k: {"first": 0, "second": 0} for k in KINDS}
    for d, first_won in divergences:
        out[d.kind]["first" if first_won else "second"] += 1
    for row in out.values():
        row["points"] = 100.0 * (row["first"] - row["second"]) / games
    return out
