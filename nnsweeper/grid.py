"""Grid primitives shared by the game, the probability engine and the solvers.

Everything here works on whole boards with numpy slicing, so the hot paths
(neighbour counts, the 3x3 dilation used by flood fill and the local rules) are
written once.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "OFFSETS", "SYMMETRIES", "neighbour_sum", "neighbour_product", "dilate", "neighbours", "covered_grid",
    "openings", "open_cells",
    "single_point_rules", "board_symmetries", "apply_symmetry", "invert_symmetry",
]

#: The 8 symmetries of a square board as ``(transpose, flip_rows, flip_cols)``: the
#: board is transposed first, then its rows and columns reversed. The first is the
#: identity; the first 4 (no transpose) are those of any rectangle.
SYMMETRIES: tuple[tuple[bool, bool, bool], ...] = tuple(
    (t, r, c) for t in (False, True) for r in (False, True) for c in (False, True)
)

#: The eight neighbour offsets, row-major.
OFFSETS: tuple[tuple[int, int], ...] = tuple(
    (di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0)
)


def neighbour_sum(a: np.ndarray) -> np.ndarray:
    """Sum of the eight neighbours of every cell (cells off the board count as 0).

    Parameters
    ----------
    a : ndarray of shape (rows, cols) or (..., rows, cols)
        Numbers or booleans: one board or a stack of boards (summed over the last two
        axes).

    Returns
    -------
    ndarray of ``a``'s shape
        float64 for float input, int64 otherwise.
    """
    a = np.asarray(a)
    *lead, r, c = a.shape
    if a.dtype.kind == "f":
        p = np.zeros((*lead, r + 2, c + 2), dtype=np.float64)
        p[..., 1:-1, 1:-1] = a
        # Floats: the eight terms in one fixed order, so every sum is the same to the last bit.
        return (
            p[..., :-2, :-2] + p[..., :-2, 1:-1] + p[..., :-2, 2:]
            + p[..., 1:-1, :-2] + p[..., 1:-1, 2:]
            + p[..., 2:, :-2] + p[..., 2:, 1:-1] + p[..., 2:, 2:]
        )
    # Integers: the 3x3 box sum in two passes of three (rows, then columns), less the cell.
    p = np.zeros((*lead, r + 2, c + 2), dtype=np.int64)
    p[..., 1:-1, 1:-1] = a
    rows = p[..., :-2, :] + p[..., 1:-1, :]
    rows += p[..., 2:, :]
    out = rows[..., :-2] + rows[..., 1:-1]
    out += rows[..., 2:]
    out -= p[..., 1:-1, 1:-1]
    return out


def neighbour_product(a: np.ndarray) -> np.ndarray:
    """Product of the eight neighbours of every cell (cells off the board count as 1).

    ``a`` is one board (rows, cols) or a stack (..., rows, cols) of floats. The factors
    are multiplied in one fixed order (:data:`OFFSETS`), with no ``exp``/``log``, so the
    result is the same to the last bit on every machine.
    """
    a = np.asarray(a, dtype=np.float64)
    *lead, r, c = a.shape
    p = np.ones((*lead, r + 2, c + 2))
    p[..., 1:-1, 1:-1] = a
    out = np.ones(a.shape)
    for di, dj in OFFSETS:
        out *= p[..., 1 + di : r + 1 + di, 1 + dj : c + 1 + dj]
    return out


def dilate(mask: np.ndarray) -> np.ndarray:
    """Boolean 3x3 dilation: a cell is set when it or any neighbour is set.

    ``mask`` is one board (rows, cols) or a stack of boards (..., rows, cols); the
    dilation acts on the last two axes.
    """
    mask = np.asarray(mask, dtype=bool)
    *lead, r, c = mask.shape
    p = np.zeros((*lead, r + 2, c + 2), dtype=bool)
    p[..., 1:-1, 1:-1] = mask
    # Separable: the rows' 3-cell OR, then the columns' (the 3x3 box is their product).
    rows = p[..., :-2, :] | p[..., 1:-1, :]
    rows |= p[..., 2:, :]
    out = rows[..., :-2] | rows[..., 1:-1]
    out |= rows[..., 2:]
    return out


def openings(mine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A layout's numbers and its openings: ``(counts, labels)``, ``labels`` numbering from 1 each
    8-connected region of safe cells that show 0 (0 elsewhere), what flood fill opens at once."""
    from scipy import ndimage  # on first use, which keeps scipy out of `import nnsweeper`

    counts = neighbour_sum(mine)
    labels = ndimage.label((counts == 0) & ~mine, structure=np.ones((3, 3), dtype=bool))[0]
    return counts, labels


def open_cells(revealed: np.ndarray, cells: np.ndarray, labels: np.ndarray) -> None:
    """Reveal the safe ``cells`` (a bool mask) in ``revealed``, in place, and with each 0 among them
    its whole opening and the numbers around it (flood fill; ``labels`` from :func:`openings`)."""
    revealed |= cells
    zeros = np.unique(labels[cells])
    zeros = zeros[zeros > 0]
    if zeros.size:
        revealed |= dilate(np.isin(labels, zeros))


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


def single_point_rules(grid: np.ndarray, mines: np.ndarray, free: np.ndarray):
    """The two single-point rules over the whole board at once.

    A number whose known mines already account for it makes its free neighbours
    safe; a number whose remaining mines equal its free neighbours makes them all
    mines.

    Parameters
    ----------
    grid : ndarray of int, shape (rows, cols)
        -1 covered, 0..8 revealed.
    mines : ndarray of bool
        Covered cells known to be mines (flags).
    free : ndarray of bool
        Covered cells not yet settled either way.

    Returns
    -------
    need : ndarray of int64
        Mines each revealed number still needs among its free neighbours (0 on covered cells).
    free_nb : ndarray of int64
        Free neighbours of every cell.
    safe, new_mines : ndarray of bool
        Free cells the rules prove safe, and free cells they prove to be mines.
    """
    revealed = grid >= 0
    free_nb = neighbour_sum(free)
    need = np.where(revealed, grid.astype(np.int64) - neighbour_sum(mines), 0)
    live = revealed & (free_nb > 0)
    safe = dilate(live & (need == 0)) & free
    new_mines = dilate(live & (need == free_nb)) & free
    return need, free_nb, safe, new_mines


def board_symmetries(rows: int, cols: int) -> tuple[tuple[bool, bool, bool], ...]:
    """The symmetries of a ``rows x cols`` board: all 8 when square, else the 4 that keep its shape."""
    return SYMMETRIES if rows == cols else SYMMETRIES[:4]


def apply_symmetry(a, symmetry: tuple[bool, bool, bool]):
    """``a`` (a numpy array or torch tensor) with ``symmetry`` applied to its last two axes."""
    transpose, flip_rows, flip_cols = symmetry
    if transpose:
        a = a.swapaxes(-1, -2) if isinstance(a, np.ndarray) else a.transpose(-1, -2)
    dims = tuple(d for d, flip in ((-2, flip_rows), (-1, flip_cols)) if flip)
    if dims:
        a = np.flip(a, dims) if isinstance(a, np.ndarray) else a.flip(dims)
    return a


def invert_symmetry(a, symmetry: tuple[bool, bool, bool]):
    """The inverse of :func:`apply_symmetry`: ``invert_symmetry(apply_symmetry(a, s), s)`` is ``a``."""
    transpose, flip_rows, flip_cols = symmetry
    a = apply_symmetry(a, (False, flip_rows, flip_cols))
    return apply_symmetry(a, (True, False, False)) if transpose else a
