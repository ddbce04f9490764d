"""What every solver shares: the game record, the turn state, the first click, the local rules.

A solver is a picklable callable ``solver(env, rng) -> bool`` (the seed notebook's
form) that resets the environment, plays one game and reports whether it won;
:meth:`Solver.play` returns the full :class:`GameRecord`. Solvers read only what a
player sees: ``env.mask`` and, on revealed cells, ``env._counts``.

A solver is written against :class:`Turns`, one game seen from the player's side
(the visible grid, the moves so far, the engine's analysis of the position, cached),
by implementing :meth:`Solver.turn`; :meth:`Turns.observation` gives the position as
the :class:`~nnsweeper.observation.Observation` that the engine and the models read.
:meth:`Solver.play` takes an ``on_decision`` callback that receives a
:class:`Decision` (the position before it and the moves it made) after every
decision: the data generator records states through it.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np

from nnsweeper.engine import BoardAnalysis, analyze
from nnsweeper.game import Game
from nnsweeper.grid import covered_grid
from nnsweeper.observation import Observation

__all__ = ["Move", "GameRecord", "Decision", "Turns", "Solver", "local_rules", "first_click_cell",
           "GUESS_KINDS", "MOVE_KINDS", "STARTS"]

#: Why a cell was revealed: the first click, a local single-point rule, a certainty
#: from the exact engine, a guess (nothing was certain; for the pure neural solvers,
#: nothing the model rated almost surely safe), a cell a pure neural solver opened
#: because its model rated it almost surely safe (``"model"``: nothing was proved),
#: or one of the search solver's guesses: a forced guess (``"forced"``), a look-ahead
#: guess (``"look-ahead"``) or a move of its exact endgame search (``"endgame"``).
MOVE_KINDS = ("first", "local", "engine", "guess", "model", "forced", "look-ahead", "endgame")
#: The kinds that are guesses: moves made when nothing was proved safe.
GUESS_KINDS = ("guess", "forced", "look-ahead", "endgame")

#: The words ``start`` accepts besides a ``(row, col)`` cell: the centre (the seed's
#: choice), the top-left corner, or a uniformly random cell drawn from the game's ``rng``.
STARTS = ("center", "corner", "random")


@dataclass(frozen=True)
class Move:
    """One revealed cell: where, why, and its mine probability when chosen.

    ``value`` is a value network's estimate of the chance to win after the move, for
    the guesses that a value solver chose by it (None otherwise).
    """

    cell: tuple[int, int]
    kind: str
    probability: float
    value: float | None = None

    @classmethod
    def of(cls, i, j, kind: str, probability, value=None) -> Move:
        """A move from numpy or Python numbers (stored as Python ints and floats)."""
        return cls((int(i), int(j)), kind, float(probability), None if value is None else float(value))


@dataclass
class GameRecord:
    """Everything a solver did in one game.

    Attributes
    ----------
    won : bool
    moves : list of Move
        Cells the solver revealed, in order (cells opened by flood fill are not moves).
    flags : int
        Flags placed.
    cleared : float
        Share of the safe cells revealed when the game ended.
    seconds : float
        Time the game took: its wall time when played alone. For games played in
        lockstep (:meth:`NeuralSolver.play_many <nnsweeper.solvers.NeuralSolver.play_many>`)
        it is the per-game time of lockstep play: own work plus a share of each
        batched model call (a call over B boards charges each game 1/B of its time).
        Loading a model is never part of it.
    model_calls : int
        Times a neural model was asked for probabilities (0 for solvers without one).
    model_picks : int
        Cells revealed on the model's say-so.
    model_safe : int
        Of those, the cells that held no mine.
    """

    won: bool = False
    moves: list[Move] = field(default_factory=list)
    flags: int = 0
    cleared: float = 0.0
    seconds: float = 0.0
    model_calls: int = 0
    model_picks: int = 0
    model_safe: int = 0

    @property
    def guesses(self) -> int:
        """Moves that were guesses (the first click is not one)."""
        return sum(m.kind in GUESS_KINDS for m in self.moves)

    @property
    def guess_probabilities(self) -> list[float]:
        """The mine probability of every guess, in order."""
        return [m.probability for m in self.moves if m.kind in GUESS_KINDS]

    def count(self, kind: str) -> int:
        """Number of moves of one kind (see :data:`MOVE_KINDS`)."""
        return sum(m.kind == kind for m in self.moves)

    def to_dict(self) -> dict:
        return {
            "won": self.won,
            # [i, j, kind, P(mine)], and the value estimate after it where a value model chose it
            "moves": [[m.cell[0], m.cell[1], m.kind, m.probability, *(() if m.value is None else (m.value,))]
                      for m in self.moves],
            "flags": self.flags,
            "guesses": self.guesses,
            "cleared": self.cleared,
            "seconds": self.seconds,
            "model_calls": self.model_calls,
            "model_picks": self.model_picks,
            "model_safe": self.model_safe,
        }


def first_click_cell(start, rows: int, cols: int, rng=None) -> tuple[int, int]:
    """Where the first click goes: one of :data:`STARTS` or ``(row, col)``.

    ``"random"`` draws the cell from ``rng`` (one ``rng.integers(rows * cols)``);
    without an ``rng`` it only checks the word and returns the top-left cell.
    """
    if isinstance(start, str):
        if start == "center":
            return rows // 2, cols // 2
        if start == "corner":
            return 0, 0
        if start == "random":
            return (0, 0) if rng is None else divmod(int(rng.integers(rows * cols)), cols)
        raise ValueError(f"start must be 'center', 'corner', 'random' or (row, col); got {start!r}")
    try:
        i, j = start
    except (TypeError, ValueError):
        raise ValueError(f"start must be 'center', 'corner', 'random' or (row, col); got {start!r}") from None
    for name, v, hi in (("row", i, rows), ("col", j, cols)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v < hi:
            raise ValueError(
                f"start {name} must be an integer in [0, {hi}) for a {rows}x{cols} board; got {v!r}"
            )
    return int(i), int(j)


def local_rules(grid: np.ndarray, flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The single-point rules with the solver's flags as the known mines.

    A number whose flagged neighbours already account for it makes its other covered
    neighbours safe; a number whose remaining mines equal its covered unflagged
    neighbours makes them all mines.

    Returns
    -------
    safe, mines : ndarray of bool, shape (rows, cols)
    """
    from nnsweeper.engine.kernels import rules_with_flags  # compiled; loaded on first use

    return rules_with_flags(grid, flags)


