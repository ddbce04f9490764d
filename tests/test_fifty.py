"""50/50 patterns and the search options built on them, against layouts listed one by one."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.engine import analyze, each_outcome, enumerate_layouts, isolated_areas
from nnsweeper.grid import neighbour_sum
from nnsweeper.observation import Observation
from nnsweeper.solvers import SearchSolver
from nnsweeper.solvers.endgame import Endgame
from nnsweeper.solvers.fifty import (
    MISSING_INFLUENCE,
    MISSING_SWEEP,
    Patterns,
    _pairs_and_boxes,
    influence,
    pattern_at,
    pseudo_fifty_fifty,
)
from nnsweeper.solvers.search import BLEND, V1, blended_value, living_cells


def v1(**options):
    """The search solver with the options of its first version (:data:`V1`), and ``options``."""
    return SearchSolver(**{**V1, **options})


def _guess_positions(n, rows=8, cols=8, mines=12, most=100_000):
    """Positions where csp had to guess in seeded games, with few enough layouts to list."""
    solver = ns.get_solver("csp", start="corner")
    out = []
    for seed in range(n):
        env = ns.MinesweeperEnv(rows, cols, mines, seed=700 + seed)

        def keep(d):
            if d.guessed and d.analysis.layouts <= most:
                out.append(Observation.of(d.grid, mines, d.flags | d.analysis.mines))
        solver.play(env, np.random.default_rng(seed), on_decision=keep)
    return out


def _count(layouts, mines, safe):
    keep = np.ones(len(layouts), dtype=bool)
    for c in mines:
        keep &= layouts[:, c[0], c[1]]
    for c in safe:
        keep &= ~layouts[:, c[0], c[1]]
    return int(keep.sum())


def _sides(shape, a, b):
    rows, cols = shape
    out = []
    for x in range(rows):
        for y in range(cols):
            if (x, y) in a or (x, y) in b:
                continue
            sees = [sum(abs(x - i) <= 1 and abs(y - j) <= 1 for i, j in group) for group in (a, b)]
            if sees[0] != sees[1]:
                out.append((x, y))
    return out


POSITIONS = _guess_positions(60)


def test_positions_to_check():
    assert len(POSITIONS) >= 20


def test_pattern_counts_are_the_listed_layouts():
    found = 0
    for obs in POSITIONS:
        a = analyze(obs)
        layouts = enumerate_layouts(obs.grid, obs.total_mines, obs.flags)
        known = obs.flags | a.mines
        for cell in zip(*np.nonzero((obs.grid < 0) & ~known), strict=True):
            cell = (int(cell[0]), int(cell[1]))
            for pa, pb in _pairs_and_boxes(cell, obs.grid.shape):
                got = pattern_at(obs, known, pa, pb, max_missing=MISSING_INFLUENCE)
                sides = _sides(obs.grid.shape, pa, pb)
                hidden = all(obs.grid[c] < 0 and not known[c] for c in (*pa, *pb))
                missing = [c for c in sides if not known[c]]
                possible = (hidden and not any(obs.grid[c] >= 0 for c in sides)
                            and len(missing) <= MISSING_INFLUENCE and len(missing) + len(pa) <= a.mines_left)
                count = _count(layouts, [*missing, *pa], pb) if possible else 0
                if got is None:
                    assert count == 0
                    continue
                found += 1
                assert (got.a, got.b, sorted(got.missing), got.count) == (pa, pb, sorted(missing), count)
                # Either arrangement: the same number of layouts (the swap maps one onto the other).
                assert _count(layouts, [*missing, *pb], pa) == count
    assert found > 0


def test_the_sweep_looks_at_every_pair_and_box_that_could_close():
    looked = 0
    for obs in POSITIONS + _guess_positions(10, 16, 30, 99, most=10**30):
        a = analyze(obs)
        known = obs.flags | a.mines
        patterns = Patterns(obs, a, known)
        rows, cols = obs.grid.shape
        ok = (obs.grid < 0) & ~known & (a.probabilities > 0)
        pairs = [(((i, j),), ((i, j + 1),)) for i in range(rows) for j in range(cols - 1)]
        pairs += [(((i, j),), ((i + 1, j),)) for i in range(rows - 1) for j in range(cols)]
        boxes = [(((i, j), (i + 1, j + 1)), ((i, j + 1), (i + 1, j)))
                 for i in range(rows - 1) for j in range(cols - 1)]
        for shapes, flag in ((pairs, False), (boxes, True)):
            want = []
            for pa, pb in shapes:
                sides = _sides(obs.grid.shape, pa, pb)
                if (all(ok[c] for c in (*pa, *pb)) and not any(obs.grid[c] >= 0 for c in sides)
                        and sum(not known[c] for c in sides) <= MISSING_SWEEP):
                    want.append((pa, pb))
            assert patterns.candidates(boxes=flag) == want
            looked += len(want)
    assert looked > 0


def test_influence_is_the_largest_pair_and_box_counts():
    some = 0
    for obs in POSITIONS:
        a = analyze(obs)
        layouts = enumerate_layouts(obs.grid, obs.total_mines, obs.flags)
        known = obs.flags | a.mines
        for cell in zip(*np.nonzero(a.frontier & ~a.mines), strict=True):
            cell = (int(cell[0]), int(cell[1]))
            best = {"h": 0, "v": 0, "box": 0}
            for pa, pb in _pairs_and_boxes(cell, obs.grid.shape):
                kind = "box" if len(pa) == 2 else ("h" if pa[0][0] == pb[0][0] else "v")
                sides = _sides(obs.grid.shape, pa, pb)
                if any(obs.grid[c] >= 0 or known[c] for c in (*pa, *pb)):
                    continue
                if any(obs.grid[c] >= 0 for c in sides):
                    continue
                missing = [c for c in sides if not known[c]]
                if len(missing) > MISSING_INFLUENCE or len(missing) + len(pa) > a.mines_left:
                    continue
                best[kind] = max(best[kind], _count(layouts, [*missing, *pa], pb))
            value = influence(obs, a, cell, known)
            assert value == sum(best.values())
            some += value > 0
    assert some > 0


def test_a_closed_pair_is_a_pseudo_fifty_fifty():
    # The top-left pair holds one mine and everything that sees one of them and not the
    # other is a known mine: each is a mine exactly in the pattern's layouts.
    grid = np.array([
        [-1, -1, -1, 2],
        [1, 3, -1, 2],
        [0, 1, 1, 1],
    ])
    flags = np.zeros(grid.shape, dtype=bool)
    flags[0, 2] = flags[1, 2] = True
    obs = Observation.of(grid, 3, flags)
    a = analyze(obs)
    cells, _ = pseudo_fifty_fifty(obs, a, obs.flags | a.mines, living_cells(a))
    assert cells == [(0, 0), (0, 1)]
    choice = SearchSolver(pseudo=True, forced=False, endgame=0).choose(obs, a, np.random.default_rng(0))
    assert choice.kind == "forced" and {choice.cell, choice.partner} == {(0, 0), (0, 1)}


def test_pseudo_cells_are_mines_only_where_a_pattern_closes():
    seen = 0
    for obs in POSITIONS:
        a = analyze(obs)
        known = obs.flags | a.mines
        cells, enablers = pseudo_fifty_fifty(obs, a, known, living_cells(a))
        layouts = enumerate_layouts(obs.grid, obs.total_mines, obs.flags)
        for t in cells:
            seen += 1
            mine = layouts[:, t[0], t[1]]
            # Some pattern holding t is closed, with t a mine, in every layout where t is a mine.
            closes = False
            for pa, pb in _pairs_and_boxes(t, obs.grid.shape):
                found = pattern_at(obs, known, pa, pb, max_missing=MISSING_SWEEP)
                if found is None:
                    continue
                closed = np.ones(len(layouts), dtype=bool)
                for c in (*found.missing, *pa):
                    closed &= layouts[:, c[0], c[1]]
                for c in pb:
                    closed &= ~layouts[:, c[0], c[1]]
                closes |= bool((closed == mine).all())
            assert closes
        for c, n in enablers.items():
            assert obs.grid[c] < 0 and not known[c] and 0 < n <= a.layouts
    assert seen > 0


def _blend_by_hand(a) -> Fraction:
    rows, cols = a.unknown.shape
    rest = a.unknown & ~a.mines
    if not rest.any():
        return Fraction(1)
    uncertain = rest & ~a.safe
    chances = []
    interior = None
    for i in range(rows):
        for j in range(cols):
            if not rest[i, j]:
                continue
            living = any(uncertain[x, y] for x in range(max(i - 1, 0), min(i + 2, rows))
                         for y in range(max(j - 1, 0), min(j + 2, cols)) if (x, y) != (i, j))
            if not living:
                continue
            if a.frontier[i, j] or a.safe[i, j]:
                chances.append(Fraction(1.0 - a.probabilities[i, j]))
            else:
                interior = Fraction(1.0 - a.probabilities[i, j])
    if interior is not None:
        chances += [interior, interior]
    if not chances:
        return Fraction(1.0 - a.probabilities[rest].min())
    chances = sorted(chances, reverse=True) + [Fraction(0)]
    return (BLEND[0] * chances[0] + BLEND[1] * chances[1]) / sum(BLEND)


def test_blended_look_ahead_scores_are_exact():
    solver = v1(start="corner", endgame=0, forced=False, next_value="blend")
    for obs in POSITIONS[:15]:
        a = analyze(obs)
        for c in solver.score_candidates(obs, a, np.random.default_rng(0), prune=False):
            score = Fraction(0)
            for _, _, after in each_outcome(obs, c.cell):
                assert Fraction(blended_value(after), sum(BLEND) * 2**1074) == _blend_by_hand(after)
                score += Fraction(after.layouts, a.layouts) * _blend_by_hand(after)
            assert c.score == float(score)


def test_influence_scales_a_score_by_its_fifty_fifty_share():
    plain = SearchSolver(start="corner", endgame=0, forced=False)
    fifty = SearchSolver(start="corner", endgame=0, forced=False, influence=True)
    moved = 0
    for obs in POSITIONS:
        a = analyze(obs)
        known = obs.flags | a.mines
        base = {c.cell: c for c in plain.score_candidates(obs, a, np.random.default_rng(0), prune=False)}
        _, enablers = pseudo_fifty_fifty(obs, a, known, living_cells(a))
        layouts = enumerate_layouts(obs.grid, obs.total_mines, obs.flags)
        for c in fifty.score_candidates(obs, a, np.random.default_rng(0), prune=False):
            if c.cell not in base:  # a cell the sweep added (see the test below)
                continue
            mines = int(layouts[:, c.cell[0], c.cell[1]].sum())
            safe = a.layouts - mines
            inf = min(influence(obs, a, c.cell, known) + enablers.get(c.cell, 0), mines, safe)
            factor = Fraction(10 * safe + 9 * inf, 10 * safe) if safe else Fraction(1)
            exact = Fraction(base[c.cell].score) * factor  # the plain score is exact to one rounding
            assert abs(Fraction(c.score) - exact) <= 2 * Fraction(1, 10**12)
            moved += inf > 0
    assert moved > 0


def test_dominance_plays_the_first_safer_cell_that_is_safe_whenever_the_pick_is():
    dom = SearchSolver(start="corner", endgame=0, forced=False, dominance=True)
    swapped = kept = 0
    for obs in POSITIONS:
        a = analyze(obs)
        layouts = enumerate_layouts(obs.grid, obs.total_mines, obs.flags)
        safe = {tuple(c): int((~layouts[:, c[0], c[1]]).sum()) for c in np.argwhere(a.unknown)}
        picked = dom.candidate_cells(obs, a, np.random.default_rng(0))
        # Each candidate in turn as the look-ahead's pick.
        for t in picked.tolist():
            t = tuple(t)
            first = (t, *dom._score(obs, a, t, 1, None))
            rest = [(tuple(c), *dom._score(obs, a, tuple(c), 1, None))
                    for c in picked.tolist() if tuple(c) != t]
            got = dom._dominated(obs, a, picked, [first, *rest])
            # Cells safe after every number t can show: safe in every layout where t is safe.
            never_mine = ~layouts[~layouts[:, t[0], t[1]]].any(axis=0)
            common = {c for c in safe if c != t and never_mine[c]}
            better = [tuple(c) for c in picked.tolist() if tuple(c) in common
                      and (safe[tuple(c)] - safe[t]) * 10_000 > a.layouts]
            assert got[0][0] == (better[0] if better else t)
            assert sorted(x[0] for x in got) == sorted(x[0] for x in [first, *rest])
            swapped += bool(better)
            kept += not better
    assert swapped > 0 and kept > 0


@pytest.mark.parametrize("options", [dict(next_value="blend"), dict(pseudo=True), dict(influence=True),
                                     dict(dominance=True), dict(endgame_density=250),
                                     dict(spread=True, candidates=None, interior_margin=0.05),
                                     dict(next_value="blend", pseudo=True, influence=True, dominance=True),
                                     dict(isolated=True)])
def test_search_options_play_whole_games_the_same_every_time(options):
    solver = SearchSolver(start="corner", **options)
    for seed in range(6):
        rec = solver.play(ns.MinesweeperEnv(9, 9, 12, seed=40 + seed), np.random.default_rng(seed))
        again = solver.play(ns.MinesweeperEnv(9, 9, 12, seed=40 + seed), np.random.default_rng(seed))
        assert [(m.cell, m.kind) for m in rec.moves] == [(m.cell, m.kind) for m in again.moves]
        assert rec.moves and 0 < rec.cleared <= 1
    assert solver.options()[next(iter(options))] == options[next(iter(options))]


@pytest.mark.parametrize("bad, match", [
    (dict(next_value="mean"), "next_value must be 'best' or 'blend'"),
    (dict(pseudo=1), "pseudo must be True or False"),
    (dict(influence="yes"), "influence must be True or False"),
    (dict(dominance=None), "dominance must be True or False"),
    (dict(spread="no"), "spread must be True or False"),
    (dict(interior_margin=1.5), r"interior_margin must be None or a number in \[0, 1\)"),
    (dict(endgame_density=-1), "endgame_density must be at least 0"),
    (dict(isolated=0), "isolated must be True or False"),
])
def test_search_refuses_bad_guessing_options(bad, match):
    with pytest.raises(ValueError, match=match):
        SearchSolver(**bad)


def test_spread_candidates_are_the_near_frontier_and_the_placed_interior_cells():
    solver = SearchSolver(start="corner", spread=True, candidates=None, interior_margin=0.05)
    interior_seen = 0
    for obs in _guess_positions(30, 16, 16, 40, most=10**30):
        a = analyze(obs)
        p = a.probabilities
        picked = {tuple(c) for c in solver.candidate_cells(obs, a, np.random.default_rng(0)).tolist()}
        free = a.unknown & ~a.mines & ~obs.flags
        best = 1 - p[free].min()
        for i, j in zip(*np.nonzero(free), strict=True):
            safety = 1 - p[i, j]
            if a.frontier[i, j]:
                assert ((i, j) in picked) == (safety >= 0.9 * best)
                continue
            interior = int((free & ~a.frontier).sum())
            rows, cols = obs.grid.shape
            near = [(i + di, j + dj) for di, dj in ((2, 0), (-2, 0), (0, 2), (0, -2))
                    if 0 <= i + di < rows and 0 <= j + dj < cols]
            living = [c for c in near if obs.grid[c] >= 0 and any(
                free[x, y] for x in range(max(c[0] - 1, 0), min(c[0] + 2, rows))
                for y in range(max(c[1] - 1, 0), min(c[1] + 2, cols)))]
            boxed = sum(free[x, y] for x in range(max(i - 1, 0), min(i + 2, rows))
                        for y in range(max(j - 1, 0), min(j + 2, cols)) if (x, y) != (i, j)) in (2, 3)
            wanted = safety > 0.95 * best and (interior < 30 or bool(living) or boxed)
            assert ((i, j) in picked) == wanted
            interior_seen += wanted
    assert interior_seen > 0


def test_the_endgame_density_gate_is_the_layouts_times_the_safe_share_cubed():
    solver = SearchSolver(endgame=100, endgame_density=50)
    tried = refused = 0
    for obs in _guess_positions(40, 8, 8, 16, most=10**30):
        a = analyze(obs)
        covered = int((a.unknown & ~a.mines).sum())
        safe_share = Fraction(covered - (a.mines_left - int(a.mines.sum())), covered)
        fits = a.layouts <= 100 or (a.layouts <= 1000 and a.layouts * safe_share**3 <= 50)
        assert solver._endgame_fits(a) == fits
        tried += fits and a.layouts > 100
        refused += not fits and a.layouts <= 1000
    assert tried > 0 and refused > 0


def _isolated_positions(games=60, rows=8, cols=8, mines=12, most=20_000):
    """Guess positions of seeded games (8x8: few enough layouts to list) with an isolated area."""
    out = []
    for obs in _guess_positions(games, rows, cols, mines, most=most):
        areas = isolated_areas(obs)
        if areas:
            out.append((obs, areas))
    return out


def test_isolated_areas_are_games_of_their_own():
    """Every layout of the board, cut to an isolated area, is one of the area's layouts, and each of
    those is cut from equally many board layouts (whatever the rest holds, the area's layouts are
    equally likely); the area touches no covered cell outside it that is not a known mine."""
    found = _isolated_positions()
    assert len(found) >= 5
    for obs, areas in found:
        board = enumerate_layouts(obs, limit=20_000).reshape(-1, obs.grid.size)
        a = analyze(obs)
        known = (obs.flags | a.mines).ravel()
        rows, cols = obs.grid.shape
        sizes = [cells.size for cells, _ in areas]
        assert sizes == sorted(sizes)
        for cells, layouts in areas:
            assert np.array_equal(cells, np.unique(cells))
            own = {row.tobytes() for row in layouts}
            assert len(own) == len(layouts)
            cut = [row[cells].tobytes() for row in board]
            assert set(cut) == own
            counts = {k: cut.count(k) for k in own}
            assert len(set(counts.values())) == 1, counts
            assert len({int(row.sum()) for row in layouts}) == 1  # the same mines in every layout
            for c in cells.tolist():
                i, j = divmod(c, cols)
                for x in range(max(i - 1, 0), min(i + 2, rows)):
                    for y in range(max(j - 1, 0), min(j + 2, cols)):
                        f = x * cols + y
                        assert f in cells or obs.grid[x, y] >= 0 or known[f]


def test_a_component_that_touches_the_interior_is_not_isolated():
    # A 1 in the corner of an open board: its three covered neighbours touch the interior.
    grid = np.full((5, 5), -1)
    grid[0, 0] = 1
    assert isolated_areas(Observation.of(grid, 5)) == []
    # Closed in: the flags at (0, 2) and (1, 2) and the numbers below leave (0, 0), (0, 1) to
    # themselves, one mine between them.
    grid = np.array([[-1, -1, -1, 2, 0], [1, 3, -1, 2, 0], [0, 1, 1, 1, 0],
                     [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
    flags = np.zeros((5, 5), dtype=bool)
    flags[0, 2] = flags[1, 2] = True
    (cells, layouts), = isolated_areas(Observation.of(grid, 3, flags))
    assert cells.tolist() == [0, 1]
    assert sorted(map(tuple, layouts.astype(int).tolist())) == [(0, 1), (1, 0)]


def _pocket_board(seed=0):
    """A 10x10 position: a pair closed in at the top left (one mine, flags at (0, 2) and (1, 2)), the
    three top rows open, and 20 mines in the seven covered rows below (millions of layouts)."""
    rng = np.random.default_rng(seed)
    mines = np.zeros((10, 10), dtype=bool)
    mines[0, 1] = mines[0, 2] = mines[1, 2] = True
    mines.ravel()[30 + rng.choice(70, 20, replace=False)] = True
    grid = np.where(mines, -1, neighbour_sum(mines))
    grid[3:] = -1
    grid[0, 0] = -1
    flags = np.zeros_like(mines)
    flags[0, 2] = flags[1, 2] = True
    return Observation.of(grid, int(mines.sum()), flags)


def test_search_plays_an_isolated_area_by_its_exact_game_tree():
    """With ``isolated``, search plays a closed-in area by its own game tree, before the forced
    guess and the look-ahead, with that tree's chance of clearing it; without, it does not."""
    obs = _pocket_board()
    a = analyze(obs)
    assert a.layouts > 10**6
    (cells, layouts), = isolated_areas(obs)
    assert cells.tolist() == [0, 1]
    choice = SearchSolver(isolated=True).choose(obs, a, np.random.default_rng(0))
    full = np.repeat((obs.flags | a.mines).ravel()[None], len(layouts), axis=0)
    full[:, cells] = layouts
    cell, wins, n = Endgame(full.reshape(-1, 10, 10), obs.grid, 20000).best_move(obs.grid)
    assert (choice.kind, choice.cell, choice.win_probability) == ("endgame", cell, 0.5)
    assert (wins, n) == (1, 2)
    assert SearchSolver().choose(obs, a, np.random.default_rng(0)).kind == "forced"


