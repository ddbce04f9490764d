"""Win rates of solvers over mine counts and boards, on fixed game seeds.

Every evaluation plays the same games for the same ``base_seed``: the seed
notebook's scheme (:func:`game_seeds`) draws ``trials`` game seeds, and each seed
``sd`` gives the game ``MinesweeperEnv(rows, cols, mines, seed=sd)`` and the solver's
generator ``np.random.default_rng(sd)``. Every mine count and board reuses the same
seeds. A game's result is therefore a function of the solver, the board and the
seed only, which is why the results do not depend on ``n_jobs``.

:func:`eval_solver_over_mines` is the seed notebook's harness (win rate per mine
count) for any ``solver_fn(env, rng) -> bool``; :func:`evaluate` returns an
:class:`EvalTable` with counts, Wilson intervals, guesses, the share of the board
cleared in lost games and time per game, and every game's result in seed order.

Because every solver plays the same games, two solvers can be compared game by game:
:meth:`EvalTable.difference` gives the difference of their win rates with a 95%
interval that uses the pairing (:func:`newcombe_paired_interval`) when both rows carry
the outcomes of the same games, and the interval for independent samples
(:func:`newcombe_interval`) otherwise.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import io
import itertools
import json
import math
import numbers
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

from nnsweeper.datasets.seeds import check_seed_overlap
from nnsweeper.errors import InvalidRulesError
from nnsweeper.errors import check_int as _check_int
from nnsweeper.fileio import write_text_atomic
from nnsweeper.game import FIRST_CLICK_RULES, PRESETS, MinesweeperEnv, Rules
from nnsweeper.parallel import check_n_jobs, single_threaded_workers

__all__ = [
    "MAX_TRIALS",
    "MAX_GAMES",
    "MAX_TABLE_ROWS",
    "EvalTable",
    "eval_solver_over_mines",
    "evaluate",
    "game_seeds",
    "newcombe_interval",
    "newcombe_paired_interval",
    "pack_outcomes",
    "unpack_outcomes",
]

# Upper end (exclusive) of the seed notebook's game seeds.
_SEED_HIGH = 2**31 - 1

#: Most games per solver and configuration (``trials``). A run keeps the seeds
#: (8 bytes a game) and, until its row is summarised, one solver-configuration's
#: results (37 bytes a game, 60 at the peak of summarising; measured: +60 MB for a
#: million games), so a run at the cap stays under 0.75 GB; ten million games take
#: about 15 minutes even for a solver that does nothing (the harness's own cost).
MAX_TRIALS = 10_000_000
#: Most games per run: trials x configurations x solvers, refused before any game.
#: At 1.7 ms a game (single_point on 10x10, measured; csp takes 2.6 ms) 10**8 games
#: are some 47 CPU-hours; a larger request is almost surely a typo.
MAX_GAMES = 100_000_000
#: Most rows per table: configurations x solvers (and so most mine counts or boards
#: per run). Every row is kept in memory, printed, written to CSV and JSON and
#: drawn on the plot.
MAX_TABLE_ROWS = 10_000


# ---------------------------------------------------------------- validation
def _check_count(name: str, value) -> int:
    """A mine count; whole floats (``np.linspace`` output) are accepted as in the seed."""
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be a whole number; got {value!r}")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return int(value)
    raise ValueError(f"{name} must be a whole number; got {value!r}")


def _check_trials(trials) -> int:
    return _check_int("trials", trials, 1, maximum=MAX_TRIALS)


def _check_size(n_solvers: int, boards: list, trials: int) -> None:
    """Refuse a run whose table or number of games exceeds the caps, before any game."""
    rows = n_solvers * len(boards)
    if rows > MAX_TABLE_ROWS:
        raise ValueError(
            f"an evaluation table holds at most {MAX_TABLE_ROWS} rows (solvers x configurations); "
            f"got {n_solvers} x {len(boards)} = {rows}"
        )
    if rows * trials > MAX_GAMES:
        raise ValueError(
            f"an evaluation plays at most {MAX_GAMES} games (trials x configurations x solvers); "
            f"got {trials} x {len(boards)} x {n_solvers} = {rows * trials}"
        )


def _check_starts(solvers, boards: list) -> None:
    """Refuse a solver's first-click cell that lies outside a board, before any game."""
    from nnsweeper.solvers.base import Solver, first_click_cell

    for fn in solvers:
        if isinstance(fn, Solver):
            for b in boards:
                first_click_cell(fn.start, b.rows, b.cols)


def game_seeds(base_seed: int, trials: int) -> np.ndarray:
    """The game seeds of an evaluation: the seed notebook's scheme.

    Parameters
    ----------
    base_seed : int
        Non-negative seed of the master generator.
    trials : int
        Number of games (seeds), from 1 to :data:`MAX_TRIALS`.

    Returns
    -------
    ndarray of int64, shape (trials,)
        ``np.random.default_rng(base_seed).integers(0, 2**31 - 1, size=trials,
        dtype=np.int64)``. The first ``k`` seeds do not depend on ``trials``.
    """
    base_seed = _check_int("base_seed", base_seed, 0)
    trials = _check_trials(trials)
    rng_master = np.random.default_rng(base_seed)
    return rng_master.integers(0, _SEED_HIGH, size=trials, dtype=np.int64)


# ------------------------------------------------------------ configurations
@dataclass(frozen=True)
class _Board:
    """One evaluation configuration: a board size and a mine count."""

    name: str
    rows: int
    cols: int
    mines: int


