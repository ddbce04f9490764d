"""Exact mine probabilities for a visible Minesweeper board.

Model: every layout of exactly ``total_mines`` mines that agrees with the revealed
numbers and the (trusted) flags is equally likely. This is the posterior of every
first-click rule in :mod:`nnsweeper.game`, because mines are placed uniformly
among the layouts that honour the rule and the rule's safe cells are revealed.

Method
------
1. Covered, unflagged cells next to a revealed number form the *frontier*; the
   rest are *interior* cells, all alike. Frontier cells that touch exactly the same
   numbers are grouped into *boxes* (at most 8 cells each): only the number of mines
   in a box matters, and a box with ``s`` cells holding ``j`` mines stands for
   ``C(s, j)`` layouts.
2. Boxes and numbers split into independent components (connected through shared
   numbers).
3. Each component is counted exactly, per number ``m`` of mines it holds, by a
   dynamic program that visits the boxes in a bandwidth-reducing order and merges
   partial solutions whose still-open numbers need the same counts: in plain Python
   integers while it stays small (most components of real play), in whole-array steps
   beyond. Its cost grows with the width of the frontier, not its length; a component
   that would need more than ``max_states`` partial solutions is refused
   (:class:`~nnsweeper.errors.EngineLimitError`) rather than left to run for minutes
   in gigabytes.
4. Components are combined with the interior through the binomial weights
   ``C(interior cells, mines left - frontier mines)``, in Python integers; a backward
   pass through each component's program, weighted by the rest of the board, gives
   every box's share of mines.

Every probability is therefore a ratio of two exact integers, divided once
(``int / int`` rounds correctly): the result is the float64 nearest to the exact
rational, the same on every machine and with every library version (1/5 is always
``0.2``). A cell is exactly 0 or 1 only when no layout says otherwise.

The module is longer than most (about 650 lines) because it is one algorithm: its
steps share private structures (components, plans, solutions) that mean nothing apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from nnsweeper.errors import EngineLimitError, InconsistentBoardError, InvalidBoardError, check_int
from nnsweeper.grid import OFFSETS, dilate, neighbour_sum, single_point_rules

# The board checks live with the Observation; check_flags, check_grid_values and
# validate_board stay importable from here.
from nnsweeper.observation import (  # noqa: F401
    as_observation,
    check_flags,
    check_grid_values,
    validate_board,
)

__all__ = ["mine_probabilities", "analyze", "BoardAnalysis", "validate_board", "MAX_STATES"]

# C(s, j) for box sizes s <= 8 (a box lies inside one number's 3x3 neighbourhood).
_COMB_INT = np.array([[math.comb(s, j) for j in range(9)] for s in range(9)], dtype=object)
_COMB = _COMB_INT.astype(np.float64)
_COMB_ROWS = _COMB_INT.tolist()
# Components are counted in plain Python while every box has at most this many
# states, in whole-array steps beyond.
_SMALL_STATES = 128
# Array counts stay float64 below this (with the factor 8 of a box's mines, below 2**53,
# where float64 still holds every integer).
_FLOAT_EXACT = float(2**50)

#: Default bound on the partial solutions the dynamic program may hold at one box of a
#: component; over all its boxes they are bounded by ``_STORED_PER_STATE`` times this. A
#: component beyond either is refused. Positions from play, even on 200 x 200 boards,
#: stay far below it.
MAX_STATES = 1 << 20
_STORED_PER_STATE = 8


@dataclass(frozen=True)
class BoardAnalysis:
    """What the engine found about one board.

    Attributes
    ----------
    probabilities : ndarray of float64, shape (rows, cols)
        P(mine) per cell: 0 at revealed cells, 1 at flags.
    frontier : ndarray of bool, shape (rows, cols)
        Covered, unflagged cells next to a revealed number.
    interior_probability : float or None
        P(mine) shared by every interior cell (None when there is none).
    mines_left : int
        Mines not accounted for by flags.
    n_components : int
        Independent frontier components.
    unknown : ndarray of bool, shape (rows, cols)
        Covered, unflagged cells.
    layouts : int
        The number of mine layouts that fit the board (flags fixed), exactly.
    log_layouts : float
        Its natural log.
    """

    probabilities: np.ndarray
    frontier: np.ndarray
    interior_probability: float | None
    mines_left: int
    n_components: int
    unknown: np.ndarray
    # (scaled count, interior cells, fewest interior mines, denominator): see ``layouts``.
    _count: tuple[int, int, int, int] = field(repr=False, compare=False)

    @cached_property
    def layouts(self) -> int:
        """The number of mine layouts that fit the board (flags fixed), exactly."""
        scaled, n_interior, k_lo, denominator = self._count
        return scaled * math.comb(n_interior, k_lo) // denominator

    @property
    def log_layouts(self) -> float:
        """Natural log of :attr:`layouts`."""
        return math.log(self.layouts)

    @property
    def safe(self) -> np.ndarray:
        """Covered, unflagged cells that are certainly safe (bool)."""
        return self.unknown & (self.probabilities == 0.0)

    @property
    def mines(self) -> np.ndarray:
        """Covered, unflagged cells that are certainly mines (bool)."""
        return self.unknown & (self.probabilities == 1.0)


def mine_probabilities(grid, total_mines=None, flags=None, *, max_states: int = MAX_STATES) -> np.ndarray:
    """Exact P(mine) for every cell of a visible board.

    Parameters
    ----------
    grid : Observation or array_like of int, shape (rows, cols)
        The board: an :class:`~nnsweeper.observation.Observation` (then give neither
        ``total_mines`` nor ``flags``), or its grid, -1 covered, 0..8 revealed.
    total_mines : int
        With a grid: mines on the whole board, flagged ones included.
    flags : array_like of bool, shape (rows, cols), optional
        With a grid: cells known to be mines (trusted, not checked against the
        numbers beyond consistency).
    max_states : int, default=MAX_STATES
        Most partial solutions the dynamic program may hold at one box (see
        :data:`MAX_STATES`); it bounds the engine's time and memory.

    Returns
    -------
    ndarray of float64, shape (rows, cols)
        P(mine) under a uniform prior over all layouts with exactly ``total_mines``
        mines that fit the board, correctly rounded from the exact rational: 0.0 at
        revealed cells, 1.0 at flagged cells.

    Raises
    ------
    InvalidBoardError
        A malformed board, when it is not an Observation (see
        :class:`~nnsweeper.observation.Observation`), or a bad ``max_states``.
    InconsistentBoardError
        When no layout fits (a ``ValueError``).
    EngineLimitError
        When a frontier component needs more than ``max_states`` partial solutions
        (a ``ValueError``).
    """
    return analyze(grid, total_mines, flags, max_states=max_states).probabilities


def analyze(grid, total_mines=None, flags=None, *, max_states: int = MAX_STATES) -> BoardAnalysis:
    """Like :func:`mine_probabilities`, with the frontier, interior and layout count beside.

    An :class:`~nnsweeper.observation.Observation` is analysed as it is: it was
    checked when it was made (its flags fit the mines, the mines fit its covered
    cells). A raw ``grid, total_mines, flags`` is checked first, into one.
    """
    obs = as_observation(grid, total_mines, flags)
    max_states = check_int("max_states", max_states, 1, InvalidBoardError)
    board = _reduce(obs)
    g, total_mines, flags = obs.grid, obs.total_mines, obs.flags
    revealed, unknown = g != -1, (g == -1) & ~flags
    mine, free, mines_left, front = board.mine, board.free, board.mines_left, board.front
    n_interior = int(free.sum()) - int(front.sum())
    comps = _components(board.is_con, board.need, front) if front.any() else []
    prob = np.zeros(g.shape, dtype=np.float64)
    prob[mine] = 1.0
    solved = [_solve_component(c, mines_left, max_states) for c in comps]
    interior_p, count = _combine(solved, n_interior, mines_left, prob)
    if n_interior:
        prob[free & ~front] = interior_p
    return BoardAnalysis(
        probabilities=prob,
        frontier=unknown & dilate(revealed),
        interior_probability=interior_p if n_interior else None,
        mines_left=total_mines - int(flags.sum()),
        n_components=len(comps),
        unknown=unknown,
        _count=count,
    )


@dataclass
class _Reduced:
    """A board after the single-point rules: what is left to count."""

    mine: np.ndarray  # flags and the mines the rules force
    free: np.ndarray  # covered cells the rules leave open
    need: np.ndarray  # mines each revealed number still needs among the free cells
    is_con: np.ndarray  # revealed numbers with free neighbours
    front: np.ndarray  # free cells next to such a number
    mines_left: int  # mines among the free cells


def _reduce(obs) -> _Reduced:
    """Settle what the single-point rules settle (the same in every layout); check the rest fits."""
    g, total_mines, flags = obs.grid, obs.total_mines, obs.flags
    covered = g == -1
    revealed = ~covered
    unknown = covered & ~flags

    # Cells the single-point rules settle are the same in every layout: take them out
    # of the enumeration as known mines (like flags) or known safe cells.
    mine, safe, free = flags.copy(), np.zeros_like(flags), unknown.copy()
    first = True
    while True:
        need, free_nb, new_safe, new_mine = single_point_rules(g, mine, free)
        bad = revealed & ((need < 0) | (need > free_nb))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            if first:
                raise InconsistentBoardError(
                    f"the {g[i, j]} at ({i}, {j}) cannot be satisfied: it needs {need[i, j]} more "
                    f"mines among {free_nb[i, j]} covered unflagged neighbours"
                )
            raise InconsistentBoardError(f"the numbers around ({i}, {j}) contradict each other")
        first = False
        if not (new_safe.any() or new_mine.any()):
            break
        both = new_safe & new_mine
        if both.any():
            i, j = np.argwhere(both)[0]
            raise InconsistentBoardError(f"the numbers around ({i}, {j}) contradict each other")
        safe |= new_safe
        mine |= new_mine
        free &= ~(new_safe | new_mine)
    mines_left = total_mines - int(mine.sum())
    _check_room(mines_left, int(free.sum()), total_mines)

    is_con = revealed & (free_nb > 0)
    return _Reduced(mine, free, need, is_con, free & (neighbour_sum(is_con) > 0), mines_left)


def _check_room(mines_left: int, cells: int, total_mines: int) -> None:
    if mines_left < 0:
        raise InconsistentBoardError(
            f"the board holds more than its {total_mines} mines (flags and forced mines)"
        )
    if mines_left > cells:
        raise InconsistentBoardError(
            f"{mines_left} mines left (of {total_mines}) do not fit in {cells} covered cells "
            f"that may still hold one"
        )


# --------------------------------------------------------------------------- boxes
@dataclass
class _Component:
    cells: list[np.ndarray]  # per box: flat indices of its cells
    sizes: list[int]  # per box: its number of cells
    box_cons: list[list[int]]  # per box: the numbers (local ids) it touches
    need: list[int]  # per number: mines it still needs
    where: list[tuple[int, int]]  # position of each number, for messages


def _components(is_con: np.ndarray, need: np.ndarray, frontier: np.ndarray) -> list[_Component]:
    """Group frontier cells into boxes and boxes into independent components."""
    r, c = is_con.shape
    con_pos = np.flatnonzero(is_con.ravel())
    cid = np.full((r + 2, c + 2), -1, dtype=np.int64)
    inner = cid[1:-1, 1:-1]
    inner[is_con] = np.arange(con_pos.size)
    fi, fj = np.nonzero(frontier)
    sig = np.stack([cid[fi + 1 + di, fj + 1 + dj] for di, dj in OFFSETS], axis=1)
    sig.sort(axis=1)
    flat_f = fi * c + fj

    boxes: dict[tuple, list[int]] = {}
    for k, row in enumerate(map(tuple, sig.tolist())):
        boxes.setdefault(row, []).append(k)
    box_sigs = list(boxes)
    box_cells = [flat_f[boxes[s]] for s in box_sigs]
    box_cons = [[x for x in s if x >= 0] for s in box_sigs]

    # Union-find over numbers, joined through the boxes they share.
    parent = list(range(con_pos.size))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for cons in box_cons:
        a = find(cons[0])
        for x in cons[1:]:
            b = find(x)
            if a != b:
                parent[b] = a
    groups: dict[int, list[int]] = {}
    for b, cons in enumerate(box_cons):
        groups.setdefault(find(cons[0]), []).append(b)

    need_flat = need.ravel()[con_pos].tolist()
    out = []
    for bs in groups.values():
        cons = sorted({x for b in bs for x in box_cons[b]})
        local = {x: k for k, x in enumerate(cons)}
        out.append(
            _Component(
                cells=[box_cells[b] for b in bs],
                sizes=[len(boxes[box_sigs[b]]) for b in bs],
                box_cons=[[local[x] for x in box_cons[b]] for b in bs],
                need=[need_flat[x] for x in cons],
                where=[divmod(int(con_pos[x]), c) for x in cons],
            )
        )
    return out


def _box_order(comp: _Component) -> list[int]:
    """Cuthill-McKee order of the boxes (adjacent when they share a number)."""
    n = len(comp.sizes)
    boxes_of: list[list[int]] = [[] for _ in comp.need]
    for b, cons in enumerate(comp.box_cons):
        for x in cons:
            boxes_of[x].append(b)
    nbrs = [sorted({v for x in cons for v in boxes_of[x] if v != b}) for b, cons in enumerate(comp.box_cons)]
    deg = [len(v) for v in nbrs]

    def bfs(start):
        order, seen = [start], [False] * n
        seen[start] = True
        for u in order:  # grows while it is walked
            for v in sorted((v for v in nbrs[u] if not seen[v]), key=deg.__getitem__):
                seen[v] = True
                order.append(v)
        return order

    # Start from a pseudo-peripheral box: the last one reached from a low-degree box.
    return bfs(bfs(min(range(n), key=deg.__getitem__))[-1])


@dataclass
class _Step:
    """One box of a component's dynamic program, in visiting order."""

    box: int
    size: int
    opened: tuple[int, ...]  # needs of the numbers first seen at this box (appended to the open ones)
    touched: list[tuple[int, int]]  # (position among the open numbers, cells left to it after this box)
    keep: list[int]  # positions of the open numbers still open after this box


