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
``0.2``). A cell is exactly 0 or 1 only when no layout says otherwise: a probability
that would round to 0 or 1 without being it is the nearest float inside (0, 1).

The module is longer than most (about 1,100 lines) because it is one algorithm: its
steps share private structures (components, plans, solutions) that mean nothing apart.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from nnsweeper.errors import EngineLimitError, InconsistentBoardError, InvalidBoardError, check_int

# The board checks live with the Observation; check_flags, check_grid_values and
# validate_board stay importable from here.
from nnsweeper.observation import (  # noqa: F401
    as_observation,
    check_flags,
    check_grid_values,
    validate_board,
)

__all__ = ["mine_probabilities", "analyze", "BoardAnalysis", "validate_board", "MAX_STATES", "CACHE_SIZE",
           "CacheInfo", "cache_info", "clear_cache", "set_cache_size"]

# C(s, j) for box sizes s <= 8 (a box lies inside one number's 3x3 neighbourhood).
_COMB_INT = np.array([[math.comb(s, j) for j in range(9)] for s in range(9)], dtype=object)
_COMB = _COMB_INT.astype(np.float64)
_COMB_ROWS = _COMB_INT.tolist()
# Components are counted in plain Python while every box has at most this many
# states, in whole-array steps beyond.
_SMALL_STATES = 128
# Components are counted in compiled loops while every box has at most this many states
# (and the counts fit int64), before any of the above.
_COMPILED_STATES = 4096
# Array counts stay float64 below this (with the factor 8 of a box's mines, below 2**53,
# where float64 still holds every integer).
_FLOAT_EXACT = float(2**50)

