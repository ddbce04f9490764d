"""Figures drawn from results: win rate, reliability, P(mine) boards and game animations.

Plotting functions only draw: they read a table or board computed elsewhere and return
the axes (or the figure, when one call fills several axes). pyplot is imported only
when a function has to create its own figure, and no backend is chosen here; the
command line saves through the Agg canvas. :func:`game_frames` is the exception that
computes: it replays a solver's game to make the frames :func:`animate_game` draws.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from nnsweeper.fileio import atomic_path

__all__ = [
    "plot_win_rate",
    "plot_win_rate_difference",
    "plot_evaluation",
    "save_figure",
    "plot_reliability",
    "plot_probability_boards",
    "animate_game",
    "game_frames",
]

_X_AXES = {
    "mines": ("mines", "mines"),
    "density": ("density", "mine density (mines / cells)"),
    "board": ("board", "board"),
}


# Solver styles: colours from the Okabe-Ito palette (distinguishable with the common
# colour-vision deficiencies), a marker each, and the reference solver in black.
_SOLVER_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#7F7F7F",
                  "#8C510A")
_SOLVER_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_REFERENCE_COLOR = "black"
_SPLIT_STYLES = ("-", "--", ":", "-.")  # board sizes or first-click rules of one solver
_LEGENDS = ("inside", "outside", None)


def _solver_styles(solvers, reference=None) -> dict[str, dict]:
    """A colour and a marker per solver, in table order; ``reference`` in black."""
    styles, k = {}, 0
    for name in solvers:
        if name == reference:
            styles[name] = {"color": _REFERENCE_COLOR, "marker": "o"}
            continue
        styles[name] = {"color": _SOLVER_COLORS[k % len(_SOLVER_COLORS)],
                        "marker": _SOLVER_MARKERS[k % len(_SOLVER_MARKERS)]}
        k += 1
    return styles


def _check_plot_args(table, x, legend) -> None:
    if x not in _X_AXES:
        raise ValueError(f"x must be one of {', '.join(_X_AXES)}; got {x!r}")
    if legend not in _LEGENDS:
        raise ValueError(f"legend must be 'inside', 'outside' or None; got {legend!r}")
    if len(table) == 0:
        raise ValueError("the table has no rows to plot")


def _splits(table, x) -> tuple[list, bool, bool]:
    """The boards in table order, and whether lines split by board size and by first-click rule."""
    boards = list(dict.fromkeys(_board_key(r) for r in table))
    sizes = {(r["rows"], r["cols"]) for r in table}
    rules = {r["first_click"] for r in table}
    return boards, x == "mines" and len(sizes) > 1, len(rules) > 1


def _grouped(rows, split_sizes: bool, split_rules: bool) -> dict[tuple, list[dict]]:
    """Rows grouped into lines: by board size and by first-click rule where those split."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        key = ((r["rows"], r["cols"]) if split_sizes else None,
               r["first_click"] if split_rules else None)
        groups.setdefault(key, []).append(r)
    return groups


def _line_data(rows, x, boards, columns, scale=1.0):
    """x positions (sorted) and the given columns of ``rows`` in that order."""
    if x == "board":
        xs = np.array([boards.index(_board_key(r)) for r in rows], dtype=float)
    else:
        xs = np.array([r[x] for r in rows], dtype=float)
    order = np.argsort(xs, kind="stable")
    return xs[order], [scale * np.array([r[c] for r in rows], dtype=float)[order] for c in columns]


def _draw_lines(ax, lines, styles, x, boards, columns, scale=1.0) -> None:
    """One line per solver and split with its interval as a band; ``columns`` = (value, low, high)."""
    alpha = _band_alpha(sum(len(groups) for _, groups in lines))
    for solver, groups in lines:
        style = styles[solver]
        for k, ((size, rule), rows) in enumerate(groups.items()):
            xs, (value, low, high) = _line_data(rows, x, boards, columns, scale=scale)
            ax.plot(xs, value, marker=style["marker"], markersize=4, color=style["color"],
                    linestyle=_SPLIT_STYLES[k % len(_SPLIT_STYLES)], linewidth=1.4,
                    label=_line_label(solver, size, rule))
            ax.fill_between(xs, low, high, color=style["color"], alpha=alpha, linewidth=0)


def _line_label(solver, size, rule) -> str:
    label = solver
    if size is not None:
        label += f" {size[0]}x{size[1]}"
    if rule is not None:
        label += f" ({rule} first click)"
    return label


def _finish_x(ax, x, boards) -> None:
    if x == "board":
        ax.set_xticks(range(len(boards)), [_board_label(*b) for b in boards])
        ax.set_xlim(-0.5, len(boards) - 0.5)
    ax.set_xlabel(_X_AXES[x][1])
    ax.grid(True, alpha=0.3)


def _is_range(value) -> bool:
    try:
        low, high = value
    except (TypeError, ValueError):
        return False
    return all(isinstance(v, numbers.Real) and np.isfinite(v) for v in (low, high)) and low < high


def _zoomed_ylim(extents: dict[str, tuple[float, float]]) -> tuple[tuple[float, float] | None, list[str]]:
    """A y range leaving out solvers whose intervals reach far beyond every other's, and those solvers.

    Solvers are ordered by how far their intervals reach from zero; the first one that
    reaches more than three times as far as the one before it, and every one after it,
    is left out. ``(None, [])`` when none is.
    """
    reach = sorted((max(-low, high, 0.0), solver) for solver, (low, high) in extents.items())
    cut = next((i for i in range(1, len(reach)) if reach[i][0] > 3 * reach[i - 1][0] > 0), None)
    if cut is None:
        return None, []
    kept = [extents[solver] for _, solver in reach[:cut]]
    low, high = min(0.0, *(lo for lo, _ in kept)), max(0.0, *(hi for _, hi in kept))
    pad = 0.08 * (high - low)
    return (low - pad, high + pad), [solver for _, solver in reach[cut:]]


