"""Compiled cell-by-cell loops of the single-point rules (numba).

The rules over a whole board are a handful of neighbour counts and dilations; in
numpy each is a call with its own overhead, and a game asks for them dozens of times
per move. Here they are plain loops over the cells, compiled once per machine (the
compiled code is cached beside this file). Everything is integer arithmetic: the
answers are the same on every machine, and the same as the whole-array versions in
:mod:`nnsweeper.grid` (the tests hold them to it).

numba is imported with this module, which only the engine and the solvers import, on
first use: ``import nnsweeper`` stays light.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: What :func:`settle` reports.
SETTLED, UNSATISFIABLE, CONTRADICTION = 0, 1, 2


@njit(cache=True)
def _counts(grid, mine, free):
    """Per cell: mines still needed by a revealed number (grid minus the mines around it;
    a large negative value on covered cells, where no rule fires) and its free neighbours."""
    r, c = grid.shape
    need = np.empty((r, c), np.int64)
    free_nb = np.zeros((r, c), np.int64)
    for i in range(r):
        for j in range(c):
            m = 0
            f = 0
            for di in range(-1, 2):
                x = i + di
                if x < 0 or x >= r:
                    continue
                for dj in range(-1, 2):
                    y = j + dj
                    if y < 0 or y >= c or (di == 0 and dj == 0):
                        continue
                    m += mine[x, y]
                    f += free[x, y]
            free_nb[i, j] = f
            need[i, j] = grid[i, j] - m if grid[i, j] >= 0 else -(1 << 20)
    return need, free_nb


@njit(cache=True)
def _fire(grid, need, free_nb, free, out):
    """One round of both rules: ``out`` gets bit 1 on free cells a number proves safe and
    bit 2 on those it proves mines. Returns whether any cell got a bit."""
    r, c = grid.shape
    out[:, :] = 0
    fired = False
    for i in range(r):
        for j in range(c):
            f = free_nb[i, j]
            if grid[i, j] < 0 or f == 0:
                continue
            n = need[i, j]
            bit = 1 if n == 0 else (2 if n == f else 0)
            if bit == 0:
                continue
            for x in range(max(i - 1, 0), min(i + 2, r)):
                for y in range(max(j - 1, 0), min(j + 2, c)):
                    if free[x, y]:
                        out[x, y] |= bit
                        fired = True
    return fired


@njit(cache=True)
def rules_once(grid, mine, free):
    """The single-point rules once: ``(safe, mines)`` bool arrays of the free cells they settle.

    The same as :func:`nnsweeper.grid.single_point_rules`' ``safe`` and ``new_mines``.
    """
    need, free_nb = _counts(grid, mine, free)
    out = np.zeros(grid.shape, np.uint8)
    _fire(grid, need, free_nb, free, out)
    return (out & 1) != 0, (out & 2) != 0


@njit(cache=True)
def _first_bad(grid, need, free_nb):
    r, c = grid.shape
    for i in range(r):
        for j in range(c):
            if grid[i, j] >= 0 and (need[i, j] < 0 or need[i, j] > free_nb[i, j]):
                return i, j
    return -1, -1


@njit(cache=True)
def settle(grid, mine, free):
    """The single-point rules until nothing changes, in rounds, updating ``mine`` and ``free``.

    Each round applies everything the rules prove on the board as it stands (as the
    whole-array loop of :func:`nnsweeper.probability._reduce` does). Returns
    ``(status, i, j, need, free_nb)``: :data:`SETTLED`, or :data:`UNSATISFIABLE` when the
    number at ``(i, j)`` cannot be satisfied before any rule runs, or
    :data:`CONTRADICTION` when the numbers around ``(i, j)`` contradict each other.
    """
    r, c = grid.shape
    need, free_nb = _counts(grid, mine, free)
    bi, bj = _first_bad(grid, need, free_nb)
    if bi >= 0:
        return UNSATISFIABLE, bi, bj, need, free_nb
    out = np.zeros((r, c), np.uint8)
    while _fire(grid, need, free_nb, free, out):
        for i in range(r):
            for j in range(c):
                if out[i, j] == 3:
                    return CONTRADICTION, i, j, need, free_nb
        for i in range(r):
            for j in range(c):
                bit = out[i, j]
                if bit == 0:
                    continue
                free[i, j] = False
                if bit == 2:
                    mine[i, j] = True
                for x in range(max(i - 1, 0), min(i + 2, r)):
                    for y in range(max(j - 1, 0), min(j + 2, c)):
                        if x != i or y != j:
                            free_nb[x, y] -= 1
                            if bit == 2:
                                need[x, y] -= 1
    bi, bj = _first_bad(grid, need, free_nb)
    if bi >= 0:
        return CONTRADICTION, bi, bj, need, free_nb
    return SETTLED, -1, -1, need, free_nb