@dataclass(frozen=True)
class Decision:
    """One decision of a solver, as :meth:`Solver.play` reports it to ``on_decision``.

    Attributes
    ----------
    step : int
        Decisions made before this one (the first click is not a decision).
    grid : ndarray of int8
        The visible board the decision was made on (-1 covered, 0..8 revealed).
    flags : ndarray of bool
        The solver's flags on that board.
    moves : tuple of Move
        The cells the decision revealed (none when it only placed flags).
    analysis : BoardAnalysis or None
        The exact engine's analysis of that position with those flags, when the
        solver made one for the decision (None otherwise).
    """

    step: int
    grid: np.ndarray
    flags: np.ndarray
    moves: tuple[Move, ...]
    analysis: BoardAnalysis | None

    @property
    def guessed(self) -> bool:
        """Whether the decision revealed a cell that was not proved safe."""
        return any(m.kind in GUESS_KINDS for m in self.moves)


class Solver:
    """Base class: plays one game on a seed-compatible environment.

    A subclass implements :meth:`turn`; :meth:`certain_moves` and :meth:`local_step`
    are the logic every solver may start a turn with.

    Parameters
    ----------
    start : {"center", "corner", "random"} or (row, col), default="center"
        Where the first click goes (``"random"``: a cell drawn from the game's ``rng``).
    """

    name = "solver"

    def __init__(self, *, start="center"):
        if isinstance(start, str):
            first_click_cell(start, 1, 1)  # validate the word now
        self.start = start
        self.last_record: GameRecord | None = None

    def __call__(self, env, rng) -> bool:
        return self.play(env, rng).won

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"{type(self).__name__}({opts})"

    def options(self) -> dict:
        return {"start": self.start}

    def weights(self) -> dict[str, str]:
        """The digest of every checkpoint this solver plays with, by the name its options give it.

        None for a solver of logic alone; a solver with a model says which bytes it
        plays (:func:`nnsweeper.evaluation.identity.model_weights`), so that a game
        store never mixes the games of two checkpoints saved under one path.
        """
        return {}

    def play(self, env, rng, *, on_decision=None) -> GameRecord:
        """Reset ``env``, play one game with randomness from ``rng``, return its record.

        Parameters
        ----------
        env : MinesweeperEnv or Game
            A seed-compatible environment; it is reset.
        rng : numpy.random.Generator
            The game's randomness (ties, random guesses, a random first click).
        on_decision : callable, optional
            Called as ``on_decision(decision)`` with a :class:`Decision` after every
            decision that made a move or placed a flag.
        """
        t0 = time.perf_counter()
        game, flags = self.begin(env, rng)
        while not game.done:
            before = game.position(flags) if on_decision is not None else None
            if not self.turn(game, flags, rng):
                break
            if before is not None:
                on_decision(game.decision(before))
        rec = self.end(game, flags)
        rec.seconds = time.perf_counter() - t0
        self.last_record = rec
        return rec

    def begin(self, env, rng=None) -> tuple[Turns, np.ndarray]:
        """Reset ``env`` and make the first click; returns the game and the (empty) flags.

        ``rng`` is needed only for ``start="random"``.
        """
        if self.start == "random" and rng is None:
            raise ValueError("start='random' draws the first click from the game's rng; give one")
        env.reset()
        game = Turns(env, GameRecord())
        i, j = first_click_cell(self.start, env.r, env.c, rng)
        game.reveal(i, j, "first", float(env.mines) / (env.r * env.c))
        return game, np.zeros((env.r, env.c), dtype=bool)

    @staticmethod
    def end(game: Turns, flags: np.ndarray) -> GameRecord:
        """The finished game's record: result, flags and the share of safe cells cleared."""
        env, rec = game.env, game.record
        rec.won = game.won
        rec.flags = int(flags.sum())
        rec.cleared = int(np.sum(env.mask == 0)) / (env.r * env.c - env.mines)
        return rec

    def turn(self, game: Turns, flags: np.ndarray, rng) -> bool:
        """Make at least one move (or flag); return False when nothing can be done."""
        raise NotImplementedError

    @classmethod
    def certain_moves(cls, game: Turns, flags: np.ndarray) -> bool | BoardAnalysis:
        """Make the certain moves of a turn: the local rules, else the exact engine.

        Returns True when a cell was revealed or flagged, False when no covered
        unflagged cell is left, and the engine's :class:`BoardAnalysis` (its proven
        mines already flagged) when nothing is certain and a guess is needed.
        """
        if cls.local_step(game, flags):
            return True
        if not ((game.grid < 0) & ~flags).any():
            return False
        a = game.analyze(flags)
        flags |= a.mines
        if a.safe.any():
            game.reveal_all(a.safe, "engine")
            return True
        return a

    @staticmethod
    def local_step(game: Turns, flags: np.ndarray) -> bool:
        """Apply the local rules once: flag new mines, reveal safe cells; True if either fired."""
        safe, mines = local_rules(game.grid, flags)
        flags |= mines
        if safe.any():
            game.reveal_all(safe, "local")
            return True
        return bool(mines.any())