def _band_alpha(lines: int) -> float:
    """Opacity of the interval bands: fainter when many lines overlap."""
    return 0.2 if lines <= 3 else 0.1


def _legend(ax, legend) -> None:
    if legend == "inside":
        ax.legend(frameon=False)
    elif legend == "outside":
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                  fontsize="small")


def plot_win_rate(table, ax=None, *, x="mines", legend="inside", reference=None):
    """Draw win rate per solver with its 95% Wilson interval as a band.

    Each solver gets its own colour and marker (in table order; see ``reference``);
    when a solver's rows span several board sizes (with ``x="mines"``) or first-click
    rules, each gets its own line style.

    Parameters
    ----------
    table : EvalTable
        Results of :func:`nnsweeper.evaluation.evaluate`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure (through pyplot) when omitted.
    x : {"mines", "density", "board"}, default="mines"
        The horizontal axis. With ``"mines"`` a table holding several board sizes gets
        one line per solver and size; ``"board"`` puts the boards side by side in table
        order (for the classic presets).
    legend : {"inside", "outside", None}, default="inside"
        Legend in the axes' emptiest corner, to the right of the axes (clear of the
        data, for many solvers), or none.
    reference : str, optional
        A solver drawn in black, as in :func:`plot_win_rate_difference` where it is
        the zero line; the others keep the colours they have there.

    Returns
    -------
    matplotlib.axes.Axes
    """
    _check_plot_args(table, x, legend)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.4, 4.2))

    # A board is its name and configuration: "10x10" may come with several mine counts.
    boards, split_sizes, split_rules = _splits(table, x)
    styles = _solver_styles(table.solvers, reference)
    lines = [(solver, _grouped([r for r in table if r["solver"] == solver], split_sizes, split_rules))
             for solver in table.solvers]
    _draw_lines(ax, lines, styles, x, boards, ("win_rate", "ci_low", "ci_high"))

    _finish_x(ax, x, boards)
    ax.set_ylabel("win rate (95% Wilson interval)")
    ax.set_ylim(-0.02, 1.02)
    _legend(ax, legend)
    return ax


def plot_win_rate_difference(table, reference="csp", ax=None, x="mines", *, legend="inside", ylim=None):
    """Draw each solver's win rate minus the reference solver's, with its 95% interval.

    One line (with a band for the interval) per solver other than ``reference``, in
    percentage points, over the configurations both played, from
    :meth:`~nnsweeper.evaluation.EvalTable.difference`: the interval is paired
    (Newcombe's score method for paired proportions) where both rows hold the
    outcomes of the same games, and Newcombe's hybrid score interval for independent
    samples otherwise (the y label says "paired" when every interval is). A black
    line marks zero (no difference from the reference).
    Colours and markers are those :func:`plot_win_rate` gives with the same
    ``reference``.

    Parameters
    ----------
    table : EvalTable
        Results of :func:`nnsweeper.evaluation.evaluate` with at least two solvers.
    reference : str, default="csp"
        The solver the others are compared with.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure (through pyplot) when omitted.
    x : {"mines", "density", "board"}, default="mines"
        The horizontal axis, as for :func:`plot_win_rate`.
    legend : {"inside", "outside", None}, default="inside"
        Where the legend goes, as for :func:`plot_win_rate`.
    ylim : None, "auto" or (low, high), optional
        The vertical range in percentage points: None fits every line; ``"auto"``
        leaves out (does not draw) solvers whose differences are far larger than all
        the others' (their intervals reach more than three times as far from zero as
        the next solver's), so that small differences stay readable next to one very
        weak solver; a pair sets the range. Solvers with a point or band outside the
        range are named, with their range, in a note in the upper left corner.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        An unknown ``x``, ``legend`` or ``ylim``; an empty table; ``reference`` not a
        solver of the table; no other solver sharing a configuration with it.
    """
    _check_plot_args(table, x, legend)
    if not (ylim is None or (isinstance(ylim, str) and ylim == "auto") or _is_range(ylim)):
        raise ValueError(f"ylim must be None, 'auto' or a pair (low, high) with low < high; got {ylim!r}")
    if reference not in table.solvers:
        raise ValueError(
            f"reference must be one of the table's solvers ({', '.join(table.solvers)}); "
            f"got {reference!r}"
        )
    others = [s for s in table.solvers if s != reference]
    if not others:
        raise ValueError(f"the table has no solver other than the reference {reference!r} to compare")
    from nnsweeper.evaluation import _config_key

    configs = {_config_key(r) for r in table if r["solver"] == reference}
    drawn = [s for s in others if any(_config_key(r) in configs for r in table if r["solver"] == s)]
    if not drawn:
        raise ValueError(f"no solver of the table played a configuration that {reference!r} played")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.4, 3.6))

    boards, split_sizes, split_rules = _splits(table, x)
    styles = _solver_styles(table.solvers, reference)
    ax.axhline(0.0, color=_REFERENCE_COLOR, linewidth=1.2, zorder=1.5, label="_zero")
    differences = {solver: table.difference(solver, reference) for solver in drawn}
    paired = all(d["paired"] for rows in differences.values() for d in rows)
    extents = {solver: (100 * min(d["ci_low"] for d in rows), 100 * max(d["ci_high"] for d in rows))
               for solver, rows in differences.items()}
    omitted = []
    if isinstance(ylim, str):
        ylim, omitted = _zoomed_ylim(extents)
    lines = [(solver, _grouped(rows, split_sizes, split_rules)) for solver, rows in differences.items()
             if solver not in omitted]
    _draw_lines(ax, lines, styles, x, boards, ("difference", "ci_low", "ci_high"), scale=100.0)

    if ylim is not None:
        ax.set_ylim(*ylim)
        off = [f"{solver} ({low:+.0f} to {high:+.0f} pp)" for solver, (low, high) in extents.items()
               if low < ylim[0] or high > ylim[1]]
        if off:
            note = "not shown, off scale: " if omitted else "off scale: "
            ax.text(0.01, 0.97, note + ", ".join(off), transform=ax.transAxes, ha="left", va="top",
                    fontsize="small", color="0.25", gid="off-scale",
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1.5})

    _finish_x(ax, x, boards)
    interval = "paired 95% CI" if paired else "95% CI"
    ax.set_ylabel(f"win rate \N{MINUS SIGN} {reference}\n(percentage points, {interval})")
    _legend(ax, legend)
    return ax


