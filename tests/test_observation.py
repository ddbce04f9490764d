"""Tests of the visible-board type: its checks, its properties, the stacked form, and
that the engine, the model inputs, the models, the board text and the solvers take it
as it is and give exactly what they give for the same grid, mine count and flags."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import nnsweeper as ns
from nnsweeper import features, observation
from nnsweeper.boardtext import format_board, format_probabilities, parse_board, parse_observation
from nnsweeper.errors import InconsistentBoardError, InvalidBoardError
from nnsweeper.grid import dilate
from nnsweeper.observation import Observation, Observations, as_observation, as_observations
from nnsweeper.solvers import CSPSolver, get_solver

# A hand board: the 0s clear (0, 2) and (1, 2); the flag at (2, 2) is the mine of both 1s,
# so the 2 mines left lie among the 3 cells of the last column.
GRID = np.array([[0, 0, -1, -1],
                 [0, 1, -1, -1],
                 [0, 1, -1, -1]])
FLAGS = np.zeros((3, 4), dtype=bool)
FLAGS[2, 2] = True
TOTAL = 3


@pytest.fixture
def hand() -> Observation:
    return Observation.of(GRID, TOTAL, FLAGS)


def midgame(seed: int, rows: int, cols: int, mines: int, reveals: int):
    """A board part-way through a game, half of its proven mines flagged: (grid, total, flags)."""
    env = ns.MinesweeperEnv(rows, cols, mines, seed=seed)
    rng = np.random.default_rng(seed)
    env.reveal(rows // 2, cols // 2)
    layout = env.mine_layout()
    for _ in range(reveals):
        cand = np.argwhere((env.observe() < 0) & ~layout)
        if env.done or len(cand) == 0:
            break
        i, j = cand[rng.integers(len(cand))]
        env.reveal(int(i), int(j))
    grid = env.observe()
    proven = np.argwhere(ns.analyze(grid, mines).mines)
    flags = np.zeros(grid.shape, dtype=bool)
    for i, j in proven[::2]:
        flags[i, j] = True
    return grid, mines, flags


# --------------------------------------------------------------------------- one board
def test_holds_the_board_as_int8_and_bool(hand):
    assert hand.grid.dtype == np.int8 and hand.flags.dtype == bool
    np.testing.assert_array_equal(hand.grid, GRID)
    np.testing.assert_array_equal(hand.flags, FLAGS)
    assert hand.total_mines == 3 and type(hand.total_mines) is int
    assert Observation(GRID, TOTAL, FLAGS) == hand  # the constructor checks as `of` does
    assert Observation.of(GRID, np.int64(3), FLAGS.astype(int)).total_mines == 3
    no_flags = Observation.of(GRID, 2)
    assert no_flags.flags.dtype == bool and not no_flags.flags.any()
    # Integral floats are integers.
    assert Observation.of(GRID.astype(float), TOTAL, FLAGS) == hand


def test_properties_by_hand(hand):
    assert hand.shape == (3, 4)
    covered = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(hand.covered, covered)
    np.testing.assert_array_equal(hand.revealed, ~covered)
    unknown = covered.copy()
    unknown[2, 2] = False
    np.testing.assert_array_equal(hand.unknown, unknown)
    frontier = np.zeros((3, 4), dtype=bool)
    frontier[0, 2] = frontier[1, 2] = True  # (2, 2) is flagged; column 3 touches no number
    np.testing.assert_array_equal(hand.frontier, frontier)
    assert hand.n_flags == 1
    assert hand.mines_left == 2


def test_arrays_are_read_only_copies():
    grid, flags = GRID.astype(np.int8), FLAGS.copy()
    obs = Observation.of(grid, TOTAL, flags)
    grid[0, 0] = 5
    flags[2, 2] = False
    assert obs.grid[0, 0] == 0 and obs.flags[2, 2]
    for a in (obs.grid, obs.flags, obs.covered, obs.revealed, obs.unknown, obs.frontier):
        assert not a.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            a[0, 0] = 1
    with pytest.raises(AttributeError):
        obs.total_mines = 4


def test_equality_hash_repr_and_pickle(hand):
    same = Observation.of(GRID.tolist(), 3, FLAGS)
    assert same == hand and hash(same) == hash(hand)
    assert Observation.of(GRID, 4, FLAGS) != hand
    assert Observation.of(GRID, 3) != hand
    assert len({hand, same, Observation.of(GRID, 2)}) == 2
    assert repr(hand) == "Observation(3x4, total_mines=3, flags=1, covered=6)"
    back = pickle.loads(pickle.dumps(hand))
    assert back == hand and not back.grid.flags.writeable and not back.flags.flags.writeable


@pytest.mark.parametrize(
    ("grid", "match"),
    [
        (np.array([-1, 1]), r"grid must be a non-empty 2-D array; got shape \(2,\)"),
        (np.full((2, 2, 2), -1), r"grid must be a non-empty 2-D array; got shape \(2, 2, 2\)"),
        (np.zeros((0, 3)), r"grid must be a non-empty 2-D array; got shape \(0, 3\)"),
        (np.array([[-1, 0.5]]), r"grid must hold integers \(-1 covered, 0..8 revealed\); got dtype float64"),
        (np.array([[True, False]]), r"grid must hold integers .*; got dtype bool"),
        (np.array([["a", "b"]]), r"grid must hold integers .*; got dtype <U1"),
        (np.array([[-1, 9]]), r"grid values must be -1 \(covered\) or 0..8; got 9 at \(0, 1\)"),
        (np.array([[-2, 0]]), r"grid values must be -1 \(covered\) or 0..8; got -2 at \(0, 0\)"),
    ],
)
def test_refuses_bad_grids(grid, match):
    with pytest.raises(InvalidBoardError, match=match):
        Observation.of(grid, 0)


@pytest.mark.parametrize("total", [1.0, "1", None, True, np.bool_(True), [1], np.array([1])])
def test_refuses_mine_counts_that_are_not_integers(total):
    with pytest.raises(InvalidBoardError, match="total_mines must be an integer; got "):
        Observation.of(np.full((2, 2), -1), total)


def test_refuses_a_negative_mine_count():
    with pytest.raises(InvalidBoardError, match="total_mines must be at least 0; got -1"):
        Observation.of(np.full((2, 2), -1), -1)


@pytest.mark.parametrize(
    ("flags", "match"),
    [
        (np.zeros((2, 3), dtype=bool), r"flags must have the grid's shape \(2, 2\); got \(2, 3\)"),
        (np.full((2, 2), 0.0), r"flags must be a boolean array \(or 0/1\); got dtype float64"),
        (np.full((2, 2), 2), r"flags must be a boolean array \(or 0/1\); got dtype int64"),
        (np.full((2, 2), "x"), r"flags must be a boolean array \(or 0/1\); got dtype <U1"),
        (np.array([[False, True], [False, False]]),
         r"flags must be on covered cells; got a flag on revealed \(0, 1\)"),
    ],
)
def test_refuses_bad_flags(flags, match):
    with pytest.raises(InvalidBoardError, match=match):
        Observation.of(np.array([[-1, 1], [-1, 1]]), 1, flags)


def test_refuses_counts_that_do_not_fit():
    flags = np.array([[True, True], [False, False]])
    with pytest.raises(InconsistentBoardError, match="2 flags exceed the 1 mines on the board") as info:
        Observation.of(np.full((2, 2), -1), 1, flags)
    assert "(total_mines=1); flags must not outnumber the mines" in str(info.value)
    assert "flags must not outnumber the mines" in str(info.value)
    whole = r"^5 mines left \(total_mines=5 minus flags\) do not fit in 4 covered unflagged cells$"
    with pytest.raises(InconsistentBoardError, match=whole):
        Observation.of(np.full((2, 2), -1), 5)
    with pytest.raises(InconsistentBoardError, match="2 mines left .* do not fit in 1 covered unflagged"):
        Observation.of(np.array([[-1, -1], [1, 1]]), 3, np.array([[True, False], [False, False]]))
    # Exactly full and exactly empty both fit.
    assert Observation.of(np.full((2, 2), -1), 4).mines_left == 4
    assert Observation.of(np.full((2, 2), -1), 2, flags).mines_left == 0
    assert Observation.of(np.zeros((2, 2)), 0).mines_left == 0


def test_as_observation(hand):
    assert as_observation(hand) is hand
    assert as_observation(GRID, TOTAL, FLAGS) == hand
    with pytest.raises(InvalidBoardError, match="an Observation carries its own total_mines and flags: "
                                                "give neither with it; got total_mines"):
        as_observation(hand, 3)
    with pytest.raises(InvalidBoardError, match="got total_mines and flags"):
        as_observation(hand, 3, FLAGS)
    with pytest.raises(InvalidBoardError, match="total_mines must be an integer; got None"):
        as_observation(GRID)


# --------------------------------------------------------------------------- a stack
def _stack_inputs():
    boards = [midgame(seed, 6, 7, 8, 2) for seed in range(4)]
    return (np.stack([g for g, _, _ in boards]), np.array([t for _, t, _ in boards]),
            np.stack([f for _, _, f in boards]), boards)


def test_observations_stack_and_index():
    grids, totals, flags, boards = _stack_inputs()
    batch = Observations.of(grids, totals, flags)
    assert len(batch) == 4 and batch.shape == (4, 6, 7)
    assert batch.grids.dtype == np.int8 and batch.total_mines.dtype == np.int64 and batch.flags.dtype == bool
    singles = [Observation.of(*b) for b in boards]
    assert list(batch) == singles
    assert batch[-1] == singles[3]
    assert isinstance(batch[1:3], Observations) and list(batch[1:3]) == singles[1:3]
    assert Observations.stack(singles) == batch
    assert as_observations(singles) == batch
    assert as_observations(batch) is batch
    assert Observations.of(grids, 8, None) == Observations.of(grids, [8] * 4)  # an int applies to every board
    for name in ("covered", "revealed", "unknown", "frontier"):
        np.testing.assert_array_equal(getattr(batch, name), np.stack([getattr(o, name) for o in singles]))
    np.testing.assert_array_equal(batch.mines_left, [o.mines_left for o in singles])
    for a in (batch.grids, batch.total_mines, batch.flags, batch[0].grid, batch.frontier):
        assert not a.flags.writeable
    grids[0, 0, 0] = 7
    assert batch.grids[0, 0, 0] == singles[0].grid[0, 0]
    back = pickle.loads(pickle.dumps(batch))
    assert back == batch and not back.grids.flags.writeable
    assert repr(batch) == "Observations(4 boards of 6x7)"
    with pytest.raises(TypeError, match="indexed by an integer or a slice"):
        batch[1.0]


def test_observations_name_the_board():
    grids, totals, flags, _ = _stack_inputs()
    bad = grids.copy()
    bad[1, 2, 3] = 11
    with pytest.raises(InvalidBoardError, match=r"got 11 at \(2, 3\) of board 1"):
        Observations.of(bad, totals)
    revealed = np.argwhere(grids[2] >= 0)[0]
    on_revealed = flags.copy()
    on_revealed[2, revealed[0], revealed[1]] = True
    with pytest.raises(InvalidBoardError,
                       match=rf"flag on revealed \({revealed[0]}, {revealed[1]}\) of board 2"):
        Observations.of(grids, totals, on_revealed)
    with pytest.raises(InvalidBoardError, match="total_mines must be at least 0; got -1 for board 3"):
        Observations.of(grids, [8, 8, 8, -1])
    with pytest.raises(InvalidBoardError, match=r"total_mines must have shape \(4,\), one per board"):
        Observations.of(grids, [8, 8])
    with pytest.raises(InvalidBoardError, match="total_mines must be integers"):
        Observations.of(grids, [8.0] * 4)
    with pytest.raises(InvalidBoardError, match="flags must have the grids' shape"):
        Observations.of(grids, totals, flags[0])
    two = flags.copy()
    two[1] = False
    for i, j in np.argwhere(grids[1] < 0)[:2]:
        two[1, i, j] = True
    exceed = r"^board 1: 2 flags exceed the 1 mines on the board \(total_mines=1\)"
    with pytest.raises(InconsistentBoardError, match=exceed):
        Observations.of(grids, [8, 1, 8, 8], two)
    with pytest.raises(InconsistentBoardError, match=r"^board 2: 500 mines left \(total_mines=500"):
        Observations.of(grids, [8, 8, 500, 8])
    with pytest.raises(InvalidBoardError, match="same shape"):
        Observations.of([grids[0], grids[1][:3]], [8, 8])
    with pytest.raises(InvalidBoardError, match=r"non-empty 3-D array \(boards, rows, cols\); got shape"):
        Observations.of(grids[0], 8)


def test_stacking_observations_refuses_other_shapes_and_types(hand):
    with pytest.raises(InvalidBoardError, match=r"board 1: boards must all have one shape to be stacked; "
                                                r"got \(2, 2\), board 0 is \(3, 4\)"):
        Observations.stack([hand, Observation.of(np.full((2, 2), -1), 1)])
    with pytest.raises(InvalidBoardError, match="board 1: expected an Observation; got ndarray"):
        Observations.stack([hand, GRID])
    with pytest.raises(InvalidBoardError, match="at least one board; got none"):
        Observations.stack([])
    with pytest.raises(InvalidBoardError, match="an Observations carries its own total_mines and flags"):
        as_observations(Observations.stack([hand]), [3])


# --------------------------------------------------------------------------- properties
@st.composite
def boards(draw, max_side: int = 7):
    """Any well-formed board whose mine count fits: (grid, total, flags)."""
    rows, cols = draw(st.integers(1, max_side)), draw(st.integers(1, max_side))
    grid = draw(arrays(np.int8, (rows, cols), elements=st.integers(-1, 8)))
    flags = draw(arrays(np.bool_, (rows, cols))) & (grid == -1)
    n_flags, n_unknown = int(flags.sum()), int(((grid == -1) & ~flags).sum())
    return grid, draw(st.integers(n_flags, n_flags + n_unknown)), flags


@given(boards())
def test_property_masks_and_counts(board):
    grid, total, flags = board
    obs = Observation.of(grid, total, flags)
    np.testing.assert_array_equal(obs.covered, grid == -1)
    np.testing.assert_array_equal(obs.revealed, ~obs.covered)
    np.testing.assert_array_equal(obs.unknown | obs.flags, obs.covered)
    assert not (obs.unknown & obs.flags).any()
    np.testing.assert_array_equal(obs.frontier, obs.unknown & dilate(obs.revealed))
    assert obs.mines_left == total - int(flags.sum())
    assert 0 <= obs.mines_left <= int(obs.unknown.sum())
    assert Observation.of(obs.grid, obs.total_mines, obs.flags) == obs


@given(boards(), st.integers(1, 5))
def test_property_counts_that_do_not_fit_are_refused(board, beyond):
    grid, total, flags = board
    n_flags, n_unknown = int(flags.sum()), int(((grid == -1) & ~flags).sum())
    if n_flags >= beyond:
        exceed = f"{n_flags} flags exceed the {n_flags - beyond} mines"
        with pytest.raises(InconsistentBoardError, match=exceed):
            Observation.of(grid, n_flags - beyond, flags)
    with pytest.raises(InconsistentBoardError, match=f"do not fit in {n_unknown} covered unflagged cells"):
        Observation.of(grid, n_flags + n_unknown + beyond, flags)


@given(st.lists(boards(max_side=4), min_size=1, max_size=5).map(
    lambda bs: [b for b in bs if b[0].shape == bs[0][0].shape]))
def test_property_stack_matches_the_single_boards(stack):
    batch = Observations.of(np.stack([g for g, _, _ in stack]), [t for _, t, _ in stack],
                            np.stack([f for _, _, f in stack]))
    singles = [Observation.of(*b) for b in stack]
    assert list(batch) == singles
    assert Observations.stack(singles) == batch


@given(st.integers(0, 10_000), st.integers(4, 9), st.integers(4, 9), st.integers(0, 4))
def test_property_engine_reads_an_observation_as_the_raw_board(seed, rows, cols, reveals):
    grid, total, flags = midgame(seed, rows, cols, max(1, rows * cols // 6), reveals)
    a, b = ns.analyze(Observation.of(grid, total, flags)), ns.analyze(grid, total, flags)
    assert_same_analysis(a, b)


# --------------------------------------------------------------------------- the engine
def assert_same_analysis(a, b):
    np.testing.assert_array_equal(a.probabilities, b.probabilities, strict=True)
    np.testing.assert_array_equal(a.frontier, b.frontier, strict=True)
    np.testing.assert_array_equal(a.unknown, b.unknown, strict=True)
    assert a.interior_probability == b.interior_probability
    assert (a.mines_left, a.n_components, a.layouts) == (b.mines_left, b.n_components, b.layouts)


def test_engine_takes_an_observation(hand):
    a = ns.analyze(hand)
    third = 2 / 3
    np.testing.assert_array_equal(
        a.probabilities, [[0, 0, 0, third], [0, 0, 0, third], [0, 0, 1, third]], strict=True)
    assert a.layouts == 3 and a.mines_left == 2
    assert_same_analysis(a, ns.analyze(GRID, TOTAL, FLAGS))
    for seed in range(4):
        grid, total, flags = midgame(seed, 16, 30, 99, 6)
        obs = Observation.of(grid, total, flags)
        assert_same_analysis(ns.analyze(obs), ns.analyze(grid, total, flags))
        np.testing.assert_array_equal(ns.mine_probabilities(obs), ns.mine_probabilities(grid, total, flags),
                                      strict=True)
    with pytest.raises(InvalidBoardError, match="carries its own total_mines"):
        ns.analyze(hand, 3)
    with pytest.raises(InvalidBoardError, match="max_states must be at least 1"):
        ns.analyze(hand, max_states=0)


def test_nothing_checks_an_observation_again(monkeypatch):
    grids, totals, flags, _ = _stack_inputs()
    batch = Observations.of(grids, totals, flags)
    obs = batch[0]
    hand = Observation.of(GRID, TOTAL, FLAGS)
    model = ns.load_model("cnn")

    def results():  # the same calls before and after the checks are disabled
        return {
            "analysis": ns.analyze(obs).probabilities,
            "encoded": features.encode_grid(obs),
            "globals": features.graph_globals(obs),
            "graph": features.build_graph(obs)["cell"].x,
            "encoded_batch": features.encode_grids(batch),
            "graph_batch": features.build_graph_batch(batch)["cell"].x,
            "text": format_board(hand),
            "predicted": model.predict_proba(batch),
        }

    expected = results()

    def refuse(*args, **kwargs):
        raise AssertionError("an Observation was checked again")

    for name in ("_check_grid", "_check_total", "_check_counts", "check_flags", "check_grid_values"):
        monkeypatch.setattr(observation, name, refuse)
    monkeypatch.setattr(Observation, "__post_init__", refuse)
    monkeypatch.setattr(Observations, "__post_init__", refuse)
    with pytest.raises(AssertionError, match="checked again"):
        Observation.of(GRID, TOTAL)
    got = results()
    for key, value in expected.items():
        np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(value), err_msg=key)


# --------------------------------------------------------------------------- model inputs
def test_features_take_observations():
    grids, totals, flags, boards = _stack_inputs()
    batch = Observations.of(grids, totals, flags)
    for (g, t, f), obs in zip(boards, batch, strict=True):
        for build in (features.encode_grid, features.graph_globals):
            np.testing.assert_array_equal(build(obs), build(g, t, f), strict=True)
        a, b = features.build_graph(obs, cell_edges=True), features.build_graph(g, t, f, cell_edges=True)
        for store in ("cell", "constraint"):
            assert a[store].x.equal(b[store].x) and a[store].pos.equal(b[store].pos)
        assert a["cell", "in", "constraint"].edge_index.equal(b["cell", "in", "constraint"].edge_index)
    np.testing.assert_array_equal(features.encode_grids(batch), features.encode_grids(grids, totals, flags),
                                  strict=True)
    np.testing.assert_array_equal(features.encode_grids(list(batch)), features.encode_grids(batch),
                                  strict=True)
    x, y = features.build_graph_batch(batch), features.build_graph_batch(grids, totals, flags)
    assert x["cell"].x.equal(y["cell"].x) and x.globals.equal(y.globals)
    assert x["cell"].ptr.equal(y["cell"].ptr)
    z = features.build_graphs(batch)
    assert z["cell"].x.equal(features.build_graphs(list(grids), list(totals), list(flags))["cell"].x)
    with pytest.raises(InvalidBoardError, match="board 0: an Observation carries its own total_mines"):
        features.build_graphs(batch, 8)
    with pytest.raises(InvalidBoardError, match="carries its own total_mines and flags"):
        features.encode_grids(batch, totals)
    # Scattering back reads the Observation's flags.
    d = features.build_graph(batch[0])
    values = np.linspace(0, 1, d["cell"].num_nodes)
    np.testing.assert_array_equal(features.graph_to_grid(d, values, 0.5, batch[0]),
                                  features.graph_to_grid(d, values, 0.5, grids[0], flags[0]))
    cells = np.linspace(0, 1, x["cell"].num_nodes)
    inner = np.full(len(batch), 0.25)
    np.testing.assert_array_equal(features.batch_to_grids(x, cells, inner, batch),
                                  features.batch_to_grids(x, cells, inner, grids, flags))


@pytest.mark.parametrize("arch", ["cnn", "gnn"])
def test_models_take_observations(arch):
    model = ns.load_model(arch)
    grids, totals, flags, boards = _stack_inputs()
    batch = Observations.of(grids, totals, flags)
    stacked = model.predict_proba(grids, totals, flags, batch_size=3)
    np.testing.assert_array_equal(model.predict_proba(batch, batch_size=3), stacked, strict=True)
    listed = model.predict_proba(list(batch), batch_size=3)
    assert isinstance(listed, list)
    np.testing.assert_array_equal(np.stack(listed), stacked, strict=True)
    one = model.predict_proba(batch[1])
    np.testing.assert_array_equal(one, model.predict_proba(*boards[1]), strict=True)
    # Observations and grids mixed in one list, of two sizes: batched as the same grids are.
    other = midgame(7, 5, 5, 4, 1)
    mixed = model.predict_proba([batch[0], other[0], boards[2][0]], [None, other[1], boards[2][1]],
                                [None, other[2], boards[2][2]])
    raw = model.predict_proba([boards[0][0], other[0], boards[2][0]], [boards[0][1], other[1], boards[2][1]],
                              [boards[0][2], other[2], boards[2][2]])
    for m, r in zip(mixed, raw, strict=True):
        np.testing.assert_array_equal(m, r, strict=True)
    with pytest.raises(InvalidBoardError, match="board 1: an Observation carries its own total_mines and "
                                                "flags: give neither with it; got total_mines"):
        model.predict_proba([grids[0], batch[1]], [totals[0], 8])
    with pytest.raises(InvalidBoardError, match="carries its own total_mines"):
        model.predict_proba(batch[0], 8)
    with pytest.raises(InconsistentBoardError, match="^board 1: 500 mines left"):
        model.predict_proba([grids[0], grids[1]], [8, 500])


# --------------------------------------------------------------------------- board text
def test_board_text_with_observations(hand):
    text = format_board(GRID, FLAGS)
    assert format_board(hand) == text == "0 0 . .\n0 1 . .\n0 1 F ."
    assert parse_observation(text, 3) == hand
    grid, flags = parse_board(text)
    assert Observation.of(grid, 3, flags) == hand
    probs = ns.mine_probabilities(hand)
    assert format_probabilities(hand, probs) == format_probabilities(GRID, FLAGS, probs)
    assert format_probabilities(hand, probs=probs) == format_probabilities(GRID, FLAGS, probs)
    with pytest.raises(InvalidBoardError, match="give no flags with it"):
        format_board(hand, FLAGS)
    with pytest.raises(InvalidBoardError, match="probs must be given"):
        format_probabilities(GRID, FLAGS)
    with pytest.raises(InconsistentBoardError, match="1 flags exceed the 0 mines"):
        parse_observation(text, 0)
    # Raw grids get the checks an Observation makes of its grid and flags.
    with pytest.raises(InvalidBoardError, match=r"got 9 at \(0, 0\)"):
        format_board([[9, -1]])
    with pytest.raises(InvalidBoardError, match=r"flag on revealed \(0, 0\)"):
        format_board([[0, -1]], [[True, False]])


# --------------------------------------------------------------------------- solvers
def test_turns_give_the_observation():
    env = ns.MinesweeperEnv(9, 9, 10, seed=3)
    solver = CSPSolver()
    game, flags = solver.begin(env, np.random.default_rng(3))
    obs = game.observation(flags)
    assert obs == Observation.of(game.grid, 10, flags)
    assert game.observation(flags) is obs  # one check per position
    assert_same_analysis(game.analyze(flags), ns.analyze(game.grid, 10, flags))
    covered = np.argwhere(game.grid < 0)[0]
    flags[tuple(covered)] = True
    changed = game.observation(flags)
    assert changed is not obs and changed.n_flags == 1
    flags[tuple(covered)] = False
    assert game.observation(flags) == obs
    revealed = np.argwhere(game.grid >= 0)[0]
    flags[tuple(revealed)] = True
    with pytest.raises(InvalidBoardError, match="flag on revealed"):
        game.observation(flags)


def test_neural_solver_asks_with_observations():
    seen = []

    class Exact:
        """A stand-in model that records what it is asked (grids, not Observations)."""

        def predict_proba(self, grids, totals, flags=None, batch_size=1):
            seen.extend(zip(grids, totals, flags, strict=True))
            return [ns.mine_probabilities(g, t, f) for g, t, f in zip(grids, totals, flags, strict=True)]

    solver = get_solver("hybrid-gnn")
    solver._model = Exact()
    solver.play(ns.MinesweeperEnv(9, 9, 10, seed=1), np.random.default_rng(1))
    assert seen
    for grid, total, flags in seen:
        assert grid.dtype == np.int8 and flags.dtype == bool and total == 10
        assert not grid.flags.writeable and not flags.flags.writeable