def test_influence_adds_the_swept_cells_it_could_lift_near_the_safest():
    """With ``influence`` the candidates are the plain ones, then (in reading order) every living cell
    of the 50/50 sweep whose safe layouts plus its swept count are above 0.9 of the safest cell's
    safe layouts, counted here from the listed layouts."""
    added = 0
    for obs in _guess_positions(40, most=100_000):
        a = analyze(obs)
        plain = SearchSolver().candidate_cells(obs, a, np.random.default_rng(0))
        solver = SearchSolver(influence=True)
        cells = solver.candidate_cells(obs, a, np.random.default_rng(0))
        assert np.array_equal(cells[: len(plain)], plain)
        extra = [tuple(c) for c in cells[len(plain):].tolist()]
        assert extra == sorted(extra)
        layouts = enumerate_layouts(obs, limit=100_000)
        safe = {c: int((~layouts[:, c[0], c[1]]).sum()) for c in map(tuple, np.argwhere(a.unknown).tolist())}
        swept = solver.patterns(obs, a).swept
        living = living_cells(a)
        best = safe[tuple(plain[0].tolist())]
        expected = [c for c in sorted(swept) if c not in set(map(tuple, plain.tolist())) and living[c]
                    and (safe[c] + swept[c]) * 10 > 9 * best]
        assert extra == expected
        added += len(extra)
    assert added > 0
