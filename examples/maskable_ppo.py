"""Train sb3-contrib's MaskablePPO on nnsweeper/Minesweeper-v0 and compare it with random clicks.

The environment's ``action_masks()`` is all MaskablePPO needs: no wrapper, no mask
function. The trained policy and a player that clicks a random covered cell play the
same seeded games, and the csp solver (exact mine probabilities) gives the reference::

    pip install -e ".[rl]"
    python examples/maskable_ppo.py                      # 5x5 boards, 3 mines, under a minute
    python examples/maskable_ppo.py --timesteps 500000   # longer training

See docs/rl.md.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_util import make_vec_env

import nnsweeper.gym  # noqa: F401  (registers nnsweeper/Minesweeper-v0)
from nnsweeper.evaluation import newcombe_paired_interval, wilson_interval
from nnsweeper.gym import ENV_ID, play_solver

#: Seeds of the evaluation games, apart from the training games' (make_vec_env seeds the
#: first reset of its environments with 0, 1, ...; later games draw 63-bit seeds).
EVAL_SEED = 1_000_000


def play_policy(model: MaskablePPO, env: gym.Env, seed: int) -> bool:
    """One game of the trained policy (its most likely legal move each step); True if won."""
    obs, info = env.reset(seed=seed)
    terminated = truncated = False
    while not (terminated or truncated):
        action, _ = model.predict(obs, deterministic=True, action_masks=get_action_masks(env))
        obs, _, terminated, truncated, info = env.step(int(action))
    return info.get("result") == "win"


def play_random(env: gym.Env, seed: int) -> bool:
    """One game of clicking a random covered cell each step; True if won."""
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return info.get("result") == "win"


def rate(wins: np.ndarray) -> str:
    low, high = wilson_interval(int(wins.sum()), wins.size)
    return f"{wins.mean():6.1%}  (95% interval {low:.1%} to {high:.1%})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5)
    parser.add_argument("--cols", type=int, default=5)
    parser.add_argument("--mines", type=int, default=3)
    parser.add_argument("--timesteps", type=int, default=150_000, help="training steps (all environments)")
    parser.add_argument("--envs", type=int, default=8, help="environments stepped together")
    parser.add_argument("--games", type=int, default=200, help="evaluation games")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # a small network: one thread is fastest
    board = {"rows": args.rows, "cols": args.cols, "mines": args.mines}

    start = time.perf_counter()
    # gym.make's environments (make_vec_env adds a Monitor): MaskablePPO finds action_masks().
    venv = make_vec_env(ENV_ID, n_envs=args.envs, seed=args.seed, env_kwargs=board)
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=128, batch_size=256, n_epochs=4,
                        learning_rate=1e-3, ent_coef=0.01, gamma=0.9, seed=args.seed, device="cpu",
                        policy_kwargs={"net_arch": [128, 128]})
    model.learn(total_timesteps=args.timesteps)
    trained = time.perf_counter() - start
    print(f"trained {model.num_timesteps} steps on {args.rows}x{args.cols} boards with {args.mines} mines "
          f"in {trained:.1f} s")

    env = gym.make(ENV_ID, **board)
    seeds = range(EVAL_SEED, EVAL_SEED + args.games)
    ppo = np.array([play_policy(model, env, s) for s in seeds])
    rnd = np.array([play_random(env, s) for s in seeds])
    csp = np.array([play_solver("csp", env, seed=s)[0] for s in seeds])
    print(f"win rates over the same {args.games} games:")
    print(f"  MaskablePPO    {rate(ppo)}")
    print(f"  random clicks  {rate(rnd)}")
    print(f"  csp solver     {rate(csp)}")
    low, high = newcombe_paired_interval(int((ppo & rnd).sum()), int((ppo & ~rnd).sum()),
                                         int((~ppo & rnd).sum()), int((~ppo & ~rnd).sum()))
    print(f"MaskablePPO - random: {ppo.mean() - rnd.mean():+.1%} (95% interval {low:+.1%} to {high:+.1%})")
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