def _at_most_table_rows(name: str, items: Iterable) -> list:
    """The items as a list, refused (without reading on) beyond :data:`MAX_TABLE_ROWS`."""
    out = list(itertools.islice(items, MAX_TABLE_ROWS + 1))
    if len(out) > MAX_TABLE_ROWS:
        try:
            got = str(len(items))
        except (TypeError, OverflowError):  # an iterator, or a range too long for len()
            got = f"more than {MAX_TABLE_ROWS}"
        raise ValueError(f"{name} must hold at most {MAX_TABLE_ROWS} entries (the rows of one "
                         f"table); got {got}")
    return out


def _boards_from_mines(mines_list, rows, cols, first_click) -> list[_Board]:
    if isinstance(mines_list, str) or not isinstance(mines_list, Iterable):
        raise ValueError(f"mines_list must be a sequence of mine counts; got {mines_list!r}")
    counts = [_check_count("each entry of mines_list", m)
              for m in _at_most_table_rows("mines_list", mines_list)]
    if not counts:
        raise ValueError("mines_list must hold at least one mine count; got an empty sequence")
    rows = _check_int("rows", rows, 1)
    cols = _check_int("cols", cols, 1)
    for m in counts:
        Rules(rows, cols, m, first_click)  # raises InvalidRulesError naming the limit
    return [_Board(f"{rows}x{cols}", rows, cols, m) for m in counts]


def _boards_from_list(boards, first_click) -> list[_Board]:
    if isinstance(boards, str) or not isinstance(boards, Iterable):
        raise ValueError(
            "boards must be a sequence of preset names or (rows, cols, mines) triples; "
            f"got {boards!r}"
        )
    out = []
    for b in _at_most_table_rows("boards", boards):
        if isinstance(b, str):
            if b not in PRESETS:
                raise ValueError(f"board preset must be one of {', '.join(PRESETS)}; got {b!r}")
            r, c, m = PRESETS[b]
            name = b
        else:
            try:
                r, c, m = b
            except (TypeError, ValueError):
                raise ValueError(
                    f"each board must be a preset name or a (rows, cols, mines) triple; got {b!r}"
                ) from None
            r = _check_int("board rows", r, 1)
            c = _check_int("board cols", c, 1)
            m = _check_count("board mines", m)
            name = f"{r}x{c}"
        Rules(r, c, m, first_click)
        out.append(_Board(name, r, c, m))
    if not out:
        raise ValueError("boards must hold at least one board; got an empty sequence")
    return out


def _resolve_boards(mines_list, rows, cols, boards, first_click) -> list[_Board]:
    if not isinstance(first_click, str) or first_click not in FIRST_CLICK_RULES:
        raise InvalidRulesError(
            f"first_click must be one of {', '.join(FIRST_CLICK_RULES)}; got {first_click!r}"
        )
    if boards is not None and mines_list is not None:
        raise ValueError("give either mines_list (with rows and cols) or boards, not both")
    if boards is not None:
        return _boards_from_list(boards, first_click)
    if mines_list is None:
        raise ValueError("give mines_list (with rows and cols) or boards; got neither")
    return _boards_from_mines(mines_list, rows, cols, first_click)


def _resolve_solvers(solvers) -> dict[str, Callable]:
    if isinstance(solvers, str):
        solvers = [solvers]
    if isinstance(solvers, Mapping):
        out = dict(solvers)
        for name, fn in out.items():
            if not isinstance(name, str):
                raise ValueError(f"solver names must be strings; got {name!r}")
            if not callable(fn):
                raise TypeError(
                    f"solver {name!r} must be callable as solver(env, rng) -> bool; "
                    f"got {type(fn).__name__}"
                )
    elif isinstance(solvers, Iterable):
        names = list(solvers)
        bad = [n for n in names if not isinstance(n, str)]
        if bad:
            raise ValueError(
                "a list of solvers must hold registry names (strings); use a dict "
                f"name -> solver for solver objects; got {bad[0]!r}"
            )
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"solver names must be unique; got {', '.join(dup)} more than once")
        from nnsweeper.solvers import get_solver

        out = {n: get_solver(n) for n in names}
    else:
        raise ValueError(
            f"solvers must be a dict name -> solver or a list of registry names; got {solvers!r}"
        )
    if not out:
        raise ValueError("solvers must name at least one solver; got none")
    return out


def _describe(fn) -> str:
    if hasattr(fn, "__qualname__") and hasattr(fn, "__module__"):
        return f"{fn.__module__}.{fn.__qualname__}"
    return repr(fn)


# ------------------------------------------------------------------- playing
#: Most games one lockstep batch of a batched solver plays at once.
_BATCH_GAMES = 1024
#: One game's result: won, guesses (NaN for plain callables), the share of the safe
#: cells cleared, seconds, and the neural model's calls, picks and safe picks. Kept
#: as one packed record (37 bytes) per game rather than a tuple of Python objects.
_GAME = np.dtype([("won", np.bool_), ("guesses", np.float64), ("cleared", np.float64),
                  ("seconds", np.float64), ("model_calls", np.int32), ("model_picks", np.int32),
                  ("model_safe", np.int32)])


