"""The move a solver would make on a typed position (suggest_move)."""

from pathlib import Path

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper import InconsistentBoardError, MinesweeperEnv, analyze, get_solver, parse_observation
from nnsweeper.solvers.suggest import PositionEnv, Suggestion, format_suggestions, load_solvers, suggest_move

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "board.txt"

# A 1 in the corner with two covered neighbours, the rest revealed: one mine, on
# either of them, each with P = 1/2.
CORNER = "1 .\n. 1"
# The 1 makes (0, 1) a mine; the mine count then proves (0, 2) safe, which no local
# rule can see.
COUNTED = "1 . ."


@pytest.fixture(scope="module")
def neural():
    """The bundled GNN, alone and behind the logic (loaded once)."""
    return {name: get_solver(name) for name in ("gnn", "hybrid-gnn")}


def test_corner_one_with_two_covered_neighbours(neural):
    obs = parse_observation(CORNER, 1)
    for solver in ("single_point", "csp", neural["gnn"], neural["hybrid-gnn"]):
        s = suggest_move(solver, obs)
        assert s.cell in {(0, 1), (1, 0)}
        assert s.kind == "guess"
        assert s.exact_probability == 0.5
        assert s.flags == ()
    csp = suggest_move("csp", obs)
    assert csp.probability == 0.5 and csp.model_probability is None
    assert csp.reason == ("guess: lowest P(mine) = 0.5 (shared by 2 cells), ties broken by fewest covered "
                          "neighbours, then chance of a zero")
    zero = suggest_move(ns.get_solver("csp", tie_break="prob_zero"), obs)
    assert zero.reason == "guess: lowest P(mine) = 0.5 (shared by 2 cells), ties broken by chance of a zero"
    sp = suggest_move("single_point", obs)
    assert np.isnan(sp.probability)
    assert "random covered cell next to a number" in sp.reason
    gnn = suggest_move(neural["gnn"], obs)
    assert gnn.probability == gnn.model_probability and 0 < gnn.model_probability < 1
    assert "the model's lowest P(mine)" in gnn.reason
    hybrid = suggest_move(neural["hybrid-gnn"], obs)
    assert hybrid.probability == 0.5  # the exact risk, as a game records it
    assert "nothing is proven" in hybrid.reason


def test_a_cell_only_the_engine_proves_safe(neural):
    obs = parse_observation(COUNTED, 1)
    csp = suggest_move("csp", obs)
    assert (csp.cell, csp.kind, csp.probability, csp.exact_probability) == ((0, 2), "engine", 0.0, 0.0)
    assert csp.flags == ((0, 1),)  # the local rule flagged the 1's mine first
    assert csp.reason.startswith("proven safe by the engine")
    hybrid = suggest_move(neural["hybrid-gnn"], obs)
    assert (hybrid.cell, hybrid.kind) == ((0, 2), "engine")
    assert hybrid.model_probability is None  # nothing to guess: the model was not asked
    # The single-point solver flags the mine and, seeing no rule for (0, 2), guesses it.
    sp = suggest_move("single_point", obs)
    assert (sp.cell, sp.kind, sp.flags) == ((0, 2), "guess", ((0, 1),))
    assert "the engine proves 1 cell safe that local rules miss" in sp.reason
    gnn = suggest_move(neural["gnn"], obs)
    assert gnn.cell in {(0, 1), (0, 2)} and gnn.kind in ("model", "guess")
    assert gnn.model_probability is not None


def test_a_single_point_guess_says_its_own_cells_exact_risk():
    # On the example with seed 0 the random guess is (5, 7), a mine the engine proves;
    # the exact P(mine) is said of that cell, not of the safe cells the local rules miss.
    sp = suggest_move("single_point", parse_observation(EXAMPLE.read_text(), 10), 0)
    assert (sp.cell, sp.kind, sp.exact_probability) == ((5, 7), "guess", 1.0)
    assert sp.reason == ("guess: no local rule applies, so a random covered cell next to a number; "
                         "the solver computes no probabilities; the exact P(mine) of (5, 7) = 1, a proven "
                         "mine; the engine proves 3 cells safe that local rules miss")


