"""Compiled loops of the single-point rules and of the exact engine (numba).

The rules over a whole board are a handful of neighbour counts and dilations; in
numpy each is a call with its own overhead, and a game asks for them dozens of times
per move. Here they are plain loops over the cells, compiled once per machine (the
compiled code is cached beside this file): the rules once (:func:`rules_once`) and to
their fixpoint (:func:`settle`), the frontiers after them (:func:`fronts`), the
grouping of frontier cells into boxes and components (:func:`boxes`) and their flat
descriptions (:func:`frontier_components`), the counting program's plan
(:func:`plan_spec`) and the program itself in int64 (:func:`count_layouts`,
:func:`count_component`); for the search solver, its forced guess
(:func:`forced_pair`) and its exact endgame search over bit sets of layouts
(:func:`endgame_win`). Everything is integer arithmetic: the answers are the same on
every machine, and the same as the whole-array and plain-Python versions in
:mod:`nnsweeper.grid`, :mod:`nnsweeper.engine.frontier`, :mod:`nnsweeper.engine.counting`
and the tests (which hold them to it).

numba is imported with this module, which only the engine and the solvers import, on
first use (inside the functions that call a kernel): ``import nnsweeper`` and
``import nnsweeper.engine`` stay light. The compiled code is cached beside this file.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def compiled(fn):
    """``numba.njit`` with the compiled code cached on disk where numba can write it (beside this
    file, or in the user's cache folder); compiled in every process where it cannot (an
    unwritable home and installation), rather than refusing to import."""
    try:
        return njit(cache=True)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return njit(fn)


#: What :func:`settle` reports.
SETTLED, UNSATISFIABLE, CONTRADICTION = 0, 1, 2


@compiled
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


@compiled
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


@compiled
def rules_once(grid, mine, free):
    """The single-point rules once: ``(safe, mines)`` bool arrays of the free cells they settle.

    The same as :func:`nnsweeper.grid.single_point_rules`' ``safe`` and ``new_mines``.
    """
    need, free_nb = _counts(grid, mine, free)
    out = np.zeros(grid.shape, np.uint8)
    _fire(grid, need, free_nb, free, out)
    return (out & 1) != 0, (out & 2) != 0


@compiled
def rules_with_flags(grid, flags):
    """:func:`rules_once` with ``flags`` as the known mines and every other covered cell free."""
    r, c = grid.shape
    free = np.empty((r, c), np.bool_)
    for i in range(r):
        for j in range(c):
            free[i, j] = grid[i, j] < 0 and not flags[i, j]
    return rules_once(grid, flags, free)


@compiled
def _first_bad(grid, need, free_nb):
    r, c = grid.shape
    for i in range(r):
        for j in range(c):
            if grid[i, j] >= 0 and (need[i, j] < 0 or need[i, j] > free_nb[i, j]):
                return i, j
    return -1, -1


@compiled
def settle(grid, mine, free):
    """The single-point rules until nothing changes, in rounds, updating ``mine`` and ``free``.

    Each round applies everything the rules prove on the board as it stands (as the
    whole-array loop of :func:`nnsweeper.engine.frontier.reduce_board` does). Returns
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


@compiled
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


@compiled
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


@compiled
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


@compiled
def _grow(a, n):
    """``a`` (1-d) with room for at least ``n`` entries (doubled when it has to grow)."""
    if n <= a.shape[0]:
        return a
    out = np.empty(max(n, 2 * a.shape[0]), a.dtype)
    out[: a.shape[0]] = a
    return out


_FAIL = (False, np.int64(-1), np.zeros(0, np.int64), np.zeros((0, 0), np.int64))


