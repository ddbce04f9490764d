"""The exact mine-probability engine against independent exact counts.

The engine promises the float64 nearest to each exact probability (a ratio of two
layout counts, rounded once), so every comparison below is bit for bit:
``p == float(Fraction(...))``, and layout counts compare as integers.

Two references, both in exact rational arithmetic:

* ``brute_force`` enumerates every placement of the remaining mines over every
  covered, unflagged cell (small boards only);
* ``frontier_brute_force`` enumerates the frontier cells only, by backtracking in
  column order, and weights each frontier layout by ``C(interior cells, mines left)``
  (long, narrow boards whose frontier has few solutions).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from math import comb
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nnsweeper as ns
from nnsweeper import InconsistentBoardError, InvalidBoardError, mine_probabilities
from nnsweeper.engine import counting, probability
from nnsweeper.grid import neighbour_sum


# ----------------------------------------------------------------- references
def _neighbourhood(i, j, rows, cols):
    return [
        (i + di, j + dj)
        for di in (-1, 0, 1)
        for dj in (-1, 0, 1)
        if (di, dj) != (0, 0) and 0 <= i + di < rows and 0 <= j + dj < cols
    ]


def _numbers(grid, flags):
    """Every revealed number as (its covered unflagged neighbours, mines they must hold)."""
    rows, cols = grid.shape
    out = []
    for i in range(rows):
        for j in range(cols):
            if grid[i, j] >= 0:
                nb = _neighbourhood(i, j, rows, cols)
                cells = [(x, y) for x, y in nb if grid[x, y] == -1 and not flags[x, y]]
                flagged = sum(bool(flags[x, y]) for x, y in nb)
                out.append((cells, int(grid[i, j]) - flagged))
    return out


def brute_force(grid, total_mines, flags=None):
    """``(P(mine) per cell as a dict of Fractions, number of layouts)`` over all layouts;
    None when no layout fits."""
    grid = np.asarray(grid)
    flags = np.zeros(grid.shape, dtype=bool) if flags is None else np.asarray(flags, dtype=bool)
    rows, cols = grid.shape
    unknown = [
        (i, j) for i in range(rows) for j in range(cols) if grid[i, j] == -1 and not flags[i, j]
    ]
    k = total_mines - int(flags.sum())
    if not 0 <= k <= len(unknown):
        return None
    index = {cell: u for u, cell in enumerate(unknown)}
    numbers = _numbers(grid, flags)
    adjacency = np.zeros((len(numbers), len(unknown)), dtype=np.int64)
    for n, (cells, _) in enumerate(numbers):
        for cell in cells:
            adjacency[n, index[cell]] = 1
    need = np.array([need for _, need in numbers], dtype=np.int64)

    combos = list(itertools.combinations(range(len(unknown)), k))
    layouts = np.zeros((len(combos), len(unknown)), dtype=np.int64)
    for row, combo in enumerate(combos):
        layouts[row, list(combo)] = 1
    fits = np.all(layouts @ adjacency.T == need[None, :], axis=1)
    n_fit = int(fits.sum())
    if n_fit == 0:
        return None
    mines_per_cell = layouts[fits].sum(axis=0)
    exact = {}
    for i in range(rows):
        for j in range(cols):
            if grid[i, j] != -1:
                exact[i, j] = Fraction(0)
            elif flags[i, j]:
                exact[i, j] = Fraction(1)
            else:
                exact[i, j] = Fraction(int(mines_per_cell[index[i, j]]), n_fit)
    return exact, n_fit


def frontier_brute_force(grid, total_mines, flags=None):
    """Like :func:`brute_force`, by backtracking over the frontier cells only.

    Each frontier layout with ``m`` mines stands for ``C(interior, mines_left - m)``
    full layouts.
    """
    grid = np.asarray(grid)
    flags = np.zeros(grid.shape, dtype=bool) if flags is None else np.asarray(flags, dtype=bool)
    rows, cols = grid.shape
    numbers = [(cells, need) for cells, need in _numbers(grid, flags) if cells or need != 0]
    if any(not cells for cells, _ in numbers):
        return None
    # Column by column, so that a long, narrow chain is swept from one end to the other.
    frontier = sorted({cell for cells, _ in numbers for cell in cells}, key=lambda xy: xy[::-1])
    index = {cell: f for f, cell in enumerate(frontier)}
    cons_cells = [[index[c] for c in cells] for cells, _ in numbers]
    cons_need = [need for _, need in numbers]
    cell_cons = [[] for _ in frontier]
    for n, cells in enumerate(cons_cells):
        for f in cells:
            cell_cons[f].append(n)
    n_unknown = int(((grid == -1) & ~flags).sum())
    n_interior = n_unknown - len(frontier)
    mines_left = total_mines - int(flags.sum())

    placed = [0] * len(numbers)  # mines placed so far around each number
    open_ = [len(c) for c in cons_cells]  # its cells still unassigned
    assign = [0] * len(frontier)
    layouts: dict[int, int] = {}  # frontier mine count -> frontier layouts
    per_cell: dict[int, list[int]] = {}  # frontier mine count -> mines per frontier cell

    def visit(f, m):
        if f == len(frontier):
            layouts[m] = layouts.get(m, 0) + 1
            tally = per_cell.setdefault(m, [0] * len(frontier))
            for g, a in enumerate(assign):
                tally[g] += a
            return
        for a in (0, 1):
            if m + a > mines_left:
                continue
            ok = True
            for n in cell_cons[f]:
                placed[n] += a
                open_[n] -= 1
                if not placed[n] <= cons_need[n] <= placed[n] + open_[n]:
                    ok = False
            if ok:
                assign[f] = a
                visit(f + 1, m + a)
                assign[f] = 0
            for n in cell_cons[f]:
                placed[n] -= a
                open_[n] += 1

    visit(0, 0)
    weight = {
        m: comb(n_interior, mines_left - m) for m in layouts if 0 <= mines_left - m <= n_interior
    }
    z = sum(weight[m] * layouts[m] for m in weight)
    if z == 0:
        return None
    exact = {}
    for i in range(rows):
        for j in range(cols):
            if grid[i, j] != -1:
                exact[i, j] = Fraction(0)
            elif flags[i, j]:
                exact[i, j] = Fraction(1)
            elif (i, j) in index:
                f = index[i, j]
                exact[i, j] = Fraction(sum(weight[m] * per_cell[m][f] for m in weight), z)
            else:
                exact[i, j] = Fraction(
                    sum(weight[m] * layouts[m] * (mines_left - m) for m in weight), z * n_interior
                )
    return exact, z


# ------------------------------------------------------------------ positions
def visible(mines, revealed):
    """Visible grid of a layout: neighbour counts on revealed cells, -1 elsewhere."""
    rows, cols = mines.shape
    grid = np.full((rows, cols), -1, dtype=np.int8)
    for i in range(rows):
        for j in range(cols):
            if revealed[i, j]:
                grid[i, j] = sum(bool(mines[x, y]) for x, y in _neighbourhood(i, j, rows, cols))
    return grid


@st.composite
def positions(draw, max_rows=5, max_cols=6, max_unknown=14, perturb=False):
    """A visible board from a real random layout: (grid, total_mines, flags).

    Cells are opened in a random order, or outwards from a random cell (safe ones
    revealed, mines flagged or left covered), until a drawn number of covered,
    unflagged cells remain (at most ``max_unknown``, so that brute force stays fast).
    With ``perturb``, some numbers and the mine count may be changed, so that many
    positions fit no layout at all.
    """
    rows = draw(st.integers(1, max_rows))
    cols = draw(st.integers(1, max_cols))
    n = rows * cols
    density = draw(st.integers(0, 6))  # tenths of the cells
    mines = np.array(draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))) < density
    flag_mine = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    order = draw(st.permutations(range(n)))
    if draw(st.booleans()):
        # Open outwards from one cell, as in play: a revealed area, a frontier, an interior.
        si, sj = divmod(draw(st.integers(0, n - 1)), cols)
        noise = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
        rank = {cell: t for t, cell in enumerate(order)}
        order = sorted(
            range(n),
            key=lambda x: (max(abs(x // cols - si), abs(x % cols - sj)) + noise[x], rank[x]),
        )
    keep_unknown = draw(st.integers(min(n // 3, max_unknown), min(max_unknown, max(n - 1, 0))))
    revealed = np.zeros(n, dtype=bool)
    flags = np.zeros(n, dtype=bool)
    unknown = n
    for cell in order:
        if unknown <= keep_unknown:
            break
        if not mines[cell]:
            revealed[cell] = True
            unknown -= 1
        elif flag_mine[cell]:
            flags[cell] = True
            unknown -= 1
    # Mines left unflagged above may still leave too many cells for brute force.
    for cell in order:
        if unknown <= max_unknown:
            break
        if mines[cell] and not flags[cell]:
            flags[cell] = True
            unknown -= 1
    mines = mines.reshape(rows, cols)
    revealed = revealed.reshape(rows, cols)
    flags = flags.reshape(rows, cols)
    grid = visible(mines, revealed)
    total = int(mines.sum())
    if perturb:
        shown = np.argwhere(revealed)
        for _ in range(draw(st.integers(0, 2))):
            if len(shown):
                i, j = shown[draw(st.integers(0, len(shown) - 1))]
                grid[i, j] = draw(st.integers(0, 8))
        total = max(0, total + draw(st.integers(-2, 2)))
    return grid, total, flags


def board_text(grid, flags):
    """Rows of ``.`` (covered), ``F`` (flag) and digits, for failure messages."""
    return "\n".join(
        "".join("F" if f else "." if v == -1 else str(v) for v, f in zip(row, frow, strict=True))
        for row, frow in zip(grid, flags, strict=True)
    )


def assert_matches(grid, total, flags, reference):
    """The engine agrees with an exact reference ``(probabilities, layouts)``, or both
    find that no layout fits (``reference`` is None)."""
    where = f"\n{board_text(grid, flags)}\ntotal_mines={total}"
    grid_before, flags_before = grid.copy(), flags.copy()
    if reference is None:
        with pytest.raises(InconsistentBoardError):
            mine_probabilities(grid, total, flags)
        with pytest.raises(InconsistentBoardError):
            ns.engine.count_layouts(grid, total, flags)
        return
    exact, layouts = reference
    analysis = ns.analyze(grid, total, flags)
    p = analysis.probabilities
    assert np.array_equal(grid, grid_before), "the grid was changed"
    assert np.array_equal(flags, flags_before), "the flags were changed"
    assert p.dtype == np.float64 and p.shape == grid.shape
    assert np.array_equal(p, mine_probabilities(grid, total, flags))
    for (i, j), q in exact.items():
        got = float(p[i, j])
        assert got == float(q), f"P{(i, j)} = {got!r}, exact {q} rounds to {float(q)!r}{where}"
    assert np.all(p[grid != -1] == 0.0)
    assert np.all(p[flags] == 1.0)
    unknown = (grid == -1) & ~flags
    assert np.array_equal(analysis.unknown, unknown)
    assert np.array_equal(analysis.safe, unknown & (p == 0.0))
    assert np.array_equal(analysis.mines, unknown & (p == 1.0))
    assert analysis.layouts == layouts, where
    assert analysis.log_layouts == math.log(layouts), where
    assert ns.engine.count_layouts(grid, total, flags) == layouts, where
    # The exact count behind every probability: P times the layouts, an integer.
    for (i, j), q in exact.items():
        assert analysis.mine_layouts((i, j)) == q * layouts, f"mine layouts at {(i, j)}{where}"
    for i, j in zip(*np.nonzero(flags), strict=True):
        assert analysis.mine_layouts((int(i), int(j))) == layouts
    for i, j in zip(*np.nonzero(grid >= 0), strict=True):
        assert analysis.mine_layouts((int(i), int(j))) == 0
    interior = unknown & ~analysis.frontier
    if interior.any():
        assert np.all(p[interior] == analysis.interior_probability)
    else:
        assert analysis.interior_probability is None
    # Any m interior cells are mines in as many layouts as the board counts with them flagged.
    cells = np.argwhere(interior)
    for m in range(1, min(4, len(cells)) + 1):
        assert analysis.interior_mine_layouts(m) == _flagged_count(grid, total, flags, cells[-m:]), (m, where)
    assert analysis.interior_mine_layouts(0) == layouts
    assert analysis.interior_mine_layouts(len(cells) + 1) == 0


def _flagged_count(grid, total, flags, cells) -> int:
    """count_layouts with ``cells`` flagged too (0 where no layout fits)."""
    more = flags.copy()
    more[tuple(np.asarray(cells).T)] = True
    try:
        return ns.engine.count_layouts(grid, total, more)
    except InconsistentBoardError:
        return 0


# ---------------------------------------------------------- property tests
@settings(max_examples=1000)
@given(positions())
def test_consistent_positions_match_brute_force(position):
    grid, total, flags = position
    reference = brute_force(grid, total, flags)
    assert reference is not None  # built from a real layout with flags on real mines
    assert_matches(grid, total, flags, reference)


@settings(max_examples=600)
@given(positions(perturb=True))
def test_perturbed_positions_match_brute_force_or_raise(position):
    grid, total, flags = position
    assert_matches(grid, total, flags, brute_force(grid, total, flags))


@settings(max_examples=600)
@given(positions(perturb=True))
def test_dynamic_program_matches_brute_force(position):
    grid, total, flags = position
    reference = brute_force(grid, total, flags)
    # Every component goes through the dynamic program instead of enumeration.
    with mock.patch.object(probability, "_SMALL_STATES", 0):
        assert_matches(grid, total, flags, reference)


@settings(max_examples=200)
@given(positions(max_rows=9, max_cols=9, max_unknown=60))
def test_python_and_array_counting_agree(position):
    """On boards too big for brute force, both ways of counting a component agree exactly,
    and so do float64 and Python-integer counts in the array program."""
    grid, total, flags = position
    results = []
    ways = [
        (0, 2.0**50),  # array program in float64
        (0, 0.0),  # array program in Python integers from the start
        (0, 2.0**6),  # float64 until a count reaches 64, then Python integers
        (probability._SMALL_STATES, 2.0**50),  # plain Python for small components (the default)
        (100_000, 2.0**50),  # plain Python for all
    ]
    for small, exact in ways:
        with mock.patch.object(probability, "_SMALL_STATES", small), \
                mock.patch.object(counting, "_FLOAT_EXACT", exact):
            try:
                results.append(ns.analyze(grid, total, flags))
            except InconsistentBoardError:
                results.append(None)
    if results[0] is None:
        assert all(r is None for r in results)
        return
    for a in results[1:]:
        assert np.array_equal(a.probabilities, results[0].probabilities)
        assert a.layouts == results[0].layouts


# ------------------------------------------------- correctly rounded results
@pytest.mark.parametrize(
    ("rows", "total", "cell", "exact"),
    [
        (["..", "11"], 1, (0, 0), Fraction(1, 2)),
        (["...", "...", "121"], 3, (0, 1), Fraction(1, 3)),
        (["...", ".1."], 1, (0, 0), Fraction(1, 5)),  # an edge 1 with five covered neighbours
        (["...", ".4."], 4, (1, 0), Fraction(4, 5)),
        (["...", "...", "1.1"], 2, (0, 1), Fraction(2, 7)),
        (["...", "...", "1.1"], 2, (1, 0), Fraction(1, 7)),
        (["." * 17], 5, (0, 8), Fraction(5, 17)),
        (["." * 10, "." * 10, "1" + "." * 9], 7, (1, 0), Fraction(1, 3)),
        (["." * 10, "." * 10, "1" + "." * 9], 7, (0, 5), Fraction(6, 26)),  # 3/13
    ],
)
def test_simple_fractions_are_correctly_rounded(rows, total, cell, exact):
    """``1/5`` is ``0.2``, ``4/5`` is ``0.8``, ``5/17`` is ``0.29411764705882354``: the float
    nearest the exact probability, not a neighbour of it."""
    assert float(exact) == exact.numerator / exact.denominator
    assert probs(rows, total)[cell] == float(exact)


def two_row_chain(cols, mines):
    """Exact count and column-0 mine total for a 3 x ``cols`` board whose middle row is all 2s.

    Column ``c`` holds ``x_c`` in {0, 1, 2} mines (rows 0 and 2, ``C(2, x_c)`` ways), and
    the columns next to each 2 hold two mines together. Returns ``(layouts, sum over
    layouts of the mines in column 0)`` for ``mines`` mines, by a transfer over
    ``(x_{c-1}, x_c, mines so far)``.
    """
    ways = (1, 2, 1)
    states = {(a, b, a + b): (ways[a] * ways[b], a * ways[a] * ways[b])
              for a in range(3) for b in range(3) if a + b == 2}
    for _ in range(2, cols):
        nxt: dict = {}
        for (a, b, m), (n, x0) in states.items():
            c = 2 - a - b
            if 0 <= c <= 2:
                old = nxt.get((b, c, m + c), (0, 0))
                nxt[b, c, m + c] = (old[0] + n * ways[c], old[1] + x0 * ways[c])
        states = nxt
    done = [v for (a, b, m), v in states.items() if a + b == 2 and m == mines]
    return sum(n for n, _ in done), sum(x0 for _, x0 in done)


def test_counts_beyond_float64_are_exact():
    # 2s along the middle of a 3 x 200 board: one component of 400 cells whose count,
    # 2.2e40 layouts, float64 cannot hold; the array program switches to Python integers.
    grid = np.full((3, 200), -1)
    grid[1] = 2
    layouts, column0 = two_row_chain(200, 134)
    assert float(layouts) != layouts
    for small in (probability._SMALL_STATES, 0):
        with mock.patch.object(probability, "_SMALL_STATES", small):
            a = ns.analyze(grid, 134)
        assert a.layouts == layouts
        assert a.probabilities[0, 0] == a.probabilities[2, 0] == float(Fraction(column0, 2 * layouts))
    # The same below three interior rows: the frontier count is weighed by binomials.
    grid = np.vstack([np.full((3, 200), -1), grid])
    a = ns.analyze(grid, 140)
    assert a.layouts == layouts * comb(600, 6)
    assert a.probabilities[0, 0] == 6 / 600


def test_huge_interior_is_exact():
    # 200 x 200 with 8000 mines and a single revealed 1 in the corner.
    grid = np.full((200, 200), -1)
    grid[0, 0] = 1
    a = ns.analyze(grid, 8000)
    assert a.probabilities[0, 1] == a.probabilities[1, 1] == 1 / 3
    assert a.probabilities[100, 100] == 7999 / 39996
    assert a.layouts == 3 * comb(39996, 7999)


# ------------------------------------------------------------------ bounds
def scattered(rows, cols, mines, share, seed):
    """A position no player leaves: safe cells revealed at random all over the board."""
    rng = np.random.default_rng(seed)
    layout = np.zeros(rows * cols, dtype=bool)
    layout[rng.choice(rows * cols, mines, replace=False)] = True
    safe = np.flatnonzero(~layout)
    revealed = np.zeros(rows * cols, dtype=bool)
    revealed[rng.choice(safe, int(share * safe.size), replace=False)] = True
    layout, revealed = layout.reshape(rows, cols), revealed.reshape(rows, cols)
    return np.where(revealed, neighbour_sum(layout), -1)


def test_wide_frontier_is_refused_with_the_limit():
    # A dense 60 x 60 position with a third of the safe cells revealed at random: its
    # frontier is one web of hundreds of cells. The default bound refuses it in seconds;
    # a small one at once.
    grid = scattered(60, 60, 700, 0.35, seed=0)
    refused = r"frontier component of \d+ cells around .*max_states=4,096"
    with pytest.raises(ns.EngineLimitError, match=refused):
        mine_probabilities(grid, 700, max_states=4096)
    assert issubclass(ns.EngineLimitError, ns.NnsweeperError)


def test_wide_component_counts_agree():
    # An expert board revealed at random: one component of 185 cells. The compiled
    # program, the whole-array program and the plain Python program all agree exactly.
    grid = scattered(16, 30, 99, 0.25, seed=3)
    compiled = ns.analyze(grid, 99)
    arrays = mock.Mock(wraps=counting.count_arrays)
    with mock.patch.object(probability._CACHE, "maxsize", 0), \
            mock.patch.object(probability, "_COMPILED_STATES", 1), \
            mock.patch.object(probability, "count_arrays", arrays):
        probability.clear_cache()
        wide = ns.analyze(grid, 99)
        assert arrays.called
        with mock.patch.object(probability, "_SMALL_STATES", 10**9):
            python = ns.analyze(grid, 99)
    for other in (wide, python):
        assert np.array_equal(compiled.probabilities, other.probabilities)
        assert compiled.layouts == other.layouts
    with pytest.raises(ns.EngineLimitError, match=r"more than [\d,]+ partial solutions .*max_states=256"):
        ns.analyze(grid, 99, max_states=256)


@pytest.mark.parametrize("bad", [0, -5, 2.5, True, "many"])
def test_max_states_must_be_a_positive_integer(bad):
    with pytest.raises(InvalidBoardError, match="max_states must be"):
        mine_probabilities(np.full((2, 2), -1), 1, max_states=bad)


@st.composite
def chains(draw, max_cols=40):
    """A 3 x W board: interior row 0, frontier row 1, numbers in row 2 (some left covered)."""
    cols = draw(st.integers(2, max_cols))
    mines = np.zeros((3, cols), dtype=bool)
    mines[0] = draw(st.lists(st.booleans(), min_size=cols, max_size=cols))
    mines[1] = draw(st.lists(st.booleans(), min_size=cols, max_size=cols))
    holes = np.array(draw(st.lists(st.integers(0, 5), min_size=cols, max_size=cols))) == 0
    mines[2] = holes & np.array(draw(st.lists(st.booleans(), min_size=cols, max_size=cols)))
    revealed = np.zeros((3, cols), dtype=bool)
    revealed[2] = ~holes
    return visible(mines, revealed), int(mines.sum()), np.zeros((3, cols), dtype=bool)


@settings(max_examples=150)
@given(chains())
def test_long_chains_match_frontier_brute_force(position):
    grid, total, flags = position
    reference = frontier_brute_force(grid, total, flags)
    assert reference is not None
    assert_matches(grid, total, flags, reference)
    with mock.patch.object(probability, "_SMALL_STATES", 0):
        assert_matches(grid, total, flags, reference)


def test_references_agree():
    """The two references give the same answer where both apply."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        mines = rng.random((3, 5)) < 0.3
        revealed = np.zeros((3, 5), dtype=bool)
        revealed[2] = ~mines[2]
        grid, total = visible(mines, revealed), int(mines.sum())
        flags = np.zeros_like(mines)
        assert brute_force(grid, total, flags) == frontier_brute_force(grid, total, flags)


