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

Steps 1 and 2 live in :mod:`nnsweeper.engine.frontier`, step 3 in
:mod:`nnsweeper.engine.counting` (both shared with :mod:`nnsweeper.engine.sampling`);
this module holds the public entry points, the component cache (the engine's only
mutable state, here and nowhere else) and step 4.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from nnsweeper.engine.counting import (
    STORED_PER_STATE,
    Solution,
    Tallied,
    count_arrays,
    count_states,
    no_layout,
    weight_list,
)
from nnsweeper.engine.frontier import Frontier, make_plan, reduce_board
from nnsweeper.errors import EngineLimitError, InconsistentBoardError, InvalidBoardError, check_int
from nnsweeper.observation import as_observation

__all__ = ["mine_probabilities", "analyze", "count_layouts", "BoardAnalysis", "MAX_STATES", "CACHE_SIZE",
           "CacheInfo", "cache_info", "clear_cache", "set_cache_size"]

# Components are counted in plain Python while every box has at most this many
# states, in whole-array steps beyond.
_SMALL_STATES = 128
# Components are counted in compiled loops while every box has at most this many states
# (and the counts fit int64), before any of the above.
_COMPILED_STATES = 4096

#: Default bound on the partial solutions the dynamic program may hold at one box of a
#: component; over all the boxes of a board's wide components (those past the compiled
#: program) they are bounded by ``STORED_PER_STATE`` times this, and the exact
#: combination of the components by ``_COMBINE_PER_STATE`` times this in big-integer
#: word operations. A board beyond any of them is refused. Positions from play, even on
#: 200 x 200 boards, stay far below them. With the default, a random search over dense
#: positions (benchmarks/bench_dense.py) found none on boards up to 120 a side that took
#: more than a second to answer or refuse; on boards of 100,000 cells and more, a refusal
#: can take a few seconds (the engine orders a frontier of tens of thousands of cells
#: before it knows that counting it is out of bounds: about 60 microseconds a cell).
MAX_STATES = 1 << 20
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
    # The scaled mine counts behind the probabilities (see ``mine_layouts``): the frontier's
    # cells (flat indices, box after box), the boxes' sizes, each box's scaled mines over its
    # cells, and the interior's.
    _mined: tuple = field(default=((), (), (), 0), repr=False, compare=False)
    # The scaled layouts per frontier mine total, and the interior's mines at the first
    # total (one fewer at each next one): see ``interior_mine_layouts``.
    _by_interior: tuple = field(default=((), 0), repr=False, compare=False)

    @cached_property
    def layouts(self) -> int:
        """The number of mine layouts that fit the board (flags fixed), exactly."""
        scaled, n_interior, k_lo, denominator = self._count
        return scaled * self._scale // denominator

    @cached_property
    def _scale(self) -> int:
        _, n_interior, k_lo, _ = self._count
        return math.comb(n_interior, k_lo)

    @cached_property
    def _box_of(self) -> np.ndarray:
        """Per cell (flat), the index of its frontier box, or -1."""
        cells, sizes, _, _ = self._mined
        out = np.full(self.unknown.size, -1, dtype=np.int64)
        out[np.asarray(cells, dtype=np.int64)] = np.repeat(np.arange(len(sizes)), sizes)
        return out

    def mine_layouts(self, cell) -> int:
        """The number of layouts (of :attr:`layouts`) in which ``cell`` is a mine, exactly.

        What :attr:`probabilities` rounds, times :attr:`layouts`: the same integer as
        counting the layouts with the cell flagged, without counting the board again.
        ``cell`` is ``(row, col)``.
        """
        i, j = cell
        rows, cols = self.unknown.shape
        if not (0 <= i < rows and 0 <= j < cols):
            raise InvalidBoardError(f"cell ({i}, {j}) is off the {rows}x{cols} board")
        p = self.probabilities[i, j]
        if p == 0.0:
            return 0
        if p == 1.0:
            return self.layouts
        _, sizes, mined, interior = self._mined
        denominator = self._count[3]
        box = int(self._box_of[i * cols + j])
        if box >= 0:
            return mined[box] * self._scale // (sizes[box] * denominator)
        return interior * self._scale // (self._count[1] * denominator)

    def interior_mine_layouts(self, m: int) -> int:
        """The number of layouts in which ``m`` given interior cells are all mines, exactly.

        Interior cells (covered, unflagged, next to no revealed number) are alike: with
        ``I`` of them and ``D[r]`` layouts holding ``r`` mines among them, ``m`` given ones
        are mines in ``sum_r D[r] C(I - m, r - m) / C(I, r)`` layouts, the count of the
        board with those cells flagged, without counting the board again. Which cells is
        the caller's to say (each must be interior, and distinct); 0 when ``m`` is more
        than the interior holds.
        """
        m = check_int("m", m, 0, InvalidBoardError)
        z, top = self._by_interior
        _, n_interior, _, denominator = self._count
        if m == 0:
            return self.layouts
        if m > n_interior or not z:
            return 0
        # D[r] C(I - m, r - m) / C(I, r) = D[r] r! / (r - m)! / (I! / (I - m)!), summed exactly.
        num = 0
        for t, x in enumerate(z):
            r = top - t
            if x and r >= m:
                num += x * math.perm(r, m)
        return num * self._scale // (denominator * math.perm(n_interior, m))

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
    obs, board, frame, solved, max_states = _counted_components(grid, total_mines, flags, max_states)
    g, total_mines, flags = obs.grid, obs.total_mines, obs.flags
    unknown = (g == -1) & ~flags
    mine, free, mines_left, front = board.mine, board.free, board.mines_left, board.front
    n_interior = board.n_interior
    prob = np.zeros(g.shape, dtype=np.float64)
    prob[mine] = 1.0
    sizes = frame.box_size.tolist() if frame is not None else []
    ratios, interior_p, count, mined, by_interior = _combine(solved, sizes, n_interior, mines_left,
                                                             max_states)
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
        _mined=(frame.cells if frame is not None else (), sizes, *mined),
        _by_interior=by_interior,
    )