@compiled
def count_layouts(spec, mines_left, radix, most):
    """A component's layouts per mine count and each step's mine tally per mine count, in int64.

    The dynamic program of :func:`nnsweeper.engine.counting.count_states` on its plan,
    flattened into ``spec``: ``[steps, width]``, then per step ``size, n, opened (n
    needs), n, touched (n pairs position, room), n, keep (n positions)``. States are
    merged through an integer code (base 9 per open number, then ``radix`` for the
    mines) in an open-addressing table. Returns ``(ok, m_lo, layouts, tallies)``:
    ``tallies[k, i]`` is, over the layouts with ``m_lo + i`` mines, the sum of the mines
    in step ``k``'s box. ``ok`` is False when a count would pass 2**62 or a step has
    more than ``most`` states (``m_lo`` is -1 then, and nothing else is meaningful: the
    exact Python counting decides), or when no layout fits: then ``m_lo`` is the step
    that was left with no state and ``layouts[0]`` the most states a step before it held.
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
    widest = 1
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
        if n_new == 0:  # no layout: which step, and the most states any step before held
            return False, np.int64(k), np.full(1, widest, np.int64), np.zeros((0, 0), np.int64)
        if n_new > most:
            return _FAIL
        widest = max(widest, n_new)
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


@compiled
def frontier_components(is_con, need, frontier):
    """The frontier's boxes and components (:func:`boxes`) in flat arrays, one description each.

    What :func:`nnsweeper.engine.frontier.components` builds in Python lists, for the
    engine's hot path: components in the order of their first box, a component's boxes
    in the order of their first cell, a box's cells row-major, a component's numbers by
    their position (its local ids 0, 1, ...). Returns ``(cells, box_size, comp_boxes,
    desc, comp_desc, con_pos, comp_cons)``:

    - ``cells``: flat indices of the frontier cells, box after box in that order, and
      ``box_size`` the cells of each box; component ``k`` has the boxes
      ``comp_boxes[k]:comp_boxes[k + 1]``;
    - ``desc[comp_desc[k]:comp_desc[k + 1]]``: component ``k``'s description, all
      its counts depend on: ``[n_boxes, n_numbers, sizes..., numbers per box...,
      each box's numbers (local ids, ascending)..., each number's need...]``;
    - ``con_pos[comp_cons[k]:comp_cons[k + 1]]``: the flat positions of its numbers.
    """
    box_of, box_cons, n_cons, comp_of, numbers = boxes(is_con, frontier)
    r, c = is_con.shape
    n_boxes = n_cons.shape[0]
    n_comps = 0
    for b in range(n_boxes):
        n_comps = max(n_comps, comp_of[b] + 1)
    # Boxes by component, in order within one (a stable counting sort).
    comp_boxes = np.zeros(n_comps + 1, np.int64)
    for b in range(n_boxes):
        comp_boxes[comp_of[b] + 1] += 1
    for k in range(n_comps):
        comp_boxes[k + 1] += comp_boxes[k]
    fill = comp_boxes[:n_comps].copy()
    new_id = np.empty(n_boxes, np.int64)
    for b in range(n_boxes):
        new_id[b] = fill[comp_of[b]]
        fill[comp_of[b]] += 1
    box_size = np.zeros(n_boxes, np.int64)
    for k in range(box_of.shape[0]):
        box_size[new_id[box_of[k]]] += 1
    box_start = np.zeros(n_boxes + 1, np.int64)
    for b in range(n_boxes):
        box_start[b + 1] = box_start[b] + box_size[b]
    cells = np.empty(box_of.shape[0], np.int64)
    fill = box_start[:n_boxes].copy()
    k = 0
    for i in range(r):
        for j in range(c):
            if frontier[i, j]:
                b = new_id[box_of[k]]
                cells[fill[b]] = i * c + j
                fill[b] += 1
                k += 1
    # Numbers by component, by their local id; and what each needs.
    comp_cons = np.zeros(n_comps + 1, np.int64)
    for x in range(numbers.shape[0]):
        if numbers[x, 0] >= 0:
            comp_cons[numbers[x, 0] + 1] += 1
    for k in range(n_comps):
        comp_cons[k + 1] += comp_cons[k]
    con_pos = np.empty(comp_cons[n_comps], np.int64)
    con_need = np.empty(comp_cons[n_comps], np.int64)
    x = 0
    for i in range(r):
        for j in range(c):
            if is_con[i, j]:
                if numbers[x, 0] >= 0:
                    at = comp_cons[numbers[x, 0]] + numbers[x, 1]
                    con_pos[at] = i * c + j
                    con_need[at] = need[i, j]
                x += 1
    # The descriptions.
    length = np.zeros(n_comps, np.int64)
    for b in range(n_boxes):
        length[comp_of[b]] += 2 + n_cons[b]  # its size, its count of numbers, the numbers
    comp_desc = np.zeros(n_comps + 1, np.int64)
    for k in range(n_comps):
        comp_desc[k + 1] = comp_desc[k] + 2 + length[k] + comp_cons[k + 1] - comp_cons[k]
    desc = np.empty(comp_desc[n_comps], np.int64)
    old_of = np.empty(n_boxes, np.int64)
    for b in range(n_boxes):
        old_of[new_id[b]] = b
    for k in range(n_comps):
        b0, b1 = comp_boxes[k], comp_boxes[k + 1]
        nb = b1 - b0
        at = comp_desc[k]
        desc[at] = nb
        desc[at + 1] = comp_cons[k + 1] - comp_cons[k]
        at += 2
        for b in range(b0, b1):
            desc[at] = box_size[b]
            desc[at + nb] = n_cons[old_of[b]]
            at += 1
        at += nb
        for b in range(b0, b1):
            ob = old_of[b]
            for t in range(n_cons[ob]):
                desc[at] = numbers[box_cons[ob, t], 1]
                at += 1
        for x in range(comp_cons[k], comp_cons[k + 1]):
            desc[at] = con_need[x]
            at += 1
    return cells, box_size, comp_boxes, desc, comp_desc, con_pos, comp_cons


@compiled
def _box_order(nb, nn, n_cons, cons_at, cons):
    """The Cuthill-McKee box order of :func:`nnsweeper.engine.frontier.make_plan` on a description."""
    order = np.empty(nb, np.int64)
    if nb <= 2:
        for k in range(nb):
            order[k] = nb - 1 - k
        return order
    # The boxes of each number, ascending.
    bo_at = np.zeros(nn + 1, np.int64)
    for t in range(cons_at[nb]):
        bo_at[cons[t] + 1] += 1
    for x in range(nn):
        bo_at[x + 1] += bo_at[x]
    bo = np.empty(bo_at[nn], np.int64)
    fill = bo_at[:nn].copy()
    for b in range(nb):
        for t in range(cons_at[b], cons_at[b + 1]):
            x = cons[t]
            bo[fill[x]] = b
            fill[x] += 1
    # Each box's neighbours (itself included), then ranked by (degree, box).
    mark = np.full(nb, -1, np.int64)
    nbr_at = np.zeros(nb + 1, np.int64)
    nbr = np.empty(16 * nb, np.int64)
    n = 0
    for b in range(nb):
        for t in range(cons_at[b], cons_at[b + 1]):
            x = cons[t]
            for q in range(bo_at[x], bo_at[x + 1]):
                v = bo[q]
                if mark[v] != b:
                    mark[v] = b
                    if n == nbr.shape[0]:
                        nbr = _grow(nbr, n + 1)
                    nbr[n] = v
                    n += 1
        nbr_at[b + 1] = n
    deg = np.empty(nb, np.int64)
    for b in range(nb):
        deg[b] = nbr_at[b + 1] - nbr_at[b] - 1
    for b in range(nb):
        seg = np.sort(deg[nbr[nbr_at[b]:nbr_at[b + 1]]] * nb + nbr[nbr_at[b]:nbr_at[b + 1]])
        for q in range(seg.shape[0]):
            nbr[nbr_at[b] + q] = seg[q] % nb
    start = 0
    for b in range(1, nb):
        if deg[b] < deg[start]:
            start = b
    seen = np.zeros(nb, np.bool_)
    for _ in range(2):  # from a low-degree box, then from the last box that one reached
        seen[:] = False
        order[0] = start
        seen[start] = True
        size = 1
        for p in range(nb):  # grows while it is walked
            u = order[p]
            for q in range(nbr_at[u], nbr_at[u + 1]):
                v = nbr[q]
                if not seen[v]:
                    seen[v] = True
                    order[size] = v
                    size += 1
        start = order[nb - 1]
    return order


@compiled
def plan_spec(desc):
    """The counting program's plan of a component description (see :func:`frontier_components`).

    The plan of :func:`nnsweeper.engine.frontier.make_plan` (the same box order, the same
    steps), flattened as :func:`count_layouts` reads it. Returns ``(spec, order)``:
    ``order[k]`` is the box of step ``k``.
    """
    nb, nn = desc[0], desc[1]
    sizes = desc[2:2 + nb]
    n_cons = desc[2 + nb:2 + 2 * nb]
    cons_at = np.zeros(nb + 1, np.int64)
    for b in range(nb):
        cons_at[b + 1] = cons_at[b] + n_cons[b]
    cons = desc[2 + 2 * nb:2 + 2 * nb + cons_at[nb]]
    need = desc[2 + 2 * nb + cons_at[nb]:]
    order = _box_order(nb, nn, n_cons, cons_at, cons)
    last = np.empty(nn, np.int64)  # the step that closes each number
    room = np.zeros(nn, np.int64)  # cells of its boxes not visited yet
    for k in range(nb):
        b = order[k]
        for t in range(cons_at[b], cons_at[b + 1]):
            last[cons[t]] = k
            room[cons[t]] += sizes[b]
    at = np.full(nn, -1, np.int64)  # each open number's position among the open ones
    open_ = np.empty(nn, np.int64)
    keep = np.empty(nn, np.int64)
    n_open = 0
    spec = np.empty(2 + nb * (4 + 8 + 16) + 64, np.int64)
    spec[0] = nb
    width = 0
    w = 2
    for k in range(nb):
        b = order[k]
        s = sizes[b]
        n_new = 0
        for t in range(cons_at[b], cons_at[b + 1]):
            if at[cons[t]] < 0:
                n_new += 1
        spec = _grow(spec, w + 4 + n_new + 2 * (cons_at[b + 1] - cons_at[b]) + n_open + n_new)
        spec[w] = s
        spec[w + 1] = n_new
        w += 2
        for t in range(cons_at[b], cons_at[b + 1]):
            x = cons[t]
            if at[x] < 0:
                at[x] = n_open
                open_[n_open] = x
                n_open += 1
                spec[w] = need[x]
                w += 1
        spec[w] = cons_at[b + 1] - cons_at[b]
        w += 1
        for t in range(cons_at[b], cons_at[b + 1]):
            x = cons[t]
            room[x] -= s
            spec[w] = at[x]
            spec[w + 1] = room[x]
            w += 2
        n_keep = 0
        for p in range(n_open):
            if last[open_[p]] != k:
                keep[n_keep] = p
                n_keep += 1
        spec[w] = n_keep
        w += 1
        for q in range(n_keep):
            spec[w] = keep[q]
            w += 1
        width = max(width, n_keep)
        for q in range(n_keep):
            x = open_[keep[q]]
            open_[q] = x
            at[x] = q
        n_open = n_keep
    spec[1] = width
    return spec[:w], order


@compiled
def count_component(desc, mines_left, most):
    """:func:`count_layouts` on a component description, its tallies by box.

    Returns ``(ok, m_lo, layouts, tallies)`` as :func:`count_layouts` does, with
    ``tallies[b]`` the tally of box ``b`` (not of step ``b``), and where no layout fits,
    ``m_lo`` the box of the step left with no state; ``ok`` is also False (``m_lo``
    -1) when the program's state codes could pass 2**62 (as
    :func:`nnsweeper.engine.counting.count_compiled` refuses them).
    """
    spec, order = plan_spec(desc)
    nb = desc[0]
    cells = 0
    for b in range(nb):
        cells += desc[2 + b]
    radix = min(mines_left, cells) + 1
    bound = radix  # radix * 9**width, the largest state code, must stay below 2**62
    for _ in range(spec[1]):
        if bound >= (_LIMIT + 8) // 9:
            return _FAIL
        bound *= 9
    ok, m_lo, layouts, tallies = count_layouts(spec, mines_left, radix, most)
    if not ok:
        if m_lo >= 0:  # no layout: the step's box instead of the step
            return False, order[m_lo], layouts, tallies
        return _FAIL
    by_box = np.empty_like(tallies)
    for k in range(nb):
        by_box[order[k]] = tallies[k]
    return True, m_lo, layouts, by_box


@compiled
def _unknown_around(grid, mines, i, j):
    """Covered cells next to ``(i, j)`` that are not known mines."""
    r, c = grid.shape
    n = 0
    for x in range(max(i - 1, 0), min(i + 2, r)):
        for y in range(max(j - 1, 0), min(j + 2, c)):
            if (x != i or y != j) and grid[x, y] < 0 and not mines[x, y]:
                n += 1
    return n


@compiled
def _mines_apart(grid, mines, pi, pj, qi, qj):
    """Whether every neighbour of ``p`` that is neither ``q`` nor a neighbour of ``q`` is a known mine."""
    r, c = grid.shape
    for x in range(max(pi - 1, 0), min(pi + 2, r)):
        for y in range(max(pj - 1, 0), min(pj + 2, c)):
            if (x == pi and y == pj) or (x == qi and y == qj):
                continue
            if (abs(x - qi) > 1 or abs(y - qj) > 1) and not mines[x, y]:
                return False
    return True


@compiled
def forced_pair(grid, mines):
    """The search solver's forced guess (:func:`nnsweeper.solvers.search.forced_guess`).

    The first revealed number, row-major, that needs exactly one more mine among
    exactly two covered cells ``p`` and ``q`` (row-major among its neighbours) such that
    every cell next to one of them and not the other is a known mine (``mines``).
    Returns ``(pi, pj, qi, qj)`` with ``p`` the cell with more covered neighbours that
    are not known mines (``p`` first on a tie), or all -1 when there is none.
    """
    r, c = grid.shape
    for i in range(r):
        for j in range(c):
            if grid[i, j] < 0:
                continue
            n_free = 0
            n_mines = 0
            pi = pj = qi = qj = -1
            for x in range(max(i - 1, 0), min(i + 2, r)):
                for y in range(max(j - 1, 0), min(j + 2, c)):
                    if x == i and y == j:
                        continue
                    if mines[x, y]:
                        n_mines += 1
                    elif grid[x, y] < 0:
                        n_free += 1
                        if n_free == 1:
                            pi, pj = x, y
                        elif n_free == 2:
                            qi, qj = x, y
            if n_free != 2 or grid[i, j] - n_mines != 1:
                continue
            if _mines_apart(grid, mines, pi, pj, qi, qj) and _mines_apart(grid, mines, qi, qj, pi, pj):
                if _unknown_around(grid, mines, pi, pj) >= _unknown_around(grid, mines, qi, qj):
                    return pi, pj, qi, qj
                return qi, qj, pi, pj
    return -1, -1, -1, -1


# ---------------------------------------------------------------------------- endgame
# Sets of layouts as rows of uint64 words (bit k of word w: layout 64 w + k).
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_SEED = np.uint64(0x9E3779B97F4A7C15)
_NONE = np.uint64(0)
#: What :func:`endgame_win` reports.
SOLVED, OVER_BUDGET = 0, 1
_PARTS, _GUESS = 0, 1


@compiled
def _popcount(s):
    """Layouts in the set ``s`` (its set bits)."""
    n = 0
    for w in s:
        x = w - ((w >> np.uint64(1)) & _M1)
        x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
        x = (x + (x >> np.uint64(4))) & _M4
        n += np.int64((x * _H01) >> np.uint64(56))
    return n


@compiled
def _and_count(a, b):
    """Layouts in both sets."""
    n = 0
    for k in range(a.shape[0]):
        x = a[k] & b[k]
        x = x - ((x >> np.uint64(1)) & _M1)
        x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
        x = (x + (x >> np.uint64(4))) & _M4
        n += np.int64((x * _H01) >> np.uint64(56))
    return n


@compiled
def _slot(keys, used, s):
    """Where the set ``s`` is in the memo's open-addressing table, or the empty slot it would take."""
    h = _SEED
    for w in s:
        h = (h ^ w) * _MIX
        h ^= h >> np.uint64(31)
    mask = keys.shape[0] - 1
    i = np.int64(h >> np.uint64(11)) & mask
    while used[i]:
        same = True
        for k in range(s.shape[0]):
            if keys[i, k] != s[k]:
                same = False
                break
        if same:
            return i
        i = (i + 1) & mask
    return i