def plot_evaluation(table, fig=None, *, x="mines", reference="csp", title=None):
    """The figure of an evaluation: win rates, and their differences from a reference below.

    Two panels sharing the horizontal axis when ``reference`` is a solver of the table
    and the table has at least two solvers: :func:`plot_win_rate` on top (taller) and
    :func:`plot_win_rate_difference` below (with ``ylim="auto"``: a solver far weaker
    than all the others is left off its scale and named there, the top panel showing
    it); otherwise the win-rate panel alone. One
    legend, to the right of the top panel, names every solver (the reference in black,
    as the zero line below).

    Parameters
    ----------
    table : EvalTable
        Results of :func:`nnsweeper.evaluation.evaluate`.
    fig : matplotlib.figure.Figure, optional
        An empty figure to fill (its size is set here); a new one (through pyplot)
        when omitted.
    x : {"mines", "density", "board"}, default="mines"
        The horizontal axis, as for :func:`plot_win_rate`.
    reference : str or None, default="csp"
        The solver of the lower panel's zero line; None for the win-rate panel only.
    title : str, optional
        Title above the top panel.

    Returns
    -------
    matplotlib.figure.Figure
    """
    _check_plot_args(table, x, "inside")
    if fig is None:
        import matplotlib.pyplot as plt

        fig = plt.figure()
    two = reference is not None and reference in table.solvers and len(table.solvers) >= 2
    many = len({(r["solver"], r["rows"], r["cols"], r["first_click"]) for r in table}) > 3
    if two:
        fig.set_size_inches(7.8, 6.6)
        top, bottom = fig.subplots(2, 1, sharex=True,
                                   gridspec_kw={"height_ratios": (3, 2), "hspace": 0.08})
        plot_win_rate(table, top, x=x, legend="outside", reference=reference)
        plot_win_rate_difference(table, reference, bottom, x=x, legend=None, ylim="auto")
        top.set_xlabel("")
        top.tick_params(labelbottom=False)
    else:
        fig.set_size_inches(7.8 if many else 6.4, 4.2)
        top = fig.subplots()
        plot_win_rate(table, top, x=x, legend="outside" if many else "inside")
    if title is not None:
        top.set_title(title, fontsize=10)
    return fig


def _board_key(row) -> tuple[str, int, int, int]:
    return (row["board"], row["rows"], row["cols"], row["mines"])


def _board_label(name: str, rows: int, cols: int, mines: int) -> str:
    config = f"{rows}x{cols}/{mines}"
    return config if name == f"{rows}x{cols}" else f"{name}\n{config}"


def save_figure(fig, path: str | os.PathLike, *, dpi: int = 150) -> Path:
    """Save a figure atomically (temporary file in the same folder, then rename).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or os.PathLike
        Target file; its suffix picks the format (``.png``, ``.pdf``, ``.svg``...).
        Parent folders are created.
    dpi : int, default=150
        Resolution for raster formats.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if not fmt:
        raise ValueError(
            f"path must end in a format suffix such as .png or .pdf; got {str(path)!r}"
        )
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=fmt, dpi=dpi, bbox_inches="tight")
    return path


def plot_reliability(preds_or_curves, ax=None, *, bins=15, label="model", show_exact=True, title=None):
    """Draw a reliability diagram: observed mine frequency against predicted probability.

    Cells are binned by predicted probability into ``bins`` equal-width bins; each
    model gets a line through (mean prediction, observed mine frequency) of its
    non-empty bins, with a marker per bin whose area grows with the bin's share of the
    cells, so sparsely filled bins are easy to discount. The dotted diagonal is perfect
    calibration; the exact engine's curve on the same cells is drawn dashed beside it.

    Parameters
    ----------
    preds_or_curves : PredictionSet, dict, or dict of them
        One model's rows (:class:`nnsweeper.metrics.PredictionSet`) or its curve from
        :func:`nnsweeper.metrics.reliability_curve`, or a dict ``{name: rows or curve}``
        for several models on one axes (in dict order).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure (through pyplot) when omitted.
    bins : int, default=15
        Bins for rows given as a PredictionSet (curves keep their own bins).
    label : str, default="model"
        Legend name of a single model.
    show_exact : bool, default=True
        Also draw the exact probabilities' curve. Models scored on the same cells share
        one exact curve, labelled ``"exact"``; otherwise each model gets its own,
        labelled ``"exact (name)"``.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from nnsweeper.metrics import PredictionSet, reliability_curve

    def as_curve(name, value):
        if isinstance(value, PredictionSet):
            return reliability_curve(value, bins=bins)
        if isinstance(value, dict) and "edges" in value:
            missing = [k for k in ("mean_predicted", "observed", "weight") if k not in value]
            if show_exact:
                missing += [k for k in ("mean_predicted_exact", "observed_exact", "weight_exact")
                            if k not in value]
            if missing:
                raise ValueError(f"curve {name!r} lacks {', '.join(missing)}")
            return value
        raise ValueError(
            f"{name!r} must be a PredictionSet or a reliability_curve dict; got {type(value).__name__}"
        )

    if isinstance(preds_or_curves, PredictionSet) or (
        isinstance(preds_or_curves, dict) and "edges" in preds_or_curves
    ):
        curves = {label: as_curve(label, preds_or_curves)}
    elif isinstance(preds_or_curves, dict):
        if not preds_or_curves:
            raise ValueError("preds_or_curves must name at least one model; got an empty dict")
        curves = {name: as_curve(name, value) for name, value in preds_or_curves.items()}
    else:
        raise ValueError(
            "preds_or_curves must be a PredictionSet, a reliability_curve dict or a dict of them; "
            f"got {type(preds_or_curves).__name__}"
        )
    for name, curve in curves.items():
        if not np.any(np.asarray(curve["weight"], dtype=float) > 0):
            raise ValueError(f"model {name!r} has no cells with weight to plot")

    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(5.2, 5.2))

    ax.plot([0, 1], [0, 1], linestyle=":", color="0.5", linewidth=1, label="_diagonal")
    colors = {}
    for name, curve in curves.items():
        (line,) = _reliability_line(ax, curve, "", label=str(name), marker="o")
        colors[name] = line.get_color()

    if show_exact:
        exact = _distinct_exact_curves(curves)
        for name, curve in exact.items():
            one = len(exact) == 1
            _reliability_line(ax, curve, "_exact", label="exact" if one else f"exact ({name})",
                              marker="s", linestyle="--", color="0.25" if one else colors[name])

    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("predicted P(mine), bin mean")
    ax.set_ylabel("observed mine frequency")
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False, loc="upper left", fontsize="small", title_fontsize="small",
              title="marker area: share of cells")
    if title is not None:
        ax.set_title(title, fontsize=10)
    return ax


