"""The move a solver would make on a typed position, and why.

A solver plays a game on an environment; a position typed as text has no hidden
board behind it. :func:`suggest_move` runs one turn of a solver on such a position
anyway: the solver sees it through :class:`PositionEnv`, which holds only what a
player sees (the covered cells, the numbers, the mine count), and the first cell it
reveals ends the turn and becomes the :class:`Suggestion`. Flags the solver places
on the way are kept in the suggestion. Neural solvers are asked their model's
probabilities as in a game (:class:`~nnsweeper.solvers.neural.NeuralSolver`).

On a board where nothing is revealed yet the move is the solver's first click (its
``start``). Every suggestion carries the exact engine's P(mine) of its cell beside
the probability the solver itself went by, and a reason in words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nnsweeper.engine import MAX_STATES, BoardAnalysis, analyze
from nnsweeper.errors import EngineLimitError, InvalidBoardError, NnsweeperError, check_rng
from nnsweeper.grid import neighbours
from nnsweeper.observation import Observation
from nnsweeper.solvers.base import GUESS_KINDS, GameRecord, Move, Solver, Turns, first_click_cell
from nnsweeper.solvers.neural import NeuralSolver, pool_interior
from nnsweeper.solvers.search import SearchSolver
from nnsweeper.solvers.single_point import SinglePointSolver

__all__ = ["PositionEnv", "Suggestion", "format_suggestions", "load_solvers", "suggest_move"]

# How tie-breaks read in a reason.
_TIE_WORDS = {
    "prob_zero": "ties broken by chance of a zero",
    "random": "ties broken at random",
    "fewest_covered_neighbours": "ties broken by fewest covered neighbours",
    "most_revealed_neighbours": "ties broken by most revealed neighbours",
    "fewest_board_neighbours": "ties broken by corners, then edges",
    "fewest_covered_prob_zero": "ties broken by fewest covered neighbours, then chance of a zero",
}


@dataclass(frozen=True)
class Suggestion:
    """The next move of a solver on a position, and why.

    Attributes
    ----------
    solver : str
        The solver's name (its registry name).
    cell : (int, int)
        ``(row, col)`` of the cell it would reveal, both from 0.
    kind : str
        Why, as a :data:`~nnsweeper.solvers.base.MOVE_KINDS` word: ``"first"`` (the
        first click), ``"local"`` (a single-point rule), ``"engine"`` (proven safe by
        the exact engine), ``"guess"``, or ``"model"`` (the model rates it almost
        surely safe; nothing was proved).
    probability : float
        The P(mine) the solver recorded for the move, as in its
        :class:`~nnsweeper.solvers.base.Move`: the board's mine density for a first
        click, NaN for a single-point guess (which computes none). NaN is unequal to
        itself, so compare such suggestions field by field.
    exact_probability : float or None
        The exact engine's P(mine) of the cell (None when the engine could not
        analyse the position within its bound).
    model_probability : float or None
        The model's P(mine) of the cell, for a neural solver that asked its model.
    flags : tuple of (int, int)
        Cells the solver flagged before the move (the board's own flags aside).
    reason : str
        The reason in words, e.g. ``"proven safe by the engine (P(mine) = 0 in every
        consistent layout)"``.
    candidates : tuple of Candidate
        For the search solver's look-ahead guess: every cell it scored, best first
        (:class:`~nnsweeper.solvers.search.Candidate`: P(mine), the score, progress,
        whether the cell is dead).
    """

    solver: str
    cell: tuple[int, int]
    kind: str
    probability: float
    exact_probability: float | None
    model_probability: float | None
    flags: tuple[tuple[int, int], ...]
    reason: str
    candidates: tuple = ()

    @property
    def move(self) -> Move:
        """The suggestion as the :class:`~nnsweeper.solvers.base.Move` a game would record."""
        return Move(self.cell, self.kind, self.probability)

    def __str__(self) -> str:
        return f"{self.solver}: ({self.cell[0]}, {self.cell[1]}) {self.reason}"


class PositionEnv:
    """A position as a solver's environment: what the player sees, no hidden board.

    It has what :class:`~nnsweeper.solvers.base.Turns` and the solvers read (``r``,
    ``c``, ``mines``, ``mask``, ``_counts`` on revealed cells, ``_flat``) and no mine
    layout at all. Revealing a cell (:meth:`step`) cannot be answered, so it stops
    the turn: :func:`suggest_move` catches that and reports the cell.

    Parameters
    ----------
    observation : Observation
        The position.

    Attributes
    ----------
    r, c : int
        Rows and columns.
    mines : int
        Mines on the board, flagged ones included.
    mask : ndarray of int8, read-only
        1 covered, 0 revealed.
    """

    def __init__(self, observation: Observation):
        grid = observation.grid
        self.r, self.c = grid.shape
        self.mines = observation.total_mines
        self.mask = (grid < 0).astype(np.int8)
        # The numbers of revealed cells; covered cells hold 0, not what lies beneath.
        self._counts = np.where(grid < 0, 0, grid).astype(np.int8)
        self.mask.flags.writeable = False
        self._counts.flags.writeable = False

    def _flat(self, i: int, j: int) -> int:
        return int(i) * self.c + int(j)

    def reset(self):
        """Refused: a typed position cannot be dealt again."""
        raise NnsweeperError("a typed position has no game to reset; suggest_move plays one turn on it")

    def step(self, action: int):
        """Reveal a cell: stops the turn, the cell being the move (nothing lies beneath)."""
        raise _Revealed(Move(divmod(int(action), self.c), "guess", float("nan")))


class _Revealed(Exception):
    """A solver revealed a cell: the move, which ends the turn."""

    def __init__(self, move: Move):
        super().__init__(move)
        self.move = move


class _PositionTurns(Turns):
    """Turns on a :class:`PositionEnv`: the first reveal stops the turn, with its kind.

    The engine runs with the caller's ``max_states`` and the analysis of the board as
    given is reused.
    """

    def __init__(self, env: PositionEnv, analysis: BoardAnalysis | None, flags: np.ndarray,
                 max_states: int):
        super().__init__(env, GameRecord())
        self._max_states = max_states
        self._by_flags = {} if analysis is None else {flags.tobytes(): analysis}

    def analyze(self, flags: np.ndarray) -> BoardAnalysis:
        key = flags.tobytes()
        if key not in self._by_flags:
            self._by_flags[key] = analyze(self.observation(flags), max_states=self._max_states)
        return self._by_flags[key]

    def _open(self, i: int, j: int, kind: str, probability: float, value: float | None = None) -> bool:
        raise _Revealed(Move.of(i, j, kind, probability, value))


def suggest_move(solver, observation, rng=None, *, analysis: BoardAnalysis | None = None,
                 max_states: int = MAX_STATES) -> Suggestion | None:
    """The cell a solver would reveal next on a position, and why.

    The solver plays one turn on the position (see :class:`PositionEnv`: it reads
    only what a player sees) with the board's flags as its own; the first cell it
    reveals is the move. Flags it places first are reported with it.

    Parameters
    ----------
    solver : Solver or str
        A :class:`~nnsweeper.solvers.base.Solver` (neural solvers included) or a
        registered name (:func:`~nnsweeper.solvers.get_solver` with its defaults).
    observation : Observation
        The position (e.g. :func:`~nnsweeper.boardtext.parse_observation`).
    rng : numpy.random.Generator or int, optional
        The solver's randomness (ties, random guesses, a random first click), or a
        seed for one. None is seed 0: the same position and solver always give the
        same suggestion.
    analysis : BoardAnalysis, optional
        The engine's analysis of ``observation`` (with its flags) when there is one
        already; it is computed otherwise.
    max_states : int, default MAX_STATES
        The engine's bound (see :func:`nnsweeper.analyze`).

    Returns
    -------
    Suggestion or None
        None when there is nothing to reveal (every covered cell is flagged).

    Raises
    ------
    InvalidBoardError, InconsistentBoardError
        An ``observation`` that is no Observation, or a board no layout fits.
    EngineLimitError
        A solver that needs the engine on a position beyond ``max_states``.
    ValueError
        An unknown solver name, a solver that is no :class:`Solver`, or a bad ``rng``.
    """
    solver = _as_solver(solver)
    if not isinstance(observation, Observation):
        raise InvalidBoardError(
            "observation must be an Observation, such as parse_observation(text, total_mines) or "
            f"Observation.of(grid, total_mines, flags); got {type(observation).__name__}"
        )
    obs = observation
    rng = check_rng(rng, default_seed=0)
    name = str(getattr(solver, "name", type(solver).__name__))
    if analysis is None:
        try:
            analysis = analyze(obs, max_states=max_states)
        except EngineLimitError:
            analysis = None  # the solver may not need it; exact probabilities are left out
    elif analysis.probabilities.shape != obs.shape:
        raise InvalidBoardError(f"analysis must be of the observation's board, of shape {obs.shape}; "
                                f"got one of shape {analysis.probabilities.shape}")
    unknown = obs.grid < 0
    unknown &= ~obs.flags
    if not unknown.any():
        return None

    if not (obs.grid >= 0).any():
        i, j = first_click_cell(solver.start, obs.shape[0], obs.shape[1], rng)
        if unknown[i, j]:
            exact = None if analysis is None else float(analysis.probabilities[i, j])
            start = solver.start if isinstance(solver.start, str) else "(row, col)"
            # As Solver.begin records a first click: the mine density of the board.
            density = obs.total_mines / obs.grid.size
            return Suggestion(name, (i, j), "first", density, exact, None, (),
                              f"first click: the solver's start cell ({start}); nothing is revealed yet")

    env = PositionEnv(obs)
    flags = np.array(obs.flags, dtype=bool)
    game = _PositionTurns(env, analysis, flags, max_states)
    answers: list[np.ndarray] = []  # the model's answers, as the solver ranked them
    move = None
    searching = isinstance(solver, SearchSolver)
    if searching:  # every candidate scored in full, to be shown (the choice is the same)
        solver._prune, solver.last_choice = False, None
    try:
        # A turn that only flags is followed by another; each one flags a new cell at least.
        for _ in range(obs.grid.size + 1):
            try:
                went_on = _one_turn(solver, game, flags, rng, answers)
            except _Revealed as revealed:
                move = revealed.move
                break
            if not went_on:
                return None
    finally:
        if searching:
            solver._prune = True
    if move is None:
        raise RuntimeError(f"solver {name!r} neither revealed a cell nor stopped on this position")

    i, j = move.cell
    exact = None if analysis is None else float(analysis.probabilities[i, j])
    seen = answers[-1] if answers else None
    model_p = None if seen is None else float(seen[i, j])
    placed = tuple((int(x), int(y)) for x, y in np.argwhere(flags & ~obs.flags))
    reason = _reason(solver, move, exact, seen, obs, flags, analysis)
    choice = solver.last_choice if searching and move.kind in GUESS_KINDS else None
    return Suggestion(name, (int(i), int(j)), move.kind, move.probability, exact, model_p, placed, reason,
                      choice.candidates if choice is not None else ())


def load_solvers(names=None) -> tuple[list[Solver], list[str]]:
    """Solvers to ask for a move, by name, with their models loaded.

    Parameters
    ----------
    names : sequence of str, optional
        Registered solver names. None: every solver ``compare`` plays by default
        (:func:`~nnsweeper.solvers.compare_solvers`), the neural ones only when their
        models load.

    Returns
    -------
    solvers : list of Solver
        In the order asked (registration order by default).
    skipped : list of str
        With ``names`` None: a note for each neural solver whose model did not load.

    Raises
    ------
    ValueError
        An unknown name, or a named solver whose model does not load.
    """
    from nnsweeper.solvers import compare_solvers, get_solver

    chosen = compare_solvers() if names is None else list(names)
    solvers, skipped = [], []
    for name in chosen:
        solver = get_solver(name)
        if isinstance(solver, NeuralSolver):
            try:
                solver.model  # noqa: B018 (loads it)
            except (ImportError, OSError, RuntimeError, ValueError) as exc:
                if names is not None:
                    raise ValueError(f"solver {name!r} needs its model, which did not load: {exc}") from None
                skipped.append(f"{name}: not asked, its model did not load ({' '.join(str(exc).split())})")
                continue
        solvers.append(solver)
    return solvers, skipped


def format_suggestions(suggestions) -> str:
    """One line per suggestion: the solver, the cell ``(row, col)`` and the reason.

    Parameters
    ----------
    suggestions : sequence of (str, Suggestion or None)
        Solver names and their suggestions (None: nothing left to reveal).

    Returns
    -------
    str
        Aligned lines, without a final newline; flags a solver placed before its
        move are named after the reason.
    """
    suggestions = list(suggestions)
    if not suggestions:
        return ""
    width = max(len(name) for name, _ in suggestions)
    cells = [("-" if s is None else f"({s.cell[0]}, {s.cell[1]})") for _, s in suggestions]
    cell_width = max(len(c) for c in cells)
    lines = []
    for (name, s), cell in zip(suggestions, cells, strict=True):
        if s is None:
            reason = "nothing to reveal: every covered cell is flagged"
        else:
            reason = s.reason
            if s.flags:
                reason += "; after flagging " + ", ".join(f"({x}, {y})" for x, y in s.flags)
        lines.append(f"  {name.ljust(width)}  {cell.ljust(cell_width)}  {reason}")
        if s is not None and s.candidates:
            lines.extend(_candidate_lines(s.candidates, " " * (width + 4)))
    return "\n".join(lines)


def _candidate_lines(candidates, indent: str) -> list[str]:
    """The search solver's look-ahead candidates as an aligned table, best first."""
    rows = [("cell", "P(mine)", "P(survive 2)", "P(progress)", "")]
    for c in candidates:
        rows.append((f"({c.cell[0]}, {c.cell[1]})", f"{c.probability:.4f}", f"{c.score:.4f}",
                     f"{c.progress:.4f}", "dead: shows one number in every layout" if c.dead else ""))
    widths = [max(len(r[k]) for r in rows) for k in range(4)]
    out = []
    for r in rows:
        text = "  ".join(r[k].ljust(widths[k]) if k == 0 else r[k].rjust(widths[k]) for k in range(4))
        out.append(f"{indent}{text}  {r[4]}".rstrip())
    return out