def _plan(comp: _Component) -> list[_Step]:
    """The boxes in a narrow order and, per box, which open numbers it opens, touches and closes."""
    order = _box_order(comp)
    last = {x: k for k, b in enumerate(order) for x in comp.box_cons[b]}
    room = [0] * len(comp.need)  # cells of each number's boxes not visited yet
    for b, cons in enumerate(comp.box_cons):
        for x in cons:
            room[x] += comp.sizes[b]
    open_: list[int] = []
    steps = []
    for k, b in enumerate(order):
        s = comp.sizes[b]
        new = [x for x in comp.box_cons[b] if x not in open_]
        open_ += new
        for x in comp.box_cons[b]:
            room[x] -= s
        touched = [(open_.index(x), room[x]) for x in comp.box_cons[b]]
        keep = [p for p, x in enumerate(open_) if last[x] != k]
        steps.append(_Step(b, s, tuple(comp.need[x] for x in new), touched, keep))
        open_ = [open_[p] for p in keep]
    return steps


# ------------------------------------------------------------------ per component
@dataclass
class _Solution:
    """One component counted exactly, per number ``m`` of mines it holds.

    ``layouts[m - m_lo]`` is the number of its layouts with ``m`` mines (an object
    array of Python ints). ``tallies(g)``, for a weight ``g[m - m_lo]`` (a Python int)
    per mine count, gives per box the sum over all layouts of the weight of the
    layout's mine count times the box's mine cells in that layout: the numerator of
    the box's probability once ``g`` carries the rest of the board.
    """

    comp: _Component
    m_lo: int
    layouts: np.ndarray
    tallies: Callable[[np.ndarray], list]
    #: ``sample(m, below)``: the mines of each box in one layout with ``m`` mines, drawn
    #: uniformly among them (``below(n)`` draws an integer in ``[0, n)``); counted in
    #: plain integers only (:func:`_count_small`), else None.
    sample: Callable | None = None
    #: ``each(m)``: every way to give the boxes ``m`` mines in all (one list of mines per
    #: box each); counted in plain integers only, else None.
    each: Callable | None = None


