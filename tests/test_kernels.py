"""The compiled loops against the plain versions they were written from: the single-point
rules against the whole-array ones of nnsweeper.grid, the engine's frontier grouping,
plans and counts against its Python lists and integers, the forced guess and the
endgame search against plain Python."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnsweeper.engine import kernels
from nnsweeper.grid import neighbour_sum, single_point_rules
from nnsweeper.solvers.endgame import SearchBudgetExceeded


def _board(rows, cols, density, shown, flagged, seed, lie):
    """A visible grid from a random layout: some cells revealed, some mines flagged, and
    with ``lie`` one revealed number changed (so that some boards are inconsistent)."""
    rng = np.random.default_rng(seed)
    mine = rng.random((rows, cols)) < density
    counts = neighbour_sum(mine)
    revealed = (rng.random((rows, cols)) < shown) & ~mine
    grid = np.where(revealed, counts, -1).astype(np.int8)
    flags = mine & (rng.random((rows, cols)) < flagged)
    if lie and revealed.any():
        i, j = np.argwhere(revealed)[rng.integers(revealed.sum())]
        grid[i, j] = (grid[i, j] + 1 + rng.integers(3)) % 9
    return grid, flags


boards = st.builds(
    _board, st.integers(1, 9), st.integers(1, 9), st.floats(0.0, 0.5), st.floats(0.0, 1.0),
    st.floats(0.0, 1.0), st.integers(0, 2**32 - 1), st.booleans(),
)


def _reduced(board):
    """The board reduced by the engine, mines a third of its covered cells; None without a frontier."""
    from nnsweeper.engine.frontier import reduce_board
    from nnsweeper.errors import InconsistentBoardError
    from nnsweeper.observation import as_observation

    grid, flags = board
    covered = int((grid < 0).sum())
    try:
        reduced = reduce_board(as_observation(grid, max(int(flags.sum()), covered // 3), flags))
    except InconsistentBoardError:
        return None
    return reduced if reduced.front.any() else None


@settings(max_examples=150, deadline=None)
@given(boards)
def test_rules_once_is_single_point_rules(board):
    grid, flags = board
    free = (grid < 0) & ~flags
    _, _, safe, mines = single_point_rules(grid, flags, free)
    got_safe, got_mines = kernels.rules_once(grid, flags, free)
    np.testing.assert_array_equal(got_safe, safe)
    np.testing.assert_array_equal(got_mines, mines)


def _settle_by_rounds(grid, flags):
    """The whole-array fixpoint: apply both rules in rounds until nothing changes, or None
    when the board is inconsistent (a number unsatisfiable, or a cell proved both ways)."""
    revealed = grid >= 0
    mine, free = flags.copy(), (grid < 0) & ~flags
    while True:
        need, free_nb, safe, new_mines = single_point_rules(grid, mine, free)
        if (revealed & ((need < 0) | (need > free_nb))).any() or (safe & new_mines).any():
            return None
        if not (safe | new_mines).any():
            return mine, free, need, free_nb
        mine |= new_mines
        free &= ~(safe | new_mines)


@settings(max_examples=200, deadline=None)
@given(boards)
def test_settle_reaches_the_fixpoint_of_the_whole_array_rules(board):
    grid, flags = board
    mine, free = flags.copy(), (grid < 0) & ~flags
    status, i, j, need, free_nb = kernels.settle(grid, mine, free)
    want = _settle_by_rounds(grid, flags)
    if want is None:
        assert status in (kernels.UNSATISFIABLE, kernels.CONTRADICTION)
        assert 0 <= i < grid.shape[0] and 0 <= j < grid.shape[1]
        return
    assert status == kernels.SETTLED
    want_mine, want_free, want_need, want_free_nb = want
    np.testing.assert_array_equal(mine, want_mine)
    np.testing.assert_array_equal(free, want_free)
    revealed = grid >= 0
    np.testing.assert_array_equal(need[revealed], want_need[revealed])
    np.testing.assert_array_equal(free_nb, want_free_nb)


def test_settle_names_the_unsatisfiable_number():
    grid = np.array([[3, -1], [-1, 0]], dtype=np.int8)  # the 3 has two covered cells, and the 0 says none
    mine, free = np.zeros((2, 2), bool), grid < 0
    status, i, j, need, free_nb = kernels.settle(grid, mine, free)
    assert (status, i, j, need[0, 0], free_nb[0, 0]) == (kernels.UNSATISFIABLE, 0, 0, 3, 2)


def test_settle_proves_a_chain():
    # The zeros clear (1, 1) in the first round; then the middle 1 has one covered cell left.
    grid = np.array([[1, 1, 0], [-1, -1, 0]], dtype=np.int8)
    mine, free = np.zeros((2, 3), bool), grid < 0
    status, *_ = kernels.settle(grid, mine, free)
    assert status == kernels.SETTLED
    assert mine.tolist() == [[False, False, False], [True, False, False]]
    assert not free.any()


def _boxes_by_dict(is_con, frontier):
    """Boxes and components the plain way: a dict of signatures, then a graph search."""
    ids = -np.ones(is_con.shape, dtype=int)
    ids[is_con] = np.arange(is_con.sum())
    rows, cols = is_con.shape
    by_sig: dict[tuple, int] = {}
    box_of = []
    for i, j in zip(*np.nonzero(frontier), strict=True):
        sig = tuple(sorted(int(ids[x, y]) for x in range(max(i - 1, 0), min(i + 2, rows))
                           for y in range(max(j - 1, 0), min(j + 2, cols)) if ids[x, y] >= 0))
        box_of.append(by_sig.setdefault(sig, len(by_sig)))
    sigs = list(by_sig)
    comp_of, n_comps = [-1] * len(sigs), 0
    for b in range(len(sigs)):
        if comp_of[b] >= 0:
            continue
        comp_of[b], todo = n_comps, [b]
        while todo:
            u = todo.pop()
            for v in range(len(sigs)):
                if comp_of[v] < 0 and set(sigs[u]) & set(sigs[v]):
                    comp_of[v] = n_comps
                    todo.append(v)
        n_comps += 1
    return box_of, sigs, comp_of


@settings(max_examples=150, deadline=None)
@given(boards)
def test_boxes_group_cells_and_components_as_a_dict_and_a_graph_search_do(board):
    from nnsweeper.grid import dilate

    grid, flags = board
    free = (grid < 0) & ~flags
    is_con = (grid >= 0) & (neighbour_sum(free) > 0)
    frontier = free & dilate(is_con)
    box_of, box_cons, n_cons, comp_of, numbers = kernels.boxes(is_con, frontier)
    want_box_of, want_sigs, want_comp_of = _boxes_by_dict(is_con, frontier)
    assert box_of.tolist() == want_box_of
    assert [row[:k] for row, k in zip(box_cons.tolist(), n_cons.tolist(), strict=True)] == \
        [list(s) for s in want_sigs]
    assert comp_of.tolist() == want_comp_of
    # Each number's component and its rank among that component's numbers.
    for x, (k, rank) in enumerate(numbers.tolist()):
        mine = sorted({y for b, s in enumerate(want_sigs) if want_comp_of[b] == k for y in s})
        assert mine.index(x) == rank


@settings(max_examples=150, deadline=None)
@given(boards)
def test_compiled_counting_equals_counting_in_python_integers(board):
    from nnsweeper.engine.counting import count_compiled, count_states
    from nnsweeper.engine.frontier import components, make_plan
    from nnsweeper.errors import InconsistentBoardError

    reduced = _reduced(board)
    if reduced is None:
        return
    for comp in components(reduced.is_con, reduced.need, reduced.front):
        plan = make_plan(comp)
        compiled = count_compiled(plan, reduced.mines_left, 4096)
        try:
            exact = count_states(comp, plan, reduced.mines_left, 10**6)
        except InconsistentBoardError:
            assert compiled is None  # no layout: the exact count names the number
            continue
        assert compiled is not None
        assert (compiled.m_lo, compiled.layouts) == (exact.m_lo, exact.layouts)
        weights = np.array([7**k + 3 for k in range(len(exact.layouts))], dtype=object)
        assert compiled.tallies(weights) == exact.tallies(weights)


def test_compiled_counting_gives_way_to_python_integers_past_int64():
    from nnsweeper.engine.counting import count_compiled, count_states
    from nnsweeper.engine.frontier import components, make_plan, reduce_board
    from nnsweeper.observation import as_observation

    # Zeros on top; below them a 1 on every other cell, each over three covered cells that
    # overlap its neighbours' by one: a single chain whose layouts grow geometrically.
    cols = 400
    grid = np.full((4, cols), -1, dtype=np.int8)
    grid[0, :] = 0
    grid[1, ::2] = 1
    reduced = reduce_board(as_observation(grid, cols // 2))
    (comp,) = components(reduced.is_con, reduced.need, reduced.front)
    plan = make_plan(comp)
    exact = count_states(comp, plan, reduced.mines_left, 10**6)
    assert max(exact.layouts) >= 2**62
    assert count_compiled(plan, reduced.mines_left, 4096) is None


@settings(max_examples=150, deadline=None)
@given(boards)
def test_frontier_components_and_plans_are_those_of_the_python_lists(board):
    from nnsweeper.engine.frontier import Frontier, components, make_plan

    reduced = _reduced(board)
    if reduced is None:
        return
    comps = components(reduced.is_con, reduced.need, reduced.front)
    frame = Frontier(reduced)
    assert frame.n == len(comps)
    for k, comp in enumerate(comps):
        flat = frame.component(k)
        assert [c.tolist() for c in flat.cells] == [c.tolist() for c in comp.cells]
        assert (flat.sizes, flat.box_cons, flat.need) == (comp.sizes, comp.box_cons, comp.need)
        assert flat.where.flat.tolist() == comp.where.flat.tolist()
        plan = make_plan(comp)
        want = [len(plan), max(len(step.keep) for step in plan)]
        for step in plan:
            want += (step.size, len(step.opened), *step.opened, len(step.touched))
            for pos, room in step.touched:
                want += (pos, room)
            want += (len(step.keep), *step.keep)
        spec, order = kernels.plan_spec(frame.desc[frame.comp_desc[k]:frame.comp_desc[k + 1]])
        assert spec.tolist() == want
        assert order.tolist() == [step.box for step in plan]


@settings(max_examples=150, deadline=None)
@given(boards)
def test_counting_a_description_equals_counting_in_python_integers(board):
    from nnsweeper.engine.counting import count_states, no_layout
    from nnsweeper.engine.frontier import Frontier, make_plan
    from nnsweeper.errors import InconsistentBoardError

    reduced = _reduced(board)
    if reduced is None:
        return
    frame = Frontier(reduced)
    for k in range(frame.n):
        comp = frame.component(k)
        ok, m_lo, layouts, by_box = kernels.count_component(
            frame.desc[frame.comp_desc[k]:frame.comp_desc[k + 1]], reduced.mines_left, 4096)
        try:
            exact = count_states(comp, make_plan(comp), reduced.mines_left, 10**6)
        except InconsistentBoardError as e:
            # No layout: the kernel names the box where the count ran dry, as the message does.
            assert not ok and m_lo >= 0
            assert str(no_layout(comp, comp.box_cons[m_lo][0], reduced.mines_left)) == str(e)
            continue
        assert ok
        assert (m_lo, tuple(layouts.tolist())) == (exact.m_lo, exact.layouts)
        weights = [7**i + 3 for i in range(len(exact.layouts))]
        assert [sum(t * w for t, w in zip(row, weights, strict=True)) for row in by_box.tolist()] == \
            exact.tallies(weights)


def _forced_guess_in_python(grid, mines):
    """The search solver's forced guess, cell by cell with sets (what the kernel was written from)."""
    from nnsweeper.grid import neighbours

    rows, cols = grid.shape
    unknown = (grid < 0) & ~mines
    for i, j in np.argwhere(grid >= 0):
        nb = neighbours(i, j, rows, cols)
        free = [(x, y) for x, y in nb if unknown[x, y]]
        if len(free) != 2 or grid[i, j] - sum(bool(mines[x, y]) for x, y in nb) != 1:
            continue
        p, q = free
        around_p = set(neighbours(*p, rows, cols)) - {q}
        around_q = set(neighbours(*q, rows, cols)) - {p}
        if all(mines[x, y] for x, y in around_p ^ around_q):
            def living(cell):
                return sum(bool(unknown[x, y]) for x, y in neighbours(*cell, rows, cols))
            return (p, q) if living(p) >= living(q) else (q, p)
    return None