def _play_games(solver, board: _Board, first_click: str, seeds: np.ndarray, record: bool) -> np.ndarray:
    """Play one game per seed; returns a :data:`_GAME` array, one record per seed, in seed order."""
    def env_of(sd):
        return MinesweeperEnv(
            rows=board.rows, cols=board.cols, mines=board.mines, seed=int(sd),
            first_click=first_click,
        )

    out = np.empty(len(seeds), dtype=_GAME)
    if record and _batched(solver):
        # Lockstep play: every board waiting on the model goes in one batch.
        records = solver.play_many([env_of(sd) for sd in seeds], [np.random.default_rng(sd) for sd in seeds])
        for k, rec in enumerate(records):
            out[k] = _game_row(rec, rec.seconds)
        return out
    for k, sd in enumerate(seeds):
        env = env_of(sd)
        rng = np.random.default_rng(sd)
        t0 = time.perf_counter()
        if record:
            rec = solver.play(env, rng)
            out[k] = _game_row(rec, time.perf_counter() - t0)
        else:
            won = bool(solver(env, rng))
            seconds = time.perf_counter() - t0
            # The env is ours, so the share cleared is known even for plain callables.
            out[k] = (won, math.nan, env.revealed_safe / env.safe_cells, seconds, 0, 0, 0)
    return out


def _batched(solver) -> bool:
    """Whether a solver plays many games in lockstep (``play_many(envs, rngs)``)."""
    return callable(getattr(solver, "play_many", None))


def _game_row(rec, seconds: float) -> tuple:
    return (bool(rec.won), float(rec.guesses), float(rec.cleared), seconds,
            int(getattr(rec, "model_calls", 0)), int(getattr(rec, "model_picks", 0)),
            int(getattr(rec, "model_safe", 0)))


def _chunks(jobs, trials: int, size: int, big: int) -> Iterator[tuple[int, int, int]]:
    """``(job, first game, end)`` of every chunk, job after job, generated as needed."""
    for j, (solver, record, _) in enumerate(jobs):
        step = big if record and _batched(solver) else size
        for a in range(0, trials, step):
            yield j, a, min(a + step, trials)


def _run(jobs, seeds: np.ndarray, first_click: str, n_jobs: int, progress: bool) -> Iterator[np.ndarray]:
    """Play every (solver, record, board) job on every seed.

    Yields each job's games (a :data:`_GAME` array in seed order) in job order, as
    soon as the last of them is played, so that only the job being played is held
    in memory. Chunks are generated as the workers take them, never listed.
    """
    from joblib import Parallel, delayed, effective_n_jobs
    from tqdm.auto import tqdm

    workers = 1 if n_jobs == 1 else effective_n_jobs(n_jobs)
    trials = len(seeds)
    total = trials * len(jobs)
    # Several chunks per worker balance the load; each chunk is a whole number of
    # games, so chunking never changes a result. Batched solvers get large chunks:
    # a chunk is one lockstep batch.
    size = 1 if workers == 1 else max(1, min(64, math.ceil(total / (8 * workers))))
    big = min(_BATCH_GAMES, math.ceil(trials / workers))

    def calls():
        for j, a, b in _chunks(jobs, trials, size, big):
            solver, record, board = jobs[j]
            yield solver, board, first_click, seeds[a:b], record

    workers_env = contextlib.nullcontext() if workers == 1 else single_threaded_workers()
    with tqdm(total=total, disable=not progress, unit="game", desc="games") as bar, workers_env:
        if workers == 1:
            done = (_play_games(*call) for call in calls())
        else:
            parallel = Parallel(n_jobs=n_jobs, return_as="generator")
            done = parallel(delayed(_play_games)(*call) for call in calls())
        games = None
        for (_, a, b), chunk in zip(_chunks(jobs, trials, size, big), done, strict=True):
            if a == 0:  # chunks come in job order, each job's in seed order
                games = np.empty(trials, dtype=_GAME)
            games[a:b] = chunk
            bar.update(b - a)
            if b == trials:
                yield games
                games = None


# ---------------------------------------------------------------- public API
def eval_solver_over_mines(
    solver_fn,
    mines_list,
    rows=10,
    cols=10,
    trials=200,
    base_seed=0,
    *,
    first_click="safe",
    n_jobs=1,
    progress=False,
) -> np.ndarray:
    """Win rate of a solver per mine count: the seed notebook's harness.

    For each mine count ``m`` and each seed ``sd`` of :func:`game_seeds`, plays
    ``solver_fn(MinesweeperEnv(rows=rows, cols=cols, mines=m, seed=sd),
    np.random.default_rng(sd))``. The solver resets the env itself.

    Parameters
    ----------
    solver_fn : callable
        ``solver_fn(env, rng) -> bool`` (truthy when won). Any callable works, the
        seed notebook's functions included; with ``n_jobs != 1`` it must be
        picklable by cloudpickle (functions defined in a notebook are).
    mines_list : sequence of int
        Mine counts, each legal for the board and the first-click rule.
    rows, cols : int, default=10
        Board size.
    trials : int, default=200
        Games per mine count, at most :data:`MAX_TRIALS`; and mine counts times
        trials at most :data:`MAX_GAMES`.
    base_seed : int, default=0
        Seed of the game seeds.
    first_click : {"safe", "zero", "none"}, default="safe"
        First-click rule of the games.
    n_jobs : int, default=1
        Worker processes (joblib; -1 for all cores; at most
        :func:`nnsweeper.parallel.max_jobs`). The result does not depend on it as long
        as the solver's moves depend only on the env and ``rng``.
    progress : bool, default=False
        Show a progress bar.

    Returns
    -------
    ndarray of float64, shape (len(mines_list),)
        Wins divided by ``trials``, per mine count.
    """
    if not callable(solver_fn):
        raise TypeError(
            f"solver_fn must be callable as solver_fn(env, rng) -> bool; "
            f"got {type(solver_fn).__name__}"
        )
    trials = _check_trials(trials)
    n_jobs = check_n_jobs(n_jobs)
    boards = _resolve_boards(mines_list, rows, cols, None, first_click)
    _check_size(1, boards, trials)
    _check_starts([solver_fn], boards)
    seeds = game_seeds(base_seed, trials)
    jobs = [(solver_fn, False, b) for b in boards]
    wins = [int(games["won"].sum()) for games in _run(jobs, seeds, first_click, n_jobs, bool(progress))]
    return np.array([w / len(seeds) for w in wins], dtype=float)


