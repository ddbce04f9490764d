"""Grid primitives shared by the game, the probability engine and the solvers.

Everything here works on whole boards with numpy slicing, so the hot paths
(neighbour counts, the 3x3 dilation used by flood fill and the local rules) are
written once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["OFFSETS", "neighbour_sum", "dilate", "neighbours", "covered_grid"]

#: The eight neighbour offsets, row-major.
OFFSETS: tuple[tuple[int, int], ...] = tuple(
    (di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0)
)


def neighbour_sum(a: np.ndarray) -> np.ndarray:
    """Sum of the eight neighbours of every cell (cells off the board count as 0).

    Parameters
    ----------
    a : ndarray of shape (rows, cols)
        Numbers or booleans.

    Returns
    -------
    ndarray of shape (rows, cols)
        float64 for float input, int64 otherwise.
    """
    a = np.asarray(a)
    r, c = a.shape
    p = np.zeros((r + 2, c + 2), dtype=np.float64 if a.dtype.kind == "f" else np.int64)
    p[1:-1, 1:-1] = a
    return (
        p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:]
        + p[1:-1, :-2] + p[1:-1, 2:]
        + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:]
    )


def dilate(mask: np.ndarray) -> np.ndarray:
    """Boolean 3x3 dilation: a cell is set when it or any neighbour is set."""
    mask = np.asarray(mask, dtype=bool)
    r, c = mask.shape
    p = np.zeros((r + 2, c + 2), dtype=bool)
    p[1:-1, 1:-1] = mask
    out = p[1:-1, 1:-1].copy()
    for di, dj in OFFSETS:
        out |= p[1 + di : r + 1 + di, 1 + dj : c + 1 + dj]
    return out


def neighbours(i: int, j: int, rows: int, cols: int) -> list[tuple[int, int]]:
    """The in-board neighbours of ``(i, j)``, row-major."""
    return [
        (i + di, j + dj)
        for di, dj in OFFSETS
        if 0 <= i + di < rows and 0 <= j + dj < cols
    ]


def covered_grid(mask: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Visible grid from a covered mask and neighbour counts: -1 covered, else the count."""
    return np.where(np.asarray(mask) != 0, -1, counts).astype(np.int8)
