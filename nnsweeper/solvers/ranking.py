"""Ranking the covered cells for a guess: lowest mine probability first, then a tie-break.

Every solver that guesses from probabilities (the exact engine's, or a model's) orders
the candidate cells with :func:`rank_cells`; :func:`prob_zero` is the tie-break score
of the "max zero probability" strategy. A solver that guesses differently adds its
score here and a name to :data:`TIE_BREAKS`.
"""

from __future__ import annotations

import numpy as np

from nnsweeper.grid import neighbour_product, neighbour_sum

__all__ = ["TIE_BREAKS", "check_tie_break", "rank_cells", "prob_zero"]

#: How to choose among the cells that share the lowest mine probability.
TIE_BREAKS = ("random", "fewest_covered_neighbours", "prob_zero")


def check_tie_break(tie_break) -> str:
    """``tie_break`` if it is one of :data:`TIE_BREAKS`, else a ValueError naming them."""
    if not isinstance(tie_break, str) or tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}; got {tie_break!r}")
    return tie_break


def rank_cells(prob: np.ndarray, unknown: np.ndarray, grid: np.ndarray, rng, tie_break: str,
               tolerance: float, *, coarse_ties: bool = False) -> np.ndarray:
    """The ``unknown`` cells by lowest ``prob``, ties ordered by ``tie_break``; shape (n, 2).

    Probabilities within ``tolerance`` of each other fall in one level (levels are
    ``floor(p / tolerance)``); within a level the tie-break decides (see
    :class:`~nnsweeper.solvers.csp.CSPSolver`), and ``rng`` orders exact ties at random. With
    ``coarse_ties``, ``prob_zero`` values are compared in levels of ``tolerance``
    too, so that float noise in ``prob`` (a model's) cannot reorder them.
    """
    p = prob[unknown]
    cells = np.argwhere(unknown)
    if tie_break == "random":
        tie = rng.random(len(cells))
    elif tie_break == "fewest_covered_neighbours":
        tie = neighbour_sum(grid < 0)[unknown] + rng.random(len(cells)) * 0.5
    else:
        zero = prob_zero(prob, grid)[unknown]
        if coarse_ties and tolerance > 0:
            tie = -np.floor(zero / tolerance) + rng.random(len(cells)) * 0.5
        else:
            tie = -zero + rng.random(len(cells)) * 1e-12  # random among exact ties
    level = np.floor(p / tolerance) if tolerance > 0 else p
    return cells[np.lexsort((tie, level))]


def prob_zero(prob: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Approximate P(cell is safe and shows 0): product of P(safe) over it and its neighbours.

    Revealed neighbours count as safe. The product treats cells as independent,
    which they are not; it is a ranking heuristic, not a probability to report. It is
    made of plain multiplications in a fixed order, so a ranking built on it is the
    same on every machine.
    """
    safe = 1.0 - np.where(grid < 0, prob, 0.0)
    return safe * neighbour_product(safe)
