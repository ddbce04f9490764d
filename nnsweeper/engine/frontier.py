"""The frontier of a visible board: what the single-point rules leave, in boxes and components.

Package-internal (shared by :mod:`nnsweeper.engine.probability` and
:mod:`nnsweeper.engine.sampling`; its names may change without notice). The first two
steps of the engine's method (see :mod:`nnsweeper.engine.probability`):

* :func:`reduce_board` settles what the single-point rules settle (the same in every
  layout) and checks that the rest can hold the mines left;
* :func:`components` groups the frontier cells into *boxes* (cells that touch exactly
  the same numbers) and the boxes into independent *components* as Python lists, and
  :class:`Frontier` does the same in flat arrays for the hot path;
* :func:`make_plan` orders a component's boxes for the counting program
  (:mod:`nnsweeper.engine.counting`) and says, per box, which numbers it opens,
  touches and closes.

The grouping and the rules run in compiled loops (:mod:`nnsweeper.engine.kernels`),
imported on first use.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnsweeper.errors import InconsistentBoardError

__all__ = ["Component", "Frontier", "ReducedBoard", "Step", "components", "make_plan", "reduce_board"]


@dataclass
class ReducedBoard:
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


def reduce_board(obs) -> ReducedBoard:
    """Settle what the single-point rules settle (the same in every layout); check the rest fits.

    The rules (those of :func:`~nnsweeper.grid.single_point_rules`) run in rounds until
    nothing changes, in compiled loops (:func:`nnsweeper.engine.kernels.settle`).
    """
    from nnsweeper.engine.kernels import CONTRADICTION, UNSATISFIABLE, fronts, settle

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
    return ReducedBoard(mine, free, need, is_con, front, mines_left, frontier, n_front, n_free - n_front,
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
class Component:
    cells: list[np.ndarray]  # per box: flat indices of its cells
    sizes: list[int]  # per box: its number of cells
    box_cons: list[list[int]]  # per box: the numbers (local ids) it touches
    need: list[int]  # per number: mines it still needs
    where: _Where  # position of each number, for messages (where[x] is (row, col))


def components(is_con: np.ndarray, need: np.ndarray, frontier: np.ndarray) -> list[Component]:
    """Group frontier cells into boxes and boxes into independent components.

    The grouping runs in compiled loops (:func:`nnsweeper.engine.kernels.boxes`): boxes in the
    order of their first cell (row-major), components in the order of their first box,
    the numbers of a component by their position (row-major), numbered from 0.
    """
    from nnsweeper.engine.kernels import boxes

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
            Component(
                cells=[cells[b] for b in bs],
                sizes=[sizes[b] for b in bs],
                box_cons=local_cons,
                need=need_local,
                where=_Where(pos_by[start:start + k], is_con.shape[1]),
            )
        )
        start += k
    return out


class Frontier:
    """The frontier of a reduced board in flat arrays, for :func:`~nnsweeper.engine.probability.analyze`.

    The same boxes and components as :func:`components` (in the same order), built in
    compiled loops (:func:`nnsweeper.engine.kernels.frontier_components`) with no Python
    object per box: a component is its *description*, the integers its counts depend
    on (its boxes' sizes, the numbers each box touches, what each number needs), which
    is also its key in the component cache. Python :class:`Component` objects are made
    only for the rare component that the compiled program cannot count.
    """

    __slots__ = ("cells", "box_size", "comp_boxes", "desc", "comp_desc", "con_pos", "comp_cons", "n",
                 "n_cells", "_cols")

    def __init__(self, board: ReducedBoard):
        from nnsweeper.engine.kernels import frontier_components

        (self.cells, self.box_size, self.comp_boxes, self.desc, self.comp_desc, self.con_pos,
         self.comp_cons) = frontier_components(board.is_con, board.need, board.front)
        self.n = len(self.comp_boxes) - 1
        self._cols = board.front.shape[1]
        self.n_cells = np.add.reduceat(self.box_size, self.comp_boxes[:-1]).tolist()  # per component

    def description(self, k: int) -> np.ndarray:
        """Component ``k``'s description (int64): what its counts depend on, and its cache key."""
        return self.desc[self.comp_desc[k]:self.comp_desc[k + 1]]

    def component(self, k: int) -> Component:
        """Component ``k`` as :func:`components` makes it."""
        b0, b1 = int(self.comp_boxes[k]), int(self.comp_boxes[k + 1])
        ends = np.cumsum(self.box_size).tolist()
        starts = [e - n for e, n in zip(ends, self.box_size.tolist(), strict=True)]
        desc = self.description(k).tolist()
        nb, nn = desc[0], desc[1]
        n_cons = desc[2 + nb:2 + 2 * nb]
        at = 2 + 2 * nb
        box_cons = []
        for n in n_cons:
            box_cons.append(desc[at:at + n])
            at += n
        return Component(
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


def _box_order(comp: Component) -> list[int]:
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
class Step:
    """One box of a component's dynamic program, in visiting order."""

    box: int
    size: int
    opened: tuple[int, ...]  # needs of the numbers first seen at this box (appended to the open ones)
    touched: list[tuple[int, int]]  # (position among the open numbers, cells left to it after this box)
    keep: list[int]  # positions of the open numbers still open after this box


def make_plan(comp: Component) -> list[Step]:
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
        steps.append(Step(b, s, tuple([need[x] for x in new]), touched, keep))
        open_ = [open_[p] for p in keep]
        at = {x: p for p, x in enumerate(open_)}
    return steps