def count_layouts(grid, total_mines=None, flags=None, *, max_states: int = MAX_STATES) -> int:
    """The number of mine layouts that fit a board (flags fixed), exactly: :attr:`BoardAnalysis.layouts`
    without the probabilities.

    The same components, counted the same way (and shared with :func:`analyze` through the
    component cache), combined into the count alone: what a caller that weighs layouts
    (the look-ahead's pattern counts, with a few more cells flagged) needs. Raises as
    :func:`analyze` does, :class:`~nnsweeper.errors.InconsistentBoardError` where no layout fits.
    """
    _, board, _, solved, max_states = _counted_components(grid, total_mines, flags, max_states)
    mines_left, n_interior = board.mines_left, board.n_interior
    polys = [list(s.layouts) for s in solved]
    lo = sum(s.m_lo for s in solved)
    hi = lo + sum(len(p) - 1 for p in polys)
    weights, (k_lo, denominator) = weight_list(n_interior, mines_left, lo, hi)
    if len(solved) > 1:
        _check_combination(polys, weights, max_states)
    while len(polys) > 1:  # a balanced product tree: pairs, then pairs of pairs
        polys = [_convolve(polys[i], polys[i + 1]) if i + 1 < len(polys) else polys[i]
                 for i in range(0, len(polys), 2)]
    product = polys[0] if polys else [1]
    total = sum([x * w for x, w in zip(product, weights, strict=True) if x])
    if total == 0:
        raise InconsistentBoardError(
            f"no layout of the frontier (between {lo} and {hi} mines) leaves a number of interior "
            f"mines between 0 and {n_interior} out of the {mines_left} mines left"
        )
    return total * math.comb(n_interior, k_lo) // denominator


def _counted_components(grid, total_mines, flags, max_states):
    """What :func:`analyze` and :func:`count_layouts` start from: the checked observation, its
    reduced board, its frontier (None without one), every component counted, and ``max_states``
    checked."""
    obs = as_observation(grid, total_mines, flags)
    max_states = check_int("max_states", max_states, 1, InvalidBoardError)
    board = reduce_board(obs)
    frame = Frontier(board) if board.n_front else None
    budget = [STORED_PER_STATE * max_states]  # partial solutions the wide components may still store
    solved = [_solve(frame, k, board.mines_left, max_states, budget) for k in range(frame.n)] if frame else []
    return obs, board, frame, solved, max_states