# ------------------------------------------------------- hand-made boards
def probs(rows, total, flags=None):
    """Parse rows of ``.``/digits and run the engine."""
    grid = np.array([[-1 if ch == "." else int(ch) for ch in row] for row in rows])
    return mine_probabilities(grid, total, flags)


def test_one_two_one():
    # Frontier row 1 over the numbers 1 2 1: mines under the 1s, the 2's cell safe.
    p = probs(["...", "...", "121"], total=3)
    assert p[1].tolist() == [1.0, 0.0, 1.0]
    assert p[0].tolist() == [1 / 3] * 3
    assert np.all(p[2] == 0.0)


def test_one_two_two_one():
    p = probs(["....", "1221"], total=2)
    assert p[0].tolist() == [0.0, 1.0, 1.0, 0.0]


def test_fifty_fifty():
    p = probs(["..", "11"], total=1)
    assert p.tolist() == [[0.5, 0.5], [0.0, 0.0]]


@pytest.mark.parametrize(
    ("rows", "cols", "mines"), [(9, 9, 10), (16, 16, 40), (16, 30, 99), (1, 1, 1)]
)
def test_interior_only(rows, cols, mines):
    p = mine_probabilities(np.full((rows, cols), -1), mines)
    assert np.all(p == mines / (rows * cols))


