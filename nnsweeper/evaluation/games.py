"""Playing the games of an evaluation, and their results.

:func:`play_games` plays one solver on one :class:`Board` for a run of seeds (a
chunk of an evaluation) and returns a :class:`GameResults`: one numpy array per
figure, one entry per game, in seed order.

A solver's one-time set-up (a neural solver loading its model, torch imports
included) is done before any game's clock starts, by the solver's ``prepare()``
(:func:`prepare_solver`), and reported apart from the games' times
(:attr:`GameResults.setup_seconds`). Worker processes do it as they start
(:class:`SolverSetup`), before they take a task. The game engine's own first-use
imports are done before the first clock too (one throwaway move per process).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from nnsweeper.errors import check_int
from nnsweeper.game import MinesweeperEnv

__all__ = ["Board", "GameResults", "SolverSetup", "play_games", "play_lockstep", "prepare_solver"]


@dataclass(frozen=True)
class Board:
    """One evaluation configuration: a board size and a mine count.

    Parameters
    ----------
    name : str
        Preset name (``"beginner"``) or ``"RxC"``.
    rows, cols, mines : int
        Board size and mine count, legal for the games' first-click rule.
    """

    name: str
    rows: int
    cols: int
    mines: int


@dataclass(frozen=True, eq=False)
class GameResults:
    """Results of a run of games, one array per figure and one entry per game, in seed order.

    Parameters
    ----------
    won : ndarray of bool
        Whether each game was won.
    guesses : ndarray of float64
        Guesses per game, first click excluded; NaN for solvers without ``play``.
    cleared : ndarray of float64
        Share of the safe cells revealed when the game ended.
    seconds : ndarray of float64
        Time the game took, set-up excluded; for games played in lockstep, the
        per-game time of lockstep play: own work plus a share of each batched model
        call (see :meth:`~nnsweeper.solvers.NeuralSolver.play_many`).
    model_calls, model_picks, model_safe : ndarray of int32
        Times a neural model was asked, cells opened on its say-so, and those of them
        that were safe; 0 for solvers without a model.
    setup_seconds : float, default 0.0
        Seconds of one-time set-up (loading a model, its imports included) that the
        processes which played these games spent for the solver and reported with
        them (:func:`prepare_solver`); in none of the games' ``seconds``. A process
        reports its set-up with the first games it plays, so runs played later in
        the same process report 0.

    Notes
    -----
    The arrays hold 37 bytes a game. They are numpy arrays, hence writable:
    :meth:`put` fills a run made by :meth:`empty` chunk by chunk (``setup_seconds``
    is not written by it).
    """

    won: np.ndarray
    guesses: np.ndarray
    cleared: np.ndarray
    seconds: np.ndarray
    model_calls: np.ndarray
    model_picks: np.ndarray
    model_safe: np.ndarray
    setup_seconds: float = 0.0

    #: Field names with their dtypes, in order.
    FIELDS: ClassVar[tuple[tuple[str, type], ...]] = (
        ("won", np.bool_), ("guesses", np.float64), ("cleared", np.float64), ("seconds", np.float64),
        ("model_calls", np.int32), ("model_picks", np.int32), ("model_safe", np.int32),
    )

    def __post_init__(self):
        games = None
        for name, dtype in self.FIELDS:
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype != dtype:
                got = (f"an array of {a.dtype} with shape {a.shape}" if isinstance(a, np.ndarray)
                       else type(a).__name__)
                raise ValueError(f"{name} must be a 1-D numpy array of {np.dtype(dtype).name}; got {got}")
            if games is None:
                games = len(a)
            elif len(a) != games:
                raise ValueError(f"every field must hold one entry per game: won holds {games}, "
                                 f"{name} holds {len(a)}")
        setup = self.setup_seconds
        if (isinstance(setup, bool) or not isinstance(setup, numbers.Real) or math.isnan(setup)
                or setup < 0):
            raise ValueError(f"setup_seconds must be a non-negative number; got {setup!r}")
        object.__setattr__(self, "setup_seconds", float(setup))

    @classmethod
    def empty(cls, games: int) -> GameResults:
        """Results of ``games`` games, every entry zero, to be filled with :meth:`put` or :meth:`set_game`."""
        games = check_int("games", games, 0)
        return cls(*(np.zeros(games, dtype=dtype) for _, dtype in cls.FIELDS))

    @classmethod
    def concatenate(cls, parts: Iterable[GameResults]) -> GameResults:
        """The results of consecutive runs of games, one after the other (their set-up times added)."""
        parts = list(parts)
        bad = [type(p).__name__ for p in parts if not isinstance(p, GameResults)]
        if bad:
            raise TypeError(f"parts must be GameResults; got {bad[0]}")
        return cls(*(np.concatenate([getattr(p, name) for p in parts]) if parts else np.zeros(0, dtype)
                     for name, dtype in cls.FIELDS),
                   setup_seconds=sum(p.setup_seconds for p in parts))

    def __len__(self) -> int:
        return len(self.won)

    def __repr__(self) -> str:
        return f"GameResults({len(self)} games, {int(self.won.sum())} won)"

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return sum(getattr(self, name).nbytes for name, _ in self.FIELDS)

    def put(self, start: int, part: GameResults) -> None:
        """Write ``part`` over games ``start`` to ``start + len(part)``, in place."""
        if not isinstance(part, GameResults):
            raise TypeError(f"part must be GameResults; got {type(part).__name__}")
        start = check_int("start", start, 0)
        if start + len(part) > len(self):
            raise ValueError(f"a part of {len(part)} games from game {start} must end within the "
                             f"{len(self)} games; got start {start}")
        for name, _ in self.FIELDS:
            getattr(self, name)[start:start + len(part)] = getattr(part, name)

    def set_game(self, k: int, won: bool, guesses: float, cleared: float, seconds: float,
            model_calls: int = 0, model_picks: int = 0, model_safe: int = 0) -> None:
        """Write the result of game ``k``, in place."""
        self.won[k], self.guesses[k], self.cleared[k], self.seconds[k] = won, guesses, cleared, seconds
        self.model_calls[k], self.model_picks[k], self.model_safe[k] = model_calls, model_picks, model_safe


def batched(solver) -> bool:
    """Whether a solver plays many games in lockstep (``play_many(envs, rngs)``)."""
    return callable(getattr(solver, "play_many", None))


#: Whether this process has made the throwaway move of :func:`_ready_engine`.
_ENGINE_READY = False


def _ready_engine() -> None:
    """Make one throwaway move, once per process, before any game's clock starts.

    The engine imports what it needs on its first move (about a third of a second),
    and its compiled loops are loaded on their first call (as long again), which would
    otherwise land in the time of the first game a process plays.
    """
    global _ENGINE_READY
    if not _ENGINE_READY:
        env = MinesweeperEnv(rows=2, cols=2, mines=1, seed=0, first_click="safe")
        env.reset()
        env.step(0)
        from nnsweeper.engine import analyze
        from nnsweeper.solvers.base import local_rules

        grid = np.array([[1, -1, -1], [1, -1, -1]], dtype=np.int8)
        local_rules(grid, np.zeros(grid.shape, dtype=bool))
        analyze(grid, 2)
        _ENGINE_READY = True


#: Seconds of set-up that :class:`SolverSetup` spent in this process, per solver
#: (:func:`_setup_key`), that no :func:`prepare_solver` has reported yet.
_SET_UP_AT_START: dict[tuple, float] = {}


def _setup_key(solver) -> tuple:
    """What tells a solver's set-up from another's: its type and how it prints."""
    return (type(solver).__module__, type(solver).__qualname__, repr(solver))


def prepare_solver(solver) -> float:
    """Do a solver's one-time set-up in this process; the seconds of set-up to report.

    Solvers with a ``prepare()`` method (the neural solvers: loading the model) have
    it called; it returns the seconds of set-up this process spent for the solver
    and did not report yet (a model loaded earlier in the process included), or
    None for the time the call took. Set-up that :class:`SolverSetup` did when this
    worker process started is added, once. Other solvers need no set-up: 0.0.
    """
    prepare = getattr(solver, "prepare", None)
    if not callable(prepare):
        return 0.0
    t0 = time.perf_counter()
    reported = prepare()
    seconds = time.perf_counter() - t0 if reported is None else float(reported)
    if _SET_UP_AT_START:
        seconds += _SET_UP_AT_START.pop(_setup_key(solver), 0.0)
    return seconds


class SolverSetup:
    """The set-up of a run's solvers, done in each worker process as it starts.

    Called once in every new worker process before it takes a task (the initializer
    of :func:`nnsweeper.parallel.imap`'s workers), it runs ``prepare()`` of every
    solver that has one, so that a worker loads each model (and imports torch) once,
    before it plays. The time is kept and reported later, with the worker's first
    :func:`play_games` of each solver (:func:`prepare_solver`).

    Parameters
    ----------
    solvers : iterable
        The run's solvers; those without a ``prepare()`` method are left out.

    Notes
    -----
    An error is not raised here (a worker whose initializer fails breaks the whole
    pool with no useful message): the first game's own ``prepare()`` raises it where
    the caller sees it. Two set-ups are equal when they hold solvers of the same
    types that print the same, so a later run with such solvers reuses the workers
    (and the models they loaded).
    """

    def __init__(self, solvers: Iterable):
        self.solvers = tuple(s for s in solvers if callable(getattr(s, "prepare", None)))

    def __bool__(self) -> bool:
        return bool(self.solvers)

    def _key(self) -> tuple:
        return tuple(_setup_key(s) for s in self.solvers)

    def __eq__(self, other) -> bool:
        return isinstance(other, SolverSetup) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"SolverSetup({', '.join(repr(s) for s in self.solvers)})"

    def __call__(self) -> None:
        _ready_engine()
        for solver in self.solvers:
            try:
                seconds = prepare_solver(solver)
            except Exception:  # raised again by the first game's prepare(), see Notes
                continue
            key = _setup_key(solver)
            _SET_UP_AT_START[key] = _SET_UP_AT_START.get(key, 0.0) + seconds


def play_games(solver, board: Board, first_click: str, seeds: np.ndarray, record: bool) -> GameResults:
    """Play one game per seed.

    Parameters
    ----------
    solver : callable
        ``solver(env, rng) -> bool``; with ``record``, an object whose ``play(env, rng)``
        returns a ``GameRecord`` (and, if it has ``play_many``, plays all the games in
        lockstep).
    board : Board
        The configuration.
    first_click : str
        First-click rule of the games.
    seeds : ndarray of int64
        Game seeds: seed ``sd`` gives ``MinesweeperEnv(..., seed=sd)`` and the solver's
        generator ``np.random.default_rng(sd)``.
    record : bool
        Call ``solver.play`` (guesses and the model's figures known) rather than ``solver``.

    Returns
    -------
    GameResults
        One entry per seed, in seed order, and the solver's set-up time
        (:func:`prepare_solver`, done before any game's clock starts) as
        ``setup_seconds``.
    """
    setup = prepare_solver(solver)
    _ready_engine()

    def env_of(sd):
        return MinesweeperEnv(
            rows=board.rows, cols=board.cols, mines=board.mines, seed=int(sd),
            first_click=first_click,
        )

    if record and batched(solver):
        return play_lockstep(solver, [(board, seeds)], first_click)[0]
    out = GameResults.empty(len(seeds))
    for k, sd in enumerate(seeds):
        env = env_of(sd)
        rng = np.random.default_rng(sd)
        t0 = time.perf_counter()
        if record:
            rec = solver.play(env, rng)
            out.set_game(k, *_game_row(rec, time.perf_counter() - t0))
        else:
            won = bool(solver(env, rng))
            seconds = time.perf_counter() - t0
            # The env is ours, so the share cleared is known even for plain callables.
            out.set_game(k, won, math.nan, env.revealed_safe / env.safe_cells, seconds)
    return dataclasses.replace(out, setup_seconds=setup)


def play_lockstep(solver, segments, first_click: str) -> list[GameResults]:
    """Play the games of several boards in one lockstep batch of a batched solver.

    Parameters
    ----------
    solver : NeuralSolver or another solver with ``play_many``
    segments : list of (Board, ndarray of int64)
        Boards (of any sizes; the harness groups boards of one size) and their seeds.
    first_click : str
        First-click rule of the games.

    Returns
    -------
    list of GameResults
        One per segment, its games in seed order; the first carries the solver's set-up
        time. A game's record is the same whatever else shares its batch (see
        :meth:`~nnsweeper.solvers.NeuralSolver.play_many`); only its time, a share of the
        batched model calls, depends on the company.
    """
    setup = prepare_solver(solver)
    _ready_engine()
    envs, rngs = [], []
    for board, seeds in segments:
        for sd in seeds:
            envs.append(MinesweeperEnv(rows=board.rows, cols=board.cols, mines=board.mines, seed=int(sd),
                                       first_click=first_click))
            rngs.append(np.random.default_rng(sd))
    records = iter(solver.play_many(envs, rngs))
    out = []
    for _, seeds in segments:
        games = GameResults.empty(len(seeds))
        for k in range(len(seeds)):
            rec = next(records)
            games.set_game(k, *_game_row(rec, rec.seconds))
        out.append(dataclasses.replace(games, setup_seconds=setup if not out else 0.0))
    return out


def _game_row(rec, seconds: float) -> tuple:
    return (bool(rec.won), float(rec.guesses), float(rec.cleared), seconds,
            int(getattr(rec, "model_calls", 0)), int(getattr(rec, "model_picks", 0)),
            int(getattr(rec, "model_safe", 0)))