def _no_layout(comp: _Component, x: int, mines_left: int):
    return InconsistentBoardError(
        f"no mine layout satisfies the numbers around {comp.where[x]} with at most "
        f"{mines_left} mines left"
    )


def _count_small(comp: _Component, plan: list[_Step], mines_left: int, most: int) -> _Solution | None:
    """Count a component in plain Python integers, or None once a box has over ``most`` states.

    The dynamic program over the boxes in ``plan`` order: a state is the remaining need
    of every open number (seen, with boxes to come) and the mines placed so far; states
    that agree are merged and their layout counts added. The forward pass keeps every
    transition (state, mines in the box, next state); the backward pass (``tallies``)
    carries, per state, the weighted number of its completions, which gives each box's
    tally. Small components (most of them) need a few dozen states, where this beats
    array code by far.
    """
    keys: list[tuple[tuple[int, ...], int]] = [((), 0)]
    counts = [1]
    history = []  # per box: (counts before, transitions (src, j, dst))
    for step in plan:
        comb = _COMB_ROWS[step.size]
        index: dict = {}
        new_keys, new_counts, moves = [], [], []
        for src, ((needs, m), a) in enumerate(zip(keys, counts, strict=True)):
            ext = needs + step.opened
            lo, hi = 0, min(step.size, mines_left - m)
            for pos, room in step.touched:
                v = ext[pos]
                hi = min(hi, v)
                lo = max(lo, v - room)
            for j in range(lo, hi + 1):
                if j:
                    lst = list(ext)
                    for pos, _ in step.touched:
                        lst[pos] -= j
                else:
                    lst = ext
                key = (tuple([lst[p] for p in step.keep]), m + j)
                d = index.get(key)
                if d is None:
                    d = index[key] = len(new_keys)
                    new_keys.append(key)
                    new_counts.append(0)
                new_counts[d] += a * comb[j]
                moves.append((src, j, d))
        if not new_keys:
            raise _no_layout(comp, comp.box_cons[step.box][0], mines_left)
        if len(new_keys) > most:
            return None
        history.append((counts, moves))
        keys, counts = new_keys, new_counts

    final = [m for _, m in keys]  # the final states differ in their mines only
    m_lo = min(final)
    layouts = np.zeros(max(final) - m_lo + 1, dtype=object)
    layouts[[m - m_lo for m in final]] = counts

    def tallies(g):
        beta = [g[m - m_lo] for m in final]
        out = [0] * len(plan)
        for step, (before, moves) in zip(reversed(plan), reversed(history), strict=True):
            comb = _COMB_ROWS[step.size]
            back = [0] * len(before)
            tally = 0
            for src, j, d in moves:
                down = comb[j] * beta[d]  # this box's layouts times the weighted future
                if j:
                    tally += before[src] * j * down
                back[src] += down
            out[step.box] = tally
            beta = back
        return out

    into: list[dict] = []  # per box, built on first use: transitions by destination state

    def incoming():
        if not into:
            for _, moves in history:
                by_dst: dict[int, list] = {}
                for src, j, d in moves:
                    by_dst.setdefault(d, []).append((src, j))
                into.append(by_dst)
        return into

    def each(m):
        # Backwards from the final state with m mines: every path is one assignment.
        paths = [(final.index(m), [])] if m in final else []
        for by_dst in reversed(incoming()):
            paths = [(src, [j, *mines]) for d, mines in paths for src, j in by_dst[d]]
        out = []
        for _, mines in paths:  # in plan order; by box
            box_mines = [0] * len(plan)
            for step, j in zip(plan, mines, strict=True):
                box_mines[step.box] = j
            out.append(box_mines)
        return out

    def sample(m, below):
        incoming()
        d = final.index(m)
        box_mines = [0] * len(plan)
        for step, (before, _), by_dst in zip(reversed(plan), reversed(history), reversed(into), strict=True):
            comb = _COMB_ROWS[step.size]
            options = by_dst[d]
            # A transition's share of the layouts that reach d: its source's layouts times
            # the ways to place its mines in this box.
            d, j = options[_pick([before[src] * comb[j] for src, j in options], below)]
            box_mines[step.box] = j
        return box_mines

    return _Solution(comp, m_lo, layouts, tallies, sample, each)