def test_a_local_rule_names_the_number_behind_it():
    obs = parse_observation("1 F .\n. . .", 2)
    for name in ("single_point", "csp"):
        s = suggest_move(name, obs)
        assert (s.cell, s.kind, s.probability) == ((1, 0), "local", 0.0)
        assert s.reason == "local rule (single point): the 1 at (0, 0) has its 1 mine flagged already"
    # Without the flag, the same mine is proved by the numbers, not flagged.
    s = suggest_move("single_point", parse_observation("1 1 .\n. 1 .\n. . .", 1))
    assert s.reason == ("local rule (single point): the 1 at (0, 1) has its 1 mine found already "
                        "(proved by the numbers)")
    s = suggest_move("csp", parse_observation("0 . .\n. . .", 1))
    assert (s.cell, s.kind) == ((0, 1), "local")
    assert s.reason == "local rule (single point): the 0 at (0, 0) has no mine around it"


def test_proven_safe_cells_come_first_on_the_example(neural):
    obs = parse_observation(EXAMPLE.read_text(), 10)
    a = analyze(obs)
    for solver in ("csp", neural["hybrid-gnn"]):
        s = suggest_move(solver, obs)
        assert a.safe[s.cell] and s.kind == "engine"
        assert set(s.flags) == {tuple(c) for c in np.argwhere(a.mines)}


def test_csp_guess_is_the_lowest_exact_probability():
    # The corner 1 on a 3x3 board with 2 mines: 1/3 next to it, 1/5 elsewhere. Of the five
    # safest cells the corners (0, 2), (2, 0) and (2, 2) have 3 covered neighbours (the edge
    # cells 5), and of those the far corner (2, 2) is likeliest to be a zero: csp takes it,
    # whatever its seed. By the covered neighbours alone it takes one of the three corners.
    obs = parse_observation("1..\n...\n...", 2)
    assert {suggest_move("csp", obs, seed).cell for seed in range(12)} == {(2, 2)}
    s = suggest_move("csp", obs)
    assert (s.cell, s.kind, s.probability) == ((2, 2), "guess", 0.2)
    fewest = ns.get_solver("csp", tie_break="fewest_covered_neighbours")
    assert {suggest_move(fewest, obs, seed).cell for seed in range(12)} == {(0, 2), (2, 0), (2, 2)}
    s = suggest_move(ns.get_solver("csp", tie_break="prob_zero"), obs)
    assert (s.cell, s.kind, s.probability) == ((2, 2), "guess", 0.2)
    # And on the guesses of real games.
    checked = 0
    for seed, d in _csp_decisions(6):
        if d.guessed:
            s = suggest_move("csp", ns.Observation(d.grid, 10, d.flags), seed)
            p = analyze(d.grid, 10, d.flags).probabilities
            assert s.kind == "guess"
            assert s.probability == p[s.cell] == p[(d.grid < 0) & ~d.flags].min()
            checked += 1
    assert checked > 0


def _csp_decisions(games: int):
    """(seed, decision) of every decision csp makes in the first beginner games."""
    csp = get_solver("csp")
    for seed in range(games):
        decisions = []
        csp.play(MinesweeperEnv(9, 9, 10, seed=seed), np.random.default_rng(seed),
                 on_decision=decisions.append)
        yield from ((seed, d) for d in decisions)


def test_certain_moves_match_the_solver_in_a_real_game():
    # Local and engine moves do not depend on the rng: the suggestion is the cell
    # the solver revealed first in the game.
    checked = 0
    for _, d in _csp_decisions(4):
        if d.moves and d.moves[0].kind in ("local", "engine"):
            s = suggest_move("csp", ns.Observation(d.grid, 10, d.flags))
            assert (s.cell, s.kind) == (d.moves[0].cell, d.moves[0].kind)
            checked += 1
    assert checked > 10


