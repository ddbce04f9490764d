"""What several figure kinds share: new figures, saving, and checks of boards and P(mine) maps."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from nnsweeper.fileio import atomic_path

__all__ = [
    "agg_figure",
    "check_board",
    "check_empty_figure",
    "check_probabilities",
    "new_axes",
    "new_figure",
    "save_figure",
]


def new_figure(figsize=None):
    """A new figure through pyplot, for functions called without a figure or axes to draw on.

    pyplot is imported here, on first use, so that drawing on a given figure or axes
    never needs it (nor chooses a backend).

    Parameters
    ----------
    figsize : (float, float), optional
        Width and height in inches; matplotlib's default when omitted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    return plt.figure(figsize=figsize)


def agg_figure(figsize=None):
    """A bare figure on the Agg canvas: no pyplot, no global backend, no display needed.

    What the command line and the scripts draw on before :func:`save_figure`; the
    plotting functions that fill a figure size it themselves where they need to.

    Parameters
    ----------
    figsize : (float, float), optional
        Width and height in inches; matplotlib's default when omitted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def new_axes(figsize):
    """One axes on a new figure (through pyplot, see :func:`new_figure`).

    Parameters
    ----------
    figsize : (float, float)
        Width and height of the figure in inches.

    Returns
    -------
    matplotlib.axes.Axes
    """
    return new_figure(figsize).subplots()


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


def check_board(grid, flags, mines) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The grid as int8, flags as bool (all False for None) and mines as bool (or None).

    Raises
    ------
    ValueError
        A grid that is not a non-empty 2-D array of values -1..8; flags not of the
        grid's shape, not boolean, or on revealed cells; mines not of the grid's shape
        or not boolean (or 0/1).
    """
    from nnsweeper.observation import check_flags, check_grid_values

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


def check_probabilities(name: str, p, shape: tuple[int, int]) -> np.ndarray:
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


def check_empty_figure(fig) -> None:
    """Fail unless ``fig`` is a matplotlib Figure without axes (one to fill)."""
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise ValueError(f"fig must be a matplotlib Figure; got {type(fig).__name__}")
    if fig.axes:
        raise ValueError(f"fig must be an empty figure to fill; it holds {len(fig.axes)} axes")