def test_interior_only_with_flags():
    flags = np.zeros((4, 4), dtype=bool)
    flags[0, :3] = True
    p = mine_probabilities(np.full((4, 4), -1), 5, flags)
    assert np.all(p[flags] == 1.0)
    assert np.all(p[~flags] == 2 / 13)


def test_no_mines_left():
    p = mine_probabilities(np.full((3, 3), -1), 0)
    assert np.all(p == 0.0)
    flags = np.eye(3, dtype=bool)
    p = mine_probabilities(np.full((3, 3), -1), 3, flags)
    assert np.array_equal(p, flags.astype(float))


def test_every_cell_a_mine():
    assert np.all(mine_probabilities(np.full((2, 3), -1), 6) == 1.0)


def test_global_count_decides():
    # Numbers (1,0) and (1,2) both see b=(0,1) and d=(1,1); a=(0,0) and c=(0,2) see one
    # each. Layouts: {b}, {d} (one mine) and {a, c} (two mines).
    rows = ["...", "1.1"]
    assert probs(rows, total=1).tolist() == [[0.0, 0.5, 0.0], [0.0, 0.5, 0.0]]
    assert probs(rows, total=2).tolist() == [[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    with pytest.raises(InconsistentBoardError):
        probs(rows, total=3)


def test_global_count_weights_frontier_layouts():
    # The same frontier below an interior row: {b} and {d} leave one mine for the 3
    # interior cells (3 layouts each), {a, c} leaves none (1 layout).
    p = probs(["...", "...", "1.1"], total=2)
    assert p[1].tolist() == [1 / 7, 3 / 7, 1 / 7]
    assert p[2, 1] == 3 / 7
    assert p[0].tolist() == [2 / 7] * 3
    assert ns.analyze(np.array([[-1] * 3, [-1] * 3, [1, -1, 1]]), 2).layouts == 7


def test_long_one_chain_two_sided():
    # 1s along the middle of a 3 x 40 board: mines in columns 0, 3, ..., 39, one per
    # column, either above or below. Far beyond outright enumeration (3**40 box counts).
    grid = np.full((3, 40), -1)
    grid[1] = 1
    p = mine_probabilities(grid, 14)
    expected = np.zeros(40)
    expected[::3] = 0.5
    assert np.array_equal(p[0], expected)
    assert np.array_equal(p[2], expected)
    assert np.all(p[:, 1::3] == 0.0) and np.all(p[:, 2::3] == 0.0)
    assert np.all(p[1] == 0.0)
    assert ns.analyze(grid, 14).layouts == 2**14
    with pytest.raises(InconsistentBoardError):
        mine_probabilities(grid, 13)


def test_long_one_chain_with_interior():
    # Row 0 interior (40 cells), row 1 frontier, row 2 the numbers 1 in columns 1..38.
    # Frontier layouts: mines at columns 1, 4, ..., 37 or 2, 5, ..., 38 (13 mines), or
    # at 3, 6, ..., 36 plus one of (1,0)/(2,0) and one of (1,39)/(2,39) (14 mines, 4 ways).
    grid = np.full((3, 40), -1)
    grid[2, 1:39] = 1
    total = 20
    w13, w14 = comb(40, total - 13), comb(40, total - 14)
    z = 2 * w13 + 4 * w14
    expected = np.zeros((3, 40))
    expected[1, 1:39:3] = w13 / z
    expected[1, 2:39:3] = w13 / z
    expected[1, 3:37:3] = 4 * w14 / z
    expected[1, 0] = expected[2, 0] = expected[1, 39] = expected[2, 39] = 2 * w14 / z
    expected[0, :] = (2 * w13 * (total - 13) + 4 * w14 * (total - 14)) / (40 * z)
    p = mine_probabilities(grid, total)
    assert np.array_equal(p, expected)
    assert np.all(p[2, 1:39] == 0.0)
    assert ns.analyze(grid, total).layouts == z
    assert_matches(grid, total, np.zeros(grid.shape, dtype=bool), frontier_brute_force(grid, total))


def test_large_board_small_frontier():
    # Expert board with one revealed 1 in the corner: its three neighbours share one mine.
    grid = np.full((16, 30), -1)
    grid[0, 0] = 1
    p = mine_probabilities(grid, 99)
    assert p[0, 1] == p[1, 0] == p[1, 1] == 1 / 3
    assert p[5, 5] == 98 / 476
    assert ns.analyze(grid, 99).layouts == 3 * comb(476, 98)
    assert ns.analyze(grid, 99).log_layouts == math.log(3 * comb(476, 98))


def test_revealed_and_flagged_cells():
    grid = np.array([[-1, -1, 1], [-1, 2, 1], [0, 0, 0]])
    flags = np.zeros((3, 3), dtype=bool)
    flags[0, 0] = True
    assert_matches(grid, 2, flags, brute_force(grid, 2, flags))
    p = mine_probabilities(grid, 2, flags)
    assert p[0, 0] == 1.0 and p[0, 1] == 1.0 and p[1, 0] == 0.0


def test_inconsistent_numbers():
    with pytest.raises(InconsistentBoardError, match=r"\(0, 1\)"):
        probs([".3"], total=1)  # a 3 with a single covered neighbour
    with pytest.raises(InconsistentBoardError):
        probs(["..", "10"], total=1)  # the 0 says both covered cells are safe
    with pytest.raises(InconsistentBoardError):
        probs(["...", "..."], total=7)  # more mines than cells


def test_board_errors_are_value_errors():
    for error in (InconsistentBoardError, InvalidBoardError):
        assert issubclass(error, ns.NnsweeperError) and issubclass(error, ValueError)


def test_accepts_lists_and_float_grids():
    rows = [[-1, -1], [1, 1]]
    expected = [[0.5, 0.5], [0.0, 0.0]]
    assert mine_probabilities(rows, 1).tolist() == expected
    assert mine_probabilities(np.array(rows, dtype=float), np.int64(1)).tolist() == expected


@pytest.mark.parametrize("mines", [1.0, "1", None, [1], np.array([1])])
def test_mine_count_must_be_an_integer(mines):
    with pytest.raises(InvalidBoardError, match="total_mines must be an integer"):
        mine_probabilities([[-1, -1], [1, 1]], mines)


@pytest.mark.parametrize("flags", [np.full((2, 2), np.nan), np.full((2, 2), 2), np.full((2, 2), "x")])
def test_flags_must_be_boolean(flags):
    with pytest.raises(InvalidBoardError, match="flags must be a boolean array"):
        mine_probabilities([[-1, -1], [1, 1]], 1, flags)


# --------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("grid", "match"),
    [
        (np.array([-1, 1]), r"2-D.*\(2,\)"),
        (np.full((2, 2, 2), -1), r"2-D.*\(2, 2, 2\)"),
        (np.zeros((0, 3)), r"non-empty.*\(0, 3\)"),
        (np.array([[-1, 9]]), r"got 9 at \(0, 1\)"),
        (np.array([[-2, 0]]), r"got -2 at \(0, 0\)"),
        (np.array([[-1, 0.5]]), r"integers"),
        (np.array([[True, False]]), r"integers"),
    ],
)
def test_rejects_bad_grids(grid, match):
    with pytest.raises(InvalidBoardError, match=match):
        mine_probabilities(grid, 1)


@pytest.mark.parametrize(
    ("total", "match"), [(-1, r"at least 0; got -1"), (2.5, "got 2.5"), (True, "got True")]
)
def test_rejects_bad_mine_counts(total, match):
    with pytest.raises(InvalidBoardError, match=match):
        mine_probabilities(np.full((2, 2), -1), total)


def test_rejects_bad_flags():
    grid = np.array([[-1, 1], [-1, 1]])
    with pytest.raises(InvalidBoardError, match=r"shape \(2, 2\); got \(2, 3\)"):
        mine_probabilities(grid, 1, np.zeros((2, 3), dtype=bool))
    with pytest.raises(InvalidBoardError, match=r"revealed \(0, 1\)"):
        mine_probabilities(grid, 1, np.array([[False, True], [False, False]]))


def test_rejects_more_flags_than_mines():
    flags = np.array([[True, True], [False, False]])
    with pytest.raises(InconsistentBoardError, match="2 flags exceed the 1 mines"):
        mine_probabilities(np.full((2, 2), -1), 1, flags)


def test_combining_too_many_wide_components_is_refused_with_the_limit():
    # Two frontier components apart on a wide board: with no room for the exact
    # combination's big-integer work, the board is refused with a message naming it.
    grid = np.full((3, 12), -1, dtype=np.int8)
    grid[0, 0], grid[0, 11] = 1, 1
    assert ns.analyze(grid, 5).probabilities[0, 1] == pytest.approx(1 / 3)
    probability.clear_cache()
    with mock.patch.object(probability, "_COMBINE_PER_STATE", 0), \
            pytest.raises(ns.EngineLimitError, match=r"combining the 2 frontier components exactly"):
        ns.analyze(grid, 5)


def test_a_probability_rounds_to_certainty_only_when_it_is_certain():
    from nnsweeper.engine.probability import _ratio

    huge = 10**40
    assert _ratio(huge - 1, huge) == np.nextafter(1.0, 0.0)  # int / int alone gives 1.0
    assert (huge - 1) / huge == 1.0
    assert _ratio(1, 10**400) == np.nextafter(0.0, 1.0)  # int / int alone gives 0.0
    assert _ratio(huge, huge) == 1.0 and _ratio(0, huge) == 0.0
    assert _ratio(1, 5) == 0.2 and _ratio(5, 17) == 5 / 17


def test_mine_layouts_on_expert_boards_are_the_counts_with_the_cell_flagged():
    """Past brute force: on every position where csp guessed in two seeded expert games, each
    covered cell's mine layouts are the layouts counted again with that cell flagged (0 where
    no layout fits), so are those of 2 to 5 interior cells together, and count_layouts is
    analyze's count."""
    solver = ns.get_solver("csp", start="corner")
    checked = 0
    for seed in (3, 4):
        env = ns.MinesweeperEnv(16, 30, 99, seed=seed)
        positions: list = []

        def keep(d, positions=positions):
            if d.guessed:
                positions.append((d.grid, d.flags))
        solver.play(env, np.random.default_rng(seed), on_decision=keep)
        for grid, flags in positions[:6]:
            a = ns.analyze(grid, 99, flags)
            assert ns.engine.count_layouts(grid, 99, flags) == a.layouts
            covered = np.argwhere((grid == -1) & ~flags)
            for i, j in covered[:: max(1, len(covered) // 40)].tolist():
                flagged = flags.copy()
                flagged[i, j] = True
                try:
                    expected = ns.engine.count_layouts(grid, 99, flagged)
                except InconsistentBoardError:
                    expected = 0
                assert a.mine_layouts((i, j)) == expected, (seed, (i, j))
                checked += 1
            interior = np.argwhere((grid == -1) & ~flags & ~a.frontier)
            for m in range(2, min(6, len(interior) + 1)):  # cells spread over the interior: any m alike
                picked = interior[:: max(1, len(interior) // m)][:m]
                assert a.interior_mine_layouts(m) == _flagged_count(grid, 99, flags, picked), (seed, m)
    assert checked > 200


def test_interior_mine_layouts_refuses_a_negative_count():
    a = ns.analyze(np.full((3, 3), -1), 2)
    assert a.interior_mine_layouts(2) == 1  # 2 of 9 cells: C(7, 0) layouts with both mines
    with pytest.raises(InvalidBoardError, match="m must be"):
        a.interior_mine_layouts(-1)


def test_mine_layouts_refuses_a_cell_off_the_board():
    a = ns.analyze(np.full((3, 3), -1), 2)
    with pytest.raises(InvalidBoardError, match=r"cell \(3, 0\) is off the 3x3 board"):
        a.mine_layouts((3, 0))
