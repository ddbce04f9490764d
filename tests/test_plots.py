"""Win-rate plot: one line and one interval band per solver; reliability diagram."""

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from nnsweeper.evaluation import EvalTable
from nnsweeper.metrics import PredictionSet, reliability_curve
from nnsweeper.plots import plot_reliability, plot_win_rate, save_figure


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


# Reliability diagram.


def preds(shift=0.0, seed=0, n=400):
    rng = np.random.default_rng(seed)
    p_exact = rng.uniform(0, 1, n)
    mine = (rng.uniform(size=n) < p_exact).astype(float)
    p_model = np.clip(p_exact + shift, 0, 1)
    return PredictionSet(p_model, p_exact, mine, rng.integers(1, 4, n))


def test_reliability_lines_for_model_and_exact():
    fig, ax = axes()
    p = preds(0.1)
    assert plot_reliability(p, ax, bins=10, title="frontier cells") is ax
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["_diagonal", "model", "exact"]
    curve = reliability_curve(p, bins=10)
    used = curve["weight"] > 0
    np.testing.assert_allclose(lines[1].get_xdata(), curve["mean_predicted"][used])
    np.testing.assert_allclose(lines[1].get_ydata(), curve["observed"][used])
    np.testing.assert_allclose(lines[2].get_xdata(), curve["mean_predicted_exact"][curve["weight_exact"] > 0])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["model", "exact"]
    assert ax.get_title() == "frontier cells"
    assert len(ax.collections) == 2  # the weight-sized markers

    fig, ax = axes()
    plot_reliability(curve, ax, label="cnn", show_exact=False)
    assert [line.get_label() for line in ax.get_lines()] == ["_diagonal", "cnn"]


def test_reliability_several_models():
    fig, ax = axes()
    plot_reliability({"cnn": preds(0.1), "gnn": preds(-0.05)}, ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["cnn", "gnn", "exact"]
    fig, ax = axes()
    plot_reliability({"cnn": preds(0.1, seed=1), "gnn": reliability_curve(preds(0.0, seed=2))}, ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["cnn", "gnn", "exact (cnn)", "exact (gnn)"]


def test_reliability_bad_input():
    with pytest.raises(ValueError, match="must be a PredictionSet, a reliability_curve dict or a dict of"):
        plot_reliability([0.1, 0.2], axes()[1])
    with pytest.raises(ValueError, match="model 'empty' has no cells with weight to plot"):
        plot_reliability({"empty": PredictionSet.empty()}, axes()[1])
    with pytest.raises(ValueError, match="'cnn' must be a PredictionSet or a reliability_curve dict; got"):
        plot_reliability({"cnn": 3}, axes()[1])


def test_reliability_saves_png(tmp_path):
    fig, ax = axes()
    plot_reliability({"cnn": preds(0.1), "gnn": preds(-0.05)}, ax)
    path = save_figure(fig, tmp_path / "reliability.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