def _reliability_line(ax, curve, suffix, *, label, marker, linestyle="-", color=None):
    weight = np.asarray(curve["weight" + suffix], dtype=float)
    used = weight > 0
    x = np.asarray(curve["mean_predicted" + suffix], dtype=float)[used]
    y = np.asarray(curve["observed" + suffix], dtype=float)[used]
    lines = ax.plot(x, y, linestyle=linestyle, marker=marker, markersize=3, linewidth=1.2,
                    color=color, label=label)
    share = weight[used] / weight.sum()
    ax.scatter(x, y, s=6 + 200 * share, marker=marker, facecolors=lines[0].get_color(), alpha=0.3,
               edgecolors="none", label="_nolegend_")
    return lines


def _distinct_exact_curves(curves: dict) -> dict:
    """The exact curves of ``curves``, leaving out any equal to one already kept."""
    keys = ("mean_predicted_exact", "observed_exact", "weight_exact")

    def equal(a, b) -> bool:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        return a.shape == b.shape and np.allclose(a, b, equal_nan=True)

    kept: dict = {}
    for name, curve in curves.items():
        if not any(all(equal(curve[k], other[k]) for k in keys) for other in kept.values()):
            kept[name] = curve
    return kept


# Boards coloured by P(mine): one panel per map, and the same drawing per animation frame.

_MAX_TEXT_COLS = 16  # boards wider than this get no probability text
_REVEALED_COLOR = "0.82"  # revealed cells
_TILE_COLOR = "0.6"  # covered cells without a colour: flagged, or no P(mine) map
_FLAG_COLOR = "red"
_MINE_COLOR = "#16a34a"  # outline of a covered mine in the true layout
_MOVE_COLOR = "cyan"  # outline of the cell revealed next
_NUMBER_COLORS = {
    1: "#1f3fbf", 2: "#1a7f1a", 3: "#d01c1c", 4: "#1a237e",
    5: "#7f1a1a", 6: "#00838f", 7: "black", 8: "0.35",
}

# Layout of a figure made here, in inches.
_CELL_MAX_IN = 0.45  # largest cell
_PANEL_MAX_IN = 5.0  # longest side of one board
_LEFT_IN, _GAP_IN, _BOTTOM_IN = 0.35, 0.35, 0.15
_TOP_IN = 0.5  # column numbers and the panel title
_LINE_IN = 0.25  # each further title line
_CBAR_GAP_IN, _CBAR_IN, _RIGHT_IN = 0.2, 0.15, 0.65