def _as_solver(solver) -> Solver:
    if isinstance(solver, str):
        from nnsweeper.solvers import get_solver

        solver = get_solver(solver)
    if not isinstance(solver, Solver):
        raise ValueError(
            "solver must be a Solver or a registered solver name, such as 'csp' or get_solver('csp'); "
            f"got {type(solver).__name__}"
        )
    if not isinstance(solver, NeuralSolver) and type(solver).turn is Solver.turn:
        raise ValueError(f"solver {type(solver).__name__} plays no turns (it implements no turn()); "
                         "suggest_move needs a Solver subclass with one")
    return solver


def _one_turn(solver: Solver, game: Turns, flags: np.ndarray, rng, answers: list) -> bool:
    """One turn of ``solver``; a neural solver's model is asked as in a game."""
    if not isinstance(solver, NeuralSolver):
        return solver.turn(game, flags, rng)
    turn = solver.turn_steps(game, flags, rng)
    answer = None
    while True:
        try:
            request = turn.send(answer)
        except StopIteration as stop:
            return stop.value
        answer = solver.predict_requests([request])[0]
        # What the solver ranks by: the model's answer, interior cells pooled.
        seen = np.array(answer, dtype=float)
        if solver.pool_interior:
            seen = pool_interior(seen, request.grid, request.flags)
        answers.append(seen)


