"""Win rates per solver, their differences from a reference solver, and both stacked.

:func:`plot_win_rate` draws each solver's win rate with its 95% Wilson interval,
:func:`plot_win_rate_difference` each solver's win rate minus a reference solver's
(in percentage points, with its interval), :func:`plot_gap_bands` that difference
pooled over bands of neighbouring mine counts, one small panel per solver, and
:func:`plot_evaluation` the win rates with one of the two below them as one figure.
They read an :class:`~nnsweeper.evaluation.EvalTable` and only draw.
"""

from __future__ import annotations

import numbers
import textwrap

import numpy as np

from nnsweeper.evaluation import config_key
from nnsweeper.evaluation.summary import first_click_words, pooled_difference
from nnsweeper.plots._common import new_axes, new_figure
from nnsweeper.plots.palette import solver_style

__all__ = ["density_bands", "evaluation_axis", "evaluation_title", "plot_evaluation", "plot_gap_bands",
           "plot_win_rate", "plot_win_rate_difference"]

_X_AXES = {
    "mines": ("mines", "mines"),
    "density": ("density", "mine density (mines / cells)"),
    "board": ("board", "board"),
}


_SPLIT_STYLES = ("-", "--", ":", "-.")  # board sizes or first-click rules of one solver
_LEGENDS = ("inside", "outside", None)
_MAX_BANDS = 3  # more difference lines than this get dodged interval bars instead of bands
_DODGE = {"board": 0.6, "mines": 0.7, "density": 0.7}  # share of one x step the bars of a position take
_CROWDED = 40  # more interval bars than this in one axes are drawn thinner, without caps
_MAX_DENSITY_BANDS = 5  # plot_gap_bands: at most this many bands of mine counts
_BANDED_FROM = 8  # plot_evaluation: a one-size table with this many mine counts gets the banded panels


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
        groups.setdefault(_split_key(r, split_sizes, split_rules), []).append(r)
    return groups


def _line_data(rows, x, boards, columns, scale=1.0):
    """x positions (sorted) and the given columns of ``rows`` in that order."""
    if x == "board":
        xs = np.array([boards.index(_board_key(r)) for r in rows], dtype=float)
    else:
        xs = np.array([r[x] for r in rows], dtype=float)
    order = np.argsort(xs, kind="stable")
    return xs[order], [scale * np.array([r[c] for r in rows], dtype=float)[order] for c in columns]


def _group_keys(rows, split_sizes: bool, split_rules: bool) -> list[tuple]:
    """The (solver, split) of every line ``rows`` make, in row order."""
    keys = {}
    for r in rows:
        keys[(r["solver"], *_split_key(r, split_sizes, split_rules))] = None
    return list(keys)


def _x_step(table, x) -> float:
    """The room of one x position for the points moved sideways there.

    1 for a board; otherwise the smallest distance between two positions of the table,
    but at most a twentieth of their span, so that points moved sideways stay close to
    their own position on a sparse axis (one mine for a single position).
    """
    if x == "board":
        return 1.0
    xs = np.unique([float(r[x]) for r in table])
    if len(xs) > 1:
        return float(min(np.min(np.diff(xs)), (xs[-1] - xs[0]) / 20))
    # One position: one mine more, whatever the axis shows.
    r = next(iter(table))
    return 1.0 if x == "mines" else 1.0 / (r["rows"] * r["cols"])