@compiled
def _rehash(keys, vals, used):
    """The memo table at twice its size."""
    cap = 2 * keys.shape[0]
    new_keys = np.zeros((cap, keys.shape[1]), np.uint64)
    new_vals = np.zeros((cap, 2), np.int64)
    new_used = np.zeros(cap, np.bool_)
    for i in range(keys.shape[0]):
        if used[i]:
            j = _slot(new_keys, new_used, keys[i])
            new_keys[j] = keys[i]
            new_vals[j] = vals[i]
            new_used[j] = True
    return new_keys, new_vals, new_used


@compiled
def _grow_rows(a, n):
    """``a`` (2-d) with room for at least ``n`` rows (doubled when it has to grow)."""
    if n <= a.shape[0]:
        return a
    out = np.empty((max(n, 2 * a.shape[0]), a.shape[1]), a.dtype)
    out[: a.shape[0]] = a
    return out


@compiled
def endgame_win(root, mine, shows, n_shows, keys, vals, used, n_memo, node_limit, nodes):
    """The exact endgame search of :class:`nnsweeper.solvers.endgame.Endgame` from the set ``root``.

    ``w(S)``, the layouts of ``S`` in which best play wins, by the recursion of that
    module (the same positions expanded, in the same order, with the same pruning),
    run on an explicit stack. ``mine[c]`` is the set of layouts where cell ``c`` holds a
    mine and ``shows[c, :n_shows[c]]`` the sets where it shows each of its numbers,
    ascending. The memo (``keys``, ``vals`` = (wins, cell), ``used``, with ``n_memo``
    entries) is kept between calls; ``nodes`` positions were expanded already and at
    most ``node_limit`` may be.

    Returns ``(status, wins, col, nodes, keys, vals, used, n_memo)``: :data:`SOLVED`,
    or :data:`OVER_BUDGET` when one more position would pass ``node_limit`` (then
    ``wins`` and ``col`` mean nothing); ``col`` is the best guess at ``root`` (-1 when
    no guess is needed there).
    """
    n_words = root.shape[0]
    n_cells = mine.shape[0]
    n_root = _popcount(root)
    if n_root <= 1:
        return SOLVED, n_root, -1, nodes, keys, vals, used, n_memo
    at = _slot(keys, used, root)
    if used[at]:
        return SOLVED, vals[at, 0], vals[at, 1], nodes, keys, vals, used, n_memo
    depth_max = n_root + 1  # a child holds fewer layouts than its parent, and at least two
    f_set = np.empty((depth_max, n_words), np.uint64)
    f_n = np.empty(depth_max, np.int64)
    f_mode = np.empty(depth_max, np.int64)
    f_best = np.empty(depth_max, np.int64)
    f_col = np.empty(depth_max, np.int64)
    f_acc = np.empty(depth_max, np.int64)  # the wins summed over the parts seen so far
    f_next = np.empty(depth_max, np.int64)  # the next part to evaluate (a row of `parts`)
    f_end = np.empty(depth_max, np.int64)
    f_base = np.empty(depth_max, np.int64)  # its first row of `parts`
    f_guess = np.empty(depth_max, np.int64)  # the next guess (an entry of `guesses`)
    f_gbase = np.empty(depth_max, np.int64)
    f_gend = np.empty(depth_max, np.int64)
    f_cell = np.empty(depth_max, np.int64)  # the guess whose split is being evaluated (-1: none)
    f_lv = np.empty(depth_max, np.int64)  # its first entry of `lv`
    f_lv_end = np.empty(depth_max, np.int64)
    parts = np.empty((64, n_words), np.uint64)  # a stack of the frames' parts
    guesses = np.empty(64, np.int64)  # a stack of the frames' guesses, as mines * n_cells + cell
    # A stack of the frames' open cells: those that are a mine in some of its layouts but not all,
    # ascending. Only they can matter below a frame: a cell that is a mine in all of them is one
    # in every subset, and one that is safe in all of them shows one number in each part the
    # frame is split into (a free reveal splits the parts by it; without one, its number is the
    # same throughout); the guess a part comes from is revealed in it.
    lv = np.empty(64, np.int64)
    lv_top = 0
    # The cells that can matter below the root (every position is a subset of it): a cell that is
    # a mine in every layout of the root is one in every subset (never guessed, never revealed),
    # and a cell safe in all of them that shows one number splits nothing. The others, ascending.
    live = np.empty(n_cells, np.int64)
    n_live = 0
    for c in range(n_cells):
        m = _and_count(root, mine[c])
        if (m == 0 and n_shows[c] > 1) or 0 < m < n_root:
            live[n_live] = c
            n_live += 1
    top = 0
    g_top = 0
    pending = root.copy()
    depth = 0
    while True:
        # Expand the position `pending` as a new frame.
        nodes += 1
        if nodes > node_limit:
            return OVER_BUDGET, 0, -1, nodes, keys, vals, used, n_memo
        f = depth
        depth += 1
        f_set[f] = pending
        s = f_set[f]
        n = _popcount(s)
        f_n[f] = n
        f_base[f] = top
        f_gbase[f] = g_top
        f_lv[f] = lv_top
        parts = _grow_rows(parts, top + 1)
        parts[top] = s
        n_parts = 1
        # The cells to look at: the root's live ones, else the parent's open ones but the guess
        # this position comes from (the same splits and guesses as every live cell would give).
        n_src = n_live if f == 0 else f_lv_end[f - 1] - f_lv[f - 1]
        for li in range(n_src):
            if f == 0:
                c = live[li]
            else:
                c = lv[f_lv[f - 1] + li]
                if c == f_cell[f - 1]:
                    continue
            m = _and_count(s, mine[c])
            if m == 0:  # safe in every layout left: revealing it is free
                if n_shows[c] > 1:  # it splits every part by its number
                    out = top + n_parts
                    for p in range(top, top + n_parts):
                        for v in range(n_shows[c]):
                            parts = _grow_rows(parts, out + 1)
                            nonempty = False
                            for k in range(n_words):
                                parts[out, k] = parts[p, k] & shows[c, v, k]
                                if parts[out, k] != _NONE:
                                    nonempty = True
                            if nonempty:
                                out += 1
                    n_new = out - top - n_parts
                    for p in range(n_new):  # down over the old parts (rows in increasing order)
                        parts[top + p] = parts[top + n_parts + p]
                    n_parts = n_new
            elif m < n:
                guesses = _grow(guesses, g_top + 1)
                guesses[g_top] = m * n_cells + c
                g_top += 1
                lv = _grow(lv, lv_top + 1)
                lv[lv_top] = c
                lv_top += 1
        f_lv_end[f] = lv_top
        f_cell[f] = -1
        f_acc[f] = 0
        if n_parts > 1:
            f_mode[f] = _PARTS
            f_next[f] = top
            f_end[f] = top + n_parts
            top += n_parts
            g_top = f_gbase[f]
        else:
            f_mode[f] = _GUESS
            f_best[f] = -1
            f_col[f] = -1
            f_next[f] = f_end[f] = top
            guesses[f_gbase[f]:g_top] = np.sort(guesses[f_gbase[f]:g_top])  # safest first, then by cell
            f_guess[f] = f_gbase[f]
            f_gend[f] = g_top
        # Work on the top frame until a part needs a frame of its own.
        while True:
            f = depth - 1
            if f_next[f] < f_end[f]:
                q = parts[f_next[f]]
                f_next[f] += 1
                k = _popcount(q)
                if k <= 1:
                    f_acc[f] += k
                    continue
                at = _slot(keys, used, q)
                if used[at]:
                    f_acc[f] += vals[at, 0]
                    continue
                pending = q.copy()
                break
            finished = False
            if f_mode[f] == _PARTS:
                f_best[f] = f_acc[f]
                f_col[f] = -1
                finished = True
            else:
                if f_cell[f] >= 0:  # a guess's split is summed up
                    if f_acc[f] > f_best[f]:
                        f_best[f] = f_acc[f]
                        f_col[f] = f_cell[f]
                    f_cell[f] = -1
                if f_guess[f] == f_gend[f]:
                    finished = True
                else:
                    m = guesses[f_guess[f]] // n_cells
                    c = guesses[f_guess[f]] % n_cells
                    if f_n[f] - m <= f_best[f]:
                        finished = True  # no cell from here on can win more often
                    else:
                        f_guess[f] += 1
                        out = f_base[f]
                        for v in range(n_shows[c]):
                            parts = _grow_rows(parts, out + 1)
                            nonempty = False
                            for k in range(n_words):
                                parts[out, k] = f_set[f, k] & shows[c, v, k]
                                if parts[out, k] != _NONE:
                                    nonempty = True
                            if nonempty:
                                out += 1
                        top = out
                        f_next[f] = f_base[f]
                        f_end[f] = out
                        f_acc[f] = 0
                        f_cell[f] = c
                        g_top = f_gend[f]
                        continue
            if finished:
                if 2 * (n_memo + 1) > keys.shape[0]:
                    keys, vals, used = _rehash(keys, vals, used)
                at = _slot(keys, used, f_set[f])
                keys[at] = f_set[f]
                vals[at, 0] = f_best[f]
                vals[at, 1] = f_col[f]
                used[at] = True
                n_memo += 1
                top = f_base[f]
                g_top = f_gbase[f]
                lv_top = f_lv[f]
                depth -= 1
                if depth == 0:
                    return SOLVED, f_best[f], f_col[f], nodes, keys, vals, used, n_memo
                f_acc[depth - 1] += f_best[f]


