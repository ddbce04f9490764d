"""The game engine: rules, seeded layouts, flood fill, endings, errors, seed compatibility."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
import seed_notebook
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nnsweeper import (
    PRESETS,
    Game,
    InvalidActionError,
    InvalidRulesError,
    MinesweeperEnv,
    NnsweeperError,
    Rules,
)
from nnsweeper.game import FIRST_CLICK_RULES, NO_GUESS_RULES

#: The rules that draw a layout at once (the no-guess ones certify theirs: tests/test_noguess.py).
DRAWN_RULES = tuple(r for r in FIRST_CLICK_RULES if r not in NO_GUESS_RULES)


# ------------------------------------------------------------------ references
def neighbourhood(i, j, rows, cols):
    return [
        (i + di, j + dj)
        for di in (-1, 0, 1)
        for dj in (-1, 0, 1)
        if (di, dj) != (0, 0) and 0 <= i + di < rows and 0 <= j + dj < cols
    ]


def neighbour_counts(mines):
    rows, cols = mines.shape
    counts = np.zeros((rows, cols), dtype=np.int64)
    for i in range(rows):
        for j in range(cols):
            counts[i, j] = sum(bool(mines[x, y]) for x, y in neighbourhood(i, j, rows, cols))
    return counts


def flood(counts, covered, start):
    """Cells that revealing the safe cell ``start`` opens: itself and, from a zero,
    the connected zero region (through covered cells) and its border."""
    rows, cols = counts.shape
    opened = {start}
    queue = deque([start] if counts[start] == 0 else [])
    while queue:
        i, j = queue.popleft()
        for cell in neighbourhood(i, j, rows, cols):
            if covered[cell] and cell not in opened:
                opened.add(cell)
                if counts[cell] == 0:
                    queue.append(cell)
    return opened


def max_mines(rows, cols, first_click):
    """The rule of game.Rules: at least one cell besides the protected ones stays safe."""
    block = min(3, rows) * min(3, cols)
    protected = {"none": 0, "safe": 1, "zero": block, "no-guess": block, "no-guess-fast": block}[first_click]
    return rows * cols - protected - 1


@st.composite
def games(draw, first_click=None, max_side=9):
    """(rules, seed, first click as a flat index) for a legal random game."""
    first_click = first_click or draw(st.sampled_from(DRAWN_RULES))
    rows = draw(st.integers(1, max_side))
    cols = draw(st.integers(1, max_side))
    hi = max_mines(rows, cols, first_click)
    assume(hi >= 1)
    mines = draw(st.integers(1, hi))
    seed = draw(st.integers(0, 2**63))
    click = draw(st.integers(0, rows * cols - 1))
    return Rules(rows, cols, mines, first_click), seed, click


# ---------------------------------------------------------------- layouts
@settings(max_examples=300)
@given(games())
def test_same_seed_same_game(game):
    rules, seed, click = game
    a, b = Game(rules, seed), Game(rules, seed)
    obs_a, reward_a, done_a, info_a = a.step(click)
    obs_b, reward_b, done_b, info_b = b.step(click)
    assert np.array_equal(a.mine_layout(), b.mine_layout())
    assert np.array_equal(obs_a, obs_b)
    assert (reward_a, done_a, info_a) == (reward_b, done_b, info_b)
    env = MinesweeperEnv(rules.rows, rules.cols, rules.mines, seed, rules.first_click)
    env.step(click)
    assert np.array_equal(env.mine_layout(), a.mine_layout())


def test_different_seeds_differ():
    rules = Rules(10, 10, 20)
    layouts = set()
    for seed in range(20):
        g = Game(rules, seed)
        g.step(0)
        layouts.add(g.mine_layout().tobytes())
    assert len(layouts) == 20


@settings(max_examples=400)
@given(games())
def test_layout_honours_the_first_click_rule(game):
    rules, seed, click = game
    g = Game(rules, seed)
    assert g.placed == (rules.first_click == "none")
    before = g.mine_layout()
    i, j = divmod(click, rules.cols)
    _, reward, done, info = g.step(click)
    layout = g.mine_layout()
    assert layout.dtype == bool and layout.shape == (rules.rows, rules.cols)
    assert int(layout.sum()) == rules.mines
    if rules.first_click == "none":
        assert np.array_equal(layout, before)  # placed at reset, the click changes nothing
        if layout[i, j]:
            assert done and info["result"] == "lose" and reward == -1.0
    else:
        assert not layout[i, j]
        assert info.get("result") != "lose"
    if rules.first_click == "zero":
        assert not layout[max(i - 1, 0) : i + 2, max(j - 1, 0) : j + 2].any()
        assert g.observe()[i, j] == 0


def test_none_places_mines_at_reset():
    g = Game(Rules(6, 6, 30, "none"), seed=3)
    layout = g.mine_layout()
    assert g.placed and int(layout.sum()) == 30
    assert np.array_equal(g.board, np.where(layout, -1, neighbour_counts(layout)))
    assert np.all(g.observe() == -1)


def test_safe_and_zero_place_mines_at_the_first_click():
    for rule in ("safe", "zero"):
        g = Game(Rules(9, 9, 10, rule), seed=1)
        assert not g.placed and not g.mine_layout().any()
        g.step(40)
        assert g.placed


def test_zero_rule_opens_an_area_at_every_click():
    for click in (0, 8, 40, 80, 76):
        for seed in range(10):
            g = Game(Rules(9, 9, 30, "zero"), seed)
            _, _, _, info = g.step(click)
            assert info["revealed"] >= 4


@settings(max_examples=300)
@given(games())
def test_board_and_counts(game):
    rules, seed, click = game
    g = Game(rules, seed)
    g.step(click)
    layout = g.mine_layout()
    counts = neighbour_counts(layout)
    assert np.array_equal(g._counts, counts)
    assert np.array_equal(g.board, np.where(layout, -1, counts))
    obs = g.observe()
    assert obs.dtype == np.int8 and obs.shape == (rules.rows, rules.cols)
    assert np.array_equal(obs, np.where(g.mask == 1, -1, counts))


# ------------------------------------------------------------------- play
@settings(max_examples=300)
@given(games(), st.data())
def test_play_matches_flood_fill_until_won(game, data):
    """Reveal safe cells in a random order: each move opens exactly what a BFS opens."""
    rules, seed, click = game
    g = Game(rules, seed)
    cell = divmod(click, rules.cols)
    covered = np.ones((rules.rows, rules.cols), dtype=bool)
    if rules.first_click == "none" and g.mine_layout()[cell]:
        return  # a first-click loss; see test_lose_on_a_mine
    flagged = data.draw(st.booleans())
    safe_total = rules.rows * rules.cols - rules.mines
    done = False
    while not done:
        obs, reward, done, info = g.step(cell[0] * rules.cols + cell[1])
        layout, counts = g.mine_layout(), g._counts  # placed by the first step
        expected = flood(counts, covered, cell)
        for x, y in expected:
            covered[x, y] = False
        assert np.array_equal(g.mask == 1, covered)
        assert info["revealed"] == len(expected)
        assert not layout[~covered].any()
        assert np.array_equal(obs, np.where(covered, -1, counts))
        assert g.revealed_safe == int((~covered).sum())
        if done:
            assert info["result"] == "win" and reward == 1.0 and g.won and g.result == "win"
            assert g.revealed_safe == safe_total
        else:
            assert "result" not in info and reward == pytest.approx(len(expected) / safe_total)
            if flagged:  # flags on mines change nothing
                for x, y in np.argwhere(layout & covered & ~g.flags):
                    g.toggle_flag(int(x), int(y))
            candidates = np.argwhere(covered & ~layout)
            assert len(candidates) > 0
            k = data.draw(st.integers(0, len(candidates) - 1))
            cell = tuple(int(v) for v in candidates[k])
    with pytest.raises(InvalidActionError, match="over"):
        g.step(0)


@settings(max_examples=200)
@given(games())
def test_lose_on_a_mine(game):
    rules, seed, click = game
    g = Game(rules, seed)
    _, _, done, _ = g.step(click)
    if done:
        return
    mines = np.argwhere(g.mine_layout())
    i, j = (int(v) for v in mines[0])
    _, reward, done, info = g.step(i * rules.cols + j)
    assert done and reward == -1.0 and info["result"] == "lose"
    assert g.result == "lose" and g.explosion and not g.won and g.done
    # The mine that lost stays covered: the observation never shows a mine as a number.
    assert g.exploded == (i, j) and g.mask[i, j] == 1 and g.observe()[i, j] == -1
    with pytest.raises(InvalidActionError, match="over"):
        g.step(int(np.argwhere(g.mask.ravel() == 1)[0, 0]))
    with pytest.raises(InvalidActionError, match="over"):
        g.toggle_flag(i, j)


def test_flood_fill_clears_wrong_flags():
    g = Game(Rules(9, 9, 10, "none"), seed=5)
    zero = np.argwhere((g._counts == 0) & ~g.mine_layout())
    i, j = (int(v) for v in zero[0])
    x, y = neighbourhood(i, j, 9, 9)[0]
    assert g.toggle_flag(x, y)  # a wrong flag next to a zero
    g.step(i * 9 + j)
    assert g.mask[x, y] == 0 and not g.flags[x, y]


def test_toggle_flag():
    g = Game(Rules(5, 5, 3), seed=0)
    assert g.toggle_flag(1, 1) is True and g.flags[1, 1]
    assert g.toggle_flag(1, 1) is False and not g.flags[1, 1]


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("action", [-1, 25, 100, 2.5, True, "3", None])
def test_out_of_range_actions(action):
    g = Game(Rules(5, 5, 3), seed=0)
    with pytest.raises(InvalidActionError, match=f"got {action!r}"):
        g.step(action)


def test_numpy_integer_actions():
    g = Game(Rules(5, 5, 3), seed=0)
    g.step(np.int64(12))
    assert g.mask[2, 2] == 0


def test_reveal_revealed_cell():
    g = Game(Rules(9, 9, 70), seed=0)
    g.step(40)
    with pytest.raises(InvalidActionError, match=r"\(4, 4\) is already revealed"):
        g.step(40)


def test_reveal_flagged_cell():
    g = Game(Rules(9, 9, 10), seed=0)
    g.toggle_flag(4, 4)
    with pytest.raises(InvalidActionError, match=r"\(4, 4\) is flagged"):
        g.step(40)


def test_flag_revealed_cell():
    g = Game(Rules(9, 9, 70), seed=0)
    g.step(40)
    with pytest.raises(InvalidActionError, match=r"\(4, 4\) is revealed"):
        g.toggle_flag(4, 4)


def test_step_after_game_over():
    g = Game(Rules(3, 3, 1), seed=0)
    g.step(0)
    while not g.done:
        i, j = (int(v) for v in np.argwhere((g.mask == 1) & ~g.mine_layout())[0])
        g.step(i * 3 + j)
    assert g.result == "win"
    with pytest.raises(InvalidActionError, match=r"game is over \(win\)"):
        g.step(int(np.flatnonzero(g.mine_layout())[0]))


def test_errors_are_value_errors():
    assert issubclass(InvalidActionError, ValueError)
    assert issubclass(InvalidRulesError, NnsweeperError)


# ---------------------------------------------------------------- rules
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(rows=0, cols=5, mines=1), r"rows must be at least 1; got 0"),
        (dict(rows=5, cols=-2, mines=1), r"cols must be at least 1; got -2"),
        (dict(rows=2.5, cols=5, mines=1), r"rows must be an integer; got 2.5"),
        (dict(rows=5, cols="5", mines=1), r"cols must be an integer; got '5'"),
        (dict(rows=True, cols=5, mines=1), r"rows must be an integer; got True"),
        (dict(rows=5, cols=5, mines=1, first_click="corner"), r"got 'corner'"),
        (dict(rows=5, cols=5, mines=0), r"between 1 and 23 .*; got 0"),
        (dict(rows=5, cols=5, mines=-3), r"got -3"),
        (dict(rows=5, cols=5, mines=24), r"between 1 and 23 for a 5x5 board .*; got 24"),
        (dict(rows=5, cols=5, mines=25, first_click="none"), r"between 1 and 24 .*; got 25"),
        (dict(rows=5, cols=5, mines=16, first_click="zero"), r"between 1 and 15 .*; got 16"),
        (dict(rows=5, cols=5, mines=2.0), r"mines must be an integer; got 2.0"),
        (dict(rows=1, cols=2, mines=1), r"1x2 board .* no room for mines; got mines=1"),
        (dict(rows=3, cols=3, mines=1, first_click="zero"), r"no room"),
        (dict(rows=100_000, cols=100_000, mines=5), r"^rows must be at most 1000; got 100000$"),
        (dict(rows=10, cols=1001, mines=5), r"^cols must be at most 1000; got 1001$"),
    ],
)
def test_rules_reject(kwargs, match):
    with pytest.raises(InvalidRulesError, match=match):
        Rules(**kwargs)


def test_board_size_limit_holds_for_every_entry_point():
    from nnsweeper.game import MAX_COLS, MAX_ROWS

    assert (MAX_ROWS, MAX_COLS) == (1000, 1000)
    # The largest board is legal (Rules allocates nothing; a Game would).
    assert Rules(MAX_ROWS, MAX_COLS, 120_000).cells == 1_000_000
    with pytest.raises(InvalidRulesError, match="rows must be at most 1000; got 1001"):
        MinesweeperEnv(rows=1001, cols=10, mines=5)
    with pytest.raises(InvalidRulesError, match="cols must be at most 1000; got 100000"):
        Game(Rules(10, 100_000, 5), seed=0)


@settings(max_examples=200)
@given(
    st.integers(1, 40), st.integers(1, 40), st.sampled_from(DRAWN_RULES), st.data()
)
def test_max_mines(rows, cols, first_click, data):
    hi = max_mines(rows, cols, first_click)
    assume(hi >= 1)
    assert Rules(rows, cols, 1, first_click).max_mines() == hi
    assert Rules(rows, cols, hi, first_click).mines == hi
    with pytest.raises(InvalidRulesError, match=f"got {hi + 1}"):
        Rules(rows, cols, hi + 1, first_click)
    mines = data.draw(st.integers(1, hi))
    r = Rules(rows, cols, mines, first_click)
    assert (r.rows, r.cols, r.mines, r.first_click) == (rows, cols, mines, first_click)
    assert r.cells == rows * cols and r.density == pytest.approx(mines / (rows * cols))


def test_most_crowded_legal_games_are_playable():
    for rule in DRAWN_RULES:
        rules = Rules(9, 9, max_mines(9, 9, rule), rule)
        for click in (0, 40, 80):
            g = Game(rules, seed=click)
            g.step(click)
            assert int(g.mine_layout().sum()) == rules.mines


def test_rules_accept_numpy_integers():
    r = Rules(np.int64(4), np.int32(5), np.int16(3))
    assert (r.rows, r.cols, r.mines) == (4, 5, 3)
    assert all(type(v) is int for v in (r.rows, r.cols, r.mines))


@pytest.mark.parametrize(
    ("name", "shape"),
    [("beginner", (9, 9, 10)), ("intermediate", (16, 16, 40)), ("expert", (16, 30, 99))],
)
def test_presets(name, shape):
    assert PRESETS[name] == shape
    r = Rules.preset(name)
    assert (r.rows, r.cols, r.mines, r.first_click) == (*shape, "safe")
    assert Rules.preset(name, first_click="zero").first_click == "zero"


def test_unknown_preset():
    with pytest.raises(InvalidRulesError, match="got 'novice'"):
        Rules.preset("novice")


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_bad_seeds(seed):
    with pytest.raises(InvalidRulesError, match="seed"):
        Game(Rules(5, 5, 3), seed)


def test_game_needs_rules():
    with pytest.raises(InvalidRulesError, match="Rules"):
        Game((5, 5, 3), seed=0)


# ---------------------------------------------------------------- reset
@settings(max_examples=200)
@given(games(), st.integers(0, 2**63))
def test_reset_replays_and_reseeds(game, other_seed):
    rules, seed, click = game
    g = Game(rules, seed)
    g.step(click)
    first = g.mine_layout()
    if not g.done:
        g.step(int(np.flatnonzero(g.mask.ravel() == 1)[0]))
    obs = g.reset()
    assert np.all(obs == -1) and np.all(g.mask == 1) and not g.flags.any()
    assert not g.done and g.result is None and g.moves == 0
    g.step(click)
    assert np.array_equal(g.mine_layout(), first)

    g.reset(seed=other_seed)
    assert g.seed == other_seed
    g.step(click)
    fresh = Game(rules, other_seed)
    fresh.step(click)
    assert np.array_equal(g.mine_layout(), fresh.mine_layout())


def test_unseeded_game_replays():
    g = Game(Rules(9, 9, 10))
    assert isinstance(g.seed, int) and g.seed >= 0
    g.step(40)
    first = g.mine_layout()
    g.reset()
    g.step(40)
    assert np.array_equal(g.mine_layout(), first)


def test_env_defaults_and_seed_interface():
    env = MinesweeperEnv(seed=0)
    assert (env.r, env.c, env.mines, env.first_click) == (10, 10, 10, "safe")
    assert env._flat(3, 7) == 37
    assert sorted(env._neighbors(0, 0)) == [(0, 1), (1, 0), (1, 1)]
    assert len(env._neighbors(5, 5)) == 8
    assert env.mask.shape == (10, 10) and np.all(env.mask == 1)


# -------------------------------------------------- the seed notebook's solvers
def notebook_seeds(n, base_seed=0):
    """The game seeds of the notebook's evaluation harness."""
    return np.random.default_rng(base_seed).integers(0, 2**31 - 1, size=n, dtype=np.int64)


