"""Compiled loops of the single-point rules and of the exact engine (numba).

The rules over a whole board are a handful of neighbour counts and dilations; in
numpy each is a call with its own overhead, and a game asks for them dozens of times
per move. Here they are plain loops over the cells, compiled once per machine (the
compiled code is cached beside this file): the rules once (:func:`rules_once`) and to
their fixpoint (:func:`settle`), the grouping of frontier cells into boxes and
components (:func:`boxes`), and the engine's counting program in int64
(:func:`count_layouts`). Everything is integer arithmetic: the answers are the same on
every machine, and the same as the whole-array and plain-Python versions in
:mod:`nnsweeper.grid` and :mod:`nnsweeper.probability` (the tests hold them to it).

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


@njit(cache=True)
def boxes(is_con, frontier):
    """Frontier cells grouped into boxes (the same numbers around them) and boxes into components.

    Numbers (revealed cells in ``is_con``) are numbered in row-major order, frontier
    cells too. Returns ``(box_of, box_cons, n_cons, comp_of)``: each frontier cell's
    box, numbered in order of first appearance; each box's numbers, ascending, in the
    first ``n_cons[b]`` entries of its row; each box's component (boxes joined by a
    shared number), numbered in order of first appearance among the boxes.
    """
    r, c = is_con.shape
    con_id = np.full((r, c), -1, np.int64)
    n = 0
    for i in range(r):
        for j in range(c):
            if is_con[i, j]:
                con_id[i, j] = n
                n += 1
    box_grid = np.full((r, c), -1, np.int64)
    n_front = 0
    for i in range(r):
        for j in range(c):
            n_front += frontier[i, j]
    box_of = np.empty(n_front, np.int64)
    box_cons = np.empty((n_front, 8), np.int64)
    n_cons = np.zeros(n_front, np.int64)
    sig = np.empty(8, np.int64)
    n_boxes = 0
    k = 0
    for i in range(r):
        for j in range(c):
            if not frontier[i, j]:
                continue
            m = 0
            for x in range(max(i - 1, 0), min(i + 2, r)):
                for y in range(max(j - 1, 0), min(j + 2, c)):
                    v = con_id[x, y]
                    if v >= 0:
                        t = m  # insertion sort, ascending
                        while t > 0 and sig[t - 1] > v:
                            sig[t] = sig[t - 1]
                            t -= 1
                        sig[t] = v
                        m += 1
            # A cell with the same numbers around it shares one of them: it lies within
            # two rows and columns, and an earlier one has been given its box already.
            found = -1
            for x in range(max(i - 2, 0), i + 1):
                for y in range(max(j - 2, 0), min(j + 3, c)):
                    if x == i and y >= j:
                        break
                    b = box_grid[x, y]
                    if b < 0 or n_cons[b] != m:
                        continue
                    same = True
                    for t in range(m):
                        if box_cons[b, t] != sig[t]:
                            same = False
                            break
                    if same:
                        found = b
                        break
                if found >= 0:
                    break
            if found < 0:
                found = n_boxes
                n_cons[found] = m
                for t in range(m):
                    box_cons[found, t] = sig[t]
                n_boxes += 1
            box_grid[i, j] = found
            box_of[k] = found
            k += 1
    # Components: union-find over the numbers, joined through the boxes.
    parent = np.arange(n)
    for b in range(n_boxes):
        a = _root(parent, box_cons[b, 0])
        for t in range(1, n_cons[b]):
            x = _root(parent, box_cons[b, t])
            if x != a:
                parent[x] = a
    comp_of = np.empty(n_boxes, np.int64)
    label = np.full(n, -1, np.int64)
    n_comps = 0
    for b in range(n_boxes):
        a = _root(parent, box_cons[b, 0])
        if label[a] < 0:
            label[a] = n_comps
            n_comps += 1
        comp_of[b] = label[a]
    return box_of, box_cons[:n_boxes], n_cons[:n_boxes], comp_of, _local_numbers(parent, label, n_comps)


@njit(cache=True)
def _local_numbers(parent, label, n_comps):
    """Each number's component, and its rank among the numbers of its component (ascending ids)."""
    n = parent.shape[0]
    out = np.empty((n, 2), np.int64)
    seen = np.zeros(n_comps, np.int64)
    for x in range(n):
        k = label[_root(parent, x)]
        out[x, 0] = k
        out[x, 1] = seen[k] if k >= 0 else -1
        if k >= 0:
            seen[k] += 1
    return out


