"""Win-rate and difference plots; reliability diagram; P(mine) boards; GIFs."""

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from PIL import Image

from nnsweeper.evaluation import EvalTable, evaluate, game_seeds, wilson_interval
from nnsweeper.evaluation.summary import pooled_difference
from nnsweeper.metrics import PredictionSet, reliability_curve
from nnsweeper.plots import (
    animate_game,
    plot_evaluation,
    plot_gap_bands,
    plot_probability_boards,
    plot_reliability,
    plot_win_rate,
    plot_win_rate_difference,
    save_figure,
    solver_color,
    solver_style,
)


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
    a, b = ax.get_lines()
    # Each solver a little to the side of the board's tick, a to the left, b to the right.
    shift_a, shift_b = a.get_xdata()[0], b.get_xdata()[0]
    assert -0.5 < shift_a < 0 < shift_b < 0.5
    np.testing.assert_allclose(a.get_xdata(), [shift_a, 1 + shift_a])
    np.testing.assert_allclose(b.get_xdata(), [shift_b, 1 + shift_b])
    np.testing.assert_array_equal(b.get_ydata(), [0.6, 1.0])  # b: 20, then 5


def test_bad_axis_name():
    with pytest.raises(ValueError, match="x must be one of mines, density, board; got 'y'"):
        plot_win_rate(TABLE, axes()[1], x="y")


