"""Figures drawn from results: win rate against mine count, density or board.

Plotting functions only draw: they read a table computed elsewhere and return the
axes. pyplot is imported only when a function has to create its own figure, and no
backend is chosen here; the command line saves through the Agg canvas.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from nnsweeper.fileio import atomic_path

__all__ = ["plot_win_rate", "save_figure", "plot_reliability"]

_X_AXES = {
    "mines": ("mines", "mines"),
    "density": ("density", "mine density (mines / cells)"),
    "board": ("board", "board"),
}


def plot_win_rate(table, ax=None, *, x="mines"):
    """Draw win rate per solver with its 95% Wilson interval as a band.

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

    Returns
    -------
    matplotlib.axes.Axes
    """
    if x not in _X_AXES:
        raise ValueError(f"x must be one of {', '.join(_X_AXES)}; got {x!r}")
    if len(table) == 0:
        raise ValueError("the table has no rows to plot")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.4, 4.2))

    # A board is its name and configuration: "10x10" may come with several mine counts.
    boards = list(dict.fromkeys(_board_key(r) for r in table))
    sizes = list(dict.fromkeys((r["rows"], r["cols"]) for r in table))
    split_sizes = x == "mines" and len(sizes) > 1
    rules = list(dict.fromkeys(r["first_click"] for r in table))
    split_rules = len(rules) > 1

    groups: dict[tuple, list[dict]] = {}
    for r in table:
        key = (r["solver"],
               (r["rows"], r["cols"]) if split_sizes else None,
               r["first_click"] if split_rules else None)
        groups.setdefault(key, []).append(r)

    for (solver, size, rule), rows in groups.items():
        if x == "board":
            xs = np.array([boards.index(_board_key(r)) for r in rows], dtype=float)
        else:
            xs = np.array([r[x] for r in rows], dtype=float)
        order = np.argsort(xs, kind="stable")
        xs = xs[order]
        rate = np.array([r["win_rate"] for r in rows], dtype=float)[order]
        low = np.array([r["ci_low"] for r in rows], dtype=float)[order]
        high = np.array([r["ci_high"] for r in rows], dtype=float)[order]
        label = solver
        if size is not None:
            label += f" {size[0]}x{size[1]}"
        if rule is not None:
            label += f" ({rule} first click)"
        (line,) = ax.plot(xs, rate, marker="o", markersize=4, label=label)
        ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.2, linewidth=0)

    if x == "board":
        ax.set_xticks(range(len(boards)), [_board_label(*b) for b in boards])
        ax.set_xlim(-0.5, len(boards) - 0.5)
    ax.set_xlabel(_X_AXES[x][1])
    ax.set_ylabel("win rate (95% Wilson interval)")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False)
    return ax


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