def play(solver, seed, mines=10):
    env = MinesweeperEnv(rows=10, cols=10, mines=mines, seed=int(seed))
    won = solver(env, np.random.default_rng(seed))
    assert env.done, "the solver stopped before the game ended"
    assert won == (env.result == "win")
    return won, env.mask.copy(), env.moves


@pytest.mark.parametrize(
    ("solver", "n_games"),
    [(seed_notebook.solve_single_point, 40), (seed_notebook.solve_csp, 40)],
)
def test_seed_solvers_run_unchanged(solver, n_games):
    seeds = notebook_seeds(n_games)
    results = [play(solver, sd) for sd in seeds]
    again = [play(solver, sd) for sd in seeds]
    for (won_a, mask_a, moves_a), (won_b, mask_b, moves_b) in zip(results, again, strict=True):
        assert won_a == won_b and moves_a == moves_b and np.array_equal(mask_a, mask_b)
    wins = sum(won for won, _, _ in results)
    assert 0 < wins < n_games  # it both wins and loses: both endings are reached


def test_seed_single_point_wins_games_at_ten_mines():
    wins = sum(play(seed_notebook.solve_single_point, sd)[0] for sd in notebook_seeds(40))
    assert wins >= 15


def test_seed_solver_replays_on_the_same_env():
    # The notebook's solvers call env.reset() themselves: a second run on the same
    # environment with the same generator seed must play the same game.
    env = MinesweeperEnv(rows=10, cols=10, mines=10, seed=123)
    first = seed_notebook.solve_single_point(env, np.random.default_rng(123))
    mask = env.mask.copy()
    second = seed_notebook.solve_single_point(env, np.random.default_rng(123))
    assert first == second and np.array_equal(env.mask, mask)