#: Default bound on the partial solutions the dynamic program may hold at one box of a
#: component; over all the boxes of a board's wide components (those past the compiled
#: program) they are bounded by ``_STORED_PER_STATE`` times this, and the exact
#: combination of the components by ``_COMBINE_PER_STATE`` times this in big-integer
#: word operations. A board beyond any of them is refused. Positions from play, even on
#: 200 x 200 boards, stay far below them. With the default, a random search over dense
#: positions (benchmarks/bench_dense.py) found none on boards up to 120 a side that took
#: more than a second to answer or refuse; on boards of 100,000 cells and more, a refusal
#: can take a few seconds (the engine orders a frontier of tens of thousands of cells
#: before it knows that counting it is out of bounds: about 60 microseconds a cell).
MAX_STATES = 1 << 20
_STORED_PER_STATE = 2
_COMBINE_PER_STATE = 16


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
    unknown = (g == -1) & ~flags
    mine, free, mines_left, front = board.mine, board.free, board.mines_left, board.front
    n_interior = board.n_interior
    frame = _Frontier(board) if board.n_front else None
    prob = np.zeros(g.shape, dtype=np.float64)
    prob[mine] = 1.0
    budget = [_STORED_PER_STATE * max_states]  # partial solutions the wide components may still store
    solved = [frame.solve(k, mines_left, max_states, budget) for k in range(frame.n)] if frame else []
    sizes = frame.box_size.tolist() if frame is not None else []
    ratios, interior_p, count = _combine(solved, sizes, n_interior, mines_left, max_states)
    if frame is not None:
        # Every box's probability onto its cells, in one step (the cells lie box after box).
        prob.ravel()[frame.cells] = np.repeat(ratios, frame.box_size)
    if n_interior:
        prob[free & ~front] = interior_p
    return BoardAnalysis(
        probabilities=prob,
        frontier=board.frontier,
        interior_probability=interior_p if n_interior else None,
        mines_left=board.unflagged_mines,
        n_components=frame.n if frame else 0,
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
    frontier: np.ndarray  # covered, unflagged cells next to a revealed cell (the analysis' frontier)
    n_front: int  # cells in front
    n_interior: int  # free cells not next to a number
    unflagged_mines: int  # mines not accounted for by flags


def _reduce(obs) -> _Reduced:
    """Settle what the single-point rules settle (the same in every layout); check the rest fits.

    The rules (those of :func:`~nnsweeper.grid.single_point_rules`) run in rounds until
    nothing changes, in compiled loops (:func:`nnsweeper._kernels.settle`).
    """
    from nnsweeper._kernels import CONTRADICTION, UNSATISFIABLE, fronts, settle

    g, total_mines, flags = obs.grid, obs.total_mines, obs.flags
    mine = flags.copy()
    free = (g == -1) & ~flags
    status, i, j, need, free_nb = settle(g, mine, free)
    if status == UNSATISFIABLE:
        raise InconsistentBoardError(
            f"the {g[i, j]} at ({i}, {j}) cannot be satisfied: it needs {need[i, j]} more "
            f"mines among {free_nb[i, j]} covered unflagged neighbours"
        )
    if status == CONTRADICTION:
        raise InconsistentBoardError(f"the numbers around ({i}, {j}) contradict each other")
    is_con, front, frontier, counts = fronts(g, flags, mine, free, free_nb)
    n_mine, n_free, n_front, n_flags = counts.tolist()
    mines_left = total_mines - n_mine
    _check_room(mines_left, n_free, total_mines)
    return _Reduced(mine, free, need, is_con, front, mines_left, frontier, n_front, n_free - n_front,
                    total_mines - n_flags)


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
    where: _Where  # position of each number, for messages (where[x] is (row, col))


def _components(is_con: np.ndarray, need: np.ndarray, frontier: np.ndarray) -> list[_Component]:
    """Group frontier cells into boxes and boxes into independent components.

    The grouping runs in compiled loops (:func:`nnsweeper._kernels.boxes`): boxes in the
    order of their first cell (row-major), components in the order of their first box,
    the numbers of a component by their position (row-major), numbered from 0.
    """
    from nnsweeper._kernels import boxes

    box_of, box_cons, n_cons, comp_of, numbers = boxes(is_con, frontier)
    con_pos = np.flatnonzero(is_con.ravel())
    flat_f = np.flatnonzero(frontier.ravel())
    sizes = np.bincount(box_of, minlength=len(n_cons))
    ends = np.cumsum(sizes).tolist()
    by_box = flat_f[np.argsort(box_of, kind="stable")]
    cells = [by_box[a - n:a] for a, n in zip(ends, sizes.tolist(), strict=True)]
    local = numbers[:, 1].tolist()
    box_local = [[local[x] for x in row[:k]]
                 for row, k in zip(box_cons.tolist(), n_cons.tolist(), strict=True)]
    comps: list[list[int]] = [[] for _ in range(int(comp_of.max()) + 1)]
    for b, k in enumerate(comp_of.tolist()):
        comps[k].append(b)
    # The numbers of each component, ascending (a stable sort by component).
    by_comp = np.argsort(numbers[:, 0], kind="stable")
    n_per = np.bincount(numbers[:, 0][numbers[:, 0] >= 0], minlength=len(comps)).tolist()
    start = len(by_comp) - sum(n_per)  # numbers of no component sort first (-1)
    need_by = need.ravel()[con_pos[by_comp]].tolist()
    pos_by = con_pos[by_comp]
    sizes = sizes.tolist()
    out = []
    for bs, k in zip(comps, n_per, strict=True):
        need_local = need_by[start:start + k]
        local_cons = [box_local[b] for b in bs]
        out.append(
            _Component(
                cells=[cells[b] for b in bs],
                sizes=[sizes[b] for b in bs],
                box_cons=local_cons,
                need=need_local,
                where=_Where(pos_by[start:start + k], is_con.shape[1]),
            )
        )
        start += k
    return out


class _Frontier:
    """The frontier of a reduced board in flat arrays, for :func:`analyze`.

    The same boxes and components as :func:`_components` (in the same order), built in
    compiled loops (:func:`nnsweeper._kernels.frontier_components`) with no Python
    object per box: a component is its *description*, the integers its counts depend
    on (its boxes' sizes, the numbers each box touches, what each number needs), which
    is also its key in the component cache. Python :class:`_Component` objects are made
    only for the rare component that the compiled program cannot count.
    """

    __slots__ = ("cells", "box_size", "comp_boxes", "desc", "comp_desc", "con_pos", "comp_cons", "n",
                 "_cols", "_n_cells")

    def __init__(self, board: _Reduced):
        from nnsweeper._kernels import frontier_components

        (self.cells, self.box_size, self.comp_boxes, self.desc, self.comp_desc, self.con_pos,
         self.comp_cons) = frontier_components(board.is_con, board.need, board.front)
        self.n = len(self.comp_boxes) - 1
        self._cols = board.front.shape[1]
        self._n_cells = np.add.reduceat(self.box_size, self.comp_boxes[:-1]).tolist()  # per component

    def solve(self, k: int, mines_left: int, max_states: int, budget: list):
        """Component ``k`` counted: a cached :class:`_Tallied` or :class:`_Counted`, or a
        :class:`_Solution` of the whole-array program (see :func:`_combine`)."""
        from nnsweeper._kernels import count_component

        desc = self.desc[self.comp_desc[k]:self.comp_desc[k + 1]]
        # The mines left bound a component's counts only when they are fewer than its cells.
        key = (desc.tobytes(), min(mines_left, self._n_cells[k]), max_states)
        counted = _CACHE.get(key)
        if counted is not None:
            return counted
        ok, m_lo, layouts, by_box = count_component(desc, mines_left, min(_COMPILED_STATES, max_states))
        if ok:
            counted = _Tallied(int(m_lo), tuple(layouts.tolist()), tuple(map(tuple, by_box.tolist())))
        elif m_lo >= 0 and layouts[0] <= min(_SMALL_STATES, max_states):
            # No layout, found where the plain-integer count would find it (no step before
            # held more states than it allows): its error, without counting again.
            comp = self.component(k)
            raise _no_layout(comp, comp.box_cons[m_lo][0], mines_left)
        else:  # past int64 or the compiled program's states, or no layout: plain integers decide
            comp = self.component(k)
            plan = _plan(comp)
            counted = _count_states(comp, plan, mines_left, min(_SMALL_STATES, max_states))
            if counted is None:
                return _count_arrays(comp, plan, mines_left, max_states, budget)
        _CACHE.put(key, counted)
        return counted

    def component(self, k: int) -> _Component:
        """Component ``k`` as :func:`_components` makes it."""
        b0, b1 = int(self.comp_boxes[k]), int(self.comp_boxes[k + 1])
        ends = np.cumsum(self.box_size).tolist()
        starts = [e - n for e, n in zip(ends, self.box_size.tolist(), strict=True)]
        desc = self.desc[self.comp_desc[k]:self.comp_desc[k + 1]].tolist()
        nb, nn = desc[0], desc[1]
        n_cons = desc[2 + nb:2 + 2 * nb]
        at = 2 + 2 * nb
        box_cons = []
        for n in n_cons:
            box_cons.append(desc[at:at + n])
            at += n
        return _Component(
            cells=[self.cells[starts[b]:ends[b]] for b in range(b0, b1)],
            sizes=desc[2:2 + nb],
            box_cons=box_cons,
            need=desc[at:at + nn],
            where=_Where(self.con_pos[self.comp_cons[k]:self.comp_cons[k + 1]], self._cols),
        )


class _Where:
    """The (row, col) of each number of a component, for messages: ``where[x]``."""

    __slots__ = ("flat", "cols")

    def __init__(self, flat: np.ndarray, cols: int):
        self.flat, self.cols = flat, cols

    def __getitem__(self, x: int) -> tuple[int, int]:
        return divmod(int(self.flat[x]), self.cols)

    def __len__(self) -> int:
        return len(self.flat)


def _box_order(comp: _Component) -> list[int]:
    """Cuthill-McKee order of the boxes (adjacent when they share a number)."""
    n = len(comp.sizes)
    if n <= 2:
        # What the search below gives: from box 0 to the last box reached, then back.
        return [1, 0] if n == 2 else [0]
    boxes_of: list[list[int]] = [[] for _ in comp.need]
    for b, cons in enumerate(comp.box_cons):
        for x in cons:
            boxes_of[x].append(b)
    nbrs = [{v for x in cons for v in boxes_of[x]} for cons in comp.box_cons]
    deg = [len(v) - 1 for v in nbrs]  # each box is in its own set
    # Neighbours by degree, then by number: the order in which the search takes them.
    ranked = [sorted(v, key=lambda v: (deg[v], v)) for v in nbrs]

    def bfs(start):
        order, seen = [start], [False] * n
        seen[start] = True
        for u in order:  # grows while it is walked
            for v in ranked[u]:
                if not seen[v]:
                    seen[v] = True
                    order.append(v)
        return order

    # Start from a pseudo-peripheral box: the last one reached from a low-degree box.
    return bfs(bfs(min(range(n), key=deg.__getitem__))[-1])


@dataclass(slots=True)
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
    at: dict[int, int] = {}  # each open number's position in open_
    steps = []
    need = comp.need
    for k, b in enumerate(order):
        s = comp.sizes[b]
        cons = comp.box_cons[b]
        new = [x for x in cons if x not in at]
        for x in new:
            at[x] = len(open_)
            open_.append(x)
        for x in cons:
            room[x] -= s
        touched = [(at[x], room[x]) for x in cons]
        keep = [p for p, x in enumerate(open_) if last[x] != k]
        steps.append(_Step(b, s, tuple([need[x] for x in new]), touched, keep))
        open_ = [open_[p] for p in keep]
        at = {x: p for p, x in enumerate(open_)}
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
    transition (state, mines in the box, next state); the backward pass
    (:meth:`_Counted.tallies`) carries, per state, the weighted number of its
    completions, which gives each box's tally. Small components (most of them) need a
    few dozen states, where this beats array code by far.
    """
    counted = _count_states(comp, plan, mines_left, most)
    return None if counted is None else counted.solution(comp)


def _count_states(comp: _Component, plan: list[_Step], mines_left: int, most: int) -> _Counted | None:
    """The forward pass of :func:`_count_small`: a :class:`_Counted`, or None past ``most`` states."""
    keys: list[tuple[tuple[int, ...], int]] = [((), 0)]
    counts = [1]
    history = []  # per box: (counts before, and the transitions src, j, dst as three tuples)
    for step in plan:
        size, opened, touched = step.size, step.opened, step.touched
        comb = _COMB_ROWS[size]
        # Per number still open after this box: where it is, and whether the box touches it.
        moved = {pos for pos, _ in touched}
        kept = [(p, p in moved) for p in step.keep]
        index: dict = {}
        new_keys, new_counts, srcs, js, dsts = [], [], [], [], []
        for src, ((needs, m), a) in enumerate(zip(keys, counts, strict=True)):
            ext = needs + opened
            lo, hi = 0, mines_left - m
            if size < hi:
                hi = size
            for pos, room in touched:
                v = ext[pos]
                if v < hi:
                    hi = v
                if v - room > lo:
                    lo = v - room
            for j in range(lo, hi + 1):
                key = (tuple([ext[p] - j if t else ext[p] for p, t in kept]), m + j)
                d = index.get(key)
                if d is None:
                    d = index[key] = len(new_keys)
                    new_keys.append(key)
                    new_counts.append(0)
                new_counts[d] += a * comb[j]
                srcs.append(src)
                js.append(j)
                dsts.append(d)
        if not new_keys:
            raise _no_layout(comp, comp.box_cons[step.box][0], mines_left)
        if len(new_keys) > most:
            return None
        history.append((tuple(counts), tuple(srcs), tuple(js), tuple(dsts)))
        keys, counts = new_keys, new_counts
    final = tuple(m for _, m in keys)  # the final states differ in their mines only
    m_lo = min(final)
    layouts = [0] * (max(final) - m_lo + 1)
    for m, a in zip(final, counts, strict=True):
        layouts[m - m_lo] = a
    return _Counted(m_lo, tuple(layouts), final, tuple(history), tuple((st.box, st.size) for st in plan))


class _Counted:
    """A component counted in plain integers: what :func:`_count_states` found, in tuples.

    Kept by the component cache, so it holds no lists or closures (tuples of integers
    cost the garbage collector nothing once it has seen them); :meth:`solution` puts a
    component's cells around it.
    """

    __slots__ = ("m_lo", "layouts", "final", "history", "steps", "_into")

    def __init__(self, m_lo, layouts, final, history, steps):
        self.m_lo = m_lo
        self.layouts = layouts  # per mine count from m_lo: the layouts (Python ints)
        self.final = final  # the mines of each final state
        self.history = history  # per step: (counts before, srcs, js, dsts)
        self.steps = steps  # per step: (box, size)
        self._into = None

    def solution(self, comp: _Component) -> _Solution:
        layouts = np.empty(len(self.layouts), dtype=object)
        layouts[:] = self.layouts
        return _Solution(comp, self.m_lo, layouts, self.tallies, self.sample, self.each)

    def tallies(self, g) -> list:
        m_lo = self.m_lo
        beta = [g[m - m_lo] for m in self.final]
        out = [0] * len(self.steps)
        for (box, size), (before, srcs, js, dsts) in zip(reversed(self.steps), reversed(self.history),
                                                        strict=True):
            comb = _COMB_ROWS[size]
            back = [0] * len(before)
            tally = 0
            for src, j, d in zip(srcs, js, dsts, strict=True):
                down = comb[j] * beta[d]  # this box's layouts times the weighted future
                if j:
                    tally += before[src] * j * down
                back[src] += down
            out[box] = tally
            beta = back
        return out

    def _incoming(self) -> list[dict]:
        """Per step, built on first use: the transitions (src, j) by destination state."""
        if self._into is None:
            into = []
            for _, srcs, js, dsts in self.history:
                by_dst: dict[int, list] = {}
                for src, j, d in zip(srcs, js, dsts, strict=True):
                    by_dst.setdefault(d, []).append((src, j))
                into.append(by_dst)
            self._into = into
        return self._into

    def each(self, m) -> list[list[int]]:
        # Backwards from the final state with m mines: every path is one assignment.
        paths = [(self.final.index(m), [])] if m in self.final else []
        for by_dst in reversed(self._incoming()):
            paths = [(src, [j, *mines]) for d, mines in paths for src, j in by_dst[d]]
        out = []
        for _, mines in paths:  # in step order; by box
            box_mines = [0] * len(self.steps)
            for (box, _), j in zip(self.steps, mines, strict=True):
                box_mines[box] = j
            out.append(box_mines)
        return out

    def sample(self, m, below) -> list[int]:
        into = self._incoming()
        d = self.final.index(m)
        box_mines = [0] * len(self.steps)
        for (box, size), (before, *_), by_dst in zip(reversed(self.steps), reversed(self.history),
                                                     reversed(into), strict=True):
            comb = _COMB_ROWS[size]
            options = by_dst[d]
            # A transition's share of the layouts that reach d: its source's layouts times
            # the ways to place its mines in this box.
            d, j = options[_pick([before[src] * comb[j] for src, j in options], below)]
            box_mines[box] = j
        return box_mines


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


def _count_arrays(comp: _Component, plan: list[_Step], mines_left: int, max_states: int,
                  budget: list) -> _Solution:
    """The same dynamic program as :func:`_count_small` in whole-array steps, for wide components.

    The forward counts are float64 while each stays below :data:`_FLOAT_EXACT`: every
    count is a sum of non-negative integer terms, so a rounded sum or product would
    show up as a count at or above it; from the box where that happens on, the counts
    are Python integers (the box is counted again). Exact either way, in any order of
    summation. The backward pass carries the weights ``g`` (Python integers).

    A partial solution at a box is one (state, mines in the box) line. Their number
    per box is bounded by ``max_states``, and over all boxes by what is left of
    ``budget`` (a one-item list, shared by the components of one board, that starts at
    ``_STORED_PER_STATE`` times ``max_states``); beyond either the component is refused.
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
    for step in plan:
        s = step.size
        n_states = need.shape[0]
        if n_states * (s + 1) > max_states:
            refuse("partial solutions at one box", max_states)
        budget[0] -= n_states * (s + 1)
        if budget[0] < 0:
            refuse("partial solutions over all boxes of the board's wide components",
                   _STORED_PER_STATE * max_states)
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


def _count_compiled(plan: list[_Step], mines_left: int, most: int) -> _Tallied | None:
    """The dynamic program in compiled loops (:func:`nnsweeper._kernels.count_layouts`), in int64.

    None when it cannot count the component exactly there (counts near 2**62, over
    ``most`` states at a box, or no layout at all: plain integers then count it, and
    report what is wrong).
    """
    from nnsweeper._kernels import count_layouts

    radix = min(mines_left, sum(st.size for st in plan)) + 1
    width = max(len(st.keep) for st in plan)
    if 9 ** width * radix >= 1 << 62:
        return None
    spec = [len(plan), width]
    for st in plan:
        spec += (st.size, len(st.opened), *st.opened, len(st.touched))
        for pos, room in st.touched:
            spec += (pos, room)
        spec.append(len(st.keep))
        spec += st.keep
    ok, m_lo, layouts, tallies = count_layouts(np.array(spec, dtype=np.int64), mines_left, radix, most)
    if not ok:
        return None
    by_box = [()] * len(plan)
    for st, row in zip(plan, tallies.tolist(), strict=True):
        by_box[st.box] = tuple(row)
    return _Tallied(int(m_lo), tuple(layouts.tolist()), tuple(by_box))


class _Tallied:
    """A component counted in compiled loops: its layouts and, per box, the tally of its
    mines by the component's mine count (so that :meth:`tallies` is a dot product).

    Tuples of Python integers only, as the cache keeps it; no layouts can be drawn
    from it (sampling counts in plain integers, :func:`_count_small`).
    """

    __slots__ = ("m_lo", "layouts", "by_box")

    def __init__(self, m_lo: int, layouts: tuple, by_box: tuple):
        self.m_lo, self.layouts, self.by_box = m_lo, layouts, by_box

    def solution(self, comp: _Component) -> _Solution:
        layouts = np.empty(len(self.layouts), dtype=object)
        layouts[:] = self.layouts
        return _Solution(comp, self.m_lo, layouts, self.tallies)

    def tallies(self, g) -> list:
        g = list(g)
        return [sum([t * x for t, x in zip(row, g, strict=True) if t]) for row in self.by_box]


class _SolutionCache:
    """The solutions of the components counted last in this process, by content (LRU).

    Consecutive positions of one game, and the boards a look-ahead tries, share most of
    their frontier components: a component with the same boxes (their sizes and the
    numbers each touches, in order) and the same needs has the same solution wherever
    its cells lie, found here instead of counted again (the key is its description, see
    :class:`_Frontier`). Components counted by the whole-array program are not kept
    (they are large). The answers are those of a fresh count, to the last bit.
    """

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self.hits = self.misses = 0
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            hit = self._data.get(key)
            if hit is None:
                self.misses += 1
            else:
                self.hits += 1
                self._data.move_to_end(key)
            return hit

    def put(self, key, solved) -> None:
        with self._lock:
            if self.maxsize:
                self._data[key] = solved
                while len(self._data) > self.maxsize:
                    self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0


#: Components kept by default (a few kilobytes each).
CACHE_SIZE = 2048
_CACHE = _SolutionCache(CACHE_SIZE)


class CacheInfo(NamedTuple):
    """Hits and misses of the component cache since it was last cleared, its size and bound."""

    hits: int
    misses: int
    currsize: int
    maxsize: int


def cache_info() -> CacheInfo:
    """How the engine's component cache has done (see :func:`set_cache_size`)."""
    return CacheInfo(_CACHE.hits, _CACHE.misses, len(_CACHE._data), _CACHE.maxsize)


def clear_cache() -> None:
    """Empty the component cache and reset its counts."""
    _CACHE.clear()


def set_cache_size(maxsize: int) -> int:
    """Keep at most ``maxsize`` component solutions (0 turns the cache off); returns the old bound.

    The engine counts each frontier component exactly; a component already counted
    (the same boxes, numbers and needs, as between consecutive moves of one game) is
    taken from this cache. Results are identical with and without it.
    """
    maxsize = check_int("maxsize", maxsize, 0, InvalidBoardError)
    old, _CACHE.maxsize = _CACHE.maxsize, maxsize
    with _CACHE._lock:
        while len(_CACHE._data) > maxsize:
            _CACHE._data.popitem(last=False)
    return old


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
    w, scale = _weight_list(n_interior, mines_left, lo, hi)
    out = np.empty(len(w), dtype=object)
    out[:] = w
    return out, scale


def _weight_list(n_interior: int, mines_left: int, lo: int, hi: int) -> tuple[list[int], tuple[int, int]]:
    """:func:`_interior_weights` as a list of Python ints (what :func:`_combine` sums over)."""
    k_lo, k_hi = max(0, mines_left - hi), min(n_interior, mines_left - lo)
    w = [0] * (hi - lo + 1)
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


def _convolve(a: list[int], b: list[int]) -> list[int]:
    """The product of two polynomials (coefficient lists of Python ints)."""
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _correlate(f: list[int], p: list[int]) -> list[int]:
    """``out[m] = sum_u p[u] * f[m + u]`` for ``m = 0..len(f) - len(p)`` (numpy's "valid" correlation)."""
    n = len(p)
    return [sum([x * y for x, y in zip(p, f[m:m + n], strict=True) if x]) for m in range(len(f) - n + 1)]


def _weights_without_each(polys: list[list[int]], weights: list[int]) -> tuple[list[int], list]:
    """The product of the polynomials ``polys`` and, for each, the weights the others leave it.

    ``g_c[m] = sum_u rest_c[u] * weights[m + u]`` with ``rest_c`` the product of every
    polynomial but ``c`` (coefficient lists of Python ints). Computed on a balanced
    product tree: each node's product from its children's, and each node's weights
    from its parent's, correlated with its sibling's product (correlating with ``A``
    then ``B`` is correlating with ``A * B``). The work is about the square of the
    product's length over the whole tree, where one leave-one-out product per
    polynomial costs that square for each of them (hundreds of components on a large
    dense board).
    """
    out: list[list[int]] = [weights] * len(polys)

    def build(lo: int, hi: int):
        if hi - lo == 1:
            return polys[lo], lo, None, None
        mid = (lo + hi) // 2
        left, right = build(lo, mid), build(mid, hi)
        return _convolve(left[0], right[0]), None, left, right

    def push(node, f: list[int]) -> None:
        _, leaf, left, right = node
        if left is None:
            out[leaf] = f
            return
        push(left, _correlate(f, right[0]))
        push(right, _correlate(f, left[0]))

    if not polys:
        return [1], []
    root = build(0, len(polys))
    push(root, weights)
    return root[0], out


def _combine(solved: list, box_sizes: list[int], n_interior: int, mines_left: int, max_states: int):
    """Every frontier box's probability, in exact integer arithmetic.

    ``solved``: per component, its count (anything with ``m_lo``, ``layouts`` (a sequence
    of Python ints per mine count from ``m_lo``) and ``tallies(g)``, as
    :class:`_Tallied`, :class:`_Counted` and :class:`_Solution` have); ``box_sizes``:
    the cells of each box, component after component. Every
    probability is a ratio of two integers, rounded once (``int / int``).
    Returns the probabilities of the boxes (component after component, box after
    box), the interior probability and the layout count's parts (see BoardAnalysis).
    The combination takes about ``L**2`` products of integers of ``B`` bits, for ``L``
    frontier mine totals and weights of ``B`` bits; past ``_COMBINE_PER_STATE`` times
    ``max_states`` 64-bit words of such work, the board is refused.
    """
    polys = [list(s.layouts) for s in solved]
    lo = sum(s.m_lo for s in solved)
    hi = lo + sum(len(p) - 1 for p in polys)
    weights, (k_lo, denominator) = _weight_list(n_interior, mines_left, lo, hi)
    if not any(weights):
        raise InconsistentBoardError(
            f"the frontier needs between {lo} and {hi} mines, which does not fit {mines_left} "
            f"mines left with {n_interior} interior cells"
        )
    if len(solved) > 1:
        _check_combination(polys, weights, max_states)
    product, rest_weights = _weights_without_each(polys, weights)
    z = [x * w for x, w in zip(product, weights, strict=True)]  # layouts (scaled) per frontier total
    total = sum(z)
    if total == 0:
        raise InconsistentBoardError(
            f"no layout of the frontier leaves a number of interior mines between 0 and "
            f"{n_interior} out of the {mines_left} mines left"
        )
    mined = []
    for s, g in zip(solved, rest_weights, strict=True):
        if isinstance(s, _Solution):  # the whole-array program's tallies index g with arrays
            g = np.array(g, dtype=object)
        mined += s.tallies(g)
    ratios = [_ratio(m, size * total) for m, size in zip(mined, box_sizes, strict=True)]
    count = (total, n_interior, k_lo, denominator)
    if n_interior == 0:
        return ratios, 0.0, count
    top = mines_left - lo  # interior mines when the frontier holds lo
    interior_mines = sum([x * (top - t) for t, x in enumerate(z)])
    return ratios, _ratio(interior_mines, n_interior * total), count


def _check_combination(polys: list[list[int]], weights: list[int], max_states: int) -> None:
    """Refuse a combination of components whose exact work is past the bound (see :func:`_combine`).

    The leave-one-out weights carry the interior's weights times the other components'
    products: their size in bits is at most the sum of all of them.
    """
    bits = max(w.bit_length() for w in weights) + sum(max(p).bit_length() for p in polys)
    words = len(weights)**2 * (bits // 64 + 1)
    if words > _COMBINE_PER_STATE * max_states:
        raise EngineLimitError(
            f"combining the {len(polys)} frontier components exactly (their mine totals span "
            f"{len(weights)} values, with weights of up to {bits:,} bits) needs about {words:,} "
            f"word products, more than {_COMBINE_PER_STATE * max_states:,} (max_states="
            f"{max_states:,}); the engine refuses it rather than run for minutes"
        )


def _ratio(num: int, den: int) -> float:
    """``num / den`` (``0 <= num <= den``) rounded to the nearest float64, but never to 0 or 1
    unless it is exactly 0 or 1.

    A probability within half a unit of the last place of 1 (or below the smallest
    float) would otherwise round to certainty, and a cell that some layout leaves safe
    would read as a proven mine: on a large, sparse board the interior's binomial
    weights can make a layout that many times less likely than the others.
    """
    q = num / den
    if q == 1.0 and num != den:
        return _BELOW_ONE
    if q == 0.0 and num:
        return _ABOVE_ZERO
    return q


_BELOW_ONE = math.nextafter(1.0, 0.0)
_ABOVE_ZERO = math.nextafter(0.0, 1.0)
