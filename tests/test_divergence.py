"""The first guess position where two players of one game differ, and its kind."""

import numpy as np
import pytest

from nnsweeper import MinesweeperEnv, get_solver
from nnsweeper.engine import analyze
from nnsweeper.evaluation.divergence import (
    ENDGAME_LAYOUTS,
    KINDS,
    Click,
    DivergenceError,
    GuessPosition,
    classify,
    first_divergence,
    tally,
)
from nnsweeper.game import Game, Rules
from nnsweeper.solvers.base import GUESS_KINDS

SMALL = Rules(rows=5, cols=5, mines=5, first_click="safe")


def _clicks(seed):
    env = MinesweeperEnv(rows=9, cols=9, mines=10, seed=seed, first_click="safe")
    record = get_solver("csp", start="corner").play(env, np.random.default_rng(seed))
    return record.won, [Click(m.cell, m.kind not in GUESS_KINDS) for m in record.moves]


def test_the_same_guesses_on_the_same_boards_do_not_diverge():
    won, clicks = _clicks(3)  # a guess at once after the first click, then won
    assert won and not clicks[1].certain
    assert first_divergence(Rules.preset("beginner"), 3, clicks, clicks) is None
    # Seed 4 needs no guess: its certain moves in the reverse order lead to the same end.
    won, clicks = _clicks(4)
    assert won and all(c.certain for c in clicks) and len(clicks) > 10
    assert first_divergence(Rules.preset("beginner"), 4, clicks, clicks[:1] + clicks[:0:-1]) is None


def _board_2():
    # Seed 2 on 5x5 with 5 mines: the first click at (0, 0) shows 1; its three covered
    # neighbours hold one mine (P = 1/3 each) and the 21 other cells four (P = 4/21):
    # 3 * C(21, 4) = 17,955 layouts. The layout puts mines at (0, 4), (1, 0), (2, 1), (3, 2), (4, 0).
    game = Game(SMALL, 2)
    game.open_cell(0, 0)
    return game


def test_a_first_guess_on_different_cells_is_found_with_the_engines_figures():
    game = _board_2()
    assert game.observe()[0, 0] == 1 and game.mine_layout()[0, 4] and not game.mine_layout()[0, 1]
    a = [Click((0, 0), True), Click((0, 1), False)]
    b = [Click((0, 0), True), Click((0, 4), False)]
    d = first_divergence(SMALL, 2, a, b)
    assert d.guess == 0 and d.seed == 2 and d.cells == ((0, 1), (0, 4))
    assert d.probabilities == pytest.approx((1 / 3, 4 / 21), abs=1e-15)
    assert d.covered == 24 and d.layouts == 17_955 <= ENDGAME_LAYOUTS
    assert d.kind == "endgame"


def test_a_guess_where_the_other_player_had_a_safe_move_is_a_position_divergence():
    # (0, 1) shows 1 (its mine is (1, 0)), so (0, 2) stays covered after it.
    first = Click((0, 0), True)
    a = [first, Click((0, 1), False), Click((0, 2), False)]
    b = [first, Click((0, 2), False), Click((0, 1), False)]
    d = first_divergence(SMALL, 2, a, b)
    assert d.guess == 0 and d.cells == ((0, 1), (0, 2)) and d.kind == "endgame"
    # The second player knew (0, 2) was safe: its second guess is on no board of its own.
    d = first_divergence(SMALL, 2, a, [first, Click((0, 1), False), Click((0, 2), True)])
    assert d.guess == 1 and d.kind == "position" and d.cells == ((0, 2), None)
    assert d.probabilities == (0.0, None)  # the engine proves (0, 2) safe there


def test_a_forced_fifty_fifty_and_a_dead_cell_are_named():
    # 1x4, two mines: the 1 at (0, 1) sees one of (0, 0) and (0, 2); (0, 3) is a mine in
    # both layouts. (0, 0) and (0, 2) are a forced pair, and (0, 2) shows 1 whenever safe.
    rules = Rules(rows=1, cols=4, mines=2, first_click="none")
    grid = np.array([[-1, 1, -1, -1]], dtype=np.int8)
    d = classify(rules, 7, 3, GuessPosition(grid, (0, 0)), GuessPosition(grid, (0, 2)))
    assert d.kind == "50/50" and d.probabilities == (0.5, 0.5) and d.layouts == 2 and d.covered == 3


def test_an_edge_cell_against_an_interior_one_is_off_edge():
    rules = Rules.preset("expert")
    env = MinesweeperEnv(rows=16, cols=30, mines=99, seed=11, first_click="safe")
    env.reset()
    env.reveal(0, 0)
    grid = env.observe()
    a = analyze(grid, 99)
    assert a.layouts > ENDGAME_LAYOUTS and a.frontier.any()
    edge = tuple(map(int, np.argwhere(a.frontier & ~a.safe)[0]))
    inner = (15, 29)
    assert not a.frontier[inner]
    d = classify(rules, 11, 0, GuessPosition(grid, edge), GuessPosition(grid, inner))
    assert d.kind == "off-edge"
    d = classify(rules, 11, 0, GuessPosition(grid, inner), GuessPosition(grid, (15, 28)))
    assert d.kind == "first guess" and d.probabilities[0] == d.probabilities[1]
    later = classify(rules, 11, 2, GuessPosition(grid, inner), GuessPosition(grid, (15, 28)))
    assert later.kind == "look-ahead"


def test_moves_that_cannot_be_replayed_are_refused():
    with pytest.raises(DivergenceError, match=r"cell \(5, 0\) is off the 5x5 board"):
        first_divergence(SMALL, 2, [Click((0, 0), True), Click((5, 0), False)], [Click((0, 0), True)])
    with pytest.raises(DivergenceError, match="ended at move 1, but 1 moves follow"):
        first_divergence(SMALL, 2, [Click((0, 0), True), Click((0, 4), False), Click((4, 4), False)],
                         [Click((0, 0), True)])


def test_tally_counts_each_kind_and_its_points():
    rules = Rules(rows=1, cols=4, mines=2, first_click="none")
    grid = np.array([[-1, 1, -1, -1]], dtype=np.int8)
    d = classify(rules, 7, 0, GuessPosition(grid, (0, 0)), GuessPosition(grid, (0, 2)))
    out = tally([(d, True), (d, True), (d, False)], games=200)
    assert out["50/50"] == {"first": 2, "second": 1, "points": 0.5}
    assert list(out) == list(KINDS) and all(out[k]["first"] == 0 for k in KINDS if k != "50/50")