def plot_probability_boards(grid, maps, *, flags=None, mines=None, axes=None, title=None,
                            cmap="magma_r"):
    """Draw one board several times, side by side, coloured by each P(mine) map.

    Covered unflagged cells are coloured by P(mine) on one scale 0..1 shared by all
    panels (one colorbar for the figure), with the value written in the cell (``0.12``)
    on boards at most 16 columns wide. Revealed cells are light grey with their number
    (none for 0); flagged cells are grey tiles with a red ``F``. With ``mines``, every
    covered cell that is a mine gets a green outline, so the colours can be judged
    against the true layout (a flagged cell without one is a wrong flag).

    Parameters
    ----------
    grid : array_like of int, shape (rows, cols)
        The visible board: -1 covered, 0..8 revealed.
    maps : dict
        ``{label: P(mine) array of shape (rows, cols)}``, one panel per entry in dict
        order, titled by its label. Values on revealed and flagged cells are not drawn.
    flags : array_like of bool, shape (rows, cols), optional
        Covered cells known to be mines.
    mines : array_like of bool, shape (rows, cols), optional
        The true mine layout.
    axes : sequence of matplotlib.axes.Axes, optional
        One Axes per map, all in one figure; the colorbar takes its room from them.
        A new figure (through pyplot) when omitted, its width growing with the number
        of panels and the board's width.
    title : str, optional
        Figure title.
    cmap : str or matplotlib.colors.Colormap, default="magma_r"
        Colours of P(mine) from 0 to 1.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the panels.

    Raises
    ------
    ValueError
        A grid that is not 2-D or holds values outside -1..8; flags (on revealed
        cells, or not boolean) or mines not of the grid's shape; ``maps`` empty or not a
        dict; a map not of the grid's shape or with a value that is not finite or lies
        outside [0, 1]; ``axes`` not one Axes per map in one figure; an unknown
        colormap.
    """
    g, f, m = _check_board(grid, flags, mines)
    if not isinstance(maps, Mapping):
        raise ValueError(f"maps must be a dict {{label: P(mine) array}}; got {type(maps).__name__}")
    if not maps:
        raise ValueError("maps must hold at least one P(mine) map; got an empty dict")
    panels_data = [(str(label), _check_probabilities(f"maps[{label!r}]", p, g.shape))
                   for label, p in maps.items()]
    cm = _board_cmap(cmap)
    if axes is not None:
        from matplotlib.axes import Axes

        panels = list(np.ravel(np.asarray(axes, dtype=object)))
        odd = [type(a).__name__ for a in panels if not isinstance(a, Axes)]
        if odd:
            raise ValueError(f"axes must hold matplotlib Axes; got {odd[0]}")
        if len(panels) != len(panels_data):
            raise ValueError(
                f"axes must hold one Axes per map ({len(panels_data)}); got {len(panels)}"
            )
        fig = panels[0].figure
        if any(a.figure is not fig for a in panels):
            raise ValueError("axes must all belong to one figure; got Axes of several figures")
        _board_colorbar(fig, cm, ax=panels)
    else:
        fig, panels, cax = _board_figure(len(panels_data), *g.shape,
                                         title_lines=int(title is not None))
        _board_colorbar(fig, cm, cax=cax)
    if title is not None:
        fig.suptitle(title)
    for ax, (label, p) in zip(panels, panels_data, strict=True):
        _draw_board(ax, g, p, f, cmap=cm, mines=m)
        ax.set_title(label, fontsize=10)
    return fig


def animate_game(frames, path: str | os.PathLike, *, fps=2, cmap="magma_r", title=None,
                 dpi=100) -> Path:
    """Write a game as an animated GIF: one frame per move, coloured by the solver's P(mine).

    Each frame is drawn like one panel of :func:`plot_probability_boards`, with a cyan
    outline on the cell revealed next and the frame's label as the panel title. The
    file is written atomically (temporary file in the same folder, then rename) with
    :class:`matplotlib.animation.PillowWriter`.

    Parameters
    ----------
    frames : sequence of dict
        One dict per move, in order, with the keys ``"grid"`` (the visible board before
        the move), ``"probabilities"`` (the solver's P(mine) map then, or None when it
        had none: covered cells are then plain tiles), ``"move"`` (the ``(row, col)``
        revealed next, or None) and optionally ``"flags"`` (bool array) and
        ``"label"`` (a short string such as ``"move 3: guess at (4, 5), P=0.21"``).
        Every grid has the first one's shape.
    path : str or os.PathLike
        Target file, ending in ``.gif``. Parent folders are created.
    fps : float, default=2
        Frames per second.
    cmap : str or matplotlib.colors.Colormap, default="magma_r"
        Colours of P(mine) from 0 to 1.
    title : str, optional
        Title above every frame; it may hold several lines (the figure grows to fit).
    dpi : int, default=100
        Resolution of the frames.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ValueError
        A path not ending in ``.gif``; no frames; a frame that is not a dict, lacks a
        key, or holds a bad grid, flags or P(mine) map (as for
        :func:`plot_probability_boards`), a move that is not a covered cell of the
        board, a label that is not a string, or a grid of another shape than the
        first; ``fps`` not a positive number; ``dpi`` not a positive integer; an
        unknown colormap.

    Notes
    -----
    Pillow merges consecutive identical frames into one longer frame, so frames that
    differ in nothing (not even the label) give fewer frames in the file.
    """
    from nnsweeper.errors import check_int

    path = Path(path)
    if path.suffix.lower() != ".gif":
        raise ValueError(f"path must end in .gif (the animation is a GIF); got {str(path)!r}")
    if (isinstance(fps, bool) or not isinstance(fps, numbers.Real) or not np.isfinite(fps)
            or fps <= 0):
        raise ValueError(f"fps must be a positive number; got {fps!r}")
    dpi = check_int("dpi", dpi, 1)
    checked = _check_frames(frames)
    cm = _board_cmap(cmap)

    import matplotlib.pyplot as plt
    from matplotlib.animation import PillowWriter

    rows, cols = checked[0]["grid"].shape
    label_lines = max(fr["label"].count("\n") + 1 if fr["label"] else 1 for fr in checked)
    title_lines = 0 if title is None else str(title).count("\n") + 1
    fig, (ax,), cax = _board_figure(1, rows, cols, title_lines=label_lines - 1 + title_lines,
                                    min_width=4.0, dpi=dpi)
    try:
        _board_colorbar(fig, cm, cax=cax)
        if title is not None:
            fig.suptitle(title)
        writer = PillowWriter(fps=fps)
        # atomic_path keeps the target's suffix, so the temporary name ends in .gif as
        # Pillow needs to pick the GIF format.
        with atomic_path(path) as tmp:
            writer.setup(fig, tmp, dpi=dpi)
            for frame in checked:
                ax.clear()
                _draw_board(ax, frame["grid"], frame["probabilities"], frame["flags"], cmap=cm,
                            move=frame["move"])
                ax.set_title(frame["label"] or "", fontsize=9)
                writer.grab_frame()
            writer.finish()
    finally:
        plt.close(fig)
    return path


