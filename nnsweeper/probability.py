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
3. Each component is solved for its distribution over its own mine count ``m``:
   ``W[m]`` layouts, and per box the layout-weighted number of mine cells and of safe
   cells. Small components are enumerated outright (vectorised); larger ones by a
   dynamic program that visits the boxes in a bandwidth-reducing order and merges
   partial solutions whose still-open numbers need the same counts. Its cost grows
   with the width of the frontier, not its length, and it never caps anything.
4. Components are combined with the interior through the binomial weights
   ``C(interior cells, mines left - frontier mines)``, computed in log space and
   rescaled, so large boards do not overflow.

Probabilities are float64; a cell is reported as exactly 0 or exactly 1 only when
no layout with positive weight puts a mine there (or leaves it safe).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from nnsweeper.errors import InconsistentBoardError, InvalidBoardError
from nnsweeper.grid import OFFSETS, dilate, neighbour_sum, single_point_rules

__all__ = ["mine_probabilities", "analyze", "BoardAnalysis", "validate_board"]

# C(s, j) for box sizes s <= 8 (a box lies inside one number's 3x3 neighbourhood).
_COMB = np.array(
    [[float(np.prod(np.arange(s - j + 1, s + 1)) / np.prod(np.arange(1, j + 1))) if j <= s else 0.0
      for j in range(9)] for s in range(9)]
)
# Components whose full product of box counts is at most this are enumerated outright.
_ENUMERATE_LIMIT = 2048


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
    log_layouts : float
        Natural log of the number of mine layouts that fit the board (flags fixed).
    """

    probabilities: np.ndarray
    frontier: np.ndarray
    interior_probability: float | None
    mines_left: int
    n_components: int
    unknown: np.ndarray
    log_layouts: float

    @property
    def safe(self) -> np.ndarray:
        """Covered, unflagged cells that are certainly safe (bool)."""
        return self.unknown & (self.probabilities == 0.0)

    @property
    def mines(self) -> np.ndarray:
        """Covered, unflagged cells that are certainly mines (bool)."""
        return self.unknown & (self.probabilities == 1.0)


def validate_board(grid, total_mines, flags=None) -> tuple[np.ndarray, int, np.ndarray]:
    """Check a visible board and return it as ``(grid int8, total_mines int, flags bool)``.

    Raises
    ------
    ValueError
        Wrong shape, values outside -1..8, flags on revealed cells, a negative or
        non-integer mine count.
    """
    g = np.asarray(grid)
    if g.ndim != 2 or g.size == 0:
        raise InvalidBoardError(f"grid must be a non-empty 2-D array; got shape {g.shape}")
    g = check_grid_values(g, "grid")
    if isinstance(total_mines, bool | np.bool_) or not isinstance(total_mines, numbers.Integral):
        raise InvalidBoardError(f"total_mines must be an integer; got {total_mines!r}")
    total_mines = int(total_mines)
    if total_mines < 0:
        raise InvalidBoardError(f"total_mines must be at least 0; got {total_mines}")
    return g, total_mines, check_flags(flags, g, "grid's")


def _where(index) -> str:
    """A cell's place in an error message: ``(i, j)``, or ``(i, j) of board b`` in a stack."""
    index = [int(v) for v in index]
    cell = f"({index[-2]}, {index[-1]})"
    return cell if len(index) == 2 else f"{cell} of board {index[0]}"


def check_grid_values(g: np.ndarray, name: str = "grid") -> np.ndarray:
    """``g`` (one board or a stack of boards) as int8, or an error naming the bad value."""
    if not np.issubdtype(g.dtype, np.integer):
        if not (np.issubdtype(g.dtype, np.floating) and np.all(np.mod(g, 1) == 0)):
            raise InvalidBoardError(
                f"{name} must hold integers (-1 covered, 0..8 revealed); got dtype {g.dtype}"
            )
    bad = (g < -1) | (g > 8)
    if bad.any():
        at = np.argwhere(bad)[0]
        raise InvalidBoardError(
            f"grid values must be -1 (covered) or 0..8; got {g[tuple(at)]} at {_where(at)}"
        )
    return g.astype(np.int8)


def check_flags(flags, g: np.ndarray, owner: str = "grid's") -> np.ndarray:
    """Flags for the board(s) ``g`` as bool (all False for None), or an error naming the rule."""
    if flags is None:
        return np.zeros(g.shape, dtype=bool)
    f = np.asarray(flags)
    if f.shape != g.shape:
        raise InvalidBoardError(f"flags must have the {owner} shape {g.shape}; got {f.shape}")
    if f.dtype != bool:
        if not np.issubdtype(f.dtype, np.integer) or not np.isin(f, (0, 1)).all():
            raise InvalidBoardError(f"flags must be a boolean array (or 0/1); got dtype {f.dtype}")
        f = f.astype(bool)
    on_revealed = f & (g != -1)
    if on_revealed.any():
        raise InvalidBoardError(
            f"flags must be on covered cells; got a flag on revealed {_where(np.argwhere(on_revealed)[0])}"
        )
    return f