@njit(cache=True)
def _root(parent, x):
    """The root of ``x`` in a union-find forest, halving the path on the way."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


_COMB = np.array([[1 if j == 0 else 0 for j in range(9)] for _ in range(9)], np.int64)
for _s in range(9):
    for _j in range(_s + 1):
        _COMB[_s, _j] = 1 if _j in (0, _s) else _COMB[_s - 1, _j - 1] + _COMB[_s - 1, _j]
#: Counts stay below this in :func:`count_layouts` (products and sums of two below it fit int64).
_LIMIT = 1 << 62


@njit(cache=True)
def _grow(a, n):
    """``a`` (1-d) with room for at least ``n`` entries (doubled when it has to grow)."""
    if n <= a.shape[0]:
        return a
    out = np.empty(max(n, 2 * a.shape[0]), a.dtype)
    out[: a.shape[0]] = a
    return out


_FAIL = (False, np.int64(0), np.zeros(0, np.int64), np.zeros((0, 0), np.int64))


@njit(cache=True)
def count_layouts(spec, mines_left, radix, most):
    """A component's layouts per mine count and each step's mine tally per mine count, in int64.

    The dynamic program of :func:`nnsweeper.probability._count_states` on its plan,
    flattened into ``spec``: ``[steps, width]``, then per step ``size, n, opened (n
    needs), n, touched (n pairs position, room), n, keep (n positions)``. States are
    merged through an integer code (base 9 per open number, then ``radix`` for the
    mines) in an open-addressing table. Returns ``(ok, m_lo, layouts, tallies)``:
    ``tallies[k, i]`` is, over the layouts with ``m_lo + i`` mines, the sum of the mines
    in step ``k``'s box. ``ok`` is False, and nothing else is meaningful, when a count
    would pass 2**62, a step has more than ``most`` states, or no layout fits (the
    exact Python counting then decides).
    """
    n_steps, width = spec[0], max(spec[1], 1)
    needs = np.zeros((1, width), np.int64)
    mines = np.zeros(1, np.int64)
    counts = np.ones(1, np.int64)
    # Every step's forward counts before it and transitions (src, j, dst), end to end.
    h_counts = np.empty(64, np.int64)
    h_src = np.empty(256, np.int64)
    h_j = np.empty(256, np.int64)
    h_dst = np.empty(256, np.int64)
    step_at = np.zeros(n_steps + 1, np.int64)  # where each step's transitions start
    count_at = np.zeros(n_steps + 1, np.int64)  # and its counts
    sizes = np.zeros(n_steps, np.int64)
    ext = np.zeros(width + 8, np.int64)
    moved = np.zeros(width + 8, np.bool_)
    keep = np.zeros(width, np.int64)
    n_open = 0
    at = 2
    n_moves = 0
    for k in range(n_steps):
        s = spec[at]
        sizes[k] = s
        n_states = counts.shape[0]
        h_counts = _grow(h_counts, count_at[k] + n_states)
        h_counts[count_at[k]: count_at[k] + n_states] = counts
        count_at[k + 1] = count_at[k] + n_states
        n_opened = spec[at + 1]
        o0 = at + 2
        at = o0 + n_opened
        n_touched = spec[at]
        t0 = at + 1
        at = t0 + 2 * n_touched
        n_keep = spec[at]
        for q in range(n_keep):
            keep[q] = spec[at + 1 + q]
        at += 1 + n_keep
        moved[:] = False
        for t in range(n_touched):
            moved[spec[t0 + 2 * t]] = True
        cap = n_states * (s + 1)
        size = 16
        while size < 2 * cap:
            size *= 2
        table = np.full(size, -1, np.int64)  # codes
        slot = np.empty(size, np.int64)  # their states
        new_needs = np.empty((cap, width), np.int64)
        new_mines = np.empty(cap, np.int64)
        new_counts = np.zeros(cap, np.int64)
        h_src = _grow(h_src, n_moves + cap)
        h_j = _grow(h_j, n_moves + cap)
        h_dst = _grow(h_dst, n_moves + cap)
        n_new = 0
        for src in range(n_states):
            for p in range(n_open):
                ext[p] = needs[src, p]
            for p in range(n_opened):
                ext[n_open + p] = spec[o0 + p]
            m = mines[src]
            lo = 0
            hi = min(s, mines_left - m)
            for t in range(n_touched):
                v = ext[spec[t0 + 2 * t]]
                hi = min(hi, v)
                lo = max(lo, v - spec[t0 + 2 * t + 1])
            a = counts[src]
            for j in range(lo, hi + 1):
                code = np.int64(0)
                for q in range(n_keep):
                    p = keep[q]
                    code = code * 9 + (ext[p] - j if moved[p] else ext[p])
                code = code * radix + m + j
                h = np.uint64(code) * np.uint64(0x9E3779B97F4A7C15)
                i = np.int64(h >> np.uint64(40)) & (size - 1)
                while table[i] != -1 and table[i] != code:
                    i = (i + 1) & (size - 1)
                if table[i] == -1:
                    table[i] = code
                    slot[i] = n_new
                    for q in range(n_keep):
                        p = keep[q]
                        new_needs[n_new, q] = ext[p] - j if moved[p] else ext[p]
                    new_mines[n_new] = m + j
                    n_new += 1
                d = slot[i]
                c = _COMB[s, j]
                if a > _LIMIT // c:
                    return _FAIL
                new_counts[d] += a * c
                if new_counts[d] >= _LIMIT:
                    return _FAIL
                h_src[n_moves] = src
                h_j[n_moves] = j
                h_dst[n_moves] = d
                n_moves += 1
        if n_new == 0 or n_new > most:
            return _FAIL
        step_at[k + 1] = n_moves
        needs = new_needs[:n_new]
        mines = new_mines[:n_new]
        counts = new_counts[:n_new]
        n_open = n_keep
    m_lo = mines.min()
    n_m = mines.max() - m_lo + 1
    layouts = np.zeros(n_m, np.int64)
    total = np.int64(0)
    for d in range(counts.shape[0]):
        layouts[mines[d] - m_lo] += counts[d]
        total += counts[d]
        if total >= (1 << 59):  # tallies reach 8 times the layouts
            return _FAIL
    # Backward: per state, its completions by the final mine count.
    beta = np.zeros((counts.shape[0], n_m), np.int64)
    for d in range(counts.shape[0]):
        beta[d, mines[d] - m_lo] = 1
    tallies = np.zeros((n_steps, n_m), np.int64)
    for k in range(n_steps - 1, -1, -1):
        s = sizes[k]
        c0 = count_at[k]
        back = np.zeros((count_at[k + 1] - c0, n_m), np.int64)
        for t in range(step_at[k], step_at[k + 1]):
            src, j, d = h_src[t], h_j[t], h_dst[t]
            c = _COMB[s, j]
            for i in range(n_m):
                down = c * beta[d, i]
                if down:
                    back[src, i] += down
                    if j:  # layouts through src with j mines here: at most the total
                        tallies[k, i] += h_counts[c0 + src] * down * j
        beta = back
    return True, m_lo, layouts, tallies