def _pick(weights: list[int], below) -> int:
    """An index drawn with probability proportional to its (integer) weight, exactly."""
    r = below(sum(weights))
    for k, w in enumerate(weights):
        if r < w:
            return k
        r -= w
    raise AssertionError("weights exhausted")  # unreachable: r < sum(weights)


def _as_int(a: np.ndarray) -> np.ndarray:
    """Exact integer counts (float64 or object) as an object array of Python ints."""
    return a if a.dtype == object else a.astype(np.int64).astype(object)


def _count_arrays(comp: _Component, plan: list[_Step], mines_left: int, max_states: int) -> _Solution:
    """The same dynamic program as :func:`_count_small` in whole-array steps, for wide components.

    The forward counts are float64 while each stays below :data:`_FLOAT_EXACT`: every
    count is a sum of non-negative integer terms, so a rounded sum or product would
    show up as a count at or above it; from the box where that happens on, the counts
    are Python integers (the box is counted again). Exact either way, in any order of
    summation. The backward pass carries the weights ``g`` (Python integers).

    A partial solution at a box is one (state, mines in the box) line. Their number
    per box is bounded by ``max_states`` and over all boxes by ``_STORED_PER_STATE``
    times that; beyond either the component is refused.
    """
    comb = _COMB  # _COMB_INT once the counts outgrow float64

    def refuse(what: str, limit: int):
        raise EngineLimitError(
            f"counting the frontier component of {sum(comp.sizes)} cells around {comp.where[0]} "
            f"exactly needs more than {limit:,} {what} (max_states={max_states:,}); the engine "
            f"refuses it rather than run for minutes in gigabytes of memory"
        )

    need = np.zeros((1, 0), dtype=np.int8)
    mines = np.zeros(1, dtype=np.int64)
    alpha = np.ones(1)
    history = []  # per box: (alpha before, src, j, inv)
    stored = 0
    for step in plan:
        s = step.size
        n_states = need.shape[0]
        if n_states * (s + 1) > max_states:
            refuse("partial solutions at one box", max_states)
        stored += n_states * (s + 1)
        if stored > _STORED_PER_STATE * max_states:
            refuse("partial solutions over all boxes", _STORED_PER_STATE * max_states)
        if step.opened:
            opened = np.broadcast_to(np.array(step.opened, dtype=np.int8), (n_states, len(step.opened)))
            need = np.concatenate([need, opened], axis=1)
        cols = np.array([p for p, _ in step.touched])
        room = np.array([r for _, r in step.touched], dtype=np.int8)
        j = np.tile(np.arange(s + 1, dtype=np.int8), n_states)
        src = np.repeat(np.arange(n_states, dtype=np.int32), s + 1)
        sub = need[src[:, None], cols[None, :]] - j[:, None]
        ok = np.all((sub >= 0) & (sub <= room[None, :]), axis=1) & (mines[src] + j <= mines_left)
        src, j, sub = src[ok], j[ok], sub[ok]
        if src.size == 0:
            raise _no_layout(comp, comp.box_cons[step.box][0], mines_left)
        need = need[src]
        need[:, cols] = sub
        need = need[:, step.keep]
        mines = mines[src] + j
        sort, starts, inv = _group(need, mines)
        history.append((alpha, src, j, inv))
        need, mines = need[sort[starts]], mines[sort[starts]]
        new_alpha = np.add.reduceat((alpha[src] * comb[s, j])[sort], starts)
        if comb is _COMB and new_alpha.max() >= _FLOAT_EXACT:
            # Some sum may have been rounded: from here on, count in Python integers.
            comb = _COMB_INT
            new_alpha = np.add.reduceat((_as_int(alpha)[src] * comb[s, j])[sort], starts)
        alpha = new_alpha

    m_lo = int(mines.min())
    layouts = np.zeros(int(mines.max()) - m_lo + 1, dtype=object)
    layouts[mines - m_lo] = _as_int(alpha)  # the final states differ in their mines only

    def tallies(g):
        beta = g[mines - m_lo]
        out = [0] * len(plan)
        for step, (alpha_k, src, j, inv) in zip(reversed(plan), reversed(history), strict=True):
            down = _COMB_INT[step.size, j] * beta[inv]  # this box's layouts times the weighted future
            # alpha * j is below 8 * _FLOAT_EXACT < 2**53: exact before it becomes an int.
            out[step.box] = int(_as_int(alpha_k[src] * j) @ down)
            starts = np.flatnonzero(np.concatenate(([True], src[1:] != src[:-1])))  # src is sorted
            beta = np.zeros(alpha_k.size, dtype=object)
            beta[src[starts]] = np.add.reduceat(down, starts)
        return out

    return _Solution(comp, m_lo, layouts, tallies)