#: Move kinds that open cells proven safe; consecutive ones can share a frame.
_CERTAIN_KINDS = ("local", "engine")
_KIND_WORDS = {"first": "first click", "local": "local rule", "engine": "engine",
               "guess": "guess", "model": "model"}


def game_frames(solver, env, rng, probabilities=None, *, group_certain=True, final=True):
    """Play one game with a solver and return its frames for :func:`animate_game`.

    The solver plays the game (``solver.play(env, rng)``); the recorded moves are then
    replayed on the same env after ``env.reset()`` (a seeded env replays its game), so
    every frame shows what the player saw: the visible board before the move, never
    the hidden layout.

    One frame per move, showing the board before it with the next cell outlined and a
    label such as ``"move 7: guess (3, 4), P=0.21"`` (the move's kind and the
    probability the solver recorded with it; for the hybrid solvers' guesses that is
    the exact risk of the cell the model chose). With ``group_certain``, consecutive
    certain moves of one kind (``"local"`` or ``"engine"``) whose cells were all proven
    safe on the board shown share one frame (``"moves 8-15: engine opens 8 safe
    cells"``), which is roughly one frame per solver turn and keeps GIFs short; the
    outline is then on the first of those cells. With ``final``, a last frame shows the
    finished board.

    Parameters
    ----------
    solver : Solver
        Anything with ``play(env, rng)`` returning a
        :class:`~nnsweeper.solvers.GameRecord`.
    env : MinesweeperEnv
        A seeded game; the solver resets it, and so does the replay.
    rng : numpy.random.Generator
        The solver's randomness.
    probabilities : None, "exact" or MineModel, optional
        The P(mine) map of every frame: the exact engine's
        (:func:`nnsweeper.analyze`) for ``"exact"``, a model's
        (``model.predict_proba``, one batch for the whole game) for a
        :class:`~nnsweeper.models.MineModel`. The default (None) is the solver's own
        model for a neural solver (``solver.model``) and the exact engine otherwise.
        A solver that pools interior cells (``pool_interior``) sees one mean
        probability on them, and so does the map.
    group_certain : bool, default=True
        Put consecutive proven-safe moves of one kind into one frame.
    final : bool, default=True
        Add a frame with the board at the end (no map; the cell that lost the game
        outlined), labelled ``"won after 27 moves (3 guesses)"``, ``"lost at move 9:
        (3, 4) was a mine"`` or, when the solver stopped, ``"stopped after ..."``.

    Returns
    -------
    list of dict
        The frames: ``grid`` (the visible board), ``flags`` (the covered cells the
        exact engine proves to be mines on it: what a solver can know; the pure
        neural solvers flag from their model instead, so their own flags may
        differ), ``probabilities`` (the map, None in the final frame), ``move`` (the
        cell revealed next, or the cell that exploded, or None), ``label``, and
        ``moves`` (the :class:`~nnsweeper.solvers.base.Move` records the frame
        covers; empty in the final frame).

    Raises
    ------
    ValueError
        ``probabilities`` of another kind; a game without moves; a replay that does
        not reproduce the recorded game (an env that does not replay its game after
        ``reset()``).
    """
    from nnsweeper.probability import analyze

    if probabilities is None:
        candidate = getattr(solver, "model", None)
        model = candidate if callable(getattr(candidate, "predict_proba", None)) else None
    elif isinstance(probabilities, str) and probabilities == "exact":
        model = None
    elif callable(getattr(probabilities, "predict_proba", None)):
        model = probabilities
    else:
        raise ValueError(
            f"probabilities must be None, 'exact' or a MineModel; got {type(probabilities).__name__}"
        )
    record = solver.play(env, rng)
    moves = list(record.moves)
    if not moves:
        raise ValueError("the solver made no move in this game; there is nothing to show")

    env.reset()
    total = int(env.mines)
    steps = []  # (first move number, grid, engine's analysis, moves)
    k = 0
    while k < len(moves):
        grid = env.observe()
        analysis = analyze(grid, total)
        group = [moves[k]]
        if group_certain and moves[k].kind in _CERTAIN_KINDS:
            while (k + len(group) < len(moves) and moves[k + len(group)].kind == moves[k].kind
                   and analysis.safe[moves[k + len(group)].cell]):
                group.append(moves[k + len(group)])
        for n, move in enumerate(group, start=k + 1):
            _replay(env, n, move)
        steps.append((k + 1, grid, analysis, group))
        k += len(group)
    won = getattr(env, "result", None) == "win"
    if won != bool(record.won):
        raise ValueError(
            f"the replay of the recorded moves {'won' if won else 'did not win'} a game the solver "
            f"{'won' if record.won else 'lost'}; the env must replay its game after reset()"
        )

    if model is None:
        maps = [analysis.probabilities for _, _, analysis, _ in steps]
    else:
        maps = _model_maps(model, solver, [(g, a.mines) for _, g, a, _ in steps], total)
    frames = [
        {"grid": grid, "flags": analysis.mines, "probabilities": p, "move": group[0].cell,
         "label": _frame_label(first, group), "moves": group}
        for (first, grid, analysis, group), p in zip(steps, maps, strict=True)
    ]
    if final:
        grid = env.observe()
        last = moves[-1]
        lost = getattr(env, "result", None) == "lose"
        if won:
            label = f"won after {len(moves)} moves ({record.guesses} guesses)"
        elif lost:
            label = f"lost at move {len(moves)}: {last.cell} was a mine"
        else:
            label = f"stopped after {len(moves)} moves, the game unfinished"
        frames.append({"grid": grid, "flags": analyze(grid, total).mines, "probabilities": None,
                       "move": last.cell if lost else None, "label": label, "moves": []})
    return frames