@settings(max_examples=300, deadline=None)
@given(boards, st.floats(0.0, 1.0))
def test_forced_pair_is_the_python_forced_guess(board, known):
    from nnsweeper.solvers.search import forced_guess

    grid, flags = board
    # Known mines beyond the flags: some covered cells, right or wrong (the rule trusts them).
    rng = np.random.default_rng(int(grid.sum()) + grid.size)
    mines = flags | ((grid < 0) & (rng.random(grid.shape) < known))
    want = _forced_guess_in_python(grid, mines)
    got = forced_guess(grid, mines)
    assert got == (None if want is None else tuple((int(x), int(y)) for x, y in want))


class _EndgameInPython:
    """The endgame search as a plain recursion over Python-int bit sets (the reference
    the compiled search is held to: the same values, best cells and positions expanded)."""

    def __init__(self, layouts, grid, node_limit):
        from nnsweeper.grid import neighbour_sum

        n = layouts.shape[0]
        flat = layouts.reshape(n, -1)
        covered = np.flatnonzero((grid < 0).ravel())
        self.cells = covered[~flat[:, covered].all(axis=0)]
        counts = neighbour_sum(layouts).reshape(n, -1)[:, self.cells]
        self.values = np.where(flat[:, self.cells], -1, counts)
        self.sets = []  # per cell: (mine set, number sets ascending)
        for col in self.values.T:
            sets = {int(v): self._bits(col == v) for v in np.unique(col)}
            self.sets.append((sets.pop(-1, 0), list(sets.values())))
        self.node_limit, self.nodes, self.memo = node_limit, 0, {}

    @staticmethod
    def _bits(mask):
        return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")

    def best_move(self, grid):
        shown = grid.ravel()[self.cells]
        ok = np.ones(self.values.shape[0], dtype=bool)
        for k in np.flatnonzero(shown >= 0):
            ok &= self.values[:, k] == shown[k]
        s = self._bits(ok)
        self.nodes = 0
        wins = self.win(s)
        col = self.memo.get(s, (wins, -1))[1]
        return None if col < 0 else (int(self.cells[col]), wins, s.bit_count())

    def win(self, s):
        n = s.bit_count()
        if n <= 1:
            return n
        if s in self.memo:
            return self.memo[s][0]
        self.nodes += 1
        if self.nodes > self.node_limit:
            raise SearchBudgetExceeded
        parts, guesses = [s], []
        for c, (mine, shows) in enumerate(self.sets):
            m = (s & mine).bit_count()
            if m == 0:
                if len(shows) > 1:
                    parts = [q for p in parts for x in shows if (q := p & x)]
            elif m < n:
                guesses.append((m, c))
        best, col = (0, -1) if len(parts) > 1 else (-1, -1)
        if len(parts) > 1:
            best = sum(self.win(p) for p in parts)
        else:
            for m, c in sorted(guesses):
                if n - m <= best:
                    break
                w = sum(self.win(q) for x in self.sets[c][1] if (q := s & x))
                if w > best:
                    best, col = w, c
        self.memo[s] = (best, col)
        return best


