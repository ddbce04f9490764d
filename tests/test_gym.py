"""The Gymnasium environment nnsweeper/Minesweeper-v0."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nnsweeper as ns

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from nnsweeper.gym import ENV_ID, MinesweeperGymEnv, play_solver  # noqa: E402


def test_the_environment_passes_gymnasiums_checker():
    check_env(gym.make(ENV_ID, rows=6, cols=7, mines=8).unwrapped)
    check_env(gym.make(ENV_ID, preset="beginner", render_mode="rgb_array").unwrapped)
    env = gym.make(ENV_ID, rows=5, cols=4, mines=3)
    assert env.observation_space["board"].shape == (5, 4) and env.action_space.n == 20


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**40), rule=st.sampled_from(["safe", "zero", "none"]),
       picks=st.lists(st.integers(0, 10**6), min_size=1, max_size=12))
def test_a_seed_is_the_game_of_minesweeperenv(seed, rule, picks):
    # The same seed and the same revealed cells give the same boards, rewards and endings.
    env = gym.make(ENV_ID, rows=6, cols=6, mines=7, first_click=rule)
    obs, info = env.reset(seed=seed)
    assert info["game_seed"] == seed
    plain = ns.MinesweeperEnv(6, 6, 7, seed=seed, first_click=rule)
    for pick in picks:
        covered = np.flatnonzero(obs["action_mask"])
        action = int(covered[pick % covered.size])
        obs, reward, terminated, truncated, info = env.step(action)
        grid, reward2, done, info2 = plain.step(action)
        assert (obs["board"] == grid).all() and reward == reward2 and terminated == done
        assert (obs["action_mask"] == (grid.ravel() < 0)).all()
        assert info.get("result") == info2.get("result") and not truncated
        if terminated:
            break


def test_random_agents_step_a_thousand_times_with_and_without_the_mask():
    env = gym.make(ENV_ID, rows=6, cols=6, mines=6, max_steps=40)
    env.action_space.seed(0)
    for masked in (True, False):
        obs, _ = env.reset(seed=1)
        ends = {"win": 0, "lose": 0, "truncated": 0}
        for _ in range(1000):
            action = env.action_space.sample(mask=obs["action_mask"] if masked else None)
            before = obs["board"].copy()
            obs, reward, terminated, truncated, info = env.step(action)
            if info["invalid"]:
                # A revealed cell: nothing changes and nothing is earned.
                assert not masked and reward == 0 and (obs["board"] == before).all()
            if terminated or truncated:
                ends[info.get("result", "truncated")] += 1
                obs, _ = env.reset()
        assert ends["lose"] > 0 and (masked or ends["truncated"] + ends["win"] + ends["lose"] > 0)
    # Resets without a seed continue the seeded sequence of games.
    a, b = (gym.make(ENV_ID) for _ in range(2))
    seeds = [[e.reset(seed=5)[1]["game_seed"]] + [e.reset()[1]["game_seed"] for _ in range(3)]
             for e in (a, b)]
    assert seeds[0] == seeds[1] and len(set(seeds[0])) == 4


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_environments_of_eight_boards_step(mode):
    envs = gym.make_vec(ENV_ID, num_envs=8, vectorization_mode=mode, rows=5, cols=5, mines=4)
    try:
        obs, info = envs.reset(seed=list(range(8)))
        assert obs["board"].shape == (8, 5, 5) and (obs["board"] == -1).all()
        rng = np.random.default_rng(0)
        for _ in range(30):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
            obs, reward, terminated, truncated, info = envs.step(actions)
            assert reward.shape == (8,) and obs["action_mask"].any(axis=1).all()
    finally:
        envs.close()


def test_a_solver_plays_through_the_interface():
    env = gym.make(ENV_ID, preset="beginner")
    results = [play_solver("csp", env, seed=s) for s in range(12)]
    won = [r for r in results if r[0]]
    assert 6 <= len(won) <= 12
    # A won game's rewards: the shares of safe cells each move opened (less than 1 in all,
    # the winning move's share replaced by 1) plus 1.
    for _, total, steps in won:
        assert 1 < total < 2 and steps >= 1
    assert all(r[1] <= 1 for r in results if not r[0])


def test_rendering():
    env = gym.make(ENV_ID, rows=4, cols=5, mines=3, render_mode="rgb_array")
    env.reset(seed=2)
    frame = env.render()
    assert frame.shape == (4 * 16 + 1, 5 * 16 + 1, 3) and frame.dtype == np.uint8
    text_env = gym.make(ENV_ID, rows=4, cols=5, mines=3, render_mode="ansi")
    text_env.reset(seed=2)
    obs, *_ = text_env.step(0)
    text = text_env.render()
    lines = text.splitlines()
    assert len(lines) == 5 and lines[0].split()[0] == str(obs["board"][0, 0])
    assert lines[-1].startswith("3 mines, 1 moves")
    # The mine that ended a game shows as * in its place.
    mine = tuple(int(x) for x in np.argwhere(text_env.unwrapped.game.mine_layout())[0])
    text_env.step(mine[0] * 5 + mine[1])
    row = text_env.render().splitlines()[mine[0]].split()
    assert row[mine[1]] == "*" and row.count("*") == 1


def test_bad_arguments_and_actions_are_refused():
    with pytest.raises(ns.errors.InvalidRulesError, match="preset must be one of"):
        MinesweeperGymEnv(preset="huge")
    with pytest.raises(ns.errors.InvalidRulesError, match="max_steps"):
        MinesweeperGymEnv(max_steps=0)
    with pytest.raises(ns.errors.InvalidRulesError, match="render_mode"):
        MinesweeperGymEnv(render_mode="human")
    with pytest.raises(ns.errors.InvalidRulesError):
        MinesweeperGymEnv(rows=3, cols=3, mines=9)
    env = MinesweeperGymEnv(rows=4, cols=4, mines=2)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(gym.error.InvalidAction, match=r"\[0, 16\)"):
        env.step(16)