def mine_probabilities(grid, total_mines, flags=None) -> np.ndarray:
    """Exact P(mine) for every cell of a visible board.

    Parameters
    ----------
    grid : array_like of int, shape (rows, cols)
        -1 covered, 0..8 revealed.
    total_mines : int
        Mines on the whole board, flagged ones included.
    flags : array_like of bool, shape (rows, cols), optional
        Cells known to be mines (trusted, not checked against the numbers beyond
        consistency).

    Returns
    -------
    ndarray of float64, shape (rows, cols)
        P(mine) under a uniform prior over all layouts with exactly ``total_mines``
        mines that fit the board: 0.0 at revealed cells, 1.0 at flagged cells.

    Raises
    ------
    InconsistentBoardError
        When no layout fits (a ``ValueError``).
    """
    return analyze(grid, total_mines, flags).probabilities


def analyze(grid, total_mines, flags=None) -> BoardAnalysis:
    """Like :func:`mine_probabilities`, with the frontier and interior figures beside."""
    g, total_mines, flags = validate_board(grid, total_mines, flags)
    covered = g == -1
    revealed = ~covered
    unknown = covered & ~flags
    if flags.sum() > total_mines:
        raise InconsistentBoardError(f"{int(flags.sum())} flags exceed the {total_mines} mines on the board")
    _check_room(total_mines - int(flags.sum()), int(unknown.sum()), total_mines)

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

    prob = np.zeros(g.shape, dtype=np.float64)
    prob[mine] = 1.0
    is_con = revealed & (free_nb > 0)
    front = free & (neighbour_sum(is_con) > 0)
    n_interior = int(free.sum()) - int(front.sum())
    comps = _components(is_con, need, front) if front.any() else []
    solved = [_solve_component(c, mines_left) for c in comps]
    interior_p, log_layouts = _combine(solved, n_interior, mines_left, prob)
    if n_interior:
        prob[free & ~front] = interior_p
    return BoardAnalysis(
        probabilities=prob,
        frontier=unknown & dilate(revealed),
        interior_probability=interior_p if n_interior else None,
        mines_left=total_mines - int(flags.sum()),
        n_components=len(comps),
        unknown=unknown,
        log_layouts=log_layouts,
    )


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
    sizes: np.ndarray  # (n_boxes,) int
    incidence: np.ndarray  # (n_cons, n_boxes) bool: box touches number
    need: np.ndarray  # (n_cons,) int: mines the number still needs
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

    need_flat = need.ravel()[con_pos]
    out = []
    for bs in groups.values():
        cons = sorted({x for b in bs for x in box_cons[b]})
        local = {x: k for k, x in enumerate(cons)}
        inc = np.zeros((len(cons), len(bs)), dtype=bool)
        for k, b in enumerate(bs):
            inc[[local[x] for x in box_cons[b]], k] = True
        out.append(
            _Component(
                cells=[box_cells[b] for b in bs],
                sizes=np.array([box_cells[b].size for b in bs], dtype=np.int64),
                incidence=inc,
                need=need_flat[cons].astype(np.int64),
                where=[divmod(int(con_pos[x]), c) for x in cons],
            )
        )
    return out