def test_empty_board_gives_the_first_click():
    obs = parse_observation(". . . .\n. . . .\n. . . .", 3)
    s = suggest_move("csp", obs)
    assert (s.cell, s.kind) == ((1, 2), "first")
    assert s.exact_probability == 0.25
    assert "start cell (center)" in s.reason
    assert suggest_move(get_solver("single_point", start="corner"), obs).cell == (0, 0)
    rand = get_solver("csp", start="random")
    picks = {suggest_move(rand, obs, seed).cell for seed in range(20)}
    assert len(picks) > 1
    assert suggest_move(rand, obs, 7) == suggest_move(rand, obs, 7)


def test_deterministic_for_a_seed():
    obs = parse_observation(EXAMPLE.read_text(), 10)
    sp = get_solver("single_point")

    def move(rng):
        s = suggest_move(sp, obs, rng)  # a single-point guess has P = NaN: compare the rest
        return s.cell, s.kind, s.flags, s.exact_probability, s.reason

    first = move(3)
    assert all(move(3) == first for _ in range(3))
    assert move(np.random.default_rng(3)) == first
    assert move(None) == move(0)
    assert len({move(seed)[0] for seed in range(30)}) > 1


def test_position_env_holds_no_hidden_board():
    obs = parse_observation("1 . .\n. . 2", 3)
    env = PositionEnv(obs)
    assert set(vars(env)) == {"r", "c", "mines", "mask", "_counts"}
    np.testing.assert_array_equal(env.mask, [[0, 1, 1], [1, 1, 0]])
    np.testing.assert_array_equal(env._counts, [[1, 0, 0], [0, 0, 2]])
    assert not env.mask.flags.writeable and not env._counts.flags.writeable
    with pytest.raises(ValueError, match="no game to reset"):
        env.reset()


def test_nothing_to_reveal_gives_none():
    assert suggest_move("csp", parse_observation("1 F", 1)) is None
    assert suggest_move("single_point", parse_observation("0 0", 0)) is None


def test_bad_input_is_refused():
    obs = parse_observation(CORNER, 1)
    with pytest.raises(ValueError, match="unknown solver 'nope'; choose one of"):
        suggest_move("nope", obs)
    with pytest.raises(ValueError, match="a registered solver name, such as 'csp' .*; got int"):
        suggest_move(3, obs)
    with pytest.raises(ValueError, match=r"rng must be a numpy Generator, a seed .*; got -1"):
        suggest_move("csp", obs, -1)
    with pytest.raises(ns.InvalidBoardError, match=r"an Observation, such as parse_obs.* got ndarray"):
        suggest_move("csp", np.array([[1, -1]]))
    with pytest.raises(InconsistentBoardError, match=r"the 1 at \(0, 0\) cannot be satisfied"):
        suggest_move("single_point", parse_observation("1 0\n0 0", 0))


def test_suggestion_and_format():
    s = suggest_move("csp", parse_observation(COUNTED, 1))
    assert isinstance(s, Suggestion)
    assert s.move == ns.solvers.Move((0, 2), "engine", 0.0)
    assert str(s).startswith("csp: (0, 2) proven safe by the engine")
    text = format_suggestions([("csp", s), ("single_point", None)])
    assert text.splitlines() == [
        "  csp           (0, 2)  proven safe by the engine: no consistent layout has a mine there; "
        "after flagging (0, 1)",
        "  single_point  -       nothing to reveal: every covered cell is flagged",
    ]


def test_load_solvers():
    solvers, skipped = load_solvers(["csp", "single_point"])
    assert [s.name for s in solvers] == ["csp", "single_point"] and skipped == []
    with pytest.raises(ValueError, match="unknown solver 'x'"):
        load_solvers(["x"])


def test_top_level_exports():
    for name in ("format_board", "parse_board", "parse_observation", "format_analysis",
                 "suggest_move", "Suggestion"):
        assert name in ns.__all__ and hasattr(ns, name)
    assert ns.suggest_move is suggest_move