def _draw_lines(ax, lines, x, boards, columns, *, slots, step, scale=1.0, bands=True, emphasis=None):
    """One line per solver and split with its interval; ``columns`` = (value, low, high).

    The interval is a band under the line where ``bands`` is true and the line has
    several points; otherwise it is a vertical bar at each point (never a lone dot
    without its interval), with short caps at its ends unless the bars are crowded,
    and the points move sideways by the line's place in ``slots`` (the keys of every
    line the figure may draw, so that the lines of one solver stay in one place in
    several panels) within ``_DODGE[x]`` of ``step``. ``emphasis`` names a solver
    drawn with a thicker line.
    """
    band_alpha = _band_alpha(sum(len(groups) for _, groups in lines))
    offsets = _dodge_offsets(len(slots), _DODGE[x] * step)
    bar_points = sum(len(rows) for _, groups in lines for rows in groups.values()
                     if not (bands and len(rows) > 1))
    crowded = bar_points > _CROWDED
    for solver, groups in lines:
        style = solver_style(solver)
        for k, (split, rows) in enumerate(groups.items()):
            xs, (value, low, high) = _line_data(rows, x, boards, columns, scale=scale)
            label = _line_label(solver, *split)
            band = bands and len(rows) > 1
            thin = crowded and not band
            if not band:
                xs = xs + offsets[slots.index((solver, *split))]
            width = 0.7 if thin else 1.4
            ax.plot(xs, value, marker=style["marker"], markersize=4 if thin else 5, color=style["color"],
                    linestyle=_SPLIT_STYLES[k % len(_SPLIT_STYLES)],
                    linewidth=width + 0.5 if solver == emphasis else width,
                    alpha=0.6 if thin else 1.0, label=label)
            if band:
                ax.fill_between(xs, low, high, color=style["color"], alpha=band_alpha, linewidth=0,
                                gid="band", label=f"_{label} interval")
                continue
            ax.vlines(xs, low, high, color=style["color"], linewidth=1.0 if thin else 1.3,
                      gid="bars", label=f"_{label} interval")
            if not thin:
                ax.scatter(np.concatenate([xs, xs]), np.concatenate([low, high]), s=30, marker="_",
                           color=style["color"], linewidths=1.3, gid="caps", label=f"_{label} caps")


def _dodge_offsets(n: int, width: float) -> np.ndarray:
    """``n`` sideways offsets centred on zero, one ``width / n`` from the next."""
    return (np.arange(max(n, 1)) - (n - 1) / 2) * width / max(n, 1)


def _split_key(row, split_sizes: bool, split_rules: bool) -> tuple:
    return ((row["rows"], row["cols"]) if split_sizes else None,
            row["first_click"] if split_rules else None)


def _line_label(solver, size, rule) -> str:
    label = solver
    if size is not None:
        label += f" {size[0]}x{size[1]}"
    if rule is not None:
        label += f" ({rule} first click)"
    return label


def _finish_x(ax, table, x, boards, step) -> None:
    if x == "board":
        ax.set_xticks(range(len(boards)), [_board_label(*b) for b in boards])
        ax.set_xlim(-0.5, len(boards) - 0.5)
    else:
        xs = {float(r[x]) for r in table}
        if len(xs) == 1:  # one position: its value as the only tick, room for the bars
            (only,) = xs
            ax.set_xticks([only])
            ax.set_xlim(only - step, only + step)
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
    """Draw win rate per solver with its 95% Wilson interval.

    Each solver has the colour and marker of its name (:func:`~nnsweeper.plots.solver_style`),
    the same in every figure whatever the other solvers of the table; when a solver's
    rows span several board sizes (with ``x="mines"``) or first-click rules, each gets
    its own line style. The interval is a band under a line of several points on the
    ``"mines"`` and ``"density"`` axes, and a vertical bar at each point otherwise (a
    solver with one point, and every solver with ``x="board"``, where the solvers
    are moved a little sideways, in table order, so that their bars do not overlap).

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
        A solver drawn with a thicker line, as the reference of
        :func:`plot_win_rate_difference` (its zero line, in the solver's colour);
        colours and markers do not depend on it.

    Returns
    -------
    matplotlib.axes.Axes
    """
    _check_plot_args(table, x, legend)
    if ax is None:
        ax = new_axes((6.4, 4.2))

    # A board is its name and configuration: "10x10" may come with several mine counts.
    boards, split_sizes, split_rules = _splits(table, x)
    lines = [(solver, _grouped([r for r in table if r["solver"] == solver], split_sizes, split_rules))
             for solver in table.solvers]
    step = _x_step(table, x)
    _draw_lines(ax, lines, x, boards, ("win_rate", "ci_low", "ci_high"),
                slots=_group_keys(table, split_sizes, split_rules), step=step,
                bands=x != "board", emphasis=reference)

    _finish_x(ax, table, x, boards, step)
    ax.set_ylabel("win rate (95% Wilson interval)")
    ax.set_ylim(-0.02, 1.02)
    _legend(ax, legend)
    return ax