def _solve(frame: Frontier, k: int, mines_left: int, max_states: int, budget: list):
    """Component ``k`` of ``frame`` counted: a cached :class:`~nnsweeper.engine.counting.Tallied`
    or :class:`~nnsweeper.engine.counting.Counted`, or a
    :class:`~nnsweeper.engine.counting.Solution` of the whole-array program (see :func:`_combine`).

    The compiled program first, on the component's description (which is also its key
    in the component cache); plain integers, then whole arrays, for what it cannot count.
    """
    from nnsweeper.engine.kernels import count_component

    desc = frame.description(k)
    # The mines left bound a component's counts only when they are fewer than its cells.
    key = (desc.tobytes(), min(mines_left, frame.n_cells[k]), max_states)
    counted = _CACHE.get(key)
    if counted is not None:
        return counted
    ok, m_lo, layouts, by_box = count_component(desc, mines_left, min(_COMPILED_STATES, max_states))
    if ok:
        counted = Tallied(int(m_lo), tuple(layouts.tolist()), tuple(map(tuple, by_box.tolist())))
    elif m_lo >= 0 and layouts[0] <= min(_SMALL_STATES, max_states):
        # No layout, found where the plain-integer count would find it (no step before
        # held more states than it allows): its error, without counting again.
        comp = frame.component(k)
        raise no_layout(comp, comp.box_cons[m_lo][0], mines_left)
    else:  # past int64 or the compiled program's states, or no layout: plain integers decide
        comp = frame.component(k)
        plan = make_plan(comp)
        counted = count_states(comp, plan, mines_left, min(_SMALL_STATES, max_states))
        if counted is None:
            return count_arrays(comp, plan, mines_left, max_states, budget)
    _CACHE.put(key, counted)
    return counted


class _SolutionCache:
    """The solutions of the components counted last in this process, by content (LRU).

    Consecutive positions of one game, and the boards a look-ahead tries, share most of
    their frontier components: a component with the same boxes (their sizes and the
    numbers each touches, in order) and the same needs has the same solution wherever
    its cells lie, found here instead of counted again (the key is its description, see
    :class:`~nnsweeper.engine.frontier.Frontier`). Components counted by the whole-array program are not kept
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
    of Python ints per mine count from ``m_lo``) and ``tallies(g)``, as the
    :class:`~nnsweeper.engine.counting.Tallied`, ``Counted`` and ``Solution`` have); ``box_sizes``:
    the cells of each box, component after component. Every
    probability is a ratio of two integers, rounded once (``int / int``).
    Returns the probabilities of the boxes (component after component, box after
    box), the interior probability, the layout count's parts (see BoardAnalysis), the
    scaled mine counts they are ratios of (the boxes' and the interior's) and the scaled
    layouts per frontier total with the interior's mines at the first of them.
    The combination takes about ``L**2`` products of integers of ``B`` bits, for ``L``
    frontier mine totals and weights of ``B`` bits; past ``_COMBINE_PER_STATE`` times
    ``max_states`` 64-bit words of such work, the board is refused.
    """
    polys = [list(s.layouts) for s in solved]
    lo = sum(s.m_lo for s in solved)
    hi = lo + sum(len(p) - 1 for p in polys)
    weights, (k_lo, denominator) = weight_list(n_interior, mines_left, lo, hi)
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
        if isinstance(s, Solution):  # the whole-array program's tallies index g with arrays
            g = np.array(g, dtype=object)
        mined += s.tallies(g)
    ratios = [_ratio(m, size * total) for m, size in zip(mined, box_sizes, strict=True)]
    count = (total, n_interior, k_lo, denominator)
    top = mines_left - lo  # interior mines when the frontier holds lo
    if n_interior == 0:
        return ratios, 0.0, count, (mined, 0), (z, top)
    interior_mines = sum([x * (top - t) for t, x in enumerate(z)])
    return (ratios, _ratio(interior_mines, n_interior * total), count, (mined, interior_mines),
            (z, top))


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