def _endgame_position(rows, cols, mines, shown, seed):
    from nnsweeper.grid import neighbour_sum

    rng = np.random.default_rng(seed)
    lay = np.zeros(rows * cols, dtype=bool)
    lay[rng.choice(rows * cols, mines, replace=False)] = True
    lay = lay.reshape(rows, cols)
    counts = neighbour_sum(lay)
    grid = np.where((rng.random((rows, cols)) < shown) & ~lay, counts, -1).astype(np.int8)
    return grid, lay, counts, rng


@settings(max_examples=120, deadline=None)
@given(st.integers(2, 5), st.integers(2, 6), st.integers(1, 6), st.floats(0.0, 0.6),
       st.integers(0, 2**32 - 1), st.sampled_from([3, 30, 10**6]))
def test_compiled_endgame_expands_the_positions_of_the_plain_recursion(rows, cols, mines, shown, seed,
                                                                        node_limit):
    import nnsweeper as ns
    from nnsweeper.solvers.endgame import Endgame

    mines = min(mines, rows * cols - 1)
    grid, lay, counts, rng = _endgame_position(rows, cols, mines, shown, seed)
    try:
        layouts = ns.enumerate_layouts(grid, mines, limit=2000)
    except ValueError:  # too many layouts for an endgame
        return
    compiled = Endgame(layouts, grid, node_limit)
    plain = _EndgameInPython(layouts, grid, node_limit)
    # A game played from here: each move asks both, then reveals a safe cell of the true layout.
    for _ in range(4):
        try:
            want = plain.best_move(grid)
        except SearchBudgetExceeded:
            with pytest.raises(SearchBudgetExceeded, match=f"more than {node_limit} positions"):
                compiled.best_move(grid)
            assert compiled.nodes == plain.nodes == node_limit + 1
            return
        got = compiled.best_move(grid)
        assert compiled.nodes == plain.nodes
        if want is None:
            assert got is None
        else:
            cell, wins, n = want
            assert got == (divmod(cell, cols), wins, n)
        safe = np.argwhere((grid < 0) & ~lay)
        if not len(safe):
            return
        i, j = safe[rng.integers(len(safe))]
        grid = grid.copy()
        grid[i, j] = counts[i, j]


def test_kernels_compile_without_a_cache_where_numba_can_write_none(monkeypatch):
    """An unwritable home and installation: numba refuses cache=True at decoration ("no locator
    available"); the kernels then compile in the process instead of failing the import."""
    import numba

    from nnsweeper.engine import kernels

    calls = []

    def njit(*args, **options):
        calls.append(options)
        if options.get("cache"):
            raise RuntimeError("cannot cache function 'f': no locator available for file '<here>'")
        return numba.njit(*args, **options)

    monkeypatch.setattr(kernels, "njit", njit)

    @kernels.compiled
    def twice(x):
        return 2 * x

    assert twice(21) == 42 and calls == [{"cache": True}, {}]