def _solve_component(comp: _Component, mines_left: int, max_states: int) -> _Solution:
    plan = _plan(comp)
    solved = _count_small(comp, plan, mines_left, min(_SMALL_STATES, max_states))
    return solved if solved is not None else _count_arrays(comp, plan, mines_left, max_states)


def _group(need: np.ndarray, mines: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group equal rows of (open needs, mines).

    Returns ``sort`` (an order of the rows that puts each group together), ``starts``
    (where each group begins in that order) and ``inv`` (each row's group).
    """
    width = need.shape[1]
    if (int(mines.max()) + 1) * 9**width < 2**62:  # needs are 0..8: pack a row into one integer
        key = mines.copy()
        for t in range(width):
            key = key * 9 + need[:, t]
        sort = np.argsort(key)
        ks = key[sort]
        change = ks[1:] != ks[:-1]
    else:
        rows = np.concatenate([need, mines[:, None]], axis=1)
        sort = np.lexsort(rows.T[::-1])
        ks = rows[sort]
        change = np.any(ks[1:] != ks[:-1], axis=1)
    flag = np.concatenate(([True], change))
    inv = np.empty(sort.size, dtype=np.int32)
    inv[sort] = np.cumsum(flag) - 1
    return sort, np.flatnonzero(flag), inv


# ------------------------------------------------------------------- combination
def _interior_weights(n_interior: int, mines_left: int, lo: int, hi: int):
    """Weights of frontier totals ``t = lo..hi``: ``C(n_interior, mines_left - t)`` up to one factor.

    With ``k = mines_left - t`` interior mines in ``[k_lo, k_hi]`` (the feasible range),
    ``C(n, k) / C(n, k_lo) = prod_{i=k_lo+1..k} (n - i + 1) / i``; multiplying through by
    ``prod_{i=k_lo+1..k_hi} i`` leaves small integers (a few bits per step of ``k``)
    instead of the binomials themselves (thousands of bits on a large board).

    Returns ``(weights, scale)``: an object array over ``t - lo`` (0 where infeasible)
    and ``(k_lo, denominator)`` with ``C(n, k) = weight * C(n, k_lo) / denominator``.
    """
    k_lo, k_hi = max(0, mines_left - hi), min(n_interior, mines_left - lo)
    w = np.zeros(hi - lo + 1, dtype=object)
    if k_lo > k_hi:
        return w, (k_lo, 1)
    up = [1]  # prod_{i=k_lo+1..k} (n - i + 1)
    for i in range(k_lo + 1, k_hi + 1):
        up.append(up[-1] * (n_interior - i + 1))
    down = [1]  # prod_{i=k+1..k_hi} i, built from k = k_hi downwards
    for i in range(k_hi, k_lo, -1):
        down.append(down[-1] * i)
    down.reverse()
    for k in range(k_lo, k_hi + 1):
        w[mines_left - k - lo] = up[k - k_lo] * down[k - k_lo]
    return w, (k_lo, down[0])


def _combine(solved: list[_Solution], n_interior: int, mines_left: int, prob: np.ndarray):
    """Fill ``prob`` for every frontier cell, in exact integer arithmetic.

    Every probability is a ratio of two integers, rounded once (``int / int``).
    Returns the interior probability and the layout count's parts (see BoardAnalysis).
    """
    lo = sum(s.m_lo for s in solved)
    hi = lo + sum(s.layouts.size - 1 for s in solved)
    weights, (k_lo, denominator) = _interior_weights(n_interior, mines_left, lo, hi)
    if not weights.any():
        raise InconsistentBoardError(
            f"the frontier needs between {lo} and {hi} mines, which does not fit {mines_left} "
            f"mines left with {n_interior} interior cells"
        )
    # Leave-one-out products of the component polynomials via prefix and suffix products.
    one = np.ones(1, dtype=object)
    prefix = [one]
    for s in solved:
        prefix.append(np.convolve(prefix[-1], s.layouts))
    suffix = [one]
    for s in reversed(solved):
        suffix.append(np.convolve(suffix[-1], s.layouts))
    suffix.reverse()
    z = prefix[-1] * weights  # layouts (scaled) per frontier total
    total = int(z.sum())
    if total == 0:
        raise InconsistentBoardError(
            f"no layout of the frontier leaves a number of interior mines between 0 and "
            f"{n_interior} out of the {mines_left} mines left"
        )
    flat = prob.ravel()
    for c, s in enumerate(solved):
        rest = np.convolve(prefix[c], suffix[c + 1])
        g = np.correlate(weights, rest, mode="valid")  # g[m] = sum_u rest[u] * weights[m + u]
        for cells, mined in zip(s.comp.cells, s.tallies(g), strict=True):
            flat[cells] = mined / (cells.size * total)
    count = (total, n_interior, k_lo, denominator)
    if n_interior == 0:
        return 0.0, count
    interior_mines = int(z @ (mines_left - lo - np.arange(z.size, dtype=object)))
    return interior_mines / (n_interior * total), count