@compiled
def fronts(grid, flags, mine, free, free_nb):
    """The frontiers of a settled board (after :func:`settle`), as the engine needs them.

    Returns ``(is_con, front, frontier, counts)``: the revealed numbers with free
    neighbours, the free cells next to one of them (what is left to count), the
    covered, unflagged cells next to a revealed cell (the analysis' frontier), and the
    number of cells in ``mine``, ``free``, ``front`` and ``flags``. The same as
    ``revealed & (free_nb > 0)``, ``free & dilate(is_con)``, ``unknown &
    dilate(revealed)`` and four sums in whole-array steps.
    """
    r, c = grid.shape
    is_con = np.zeros((r, c), np.bool_)
    for i in range(r):
        for j in range(c):
            is_con[i, j] = grid[i, j] >= 0 and free_nb[i, j] > 0
    front = np.zeros((r, c), np.bool_)
    frontier = np.zeros((r, c), np.bool_)
    counts = np.zeros(4, np.int64)
    for i in range(r):
        for j in range(c):
            counts[0] += mine[i, j]
            counts[1] += free[i, j]
            counts[3] += flags[i, j]
            if grid[i, j] >= 0 or flags[i, j]:
                continue
            near_con = False
            near_shown = False
            for x in range(max(i - 1, 0), min(i + 2, r)):
                for y in range(max(j - 1, 0), min(j + 2, c)):
                    if grid[x, y] >= 0:
                        near_shown = True
                        if is_con[x, y]:
                            near_con = True
            if near_con and free[i, j]:
                front[i, j] = True
                counts[2] += 1
            frontier[i, j] = near_shown
    return is_con, front, frontier, counts
