"""The compiled single-point rules against the whole-array ones of nnsweeper.grid."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nnsweeper import _kernels
from nnsweeper.grid import neighbour_sum, single_point_rules


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


@settings(max_examples=150, deadline=None)
@given(boards)
def test_rules_once_is_single_point_rules(board):
    grid, flags = board
    free = (grid < 0) & ~flags
    _, _, safe, mines = single_point_rules(grid, flags, free)
    got_safe, got_mines = _kernels.rules_once(grid, flags, free)
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
    status, i, j, need, free_nb = _kernels.settle(grid, mine, free)
    want = _settle_by_rounds(grid, flags)
    if want is None:
        assert status in (_kernels.UNSATISFIABLE, _kernels.CONTRADICTION)
        assert 0 <= i < grid.shape[0] and 0 <= j < grid.shape[1]
        return
    assert status == _kernels.SETTLED
    want_mine, want_free, want_need, want_free_nb = want
    np.testing.assert_array_equal(mine, want_mine)
    np.testing.assert_array_equal(free, want_free)
    revealed = grid >= 0
    np.testing.assert_array_equal(need[revealed], want_need[revealed])
    np.testing.assert_array_equal(free_nb, want_free_nb)


def test_settle_names_the_unsatisfiable_number():
    grid = np.array([[3, -1], [-1, 0]], dtype=np.int8)  # the 3 has two covered cells, and the 0 says none
    mine, free = np.zeros((2, 2), bool), grid < 0
    status, i, j, need, free_nb = _kernels.settle(grid, mine, free)
    assert (status, i, j, need[0, 0], free_nb[0, 0]) == (_kernels.UNSATISFIABLE, 0, 0, 3, 2)


def test_settle_proves_a_chain():
    # The zeros clear (1, 1) in the first round; then the middle 1 has one covered cell left.
    grid = np.array([[1, 1, 0], [-1, -1, 0]], dtype=np.int8)
    mine, free = np.zeros((2, 3), bool), grid < 0
    status, *_ = _kernels.settle(grid, mine, free)
    assert status == _kernels.SETTLED
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
    box_of, box_cons, n_cons, comp_of, numbers = _kernels.boxes(is_con, frontier)
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
    from nnsweeper.errors import InconsistentBoardError
    from nnsweeper.observation import as_observation
    from nnsweeper.probability import _components, _count_compiled, _count_states, _plan, _reduce

    grid, flags = board
    covered = int((grid < 0).sum())
    try:
        reduced = _reduce(as_observation(grid, max(int(flags.sum()), covered // 3), flags))
    except InconsistentBoardError:
        return
    if not reduced.front.any():
        return
    for comp in _components(reduced.is_con, reduced.need, reduced.front):
        plan = _plan(comp)
        compiled = _count_compiled(plan, reduced.mines_left, 4096)
        try:
            exact = _count_states(comp, plan, reduced.mines_left, 10**6)
        except InconsistentBoardError:
            assert compiled is None  # no layout: the exact count names the number
            continue
        assert compiled is not None
        assert (compiled.m_lo, compiled.layouts) == (exact.m_lo, exact.layouts)
        weights = np.array([7**k + 3 for k in range(len(exact.layouts))], dtype=object)
        assert compiled.tallies(weights) == exact.tallies(weights)


def test_compiled_counting_gives_way_to_python_integers_past_int64():
    from nnsweeper.observation import as_observation
    from nnsweeper.probability import _components, _count_compiled, _count_states, _plan, _reduce

    # Zeros on top; below them a 1 on every other cell, each over three covered cells that
    # overlap its neighbours' by one: a single chain whose layouts grow geometrically.
    cols = 400
    grid = np.full((4, cols), -1, dtype=np.int8)
    grid[0, :] = 0
    grid[1, ::2] = 1
    reduced = _reduce(as_observation(grid, cols // 2))
    (comp,) = _components(reduced.is_con, reduced.need, reduced.front)
    plan = _plan(comp)
    exact = _count_states(comp, plan, reduced.mines_left, 10**6)
    assert max(exact.layouts) >= 2**62
    assert _count_compiled(plan, reduced.mines_left, 4096) is None
