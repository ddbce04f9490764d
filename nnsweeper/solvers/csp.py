"""The CSP solver: local rules, then the exact engine, then the safest guess."""

from __future__ import annotations

import numpy as np

from nnsweeper.grid import neighbour_sum
from nnsweeper.probability import BoardAnalysis, analyze
from nnsweeper.solvers.base import Solver, local_rules

__all__ = ["CSPSolver", "TIE_BREAKS"]

#: How to choose among the cells that share the lowest mine probability.
TIE_BREAKS = ("random", "fewest_covered_neighbours", "prob_zero")


class CSPSolver(Solver):
    """Exact constraint solver with the global mine count.

    Each turn: the local single-point rules (cheap); when they are stuck, the exact
    probability engine (:func:`nnsweeper.analyze`), which proves every cell that can
    be proved safe or a mine, frontier and interior alike, using the total mine count.
    When nothing is certain it reveals the covered cell with the lowest probability
    over the whole board, interior included, choosing among ties by ``tie_break``.

    Parameters
    ----------
    start : {"center", "corner"} or (row, col), default="center"
        Where the first click goes.
    tie_break : {"random", "fewest_covered_neighbours", "prob_zero"}, default="prob_zero"
        ``random``: uniform among the tied cells. ``fewest_covered_neighbours``: the
        tied cell with the fewest covered neighbours (corners and edges first).
        ``prob_zero``: the tied cell most likely to be a zero (its own and its covered
        neighbours' probabilities of being safe, multiplied), as in the "max zero
        probability" strategy.
    tolerance : float, default=1e-9
        Cells whose probability is within this of the lowest count as tied.
    """

    name = "csp"

    def __init__(self, *, start="center", tie_break="prob_zero", tolerance=1e-9):
        super().__init__(start=start)
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}; got {tie_break!r}")
        if not 0 <= float(tolerance) < 1:
            raise ValueError(f"tolerance must be in [0, 1); got {tolerance!r}")
        self.tie_break = tie_break
        self.tolerance = float(tolerance)

    def options(self) -> dict:
        return {**super().options(), "tie_break": self.tie_break, "tolerance": self.tolerance}

    def turn(self, game, flags, rng) -> bool:
        grid = game.grid
        safe, mines = local_rules(grid, flags)
        flags |= mines
        if safe.any():
            game.reveal_all(safe, "local")
            return True
        if mines.any():
            return True
        if not ((grid < 0) & ~flags).any():
            return False
        a = analyze(grid, game.env.mines, flags)
        flags |= a.mines
        if a.safe.any():
            game.reveal_all(a.safe, "engine")
            return True
        i, j = self.choose_guess(a, grid, flags, rng)
        game.reveal(i, j, "guess", float(a.probabilities[i, j]))
        return True

    def choose_guess(self, a: BoardAnalysis, grid, flags, rng) -> tuple[int, int]:
        """The cell to reveal when nothing is certain."""
        p = np.where(a.unknown, a.probabilities, np.inf)
        tied = p <= p.min() + self.tolerance
        cells = np.argwhere(tied)
        if len(cells) == 1 or self.tie_break == "random":
            return tuple(cells[rng.integers(len(cells))])
        if self.tie_break == "fewest_covered_neighbours":
            score = -neighbour_sum(grid < 0)[tied]
        else:
            score = prob_zero(a.probabilities, grid)[tied]
        best = np.flatnonzero(score >= score.max() - 1e-12)
        return tuple(cells[best[rng.integers(len(best))]])


def prob_zero(prob: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Approximate P(cell is safe and shows 0): product of P(safe) over it and its neighbours.

    Revealed neighbours count as safe. The product treats cells as independent,
    which they are not; it is a ranking heuristic, not a probability to report.
    """
    logsafe = np.log(np.clip(1.0 - np.where(grid < 0, prob, 0.0), 1e-300, 1.0))
    return np.exp(logsafe + neighbour_sum(logsafe))
