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

__all__ = ["plot_win_rate", "save_figure"]

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
