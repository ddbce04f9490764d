"""Win-rate plot: one line and one interval band per solver."""

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from nnsweeper.evaluation import EvalTable
from nnsweeper.plots import plot_win_rate, save_figure


def row(solver, board, rows, cols, mines, wins, games=10):
    rate = wins / games
    return {
        "solver": solver, "board": board, "rows": rows, "cols": cols, "mines": mines,
        "density": mines / (rows * cols), "first_click": "safe", "games": games, "wins": wins,
        "win_rate": rate, "ci_low": max(rate - 0.1, 0), "ci_high": min(rate + 0.1, 1),
        "mean_guesses": 1.0, "mean_cleared_lost": 0.5, "mean_seconds": 0.01,
        "median_seconds": 0.01,
    }


TABLE = EvalTable([
    row("a", "10x10", 10, 10, 20, 3), row("a", "10x10", 10, 10, 5, 9),
    row("b", "10x10", 10, 10, 5, 10), row("b", "10x10", 10, 10, 20, 6),
])


def axes():
    fig = Figure()
    FigureCanvasAgg(fig)
    return fig, fig.subplots()


def test_one_line_and_band_per_solver_sorted_by_x():
    fig, ax = axes()
    assert plot_win_rate(TABLE, ax) is ax
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["a", "b"]
    np.testing.assert_array_equal(lines[0].get_xdata(), [5, 20])
    np.testing.assert_array_equal(lines[0].get_ydata(), [0.9, 0.3])
    assert len(ax.collections) == 2  # the interval bands
    assert ax.get_xlabel() == "mines"


def test_boards_side_by_side():
    table = EvalTable([row("a", "beginner", 9, 9, 10, 9), row("a", "expert", 16, 30, 99, 2)])
    fig, ax = axes()
    plot_win_rate(table, ax, x="board")
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["beginner\n9x9/10", "expert\n16x30/99"]
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [0, 1])


def test_boards_of_one_size_with_several_mine_counts_stay_apart():
    fig, ax = axes()
    plot_win_rate(TABLE, ax, x="board")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["10x10/20", "10x10/5"]
    np.testing.assert_array_equal(ax.get_lines()[1].get_xdata(), [0, 1])
    np.testing.assert_array_equal(ax.get_lines()[1].get_ydata(), [0.6, 1.0])  # b: 20, then 5


def test_bad_axis_name():
    with pytest.raises(ValueError, match="x must be one of mines, density, board; got 'y'"):
        plot_win_rate(TABLE, axes()[1], x="y")


def test_save_figure_writes_png_atomically(tmp_path):
    fig, ax = axes()
    plot_win_rate(TABLE, ax)
    path = save_figure(fig, tmp_path / "deep" / "win.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in path.parent.iterdir()] == ["win.png"]
