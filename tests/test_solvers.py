"""Solvers: local rules on hand-made boards, records, certainty, options."""

from __future__ import annotations

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.solvers import SOLVERS, CSPSolver, first_click_cell, get_solver, local_rules
from nnsweeper.solvers.ranking import TIE_BREAKS, prob_zero


def test_local_rules_on_a_hand_made_board():
    # No number decides its covered neighbours on its own here.
    grid = np.array(
        [
            [1, 1, -1],
            [1, 1, -1],
            [-1, -1, -1],
        ]
    )
    flags = np.zeros_like(grid, dtype=bool)
    safe, mines = local_rules(grid, flags)
    assert not safe.any() and not mines.any()

    grid = np.array(
        [
            [0, 1, -1],
            [0, 1, -1],
            [0, 1, -1],
        ]
    )
    safe, mines = local_rules(grid, np.zeros((3, 3), dtype=bool))
    # The 1 at (0,1) sees (0,2), (1,2); the 1 at (2,1) sees (1,2), (2,2); nothing is
    # forced by a single number.
    assert not safe.any() and not mines.any()
    flags = np.zeros((3, 3), dtype=bool)
    flags[1, 2] = True
    safe, mines = local_rules(grid, flags)
    assert safe.tolist() == [[False, False, True], [False, False, False], [False, False, True]]
    assert not mines.any()

    grid = np.array([[2, -1], [-1, 2]])
    safe, mines = local_rules(grid, np.zeros((2, 2), dtype=bool))
    assert mines.tolist() == [[False, True], [True, False]] and not safe.any()


def test_first_click_cell():
    assert first_click_cell("center", 10, 10) == (5, 5)
    assert first_click_cell("center", 16, 30) == (8, 15)
    assert first_click_cell("corner", 16, 30) == (0, 0)
    assert first_click_cell((3, 4), 16, 30) == (3, 4)
    with pytest.raises(ValueError, match="start must be 'center', 'corner', 'random' or"):
        first_click_cell("middle", 9, 9)
    # A random first click comes from the game's rng: one draw of a flat index.
    assert first_click_cell("random", 16, 30, np.random.default_rng(5)) == divmod(
        int(np.random.default_rng(5).integers(16 * 30)), 30)
    with pytest.raises(ValueError, match=r"start col must be an integer in \[0, 9\).*got 9"):
        first_click_cell((0, 9), 9, 9)


def test_registry_and_bad_options():
    assert set(SOLVERS) >= {"single_point", "csp"}
    with pytest.raises(ValueError, match="unknown solver 'cnnx'; choose one of single_point, csp"):
        get_solver("cnnx")
    with pytest.raises(ValueError, match="tie_break must be one of random"):
        get_solver("csp", tie_break="best")
    with pytest.raises(ValueError, match="bad options for solver 'single_point'"):
        get_solver("single_point", tie_break="random")
    with pytest.raises(ValueError, match="start must be"):
        get_solver("csp", start="top")


@pytest.mark.parametrize("start", ["center", "corner", (2, 3)])
def test_first_move_goes_where_asked(start):
    solver = get_solver("csp", start=start)
    rec = solver.play(ns.MinesweeperEnv(9, 9, 10, seed=3), np.random.default_rng(3))
    assert rec.moves[0].kind == "first"
    assert rec.moves[0].cell == first_click_cell(start, 9, 9)


@pytest.mark.parametrize("name", ["single_point", "csp"])
def test_same_seed_same_game(name):
    solver = get_solver(name)
    recs = [
        solver.play(ns.MinesweeperEnv(10, 10, 20, seed=11), np.random.default_rng(11)).to_dict()
        for _ in range(2)
    ]
    for r in recs:
        r.pop("seconds")
    assert repr(recs[0]) == repr(recs[1])  # repr: single_point records NaN probabilities


def _games(n, rules=((9, 9, 10), (10, 10, 20), (16, 16, 40), (8, 12, 25))):
    for k in range(n):
        r, c, m = rules[k % len(rules)]
        yield ns.MinesweeperEnv(r, c, m, seed=1000 + k), np.random.default_rng(1000 + k)