def test_save_figure_writes_png_atomically(tmp_path):
    fig, ax = axes()
    plot_win_rate(TABLE, ax)
    path = save_figure(fig, tmp_path / "deep" / "win.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in path.parent.iterdir()] == ["win.png"]


def test_win_rate_legend_outside_and_solver_styles():
    fig, ax = axes()
    plot_win_rate(TABLE, ax, legend="outside", reference="b")
    a, b = ax.get_lines()
    # Colours and markers come from the names; the reference is only drawn thicker.
    assert (a.get_color(), a.get_marker()) == (solver_color("a"), solver_style("a")["marker"])
    assert (b.get_color(), b.get_marker()) == (solver_color("b"), solver_style("b")["marker"])
    assert b.get_linewidth() > a.get_linewidth()
    legend = ax.get_legend()
    assert legend.get_bbox_to_anchor().x0 > ax.get_window_extent().x1  # right of the axes
    with pytest.raises(ValueError, match="legend must be 'inside', 'outside' or None; got 'top'"):
        plot_win_rate(TABLE, ax, legend="top")


# Differences from a reference solver.


def wins_on_even_seed(env, rng):
    return env.seed % 2 == 0


def wins_on_multiple_of_three(env, rng):
    return env.seed % 3 == 0


def never_wins(env, rng):
    return False


PLAYED = evaluate({"even": wins_on_even_seed, "csp": wins_on_multiple_of_three, "never": never_wins},
                  [3, 2], rows=4, cols=4, trials=30)


def test_difference_lines_in_percentage_points_with_bands_and_zero_line():
    fig, ax = axes()
    assert plot_win_rate_difference(PLAYED, "csp", ax) is ax
    zero, even, never = ax.get_lines()
    assert list(zero.get_ydata()) == [0, 0] and zero.get_color() == solver_color("csp") == "#000000"
    assert [even.get_label(), never.get_label()] == ["even", "never"]
    np.testing.assert_array_equal(even.get_xdata(), [2, 3])  # sorted by mine count
    diffs = PLAYED.difference("even", "csp")  # rows at 3, then 2 mines
    np.testing.assert_allclose(even.get_ydata(), [100 * d["difference"] for d in diffs[::-1]])
    seeds = game_seeds(0, 30)
    expected = 100 * (np.mean(seeds % 2 == 0) - np.mean(seeds % 3 == 0))
    np.testing.assert_allclose(even.get_ydata(), [expected, expected])
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(100 * diffs[0]["ci_low"])
    assert band.max() == pytest.approx(100 * diffs[0]["ci_high"])
    assert len(ax.collections) == 2
    assert ax.get_ylabel() == "win rate \N{MINUS SIGN} csp\n(percentage points, paired 95% CI)"
    # Colours follow the win-rate plot, and the names.
    fig2, ax2 = axes()
    plot_win_rate(PLAYED, ax2, reference="csp")
    colours = {line.get_label(): line.get_color() for line in ax2.get_lines()}
    assert (even.get_color(), never.get_color()) == (colours["even"], colours["never"])
    assert colours == {name: solver_color(name) for name in ("even", "csp", "never")}


def test_difference_intervals_unpaired_without_outcomes():
    rows = [{**r, "outcomes": None} for r in PLAYED]
    fig, ax = axes()
    plot_win_rate_difference(EvalTable(rows), "csp", ax, x="density")
    assert ax.get_ylabel().endswith("(percentage points, 95% CI)")
    assert ax.get_xlabel() == "mine density (mines / cells)"


def test_difference_bad_input():
    with pytest.raises(ValueError, match=r"reference must be one of the table's solvers \(a, b\); got 'csp'"):
        plot_win_rate_difference(TABLE, "csp", axes()[1])
    alone = EvalTable([r for r in PLAYED if r["solver"] == "csp"])
    with pytest.raises(ValueError, match="no solver other than the reference 'csp'"):
        plot_win_rate_difference(alone, "csp", axes()[1])
    apart = EvalTable([PLAYED.rows[0], PLAYED.rows[3]])  # even at 3 mines, csp at 2
    with pytest.raises(ValueError, match="no solver of the table played a configuration that 'csp' played"):
        plot_win_rate_difference(apart, "csp", axes()[1])


def test_difference_scale_leaves_out_a_far_weaker_solver():
    far_apart = EvalTable([row("ref", "10x10", 10, 10, 20, 500, games=1000),
                           row("close", "10x10", 10, 10, 20, 505, games=1000),
                           row("far", "10x10", 10, 10, 20, 0, games=1000)])
    (far,) = far_apart.difference("far", "ref")
    span = f"far ({100 * far['ci_low']:+.0f} to {100 * far['ci_high']:+.0f} pp)"
    fig, ax = axes()
    plot_win_rate_difference(far_apart, "ref", ax, ylim="auto")
    assert [line.get_label() for line in ax.get_lines()] == ["_zero", "close"]
    low, high = ax.get_ylim()
    (close,) = far_apart.difference("close", "ref")
    assert low < 100 * close["ci_low"] and 100 * close["ci_high"] < high < 10
    assert [t.get_text() for t in ax.texts] == [f"not shown, off scale: {span}"]
    fig, ax = axes()
    plot_win_rate_difference(far_apart, "ref", ax, ylim=(-20, 20))
    assert [line.get_label() for line in ax.get_lines()] == ["_zero", "close", "far"]
    assert ax.get_ylim() == (-20, 20) and [t.get_text() for t in ax.texts] == [f"off scale: {span}"]
    fig, ax = axes()
    plot_win_rate_difference(PLAYED, "csp", ax, ylim="auto")  # nothing far apart: all drawn
    assert len(ax.get_lines()) == 3 and len(ax.texts) == 0
    with pytest.raises(ValueError, match=r"ylim must be None, 'auto' or a pair \(low, high\) "
                       r"with low < high; got \(5, 1\)"):
        plot_win_rate_difference(far_apart, "ref", ax, ylim=(5, 1))


def figure():
    fig = Figure()
    FigureCanvasAgg(fig)
    return fig


def test_evaluation_figure_two_panels_with_the_reference():
    fig = plot_evaluation(PLAYED, figure(), title="4x4")
    top, bottom = fig.axes
    assert top.get_shared_x_axes().joined(top, bottom)
    assert [line.get_label() for line in top.get_lines()] == ["even", "csp", "never"]
    assert [line.get_label() for line in bottom.get_lines()] == ["_zero", "even", "never"]
    assert top.get_title() == "4x4" and top.get_xlabel() == "" and bottom.get_xlabel() == "mines"
    assert top.get_legend() is not None and bottom.get_legend() is None
    assert top.get_position().height > bottom.get_position().height


def wins_on_seed_mod_four(env, rng):
    return env.seed % 4 != 0


# Nine mine counts on one board: the main job's shape, so the gaps are pooled in bands.
SWEEP = evaluate({"csp": wins_on_multiple_of_three, "even": wins_on_even_seed, "most": wins_on_seed_mod_four,
                  "never": never_wins}, list(range(3, 12)), rows=4, cols=4, trials=40)


def test_density_bands_cut_neighbouring_counts_into_at_most_five_runs():
    from nnsweeper.plots.winrate import density_bands

    assert density_bands(range(5, 31)) == [list(range(5, 11)), list(range(11, 16)), list(range(16, 21)),
                                           list(range(21, 26)), list(range(26, 31))]
    assert density_bands([7, 3, 5, 3]) == [[3, 5, 7]]  # fewer than six values: one band
    assert density_bands(range(9), bands=2) == [[0, 1, 2, 3, 4], [5, 6, 7, 8]]
    with pytest.raises(ValueError, match="bands must be an integer of at least 1; got 0"):
        density_bands(range(9), bands=0)


def test_gap_bands_pool_each_band_of_mine_counts_with_its_paired_interval():
    fig = figure()
    panels = plot_gap_bands(SWEEP, "csp", list(fig.subplots(1, 2, sharey=True)), solvers=["even", "most"])
    for ax, solver in zip(panels, ["even", "most"], strict=True):
        diffs = SWEEP.difference(solver, "csp")
        bands = [[3, 4, 5], [6, 7, 8], [9, 10, 11]]
        drawn = ax.collections  # the per-count points, then per band an interval box and a gap bar
        gaps = [c for c in drawn if c.get_gid() == "band-gap"]
        boxes = [c for c in drawn if c.get_gid() == "band-interval"]
        assert len(gaps) == len(boxes) == 3
        for band, gap, box in zip(bands, gaps, boxes, strict=True):
            g, low, high, paired = pooled_difference([d for d in diffs if d["mines"] in band])
            assert paired
            (segment,) = gap.get_segments()
            np.testing.assert_allclose(segment[:, 1], [100 * g, 100 * g])
            np.testing.assert_allclose(segment[:, 0], [band[0] - 0.5, band[-1] + 0.5])
            ys = box.get_paths()[0].vertices[:, 1]
            assert ys.min() == pytest.approx(100 * low) and ys.max() == pytest.approx(100 * high)
        g, low, high, _ = pooled_difference(diffs)
        assert ax.get_title() == f"{solver}\nall: {100 * g:+.1f} ({100 * low:+.1f} to {100 * high:+.1f})"
        # Every mine count's gap lies within the panel: none drawn cut at an edge.
        points = next(c for c in drawn if c.get_gid() == "points").get_offsets()
        low_y, high_y = ax.get_ylim()
        assert low_y < points[:, 1].min() and points[:, 1].max() < high_y
        np.testing.assert_allclose(sorted(points[:, 1]), sorted(100 * d["difference"] for d in diffs))
    assert panels[0].get_ylabel() == "win rate minus csp's\n(percentage points)"
    with pytest.raises(ValueError, match="x must be 'mines' or 'density'"):
        plot_gap_bands(SWEEP, "csp", x="board")
    with pytest.raises(ValueError, match="give one axes per solver drawn"):
        plot_gap_bands(SWEEP, "csp", [panels[0]], solvers=["even", "most"])
    with pytest.raises(ValueError, match=r"solvers must be some of even, most, never .*; got \['csp'\]"):
        plot_gap_bands(SWEEP, "csp", [panels[0]], solvers=["csp"])


def test_evaluation_figure_of_a_sweep_draws_one_gap_panel_per_solver():
    fig = plot_evaluation(SWEEP, figure(), title="4x4")
    top, *panels = fig.axes
    assert [ax.get_title().split("\n")[0] for ax in panels] == ["even", "most", "never"]
    assert all(ax.get_shared_y_axes().joined(panels[0], ax) for ax in panels)
    assert top.get_title() == "4x4" and top.get_legend() is not None
    assert top.get_position().y0 > max(ax.get_position().y1 for ax in panels)
    # A caption under the panels says what the dots, bars and shades are, clear of the panels.
    (caption,) = [t for t in fig.texts if t.get_gid() == "caption"]
    assert caption.get_text().startswith("Below: each solver's win rate minus csp's on the same games")
    assert "Dots: one mine count; bar: a band of counts pooled" in caption.get_text()
    fig.canvas.draw()
    box = caption.get_window_extent().transformed(fig.transFigure.inverted())
    assert box.y1 < min(ax.get_tightbbox().transformed(fig.transFigure.inverted()).y0 for ax in panels)
    # Few mine counts keep the one difference panel under the win rates.
    assert len(plot_evaluation(PLAYED, figure()).axes) == 2


def test_evaluation_figure_one_panel_otherwise():
    assert len(plot_evaluation(PLAYED, figure(), reference=None).axes) == 1
    assert len(plot_evaluation(PLAYED, figure(), reference="single_point").axes) == 1
    one = EvalTable([r for r in PLAYED if r["solver"] == "csp"])
    fig = plot_evaluation(one, figure())
    assert len(fig.axes) == 1 and fig.get_size_inches()[1] == pytest.approx(4.2)


# One style per solver name, whatever the table; intervals drawn for every point.

SHIPPED = ("single_point", "csp", "cnn", "gnn", "hybrid-cnn", "hybrid-gnn")


def wilson_row(solver, board, rows, cols, mines, wins, games=100):
    """A row whose interval is the Wilson interval of its counts, as evaluate writes it."""
    low, high = wilson_interval(wins, games)
    return {**row(solver, board, rows, cols, mines, wins, games), "ci_low": low, "ci_high": high}


def mine_rows(names, counts=((5, 90), (10, 70), (20, 30))):
    return [wilson_row(name, "10x10", 10, 10, mines, wins - 3 * k)
            for k, name in enumerate(names) for mines, wins in counts]


SIX = EvalTable(mine_rows(SHIPPED))


def line_styles(ax) -> dict:
    """{label: (colour, marker)} of the labelled lines of ``ax``."""
    return {line.get_label(): (to_hex(line.get_color()), line.get_marker())
            for line in ax.get_lines() if not line.get_label().startswith("_")}


def interval_artists(ax, gid) -> dict:
    """{line label: collection} of the interval bands (``"band"``) or bars (``"bars"``)."""
    return {c.get_label()[1:-len(" interval")]: c for c in ax.collections if c.get_gid() == gid}


def expected_styles(names) -> dict:
    return {name: (solver_style(name)["color"], solver_style(name)["marker"]) for name in names}


def test_a_solver_looks_the_same_in_every_figure():
    three = EvalTable([r for name in ("gnn", "csp", "single_point") for r in SIX if r["solver"] == name])
    reordered = EvalTable(SIX.rows[::-1])
    figures = [plot_evaluation(SIX, figure(), reference="csp"),
               plot_evaluation(SIX, figure(), reference="hybrid-gnn"),
               plot_evaluation(SIX, figure(), x="board", reference="gnn"),
               plot_evaluation(three, figure(), reference="csp"),
               plot_evaluation(reordered, figure(), reference="csp")]
    seen = {}
    for fig in figures:
        for ax in fig.axes:
            styles = line_styles(ax)
            assert styles == expected_styles(styles)
            for name, (colour, marker) in styles.items():
                seen.setdefault(name, set()).add((colour, marker))
            # Each interval (band or bars) in its line's colour.
            for name, band in interval_artists(ax, "band").items():
                assert to_hex(band.get_facecolor()[0]) == solver_color(name)
            for name, bars in interval_artists(ax, "bars").items():
                assert to_hex(bars.get_color()[0]) == solver_color(name)
    assert set(seen) == set(SHIPPED) and all(len(styles) == 1 for styles in seen.values())
    assert seen["csp"] == {("#000000", "o")}  # black whatever the reference
    # The zero line is the reference's, in its colour.
    for fig, reference in zip(figures[:3], ("csp", "hybrid-gnn", "gnn"), strict=True):
        zero = next(line for line in fig.axes[1].get_lines() if line.get_label() == "_zero")
        assert zero.get_color() == solver_color(reference)


def test_other_names_keep_their_own_style_and_appear_in_the_legend():
    alone = EvalTable(mine_rows(["csp", "mygnn"]))
    crowd = EvalTable(mine_rows([*SHIPPED, "mygnn", "my solver"]))
    styles = []
    for table in (alone, crowd):
        fig = plot_evaluation(table, figure())
        top = fig.axes[0]
        assert "mygnn" in [t.get_text() for t in top.get_legend().get_texts()]
        styles.append(line_styles(top)["mygnn"])
        assert line_styles(fig.axes[1])["mygnn"] == styles[-1]
    assert styles[0] == styles[1] == (solver_color("mygnn"), solver_style("mygnn")["marker"])
    assert solver_color("mygnn") not in {solver_color(name) for name in SHIPPED}


def segments(collection) -> list:
    return [np.asarray(seg).tolist() for seg in collection.get_segments()]


def test_a_one_point_solver_gets_its_wilson_interval_as_a_bar():
    lone = wilson_row("lone", "10x10", 10, 10, 20, 7, games=50)
    table = EvalTable([*TABLE.rows, lone])
    fig, ax = axes()
    plot_win_rate(table, ax)
    assert set(interval_artists(ax, "band")) == {"a", "b"}  # lines of two points keep bands
    (bars,) = interval_artists(ax, "bars").values()
    ((x0, low), (x1, high)), = segments(bars)
    assert x0 == x1 == pytest.approx(next(line for line in ax.get_lines()
                                         if line.get_label() == "lone").get_xdata()[0])
    assert abs(x0 - 20) < 0.5
    assert (low, high) == pytest.approx(wilson_interval(7, 50))
    assert (low, high) == (table.rows[-1]["ci_low"], table.rows[-1]["ci_high"])
    caps = next(c for c in ax.collections if c.get_gid() == "caps")
    np.testing.assert_allclose(sorted(caps.get_offsets()[:, 1]), [low, high])


def test_a_single_board_table_shows_its_interval():
    table = EvalTable([wilson_row("csp", "expert", 16, 30, 99, 1915, games=5000)])
    fig = plot_evaluation(table, figure(), x="board")
    (ax,) = fig.axes
    bars = interval_artists(ax, "bars")["csp"]
    assert segments(bars) == [[[0.0, table.rows[0]["ci_low"]], [0.0, table.rows[0]["ci_high"]]]]
    # The same on the mine axis, where the one mine count is the only tick.
    fig, ax = axes()
    plot_win_rate(table, ax, x="mines")
    ((x, low), (_, high)), = segments(interval_artists(ax, "bars")["csp"])
    assert (x, low, high) == (99, table.rows[0]["ci_low"], table.rows[0]["ci_high"])
    assert list(ax.get_xticks()) == [99] and ax.get_xlim()[0] < 99 < ax.get_xlim()[1]


def test_board_axis_draws_bars_side_by_side_in_both_panels():
    boards = [("beginner", 9, 9, 10), ("expert", 16, 30, 99)]
    table = EvalTable([wilson_row(name, *board, wins=60 - 5 * k)
                       for k, name in enumerate(("csp", "gnn", "mygnn")) for board in boards])
    fig = plot_evaluation(table, figure(), x="board")
    top, bottom = fig.axes
    assert interval_artists(top, "band") == {} and interval_artists(bottom, "band") == {}
    positions = {}
    for ax in (top, bottom):
        for name, bars in interval_artists(ax, "bars").items():
            xs = [seg[0][0] for seg in segments(bars)]
            positions.setdefault(name, []).append(xs)
    # Each solver at one side of both ticks, the same in both panels; no two at one place.
    assert len(positions["csp"]) == 1 and len(positions["gnn"]) == len(positions["mygnn"]) == 2
    for first, *others in positions.values():
        assert all(xs == first for xs in others)
        assert first[1] - first[0] == pytest.approx(1.0) and abs(first[0]) < 0.5
    assert len({xs[0][0] for xs in positions.values()}) == 3


def test_difference_panel_with_six_solvers_draws_every_interval_apart():
    fig, ax = axes()
    plot_win_rate_difference(SIX, "csp", ax)
    bars = interval_artists(ax, "bars")
    assert interval_artists(ax, "band") == {} and set(bars) == set(SHIPPED) - {"csp"}
    places = {}
    for name, collection in bars.items():
        diffs = sorted(SIX.difference(name, "csp"), key=lambda d: d["mines"])
        drawn = sorted(segments(collection))
        assert len(drawn) == 3
        for ((x0, low), (x1, high)), d in zip(drawn, diffs, strict=True):
            assert x0 == x1 and abs(x0 - d["mines"]) < 0.5
            assert (low, high) == pytest.approx((100 * d["ci_low"], 100 * d["ci_high"]))
            places.setdefault(d["mines"], []).append(x0)
        line = next(line for line in ax.get_lines() if line.get_label() == name)
        np.testing.assert_allclose(line.get_xdata(), [seg[0][0] for seg in drawn])
    assert all(len(set(xs)) == 5 for xs in places.values())  # five solvers side by side


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


def test_reliability_colours_follow_the_names():
    fig, ax = axes()
    plot_reliability({"mygnn": preds(0.1, seed=1), "gnn": preds(-0.05, seed=2), "cnn": preds(0.0, seed=3)},
                     ax)
    styles = line_styles(ax)
    names = ("mygnn", "gnn", "cnn")
    assert {name: styles[name] for name in names} == expected_styles(names)
    assert {f"exact ({name})": styles[f"exact ({name})"][0] for name in names} == {
        f"exact ({name})": solver_color(name) for name in names}
    fig, ax = axes()
    plot_reliability(preds(0.1), ax, label="gnn")
    assert line_styles(ax)["gnn"] == expected_styles(["gnn"])["gnn"]


def test_reliability_saves_png(tmp_path):
    fig, ax = axes()
    plot_reliability({"cnn": preds(0.1), "gnn": preds(-0.05)}, ax)
    path = save_figure(fig, tmp_path / "reliability.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# P(mine) boards and the game animation.

GRID = np.array([
    [-1, -1, 1, 0],
    [-1, -1, 2, 1],
    [-1, -1, -1, -1],
])
COVERED = GRID == -1
FLAGS = np.zeros(GRID.shape, dtype=bool)
FLAGS[2, 3] = True
MINES = np.zeros(GRID.shape, dtype=bool)
MINES[0, 0] = MINES[2, 3] = True


def prob_map(seed):
    values = np.round(np.random.default_rng(seed).uniform(0.01, 0.99, GRID.shape), 2)
    return np.where(COVERED, values, 0.0)


MAPS = {"exact": prob_map(0), "CNN": prob_map(1)}


def texts(ax):
    return [t.get_text() for t in ax.texts]


def test_one_image_per_map_masked_off_the_covered_unflagged_cells():
    fig = plot_probability_boards(GRID, MAPS, flags=FLAGS, title="board 1")
    panels, bar = fig.axes[:2], fig.axes[2:]
    assert len(fig.axes) == 3 and bar[0].get_ylabel() == "P(mine)"  # one shared colorbar
    assert [ax.get_title() for ax in panels] == ["exact", "CNN"]
    assert fig.get_suptitle() == "board 1"
    coloured = COVERED & ~FLAGS
    for ax, p in zip(panels, MAPS.values(), strict=True):
        assert len(ax.images) == 1
        image = ax.images[0]
        assert image.get_clim() == (0.0, 1.0)
        data = image.get_array()
        np.testing.assert_array_equal(np.ma.getmaskarray(data), ~coloured)
        np.testing.assert_array_equal(data.data[coloured], p[coloured])


def test_text_shows_numbers_probabilities_and_flags():
    fig = plot_probability_boards(GRID, {"exact": MAPS["exact"]}, flags=FLAGS, mines=MINES)
    ax = fig.axes[0]
    shown = texts(ax)
    assert sorted(t for t in shown if t in "12345678") == ["1", "1", "2"]  # no text for 0
    assert shown.count("F") == 1
    p = MAPS["exact"]
    expected = sorted(f"{p[r, c]:.2f}" for r, c in np.argwhere(COVERED & ~FLAGS))
    assert sorted(t for t in shown if "." in t) == expected
    flag = next(t for t in ax.texts if t.get_text() == "F")
    assert flag.get_position() == (3, 2)
    # Covered mines are outlined, the flagged one included; the flag sits on a grey tile.
    assert cell_centres(ax, "mine") == [(0, 0), (3, 2)]
    assert cell_centres(ax, "tile") == [(3, 2)]


def cell_centres(ax, gid):
    """(x, y) centres of the rectangles tagged ``gid``, rounded to cells."""
    return sorted(
        (round(patch.get_x() + patch.get_width() / 2), round(patch.get_y() + patch.get_height() / 2))
        for patch in ax.patches if patch.get_gid() == gid
    )


def test_no_probability_text_on_wide_boards():
    grid = np.full((2, 17), -1)
    fig = plot_probability_boards(grid, {"a": np.full(grid.shape, 0.5)})
    assert texts(fig.axes[0]) == []


def test_draws_on_given_axes():
    fig = Figure()
    FigureCanvasAgg(fig)
    axs = fig.subplots(1, 2)
    assert plot_probability_boards(GRID, MAPS, axes=axs) is fig
    assert [len(ax.images) for ax in axs] == [1, 1]
    assert len(fig.axes) == 3  # the colorbar's room is taken from the two panels


@pytest.mark.parametrize("maps, axes_count, message", [
    ({"a": np.zeros((2, 4))}, None, r"maps\['a'\] must have the grid's shape \(3, 4\); got \(2, 4\)"),
    ({"a": np.where(COVERED, 1.5, 0.0)}, None, r"maps\['a'\] must lie in \[0, 1\]; got 1.5 at \(0, 0\)"),
    ({"a": np.where(GRID == 2, np.nan, 0.0)}, None, r"maps\['a'\] must be finite; got nan at \(1, 2\)"),
    ({}, None, "maps must hold at least one P\\(mine\\) map; got an empty dict"),
    (MAPS, 1, r"axes must hold one Axes per map \(2\); got 1"),
])
def test_probability_boards_bad_input(maps, axes_count, message):
    axs = None
    if axes_count is not None:
        fig = Figure()
        axs = [fig.add_subplot(1, axes_count, k + 1) for k in range(axes_count)]
    with pytest.raises(ValueError, match=message):
        plot_probability_boards(GRID, maps, axes=axs)


def test_probability_boards_bad_board():
    with pytest.raises(ValueError, match="grid values must be -1 \\(covered\\) or 0..8; got 9"):
        plot_probability_boards(np.where(GRID == 2, 9, GRID), MAPS)
    with pytest.raises(ValueError, match="flags must have the grid's shape"):
        plot_probability_boards(GRID, MAPS, flags=np.zeros((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="mines must have the grid's shape \\(3, 4\\); got \\(4,\\)"):
        plot_probability_boards(GRID, MAPS, mines=np.zeros(4, dtype=bool))


def hand_frames():
    after = GRID.copy()
    after[0, 0] = 1
    return [
        {"grid": GRID, "probabilities": MAPS["exact"], "move": (0, 0), "flags": FLAGS,
         "label": "move 1: guess at (0, 0), P=0.64"},
        {"grid": after, "probabilities": None, "move": (1, 1), "label": "move 2: no map"},
        {"grid": after, "probabilities": MAPS["CNN"], "move": None},
    ]


def test_animate_game_writes_one_gif_frame_per_move(tmp_path):
    frames = hand_frames()
    path = animate_game(frames, tmp_path / "out" / "game.gif", fps=4, title="seed 7")
    assert path == tmp_path / "out" / "game.gif"
    with Image.open(path) as gif:
        assert gif.format == "GIF"
        assert gif.n_frames == len(frames)
    assert [p.name for p in path.parent.iterdir()] == ["game.gif"]  # no temporary file left


def test_animate_game_shows_the_frames_drawn_only_when_asked(tmp_path, capsys):
    animate_game(hand_frames(), tmp_path / "game.gif", progress=True)
    err = capsys.readouterr().err
    assert "drawing frames: 100%" in err and "3/3" in err
    animate_game(hand_frames(), tmp_path / "game.gif")
    assert capsys.readouterr().err == ""


def test_animate_game_outlines_the_move_and_titles_the_label(tmp_path, monkeypatch):
    from matplotlib.animation import PillowWriter

    seen = []
    grab = PillowWriter.grab_frame

    def record(writer, **kwargs):
        ax = writer.fig.axes[0]
        seen.append((cell_centres(ax, "move"), ax.get_title(), len(cell_centres(ax, "tile")),
                     int(np.ma.count(ax.images[0].get_array()))))
        grab(writer, **kwargs)

    monkeypatch.setattr(PillowWriter, "grab_frame", record)
    animate_game(hand_frames(), tmp_path / "game.gif")
    # (move outline, title, grey tiles, coloured cells): without a map every covered
    # cell is a tile and nothing is coloured.
    assert seen == [
        ([(0, 0)], "move 1: guess at (0, 0), P=0.64", 1, 7),
        ([(1, 1)], "move 2: no map", 7, 0),
        ([], "", 0, 7),
    ]


def test_animate_game_bad_input(tmp_path):
    with pytest.raises(ValueError, match="path must end in .gif"):
        animate_game(hand_frames(), tmp_path / "game.png")
    with pytest.raises(ValueError, match="frames must hold at least one frame"):
        animate_game([], tmp_path / "game.gif")
    frames = hand_frames()
    frames[1]["move"] = (0, 2)
    with pytest.raises(ValueError, match=r"frames\[1\]\['move'\] \(0, 2\) must be a covered cell"):
        animate_game(frames, tmp_path / "game.gif")
    frames = hand_frames()
    del frames[2]["probabilities"]
    with pytest.raises(ValueError, match=r"frames\[2\] lacks 'probabilities'"):
        animate_game(frames, tmp_path / "game.gif")
    assert list(tmp_path.iterdir()) == []


def test_animate_game_draws_on_a_given_figure(tmp_path):
    fig = figure()
    path = animate_game(hand_frames(), tmp_path / "game.gif", fig=fig)
    with Image.open(path) as gif:
        assert gif.n_frames == 3
    assert len(fig.axes) == 2 and fig.axes[0].get_title() == ""  # the last frame, and its colorbar
    with pytest.raises(ValueError, match="fig must be an empty figure to fill; it holds 2 axes"):
        animate_game(hand_frames(), tmp_path / "again.gif", fig=fig)
    assert [p.name for p in tmp_path.iterdir()] == ["game.gif"]


def test_probability_boards_fill_a_given_figure():
    fig = figure()
    assert plot_probability_boards(GRID, MAPS, fig=fig, title="board 1") is fig
    assert len(fig.axes) == 3 and [ax.get_title() for ax in fig.axes[:2]] == ["exact", "CNN"]
    import matplotlib.pyplot as plt

    new = plot_probability_boards(GRID, MAPS, title="board 1")
    np.testing.assert_allclose(fig.get_size_inches(), new.get_size_inches())
    plt.close(new)
    with pytest.raises(ValueError, match="fig must be an empty figure to fill; it holds 3 axes"):
        plot_probability_boards(GRID, MAPS, fig=fig)
    with pytest.raises(ValueError, match="fig must be None when axes are given"):
        other = figure()
        plot_probability_boards(GRID, MAPS, fig=figure(), axes=other.subplots(1, 2))
    with pytest.raises(ValueError, match="fig must be a matplotlib Figure; got str"):
        plot_probability_boards(GRID, MAPS, fig="figure")


def test_public_names():
    import nnsweeper.plots as plots

    assert sorted(plots.__all__) == sorted([
        "agg_figure", "animate_game", "evaluation_axis", "evaluation_title", "plot_evaluation",
        "plot_gap_bands", "plot_position", "plot_probability_boards", "plot_reliability", "plot_win_rate",
        "plot_win_rate_difference", "save_figure", "solver_color", "solver_style",
    ])
    assert all(callable(getattr(plots, name)) for name in plots.__all__)


def test_evaluation_axis_and_title_read_the_table():
    from pathlib import Path

    from nnsweeper.evaluation import EvalTable
    from nnsweeper.plots import agg_figure, evaluation_axis, evaluation_title

    results = Path(__file__).resolve().parents[1] / "eval" / "results"
    sweep = EvalTable.from_json(results / "sweep_10x10.json")
    classic = EvalTable.from_json(results / "compare_classic.json")
    assert evaluation_axis(sweep) == "mines" and evaluation_axis(classic) == "board"
    # Played with --board 10x10:5-30/5 (the boards in its metadata, not --mines): one size,
    # no preset, so a mines axis, as eval drew it; several sizes side by side are boards.
    searched = EvalTable.from_json(results / "search_sweep_10x10.json")
    assert "boards" in searched.metadata["arguments"]
    assert evaluation_axis(searched) == "mines"
    mixed = EvalTable([*sweep, *(dict(r, board="9x9", rows=9, cols=9) for r in sweep)])
    assert evaluation_axis(mixed) == "board"
    assert evaluation_title(sweep, "mines") == "10x10, safe first click at the center, 1,000 games per point"
    assert evaluation_title(classic, "board") == ("beginner, intermediate, expert, safe first click in the "
                                                  "corner, 2,000 games per point")
    uneven = [dict(r, games=500 if i % 2 else 1_000_000) for i, r in enumerate(sweep)]  # its rows
    assert evaluation_title(uneven, "mines").endswith(", 500-1,000,000 games per point")
    fig = agg_figure((3, 2))
    assert tuple(fig.get_size_inches()) == (3, 2) and type(fig.canvas).__name__ == "FigureCanvasAgg"


# ----------------------------------------------------------------- a position as a picture
def test_plot_position_marks_probabilities_proofs_and_moves():
    import nnsweeper as ns
    from nnsweeper.plots import plot_position

    # 3x4, 3 mines. The 2 at (0, 3) makes (0, 2) and (1, 2) mines, so the 2 at (1, 3)
    # proves (2, 2) and (2, 3) safe; the 1 at (0, 0) holds the third mine among its
    # neighbours, which proves (2, 0) and (2, 1) safe too.
    grid = np.array([[1, -1, -1, 2], [-1, -1, -1, 2], [-1, -1, -1, -1]])
    obs = ns.Observation.of(grid, 3)
    a = ns.analyze(obs)
    assert a.mines[0, 2] and a.mines[1, 2] and a.mines.sum() == 2
    assert {tuple(x) for x in np.argwhere(a.safe)} == {(2, 0), (2, 1), (2, 2), (2, 3)}
    solver = ns.get_solver("csp")
    moves = [("csp", ns.suggest_move(solver, obs, 0, analysis=a)),
             ("single_point", ns.suggest_move(ns.get_solver("single_point"), obs, 0, analysis=a))]
    fig = Figure()
    FigureCanvasAgg(fig)
    assert plot_position(obs, a, moves, fig=fig) is fig
    ax = fig.axes[0]
    image = ax.get_images()[0].get_array()
    covered = (grid == -1)
    np.testing.assert_allclose(image.data[covered], a.probabilities[covered])
    proven = {(round(p.get_x() + 0.44), round(p.get_y() + 0.44)) for p in ax.patches if p.get_gid() == "mine"}
    assert proven == {(c, r) for r, c in np.argwhere(a.mines)}
    safe = {(round(p.get_y() + 0.44), round(p.get_x() + 0.44)) for p in ax.patches if p.get_gid() == "safe"}
    assert safe == {tuple(x) for x in np.argwhere(a.safe)}
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:2] == [f"csp: {moves[0][1].cell} {moves[0][1].kind}",
                          f"single_point: {moves[1][1].cell} {moves[1][1].kind}"]
    assert labels[-2:] == ["proven safe", "proven mine"]
    for name, move in moves:
        (line,) = [x for x in ax.get_lines() if x.get_gid() == f"suggestion-{name}"]
        r, c = move.cell
        assert abs(line.get_xdata()[0] - c) < 0.5 and abs(line.get_ydata()[0] - r) < 0.5
        assert to_hex(line.get_color()) == to_hex(solver_style(name)["color"])
    with pytest.raises(ValueError, match="fig must be None when ax is given"):
        plot_position(obs, a, ax=ax, fig=fig)


@pytest.mark.parametrize("shape", [(3, 4), (16, 30)])
def test_solvers_on_one_cell_leave_its_value_readable(shape):
    """Four solvers picking the same cell: no marker covers the P(mine) written in it."""
    import nnsweeper as ns
    from nnsweeper.plots import plot_position

    rows, cols = shape
    grid = np.full(shape, -1)
    grid[0, 0] = 1
    obs = ns.Observation.of(grid, 3)
    a = ns.analyze(obs)
    move = ns.suggest_move(ns.get_solver("csp"), obs, 0, analysis=a)
    moves = [(name, move) for name in ("csp", "search", "gnn", "single_point")]
    fig = Figure()
    FigureCanvasAgg(fig)
    plot_position(obs, a, moves, fig=fig)
    fig.canvas.draw()
    ax = fig.axes[0]
    r, c = move.cell
    (text,) = [t for t in ax.texts if t.get_position() == (c, r)]
    box = text.get_window_extent()
    for line in (x for x in ax.get_lines() if (x.get_gid() or "").startswith("suggestion-")):
        x, y = ax.transData.transform((line.get_xdata()[0], line.get_ydata()[0]))
        radius = line.get_markersize() / 2 * fig.dpi / 72
        # The marker's square around its centre misses the text's box.
        assert (x + radius < box.x0 or x - radius > box.x1 or y + radius < box.y0
                or y - radius > box.y1), line.get_gid()