def _replay(env, number: int, move) -> None:
    """Reveal a recorded move's cell on ``env``, or fail if the replay has drifted."""
    i, j = move.cell
    if getattr(env, "done", False) or env.mask[i, j] != 1:
        raise ValueError(
            f"the replay cannot make move {number} at {move.cell}: the cell is not covered or "
            "the game is over; the env must replay its game after reset()"
        )
    env.reveal(i, j)


def _model_maps(model, solver, boards, total: int) -> list[np.ndarray]:
    """A model's P(mine) for every (grid, flags), in one batch, interior pooled like ``solver``."""
    from nnsweeper.solvers.neural import pool_interior

    maps = model.predict_proba([g for g, _ in boards], total, flags=[f for _, f in boards])
    pool = getattr(solver, "pool_interior", False)
    return [pool_interior(np.array(p, dtype=float), grid, flags) if pool else np.array(p, dtype=float)
            for (grid, flags), p in zip(boards, maps, strict=True)]


def _frame_label(first: int, group) -> str:
    move = group[0]
    if len(group) == 1:
        return f"move {first}: {_KIND_WORDS.get(move.kind, move.kind)} {move.cell}, P={move.probability:.2f}"
    word = _KIND_WORDS.get(move.kind, move.kind)
    return f"moves {first}-{first + len(group) - 1}: {word} opens {len(group)} safe cells"


def _draw_board(ax, grid, probabilities, flags, *, cmap, mines=None, move=None):
    """Draw one checked board on ``ax``; return the P(mine) image.

    Covered unflagged cells take their colour from ``probabilities`` (0..1), with the
    value as text on boards at most ``_MAX_TEXT_COLS`` wide; the image is masked on
    every other cell, which shows ``cmap``'s "bad" colour (revealed cells) or a grey
    tile (flagged cells, and every covered cell when ``probabilities`` is None).
    Numbers 1..8 and flags (``F``) are written in their cells; covered cells that are
    mines in ``mines`` get a green outline and the cell ``move`` a cyan one.
    """
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import MaxNLocator

    rows, cols = grid.shape
    covered = grid == -1
    coloured = covered & ~flags if probabilities is not None else np.zeros(grid.shape, dtype=bool)
    values = probabilities if probabilities is not None else np.zeros(grid.shape)
    image = ax.imshow(np.ma.masked_array(values, mask=~coloured, copy=True), cmap=cmap,
                      vmin=0.0, vmax=1.0, interpolation="nearest")
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)

    # White borders between cells; row and column numbers on the left and top.
    ax.set_xticks(np.arange(cols + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(rows + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=0.8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.tick_params(which="both", length=0, labelsize=6, labeltop=True, labelbottom=False)
    for spine in ax.spines.values():
        spine.set_visible(False)

    # Text sizes follow the drawn cell size, in points.
    box = ax.get_window_extent()
    cell_pt = min(box.width / cols, box.height / rows) * 72 / ax.figure.dpi
    small = float(np.clip(0.3 * cell_pt, 3, 9))
    large = float(np.clip(0.55 * cell_pt, 4, 14))
    centred = {"ha": "center", "va": "center"}

    for r, c in np.argwhere(covered & ~coloured):
        ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, facecolor=_TILE_COLOR, edgecolor="none",
                               gid="tile"))
    for r, c in np.argwhere(grid > 0):
        value = int(grid[r, c])
        ax.text(c, r, str(value), color=_NUMBER_COLORS[value], fontsize=large, fontweight="bold",
                **centred)
    for r, c in np.argwhere(flags):
        ax.text(c, r, "F", color=_FLAG_COLOR, fontsize=large, fontweight="bold", **centred)
    if probabilities is not None and cols <= _MAX_TEXT_COLS:
        for r, c in np.argwhere(coloured):
            p = float(probabilities[r, c])
            red, green, blue, _ = cmap(p)
            ink = "white" if 0.299 * red + 0.587 * green + 0.114 * blue < 0.5 else "black"
            ax.text(c, r, f"{p:.2f}", color=ink, fontsize=small, **centred)
    if mines is not None:
        for r, c in np.argwhere(covered & mines):
            ax.add_patch(Rectangle((c - 0.44, r - 0.44), 0.88, 0.88, fill=False,
                                   edgecolor=_MINE_COLOR, linewidth=1.5, zorder=2, gid="mine"))
    if move is not None:
        r, c = move
        ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor=_MOVE_COLOR,
                               linewidth=2.5, zorder=2.5, gid="move"))
    return image


def _board_figure(n_panels, rows, cols, *, title_lines=0, min_width=0.0, dpi=None):
    """A new figure (through pyplot) with ``n_panels`` board axes in a row and a colorbar axes.

    Returns ``(figure, list of axes, colorbar axes)``. With ``dpi``, the figure's size is
    a whole number of pixels at that resolution.
    """
    import matplotlib.pyplot as plt

    cell = min(_CELL_MAX_IN, _PANEL_MAX_IN / max(rows, cols))
    panel_w, panel_h = cols * cell, rows * cell
    panels_w = n_panels * panel_w + (n_panels - 1) * _GAP_IN
    body = panels_w + _CBAR_GAP_IN + _CBAR_IN + _RIGHT_IN
    width = max(_LEFT_IN + body, min_width)
    height = _TOP_IN + title_lines * _LINE_IN + panel_h + _BOTTOM_IN
    if dpi is not None:
        width, height = np.ceil(width * dpi) / dpi, np.ceil(height * dpi) / dpi
    left = _LEFT_IN + (width - _LEFT_IN - body) / 2

    fig = plt.figure(figsize=(width, height))

    def box(x, w):
        return [x / width, _BOTTOM_IN / height, w / width, panel_h / height]

    panels = [fig.add_axes(box(left + k * (panel_w + _GAP_IN), panel_w)) for k in range(n_panels)]
    cax = fig.add_axes(box(left + panels_w + _CBAR_GAP_IN, _CBAR_IN))
    return fig, panels, cax