def plot_win_rate_difference(table, reference="csp", ax=None, x="mines", *, legend="inside", ylim=None):
    """Draw each solver's win rate minus the reference solver's, with its 95% interval.

    One line per solver other than ``reference``, in percentage points, over the
    configurations both played, from :meth:`~nnsweeper.evaluation.EvalTable.difference`:
    the interval is paired (Newcombe's score method for paired proportions) where both
    rows hold the outcomes of the same games, and Newcombe's hybrid score interval for
    independent samples otherwise (the y label says "paired" when every interval is).
    A line in the reference's colour marks zero (no difference from the reference).
    Colours and markers are those of the solvers' names, as in every figure
    (:func:`~nnsweeper.plots.solver_style`).

    Up to three lines of several points on the ``"mines"`` or ``"density"`` axis
    show their intervals as bands; with more lines, with ``x="board"`` and for a
    line of one point, every point gets a vertical bar for its interval, the solvers
    moved a little sideways (in table order) so that the bars stay apart.

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
        weak solver; a pair sets the range. Solvers with a point or interval outside
        the range are named, with their range, in a note in the upper left corner.

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
    configs = {config_key(r) for r in table if r["solver"] == reference}
    drawn = [s for s in others if any(config_key(r) in configs for r in table if r["solver"] == s)]
    if not drawn:
        raise ValueError(f"no solver of the table played a configuration that {reference!r} played")
    if ax is None:
        ax = new_axes((6.4, 3.6))

    boards, split_sizes, split_rules = _splits(table, x)
    ax.axhline(0.0, color=solver_style(reference)["color"], linewidth=1.2, zorder=1.5, label="_zero")
    differences = {solver: table.difference(solver, reference) for solver in drawn}
    paired = all(d["paired"] for rows in differences.values() for d in rows)
    extents = {solver: (100 * min(d["ci_low"] for d in rows), 100 * max(d["ci_high"] for d in rows))
               for solver, rows in differences.items()}
    omitted = []
    if isinstance(ylim, str):
        ylim, omitted = _zoomed_ylim(extents)
    lines = [(solver, _grouped(rows, split_sizes, split_rules)) for solver, rows in differences.items()
             if solver not in omitted]
    # Bars of one solver sit where plot_win_rate puts them on the board axis (the
    # panels of plot_evaluation share it); elsewhere only the lines drawn share the room.
    if x == "board":
        slots = _group_keys(table, split_sizes, split_rules)
    else:
        slots = _group_keys([d for _, groups in lines for rows in groups.values() for d in rows],
                            split_sizes, split_rules)
    step = _x_step(table, x)
    _draw_lines(ax, lines, x, boards, ("difference", "ci_low", "ci_high"), slots=slots, step=step,
                scale=100.0, bands=x != "board" and sum(len(g) for _, g in lines) <= _MAX_BANDS)

    if ylim is not None:
        ax.set_ylim(*ylim)
        off = [f"{solver} ({low:+.0f} to {high:+.0f} pp)" for solver, (low, high) in extents.items()
               if low < ylim[0] or high > ylim[1]]
        if off:
            note = "not shown, off scale: " if omitted else "off scale: "
            ax.text(0.01, 0.97, note + ", ".join(off), transform=ax.transAxes, ha="left", va="top",
                    fontsize="small", color="0.25", gid="off-scale",
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1.5})

    _finish_x(ax, table, x, boards, step)
    interval = "paired 95% CI" if paired else "95% CI"
    ax.set_ylabel(f"win rate \N{MINUS SIGN} {reference}\n(percentage points, {interval})")
    _legend(ax, legend)
    return ax


def density_bands(values, bands: int = _MAX_DENSITY_BANDS) -> list[list]:
    """Neighbouring values (mine counts or densities) split into at most ``bands`` bands.

    The sorted distinct values are cut into ``min(bands, n // 3)`` runs (at least one)
    of as equal length as they go, the longer runs first: 26 mine counts 5..30 give
    5-10, 11-15, 16-20, 21-25 and 26-30.
    """
    distinct = sorted(set(values))
    if not distinct:
        raise ValueError("density_bands needs at least one value")
    if isinstance(bands, bool) or not isinstance(bands, numbers.Integral) or bands < 1:
        raise ValueError(f"bands must be an integer of at least 1; got {bands!r}")
    k = max(1, min(int(bands), len(distinct) // 3))
    return [list(part) for part in np.array_split(np.array(distinct, dtype=object), k)]


def _pooled_bands(table, reference, x, bands) -> dict[str, tuple[list, list]]:
    """Per solver (other than ``reference``, sharing its configurations): the pooled gap of
    every band of :func:`density_bands` as (band values, gap, low, high) in percentage
    points, and its rows of :meth:`~nnsweeper.evaluation.EvalTable.difference`."""
    configs = {config_key(r) for r in table if r["solver"] == reference}
    cuts = density_bands([r[x] for r in table if r["solver"] == reference], bands)
    out = {}
    for solver in table.solvers:
        if solver == reference or not any(config_key(r) in configs for r in table if r["solver"] == solver):
            continue
        diffs = table.difference(solver, reference)
        parts = []
        for part in cuts:
            rows = [d for d in diffs if d[x] in part]
            if rows:
                gap, low, high, _ = pooled_difference(rows)
                parts.append((part, 100 * gap, 100 * low, 100 * high))
        out[solver] = (parts, diffs)
    return out


def _check_banded(table, reference, x) -> None:
    _check_plot_args(table, x, None)
    if x == "board":
        raise ValueError("plot_gap_bands pools neighbouring mine counts: x must be 'mines' or 'density'")
    if reference not in table.solvers:
        raise ValueError(f"reference must be one of the table's solvers ({', '.join(table.solvers)}); "
                         f"got {reference!r}")
    _, split_sizes, split_rules = _splits(table, x)
    if split_sizes or split_rules:
        raise ValueError("plot_gap_bands draws one board size and first-click rule; the table holds several")


def _banded_solvers(pooled: dict) -> tuple[list[str], list[str]]:
    """The solvers given a panel and those left out, off scale: bands far beyond every other's."""
    extents = {sv: (min(lo for _, _, lo, _ in parts), max(hi for _, _, _, hi in parts))
               for sv, (parts, _) in pooled.items() if parts}
    _, omitted = _zoomed_ylim(extents)
    return [sv for sv in pooled if sv not in omitted], omitted


def plot_gap_bands(table, reference="csp", axes=None, *, x="mines", bands=_MAX_DENSITY_BANDS, solvers=None):
    """Each solver's gap to ``reference`` pooled over bands of neighbouring mine counts, one panel each.

    Per solver (other than ``reference``) one small panel: for every band of
    :func:`density_bands` a horizontal bar at the pooled gap (the difference of win rates
    over all the band's games, in percentage points) spanning the band, and a shaded box
    for its 95% interval (paired over the band's pairs of games when every row is, see
    :func:`~nnsweeper.evaluation.summary.pooled_difference`); behind them, faint, the gap
    at each mine count. A line marks zero. The panels share one vertical scale, fitted to
    the bands' intervals and every mine count's gap, so that the solvers compare at a
    glance. By default a solver whose bands reach more than three
    times as far from zero as every other's (``single_point`` beside ``csp``) gets no
    panel; a note in the first panel names it with its range.

    Parameters
    ----------
    table : EvalTable
        Results on one board size and first-click rule, with ``reference`` among its solvers.
    reference : str, default="csp"
    axes : sequence of matplotlib.axes.Axes, optional
        One per solver drawn (sharing their y axis); a new figure when omitted.
    x : {"mines", "density"}, default="mines"
    bands : int, default=5
        At most this many bands (:func:`density_bands`).
    solvers : list of str, optional
        The solvers to draw, in panel order (default: every solver but ``reference``
        that played its configurations, in table order, less those far off scale).

    Returns
    -------
    list of matplotlib.axes.Axes
        The panels drawn, in solver order.
    """
    _check_banded(table, reference, x)
    pooled = _pooled_bands(table, reference, x, bands)
    if not pooled:
        raise ValueError(f"no solver of the table played a configuration that {reference!r} played")
    omitted = []
    if solvers is None:
        solvers, omitted = _banded_solvers(pooled)
    else:
        solvers = list(solvers)
        wrong = [sv for sv in solvers if sv not in pooled]
        if wrong or not solvers:
            raise ValueError(f"solvers must be some of {', '.join(pooled)} (the table's solvers sharing "
                             f"{reference!r}'s configurations); got {solvers!r}")
    if axes is None:
        fig = new_figure()
        fig.set_size_inches(1.8 * len(solvers) + 0.8, 2.6)
        axes = list(np.ravel(fig.subplots(1, len(solvers), sharey=True, squeeze=False)))
    axes = list(axes)
    if len(axes) != len(solvers):
        raise ValueError(f"give one axes per solver drawn ({len(solvers)}); got {len(axes)}")
    lows = [lo for sv in solvers for _, _, lo, _ in pooled[sv][0]]
    highs = [hi for sv in solvers for _, _, _, hi in pooled[sv][0]]
    dots = [100 * d["difference"] for sv in solvers for d in pooled[sv][1]]
    low, high = min(0.0, *lows, *dots), max(0.0, *highs, *dots)
    pad = 0.12 * ((high - low) or 1.0)
    ylim = (low - pad, high + pad)
    xs = np.unique([float(r[x]) for r in table])
    step = float(np.min(np.diff(xs))) if len(xs) > 1 else 1.0  # a band spans its counts and half a step
    for ax, solver in zip(axes, solvers, strict=True):
        style = solver_style(solver)
        parts, diffs = pooled[solver]
        ax.axhline(0.0, color=solver_style(reference)["color"], linewidth=1.0, zorder=1.5)
        xs = np.array([float(d[x]) for d in diffs])
        ys = np.array([100 * d["difference"] for d in diffs])
        ax.set_xlim(float(xs.min()) - step, float(xs.max()) + step)
        ax.scatter(xs, ys, s=9, color=style["color"], alpha=0.35, linewidths=0, gid="points", zorder=2)
        for part, gap, lo, hi in parts:
            left, right = float(part[0]) - step / 2, float(part[-1]) + step / 2
            ax.fill_between([left, right], lo, hi, color=style["color"], alpha=0.25, linewidth=0,
                            gid="band-interval")
            ax.hlines(gap, left, right, color=style["color"], linewidth=2.2, gid="band-gap", zorder=3)
        ax.set_ylim(*ylim)
        gap, lo, hi, _ = pooled_difference(diffs)
        ax.set_title(f"{solver}\nall: {100 * gap:+.1f} ({100 * lo:+.1f} to {100 * hi:+.1f})", fontsize=8.5,
                     color=style["color"])
        ax.grid(True, alpha=0.3)
        ax.set_xlabel(_X_AXES[x][1], fontsize="small")
        ax.tick_params(labelsize="small")
    axes[0].set_ylabel(f"win rate minus {reference}'s\n(percentage points)", fontsize="small")
    if omitted:
        off = ", ".join(f"{sv} ({min(lo for _, _, lo, _ in pooled[sv][0]):+.0f} to "
                        f"{max(hi for _, _, _, hi in pooled[sv][0]):+.0f} pp)" for sv in omitted)
        axes[0].text(0.02, 0.03, f"not shown, off scale: {off}", transform=axes[0].transAxes, ha="left",
                     va="bottom", fontsize="x-small", color="0.25", gid="off-scale")
    return axes


def plot_evaluation(table, fig=None, *, x="mines", reference="csp", title=None):
    """The figure of an evaluation: win rates, and their differences from a reference below.

    When ``reference`` is a solver of the table and the table has at least two solvers:
    :func:`plot_win_rate` on top, and below it

    - for one board size and first-click rule with at least eight mine counts (the main
      job's sweep), :func:`plot_gap_bands`: one small panel per solver with its gap to
      the reference pooled over bands of neighbouring mine counts, each with its
      interval, on one shared scale (a solver far weaker than all the others gets no
      panel and is named below them);
    - otherwise :func:`plot_win_rate_difference`, sharing the horizontal axis (with
      ``ylim="auto"``: a solver far weaker than all the others is left off its scale
      and named there, the top panel showing it).

    Without a reference, the win-rate panel alone. One
    legend, to the right of the top panel, names every solver; the reference keeps
    its colour and marker (drawn thicker above, the colour of the zero line below).

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
        fig = new_figure()
    two = reference is not None and reference in table.solvers and len(table.solvers) >= 2
    many = len({(r["solver"], r["rows"], r["cols"], r["first_click"]) for r in table}) > 3
    banded = two and _banded_layout(table, x)
    if banded:
        pooled = _pooled_bands(table, reference, x, _MAX_DENSITY_BANDS)
        solvers, _ = _banded_solvers(pooled)
        # One row of up to five panels; more go in two (or more) rows of equal length.
        nrows = -(-len(solvers) // 5)
        ncols = -(-len(solvers) // nrows)
        fig.set_size_inches(9.0, 4.6 + 2.1 * nrows)
        grid = fig.add_gridspec(1 + nrows, ncols, height_ratios=(3.2, *[1.9] * nrows), hspace=0.45,
                                wspace=0.08)
        top = fig.add_subplot(grid[0, :])
        plot_win_rate(table, top, x=x, legend="outside", reference=reference)
        panels = [fig.add_subplot(grid[1 + k // ncols, k % ncols]) for k in range(len(solvers))]
        for ax in panels[1:]:
            ax.sharey(panels[0])
        plot_gap_bands(table, reference, panels, x=x, solvers=solvers)
        for k, ax in enumerate(panels):
            if k % ncols:
                ax.tick_params(labelleft=False)
                ax.set_ylabel("")
        _, omitted = _banded_solvers(pooled)
        paired = all(d["paired"] for sv in solvers for d in pooled[sv][1])
        caption = (f"Below: each solver's win rate minus {reference}'s on the same games (above 0: it wins "
                   f"more). Dots: one mine count; bar: a band of counts pooled; shade: its "
                   f"{'paired ' if paired else ''}95% interval (a shade across 0: no difference shown).")
        if omitted:
            caption += f" Not in the lower panels, off their scale: {', '.join(omitted)} (top panel)."
        answer = _density_sentence(table, reference)
        lines = textwrap.wrap(caption, 150) + ([""] + textwrap.wrap(answer, 150) if answer else [])
        # The caption's lines (about 0.15 inch each) under the panels' ticks and labels (0.65 inch).
        fig.set_size_inches(9.0, 4.6 + 2.1 * nrows + 0.15 * len(lines))
        fig.subplots_adjust(bottom=(0.65 + 0.15 * len(lines)) / fig.get_size_inches()[1])
        fig.text(0.02, 0.012, "\n".join(lines), ha="left", va="bottom", fontsize="x-small", color="0.2",
                 gid="caption")
    elif two:
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


def _density_sentence(table, reference: str) -> str:
    """The summary's answer for the networks by density (empty without a network)."""
    from nnsweeper.evaluation.summary import density_answer, summarize

    boards = [b for b in summarize(table, reference) if b.by_density]
    return " ".join(density_answer(b) for b in boards)


def _banded_layout(table, x: str) -> bool:
    """Whether :func:`plot_evaluation` draws the gaps as :func:`plot_gap_bands` panels: one
    board size and first-click rule on the mines or density axis, with many mine counts."""
    if x == "board":
        return False
    _, split_sizes, split_rules = _splits(table, x)
    return not (split_sizes or split_rules) and len({r[x] for r in table}) >= _BANDED_FROM


def _board_key(row) -> tuple[str, int, int, int]:
    return (row["board"], row["rows"], row["cols"], row["mines"])


def _board_label(name: str, rows: int, cols: int, mines: int) -> str:
    config = f"{rows}x{cols}/{mines}"
    return config if name == f"{rows}x{cols}" else f"{name}\n{config}"


def evaluation_axis(table) -> str:
    """The x axis ``nnsweeper eval`` uses for a table, read from its rows.

    ``"board"`` (the boards side by side) when a row is a named board (a preset such as
    ``expert``) or the rows hold several board sizes; ``"mines"`` when every row is one
    ``ROWSxCOLS`` size, however the boards were asked for (``--rows/--cols/--mines`` or
    ``--board 9x9:5-25/5`` alike), as ``eval`` chooses it when it plays them.
    """
    sizes = {(r["rows"], r["cols"]) for r in table}
    named = any(r["board"] != f"{r['rows']}x{r['cols']}" for r in table)
    return "board" if named or len(sizes) > 1 else "mines"


def evaluation_title(table, x: str) -> str:
    """The title ``nnsweeper eval`` gives a table's figure: where the games were played,
    the first-click rule and where the first click goes, and the games per point, read from its
    rows and the solvers its metadata describes (``first_click_words`` of the summary)."""
    if x == "board":
        where = ", ".join(dict.fromkeys(r["board"] for r in table))
    else:
        where = ", ".join(dict.fromkeys(f"{r['rows']}x{r['cols']}" for r in table))
    rules = "/".join(dict.fromkeys(r["first_click"] for r in table))
    games = sorted({r["games"] for r in table})
    count = f"{games[0]:,}" if len(games) == 1 else f"{games[0]:,}-{games[-1]:,}"
    start = first_click_words(table)
    return f"{where}, {rules} first click{' ' + start if start else ''}, {count} games per point"
