"""The search solver: exact endgames against a brute-force game tree, forced guesses,
dead cells, look-ahead scores against the public outcome distributions, whole games."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.engine import analyze
from nnsweeper.grid import neighbour_sum
from nnsweeper.observation import Observation
from nnsweeper.solvers import GUESS_KINDS, MOVE_KINDS, SearchSolver, forced_guess, get_solver
from nnsweeper.solvers.endgame import Endgame, SearchBudgetExceeded
from nnsweeper.solvers.search import V1


def v1(**options):
    """The search solver with the options of its first version (:data:`V1`), and ``options``."""
    return SearchSolver(**{**V1, **options})


def _layouts_by_brute_force(grid, mines, flags):
    cells = np.flatnonzero((grid < 0).ravel())
    out = []
    for pick in itertools.combinations(cells.tolist(), mines):
        lay = np.zeros(grid.size, dtype=bool)
        lay[list(pick)] = True
        lay = lay.reshape(grid.shape)
        if (lay[flags] == 0).any():
            continue
        counts = neighbour_sum(lay)
        if ((grid >= 0) & (counts != grid)).any():
            continue
        out.append(lay)
    return out


def _brute_win(layouts, revealed):
    """P(win) with best play by plain recursion over every cell, as a Fraction."""
    if len(layouts) == 1:
        return Fraction(1)
    shape = layouts[0].shape
    counts = [neighbour_sum(x) for x in layouts]
    best = Fraction(0)
    for cell in itertools.product(range(shape[0]), range(shape[1])):
        if cell in revealed:
            continue
        by_value: dict[int, list] = {}
        for lay, cnt in zip(layouts, counts, strict=True):
            if not lay[cell]:
                by_value.setdefault(int(cnt[cell]), []).append(lay)
        if not by_value:
            continue
        win = sum(Fraction(len(part), len(layouts)) * _brute_win(part, revealed | {cell})
                  for part in by_value.values())
        best = max(best, win)
    return best


def _random_position(rng, rows, cols, mines, reveal):
    lay = np.zeros(rows * cols, dtype=bool)
    lay[rng.choice(rows * cols, mines, replace=False)] = True
    lay = lay.reshape(rows, cols)
    grid = np.where(lay, -1, neighbour_sum(lay))
    return np.where((rng.random((rows, cols)) < reveal) & ~lay, grid, -1), lay


def test_enumerate_layouts_is_every_consistent_layout_once():
    rng = np.random.default_rng(5)
    for _ in range(150):
        rows, cols = int(rng.integers(2, 5)), int(rng.integers(2, 6))
        mines = int(rng.integers(1, rows * cols // 2 + 1))
        grid, lay = _random_position(rng, rows, cols, mines, 0.5)
        flags = lay & (rng.random((rows, cols)) < 0.3)
        got = ns.enumerate_layouts(grid, mines, flags)
        want = _layouts_by_brute_force(grid, mines, flags)
        assert len(got) == len(want) == analyze(grid, mines, flags).layouts
        assert {x.tobytes() for x in got} == {x.tobytes() for x in want}
    with pytest.raises(ValueError, match="more than limit=2"):
        ns.enumerate_layouts(np.full((3, 3), -1), 2, limit=2)


def test_endgame_search_equals_a_brute_force_game_tree():
    rng = np.random.default_rng(11)
    checked = 0
    while checked < 25:
        rows, cols = int(rng.integers(2, 4)), int(rng.integers(3, 5))
        mines = int(rng.integers(1, 4))
        grid, _ = _random_position(rng, rows, cols, mines, 0.45)
        layouts = _layouts_by_brute_force(grid, mines, np.zeros_like(grid, dtype=bool))
        if len(layouts) < 2 or len(layouts) > 40:
            continue
        search = Endgame(ns.enumerate_layouts(grid, mines), grid, node_limit=10**6)
        revealed = {tuple(c) for c in np.argwhere(grid >= 0)}
        want = _brute_win(layouts, revealed)
        found = search.best_move(grid)
        if found is None:  # a cell is safe everywhere and tells the layouts apart: no guess needed
            assert any(not any(x[c] for x in layouts) for c in np.ndindex(grid.shape) if c not in revealed)
            continue
        cell, wins, n = found
        assert n == len(layouts)
        assert Fraction(wins, n) == want
        # The chosen cell is worth exactly that, and no covered cell is worth more.
        covered = [c for c in np.ndindex(grid.shape) if c not in revealed]
        per_cell = search.win_counts(grid, covered)
        assert per_cell[cell] == wins == max(per_cell.values())
        checked += 1


def test_endgame_search_gives_up_past_its_node_limit():
    grid = np.full((4, 4), -1)
    grid[0, 0] = 1
    search = Endgame(ns.enumerate_layouts(grid, 3), grid, node_limit=3)
    with pytest.raises(SearchBudgetExceeded, match="more than 3 positions"):
        search.best_move(grid)


def test_forced_guess_finds_an_isolated_fifty_fifty_and_nothing_else():
    # The top-left pair holds one mine (the 1 at (1, 0) sees only them); everything
    # that sees one and not the other is a known mine: a forced guess.
    grid = np.array([
        [-1, -1, -1, 2],
        [1, 3, -1, 2],
        [0, 1, 1, 1],
    ])
    mines = np.zeros(grid.shape, dtype=bool)
    mines[0, 2] = mines[1, 2] = True
    pair = forced_guess(grid, mines)
    assert pair is not None and set(pair) == {(0, 0), (0, 1)}
    p = ns.mine_probabilities(grid, 3, mines)
    assert p[0, 0] == p[0, 1] == 0.5
    # Without the known mine at (1, 2), a future number there could tell them apart.
    mines[1, 2] = False
    assert forced_guess(grid, mines) is None


def _positions(solver, n, rows=9, cols=9, mines=10, start="corner"):
    """Positions where the solver had to guess, from seeded games."""
    out = []
    for seed in range(n):
        env = ns.MinesweeperEnv(rows, cols, mines, seed=500 + seed)
        rng = np.random.default_rng(seed)

        def keep(d):
            if d.guessed:
                out.append(Observation.of(d.grid, mines, d.flags | d.analysis.mines))
        solver.play(env, rng, on_decision=keep)
    return out


def test_look_ahead_scores_are_the_exact_outcome_distributions():
    solver = v1(start="corner", endgame=0, forced=False, depth=1)
    positions = _positions(solver, 12, 16, 16, 40)[:12]
    assert positions
    for obs in positions:
        a = analyze(obs)
        cands = solver.score_candidates(obs, a, np.random.default_rng(0))
        for c in cands:
            exact = ns.outcome_distribution(obs, cell=c.cell, exact=True)
            assert c.outcomes == tuple(float(x) for x in exact)
            assert c.dead == (sum(x > 0 for x in exact) == 1)
            assert c.probability == a.probabilities[c.cell]
            # The score: each outcome's share times the safety of the move after it.
            score = Fraction(0)
            for v, share in enumerate(exact):
                if share:
                    grid = np.array(obs.grid)
                    grid[c.cell] = v
                    after = analyze(grid, obs.total_mines, obs.flags)
                    rest = after.unknown & (after.probabilities < 1)
                    nxt = 1.0 if after.safe.any() or not rest.any() else 1 - after.probabilities[rest].min()
                    score += share * Fraction(nxt)
            assert c.score == float(score)
        # Best first; a dead cell leads only when no living one is as safe.
        best = cands[0]
        if best.dead:
            assert all(c.dead or c.probability > best.probability for c in cands)
        else:
            rest = [c for c in cands[1:] if not (c.dead and c.probability <= best.probability)]
            assert all((c.score, c.progress) <= (best.score, best.progress) for c in rest)


def test_depth_two_values_the_next_guess_by_its_own_look_ahead():
    deep = v1(start="corner", endgame=0, forced=False, depth=2)
    shallow = v1(start="corner", endgame=0, forced=False)
    assert shallow.depth == 1
    positions = _positions(shallow, 6, 9, 9, 10)[:6]
    assert positions
    for obs in positions:
        a = analyze(obs)
        full = deep.score_candidates(obs, a, np.random.default_rng(0), prune=False)
        best = deep.score_candidates(obs, a, np.random.default_rng(0))[0]  # pruned: the same up to exact ties
        assert (best.score, best.progress, best.dead) == (full[0].score, full[0].progress, full[0].dead)
        for c in full:
            score = Fraction(0)
            for _, board, after in ns.engine.each_outcome(obs, c.cell):
                rest = after.unknown & ~after.mines
                if after.safe.any() or not rest.any():
                    nxt = Fraction(1)
                else:
                    nxt_obs = Observation.of(board.grid, obs.total_mines, obs.flags | after.mines)
                    best = shallow.score_candidates(nxt_obs, after, np.random.default_rng(1))[0]
                    nxt = Fraction(best.score)
                    assert nxt <= 1 - after.probabilities[rest].min()
                score += Fraction(after.layouts, a.layouts) * nxt
            assert c.score == float(score)
        # Above deep_cells covered cells the look-ahead stays at depth 1.
        flat = v1(start="corner", endgame=0, forced=False, depth=2,
                            deep_cells=int((obs.grid < 0).sum()) - 1)
        assert flat.score_candidates(obs, a, np.random.default_rng(0)) == \
            shallow.score_candidates(obs, a, np.random.default_rng(0))


def test_search_plays_whole_games_deterministically_and_records_its_techniques():
    solver = get_solver("search", start="corner")
    kinds = set()
    for seed in range(40):
        env = ns.MinesweeperEnv(9, 9, 10, seed=900 + seed)
        rec = solver.play(env, np.random.default_rng(seed))
        again = solver.play(ns.MinesweeperEnv(9, 9, 10, seed=900 + seed), np.random.default_rng(seed))
        assert [(m.cell, m.kind, m.probability) for m in rec.moves] == \
            [(m.cell, m.kind, m.probability) for m in again.moves]
        kinds |= {m.kind for m in rec.moves}
        for m in rec.moves[1:]:
            assert m.kind in MOVE_KINDS
            if m.kind in ("local", "engine"):
                assert m.probability == 0.0
        if not rec.won:  # a game is lost on a guess only
            assert rec.moves[-1].kind in GUESS_KINDS
        assert rec.guesses == sum(m.kind in GUESS_KINDS for m in rec.moves)
    assert {"look-ahead", "endgame"} <= kinds


@pytest.mark.parametrize("options", [dict(depth=2, candidates=3), dict(endgame=0, forced=False)])
def test_search_options_play_games(options):
    solver = SearchSolver(start="corner", **options)
    for seed in range(4):
        rec = solver.play(ns.MinesweeperEnv(8, 8, 12, seed=seed), np.random.default_rng(seed))
        assert rec.moves and 0 < rec.cleared <= 1


@pytest.mark.parametrize("bad, match", [
    (dict(depth=3), "depth must be at most 2"),
    (dict(deep_cells=-1), "deep_cells must be at least 0"),
    (dict(candidates=0), "candidates must be at least 1"),
    (dict(margin=1.0), r"margin must be a number in \[0, 1\)"),
    (dict(endgame=-1), "endgame must be at least 0"),
    (dict(forced="yes"), "forced must be True or False"),
    (dict(defer_dead=1), "defer_dead must be True or False"),
    (dict(progress_weight="no"), "progress_weight must be True or False"),
    (dict(depth=2, deep_top=0), "deep_top must be at least 1"),
    (dict(influence_covered=1.5), r"influence_covered must be a share in \[0, 1\]; got 1.5"),
    (dict(influence_covered=True), "influence_covered must be a share"),
    (dict(tie_band=1.0), r"tie_band must be a number in \[0, 1\); got 1.0"),
    (dict(tie_band=-0.1), "tie_band must be a number"),
])
def test_search_refuses_bad_options(bad, match):
    with pytest.raises(ValueError, match=match):
        get_solver("search", **bad)


def test_influence_covered_weighs_the_fifty_fifty_patterns_on_positions_covered_enough():
    """Expert, the first click in the corner showing a 1: the 50/50 influence takes the far corner
    (a mine there would be an edge 50/50 later), the plain look-ahead a cell two steps out from the
    1; 479 of 480 cells are covered, so a share of 0.83 keeps the influence and 1.0 drops it."""
    grid = np.full((16, 30), -1, dtype=np.int8)
    grid[0, 0] = 1
    obs = Observation.of(grid, 99, np.zeros(grid.shape, dtype=bool))
    a = ns.analyze(obs)

    def pick(**options):
        return SearchSolver(start="corner", **options).choose(obs, a, np.random.default_rng(0)).cell

    assert pick() == (2, 0)
    assert pick(influence=True) == pick(influence=True, influence_covered=0.83) == (15, 0)
    assert pick(influence=True, influence_covered=1.0) == (2, 0)
    assert SearchSolver(influence=True, influence_covered=0.83).options()["influence_covered"] == 0.83
    assert "influence_covered" not in SearchSolver().options()


def test_suggest_move_shows_the_search_choice_and_its_candidates():
    from nnsweeper.solvers.suggest import format_suggestions

    obs = ns.parse_observation(
        ". . . . . . . . .\n. . . . . . . . .\n. . 1 1 2 . . . .\n. . 1 0 1 . . . .\n"
        ". . 1 1 1 . . . .\n" + ". . . . . . . . .\n" * 4, 10)
    s = ns.suggest_move("search", obs)
    assert s.kind == "look-ahead" and s.reason.startswith("look-ahead guess: P(mine) = ")
    assert s.candidates[0].cell == s.cell and len(s.candidates) > 1
    assert s.exact_probability == s.candidates[0].probability
    # Shown in full: every candidate scored, not only those that could have won.
    played = SearchSolver()
    rec_choice = played.score_candidates(obs, analyze(obs), np.random.default_rng(0), prune=False)
    assert [c.cell for c in s.candidates] == [c.cell for c in rec_choice]
    text = format_suggestions([("search", s)])
    assert "P(survive 2)" in text
    assert all(f"({c.cell[0]}, {c.cell[1]})" in text for c in s.candidates)

    pair = ns.parse_observation(". . F 2\n1 3 F 2\n0 1 1 1", 3)
    forced = ns.suggest_move(SearchSolver(endgame=0), pair)
    assert forced.kind == "forced" and forced.cell in {(0, 0), (0, 1)}
    assert "forced guess: one mine between this cell and" in forced.reason
    end = ns.suggest_move("search", pair)
    assert end.kind == "endgame"
    assert end.reason.startswith("endgame search over all 2 consistent layouts: best play from here wins "
                                 "with P = 0.5")


def test_defer_dead_plays_a_living_candidate_however_much_safer_the_dead_one_is():
    base = v1(start="corner", endgame=0, forced=False)
    defer = v1(start="corner", endgame=0, forced=False, defer_dead=True)
    assert defer.options()["defer_dead"] is True and "defer_dead" not in base.options()
    # An expert position (seeded game 978, its ninth guess) where the safest candidate is dead.
    positions = []
    env = ns.MinesweeperEnv(16, 30, 99, seed=978)
    base.play(env, np.random.default_rng(478), on_decision=lambda d: d.guessed and positions.append(
        Observation.of(d.grid, 99, d.flags | d.analysis.mines)))
    obs = positions[8]
    a = analyze(obs)
    before = base.score_candidates(obs, a, np.random.default_rng(0))
    after = defer.score_candidates(obs, a, np.random.default_rng(0))
    assert before[0].dead and before[0].cell == (14, 0)
    assert any(not c.dead for c in before)
    assert not after[0].dead and after[0].probability > before[0].probability
    # The living one played is the look-ahead's best living candidate (every candidate scored).
    living = [c for c in after if not c.dead]
    assert after[0] == max(living, key=lambda c: (c.score, c.progress))
    assert {c.cell for c in after} == {c.cell for c in before}


def test_progress_weight_multiplies_each_score_by_one_plus_a_thousandth_of_its_progress():
    plain = v1(start="corner", endgame=0, forced=False)
    weighted = v1(start="corner", endgame=0, forced=False, progress_weight=True)
    positions = _positions(plain, 8, 16, 16, 40)[:10]
    assert positions
    differ = 0
    for obs in positions:
        a = analyze(obs)
        full = {c.cell: c for c in plain.score_candidates(obs, a, np.random.default_rng(0), prune=False)}
        cands = weighted.score_candidates(obs, a, np.random.default_rng(0), prune=False)
        for c in cands:
            p = full[c.cell]
            assert c.progress == p.progress and c.outcomes == p.outcomes
            assert c.score == pytest.approx(p.score * (1 + p.progress / 1000), rel=1e-12)
        best = weighted.score_candidates(obs, a, np.random.default_rng(0))[0]  # pruned: the same pick
        assert best.cell == cands[0].cell
        if not cands[0].dead:
            top = (cands[0].score, cands[0].progress)
            assert all((c.score, c.progress) <= top for c in cands if not c.dead)
        differ += cands[0].cell != plain.score_candidates(obs, a, np.random.default_rng(0))[0].cell
        # With the 50/50 factor too, pruning keeps the pick (its bounds allow for both factors).
        both = v1(start="corner", endgame=0, forced=False, progress_weight=True, influence=True)
        assert both.score_candidates(obs, a, np.random.default_rng(0))[0].cell == \
            both.score_candidates(obs, a, np.random.default_rng(0), prune=False)[0].cell
    assert differ < len(positions)  # a thousandth moves few picks


def test_deep_top_scores_only_the_best_depth_one_candidates_at_depth_two():
    shallow = v1(start="corner", endgame=0, forced=False)
    deep = v1(start="corner", endgame=0, forced=False, depth=2)
    top = v1(start="corner", endgame=0, forced=False, depth=2, deep_top=2)
    assert top.options()["deep_top"] == 2 and "deep_top" not in deep.options()
    positions = _positions(shallow, 6, 9, 9, 10)[:6]
    assert positions
    cut = 0
    for obs in positions:
        a = analyze(obs)
        first = shallow.score_candidates(obs, a, np.random.default_rng(0), prune=False)
        two = {c.cell for c in first[:2]}
        cut += len(first) > 2
        got = top.score_candidates(obs, a, np.random.default_rng(0), prune=False)
        assert {c.cell for c in got} == two
        full = {c.cell: c for c in deep.score_candidates(obs, a, np.random.default_rng(0), prune=False)}
        assert all(c == full[c.cell] for c in got)
    assert cut  # some positions had more candidates than the two scored deep


@pytest.mark.parametrize("options", [dict(progress_weight=True), dict(next_value="blend"),
                                     dict(progress_weight=True, next_value="blend", deep_top=3)])
def test_depth_two_values_the_next_board_by_its_picks_unweighted_value_and_prunes_soundly(options):
    # The next board is worth its best guess's value (a chance), not its weighted score, and
    # what stands in for it while it is unknown is never below it: pruning keeps the pick.
    one = v1(start="corner", endgame=0, forced=False, **options)
    two = v1(start="corner", endgame=0, forced=False, depth=2, **options)
    positions = _positions(v1(start="corner", endgame=0, forced=False), 6, 9, 9, 10)[:8]
    assert positions
    for obs in positions:
        a = analyze(obs)
        full = two.score_candidates(obs, a, np.random.default_rng(0), prune=False)
        assert two.score_candidates(obs, a, np.random.default_rng(0))[0].cell == full[0].cell
        shallow = {c.cell: c for c in one.score_candidates(obs, a, np.random.default_rng(0), prune=False)}
        for c in full:
            weight = 1 + c.progress / 1000 if options.get("progress_weight") else 1
            assert c.score == pytest.approx(c.value * weight, rel=1e-12)
            assert c.value <= 1 - c.probability + 1e-12  # a chance of surviving this guess and more
            if not options.get("next_value"):  # the deeper look-ahead can only lower the next board's worth
                assert c.value <= shallow[c.cell].value + 1e-12


def test_defaults_are_the_measured_combination_and_v1_prints_as_the_first_version_did():
    s = SearchSolver(start="corner")
    chosen = {"next_value": "blend", "spread": True, "candidates": None, "interior_margin": 0.05,
              "endgame": 2000, "endgame_density": 250, "node_limit": 100_000, "defer_dead": True,
              "progress_weight": True}
    assert {k: getattr(s, k) for k in chosen} == chosen
    assert not (s.pseudo or s.influence or s.dominance or s.isolated) and s.depth == 1
    # The first version's record (as the committed record tables hold it) rebuilds as V1.
    assert repr(v1(start="corner")) == (
        "SearchSolver(start='corner', depth=1, candidates=8, margin=0.1, interior=2, endgame=1000, "
        "node_limit=20000, forced=True, tie_break='prob_zero')")
    assert set(V1) <= set(s.options()) | set(SearchSolver.UNSET)
    # What the defaults print names every option that differs from its value before it was one.
    shown = s.options()
    assert all(shown[k] == getattr(s, k) for k, unset in SearchSolver.UNSET.items()
               if k != "deep_top" and getattr(s, k) != unset)
    deep = get_solver("search-deep")
    assert deep.depth == 2 and deep.deep_top == 2
    # The defaults and V1 play differently on some expert games, and each wins some.
    rng_games = [(ns.MinesweeperEnv(16, 30, 99, seed=900 + k), k) for k in range(12)]
    moves = [[m.cell for m in solver.play(env, np.random.default_rng(k)).moves]
             for env, k in rng_games for solver in (s, v1(start="corner"))]
    assert any(moves[2 * k] != moves[2 * k + 1] for k in range(12))


def test_tie_band_plays_the_first_candidate_in_tie_break_order_as_safe_and_within_the_band():
    # The single-step lesson inside the look-ahead: among the candidates exactly as safe as the
    # pick that score within the band, the first in tie-break order (corners first) is played.
    plain = SearchSolver(start="corner", endgame=0, forced=False, tie_break="fewest_covered_neighbours")
    banded = SearchSolver(start="corner", endgame=0, forced=False, tie_break="fewest_covered_neighbours",
                          tie_band=0.05)
    positions = _positions(plain, 10, 16, 16, 40)[:14]
    assert positions
    moved = 0
    for obs in positions:
        a = analyze(obs)
        rng = np.random.default_rng(0)
        picked = plain.candidate_cells(obs, a, rng)
        full = plain.score_candidates(obs, a, rng, prune=False, picked=picked)
        pick = banded.score_candidates(obs, a, rng, prune=False, picked=picked)[0]
        # Pruning keeps every candidate the band could choose: the same pick.
        assert banded.score_candidates(obs, a, rng, picked=picked)[0].cell == pick.cell
        if full[0].dead:
            continue
        order = [tuple(c) for c in picked.tolist()]
        band = [c for c in full if c.probability == full[0].probability and c.score >= 0.95 * full[0].score]
        assert pick.cell == min(band, key=lambda c: order.index(c.cell)).cell
        moved += pick.cell != full[0].cell
    assert moved  # the band changes some picks (one of these 11)
    assert banded.options()["tie_band"] == 0.05 and "tie_band" not in plain.options()