def test_csp_never_loses_on_a_certain_move_and_flags_only_mines():
    solver = get_solver("csp", start="corner")
    kinds = set()
    for env, rng in _games(80):
        rec = solver.play(env, rng)
        kinds |= {m.kind for m in rec.moves}
        if rec.won:
            assert rec.cleared == 1.0 and env.result == "win"
        else:
            # Only a guess (or the first click under first_click="none") can lose.
            assert rec.moves[-1].kind == "guess" and 0 < rec.moves[-1].probability < 1
            assert rec.cleared < 1.0
        for m in rec.moves:
            if m.kind in ("local", "engine"):
                assert m.probability == 0.0
        assert rec.guesses == sum(m.kind == "guess" for m in rec.moves)
    assert kinds == {"first", "local", "engine", "guess"}


def test_csp_guesses_a_lowest_probability_cell():
    seen = []

    class Spy(CSPSolver):
        def choose_guess(self, a, grid, flags, total_mines, rng):
            cell = super().choose_guess(a, grid, flags, total_mines, rng)
            p = np.where(a.unknown & ~flags, a.probabilities, np.inf)
            seen.append((a.probabilities[cell], p.min()))
            return cell

    solver = Spy(start="corner")
    for env, rng in _games(40):
        solver.play(env, rng)
    assert len(seen) > 20
    for chosen, best in seen:
        assert chosen <= best + 1e-9


def test_single_point_only_loses_on_a_guess():
    solver = get_solver("single_point")
    lost = 0
    for env, rng in _games(40):
        rec = solver.play(env, rng)
        if not rec.won:
            lost += 1
            assert rec.moves[-1].kind == "guess"
        assert all(m.kind in ("first", "local", "guess") for m in rec.moves)
    assert lost > 0


def test_csp_wins_a_game_without_guessing():
    # 1 mine on a 6x6 board with an opening first click: logic alone must finish it.
    solver = get_solver("csp", start="center")
    for seed in range(10):
        env = ns.MinesweeperEnv(6, 6, 1, seed=seed, first_click="zero")
        rec = solver.play(env, np.random.default_rng(seed))
        assert rec.won and rec.guesses == 0


def test_prob_zero_prefers_corners_on_an_empty_board():
    grid = np.full((5, 5), -1)
    p = np.full((5, 5), 0.2)
    pz = prob_zero(p, grid)
    assert pz[0, 0] == pytest.approx(0.8**4)
    assert pz[0, 2] == pytest.approx(0.8**6)
    assert pz[2, 2] == pytest.approx(0.8**9)


@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_tie_breaks_and_lookahead_play_whole_games(tie_break):
    solver = get_solver("csp", start="corner", tie_break=tie_break, lookahead=3)
    wins = sum(solver(env, rng) for env, rng in _games(20, rules=((9, 9, 10),)))
    assert wins >= 12  # beginner is won about 90% of the time


def test_each_tie_break_orders_a_level_of_equal_risk_by_hand():
    """Nine covered cells of equal risk around revealed numbers: each order, by hand."""
    from nnsweeper.solvers.ranking import rank_cells

    # A 4x4 board: the top row revealed, the rest covered; every covered cell at 0.25. Each order's
    # first cells over a dozen draws of the random order among its exact ties.
    grid = np.full((4, 4), -1, dtype=np.int8)
    grid[0] = [1, 1, 1, 1]
    p = np.where(grid < 0, 0.25, 0.0)
    unknown = grid < 0
    first = {t: {tuple(rank_cells(p, unknown, grid, np.random.default_rng(seed), t, 1e-9)[0])
                 for seed in range(12)} for t in TIE_BREAKS}
    ends = {(1, 0), (1, 3), (3, 0), (3, 3)}  # three covered neighbours each, the fewest
    assert first["fewest_covered_neighbours"] == ends
    assert first["prob_zero"] == ends  # the same four have the best chance of a zero (0.75 ** 4)
    assert first["fewest_covered_prob_zero"] == ends
    assert first["most_revealed_neighbours"] == {(1, 1), (1, 2)}  # three numbers around each
    assert first["fewest_board_neighbours"] == {(3, 0), (3, 3)}  # the board's covered corners
    assert len(first["random"]) > 4
