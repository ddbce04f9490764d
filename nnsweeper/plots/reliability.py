"""Reliability diagrams: observed mine frequency against predicted probability, per model."""

from __future__ import annotations

import numpy as np

from nnsweeper.plots._common import new_axes
from nnsweeper.plots.palette import solver_style

__all__ = ["plot_reliability"]

_EXACT_COLOR = "0.25"  # the exact engine's curve when the models share it
_EXACT_MARKER = "h"  # none of the shipped solvers' markers


def plot_reliability(preds_or_curves, ax=None, *, bins=15, label="model", show_exact=True, title=None,
                     units="cells"):
    """Draw a reliability diagram: observed mine frequency against predicted probability.

    Cells are binned by predicted probability into ``bins`` equal-width bins; each
    model gets a line through (mean prediction, observed mine frequency) of its
    non-empty bins, with a marker per bin whose area grows with the bin's share of the
    cells, so sparsely filled bins are easy to discount. The dotted diagonal is perfect
    calibration; the exact engine's curve on the same cells is drawn dashed beside it.
    Each model has the colour and marker of its name (:func:`~nnsweeper.plots.solver_style`),
    as in every figure: ``"gnn"`` is drawn like the ``gnn`` solver.

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
        Legend name of a single model (its colour and marker come from it).
    show_exact : bool, default=True
        Also draw the exact probabilities' curve. Models scored on the same cells share
        one exact curve, labelled ``"exact"``; otherwise each model gets its own,
        labelled ``"exact (name)"``.
    title : str, optional
        Axes title.
    units : str, default="cells"
        What the rows are, for the legend's note on marker areas ("positions" for a
        value network's rows).

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
        ax = new_axes((5.2, 5.2))

    ax.plot([0, 1], [0, 1], linestyle=":", color="0.5", linewidth=1, label="_diagonal")
    styles = {name: solver_style(str(name)) for name in curves}
    for name, curve in curves.items():
        _reliability_line(ax, curve, "", label=str(name), **styles[name])

    if show_exact:
        exact = _distinct_exact_curves(curves)
        for name, curve in exact.items():
            one = len(exact) == 1
            _reliability_line(ax, curve, "_exact", label="exact" if one else f"exact ({name})",
                              marker=_EXACT_MARKER, linestyle="--",
                              color=_EXACT_COLOR if one else styles[name]["color"])

    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("predicted P(mine), bin mean")
    ax.set_ylabel("observed mine frequency")
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False, loc="upper left", fontsize="small", title_fontsize="small",
              title=f"marker area: share of {units}")
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
