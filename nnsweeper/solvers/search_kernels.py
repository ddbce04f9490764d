"""Compiled loops of the search solver's look-ahead (numba), kept apart from the engine's kernels.

The look-ahead reads each next board's analysis cell by cell; in numpy each step is a call
with its own overhead, thousands of times per game. Here those steps are one loop over the
cells, compiled once per machine and cached as the engine's kernels are
(:func:`nnsweeper.engine.kernels.compiled`). Imported on first use, by the search solver only.
"""

from __future__ import annotations

from nnsweeper.engine.kernels import compiled


@compiled
def living_chances(p, unknown, frontier):
    """What the search's blended value of a board reads from its analysis, in one pass.

    ``p`` the exact probabilities (float64), ``unknown`` the covered unflagged cells,
    ``frontier`` those next to a revealed cell. A cell is *open* when it is unknown and
    not a proved mine (``p < 1``), *living* when open with an open neighbour that is not
    proved safe (``p > 0``). The chances are ``1 - p`` of the living cells on the
    frontier or proved safe, and twice that of the first living interior cell (row-major;
    interior cells share one probability). Returns ``(open, n, s1, s2, best)``: the open
    cells, the chances (2 standing for two or more), the highest and second-highest chance
    (ties kept: ``s2 == s1`` when two are equal) and ``1 - min p`` over the open cells. The
    same as :func:`nnsweeper.solvers.search.living_cells` and the whole-array steps it
    replaced, to the last bit: each chance is one subtraction, and only compared.
    """
    r, c = p.shape
    n_open = 0
    n = 0
    s1 = -1.0
    s2 = -1.0
    lowest = 2.0
    inner = -1.0
    for i in range(r):
        for j in range(c):
            if not unknown[i, j] or p[i, j] == 1.0:
                continue
            n_open += 1
            if p[i, j] < lowest:
                lowest = p[i, j]
            living = False
            for x in range(max(i - 1, 0), min(i + 2, r)):
                for y in range(max(j - 1, 0), min(j + 2, c)):
                    if (x != i or y != j) and unknown[x, y] and 0.0 < p[x, y] < 1.0:
                        living = True
            if not living:
                continue
            if frontier[i, j] or p[i, j] == 0.0:
                takes = 1
            elif inner < 0.0:
                takes = 2
                inner = 1.0 - p[i, j]
            else:
                continue
            chance = 1.0 - p[i, j]
            for _ in range(takes):
                n += 1
                if chance > s1:
                    s2 = s1
                    s1 = chance
                elif chance > s2:
                    s2 = chance
    return n_open, min(n, 2), s1, s2, 1.0 - lowest
