"""The behaviour policies that play a dataset's games, and the recording of one game.

A policy is a solver (:mod:`nnsweeper.solvers`); :func:`record_game` plays one game
with it through :meth:`~nnsweeper.solvers.Solver.play`'s ``on_decision`` callback and
keeps the position before each decision, labelled with the truth and the exact
probabilities. A new policy is a solver, an entry of :data:`POLICY_CODES` with a new
code, and a line in :func:`policy_solver`.
"""

from __future__ import annotations

import numpy as np

from nnsweeper.errors import DatasetError, check_unit
from nnsweeper.game import Game, Rules
from nnsweeper.probability import analyze
from nnsweeper.solvers.base import STARTS, Decision, Turns
from nnsweeper.solvers.csp import CSPSolver
from nnsweeper.solvers.single_point import SinglePointSolver

from .storage import empty_shard

__all__ = ["POLICY_CODES", "POLICIES", "RECORD_MODES", "ExploreSolver", "policy_solver", "record_game"]

#: Behaviour policies and their codes: the CSP solver, the single-point solver, and CSP
#: that now and then (with probability ``epsilon`` per decision) reveals a random
#: covered cell whose exact probability is neither 0 nor 1 (:class:`ExploreSolver`).
#: A code is part of the seed keys of the policy's games
#: (:attr:`~nnsweeper.datasets.Part.stream_key`), so of every dataset's seeds: a new
#: policy takes a new code, and no code changes.
POLICY_CODES: dict[str, int] = {"csp": 0, "single_point": 1, "explore": 2}
#: The policy names.
POLICIES = tuple(POLICY_CODES)
#: Which states are recorded: every decision, or only those where the policy guessed.
RECORD_MODES = ("all", "guess")


def _check_choices(policy: str, record: str, start: str) -> None:
    if policy not in POLICIES:
        raise DatasetError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if record not in RECORD_MODES:
        raise DatasetError(f"record must be one of {', '.join(RECORD_MODES)}; got {record!r}")
    if start not in STARTS:
        raise DatasetError(f"start must be one of {', '.join(STARTS)}; got {start!r}")


class ExploreSolver(CSPSolver):
    """The ``explore`` policy: :class:`~nnsweeper.solvers.CSPSolver` that now and then explores.

    Before each decision, with probability ``epsilon``, it reveals a uniformly random
    covered cell whose exact probability is neither 0 nor 1 (when there is one)
    instead of playing as the CSP solver would.
    """

    name = "explore"

    def __init__(self, *, epsilon: float = 0.1, **options):
        super().__init__(**options)
        self.epsilon = check_unit("epsilon", epsilon)

    def options(self) -> dict:
        return {**super().options(), "epsilon": self.epsilon}

    def turn(self, game: Turns, flags: np.ndarray, rng) -> bool:
        if rng.random() < self.epsilon:
            a = game.analyze(flags)
            open_ = a.unknown & (a.probabilities > 0) & (a.probabilities < 1)
            if open_.any():
                cells = np.argwhere(open_)
                i, j = cells[rng.integers(len(cells))]
                game.reveal(i, j, "guess", float(a.probabilities[i, j]))
                return True
        return super().turn(game, flags, rng)


def policy_solver(policy: str, start: str, epsilon: float):
    if policy == "single_point":
        return SinglePointSolver(start=start)
    if policy == "explore":
        return ExploreSolver(start=start, epsilon=epsilon)
    return CSPSolver(start=start)


def record_game(rules: Rules, seed: int, policy: str = "csp", *, record: str = "all", epsilon: float = 0.1,
                start: str = "random") -> tuple[dict[str, np.ndarray], bool]:
    """Play one game with a policy and return its recorded, labelled states.

    The state before each decision of the policy after the first click is a
    candidate (the all-covered board before the first click tells nothing); with
    ``record="guess"`` only the decisions where the policy guessed are kept. The
    policy's randomness comes from ``np.random.default_rng(seed)``, the layout from
    the game's own stream of ``seed``.

    Returns
    -------
    arrays : dict of ndarray
        The per-state shard arrays (see :mod:`nnsweeper.datasets.storage`) except
        ``game`` (set by the caller).
    won : bool
    """
    _check_choices(policy, record, start)
    env = Game(rules, seed=seed)
    kept = []

    def keep(decision: Decision) -> None:
        if record == "all" or decision.guessed:
            kept.append(decision)

    rec = policy_solver(policy, start, epsilon).play(env, np.random.default_rng(seed), on_decision=keep)
    if not kept:
        return {k: v for k, v in empty_shard(env.r, env.c).items() if k != "game"}, bool(rec.won)
    layout = env.mine_layout()
    n = len(kept)
    grids = np.stack([d.grid for d in kept])
    # The policy's own analysis of a position, when it made one, is the label.
    prob = np.stack([
        (d.analysis if d.analysis is not None else analyze(d.grid, env.mines, d.flags)).probabilities
        for d in kept
    ])
    arrays = {
        "grid": grids.astype(np.int8),
        "flags": np.stack([d.flags for d in kept]),
        "mines": layout[None] & (grids < 0),
        "prob": prob,
        "total_mines": np.full(n, env.mines, dtype=np.int16),
        "game_seed": np.full(n, seed, dtype=np.int64),
        "step": np.array([d.step for d in kept], dtype=np.int16),
        "guess": np.array([d.guessed for d in kept], dtype=bool),
        "won": np.full(n, bool(rec.won)),
    }
    return arrays, bool(rec.won)
