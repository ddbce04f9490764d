"""The CSP solver: local rules, then the exact engine, then the safest guess."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from nnsweeper.engine import BoardAnalysis, each_outcome
from nnsweeper.observation import Observation
from nnsweeper.solvers.base import Solver
from nnsweeper.solvers.ranking import check_tie_break, rank_cells

__all__ = ["CSPSolver"]

#: Interior cells looked at ahead when guessing (the best few by the tie-break).
_INTERIOR_CANDIDATES = 2


class CSPSolver(Solver):
    """Exact constraint solver with the global mine count.

    Each turn: the local single-point rules (cheap); when they are stuck, the exact
    probability engine (:func:`nnsweeper.analyze`), which proves every cell that can
    be proved safe or a mine, frontier and interior alike, using the total mine count.
    When nothing is certain it reveals the covered cell with the lowest probability
    over the whole board, interior included, choosing among ties by ``tie_break``.

    Parameters
    ----------
    start : {"center", "corner", "random"} or (row, col), default="center"
        Where the first click goes.
    tie_break : str, default="fewest_covered_prob_zero"
        One of :data:`~nnsweeper.solvers.ranking.TIE_BREAKS`. ``fewest_covered_prob_zero``:
        the tied cell with the fewest covered neighbours (corners and edges of the covered
        area first), then the one most likely to be a zero. ``fewest_covered_neighbours``:
        the covered neighbours alone (at random among equal counts). ``prob_zero``: the
        tied cell most likely to be a zero (its own and its covered neighbours'
        probabilities of being safe, multiplied), as in the "max zero probability"
        strategy (csp's default before that study). ``random``: uniform among the tied
        cells. The others: :func:`~nnsweeper.solvers.ranking.tie_keys`. On the selection
        games of ``eval/tie_breaks.py`` (100,000 a board, paired with ``prob_zero``) the
        default won +0.40 points (+0.22 to +0.57) on expert, +0.17 (+0.07 to +0.27) on
        intermediate and +0.06 (-0.09 to +0.21) over the 10x10 sweep; the covered
        neighbours alone won more on expert (+0.62) but lost over the sweep (-0.06 there,
        -0.11 (-0.22 to -0.00) on the 260,000 games of the 10x10 record, -0.48 at 15 to 19
        mines): ``eval/results/tie_breaks.md``.
    tolerance : float, default=1e-9
        Cells whose probability is within this of the lowest count as tied.
    lookahead : int, default=0
        When guessing, look one move ahead on up to this many candidates (the safest
        cells in tie-break order, at most two interior ones, plus frontier cells almost
        as safe): for every number a candidate could show, the exact engine gives its
        probability and the board after it. The guess maximises the chance to survive
        it and the next move, ``P(safe) * E[P(next move safe)]``. 0 (the default) turns
        the look-ahead off: on 4,000 intermediate games it won as often as plain
        lowest-probability play (78.0% both) at four times the cost.
    margin : float, default=0.05
        With ``lookahead``: cells at most this much likelier to be mines than the
        safest one are candidates too.
    """

    name = "csp"

    def __init__(self, *, start="center", tie_break="fewest_covered_prob_zero", tolerance=1e-9, lookahead=0,
                 margin=0.05):
        super().__init__(start=start)
        if isinstance(lookahead, bool) or not isinstance(lookahead, int) or lookahead < 0:
            raise ValueError(f"lookahead must be a non-negative integer; got {lookahead!r}")
        if not 0 <= float(margin) <= 1:
            raise ValueError(f"margin must be in [0, 1]; got {margin!r}")
        self.lookahead = lookahead
        self.margin = float(margin)
        check_tie_break(tie_break)
        if not 0 <= float(tolerance) < 1:
            raise ValueError(f"tolerance must be in [0, 1); got {tolerance!r}")
        self.tie_break = tie_break
        self.tolerance = float(tolerance)

    def options(self) -> dict:
        return {
            **super().options(),
            "tie_break": self.tie_break,
            "tolerance": self.tolerance,
            "lookahead": self.lookahead,
            "margin": self.margin,
        }

    def turn(self, game, flags, rng) -> bool:
        a = self.certain_moves(game, flags)
        if isinstance(a, bool):
            return a
        i, j = self.choose_guess(a, game.grid, flags, game.env.mines, rng)
        game.reveal(i, j, "guess", float(a.probabilities[i, j]))
        return True

    def rank_guesses(self, a: BoardAnalysis, grid, rng) -> np.ndarray:
        """Unknown cells by lowest probability, ties ordered by ``tie_break``; shape (n, 2)."""
        return rank_cells(a.probabilities, a.unknown, grid, rng, self.tie_break, self.tolerance)

    def choose_guess(self, a: BoardAnalysis, grid, flags, total_mines: int, rng) -> tuple[int, int]:
        """The cell to reveal when nothing is certain."""
        ranked = self.rank_guesses(a, grid, rng)
        if self.lookahead == 0 or len(ranked) == 1:
            return tuple(ranked[0])
        p = a.probabilities
        p_min = p[tuple(ranked[0])]
        near = ranked[p[ranked[:, 0], ranked[:, 1]] <= p_min + self.margin]
        # Interior cells differ only by their neighbourhood: a few of them are enough.
        inner = ~a.frontier[near[:, 0], near[:, 1]]
        keep = ~inner | (np.cumsum(inner) <= _INTERIOR_CANDIDATES)
        cands = near[keep][: self.lookahead]
        scores = [
            (1 - p[i, j]) * self._next_safety(grid, flags, total_mines, i, j) for i, j in cands
        ]
        return tuple(cands[int(np.argmax(scores))])

    def _next_safety(self, grid, flags, total_mines: int, i: int, j: int) -> float:
        """P(the move after revealing (i, j) is safe | (i, j) is safe), exactly.

        For every number ``v`` the cell could show, the engine gives P(v) (from the
        layout counts) and the board after it: the next move is safe for sure when a
        cell is proved safe, otherwise as safe as the safest cell left.
        """
        layouts, progress = [], []
        for v, _, a2 in each_outcome(Observation.of(grid, total_mines, flags), (i, j)):
            layouts.append(a2.layouts)
            if v == 0 or a2.safe.any():
                progress.append(1.0)
            else:
                rest = a2.unknown
                progress.append(1.0 - float(a2.probabilities[rest].min()) if rest.any() else 1.0)
        if not layouts:
            return 0.0
        # Exact weights (layout counts) and one rounding, so the choice is the same everywhere.
        return float(sum(w * Fraction(x) for w, x in zip(layouts, progress, strict=True)) / sum(layouts))
