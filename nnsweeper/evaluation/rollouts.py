"""A position's chance to win, by Monte Carlo: play a solver on from it on sampled layouts.

:func:`play_from` plays a solver from a position on a given hidden layout (one
consistent with it); :func:`monte_carlo_value` draws layouts exactly from the
position's posterior (:func:`~nnsweeper.engine.sample_layouts`), plays the solver
on from the position on each, and reports the wins with a Wilson interval: an
unbiased estimate of the solver's chance to win from there, the yardstick of the
value network's estimate (:mod:`nnsweeper.models.value`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnsweeper.engine import sample_layouts
from nnsweeper.errors import InvalidBoardError, check_int, check_rng
from nnsweeper.game import Game, Rules
from nnsweeper.observation import Observation, as_observation
from nnsweeper.solvers.base import GameRecord, Solver, Turns

from .stats import wilson_interval

__all__ = ["MAX_ROLLOUTS", "ValueEstimate", "play_from", "monte_carlo_value"]

#: Most games one estimate may play.
MAX_ROLLOUTS = 100_000


class _PositionGame(Game):
    """A game already at a position, with ``layout`` hidden under it."""

    def __init__(self, obs: Observation, layout: np.ndarray):
        rows, cols = obs.shape
        super().__init__(Rules(rows, cols, obs.total_mines, "none"), seed=0)
        if layout.shape != obs.shape or int(layout.sum()) != obs.total_mines:
            raise InvalidBoardError(f"a layout for this position must be bool {obs.shape} with "
                                    f"{obs.total_mines} mines")
        self._set_layout(np.array(layout, dtype=bool))
        revealed = obs.grid >= 0
        if (self._mine & revealed).any() or (self._counts[revealed] != obs.grid[revealed]).any():
            raise InvalidBoardError("the layout does not fit the position's numbers")
        self.mask[revealed] = 0
        self._covered_safe = self.safe_cells - int(revealed.sum())
        if self._covered_safe == 0:
            self.done, self.result = True, "win"


def play_from(solver: Solver, position, layout: np.ndarray, rng) -> bool:
    """Whether ``solver`` wins from ``position`` when ``layout`` is the hidden board.

    The solver makes every move from the position on, starting with its flags
    (``position.flags``) and with randomness from ``rng``.
    """
    obs = as_observation(position)
    env = _PositionGame(obs, layout)
    if env.done:
        return True
    game = Turns(env, GameRecord())
    flags = np.array(obs.flags)
    rng = check_rng(rng)
    while not game.done:
        if not solver.turn(game, flags, rng):
            break
    return game.won


@dataclass(frozen=True)
class ValueEstimate:
    """Wins of a solver from one position on sampled layouts.

    Attributes
    ----------
    wins, games : int
    low, high : float
        The Wilson 95% interval of the chance to win.
    """

    wins: int
    games: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        return self.wins / self.games


def monte_carlo_value(position, solver="search", n: int = 200, seed: int = 0) -> ValueEstimate:
    """Estimate a solver's chance to win from ``position`` with ``n`` games.

    Parameters
    ----------
    position : Observation or (grid, total_mines[, flags])
        The position (as :func:`~nnsweeper.observation.as_observation` reads it).
    solver : str or Solver, default "search"
        A registered solver name or a solver.
    n : int, default 200
        Games, each on a layout drawn exactly from the position's posterior.
    seed : int, default 0
        Decides the layouts and the solver's randomness.
    """
    from nnsweeper.solvers import get_solver

    obs = as_observation(position) if not isinstance(position, Observation) else position
    n = check_int("n", n, 1, ValueError, maximum=MAX_ROLLOUTS)
    seed = check_int("seed", seed, 0, ValueError)
    solver = get_solver(solver) if isinstance(solver, str) else solver
    layouts = sample_layouts(obs, n=n, rng=np.random.default_rng([seed, 0]))
    wins = sum(play_from(solver, obs, layouts[k], np.random.default_rng([seed, 1, k])) for k in range(n))
    low, high = wilson_interval(wins, n)
    return ValueEstimate(int(wins), n, low, high)