class Turns:
    """One game seen from the player's side: the visible grid and the moves made so far.

    Parameters
    ----------
    env : MinesweeperEnv or Game
        The game being played (already reset).
    record : GameRecord
        Where the moves are written.

    Attributes
    ----------
    grid : ndarray of int8
        The visible board (-1 covered, 0..8 revealed), a new array after each reveal.
    version : int
        Bumped on every reveal; with the flags it identifies a position.
    done, won, lost : bool
    """

    def __init__(self, env, record: GameRecord):
        self.env = env
        self.record = record
        self.done = False
        self.won = False
        self.lost = False
        self.grid = covered_grid(env.mask, env._counts)
        # Bumped on every reveal; with the flags it identifies a position.
        self.version = 0
        self._decisions = 0
        self._analysis: tuple[int, bytes, BoardAnalysis] | None = None
        self._observation: tuple[int, bytes, Observation] | None = None

    def observation(self, flags: np.ndarray) -> Observation:
        """What the player sees now: the grid, the game's mine count and ``flags``.

        Checked once per position (grid version and flags) and kept: the engine and
        the models take it without checking it again.

        Raises
        ------
        InvalidBoardError, InconsistentBoardError
            Flags of another shape or on a revealed cell, or more flags than mines.
        """
        key = flags.tobytes()
        hit = self._observation
        if hit is None or hit[0] != self.version or hit[1] != key:
            hit = (self.version, key, Observation.of(self.grid, self.env.mines, flags))
            self._observation = hit
        return hit[2]

    def analyze(self, flags: np.ndarray) -> BoardAnalysis:
        """The exact engine on the current grid with ``flags``, computed once per position."""
        hit = self.cached_analysis(self.version, flags)
        if hit is None:
            hit = analyze(self.observation(flags))
            self._analysis = (self.version, flags.tobytes(), hit)
        return hit

    def cached_analysis(self, version: int, flags: np.ndarray) -> BoardAnalysis | None:
        """The last analysis, if it was of position ``version`` with these ``flags``."""
        hit = self._analysis
        if hit is not None and hit[0] == version and hit[1] == flags.tobytes():
            return hit[2]
        return None

    def position(self, flags: np.ndarray) -> tuple:
        """The current position with a copy of ``flags``, to pass to :meth:`decision` later."""
        return self.grid, flags.copy(), self.version, len(self.record.moves)

    def decision(self, before: tuple) -> Decision:
        """The :class:`Decision` made since :meth:`position` returned ``before``."""
        grid, flags, version, n_moves = before
        self._decisions += 1
        return Decision(self._decisions - 1, grid, flags, tuple(self.record.moves[n_moves:]),
                        self.cached_analysis(version, flags))

    def reveal(self, i: int, j: int, kind: str, probability: float, value: float | None = None) -> bool:
        """Reveal one covered cell; returns True when the game ended."""
        done = self._open(i, j, kind, probability, value)
        self.grid = covered_grid(self.env.mask, self.env._counts)
        return done

    def reveal_all(self, cells: np.ndarray, kind: str) -> None:
        """Reveal every still-covered cell of a boolean mask of certainly-safe cells."""
        mask = self.env.mask
        for i, j in np.argwhere(cells).tolist():
            if mask[i, j] == 1 and self._open(i, j, kind, 0.0):
                break
        self.grid = covered_grid(mask, self.env._counts)

    def _open(self, i: int, j: int, kind: str, probability: float, value: float | None = None) -> bool:
        """Reveal one cell and record the move, leaving :attr:`grid` to the caller."""
        env = self.env
        if isinstance(env, Game):
            _, done, info = env.open_cell(i, j)
        else:  # any seed-compatible environment
            _, _, done, info = env.step(env._flat(i, j))
        self.record.moves.append(Move.of(i, j, kind, probability, value))
        self.version += 1
        if done:
            self.done = True
            self.won = info.get("result") == "win"
            self.lost = not self.won
        return self.done
