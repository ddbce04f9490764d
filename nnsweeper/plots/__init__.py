"""Figures drawn from results: win rate, reliability, P(mine) boards and game animations.

Plotting functions only draw: they read a table, curves, boards or frames computed
elsewhere, take an optional axes (or figure, when one call fills several axes) to
draw on, and return the axes or the figure; :func:`animate_game` returns the GIF it
writes. pyplot is imported only when a function has to create its own figure, and
no backend is chosen here; the command line saves through the Agg canvas. The frames
of a played game come from :func:`nnsweeper.solvers.replay.game_frames`.

One module per figure kind: :mod:`~nnsweeper.plots.winrate` (win rates and their
differences), :mod:`~nnsweeper.plots.reliability`, :mod:`~nnsweeper.plots.boards`
(P(mine) boards) and :mod:`~nnsweeper.plots.animation` (GIFs). Every figure draws a
solver or model in the colour and marker of its name, from
:mod:`~nnsweeper.plots.palette` (:func:`solver_style`, :func:`solver_color`): fixed
for the solvers that ship with nnsweeper, derived from the name for any other, and
never dependent on the other solvers of a figure.
"""

from nnsweeper.plots._common import agg_figure, save_figure
from nnsweeper.plots.animation import animate_game
from nnsweeper.plots.boards import plot_position, plot_probability_boards
from nnsweeper.plots.palette import solver_color, solver_style
from nnsweeper.plots.reliability import plot_reliability
from nnsweeper.plots.winrate import (
    evaluation_axis,
    evaluation_title,
    plot_evaluation,
    plot_gap_bands,
    plot_win_rate,
    plot_win_rate_difference,
)

__all__ = [
    "plot_win_rate",
    "plot_win_rate_difference",
    "plot_gap_bands",
    "plot_evaluation",
    "evaluation_axis",
    "evaluation_title",
    "agg_figure",
    "save_figure",
    "plot_reliability",
    "plot_position",
    "plot_probability_boards",
    "animate_game",
    "solver_style",
    "solver_color",
]