def evaluate(
    solvers,
    mines_list=None,
    *,
    rows=10,
    cols=10,
    boards=None,
    trials=200,
    base_seed=0,
    first_click="safe",
    n_jobs=1,
    progress=False,
    datasets=None,
) -> EvalTable:
    """Play every solver on every board on the same game seeds and tabulate the results.

    Parameters
    ----------
    solvers : dict of str to callable, or list of str
        Solvers by name (``solver(env, rng) -> bool``), or registry names resolved with
        :func:`nnsweeper.solvers.get_solver`. Solvers with a ``play(env, rng)`` method
        returning a ``GameRecord`` also report guesses.
    mines_list : sequence of int, optional
        Mine counts on a ``rows x cols`` board. Give this or ``boards``.
    rows, cols : int, default=10
        Board size for ``mines_list``.
    boards : sequence, optional
        Configurations instead of ``mines_list``: preset names (``"beginner"``,
        ``"intermediate"``, ``"expert"``) or ``(rows, cols, mines)`` triples.
    trials : int, default=200
        Games per solver and configuration, at most :data:`MAX_TRIALS`. A run plays
        at most :data:`MAX_GAMES` games and its table holds at most
        :data:`MAX_TABLE_ROWS` rows (solvers x configurations); larger runs are
        refused before any game is played.
    base_seed : int, default=0
        Seed of the game seeds (:func:`game_seeds`); the games are those of
        :func:`eval_solver_over_mines` with the same arguments.
    first_click : {"safe", "zero", "none"}, default="safe"
        First-click rule of the games.
    n_jobs : int, default=1
        Worker processes (joblib; -1 for all cores; at most
        :func:`nnsweeper.parallel.max_jobs`). Results other than times do not depend
        on it.
    progress : bool, default=False
        Show a progress bar.
    datasets : path, dict, or a list of them, optional
        Datasets the solvers learned from (folders, ``manifest.json`` files or
        manifests). Their game seeds must not be evaluated on: any overlap raises
        :class:`~nnsweeper.errors.SeedOverlapError` before a game is played. Solvers
        whose model records its training seeds (``solver.training_seeds``, as the
        neural solvers' checkpoints do) are checked the same way without being asked.

    Returns
    -------
    EvalTable
        One row per solver and configuration, in the order given; see
        :attr:`EvalTable.COLUMNS`. Each row also holds ``base_seed`` and ``outcomes``,
        every game's result in seed order (see :func:`pack_outcomes`).
    """
    named = _resolve_solvers(solvers)
    trials = _check_trials(trials)
    n_jobs = check_n_jobs(n_jobs)
    configs = _resolve_boards(mines_list, rows, cols, boards, first_click)
    _check_size(len(named), configs, trials)
    _check_starts(named.values(), configs)
    seeds = game_seeds(base_seed, trials)
    checked = _check_datasets(datasets, seeds)
    for name, fn in named.items():
        # Solvers that learned from games (neural ones) carry their training seeds.
        learned = getattr(fn, "training_seeds", None)
        if learned:
            check_seed_overlap(learned, seeds, what=f"evaluation (solver {name!r})")
            checked.append(f"{name}: training data")
    keys = [(name, b) for name in named for b in configs]
    # Solvers with play() report a GameRecord (guesses); others only win or lose.
    jobs = [(named[name], callable(getattr(named[name], "play", None)), b) for name, b in keys]
    results = _run(jobs, seeds, first_click, n_jobs, bool(progress))
    # Each job's games are summarised as they come, so only one job's are held at a time.
    rows_out = [
        {**_summarise(name, board, first_click, record, games), "base_seed": int(base_seed)}
        for (name, board), (_, record, _), games in zip(keys, jobs, results, strict=True)
    ]
    from nnsweeper import __version__

    if boards is not None:
        arguments = {"boards": [[b.name, b.rows, b.cols, b.mines] for b in configs]}
    else:
        arguments = {"rows": configs[0].rows, "cols": configs[0].cols,
                     "mines_list": [b.mines for b in configs]}
    arguments.update(trials=len(seeds), base_seed=int(base_seed), first_click=first_click,
                     n_jobs=n_jobs)
    if checked:
        arguments["held_out_from"] = checked
    metadata = {
        "nnsweeper_version": __version__,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "arguments": arguments,
        "solvers": {name: _describe(fn) for name, fn in named.items()},
    }
    return EvalTable(rows_out, metadata)


def _check_datasets(datasets, seeds: np.ndarray) -> list[str]:
    """Refuse evaluation seeds that a dataset used; returns what was checked."""
    if datasets is None:
        return []
    items = [datasets] if isinstance(datasets, str | os.PathLike | Mapping) else list(datasets)
    for item in items:
        check_seed_overlap(item, seeds, what="evaluation")
    return [os.fspath(d) if not isinstance(d, Mapping) else "<manifest>" for d in items]


