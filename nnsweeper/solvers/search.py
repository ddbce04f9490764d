"""The search solver: certain moves, exact endgames, forced guesses, look-ahead guesses.

Each turn, in this order:

1. **Certain moves**, as :class:`~nnsweeper.solvers.csp.CSPSolver` makes them: the
   local single-point rules, else every cell the exact engine proves safe.
2. **Endgame** (kind ``"endgame"``): when at most ``endgame`` mine layouts fit the
   board (or a few more on a dense board: ``endgame_density``), they are enumerated
   and the game tree is searched exactly (:mod:`nnsweeper.solvers.endgame`); the move
   maximises the probability of winning the whole game. With ``isolated``, an area that
   is a game of its own is searched the same way.
3. **Forced guess** (kind ``"forced"``): two covered cells that hold exactly one mine
   between them and that no other cell can ever tell apart (every cell next to one of
   them and not the other is a known mine, or off the board) must be guessed sooner
   or later at even odds, and nothing learnt elsewhere helps; the solver takes such a
   guess at once.
4. **Look-ahead guess** (kind ``"look-ahead"``): the cells nearly as safe as the
   safest one (at least ``1 - margin`` times its chance of being safe; the interior
   ones, away from the numbers, only when nearly as safe and then a few chosen by
   where they lie: ``spread``) are scored by the chance to survive this guess and the
   next decision: for every number ``v`` a candidate could show, the engine gives the
   exact share of layouts in which it is safe and shows ``v`` and the board after it;
   the board after it is worth a blend of its best and second-best safety among the
   cells that can still teach something (``next_value``; a cell proved safe counts as
   safe for sure), and at ``depth`` 2, on boards with at most
   ``deep_cells`` covered cells, as much as its best look-ahead guess. Each score is
   weighed by ``1 + progress / 1000`` (``progress``: the chance that a cell is proved
   safe after the guess). A candidate that would show the same number in every layout
   (a *dead* cell: revealing it teaches nothing) is never played while a living one
   was scored (``defer_dead``). Ties go to the candidate with more progress, then to
   the earlier one in the ``tie_break`` order. :data:`V1` holds the options of the
   first version (the next board worth its best safety, 8 candidates, progress only on
   ties, a dead cell played when strictly safer than every living one).

Every score is a ratio of the engine's exact layout counts, summed exactly (as
integers over one denominator per position) and rounded once, so the choices are the
same on every machine; ``rng`` only orders exact ties (``tie_break``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from nnsweeper.engine import BoardAnalysis, each_outcome, enumerate_layouts, isolated_areas
from nnsweeper.errors import check_int
from nnsweeper.grid import dilate, neighbour_sum
from nnsweeper.observation import Observation
from nnsweeper.solvers.base import Solver
from nnsweeper.solvers.endgame import Endgame, SearchBudgetExceeded
from nnsweeper.solvers.fifty import Patterns
from nnsweeper.solvers.ranking import check_tie_break, rank_cells

__all__ = ["BLEND", "V1", "Candidate", "DeepSearchSolver", "SearchChoice", "SearchSolver", "blended_value",
           "forced_guess", "living_cells"]

#: The guessing options' values before they were options (:attr:`SearchSolver.UNSET`).
_UNSET = {"next_value": "best", "pseudo": False, "influence": False, "dominance": False, "spread": False,
          "isolated": False, "defer_dead": False, "progress_weight": False, "interior_margin": None,
          "endgame_density": 0, "deep_top": None, "influence_covered": 0.0, "tie_band": 0.0}
#: The options of ``search`` before its guessing options were measured and chosen (the record
#: runs of version 1 played with them): ``SearchSolver(**V1)`` plays as it did.
V1 = {"candidates": 8, "endgame": 1000, "node_limit": 20000,
      **{k: v for k, v in _UNSET.items() if k not in ("deep_top", "influence_covered", "tie_band")}}

# Added to a rounded probability's complement to bound the exact one from above: 1 / _SLACK_DEN.
_SLACK_DEN = 10**12
# Every float in [0, 1] is a whole multiple of 2**-1074 (the smallest subnormal float).
_FLOAT_BITS = 1074
_UNIT = 1 << _FLOAT_BITS


def _units(x: float) -> int:
    """A float in [0, 1] in units of 2**-1074, exactly (the look-ahead sums its scores in them)."""
    n, d = x.as_integer_ratio()  # d is a power of two, at most 2**1074
    return n << (_FLOAT_BITS + 1 - d.bit_length())


@dataclass(frozen=True)
class Candidate:
    """One cell the look-ahead scored.

    Attributes
    ----------
    cell : (int, int)
    probability : float
        P(mine) of the cell.
    score : float
        What the look-ahead ranks the candidates by, exactly rounded: ``value``, times
        the weights that options add (``influence``, ``progress_weight``; none by default).
    progress : float
        P(the cell is safe and the board after it has a cell proved safe).
    outcomes : tuple of float
        P(safe and shows v) for v = 0..8.
    dead : bool
        The cell shows the same number in every layout where it is safe.
    value : float or None
        P(the cell is safe and the next decision is safe too), exactly rounded (with
        ``next_value="blend"``, the next board's blended value in place of its safety);
        None where ``score`` is not such a chance (a value network's estimate).
    """

    cell: tuple[int, int]
    probability: float
    score: float
    progress: float
    outcomes: tuple[float, ...]
    dead: bool
    value: float | None = None


@dataclass(frozen=True)
class SearchChoice:
    """The search solver's guess on one position and why.

    Attributes
    ----------
    cell : (int, int)
    kind : {"endgame", "forced", "look-ahead"}
    probability : float
        P(mine) of the cell.
    candidates : tuple of Candidate
        The cells the look-ahead scored, best first (empty for the other kinds).
    win_probability : float or None
        For ``"endgame"``: P(winning the whole game) with best play from here, exactly
        rounded.
    layouts : int
        Mine layouts consistent with the position.
    partner : (int, int) or None
        For ``"forced"``: the other cell of the pair.
    value : float or None
        For a value solver's look-ahead guess: the network's estimate of the chance
        to win after it (kept in the game record's move).
    """

    cell: tuple[int, int]
    kind: str
    probability: float
    candidates: tuple[Candidate, ...] = ()
    win_probability: float | None = None
    layouts: int = 0
    partner: tuple[int, int] | None = None
    value: float | None = None


def _best_safety(a: BoardAnalysis) -> float:
    """P(safe) of the safest covered cell that is not a known mine (1 when none is left)."""
    rest = a.unknown & ~a.mines
    return 1.0 - float(a.probabilities[rest].min()) if rest.any() else 1.0


def living_cells(a: BoardAnalysis) -> np.ndarray:
    """Covered cells not known to be mines whose number is not settled yet (bool).

    A cell is *living* when some neighbour is covered and neither proved safe nor proved
    a mine: only then can the number it shows teach something. The test is sufficient
    for a dead cell, not necessary (a cell can show one number in every layout for
    other reasons); :attr:`Candidate.dead` is the exact test for one cell.
    """
    open_ = a.unknown & ~a.mines
    uncertain = open_ & ~a.safe
    return open_ & (neighbour_sum(uncertain) > 0)


#: The blended value of a decision (``next_value="blend"``): weights of the best and the
#: second-best safety among the living cells (their sum is the value's scale).
BLEND = (4, 1)


def blended_value(a: BoardAnalysis) -> int:
    """The blended value of the decision on board ``a``, in units of ``2**-1074 / sum(BLEND)``.

    ``(4 s1 + s2) / 5``, with ``s1 >= s2`` the two highest chances of being safe among the
    living cells (:func:`living_cells`; the interior cells' shared chance counted twice
    when one of them is living, a proved-safe cell's chance 1, a missing second 0): a
    position is worth most when it leaves two or more safe ways on, not only one. A board
    with no covered cell left but mines is won (the full value); one whose cells are all
    dead is worth its best safety (one of them must be guessed).
    """
    from nnsweeper.solvers.search_kernels import living_chances  # compiled; loaded on first use

    w1, w2 = BLEND
    n_open, n, s1, s2, best = living_chances(a.probabilities, a.unknown, a.frontier)
    if not n_open:
        return (w1 + w2) * _UNIT
    if n == 0:
        return (w1 + w2) * _units(best)
    if n == 1:
        return w1 * _units(s1)
    return w1 * _units(s1) + w2 * _units(s2)


def first_living(cands, order, *, defer: bool = False) -> int:
    """The first of ``order`` (indices into ``cands``), or, when that candidate is dead, the first
    living one at least as safe (a dead cell is played only when no living one is as safe);
    with ``defer``, the first living one however safe (a dead cell only when every one is dead)."""
    order = list(order)
    first = order[0]
    if cands[first].dead:
        for k in order:
            if not cands[k].dead and (defer or cands[k].probability <= cands[first].probability):
                return k
    return first


def forced_guess(grid: np.ndarray, mines: np.ndarray) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Two cells that must be guessed between at even odds, or None.

    A revealed number that needs exactly one more mine among exactly two covered
    cells ``p`` and ``q`` (``mines``: the covered cells known to be mines) puts one
    mine in ``{p, q}`` in every layout. If every cell next to one of them and not the
    other is a known mine (or off the board), no number that can ever be revealed
    sees one without the other: swapping them maps the layouts onto each other, so
    each is a mine with probability exactly 1/2 now and after any other move.

    Returns the pair, the cell to click first (the one with more covered neighbours
    that are not known mines: its number teaches the most), or None.
    """
    from nnsweeper.engine.kernels import forced_pair  # compiled; loaded on first use

    pi, pj, qi, qj = forced_pair(np.asarray(grid), np.asarray(mines, dtype=bool))
    return None if pi < 0 else ((int(pi), int(pj)), (int(qi), int(qj)))


class SearchSolver(Solver):
    """The strongest logic here: exact endgames, forced guesses first, look-ahead guesses.

    See the module's description for each step.

    Parameters
    ----------
    start : {"center", "corner", "random"} or (row, col), default="center"
        Where the first click goes.
    depth : {1, 2}, default=1
        Decisions the look-ahead scores: 1, this guess and the next decision's safety;
        2, the next decision as its own look-ahead, on positions with at most
        ``deep_cells`` covered cells. Depth 2 takes 5 to 7 times the time of depth 1
        (more on dense boards); measured against depth 1 on the same games (with the
        options of :data:`V1`), it is no better beyond noise on intermediate (-0.6
        points, -1.6 to +0.4, on 5000 games; +0.6, -0.2 to +1.3, on 10,000 from base
        seed 2), +0.1 on beginner and +0.3 (+0.0 to +0.5) on expert; on its two best
        candidates only (``deep_top=2``), +0.04 (-0.08 to +0.15) on expert and +0.07
        (-0.13 to +0.26) on intermediate (20,000 games each, ``eval/search_ablation.py``).
    deep_cells : int, default=300
        At ``depth`` 2, positions with more covered cells than this are scored at
        depth 1 (on expert, the guesses of the first few moves), to bound a game's time.
    candidates : int or None, default=None
        Most cells the look-ahead scores (None: no cap; 8 in ``V1``).
    margin : float, default=0.1
        Cells whose chance of being safe is at least ``1 - margin`` times the safest
        cell's are candidates.
    interior : int, default=2
        Interior cells (away from the numbers) are alike but for their neighbourhood:
        the first ``interior`` of them in ``tie_break`` order, and the first
        ``interior`` of those next to a frontier cell, stand for them.
    spread : bool, default=True
        Pick the interior candidates as the strongest published solver does instead:
        only when the interior's chance of being safe is above ``1 - interior_margin``
        times the safest cell's; then every interior cell when fewer than 30 are left,
        else those two steps straight out from a number that still has covered
        neighbours and those with two or three covered neighbours that are not known
        mines (cells boxed in, likeliest to show a useful number).
    interior_margin : float or None, default=0.05
        With ``spread``: the interior's margin (None: ``margin``).
    endgame : int, default=2000
        Search the game tree exactly when at most this many layouts fit the board;
        0 turns the endgame search off.
    endgame_density : int, default=250
        Search it also when ``layouts * d**3 <= endgame_density``, ``d`` the share of
        the covered cells (known mines aside) that are safe (dense boards have fewer
        ways to go on), up to ``10 * endgame`` layouts; 0 turns this off. The
        strongest published solver uses 250.
    node_limit : int, default=100000
        Most positions one endgame search may expand before it gives up for the turn
        (then the look-ahead decides; the search is tried again once the layouts have
        halved).
    forced : bool, default=True
        Take forced guesses at once.
    tie_break : str (one of ``TIE_BREAKS``), default="prob_zero"
        The order of the candidates (see :class:`~nnsweeper.solvers.csp.CSPSolver`);
        the last word on exact ties of the look-ahead.
    next_value : {"best", "blend"}, default="blend"
        What the board after a guess is worth to the look-ahead: ``"best"``, 1 when a
        cell is proved safe there, else its best safety; ``"blend"``,
        :func:`blended_value` (4/5 of the best safety among the living cells and 1/5 of
        the second best), which prefers guesses that leave more than one way on.
    pseudo : bool, default=False
        Before the look-ahead, sweep the board for pseudo 50/50s
        (:func:`~nnsweeper.solvers.fifty.pseudo_fifty_fifty`: cells that are mines only
        where the board asks for an even guess anyway) and guess the best of them at once
        (by the look-ahead's score; a forced guess's cell too, instead of the one with
        more covered neighbours).
    influence : bool, default=False
        Lower the risk of a candidate that is the mine of a possible 50/50 pattern: its
        score times ``(S + 0.9 I) / S``, with ``S`` its safe layouts and ``I`` those in
        which it is the mine of a closable pair or 2x2 box (:func:`~nnsweeper.solvers.fifty.influence`,
        plus the patterns a mine there would close), at most ``S`` and its mine layouts.
        Living cells of the board's 50/50 sweep that this could lift near the safest cell
        (their safe layouts plus the swept patterns' counts above 0.9 times the safest
        cell's safe layouts) join the candidates.
    influence_covered : float, default=0.0
        With ``influence``, weigh the 50/50 patterns only on positions where at least this
        share of the board's cells is covered (the first guesses, where a mine left in a
        corner or along an edge has the longest to turn into a forced guess); 0: on every
        position.
    tie_band : float, default=0.0
        Among the scored candidates exactly as safe as the look-ahead's pick whose score is
        at least ``1 - tie_band`` times the pick's, play the first in ``tie_break`` order
        (with ``tie_break="fewest_covered_neighbours"``: a corner before an edge cell before
        an inner one), the single-step lesson applied with the look-ahead's scores; 0: the
        pick. The band is exact (the scores compare as fractions), pruning allows for it.
    dominance : bool, default=False
        After the look-ahead, play instead of its pick ``t`` the first candidate ``e`` that
        is safe in every outcome of ``t`` and safer than ``t`` by more than 1e-4 (where
        ``t`` is safe, so is ``e``: clicking ``e`` first loses less and gives ``t``'s
        information later). (The published solver's second rule, the cell that is the
        unique safest one after every outcome of ``t``, never applied on 323 positions
        of 9x9 and 16x16 games with each candidate as the pick: left out.)
    defer_dead : bool, default=True
        Never play a dead candidate while a living one was scored, however much safer the
        dead one is (the published solver's rule): a dead cell teaches nothing, so clicking
        it after the other guesses wins whenever clicking it first does, and also when the
        guesses show it to be a mine.
    progress_weight : bool, default=True
        Weigh each candidate's score by ``1 + progress / 1000`` (``progress``: the chance
        that it is safe and a cell is proved safe after it), as the published solver does,
        instead of using progress only to order exact ties.
    deep_top : int or None, default=None
        At ``depth`` 2, score only the best ``deep_top`` candidates of the depth-1
        look-ahead at depth 2 (None: every candidate), to spend the deeper look-ahead
        where the choice is made.
    isolated : bool, default=False
        Before a forced or look-ahead guess, play an isolated area exactly: a frontier
        component that holds the same number of mines in every layout and touches no other
        covered cell (:func:`~nnsweeper.engine.isolated_areas`) is a game of its own, whose
        chance of being cleared no move elsewhere changes; the smallest one with at most
        ``endgame`` layouts whose game tree the search finishes gives the move (kind
        ``"endgame"``, its ``win_probability`` the area's).

    Notes
    -----
    The defaults are those of the measured combination (``eval/search_ablation.py``: on
    50,000 paired expert games it won 0.17 points more than :data:`V1`, interval +0.01 to
    +0.33, at 1.55 times the time per game; the blended value alone is worth +0.6 to +0.8
    on intermediate). ``SearchSolver(**V1)`` plays as ``search`` did before them.
    """

    name = "search"
    #: Options printed (in :meth:`options`, so in a table's record of the solver) only when
    #: they differ from these values, which they had before they were options: a record
    #: that lacks one was played with this value (``eval/reproduce.py`` rebuilds it so).
    UNSET = _UNSET

    def __init__(self, *, start="center", depth=1, candidates=None, margin=0.1, interior=2, endgame=2000,
                 node_limit=100_000, forced=True, tie_break="prob_zero", deep_cells=300, next_value="blend",
                 pseudo=False, influence=False, dominance=False, spread=True, interior_margin=0.05,
                 endgame_density=250, isolated=False, defer_dead=True, progress_weight=True,
                 deep_top=None, influence_covered=0.0, tie_band=0.0):
        super().__init__(start=start)
        self.depth = check_int("depth", depth, 1, maximum=2)
        self.deep_cells = check_int("deep_cells", deep_cells, 0, ValueError)
        self.candidates = None if candidates is None else check_int("candidates", candidates, 1, ValueError)
        if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 <= margin < 1:
            raise ValueError(f"margin must be a number in [0, 1); got {margin!r}")
        self.margin = float(margin)
        self.interior = check_int("interior", interior, 0, ValueError)
        self.endgame = check_int("endgame", endgame, 0, ValueError)
        self.node_limit = check_int("node_limit", node_limit, 1, ValueError)
        if not isinstance(forced, bool):
            raise ValueError(f"forced must be True or False; got {forced!r}")
        self.forced = forced
        self.tie_break = check_tie_break(tie_break)
        if next_value not in ("best", "blend"):
            raise ValueError(f"next_value must be 'best' or 'blend'; got {next_value!r}")
        self.next_value = next_value
        for name, value in (("pseudo", pseudo), ("influence", influence), ("dominance", dominance),
                            ("isolated", isolated), ("defer_dead", defer_dead),
                            ("progress_weight", progress_weight)):
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be True or False; got {value!r}")
        self.pseudo, self.influence, self.dominance, self.isolated = pseudo, influence, dominance, isolated
        self.defer_dead, self.progress_weight = defer_dead, progress_weight
        self.deep_top = None if deep_top is None else check_int("deep_top", deep_top, 1, ValueError)
        if (isinstance(influence_covered, bool) or not isinstance(influence_covered, int | float)
                or not 0 <= influence_covered <= 1):
            raise ValueError(f"influence_covered must be a share in [0, 1]; got {influence_covered!r}")
        self.influence_covered = float(influence_covered)
        if isinstance(tie_band, bool) or not isinstance(tie_band, int | float) or not 0 <= tie_band < 1:
            raise ValueError(f"tie_band must be a number in [0, 1); got {tie_band!r}")
        self.tie_band = float(tie_band)
        if not isinstance(spread, bool):
            raise ValueError(f"spread must be True or False; got {spread!r}")
        self.spread = spread
        if interior_margin is not None and (isinstance(interior_margin, bool)
                                            or not isinstance(interior_margin, int | float)
                                            or not 0 <= interior_margin < 1):
            raise ValueError(f"interior_margin must be None or a number in [0, 1); got {interior_margin!r}")
        self.interior_margin = None if interior_margin is None else float(interior_margin)
        self.endgame_density = check_int("endgame_density", endgame_density, 0, ValueError)
        self._patterns: tuple | None = None  # (obs, its Patterns) of the position last looked at
        # The look-ahead's values are whole multiples of 2**-1074 / _scale.
        self._scale = sum(BLEND) if next_value == "blend" else 1
        self._tree: tuple | None = None  # (game, Endgame or None, layouts when it last gave up)
        self._prune = True  # False: score every candidate in full (to show them all)
        #: The :class:`SearchChoice` of the last guess this solver made.
        self.last_choice: SearchChoice | None = None

    def options(self) -> dict:
        deep = ({"deep_cells": self.deep_cells, **({"deep_top": self.deep_top} if self.deep_top else {})}
                if self.depth > 1 else {})  # they matter at depth 2 only
        return {**super().options(), "depth": self.depth, **deep, "candidates": self.candidates,
                "margin": self.margin, "interior": self.interior, "endgame": self.endgame,
                "node_limit": self.node_limit, "forced": self.forced, "tie_break": self.tie_break,
                **{k: getattr(self, k) for k, unset in self.UNSET.items()
                   if k != "deep_top" and getattr(self, k) != unset}}

    def __getstate__(self):
        state = self.__dict__.copy()
        # One game's search tree and last choice stay with the process that played it.
        state["_tree"] = state["last_choice"] = state["_patterns"] = None
        return state

    def turn(self, game, flags, rng) -> bool:
        a = self.certain_moves(game, flags)
        if isinstance(a, bool):
            return a
        choice = self.last_choice = self.choose(game.observation(flags), a, rng, game=game)
        game.reveal(*choice.cell, choice.kind, choice.probability, choice.value)
        return True

    def choose(self, obs: Observation, a: BoardAnalysis, rng, *, game=None) -> SearchChoice:
        """The guess on a position where nothing is certain (``a``: its analysis)."""
        p = a.probabilities
        if self.endgame and self._endgame_fits(a):
            found = self._endgame_move(obs, a, game)
            if found is not None:
                (i, j), wins, n = found
                return SearchChoice((i, j), "endgame", float(p[i, j]), (), wins / n, a.layouts)
        if self.isolated:
            found = self._isolated_move(obs, a)
            if found is not None:
                return found
        if self.forced:
            pair = forced_guess(obs.grid, obs.flags | a.mines)
            if pair is not None and self.pseudo:  # the better of the two by the look-ahead
                return self._pseudo_guess(obs, a, rng, list(pair))
            if pair is not None:
                i, j = pair[0]
                return SearchChoice((i, j), "forced", float(p[i, j]), (), None, a.layouts, pair[1])
        if self.pseudo:
            cells, _ = self.sweep(obs, a)
            if cells:
                return self._pseudo_guess(obs, a, rng, cells)
        return self.look_ahead(obs, a, rng)

    def _isolated_move(self, obs: Observation, a: BoardAnalysis) -> SearchChoice | None:
        """The exact best move in the smallest isolated area whose game tree the search finishes
        (:func:`~nnsweeper.engine.isolated_areas`: at most ``endgame`` layouts), or None."""
        rows, cols = obs.grid.shape
        known = (obs.flags | a.mines).ravel()
        for cells, layouts in isolated_areas(obs, limit=self.endgame):
            full = np.repeat(known[None], len(layouts), axis=0)
            full[:, cells] = layouts
            try:
                found = Endgame(full.reshape(-1, rows, cols), obs.grid, self.node_limit).best_move(obs.grid)
            except SearchBudgetExceeded:
                continue
            if found is not None:
                (i, j), wins, n = found
                return SearchChoice((i, j), "endgame", float(a.probabilities[i, j]), (), wins / n, a.layouts)
        return None

    def _endgame_fits(self, a: BoardAnalysis) -> bool:
        """Whether the exact endgame search is tried on ``a`` (``endgame``, ``endgame_density``)."""
        n = a.layouts
        if n <= self.endgame:
            return True
        if not self.endgame_density or n > 10 * self.endgame:
            return False
        covered = int(np.count_nonzero(a.unknown & ~a.mines))
        mines = a.mines_left - int(np.count_nonzero(a.mines))
        return n * (covered - mines) ** 3 <= self.endgame_density * covered**3

    def patterns(self, obs: Observation, a: BoardAnalysis) -> Patterns:
        """The 50/50 patterns of the position (:class:`~nnsweeper.solvers.fifty.Patterns`, made once
        per position: its layout counts are shared by the sweep, the influence and dominance)."""
        if self._patterns is None or self._patterns[0] is not obs:
            self._patterns = (obs, Patterns(obs, a, obs.flags | a.mines))
        return self._patterns[1]

    def sweep(self, obs: Observation, a: BoardAnalysis) -> tuple[list, dict]:
        """The pseudo 50/50 cells and the enablers' counts of the position (swept once per position)."""
        return self.patterns(obs, a).sweep(living_cells(a))

    def _pseudo_guess(self, obs: Observation, a: BoardAnalysis, rng, cells) -> SearchChoice:
        """The best-scored of the pseudo 50/50 cells (ties: the first in reading order)."""
        scored = []
        for cell in sorted(cells):
            key, progress, *_ = self._score(obs, a, cell, 1, rng, fifty=False)
            scored.append((key, progress, cell))
        scored.sort(key=lambda x: (-x[0], -x[1]))  # stable: reading order on ties
        i, j = scored[0][2]
        others = [c for _, _, c in scored[1:]]
        return SearchChoice((i, j), "forced", float(a.probabilities[i, j]), (), None, a.layouts,
                            others[0] if others else None)

    def look_ahead(self, obs: Observation, a: BoardAnalysis, rng) -> SearchChoice:
        """The look-ahead guess (step 4), when neither the endgame nor a forced guess decided."""
        cands = self.score_candidates(obs, a, rng, prune=self._prune)
        best = cands[0]
        return SearchChoice(best.cell, "look-ahead", best.probability, cands, None, a.layouts)

    # ------------------------------------------------------------------ look-ahead
    def score_candidates(self, obs: Observation, a: BoardAnalysis, rng, depth=None, *,
                         prune: bool = True, picked: np.ndarray | None = None) -> tuple[Candidate, ...]:
        """The look-ahead's candidates, best first (the first is the guess).

        With ``prune``, a candidate is dropped as soon as it cannot beat the best score
        found so far (a score is at most the candidate's chance of being safe, and the
        numbers not looked at yet add at most their share of it); the guess is the
        same, and only the candidates that could have been it are returned.
        ``picked``: the cells to score, (n, 2) (default: :meth:`candidate_cells`).
        """
        if depth is None:
            depth = self.depth if np.count_nonzero(obs.grid < 0) <= self.deep_cells else 1
        p = a.probabilities
        if picked is None:
            picked = self.candidate_cells(obs, a, rng)
        if depth > 1 and self.deep_top is not None and len(picked) > self.deep_top:
            shallow = self.score_candidates(obs, a, rng, 1, prune=False, picked=picked)
            picked = np.array([c.cell for c in shallow[: self.deep_top]], dtype=picked.dtype)
        scored, best = [], None
        # With a tie band, a candidate within it of the best is kept: the bound is the band's floor.
        floor = 1 - Fraction(self.tie_band)
        for i, j in picked.tolist():
            bound = None if not prune or best is None else best if floor == 1 else best * floor
            found = self._score(obs, a, (i, j), depth, rng, bound)
            if found is not None:
                scored.append(((i, j), *found))
                best = found[0] if best is None else max(best, found[0])
        scored.sort(key=lambda x: (-x[1], -x[2]))  # stable: earlier in tie-break order first
        if self.tie_band:
            scored = self._banded(a, picked, scored, floor)
        if self.dominance:
            scored = self._dominated(obs, a, picked, scored)
        total = a.layouts
        unit = total * _UNIT * _SLACK_DEN * self._scale  # the scores' denominator (rounded once)
        out = tuple(Candidate(cell, float(p[cell]), float(Fraction(score) / unit), progress / total,
                              tuple(c / total for c in outcomes), dead, float(Fraction(value, unit)))
                    for cell, score, progress, outcomes, dead, _, value in scored)
        if out[0].dead:  # a dead cell only when no living one is at least as safe
            if prune and len(picked) > 1:
                return self.score_candidates(obs, a, rng, depth, prune=False, picked=picked)
            k = first_living(out, range(len(out)), defer=self.defer_dead)
            out = (out[k], *(c for j, c in enumerate(out) if j != k))
        return out

    def guess_value(self, obs: Observation, a: BoardAnalysis, cell) -> float:
        """The look-ahead's value of guessing ``cell`` on a position (``a``: its analysis): the chance
        that it is safe and that the next decision is safe too (the next board worth ``next_value``),
        exactly rounded, with no weight (:attr:`Candidate.value`, for any covered cell)."""
        value = self._score(obs, a, tuple(cell), 1, None, fifty=False)[5]
        return float(Fraction(value, a.layouts * _UNIT * _SLACK_DEN * self._scale))

    def candidate_cells(self, obs: Observation, a: BoardAnalysis, rng) -> np.ndarray:
        """The cells the look-ahead scores, (n, 2): the safest first, then in ``tie_break`` order
        (with ``influence``, then the cells :meth:`_influenced_cells` adds)."""
        p = a.probabilities
        open_ = a.unknown & ~a.mines & ~obs.flags
        ranked = rank_cells(p, open_, obs.grid, rng, self.tie_break, 1e-12)
        safety = 1.0 - p[ranked[:, 0], ranked[:, 1]]
        picked = self._near_cells(obs, a, ranked, safety)
        return self._influenced_cells(obs, a, picked, ranked[0]) if self._influence_on(obs) else picked

    def _influence_on(self, obs: Observation) -> bool:
        """Whether the 50/50 influence weighs this position's candidates (``influence``,
        ``influence_covered``)."""
        if not self.influence or not self.influence_covered:
            return self.influence
        return np.count_nonzero(obs.grid < 0) >= self.influence_covered * obs.grid.size

    def _influenced_cells(self, obs: Observation, a: BoardAnalysis, picked: np.ndarray, best) -> np.ndarray:
        """``picked`` and, after them in reading order, the living cells of the board's 50/50 sweep
        whose safe layouts plus their swept count (the patterns they are a cell of, and those a mine
        there would close) are more than 0.9 times the safest cell's safe layouts."""
        patterns = self.patterns(obs, a)
        living = living_cells(a)
        swept = patterns.swept_counts(living)
        total = a.layouts
        safest = total - patterns.mine_layouts((int(best[0]), int(best[1])))
        have = {(int(i), int(j)) for i, j in picked.tolist()}
        more = [c for c, count in sorted(swept.items()) if c not in have and living[c]
                and (total - patterns.mine_layouts(c) + count) * 10 > 9 * safest]
        return np.concatenate([picked, np.array(more, dtype=picked.dtype).reshape(-1, 2)]) if more else picked

    def _near_cells(self, obs: Observation, a: BoardAnalysis, ranked, safety) -> np.ndarray:
        """The candidates by their safety: within ``margin`` of the safest (see the class)."""
        if self.spread:
            return self._spread_cells(obs, a, ranked, safety)
        near = ranked[safety >= (1.0 - self.margin) * safety[0]]
        # Interior cells are alike but for their neighbourhood: the first few in
        # tie-break order (likeliest to open an area), and the first few of those next
        # to the frontier (whose numbers may settle it), stand for them.
        inner = ~a.frontier[near[:, 0], near[:, 1]]
        touching = inner & dilate(a.frontier)[near[:, 0], near[:, 1]]
        keep = (~inner | (np.cumsum(inner) <= self.interior)
                | (touching & (np.cumsum(touching) <= self.interior)))
        picked = near[keep][: self.candidates]
        return picked if picked.size else ranked[:1]

    def _spread_cells(self, obs: Observation, a: BoardAnalysis, ranked, safety) -> np.ndarray:
        """The candidates with ``spread``: frontier cells within ``margin`` of the safest, and
        interior cells within ``interior_margin`` picked by where they lie."""
        inner = ~a.frontier[ranked[:, 0], ranked[:, 1]]
        edge = ranked[~inner & (safety >= (1.0 - self.margin) * safety[0])]
        picked = [edge]
        margin = self.margin if self.interior_margin is None else self.interior_margin
        if inner.any() and safety[inner][0] > (1.0 - margin) * safety[0]:
            cells = ranked[inner]
            if len(cells) >= 30:
                rows, cols = obs.grid.shape
                free = a.unknown & ~a.mines
                # Numbers that still have covered neighbours not known to be mines.
                living = (obs.grid >= 0) & (neighbour_sum(free) > 0)
                pad = np.zeros((rows + 4, cols + 4), dtype=bool)
                pad[2:-2, 2:-2] = living
                two_away = (pad[:-4, 2:-2] | pad[4:, 2:-2] | pad[2:-2, :-4] | pad[2:-2, 4:])
                boxed = np.isin(neighbour_sum(free), (2, 3))
                keep = (two_away | boxed)[cells[:, 0], cells[:, 1]]
                cells = cells[keep]
            picked.append(cells)
        out = np.concatenate(picked)[: self.candidates]
        return out if out.size else ranked[:1]

    def _score(self, obs: Observation, a: BoardAnalysis, cell, depth: int, rng, bound=None, *,
               fifty: bool = True):
        """(score, progress, outcomes, dead, safe after, value) of guessing ``cell``, exactly.

        ``value`` is an integer in units of ``1 / (a.layouts * _UNIT * _SLACK_DEN * _scale)``
        (see :func:`_units`), the same units for every cell of the position, so that
        values compare and sum exactly with no fraction to reduce; ``score`` is the value
        times the cell's weights (the 50/50 factor, the progress weight: then a
        :class:`~fractions.Fraction` in those units); ``progress`` and the 9 ``outcomes``
        are layout counts (shares of ``a.layouts``); ``safe after`` marks the cells proved
        safe after every number the cell can show. None when ``bound`` is given and the
        score is certain to stay below it. ``fifty=False`` leaves the 50/50 factor out.
        """
        i, j = cell
        total = a.layouts
        scale = self._scale
        full = _UNIT * scale  # the value of a board that is certain to be won
        per_layout = full * _SLACK_DEN  # a layout's share, in the score's units
        # Above the cell's chance of being safe (its probability is rounded once), by 1 / _SLACK_DEN.
        left = (_units(1.0 - float(a.probabilities[i, j])) * _SLACK_DEN + _UNIT) * total * scale
        # The progress weight 1 + progress / (1000 layouts) is at most 1.001: the bounds allow for it.
        pnum, pden = (1001, 1000) if self.progress_weight else (1, 1)
        # The 50/50 factor (S + 0.9 I) / S as fnum / fden (1 / 1 without one).
        fnum = fden = 1
        if fifty and self._influence_on(obs):
            # The factor is at most 1.9 (I <= S): count the patterns only for a cell that can still win.
            if bound is not None and left * 19 * pnum < bound * 10 * pden:
                return None
            patterns = self.patterns(obs, a)
            raw = patterns.influence(cell) + self.sweep(obs, a)[1].get(cell, 0)
            if raw:
                mines = patterns.mine_layouts(cell)
                safe = total - mines
                inf = min(raw, mines, safe)
                if safe and inf:
                    fnum, fden = 10 * safe + 9 * inf, 10 * safe
        bnum, bden = fnum * pnum, fden * pden  # the most the factors can multiply the score by
        if bound is not None and left * bnum < bound * bden:
            return None
        score = 0
        progress = 0
        counts = [0] * 9
        pending = []  # at depth 2, the outcomes after which nothing is certain
        blend = self.next_value == "blend"
        common = None
        for v, board, a2 in each_outcome(obs, cell):
            n = counts[v] = a2.layouts
            left -= n * per_layout
            certain = bool(a2.safe.any())  # the next decision is certain
            if certain:
                progress += n
            if self.dominance:
                common = a2.safe if common is None else common & a2.safe
            if depth > 1 and not certain:
                # Worth its own look-ahead's value, which is at most its best safety: that
                # stands in for it until it is known (full: nothing is left to reveal).
                value = _units(_best_safety(a2)) * scale
                if value < full:
                    pending.append((n, value, board, a2))
            elif blend:
                value = blended_value(a2)
            else:
                value = full if certain else _units(_best_safety(a2))
            score += n * value * _SLACK_DEN
            if bound is not None and (score + left) * bnum < bound * bden:
                return None
        # At depth 2 the next decision is worth its own look-ahead (its pick's value, not
        # weighted): put those values in, likeliest outcome first, while the score can
        # still reach the bound.
        pending.sort(key=lambda x: -x[0])
        for n, safety, board, a2 in pending:
            obs2 = Observation.from_checked(board.grid, obs.total_mines, obs.flags | a2.mines)
            deeper = _units(self.score_candidates(obs2, a2, rng, depth - 1)[0].value) * scale
            score -= n * (safety - min(deeper, safety)) * _SLACK_DEN
            if bound is not None and score * bnum < bound * bden:
                return None
        dead = sum(c > 0 for c in counts) == 1
        if self.progress_weight:  # the 50/50 factor times 1 + progress / (1000 layouts)
            fnum, fden = fnum * (1000 * total + progress), fden * 1000 * total
        key = score if fden == 1 else Fraction(score * fnum, fden)
        return key, progress, counts, dead, common, score

    @staticmethod
    def _banded(a: BoardAnalysis, picked, scored: list, floor: Fraction) -> list:
        """``scored`` (best first) with the pick's place taken by the first candidate in ``picked``
        order that is exactly as safe as the pick and scores at least ``floor`` times its score
        (``tie_band``); the others as they were."""
        top = scored[0]
        p = a.probabilities
        risk = p[top[0]]
        order = {(int(i), int(j)): k for k, (i, j) in enumerate(picked.tolist())}
        band = [x for x in scored if p[x[0]] == risk and x[1] >= top[1] * floor]
        first = min(band, key=lambda x: order[x[0]])
        return [first, *(x for x in scored if x is not first)]

    def _dominated(self, obs: Observation, a: BoardAnalysis, picked, scored: list) -> list:
        """``scored`` (best first) with the pick's place taken by the first candidate that is safe in
        every outcome of the pick and safer than it by more than 1e-4 (``dominance``)."""
        t = scored[0]
        if t[5] is None:
            return scored
        patterns = self.patterns(obs, a)
        total = a.layouts
        safe_t = sum(t[3])
        for i, j in picked.tolist():
            if (i, j) == t[0] or not t[5][i, j]:
                continue
            safe_e = total - patterns.mine_layouts((i, j))
            if (safe_e - safe_t) * 10_000 > total:
                found = next((x for x in scored if x[0] == (i, j)), None)
                if found is None:  # pruned: scored in full now
                    found = ((i, j), *self._score(obs, a, (i, j), 1, None))
                return [found, *(x for x in scored if x[0] != (i, j))]
        return scored

    # --------------------------------------------------------------------- endgame
    def _endgame_move(self, obs: Observation, a: BoardAnalysis, game):
        tree = self._tree
        if tree is None or tree[0] is not game or game is None:
            tree = (game, None, None)
        _, search, gave_up = tree
        if gave_up is not None and a.layouts > gave_up // 2:
            return None
        if search is None:
            search = Endgame(enumerate_layouts(obs, limit=max(self.endgame, a.layouts)), obs.grid,
                             self.node_limit)
        try:
            found = search.best_move(obs.grid)
        except SearchBudgetExceeded:
            self._tree = (game, None, a.layouts) if game is not None else None
            return None
        self._tree = (game, search, None) if game is not None else None
        return found


class DeepSearchSolver(SearchSolver):
    """:class:`SearchSolver` at ``depth=2``, registered as ``search-deep``.

    The same solver with the deeper look-ahead by default, on the two best candidates
    of the one-step look-ahead (``deep_top=2``; every candidate at depth 2 takes about 4
    times as long on expert), so that the command line can play it beside ``search``. It
    is not in ``compare``'s defaults: it takes longer, for no gain measured beyond noise.
    """

    name = "search-deep"

    def __init__(self, *, depth=2, deep_top=2, **options):
        super().__init__(depth=depth, deep_top=deep_top, **options)
