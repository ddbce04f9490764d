"""Ranking the covered cells for a guess: lowest mine probability first, then a tie-break.

Every solver that guesses from probabilities (the exact engine's, or a model's) orders
the candidate cells with :func:`rank_cells`; :func:`prob_zero` is the tie-break score
of the "max zero probability" strategy. A solver that guesses differently adds its
score here and a name to :data:`TIE_BREAKS`.
"""

from __future__ import annotations

import numpy as np

from nnsweeper.grid import neighbour_product, neighbour_sum

__all__ = ["TIE_BREAKS", "check_tie_break", "rank_cells", "prob_zero", "tie_keys"]

#: How to choose among the cells that share the lowest mine probability (see :func:`tie_keys`).
TIE_BREAKS = ("random", "fewest_covered_neighbours", "prob_zero", "most_revealed_neighbours",
              "fewest_board_neighbours", "fewest_covered_prob_zero")


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
    keys = [k[unknown] for k in tie_keys(prob, grid, tie_break, tolerance if coarse_ties else 0.0)]
    rand = rng.random(len(cells))
    level = np.floor(p / tolerance) if tolerance > 0 else p
    if tie_break == "prob_zero" and not (coarse_ties and tolerance > 0):
        # The order csp and search have always played: values within about 1e-12 of each other at
        # random, the rare sums that come out exactly equal in reading order (with the random
        # draw as a last key instead, search played one of 10,000 expert games otherwise).
        return cells[np.lexsort((keys[0] + rand * 1e-12, level))]
    # Lowest level first, then each key in turn, then at random among exact ties.
    return cells[np.lexsort((rand, *reversed(keys), level))]


def tie_keys(prob: np.ndarray, grid: np.ndarray, tie_break: str, tolerance: float = 0.0) -> list[np.ndarray]:
    """The keys that order cells of one probability level, smallest first, per cell of the board.

    ``random``: none (only the random order). ``fewest_covered_neighbours``: the covered
    neighbours (corners and edges of the covered area first). ``prob_zero``: minus
    :func:`prob_zero`, in levels of ``tolerance`` when it is positive (a model's float noise
    then cannot reorder them). ``most_revealed_neighbours``: minus the revealed neighbours
    (the cells next to the most numbers). ``fewest_board_neighbours``: the board's corners,
    then its edges, then the rest. ``fewest_covered_prob_zero``: the covered neighbours, then
    minus :func:`prob_zero`. Every key but ``prob_zero``'s is a count (exact everywhere).
    """
    check_tie_break(tie_break)
    if tie_break == "random":
        return []

    def zero() -> np.ndarray:
        z = prob_zero(prob, grid)
        return -np.floor(z / tolerance) if tolerance > 0 else -z

    if tie_break == "prob_zero":
        return [zero()]
    if tie_break == "most_revealed_neighbours":
        return [-neighbour_sum(grid >= 0)]
    if tie_break == "fewest_board_neighbours":
        return [neighbour_sum(np.ones(grid.shape, dtype=bool))]
    covered = neighbour_sum(grid < 0)
    return [covered] if tie_break == "fewest_covered_neighbours" else [covered, zero()]


def prob_zero(prob: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Approximate P(cell is safe and shows 0): product of P(safe) over it and its neighbours.

    Revealed neighbours count as safe. The product treats cells as independent,
    which they are not; it is a ranking heuristic, not a probability to report. It is
    made of plain multiplications in a fixed order, so a ranking built on it is the
    same on every machine.
    """
    safe = 1.0 - np.where(grid < 0, prob, 0.0)
    return safe * neighbour_product(safe)
