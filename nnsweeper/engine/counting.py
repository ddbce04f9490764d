"""Counting one frontier component exactly, per number of mines it holds.

Package-internal (shared by :mod:`nnsweeper.engine.probability` and
:mod:`nnsweeper.engine.sampling`; its names may change without notice). Step 3 of the
engine's method (see :mod:`nnsweeper.engine.probability`): a dynamic program over a component's
boxes in the order of its plan (:func:`~nnsweeper.engine.frontier.make_plan`), in three
forms that give the same integers:

* :func:`count_states` / :func:`count_small`: plain Python integers, for the small
  components of real play; the only form that keeps every transition, so the only one
  whose layouts can be drawn (:meth:`Counted.sample`) or listed (:meth:`Counted.each`);
* :func:`count_arrays`: whole-array steps (float64 while exact, Python integers past
  that), for wide components;
* compiled loops in int64 (:func:`count_compiled` here on a plan,
  :func:`nnsweeper.engine.kernels.count_component` on a description, the engine's fast
  path), giving a :class:`Tallied`.

Also here: the interior's binomial weights (:func:`interior_weights`,
:func:`weight_list`), which both the exact combination and the sampler weigh the
frontier's mine totals by, and :func:`pick`, the exact weighted draw.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nnsweeper.engine.frontier import Component, Step
from nnsweeper.errors import EngineLimitError, InconsistentBoardError

__all__ = ["STORED_PER_STATE", "Counted", "Solution", "Tallied", "count_arrays", "count_compiled",
           "count_small", "count_states", "interior_weights", "no_layout", "pick", "weight_list"]

# C(s, j) for box sizes s <= 8 (a box lies inside one number's 3x3 neighbourhood).
_COMB_INT = np.array([[math.comb(s, j) for j in range(9)] for s in range(9)], dtype=object)
_COMB = _COMB_INT.astype(np.float64)
_COMB_ROWS = _COMB_INT.tolist()
# Array counts stay float64 below this (with the factor 8 of a box's mines, below 2**53,
# where float64 still holds every integer).
_FLOAT_EXACT = float(2**50)
#: Partial solutions the whole-array program may store over all the boxes of one board's
#: wide components, per state of ``max_states`` (see
#: :data:`nnsweeper.engine.probability.MAX_STATES`).
STORED_PER_STATE = 2


@dataclass
class Solution:
    """One component counted exactly, per number ``m`` of mines it holds.

    ``layouts[m - m_lo]`` is the number of its layouts with ``m`` mines (an object
    array of Python ints). ``tallies(g)``, for a weight ``g[m - m_lo]`` (a Python int)
    per mine count, gives per box the sum over all layouts of the weight of the
    layout's mine count times the box's mine cells in that layout: the numerator of
    the box's probability once ``g`` carries the rest of the board.
    """

    comp: Component
    m_lo: int
    layouts: np.ndarray
    tallies: Callable[[np.ndarray], list]
    #: ``sample(m, below)``: the mines of each box in one layout with ``m`` mines, drawn
    #: uniformly among them (``below(n)`` draws an integer in ``[0, n)``); counted in
    #: plain integers only (:func:`count_small`), else None.
    sample: Callable | None = None
    #: ``each(m)``: every way to give the boxes ``m`` mines in all (one list of mines per
    #: box each); counted in plain integers only, else None.
    each: Callable | None = None


def no_layout(comp: Component, x: int, mines_left: int):
    return InconsistentBoardError(
        f"no mine layout satisfies the numbers around {comp.where[x]} with at most "
        f"{mines_left} mines left"
    )


def count_small(comp: Component, plan: list[Step], mines_left: int, most: int) -> Solution | None:
    """Count a component in plain Python integers, or None once a box has over ``most`` states.

    The dynamic program over the boxes in ``plan`` order: a state is the remaining need
    of every open number (seen, with boxes to come) and the mines placed so far; states
    that agree are merged and their layout counts added. The forward pass keeps every
    transition (state, mines in the box, next state); the backward pass
    (:meth:`Counted.tallies`) carries, per state, the weighted number of its
    completions, which gives each box's tally. Small components (most of them) need a
    few dozen states, where this beats array code by far.
    """
    counted = count_states(comp, plan, mines_left, most)
    return None if counted is None else counted.solution(comp)


def count_states(comp: Component, plan: list[Step], mines_left: int, most: int) -> Counted | None:
    """The forward pass of :func:`count_small`: a :class:`Counted`, or None past ``most`` states."""
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
            raise no_layout(comp, comp.box_cons[step.box][0], mines_left)
        if len(new_keys) > most:
            return None
        history.append((tuple(counts), tuple(srcs), tuple(js), tuple(dsts)))
        keys, counts = new_keys, new_counts
    final = tuple(m for _, m in keys)  # the final states differ in their mines only
    m_lo = min(final)
    layouts = [0] * (max(final) - m_lo + 1)
    for m, a in zip(final, counts, strict=True):
        layouts[m - m_lo] = a
    return Counted(m_lo, tuple(layouts), final, tuple(history), tuple((st.box, st.size) for st in plan))


class Counted:
    """A component counted in plain integers: what :func:`count_states` found, in tuples.

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

    def solution(self, comp: Component) -> Solution:
        layouts = np.empty(len(self.layouts), dtype=object)
        layouts[:] = self.layouts
        return Solution(comp, self.m_lo, layouts, self.tallies, self.sample, self.each)

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
            d, j = options[pick([before[src] * comb[j] for src, j in options], below)]
            box_mines[box] = j
        return box_mines


