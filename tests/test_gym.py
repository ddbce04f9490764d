"""The Gymnasium environment nnsweeper/Minesweeper-v0."""

import re
from pathlib import Path

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


def test_action_masks_are_the_observations_mask_through_every_wrapper():
    env = gym.make(ENV_ID, rows=5, cols=5, mines=4)
    masks = env.get_wrapper_attr("action_masks")  # how sb3-contrib finds it behind gym.make's wrappers
    with pytest.raises(gym.error.ResetNeeded):
        masks()
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(30):
        mask = masks()
        assert mask.dtype == bool and mask.shape == (25,)
        assert (mask == obs["action_mask"].astype(bool)).all()
        assert (mask == (env.unwrapped.game.observe().ravel() < 0)).all()
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, _ = env.reset()
    # Gymnasium's own vector environments call it in every copy.
    envs = gym.make_vec(ENV_ID, num_envs=3, vectorization_mode="sync", rows=5, cols=5, mines=4)
    try:
        obs, _ = envs.reset(seed=[0, 1, 2])
        obs, *_ = envs.step(np.array([0, 12, 24]))
        assert (np.stack(envs.call("action_masks")) == obs["action_mask"].astype(bool)).all()
    finally:
        envs.close()


def test_maskable_ppo_trains_on_the_environment_without_a_wrapper(monkeypatch):
    # sb3-contrib's MaskablePPO (the "rl" extra) finds action_masks() by itself: the
    # environments are gym.make's (in make_vec_env's Monitor), with no ActionMasker.
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    calls = []
    original = MinesweeperGymEnv.action_masks

    def counted(self):
        calls.append(self)
        return original(self)

    monkeypatch.setattr(MinesweeperGymEnv, "action_masks", counted)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        kwargs = {"rows": 5, "cols": 5, "mines": 4}
        venv = make_vec_env(ENV_ID, n_envs=2, seed=0, env_kwargs=kwargs)
        assert is_masking_supported(venv)
        model = MaskablePPO("MultiInputPolicy", venv, n_steps=64, batch_size=64, n_epochs=2, seed=0,
                            policy_kwargs={"net_arch": [16]}, device="cpu")
        model.learn(total_timesteps=256)
        assert model.num_timesteps >= 256
        assert len(calls) >= 256 // 2  # once per step of each of the two environments
        # The masks of the last rollout, as the buffer holds them, are the observations'.
        buffer = model.rollout_buffer
        seen = buffer.observations["action_mask"]
        assert (buffer.action_masks.reshape(seen.shape) == seen).all() and not seen.all()

        # A stochastic rollout of a few episodes never picks a revealed cell with the masks,
        # and (the same policy, the same games) does without them.
        def rollout(masked: bool) -> tuple[int, int]:
            env = gym.make(ENV_ID, **kwargs)
            assert is_masking_supported(env)
            picked_revealed = steps = 0
            for seed in range(5):
                obs, _ = env.reset(seed=seed)
                done = False
                while not done:
                    masks = get_action_masks(env)
                    assert (masks == obs["action_mask"].astype(bool)).all()
                    action, _ = model.predict(obs, deterministic=False,
                                              action_masks=masks if masked else None)
                    picked_revealed += int(not masks[int(action)])
                    obs, _, terminated, truncated, info = env.step(int(action))
                    assert info["invalid"] == (not masks[int(action)])
                    steps += 1
                    done = terminated or truncated
            return picked_revealed, steps

        model.set_random_seed(1)
        invalid, steps = rollout(masked=True)
        assert invalid == 0 and steps >= 5
        model.set_random_seed(1)
        invalid, steps = rollout(masked=False)
        assert invalid > 0
        venv.close()
    finally:
        torch.set_num_threads(threads)


ROOT = Path(__file__).resolve().parents[1]


def _rl_page_blocks() -> list[str]:
    text = (ROOT / "docs" / "rl.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def test_the_rl_pages_gymnasium_example_runs(capsys):
    exec(compile(_rl_page_blocks()[0], "docs/rl.md", "exec"), {"__name__": "docs_rl"})
    assert "(5, 5) 25 7" in capsys.readouterr().out


def test_the_maskable_ppo_example_is_the_pages_and_runs_on_tiny_sizes(capsys):
    import importlib.util

    path = ROOT / "examples" / "maskable_ppo.py"
    # docs/rl.md shows the script as it is.
    assert _rl_page_blocks()[1] == path.read_text(encoding="utf-8")
    pytest.importorskip("sb3_contrib")
    import torch

    spec = importlib.util.spec_from_file_location("maskable_ppo", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    threads = torch.get_num_threads()
    try:
        example.main(["--timesteps", "256", "--envs", "2", "--games", "4"])
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    assert "trained 256 steps on 5x5 boards with 3 mines" in out
    for player in ("MaskablePPO", "random clicks", "csp solver"):
        assert re.search(rf"^  {player} +\d+\.\d%", out, re.M), out
