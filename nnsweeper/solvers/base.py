"""What every solver shares: the game record, the first click, the local rules.

A solver is a picklable callable ``solver(env, rng) -> bool`` (the seed notebook's
form) that resets the environment, plays one game and reports whether it won;
:meth:`Solver.play` returns the full :class:`GameRecord`. Solvers read only what a
player sees: ``env.mask`` and, on revealed cells, ``env._counts``.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np

from nnsweeper.grid import covered_grid, single_point_rules
from nnsweeper.probability import BoardAnalysis, analyze

__all__ = ["Move", "GameRecord", "Solver", "local_rules", "first_click_cell", "MOVE_KINDS"]

#: Why a cell was revealed: the first click, a local single-point rule, a certainty
#: from the exact engine, a guess (nothing was certain; for the pure neural solvers,
#: nothing the model rated almost surely safe), or a cell a pure neural solver opened
#: because its model rated it almost surely safe (``"model"``: nothing was proved).
MOVE_KINDS = ("first", "local", "engine", "guess", "model")


@dataclass(frozen=True)
class Move:
    """One revealed cell: where, why, and its mine probability when chosen."""

    cell: tuple[int, int]
    kind: str
    probability: float


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
        Wall time of the game (for games played in a batch, the batch's time over
        its games).
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
        return sum(m.kind == "guess" for m in self.moves)

    @property
    def guess_probabilities(self) -> list[float]:
        """The mine probability of every guess, in order."""
        return [m.probability for m in self.moves if m.kind == "guess"]

    def count(self, kind: str) -> int:
        """Number of moves of one kind (see :data:`MOVE_KINDS`)."""
        return sum(m.kind == kind for m in self.moves)

    def to_dict(self) -> dict:
        return {
            "won": self.won,
            "moves": [[m.cell[0], m.cell[1], m.kind, m.probability] for m in self.moves],
            "flags": self.flags,
            "guesses": self.guesses,
            "cleared": self.cleared,
            "seconds": self.seconds,
            "model_calls": self.model_calls,
            "model_picks": self.model_picks,
            "model_safe": self.model_safe,
        }


def first_click_cell(start, rows: int, cols: int) -> tuple[int, int]:
    """Where the first click goes: ``"center"`` (the seed's choice), ``"corner"`` or ``(row, col)``."""
    if isinstance(start, str):
        if start == "center":
            return rows // 2, cols // 2
        if start == "corner":
            return 0, 0
        raise ValueError(f"start must be 'center', 'corner' or (row, col); got {start!r}")
    try:
        i, j = start
    except (TypeError, ValueError):
        raise ValueError(f"start must be 'center', 'corner' or (row, col); got {start!r}") from None
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
    _, _, safe, mines = single_point_rules(grid, flags, (grid < 0) & ~flags)
    return safe, mines


class Solver:
    """Base class: plays one game on a seed-compatible environment.

    Parameters
    ----------
    start : {"center", "corner"} or (row, col), default="center"
        Where the first click goes.
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

    def play(self, env, rng) -> GameRecord:
        """Reset ``env``, play one game with randomness from ``rng``, return its record."""
        t0 = time.perf_counter()
        game, flags = self.begin(env)
        while not game.done:
            if not self.turn(game, flags, rng):
                break
        rec = self.end(game, flags)
        rec.seconds = time.perf_counter() - t0
        self.last_record = rec
        return rec

    def begin(self, env) -> tuple[_Turns, np.ndarray]:
        """Reset ``env`` and make the first click; returns the game and the (empty) flags."""
        env.reset()
        game = _Turns(env, GameRecord())
        i, j = first_click_cell(self.start, env.r, env.c)
        game.reveal(i, j, "first", float(env.mines) / (env.r * env.c))
        return game, np.zeros((env.r, env.c), dtype=bool)

    @staticmethod
    def end(game: _Turns, flags: np.ndarray) -> GameRecord:
        """The finished game's record: result, flags and the share of safe cells cleared."""
        env, rec = game.env, game.record
        rec.won = game.won
        rec.flags = int(flags.sum())
        rec.cleared = int(np.sum(env.mask == 0)) / (env.r * env.c - env.mines)
        return rec

    def turn(self, game: _Turns, flags: np.ndarray, rng) -> bool:
        """Make at least one move (or flag); return False when nothing can be done."""
        raise NotImplementedError

    @classmethod
    def certain_moves(cls, game: _Turns, flags: np.ndarray) -> bool | BoardAnalysis:
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
    def local_step(game: _Turns, flags: np.ndarray) -> bool:
        """Apply the local rules once: flag new mines, reveal safe cells; True if either fired."""
        safe, mines = local_rules(game.grid, flags)
        flags |= mines
        if safe.any():
            game.reveal_all(safe, "local")
            return True
        return bool(mines.any())


class _Turns:
    """The solver's side of one game: the visible grid and the moves made so far."""

    def __init__(self, env, record: GameRecord):
        self.env = env
        self.record = record
        self.done = False
        self.won = False
        self.lost = False
        self.grid = covered_grid(env.mask, env._counts)
        # Bumped on every reveal; with the flags it identifies a position.
        self.version = 0
        self._analysis: tuple[int, bytes, BoardAnalysis] | None = None

    def analyze(self, flags: np.ndarray) -> BoardAnalysis:
        """The exact engine on the current grid with ``flags``, computed once per position."""
        hit = self.cached_analysis(self.version, flags)
        if hit is None:
            hit = analyze(self.grid, self.env.mines, flags)
            self._analysis = (self.version, flags.tobytes(), hit)
        return hit

    def cached_analysis(self, version: int, flags: np.ndarray) -> BoardAnalysis | None:
        """The last analysis, if it was of position ``version`` with these ``flags``."""
        hit = self._analysis
        if hit is not None and hit[0] == version and hit[1] == flags.tobytes():
            return hit[2]
        return None

    def reveal(self, i: int, j: int, kind: str, probability: float) -> bool:
        """Reveal one covered cell; returns True when the game ended."""
        env = self.env
        _, _, done, info = env.step(env._flat(i, j))
        self.record.moves.append(Move((int(i), int(j)), kind, float(probability)))
        self.grid = covered_grid(env.mask, env._counts)
        self.version += 1
        if done:
            self.done = True
            self.won = info.get("result") == "win"
            self.lost = not self.won
        return self.done

    def reveal_all(self, cells: np.ndarray, kind: str) -> None:
        """Reveal every still-covered cell of a boolean mask of certainly-safe cells."""
        for i, j in np.argwhere(cells):
            if self.env.mask[i, j] == 1 and self.reveal(i, j, kind, 0.0):
                return
