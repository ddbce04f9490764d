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

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from nnsweeper.errors import InconsistentBoardError
from nnsweeper.grid import OFFSETS, neighbour_sum

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
    """

    probabilities: np.ndarray
    frontier: np.ndarray
    interior_probability: float | None
    mines_left: int
    n_components: int
    unknown: np.ndarray

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
        raise ValueError(f"grid must be a non-empty 2-D array; got shape {g.shape}")
    if not np.issubdtype(g.dtype, np.integer):
        if not (np.issubdtype(g.dtype, np.floating) and np.all(np.mod(g, 1) == 0)):
            raise ValueError(f"grid must hold integers (-1 covered, 0..8 revealed); got dtype {g.dtype}")
    bad = (g < -1) | (g > 8)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"grid values must be -1 (covered) or 0..8; got {g[i, j]} at ({i}, {j})")
    g = g.astype(np.int8)
    if isinstance(total_mines, bool | np.bool_) or not float(total_mines).is_integer():
        raise ValueError(f"total_mines must be an integer; got {total_mines!r}")
    total_mines = int(total_mines)
    if total_mines < 0:
        raise ValueError(f"total_mines must be at least 0; got {total_mines}")
    if flags is None:
        f = np.zeros(g.shape, dtype=bool)
    else:
        f = np.asarray(flags)
        if f.shape != g.shape:
            raise ValueError(f"flags must have the grid's shape {g.shape}; got {f.shape}")
        f = f.astype(bool)
        on_revealed = f & (g != -1)
        if on_revealed.any():
            i, j = np.argwhere(on_revealed)[0]
            raise ValueError(f"flags must be on covered cells; got a flag on revealed ({i}, {j})")
    return g, total_mines, f


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
    unknown = covered & ~flags
    mines_left = total_mines - int(flags.sum())
    n_unknown = int(unknown.sum())
    if mines_left < 0:
        raise InconsistentBoardError(
            f"{int(flags.sum())} flags exceed the {total_mines} mines on the board"
        )
    if mines_left > n_unknown:
        raise InconsistentBoardError(
            f"{mines_left} mines left (total {total_mines} minus flags) do not fit in "
            f"{n_unknown} covered unflagged cells"
        )

    unk_nb = neighbour_sum(unknown)
    need = np.where(covered, 0, g.astype(np.int64) - neighbour_sum(flags))
    revealed = ~covered
    bad = revealed & ((need < 0) | (need > unk_nb))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InconsistentBoardError(
            f"the {g[i, j]} at ({i}, {j}) cannot be satisfied: it needs {need[i, j]} more mines "
            f"among {unk_nb[i, j]} covered unflagged neighbours"
        )

    prob = np.zeros(g.shape, dtype=np.float64)
    prob[flags] = 1.0
    is_con = revealed & (unk_nb > 0)
    frontier = unknown & (neighbour_sum(is_con) > 0)
    n_front = int(frontier.sum())
    n_interior = n_unknown - n_front

    comps = _components(is_con, need, frontier) if n_front else []
    solved = [_solve_component(c, mines_left) for c in comps]
    interior_p = _combine(solved, n_interior, mines_left, prob)
    if n_interior:
        prob[unknown & ~frontier] = interior_p
    return BoardAnalysis(
        prob, frontier, interior_p if n_interior else None, mines_left, len(comps), unknown
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
@dataclass
class _Solved:
    comp: _Component
    w: np.ndarray  # (M+1,) layouts per component mine count, rescaled
    tm: np.ndarray  # (M+1, n_boxes) layout-weighted mine cells per box
    ts: np.ndarray  # (M+1, n_boxes) layout-weighted safe cells per box


def _solve_component(comp: _Component, mines_left: int) -> _Solved:
    sizes = comp.sizes
    n_combos = float(np.prod(sizes + 1.0))
    if n_combos <= _ENUMERATE_LIMIT:
        counts, mines, w = _enumerate(comp)
        tm = w[:, None] * counts
        ts = w[:, None] * (sizes[None, :] - counts)
    else:
        mines, w, tm, ts = _frontier_dp(comp, mines_left)
    keep = mines <= mines_left
    if not keep.all():
        mines, w, tm, ts = mines[keep], w[keep], tm[keep], ts[keep]
    if mines.size == 0:
        i, j = comp.where[0]
        raise InconsistentBoardError(
            f"no mine layout satisfies the numbers around ({i}, {j}) "
            f"with at most {mines_left} mines left"
        )
    size = int(mines.max()) + 1
    W = np.bincount(mines, weights=w, minlength=size)
    TM = np.zeros((size, sizes.size))
    TS = np.zeros((size, sizes.size))
    np.add.at(TM, mines, tm)
    np.add.at(TS, mines, ts)
    scale = W.max()
    return _Solved(comp, W / scale, TM / scale, TS / scale)


def _enumerate(comp: _Component):
    """All box-count vectors of a small component that satisfy its numbers."""
    sizes = comp.sizes
    grids = np.meshgrid(*[np.arange(s + 1) for s in sizes], indexing="ij")
    counts = np.stack([g.ravel() for g in grids], axis=1)  # (N, n_boxes)
    ok = np.all(counts @ comp.incidence.T.astype(np.int64) == comp.need[None, :], axis=1)
    counts = counts[ok]
    w = np.prod(_COMB[sizes[None, :], counts], axis=1)
    return counts, counts.sum(axis=1), w


def _box_order(inc: np.ndarray) -> np.ndarray:
    """Cuthill-McKee order of the boxes (adjacent when they share a number)."""
    adj = (inc.T.astype(np.int64) @ inc.astype(np.int64)) > 0
    n = adj.shape[0]
    deg = adj.sum(axis=1)
    nbrs = [np.flatnonzero(adj[k]) for k in range(n)]

    def bfs(start):
        order, seen, depth = [start], np.zeros(n, dtype=bool), {start: 0}
        seen[start] = True
        head = 0
        while head < len(order):
            u = order[head]
            head += 1
            for v in sorted(nbrs[u][~seen[nbrs[u]]], key=lambda x: deg[x]):
                seen[v] = True
                depth[v] = depth[u] + 1
                order.append(int(v))
        return order, depth

    # Start from a pseudo-peripheral box: the last one reached from a low-degree box.
    order, _ = bfs(int(np.argmin(deg)))
    order, _ = bfs(order[-1])
    return np.array(order, dtype=np.int64)


def _frontier_dp(comp: _Component, mines_left: int):
    """Dynamic program over the boxes of one component in a narrow order.

    State after each box: the remaining need of every number that is open (seen but
    with boxes still to come) plus the mines placed so far. States are merged when
    they agree; each keeps its layout count and its per-box mine and safe tallies.
    """
    order = _box_order(comp.incidence)
    inc = comp.incidence[:, order]
    sizes = comp.sizes[order]
    n_cons, n_boxes = inc.shape
    first = np.argmax(inc, axis=1)
    last = n_boxes - 1 - np.argmax(inc[:, ::-1], axis=1)
    # Capacity each number still has after box k: cells in its boxes beyond k.
    cap_after = (inc * sizes[None, :])[:, ::-1].cumsum(axis=1)[:, ::-1]
    cap_after = np.concatenate([cap_after[:, 1:], np.zeros((n_cons, 1), dtype=np.int64)], axis=1)

    open_cons: list[int] = []
    need = np.zeros((1, 0), dtype=np.int64)
    mines = np.zeros(1, dtype=np.int64)
    w = np.ones(1)
    tm = np.zeros((1, n_boxes))
    ts = np.zeros((1, n_boxes))
    for k in range(n_boxes):
        s = int(sizes[k])
        new = [x for x in np.flatnonzero(first == k)]
        if new:
            open_cons.extend(int(x) for x in new)
            need = np.concatenate([need, np.broadcast_to(comp.need[new], (need.shape[0], len(new)))], axis=1)
        touch = np.flatnonzero(inc[:, k])
        cols = np.array([open_cons.index(int(x)) for x in touch], dtype=np.int64)
        J = s + 1
        L = need.shape[0]
        j = np.tile(np.arange(J), L)
        src = np.repeat(np.arange(L), J)
        sub = need[src][:, cols] - j[:, None]
        ok = np.all((sub >= 0) & (sub <= cap_after[touch, k][None, :]), axis=1)
        ok &= mines[src] + j <= mines_left
        src, j, sub = src[ok], j[ok], sub[ok]
        if src.size == 0:
            i0, j0 = comp.where[int(touch[0])]
            raise InconsistentBoardError(
                f"no mine layout satisfies the numbers around ({i0}, {j0})"
            )
        need = need[src]
        need[:, cols] = sub
        c = _COMB[s, j]
        mines = mines[src] + j
        w = w[src] * c
        tm = tm[src] * c[:, None]
        ts = ts[src] * c[:, None]
        tm[:, k] = w * j
        ts[:, k] = w * (s - j)
        closing = [x for x in open_cons if last[x] == k]
        if closing:
            keep_cols = [t for t, x in enumerate(open_cons) if last[x] != k]
            open_cons = [open_cons[t] for t in keep_cols]
            need = need[:, keep_cols]
        need, mines, w, tm, ts = _merge(need, mines, w, tm, ts)
    # Undo the box order for the tallies.
    inv = np.empty_like(order)
    inv[order] = np.arange(n_boxes)
    return mines, w, tm[:, inv], ts[:, inv]


def _merge(need, mines, w, tm, ts):
    """Sum states that agree on every open need and on the mine count."""
    if need.shape[0] <= 1:
        return need, mines, w, tm, ts
    if need.shape[1] <= 16:
        key = mines.copy()
        for t in range(need.shape[1]):
            key = key * 9 + need[:, t]
        uniq, first_idx, inv = np.unique(key, return_index=True, return_inverse=True)
    else:
        rows = np.concatenate([need, mines[:, None]], axis=1)
        uniq, first_idx, inv = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        inv = inv.ravel()
    if uniq.shape[0] == need.shape[0]:
        return need, mines, w, tm, ts
    n = uniq.shape[0]
    order = np.argsort(inv, kind="stable")
    starts = np.searchsorted(inv[order], np.arange(n))
    w2 = np.bincount(inv, weights=w, minlength=n)
    tm2 = np.add.reduceat(tm[order], starts, axis=0)
    ts2 = np.add.reduceat(ts[order], starts, axis=0)
    return need[first_idx], mines[first_idx], w2, tm2, ts2


# ------------------------------------------------------------------- combination
def _convolve_all(ws: list[np.ndarray]) -> np.ndarray:
    out = np.ones(1)
    for w in ws:
        out = np.convolve(out, w)
        out /= out.max()
    return out


def _combine(solved: list[_Solved], n_interior: int, mines_left: int, prob: np.ndarray) -> float:
    """Fill ``prob`` for every frontier cell; return the interior probability."""
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
    prefix = [np.ones(1)]
    for s in solved:
        prefix.append(_convolve_all([prefix[-1], s.w]))
    suffix = [np.ones(1)]
    for s in reversed(solved):
        suffix.append(_convolve_all([suffix[-1], s.w]))
    suffix.reverse()
    conv_all = prefix[n]
    z = conv_all * B
    if not np.any(z > 0):
        raise InconsistentBoardError(
            f"no layout of the frontier leaves a number of interior mines between 0 and "
            f"{n_interior} out of the {mines_left} mines left"
        )
    for c, s in enumerate(solved):
        rest = _convolve_all([prefix[c], suffix[c + 1]])
        g = np.correlate(B, rest, mode="valid")  # g[m] = sum_k rest[k] * B[m + k]
        qm = g @ s.tm
        qs = g @ s.ts
        p = np.where(qs == 0, 1.0, np.where(qm == 0, 0.0, qm / np.where(qm + qs > 0, qm + qs, 1)))
        for b, cells in enumerate(s.comp.cells):
            prob.ravel()[cells] = p[b]
    if n_interior == 0:
        return 0.0
    em = float(np.sum(z * k))
    es = float(np.sum(z * (n_interior - k)))
    if es == 0.0:
        return 1.0
    if em == 0.0:
        return 0.0
    return em / (em + es)


def _min_mines(solved: list[_Solved]) -> int:
    return sum(int(np.flatnonzero(s.w > 0)[0]) for s in solved)