def test_seed_helpers_on_env():
    env = MinesweeperEnv(rows=10, cols=10, mines=10, seed=7)
    assert seed_notebook.first_click_index(env) == 55
    env.step(seed_notebook.first_click_index(env))
    frontier = seed_notebook.frontier_cells(env)
    assert frontier and all(env.mask[x, y] == 1 for x, y in frontier)
    comps = seed_notebook.componentize(env, frontier)
    assert sorted(c for comp in comps for c in comp) == sorted(frontier)
    assert sorted(seed_notebook.neighbors(env, 0, 0)) == [(0, 1), (1, 0), (1, 1)]


def test_neighbour_sum_and_dilate_on_stacks_of_boards():
    from nnsweeper.grid import dilate, neighbour_sum

    a = np.array([[1, 0, 0], [0, 0, 2], [0, 3, 0]])
    assert neighbour_sum(a).tolist() == [[0, 3, 2], [4, 6, 3], [3, 2, 5]]
    assert dilate(a == 1).tolist() == [[True, True, False], [True, True, False], [False, False, False]]
    stack = np.random.default_rng(0).integers(0, 2, size=(2, 3, 4, 5)).astype(bool)
    for f in (neighbour_sum, dilate):
        out = f(stack)
        assert out.shape == stack.shape
        for k in np.ndindex(2, 3):
            np.testing.assert_array_equal(out[k], f(stack[k]))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.integers(0, 2**32 - 1))
def test_neighbour_sum_and_dilate_match_a_cell_by_cell_count(rows, cols, seed):
    from nnsweeper.grid import dilate, neighbour_sum, neighbours

    a = np.random.default_rng(seed).integers(-3, 9, size=(rows, cols))
    mask = a > 4
    want_sum = np.zeros((rows, cols), dtype=np.int64)
    want_dilate = mask.copy()
    for i, j in np.ndindex(rows, cols):
        for x, y in neighbours(i, j, rows, cols):
            want_sum[i, j] += a[x, y]
            want_dilate[i, j] |= mask[x, y]
    out = neighbour_sum(a)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, want_sum)
    np.testing.assert_array_equal(neighbour_sum(mask), neighbour_sum(mask.astype(int)))
    np.testing.assert_array_equal(dilate(mask), want_dilate)