def _p(p: float) -> str:
    return f"{p:.4g}"


def _tied(p: np.ndarray, cells: np.ndarray, value: float, tolerance: float) -> int:
    """How many of ``cells`` share ``value``'s level of ``p`` (levels ``tolerance`` wide)."""
    if tolerance > 0:
        return int(np.sum(np.floor(p[cells] / tolerance) == math.floor(value / tolerance)))
    return int(np.sum(p[cells] == value))


def _ties(solver, tied: int | None) -> str:
    """``", shared by 3 cells, ties broken by ..."``, or nothing when one cell is lowest."""
    if tied is not None and tied < 2:
        return ""
    words = _TIE_WORDS.get(solver.tie_break, f"ties broken by {solver.tie_break}")
    return f", {words}" if tied is None else f" (shared by {tied} cells), {words}"


def _search_reason(choice) -> str:
    """Why the search solver guessed, from its :class:`~nnsweeper.solvers.search.SearchChoice`."""
    p = _p(choice.probability)
    if choice.kind == "endgame":
        return (f"endgame search over all {choice.layouts:,} consistent layouts: best play from here wins "
                f"with P = {_p(choice.win_probability)}; P(mine) = {p}")
    if choice.kind == "forced":
        x, y = choice.partner
        return (f"forced guess: one mine between this cell and ({x}, {y}), which no other cell can ever "
                f"tell apart; P(mine) = {p}")
    best = choice.candidates[0]
    return (f"look-ahead guess: P(mine) = {p}, P(it and the next decision are safe) = {_p(best.score)}, "
            f"best of {len(choice.candidates)} candidates:")