def _wilson(wins: int, games: int, confidence: float = 0.95) -> tuple[float, float]:
    ci = binomtest(wins, games).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def _summarise(name: str, board: _Board, first_click: str, record: bool, games: np.ndarray) -> dict:
    """One table row from a job's :data:`_GAME` records (in seed order)."""
    # Each figure comes from a contiguous float64 copy of one packed field: the same
    # array, hence the same sum, mean and median, as when games were kept as Python
    # tuples. One copy at a time keeps the extra memory at 8 bytes a game.
    def field(name, dtype=float):
        return np.ascontiguousarray(games[name], dtype=dtype)

    won = field("won", bool)
    n, k = len(games), int(won.sum())
    low, high = _wilson(k, n)
    lost = ~won
    seconds = field("seconds")
    mean_seconds, median_seconds = float(seconds.mean()), float(np.median(seconds))
    del seconds
    calls = field("model_calls")
    model_calls = float(calls.mean()) if calls.any() else math.nan
    del calls
    picks = field("model_picks")
    model_safe_rate = float(field("model_safe").sum() / picks.sum()) if picks.any() else math.nan
    del picks
    return {
        "solver": name,
        "board": board.name,
        "rows": board.rows,
        "cols": board.cols,
        "mines": board.mines,
        "density": board.mines / (board.rows * board.cols),
        "first_click": first_click,
        "games": n,
        "wins": k,
        "win_rate": k / n,
        "ci_low": low,
        "ci_high": high,
        "mean_guesses": float(field("guesses").mean()) if record else math.nan,
        "mean_cleared_lost": float(field("cleared")[lost].mean()) if lost.any() else math.nan,
        "mean_seconds": mean_seconds,
        "median_seconds": median_seconds,
        "model_calls": model_calls,
        "model_safe_rate": model_safe_rate,
        "outcomes": pack_outcomes(won),
    }


# ------------------------------------------------------------------ outcomes
def pack_outcomes(won) -> str:
    """Per-game results as a compact hex string (the ``outcomes`` field of a row).

    Parameters
    ----------
    won : array_like of bool, shape (games,)
        Whether each game was won, in seed order.

    Returns
    -------
    str
        ``numpy.packbits(won).tobytes().hex()``: each byte holds eight games, the first
        game in its highest bit, and the last byte is padded with zero bits. Each hex
        digit therefore covers four consecutive games (``"c"`` = won, won, lost, lost).
        Reading it back needs the number of games (:func:`unpack_outcomes`).
    """
    a = np.asarray(won)
    if a.ndim != 1 or (a.dtype != bool and not np.isin(a, (0, 1)).all()):
        raise ValueError(f"won must be a 1-D array of booleans (or 0/1); got {a!r}")
    return np.packbits(a.astype(bool)).tobytes().hex()


def unpack_outcomes(text: str, games: int) -> np.ndarray:
    """The per-game results packed by :func:`pack_outcomes`.

    Parameters
    ----------
    text : str
        The hex string.
    games : int
        Number of games it holds.

    Returns
    -------
    ndarray of bool, shape (games,)
        Whether each game was won, in seed order.

    Raises
    ------
    ValueError
        ``text`` not a hex string of ``2 * ceil(games / 8)`` digits, or with a set
        padding bit.
    """
    games = _check_int("games", games, 0)
    digits = 2 * ((games + 7) // 8)
    if not isinstance(text, str) or len(text) != digits:
        raise ValueError(
            f"outcomes must be a hex string of {digits} digits for {games} games; got {text!r:.60}"
        )
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"outcomes must hold hex digits 0-9a-f only; got {text!r:.60}") from None
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8))
    if bits[games:].any():
        raise ValueError(
            f"outcomes holds more than {games} games: a padding bit after game {games} is set"
        )
    return bits[:games].astype(bool)


# ----------------------------------------------------------------- intervals
def _check_confidence(confidence) -> float:
    if (isinstance(confidence, bool) or not isinstance(confidence, numbers.Real)
            or not 0 < confidence < 1):
        raise ValueError(f"confidence must be a number in (0, 1); got {confidence!r}")
    return float(confidence)


def _check_counts(**counts) -> dict[str, int]:
    out = {}
    for name, value in counts.items():
        out[name] = _check_int(name, value, 0)
    return out


def newcombe_interval(wins1, games1, wins2, games2, *, confidence=0.95) -> tuple[float, float]:
    """Interval for ``wins1/games1 - wins2/games2`` from two independent samples.

    Newcombe's hybrid score interval (method 10 of Newcombe 1998, "Interval estimation
    for the difference between independent proportions: comparison of eleven
    methods", Statistics in Medicine 17:873-890), built from the two Wilson intervals
    ``(l1, u1)`` and ``(l2, u2)``: with ``D = p1 - p2`` it runs from
    ``D - sqrt((p1 - l1)**2 + (u2 - p2)**2)`` to ``D + sqrt((u1 - p1)**2 + (p2 - l2)**2)``.

    Parameters
    ----------
    wins1, games1 : int
        Successes and trials of the first sample (``0 <= wins1 <= games1``, ``games1 >= 1``).
    wins2, games2 : int
        The same for the second sample.
    confidence : float, default=0.95
        Confidence level in (0, 1).

    Returns
    -------
    (low, high) : tuple of float
        Within [-1, 1].
    """
    c = _check_counts(wins1=wins1, games1=games1, wins2=wins2, games2=games2)
    for k, n in (("wins1", "games1"), ("wins2", "games2")):
        if c[n] < 1:
            raise ValueError(f"{n} must be at least 1; got {c[n]}")
        if c[k] > c[n]:
            raise ValueError(f"{k} must not exceed {n} ({c[n]}); got {c[k]}")
    confidence = _check_confidence(confidence)
    p1, p2 = c["wins1"] / c["games1"], c["wins2"] / c["games2"]
    l1, u1 = _wilson(c["wins1"], c["games1"], confidence)
    l2, u2 = _wilson(c["wins2"], c["games2"], confidence)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(low, -1.0), min(high, 1.0)