def _board_colorbar(fig, cmap, **where):
    """One colorbar of P(mine) from 0 to 1 on ``fig``; ``where`` is ``cax=`` or ``ax=``."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    bar = fig.colorbar(ScalarMappable(norm=Normalize(0.0, 1.0), cmap=cmap), **where)
    bar.set_label("P(mine)")
    return bar


def _board_cmap(cmap):
    """``cmap`` (a name or a Colormap) with revealed cells' grey as its "bad" colour."""
    import matplotlib
    from matplotlib.colors import Colormap

    if not isinstance(cmap, Colormap):
        try:
            cmap = matplotlib.colormaps[cmap]
        except (KeyError, TypeError):
            raise ValueError(
                f"cmap must be a matplotlib colormap or the name of one; got {cmap!r}"
            ) from None
    return cmap.with_extremes(bad=_REVEALED_COLOR)


def _check_board(grid, flags, mines) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The grid as int8, flags as bool (all False for None) and mines as bool (or None)."""
    from nnsweeper.probability import check_flags, check_grid_values

    g = np.asarray(grid)
    if g.ndim != 2 or g.size == 0:
        raise ValueError(f"grid must be a non-empty 2-D array; got shape {g.shape}")
    g = check_grid_values(g, "grid")
    f = check_flags(flags, g)
    if mines is None:
        return g, f, None
    m = np.asarray(mines)
    if m.shape != g.shape:
        raise ValueError(f"mines must have the grid's shape {g.shape}; got {m.shape}")
    if m.dtype != bool:
        if not np.issubdtype(m.dtype, np.integer):
            raise ValueError(f"mines must be a boolean array (or 0/1); got dtype {m.dtype}")
        odd = m[~np.isin(m, (0, 1))]
        if odd.size:
            raise ValueError(f"mines must be a boolean array (or 0/1); got the value {odd[0]}")
    return g, f, m.astype(bool)


def _check_probabilities(name: str, p, shape: tuple[int, int]) -> np.ndarray:
    """``p`` as a float array of ``shape`` with finite values in [0, 1], or an error naming it."""
    try:
        a = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers; got {type(p).__name__}") from None
    if a.shape != shape:
        raise ValueError(f"{name} must have the grid's shape {shape}; got {a.shape}")
    for bad, rule in ((~np.isfinite(a), "must be finite"),
                      ((a < 0) | (a > 1), "must lie in [0, 1]")):
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise ValueError(f"{name} {rule}; got {a[r, c]} at ({r}, {c})")
    return a


def _check_frames(frames) -> list[dict]:
    """The frames of :func:`animate_game`, checked, with every key filled in."""
    if isinstance(frames, (Mapping, str, bytes)):
        raise ValueError(f"frames must be a sequence of dicts; got {type(frames).__name__}")
    try:
        frames = list(frames)
    except TypeError:
        raise ValueError(f"frames must be a sequence of dicts; got {type(frames).__name__}") from None
    if not frames:
        raise ValueError("frames must hold at least one frame; got none")
    checked = []
    for i, frame in enumerate(frames):
        where = f"frames[{i}]"
        if not isinstance(frame, Mapping):
            raise ValueError(
                f"{where} must be a dict with keys grid, probabilities and move; "
                f"got {type(frame).__name__}"
            )
        missing = [k for k in ("grid", "probabilities", "move") if k not in frame]
        if missing:
            raise ValueError(
                f"{where} lacks {', '.join(map(repr, missing))}; "
                "a frame needs grid, probabilities and move"
            )
        try:
            g, f, _ = _check_board(frame["grid"], frame.get("flags"), None)
        except ValueError as err:
            raise type(err)(f"{where}: {err}") from err
        if checked and g.shape != checked[0]["grid"].shape:
            raise ValueError(
                f"{where}['grid'] has shape {g.shape}; every frame must have the first "
                f"frame's shape {checked[0]['grid'].shape}"
            )
        p = frame["probabilities"]
        if p is not None:
            p = _check_probabilities(f"{where}['probabilities']", p, g.shape)
        move = frame["move"]
        if move is not None:
            move = _check_move(f"{where}['move']", move, g)
        label = frame.get("label")
        if label is not None and not isinstance(label, str):
            raise ValueError(f"{where}['label'] must be a string; got {type(label).__name__}")
        checked.append({"grid": g, "flags": f, "probabilities": p, "move": move, "label": label})
    return checked


def _check_move(name: str, move, g: np.ndarray) -> tuple[int, int]:
    """``move`` as ``(row, col)`` of a covered cell of ``g``, or an error naming it."""
    try:
        r, c = move
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be None or a (row, col) pair; got {move!r}") from None
    if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) for v in (r, c)):
        raise ValueError(f"{name} must be a pair of integers (row, col); got {move!r}")
    r, c = int(r), int(c)
    rows, cols = g.shape
    if not (0 <= r < rows and 0 <= c < cols):
        raise ValueError(f"{name} {(r, c)} lies outside the {rows}x{cols} board")
    if g[r, c] != -1:
        raise ValueError(f"{name} {(r, c)} must be a covered cell; it shows {int(g[r, c])}")
    return r, c