def pick(weights: list[int], below) -> int:
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


def count_arrays(comp: Component, plan: list[Step], mines_left: int, max_states: int,
                  budget: list) -> Solution:
    """The same dynamic program as :func:`count_small` in whole-array steps, for wide components.

    The forward counts are float64 while each stays below :data:`_FLOAT_EXACT`: every
    count is a sum of non-negative integer terms, so a rounded sum or product would
    show up as a count at or above it; from the box where that happens on, the counts
    are Python integers (the box is counted again). Exact either way, in any order of
    summation. The backward pass carries the weights ``g`` (Python integers).

    A partial solution at a box is one (state, mines in the box) line. Their number
    per box is bounded by ``max_states``, and over all boxes by what is left of
    ``budget`` (a one-item list, shared by the components of one board, that starts at
    ``STORED_PER_STATE`` times ``max_states``); beyond either the component is refused.
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
                   STORED_PER_STATE * max_states)
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
            raise no_layout(comp, comp.box_cons[step.box][0], mines_left)
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

    return Solution(comp, m_lo, layouts, tallies)


def count_compiled(plan: list[Step], mines_left: int, most: int) -> Tallied | None:
    """The dynamic program in compiled loops (:func:`nnsweeper.engine.kernels.count_layouts`), in int64.

    None when it cannot count the component exactly there (counts near 2**62, over
    ``most`` states at a box, or no layout at all: plain integers then count it, and
    report what is wrong).
    """
    from nnsweeper.engine.kernels import count_layouts

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
    return Tallied(int(m_lo), tuple(layouts.tolist()), tuple(by_box))


class Tallied:
    """A component counted in compiled loops: its layouts and, per box, the tally of its
    mines by the component's mine count (so that :meth:`tallies` is a dot product).

    Tuples of Python integers only, as the cache keeps it; no layouts can be drawn
    from it (sampling counts in plain integers, :func:`count_small`).
    """

    __slots__ = ("m_lo", "layouts", "by_box")

    def __init__(self, m_lo: int, layouts: tuple, by_box: tuple):
        self.m_lo, self.layouts, self.by_box = m_lo, layouts, by_box

    def solution(self, comp: Component) -> Solution:
        layouts = np.empty(len(self.layouts), dtype=object)
        layouts[:] = self.layouts
        return Solution(comp, self.m_lo, layouts, self.tallies)

    def tallies(self, g) -> list:
        g = list(g)
        return [sum([t * x for t, x in zip(row, g, strict=True) if t]) for row in self.by_box]


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


# ------------------------------------------------------------ the interior's weights
def interior_weights(n_interior: int, mines_left: int, lo: int, hi: int):
    """Weights of frontier totals ``t = lo..hi``: ``C(n_interior, mines_left - t)`` up to one factor.

    With ``k = mines_left - t`` interior mines in ``[k_lo, k_hi]`` (the feasible range),
    ``C(n, k) / C(n, k_lo) = prod_{i=k_lo+1..k} (n - i + 1) / i``; multiplying through by
    ``prod_{i=k_lo+1..k_hi} i`` leaves small integers (a few bits per step of ``k``)
    instead of the binomials themselves (thousands of bits on a large board).

    Returns ``(weights, scale)``: an object array over ``t - lo`` (0 where infeasible)
    and ``(k_lo, denominator)`` with ``C(n, k) = weight * C(n, k_lo) / denominator``.
    """
    w, scale = weight_list(n_interior, mines_left, lo, hi)
    out = np.empty(len(w), dtype=object)
    out[:] = w
    return out, scale


def weight_list(n_interior: int, mines_left: int, lo: int, hi: int) -> tuple[list[int], tuple[int, int]]:
    """:func:`interior_weights` as a list of Python ints (what the exact combination sums over)."""
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