def newcombe_paired_interval(both, first_only, second_only, neither, *,
                             confidence=0.95) -> tuple[float, float]:
    """Interval for the difference of two proportions measured on the same units.

    Newcombe's score interval for paired data (method 10 of Newcombe 1998, "Improved
    confidence intervals for the difference between binomial proportions based on
    paired data", Statistics in Medicine 17:2635-2650). With ``n`` pairs,
    ``p1 = (both + first_only) / n``, ``p2 = (both + second_only) / n`` and their Wilson
    intervals ``(l1, u1)`` and ``(l2, u2)``, the interval for ``D = p1 - p2`` runs from
    ``D - sqrt((p1 - l1)**2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)**2)`` to
    ``D + sqrt((u1 - p1)**2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)**2)``, where ``phi``
    is the correlation of the two outcomes with Newcombe's correction: with
    ``B = both * neither - first_only * second_only``, ``phi = max(B - n/2, 0) / sqrt(M)``
    for ``B > 0`` and ``B / sqrt(M)`` otherwise, ``M`` being the product of the four
    margins (``phi = 0`` when a margin is empty). Positively correlated outcomes (two
    solvers that win and lose mostly the same games) give a narrower interval than
    :func:`newcombe_interval` on the same rates.

    Parameters
    ----------
    both : int
        Pairs where both succeeded (games both solvers won).
    first_only, second_only : int
        Pairs where only the first, or only the second, succeeded.
    neither : int
        Pairs where neither did.
    confidence : float, default=0.95
        Confidence level in (0, 1).

    Returns
    -------
    (low, high) : tuple of float
        Within [-1, 1].
    """
    c = _check_counts(both=both, first_only=first_only, second_only=second_only, neither=neither)
    a, b, cc, d = c["both"], c["first_only"], c["second_only"], c["neither"]
    n = a + b + cc + d
    if n < 1:
        raise ValueError("the paired table must hold at least one pair; got 0 in all four cells")
    confidence = _check_confidence(confidence)
    p1, p2 = (a + b) / n, (a + cc) / n
    l1, u1 = _wilson(a + b, n, confidence)
    l2, u2 = _wilson(a + cc, n, confidence)
    margins = (a + b) * (cc + d) * (a + cc) * (b + d)
    if margins == 0:
        phi = 0.0
    else:
        assoc = a * d - b * cc
        corrected = max(assoc - n / 2, 0.0) if assoc > 0 else float(assoc)
        phi = corrected / math.sqrt(margins)
    diff = p1 - p2
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    low = diff - math.sqrt(max(below, 0.0))
    high = diff + math.sqrt(max(above, 0.0))
    return max(low, -1.0), min(high, 1.0)


# --------------------------------------------------------------------- table
_TEXT = ("solver", "board", "first_click")
_INT = ("rows", "cols", "mines", "games", "wins")


