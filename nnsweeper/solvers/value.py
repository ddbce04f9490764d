"""The value solver: exact logic for every certain move, a learned value for the guesses.

:class:`ValueSolver` (``value-gnn``) plays as :class:`~nnsweeper.solvers.SearchSolver`
does (certain moves, exact endgames, forced guesses) except for its look-ahead
guesses. There, each candidate cell ``c`` (the search solver's candidates: the cells
nearly as safe as the safest, a few interior ones standing for the rest) is scored
by the estimated chance to win the whole game after guessing it::

    Q(c) = sum over v of P(c is safe and shows v) x V(position after c shows v)

with the exact share of layouts from the engine (:func:`~nnsweeper.engine.each_outcome`)
and ``V`` the value network (:class:`~nnsweeper.models.value.ValueGNN`), trained on
the search solver's own games to predict its chance to win from a position. A
position with nothing left to reveal is worth 1 exactly. Choosing the best ``Q``
is one step of policy improvement over the policy that ``V`` values.

A dead candidate (it shows the same number in every layout) is played only when no
living candidate is at least as safe. ``Q`` is rounded to :attr:`decimals` places
before the comparison, so that the last bits of a platform's floating point decide
nothing but exact ties at that precision, which go to the earlier candidate in the
search solver's order (safest first, then ``tie_break``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from nnsweeper.engine import BoardAnalysis, each_outcome
from nnsweeper.errors import check_int
from nnsweeper.observation import Observation

from .search import Candidate, SearchChoice, SearchSolver, first_living

__all__ = ["ValueSolver"]


class ValueSolver(SearchSolver):
    """The search solver with its look-ahead guesses chosen by a value network.

    Parameters
    ----------
    model : str or os.PathLike, default "value-gnn"
        The bundled value model, or the ``.pt`` checkpoint of one (a ``value-gnn`` or
        ``value-cnn`` architecture, written by :func:`~nnsweeper.models.save_checkpoint`).
    decimals : int, default 4
        Places ``Q`` is rounded to before candidates are compared.
    trust : float or None, default 0.02
        None: the guess is the candidate of highest ``Q``. A number: the search
        solver's own look-ahead guess, unless another candidate's ``Q`` exceeds its
        ``Q`` by more than ``trust`` (the network overrides the exact heuristic only
        where it is confident). The default was chosen on development seeds (expert,
        4000 games, base seed 11, paired with ``search``): the highest-``Q`` pick lost
        1.55 points (interval -2.87 to -0.22), trust 0.005 lost 0.82, 0.01 lost 0.55,
        and 0.02 was level (+0.08, -0.50 to +0.65).
    **options
        The :class:`~nnsweeper.solvers.SearchSolver` options (``start``, ``margin``,
        ``candidates``, ``interior``, ``endgame``, ``node_limit``, ``forced``,
        ``tie_break``, and the guessing options: the candidates are the search solver's,
        and the guess ``trust`` keeps is the one its look-ahead makes with them);
        ``depth`` stays 1.
    """

    name = "value-gnn"

    def __init__(self, *, model="value-gnn", decimals=4, trust=0.02, **options):
        if options.get("depth", 1) != 1:
            raise ValueError(f"the value solver looks one guess ahead (depth 1); "
                             f"got depth={options['depth']!r}")
        super().__init__(**options)
        self.model = model
        self.decimals = check_int("decimals", decimals, 1, ValueError, maximum=12)
        if trust is not None and (isinstance(trust, bool) or not isinstance(trust, int | float)
                                  or not 0 <= trust <= 1):
            raise ValueError(f"trust must be None or a number in [0, 1]; got {trust!r}")
        self.trust = None if trust is None else float(trust)
        self._net = None

    def options(self) -> dict:
        opts = super().options()
        opts.pop("depth", None)
        return {**opts, "model": str(self.model), "decimals": self.decimals, "trust": self.trust}

    def weights(self) -> dict[str, str]:
        from nnsweeper.models.digest import model_weights

        return model_weights(self.model)

    def __getstate__(self):
        state = super().__getstate__()
        state["_net"] = None  # loaded again where it plays
        return state

    @property
    def net(self):
        """The value network (loaded on first use)."""
        if self._net is None:
            from nnsweeper.models.value import load_value_model

            self._net = load_value_model(self.model)
        return self._net

    @property
    def training_seeds(self) -> dict | None:
        """The seed streams of the value model's training games (a manifest-like dict), if recorded.

        The evaluation harness refuses to play any of those games.
        """
        meta = getattr(self.net, "checkpoint_meta", None) or {}
        streams = (meta.get("extra") or {}).get("data_seed_streams")
        return {"seed_streams": streams} if streams else None

    def values(self, boards: list[tuple[Observation, BoardAnalysis]]) -> np.ndarray:
        """V of each position (float64): the network's P(win), 1 where nothing is left to reveal."""
        from nnsweeper.models.value import predict_values

        return predict_values(self.net, boards)

    def look_ahead(self, obs: Observation, a: BoardAnalysis, rng) -> SearchChoice:
        p = a.probabilities
        cells = self.candidate_cells(obs, a, rng)
        picked = [tuple(c) for c in cells.tolist()]
        boards, owner, weights, counts = [], [], [], []
        for k, cell in enumerate(picked):
            seen = [0] * 9
            for v, board, a2 in each_outcome(obs, cell):
                seen[v] = a2.layouts
                boards.append((board, a2))
                owner.append(k)
                weights.append(Fraction(a2.layouts, a.layouts))
            counts.append(seen)
        values = self.values(boards)
        n = len(picked)
        q = np.zeros(n)
        # The layouts after which a cell is proved safe (progress), for the candidates' records.
        progress = [0] * n
        for k, w, val, (_, a2) in zip(owner, weights, values, boards, strict=True):
            q[k] += float(w) * val
            progress[k] += a2.layouts if a2.safe.any() else 0
        q = np.round(q, self.decimals)
        dead = [sum(c > 0 for c in seen) == 1 for seen in counts]
        cands = [Candidate(cell, float(p[cell]), float(q[k]), progress[k] / a.layouts,
                           tuple(c / a.layouts for c in counts[k]), dead[k]) for k, cell in enumerate(picked)]
        order = sorted(range(n), key=lambda k: -q[k])  # stable: ties to the earlier
        best = first_living(cands, order, defer=self.defer_dead)
        if self.trust is not None:
            # The search solver's own guess among the same candidates, with its options.
            chosen = picked.index(self.score_candidates(obs, a, rng, picked=cells)[0].cell)
            if q[best] - q[chosen] > self.trust:
                chosen = best
            best = chosen
        ranked = (cands[best], *(cands[k] for k in sorted(range(n), key=lambda k: -q[k]) if k != best))
        return SearchChoice(cands[best].cell, "look-ahead", cands[best].probability, ranked, None, a.layouts,
                            value=float(q[best]))