def _reason(solver: Solver, move: Move, exact, seen, obs: Observation, flags, analysis) -> str:
    """Why the solver made ``move``, in words (``seen``: the model's last answer, if any)."""
    i, j = move.cell
    exact_text = "" if exact is None else f" (exact P(mine) = {_p(exact)})"
    if move.kind == "local":
        rows, cols = obs.shape
        for x, y in neighbours(i, j, rows, cols):
            n = int(obs.grid[x, y])
            if n < 0:
                continue
            around = neighbours(x, y, rows, cols)
            marked = [(u, v) for u, v in around if flags[u, v]]
            if n == 0:
                return f"local rule (single point): the 0 at ({x}, {y}) has no mine around it"
            if len(marked) == n:
                # The player's flags, or mines the rule itself proved (the board may hold no flag).
                how = ("flagged already" if all(obs.flags[c] for c in marked)
                       else "found already (proved by the numbers)")
                return (f"local rule (single point): the {n} at ({x}, {y}) has its "
                        f"{n} {'mine' if n == 1 else 'mines'} {how}")
        return "local rule (single point)"
    if move.kind == "engine":
        return "proven safe by the engine: no consistent layout has a mine there"
    if move.kind == "model":
        model_p = move.probability if seen is None else float(seen[i, j])
        return (f"model's P(mine) = {_p(model_p)} is below open_below = {_p(solver.open_below)}: "
                f"opened without proof{exact_text}")
    if isinstance(solver, SearchSolver) and solver.last_choice is not None:
        return _search_reason(solver.last_choice)
    if move.kind != "guess":
        return f"{move.kind} move, P(mine) = {_p(move.probability)}{exact_text}"
    if isinstance(solver, NeuralSolver):
        if seen is None:
            return f"guess: the model's safest cell{exact_text}"
        first = "nothing is proven; " if solver.hybrid else ""
        candidates = (obs.grid < 0) & ~flags
        tied = _tied(seen, candidates, float(seen[i, j]), solver.tolerance)
        return f"guess: {first}the model's lowest P(mine) = {_p(seen[i, j])}{_ties(solver, tied)}{exact_text}"
    if isinstance(solver, SinglePointSolver):
        near = bool((obs.grid[max(i - 1, 0):i + 2, max(j - 1, 0):j + 2] > 0).any())
        where = " next to a number" if near else ""
        text = (f"guess: no local rule applies, so a random covered cell{where}; "
                "the solver computes no probabilities")
        # The guessed cell's exact risk, said of that cell before any note on other cells.
        if exact is not None:
            proven = {0.0: ", proven safe", 1.0: ", a proven mine"}
            text += f"; the exact P(mine) of ({i}, {j}) = {_p(exact)}{proven.get(float(exact), '')}"
        if analysis is not None and analysis.safe.any():
            n = int(analysis.safe.sum())
            text += f"; the engine proves {n} {'cell' if n == 1 else 'cells'} safe that local rules miss"
        return text
    if getattr(solver, "tie_break", None) is not None and not math.isnan(move.probability):
        p = move.probability
        if getattr(solver, "lookahead", 0):
            return f"guess: P(mine) = {_p(p)}, chosen by a one-move look-ahead among the safest cells"
        tied = None
        if analysis is not None:
            tied = _tied(analysis.probabilities, analysis.unknown & ~flags, p,
                         getattr(solver, "tolerance", 0.0))
        return f"guess: lowest P(mine) = {_p(p)}{_ties(solver, tied)}"
    return f"guess: P(mine) = {_p(move.probability)}{exact_text}"
