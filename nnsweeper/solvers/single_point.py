"""The single-point solver: local rules only, a random frontier guess when stuck."""

from __future__ import annotations

import numpy as np

from nnsweeper.grid import dilate
from nnsweeper.solvers.base import Solver

__all__ = ["SinglePointSolver"]


class SinglePointSolver(Solver):
    """The seed notebook's single-point solver, vectorised and with its flags kept.

    Each turn applies the two local rules to every number at once (see
    :func:`~nnsweeper.solvers.base.local_rules`): new mines are flagged and kept for
    the rest of the game, certainly-safe cells are revealed. When neither rule fires,
    it reveals a uniformly random covered, unflagged cell next to a revealed number
    (any covered, unflagged cell when there is no such cell). It never uses the
    total mine count.

    Parameters
    ----------
    start : {"center", "corner", "random"} or (row, col), default="center"
        Where the first click goes.
    """

    name = "single_point"

    def turn(self, game, flags, rng) -> bool:
        if self.local_step(game, flags):
            return True
        grid = game.grid
        unknown = (grid < 0) & ~flags
        if not unknown.any():
            return False
        frontier = unknown & dilate(grid > 0)
        pool = np.argwhere(frontier if frontier.any() else unknown)
        i, j = pool[rng.integers(len(pool))]
        # This solver computes no probabilities: its guesses are recorded with NaN.
        game.reveal(i, j, "guess", float("nan"))
        return True