class EvalTable:
    """Results of :func:`evaluate`: one row (a dict) per solver and configuration.

    Parameters
    ----------
    rows : list of dict
        Each with the keys of :attr:`COLUMNS`. NaN marks a figure the solver does not
        report (guesses for plain callables, the share cleared when no game was lost).
    metadata : dict, optional
        The arguments, the package version, the solvers and (from the command line)
        the command; saved by :meth:`to_json`.

    Attributes
    ----------
    COLUMNS : tuple of str
        ``solver``, ``board`` (preset name or ``RxC``), ``rows``, ``cols``, ``mines``,
        ``density``, ``first_click``, ``games``, ``wins``, ``win_rate``, ``ci_low`` and
        ``ci_high`` (95% Wilson interval of the win rate), ``mean_guesses`` (guesses per
        game, first click excluded), ``mean_cleared_lost`` (mean share of safe cells
        revealed in lost games), ``mean_seconds`` and ``median_seconds`` per game,
        ``model_calls`` (times per game a neural model was asked) and
        ``model_safe_rate`` (share of the cells opened on the model's say-so that
        were safe); the last two are NaN for solvers without a model.
    EXTRAS : tuple of str
        Row fields kept in the JSON file but not in the CSV file or the printed
        table: ``base_seed`` (int, the seed of the games' seeds, :func:`game_seeds`)
        and ``outcomes`` (every game's result in seed order, packed by
        :func:`pack_outcomes`). Both are None in rows without them, such as rows of
        tables written before they existed. Rows with the same ``base_seed``, board,
        first-click rule and number of games played the same games.
    """

    COLUMNS = (
        "solver", "board", "rows", "cols", "mines", "density", "first_click", "games",
        "wins", "win_rate", "ci_low", "ci_high", "mean_guesses", "mean_cleared_lost",
        "mean_seconds", "median_seconds", "model_calls", "model_safe_rate",
    )
    EXTRAS = ("base_seed", "outcomes")
    #: Columns that tables written before they existed lack (read as NaN).
    _LATER = ("model_calls", "model_safe_rate")

    def __init__(self, rows, metadata=None):
        self.rows = [{**dict.fromkeys(self._LATER, math.nan), **dict.fromkeys(self.EXTRAS), **dict(r)}
                     for r in rows]
        for i, r in enumerate(self.rows):
            missing = [c for c in self.COLUMNS if c not in r]
            if missing:
                raise ValueError(f"row {i} of the table lacks column(s) {', '.join(missing)}")
            _check_extras(i, r)
        self.metadata = dict(metadata or {})

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __repr__(self) -> str:
        return f"EvalTable({len(self.rows)} rows, solvers={self.solvers})"

    # ------------------------------------------------------------- queries
    @property
    def solvers(self) -> list[str]:
        """Solver names in table order."""
        return list(dict.fromkeys(r["solver"] for r in self.rows))

    @property
    def boards(self) -> list[str]:
        """Board names in table order."""
        return list(dict.fromkeys(r["board"] for r in self.rows))

    def select(self, **criteria) -> list[dict]:
        """Rows whose columns equal the given values, e.g. ``select(solver="csp")``."""
        bad = [c for c in criteria if c not in self.COLUMNS]
        if bad:
            raise ValueError(
                f"unknown column {bad[0]!r}; columns are {', '.join(self.COLUMNS)}"
            )
        return [r for r in self.rows if all(r[c] == v for c, v in criteria.items())]

    def column(self, name: str, **criteria) -> np.ndarray:
        """One column as an array, over the rows that match ``criteria``."""
        if name not in self.COLUMNS:
            raise ValueError(f"unknown column {name!r}; columns are {', '.join(self.COLUMNS)}")
        values = [r[name] for r in self.select(**criteria)]
        return np.array(values, dtype=object if name in _TEXT else float)

    def win_rates(self, solver: str, **criteria) -> np.ndarray:
        """Win rates of one solver (float array), in table order.

        Extra keyword arguments filter further, e.g. ``board="10x10"``.
        """
        self._check_solver("solver", solver)
        return self.column("win_rate", solver=solver, **criteria)

    def outcomes(self, solver: str, **criteria) -> list[np.ndarray | None]:
        """Per-game results (bool arrays in seed order) of one solver's rows, in table order.

        None for a row without them. Extra keyword arguments filter further.
        """
        self._check_solver("solver", solver)
        return [None if r["outcomes"] is None else unpack_outcomes(r["outcomes"], r["games"])
                for r in self.select(solver=solver, **criteria)]

    def difference(self, solver: str, reference: str = "csp", **criteria) -> list[dict]:
        """Win rate of ``solver`` minus that of ``reference``, per configuration, with a 95% interval.

        Parameters
        ----------
        solver, reference : str
            Two solvers of the table.
        **criteria
            Column values the configurations must have, e.g. ``board="10x10"``.

        Returns
        -------
        list of dict
            One dict per configuration (board, size, mine count and first-click rule)
            that both solvers played, in the order of ``solver``'s rows, with the keys
            ``board``, ``rows``, ``cols``, ``mines``, ``density``, ``first_click``,
            ``solver``, ``reference``, ``games`` and ``reference_games``, ``win_rate``
            and ``reference_win_rate``, ``difference`` (solver minus reference, a
            proportion), ``ci_low`` and ``ci_high`` (its 95% interval), ``paired``
            (bool), ``method`` and, for paired rows, ``solver_only`` and
            ``reference_only`` (games only one of them won; None otherwise).

            The interval is paired (``method="newcombe-paired"``,
            :func:`newcombe_paired_interval`) when both rows hold the outcomes of the
            same games: both have ``outcomes``, the same ``base_seed`` and the same
            number of games. Otherwise it treats the rows as independent samples
            (``method="newcombe-hybrid"``, :func:`newcombe_interval`), which is wider
            when the solvers tend to win the same games.

        Raises
        ------
        ValueError
            An unknown solver or column; ``solver`` equal to ``reference``; a
            ``solver`` criterion; a configuration with more than one row of a solver;
            no configuration played by both.
        """
        self._check_solver("solver", solver)
        self._check_solver("reference", reference)
        if solver == reference:
            raise ValueError(f"solver and reference must differ; got {solver!r} for both")
        if "solver" in criteria:
            raise ValueError("criteria must not name the solver; give it as solver= and reference=")
        ours = self._by_config(solver, criteria)
        theirs = self._by_config(reference, criteria)
        out = [_difference_row(r, theirs[key], solver, reference)
               for key, r in ours.items() if key in theirs]
        if not out:
            where = f" with {criteria}" if criteria else ""
            raise ValueError(
                f"no configuration{where} was played by both {solver!r} and {reference!r}"
            )
        return out

    def _check_solver(self, name: str, solver) -> None:
        if solver not in self.solvers:
            raise ValueError(f"{name} must be one of {', '.join(self.solvers)}; got {solver!r}")

    def _by_config(self, solver: str, criteria: dict) -> dict[tuple, dict]:
        out: dict[tuple, dict] = {}
        for r in self.select(solver=solver, **criteria):
            key = _config_key(r)
            if key in out:
                raise ValueError(
                    f"solver {solver!r} has more than one row for board {r['board']} "
                    f"({r['rows']}x{r['cols']}, {r['mines']} mines, {r['first_click']} first click)"
                )
            out[key] = r
        return out

    # ------------------------------------------------------------------ text
    def __str__(self) -> str:
        headers = ("solver", "board", "mines", "density", "games", "wins", "win rate",
                   "95% CI", "guesses", "cleared|lost", "ms mean", "ms median", "model calls",
                   "model safe")

        def num(v, fmt):
            return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)

        body = [
            (
                r["solver"], r["board"], str(r["mines"]), num(r["density"], ".3f"),
                str(r["games"]), str(r["wins"]), num(r["win_rate"], ".3f"),
                f"{num(r['ci_low'], '.3f')}-{num(r['ci_high'], '.3f')}",
                num(r["mean_guesses"], ".2f"), num(r["mean_cleared_lost"], ".3f"),
                num(1000 * r["mean_seconds"], ".1f"), num(1000 * r["median_seconds"], ".1f"),
                num(r["model_calls"], ".2f"), num(r["model_safe_rate"], ".3f"),
            )
            for r in self.rows
        ]
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(headers)]
        left = {0, 1}

        def line(cells):
            parts = [c.ljust(w) if i in left else c.rjust(w)
                     for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
            return "  ".join(parts).rstrip()

        return "\n".join([line(headers), *(line(b) for b in body)])

    # ----------------------------------------------------------------- files
    def to_csv(self, path) -> Path:
        """Write the rows as CSV (header row; empty cells for NaN), atomically."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.COLUMNS)
        for r in self.rows:
            writer.writerow(["" if _is_nan(r[c]) else r[c] for c in self.COLUMNS])
        return write_text_atomic(path, buf.getvalue())

    def to_json(self, path) -> Path:
        """Write the metadata and the rows as JSON (null for NaN), atomically.

        Rows hold the :attr:`COLUMNS` and the :attr:`EXTRAS` (null when absent).
        """
        fields = (*self.COLUMNS, *self.EXTRAS)
        doc = {
            "metadata": self.metadata,
            "columns": list(self.COLUMNS),
            "rows": [{c: None if _is_nan(r[c]) else r[c] for c in fields} for r in self.rows],
        }
        return write_text_atomic(path, json.dumps(doc, indent=2, allow_nan=False) + "\n")

    @classmethod
    def from_json(cls, path) -> EvalTable:
        """Read a table written by :meth:`to_json`."""
        with open(path, encoding="utf-8") as f:
            try:
                doc = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path} is not valid JSON: {e}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            raise ValueError(f"{path} is not an evaluation table: it has no list of rows")
        rows = []
        for i, r in enumerate(doc["rows"]):
            if not isinstance(r, dict):
                raise ValueError(f"{path} is not an evaluation table: a row is not an object")
            try:
                rows.append({c: _from_json_value(c, v) for c, v in r.items()})
            except (TypeError, ValueError):
                bad = next(c for c, v in r.items() if not _converts(c, v))
                raise ValueError(
                    f"{path} is not an evaluation table: row {i} has {bad} = {r[bad]!r}"
                ) from None
        metadata = doc.get("metadata")
        try:
            return cls(rows, metadata if isinstance(metadata, dict) else None)
        except ValueError as e:
            raise ValueError(f"{path} is not an evaluation table: {e}") from None


def _is_nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _check_extras(i: int, r: dict) -> None:
    """Check a row's ``base_seed`` and ``outcomes`` (None, or consistent with its counts)."""
    seed, packed = r["base_seed"], r["outcomes"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
                             or seed < 0):
        raise ValueError(f"row {i} of the table: base_seed must be None or a non-negative integer; "
                         f"got {seed!r}")
    if packed is None:
        return
    try:
        won = unpack_outcomes(packed, r["games"])
    except ValueError as e:
        raise ValueError(f"row {i} of the table: {e}") from None
    if int(won.sum()) != r["wins"]:
        raise ValueError(
            f"row {i} of the table: outcomes hold {int(won.sum())} won games but wins is {r['wins']}"
        )


def _config_key(r: dict) -> tuple:
    return (r["board"], r["rows"], r["cols"], r["mines"], r["first_click"])


def _difference_row(r: dict, ref: dict, solver: str, reference: str) -> dict:
    """One configuration of :meth:`EvalTable.difference`."""
    same_games = (r["outcomes"] is not None and ref["outcomes"] is not None
                  and r["base_seed"] is not None and r["base_seed"] == ref["base_seed"]
                  and r["games"] == ref["games"])
    solver_only = reference_only = None
    if same_games:
        x = unpack_outcomes(r["outcomes"], r["games"])
        y = unpack_outcomes(ref["outcomes"], ref["games"])
        solver_only, reference_only = int(np.sum(x & ~y)), int(np.sum(~x & y))
        low, high = newcombe_paired_interval(int(np.sum(x & y)), solver_only, reference_only,
                                             int(np.sum(~x & ~y)))
    else:
        low, high = newcombe_interval(r["wins"], r["games"], ref["wins"], ref["games"])
    return {
        "board": r["board"], "rows": r["rows"], "cols": r["cols"], "mines": r["mines"],
        "density": r["density"], "first_click": r["first_click"],
        "solver": solver, "reference": reference,
        "games": r["games"], "reference_games": ref["games"],
        "win_rate": r["wins"] / r["games"], "reference_win_rate": ref["wins"] / ref["games"],
        "difference": r["wins"] / r["games"] - ref["wins"] / ref["games"],
        "ci_low": low, "ci_high": high,
        "paired": same_games,
        "method": "newcombe-paired" if same_games else "newcombe-hybrid",
        "solver_only": solver_only, "reference_only": reference_only,
    }


def _converts(column: str, v) -> bool:
    try:
        _from_json_value(column, v)
    except (TypeError, ValueError):
        return False
    return True


def _from_json_value(column: str, v):
    if column in _TEXT or column not in EvalTable.COLUMNS:
        return v
    if column in _INT:
        return int(v)
    return math.nan if v is None else float(v)