# ------------------------------------------------------------------ per component
class _Enumerated:
    """A small component solved by listing every feasible box-count vector."""

    def __init__(self, comp: _Component, mines_left: int):
        sizes = comp.sizes
        grids = np.meshgrid(*[np.arange(s + 1) for s in sizes], indexing="ij")
        counts = np.stack([g.ravel() for g in grids], axis=1)  # (N, n_boxes)
        ok = np.all(counts @ comp.incidence.T.astype(np.int64) == comp.need[None, :], axis=1)
        counts = counts[ok]
        mines = counts.sum(axis=1)
        keep = mines <= mines_left
        self.counts, self.mines = counts[keep], mines[keep]
        self.layouts = np.prod(_COMB[sizes[None, :], self.counts], axis=1)
        self.sizes = sizes
        self.log_scale = 0.0

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        return self.mines, self.layouts

    def tallies(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per box: sum over layouts of g[mines] * (mine cells, safe cells) in the box."""
        v = self.layouts * g[self.mines]
        return v @ self.counts, v @ (self.sizes[None, :] - self.counts)


class _FrontierDP:
    """Dynamic program over the boxes of one component, visited in a narrow order.

    The state after each box is the remaining need of every number still open (seen,
    with boxes to come) plus the mines placed so far; states that agree are merged.
    The forward pass keeps, per box, how each state was reached (parent state and the
    box's mine count); the final states give the distribution over the component's
    mine count. Box marginals come from a backward pass seeded with the weight of each
    final mine count in the whole board (``g``), so no state carries per-box tallies.
    Forward and backward values are rescaled per box, which leaves every box's
    mine/safe ratio unchanged.
    """

    def __init__(self, comp: _Component, mines_left: int):
        order = _box_order(comp.incidence)
        inc = comp.incidence[:, order]
        sizes = comp.sizes[order]
        n_cons, n_boxes = inc.shape
        first = np.argmax(inc, axis=1)
        last = n_boxes - 1 - np.argmax(inc[:, ::-1], axis=1)
        # Capacity each number still has after box k: cells in its boxes beyond k.
        rest = (inc * sizes[None, :])[:, ::-1].cumsum(axis=1)[:, ::-1]
        cap_after = np.concatenate([rest[:, 1:], np.zeros((n_cons, 1), dtype=np.int64)], axis=1)

        open_cons: list[int] = []
        need = np.zeros((1, 0), dtype=np.int64)
        mines = np.zeros(1, dtype=np.int64)
        alpha = np.ones(1)
        self.log_scale = 0.0  # log of what the stored alphas were divided by
        self.steps = []  # per box: (alpha before, src, j, inv)
        for k in range(n_boxes):
            s = int(sizes[k])
            new = np.flatnonzero(first == k)
            if new.size:
                open_cons.extend(int(x) for x in new)
                fresh = np.broadcast_to(comp.need[new], (need.shape[0], new.size))
                need = np.concatenate([need, fresh], axis=1)
            touch = np.flatnonzero(inc[:, k])
            cols = np.array([open_cons.index(int(x)) for x in touch], dtype=np.int64)
            n_states = need.shape[0]
            j = np.tile(np.arange(s + 1), n_states)
            src = np.repeat(np.arange(n_states), s + 1)
            sub = need[src[:, None], cols[None, :]] - j[:, None]
            ok = np.all((sub >= 0) & (sub <= cap_after[touch, k][None, :]), axis=1)
            ok &= mines[src] + j <= mines_left
            src, j, sub = src[ok], j[ok], sub[ok]
            if src.size == 0:
                i0, j0 = comp.where[int(touch[0])]
                raise InconsistentBoardError(
                    f"no mine layout satisfies the numbers around ({i0}, {j0})"
                    f" with at most {mines_left} mines left"
                )
            need = need[src]
            need[:, cols] = sub
            mines = mines[src] + j
            closing = [t for t, x in enumerate(open_cons) if last[x] == k]
            if closing:
                keep_cols = [t for t, x in enumerate(open_cons) if last[x] != k]
                open_cons = [open_cons[t] for t in keep_cols]
                need = need[:, keep_cols]
            first_idx, inv = _group(need, mines)
            line_w = alpha[src] * _COMB[s, j]
            self.steps.append((alpha, src, j, inv))
            need, mines = need[first_idx], mines[first_idx]
            alpha = np.bincount(inv, weights=line_w, minlength=first_idx.size)
            top = alpha.max()
            alpha /= top
            self.log_scale += float(np.log(top))
        self.order, self.sizes = order, sizes
        self.final_mines, self.final_alpha = mines, alpha

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        return self.final_mines, self.final_alpha

    def tallies(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n_boxes = self.sizes.size
        qm = np.zeros(n_boxes)
        qs = np.zeros(n_boxes)
        beta = g[self.final_mines]
        for k in range(n_boxes - 1, -1, -1):
            alpha, src, j, inv = self.steps[k]
            s = int(self.sizes[k])
            down = _COMB[s, j] * beta[inv]  # layouts of this box times the future
            line = alpha[src] * down
            qm[k] = line @ j
            qs[k] = line @ (s - j)
            beta = np.bincount(src, weights=down, minlength=alpha.size)
            top = beta.max()
            if top > 0:
                beta /= top
        inv_order = np.empty_like(self.order)
        inv_order[self.order] = np.arange(n_boxes)
        return qm[inv_order], qs[inv_order]


def _solve_component(comp: _Component, mines_left: int):
    n_combos = float(np.prod(comp.sizes + 1.0))
    solved = (_Enumerated if n_combos <= _ENUMERATE_LIMIT else _FrontierDP)(comp, mines_left)
    mines, w = solved.weights()
    if mines.size == 0:
        i, j = comp.where[0]
        raise InconsistentBoardError(
            f"no mine layout satisfies the numbers around ({i}, {j}) "
            f"with at most {mines_left} mines left"
        )
    W = np.bincount(mines, weights=w)
    solved.w = W / W.max()
    solved.log_scale += float(np.log(W.max()))  # log W_true[m] = log w[m] + log_scale
    solved.comp = comp
    return solved


def _box_order(inc: np.ndarray) -> np.ndarray:
    """Cuthill-McKee order of the boxes (adjacent when they share a number)."""
    adj = (inc.T.astype(np.int64) @ inc.astype(np.int64)) > 0
    n = adj.shape[0]
    deg = adj.sum(axis=1)
    nbrs = [np.flatnonzero(adj[k]) for k in range(n)]

    def bfs(start):
        order, seen = [start], np.zeros(n, dtype=bool)
        seen[start] = True
        head = 0
        while head < len(order):
            u = order[head]
            head += 1
            for v in sorted(nbrs[u][~seen[nbrs[u]]], key=lambda x: deg[x]):
                seen[v] = True
                order.append(int(v))
        return order

    # Start from a pseudo-peripheral box: the last one reached from a low-degree box.
    return np.array(bfs(bfs(int(np.argmin(deg)))[-1]), dtype=np.int64)


def _group(need: np.ndarray, mines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of distinct (open needs, mines) rows and each row's group."""
    if need.shape[1] <= 16:  # needs are 0..8: pack a row into one integer
        key = mines.copy()
        for t in range(need.shape[1]):
            key = key * 9 + need[:, t]
        _, first_idx, inv = np.unique(key, return_index=True, return_inverse=True)
    else:
        rows = np.concatenate([need, mines[:, None]], axis=1)
        _, first_idx, inv = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    return first_idx, inv.ravel()


# ------------------------------------------------------------------- combination
def _convolve(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """Product of two mine-count polynomials, rescaled to max 1, and the log of the scale."""
    out = np.convolve(a, b)
    top = out.max()
    return out / top, float(np.log(top))


def _combine(solved: list, n_interior: int, mines_left: int, prob: np.ndarray) -> tuple[float, float]:
    """Fill ``prob`` for every frontier cell.

    Returns the interior probability and the natural log of the number of layouts.
    """
    total = sum(s.w.size - 1 for s in solved)
    t = np.arange(total + 1)
    k = mines_left - t  # interior mines when the frontier holds t
    feasible = (k >= 0) & (k <= n_interior)
    if not feasible.any():
        raise InconsistentBoardError(
            f"the frontier needs between {_min_mines(solved)} and {total} mines, which does not "
            f"fit {mines_left} mines left with {n_interior} interior cells"
        )
    logb = np.full(total + 1, -np.inf)
    kf = k[feasible]
    logb[feasible] = gammaln(n_interior + 1) - gammaln(kf + 1) - gammaln(n_interior - kf + 1)
    B = np.exp(logb - logb[feasible].max())

    # Leave-one-out products of the component polynomials via prefix and suffix products.
    n = len(solved)
    prefix, log_all = [np.ones(1)], 0.0
    for s in solved:
        poly, log_top = _convolve(prefix[-1], s.w)
        prefix.append(poly)
        log_all += log_top + s.log_scale
    suffix = [np.ones(1)]
    for s in reversed(solved):
        suffix.append(_convolve(suffix[-1], s.w)[0])
    suffix.reverse()
    z = prefix[n] * B
    if not np.any(z > 0):
        raise InconsistentBoardError(
            f"no layout of the frontier leaves a number of interior mines between 0 and "
            f"{n_interior} out of the {mines_left} mines left"
        )
    flat = prob.ravel()
    for c, s in enumerate(solved):
        rest = _convolve(prefix[c], suffix[c + 1])[0]
        g = np.correlate(B, rest, mode="valid")  # g[m] = sum_k rest[k] * B[m + k]
        qm, qs = s.tallies(g)
        for b, cells in enumerate(s.comp.cells):
            flat[cells] = _ratio(qm[b], qs[b])
    log_layouts = float(np.log(z.sum())) + log_all + float(logb[feasible].max())
    if n_interior == 0:
        return 0.0, log_layouts
    return _ratio(float(np.sum(z * k)), float(np.sum(z * (n_interior - k)))), log_layouts


def _ratio(qm: float, qs: float) -> float:
    """qm / (qm + qs), exactly 0 or 1 when one side has no layout at all."""
    if qs == 0.0:
        return 1.0
    if qm == 0.0:
        return 0.0
    return qm / (qm + qs)


def _min_mines(solved: list) -> int:
    return sum(int(np.flatnonzero(s.w > 0)[0]) for s in solved)
