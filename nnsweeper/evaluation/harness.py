"""The evaluation harness: win rates of solvers over mine counts and boards, on fixed game seeds.

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

Games are played in chunks (:func:`~nnsweeper.evaluation.games.play_games`) through
:func:`nnsweeper.parallel.imap`; each configuration's results come back as a
:class:`~nnsweeper.evaluation.games.GameResults` and are summarised into a table row
before the next configuration is played.

Times per game leave out the solvers' one-time set-up (a neural solver loading its
model): every process that plays does it before its games' clocks start, worker
processes as they start, and each row reports it apart, as ``setup_seconds``.
"""

from __future__ import annotations

import dataclasses
import datetime
import itertools
import math
import numbers
import os
from collections.abc import Callable, Iterable, Iterator, Mapping

import numpy as np

from nnsweeper._version import __version__
from nnsweeper.errors import InvalidRulesError
from nnsweeper.errors import check_int as _check_int
from nnsweeper.game import FIRST_CLICK_RULES, PRESETS, Rules
from nnsweeper.parallel import check_n_jobs, effective_jobs, imap
from nnsweeper.seeds import check_seed_overlap

from .games import Board, SolverSetup, batched, play_games, play_lockstep
from .stats import wilson_interval
from .store import GameStore, MemoryStore
from .table import EvalTable

__all__ = [
    "MAX_TRIALS",
    "MAX_GAMES",
    "MAX_TABLE_ROWS",
    "eval_solver_over_mines",
    "evaluate",
    "game_seeds",
]

# Upper end (exclusive) of the seed notebook's game seeds.
_SEED_HIGH = 2**31 - 1

#: Most games per solver and configuration (``trials``). With a store on disk a run's
#: memory does not grow with it (seeds are drawn in blocks, chunks go to the store and
#: rows are summarised from it; measured: the same peak for 10**4 and 10**7 games);
#: without one the chunks are kept in memory (29 bytes a game). A row's packed
#: outcomes take 2.5 MB of JSON at the cap.
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


def _boards_from_mines(mines_list, rows, cols, first_click) -> list[Board]:
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
    return [Board(f"{rows}x{cols}", rows, cols, m) for m in counts]


def _boards_from_list(boards, first_click) -> list[Board]:
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
        out.append(Board(name, r, c, m))
    if not out:
        raise ValueError("boards must hold at least one board; got an empty sequence")
    return out


def _resolve_boards(mines_list, rows, cols, boards, first_click) -> list[Board]:
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
#: Most games in one chunk of a solver that plays game by game: a chunk is the unit of
#: work sent to a worker and written to the store, so a killed run replays at most
#: this many games per worker.
_CHUNK_GAMES = 1000
#: Seeds drawn at a time (:class:`_Seeds`): 512 KiB, whatever ``trials`` is.
_SEED_BLOCK = 1 << 16


class _Seeds:
    """The game seeds of :func:`game_seeds`, drawn block by block: any run of them in bounded memory.

    ``take(a, b)`` returns ``game_seeds(base_seed, n)[a:b]`` for any ``n >= b``. The
    seeds come from one generator drawn in blocks of :data:`_SEED_BLOCK`, which
    gives the same numbers as one draw of them all (numpy's bounded integers of this
    range take one 32-bit output of the bit generator per number, rejections
    included, whatever the size of each request). Runs asked in increasing order cost
    the draws between them; asking for an earlier run starts the generator again.
    """

    def __init__(self, base_seed: int):
        self.base_seed = base_seed
        self._restart()

    def _restart(self) -> None:
        self._rng = np.random.default_rng(self.base_seed)
        self._start = 0
        self._block = np.zeros(0, dtype=np.int64)

    def take(self, a: int, b: int) -> np.ndarray:
        if a < self._start:
            self._restart()
        out = []
        while a < b:
            end = self._start + len(self._block)
            if a < end:
                piece = self._block[a - self._start:b - self._start]
                out.append(piece)
                a += len(piece)
                continue
            self._start = end
            self._block = self._rng.integers(0, _SEED_HIGH, size=_SEED_BLOCK, dtype=np.int64)
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


@dataclasses.dataclass
class _Job:
    """One solver on one board: what plays, where its games are kept, and its running tally."""

    name: str
    solver: Callable
    record: bool  # call solver.play (guesses known) rather than solver(env, rng)
    board: Board
    games: object  # the store's job (store.py)


def _chunks(jobs: list[_Job], gaps: list[list[tuple[int, int]]],
            workers: int) -> Iterator[list[tuple[int, int, int]]]:
    """Every chunk of the games still to play, as ``(job, first game, end)`` segments, generated as needed.

    A chunk of a plain solver is a run of at most :data:`_CHUNK_GAMES` games of one
    job. A batched solver (:func:`~nnsweeper.evaluation.games.batched`, recording)
    plays the jobs of its boards of one size together: their games, job after job,
    cut into lockstep batches of at most :data:`_BATCH_GAMES` (and enough batches to
    keep every worker busy). Chunking never changes a game: each is a function of its
    solver, board and seed.
    """
    missing = sum(b - a for g in gaps for a, b in g)
    # Several chunks per worker balance the load.
    size = max(1, min(_CHUNK_GAMES, math.ceil(missing / (8 * workers))))
    done: set[int] = set()
    for j, job in enumerate(jobs):
        if j in done:
            continue
        if not (job.record and batched(job.solver)):
            for a0, b0 in gaps[j]:
                for a in range(a0, b0, size):
                    yield [(j, a, min(a + size, b0))]
            continue
        group = [k for k in range(j, len(jobs)) if jobs[k].solver is job.solver and jobs[k].record
                 and (jobs[k].board.rows, jobs[k].board.cols) == (job.board.rows, job.board.cols)]
        done.update(group)
        total = sum(b - a for k in group for a, b in gaps[k])
        step = max(1, min(_BATCH_GAMES, math.ceil(total / workers)))
        batch: list[tuple[int, int, int]] = []
        count = 0
        for k in group:
            for a, b in gaps[k]:
                while a < b:
                    take = min(b - a, step - count)
                    batch.append((k, a, a + take))
                    count, a = count + take, a + take
                    if count == step:
                        yield batch
                        batch, count = [], 0
        if batch:
            yield batch


def _play_chunk(tag, solver, segments, first_click: str, record: bool) -> tuple:
    """The games of one chunk (``segments``: (Board, seeds) pairs of one solver), one result each.

    Returns ``(tag, results)``: results come back in any order, and ``tag`` says whose they are.
    """
    if len(segments) == 1 and not (record and batched(solver)):
        board, seeds = segments[0]
        return tag, [play_games(solver, board, first_click, seeds, record)]
    return tag, play_lockstep(solver, segments, first_click)


class _Tally:
    """Games played and won per solver so far, for the progress bar."""

    def __init__(self):
        self.counts: dict[str, list[int]] = {}

    def add(self, name: str, wins: int, games: int) -> None:
        c = self.counts.setdefault(name, [0, 0])
        c[0] += wins
        c[1] += games

    def __str__(self) -> str:
        parts = []
        for name, (k, n) in self.counts.items():
            if n:
                low, high = wilson_interval(k, n)
                parts.append(f"{name} {100 * k / n:.2f}% [{100 * low:.2f}, {100 * high:.2f}]")
        return " | ".join(parts)


def _run(jobs: list[_Job], base_seed: int, trials: int, first_click: str, n_jobs: int, progress: bool,
         store=None, done: Callable[[int], None] | None = None) -> None:
    """Play the games of every job that its store lacks, writing each chunk to the store as it comes.

    Chunks are generated as the workers take them, never listed, and their results
    come back in any order; nothing but the running tally stays in memory. The
    progress bar shows games per second, the time left and every solver's running win
    rate with its 95% interval (over the games stored before this run too).
    ``done(j)`` is called once for every job as soon as all its games are stored (at
    once for jobs a store already holds), so that a caller keeping games in memory can
    summarise and drop a job while the others play.
    """
    import time as _time

    from tqdm.auto import tqdm

    workers = effective_jobs(n_jobs)
    gaps = [job.games.missing(trials) for job in jobs]
    left = [sum(b - a for a, b in g) for g in gaps]  # games each job still lacks
    tally = _Tally()
    for job in jobs:
        tally.add(job.name, *job.games.tally(trials))
    if done is not None:
        for j in (j for j, n in enumerate(left) if n == 0):
            done(j)
    total = trials * len(jobs)
    stored = sum(n for _, n in tally.counts.values())
    if stored == total:
        return

    seeds = _Seeds(base_seed)

    def calls():
        for segments in _chunks(jobs, gaps, workers):
            job = jobs[segments[0][0]]
            yield (segments, job.solver, [(jobs[j].board, seeds.take(a, b)) for j, a, b in segments],
                   first_click, job.record)

    played, started, wall = 0, datetime.datetime.now(datetime.UTC), _time.perf_counter()
    store_path = None if store is None else store.path

    def log(status: str) -> None:
        if store is not None and played:
            store.log_run({
                "started": started.isoformat(timespec="seconds"), "status": status,
                "games": played, "wall_seconds": round(_time.perf_counter() - wall, 3),
                "workers": workers, "cpus": os.cpu_count(), "machine": _machine(),
                "nnsweeper_version": __version__,
            })

    with tqdm(total=total, initial=stored, disable=not progress, unit="game", desc="games",
              dynamic_ncols=True) as bar:
        # One worker: played here, in this process. Worker processes set the solvers
        # up (load their models) before their first task.
        setup = SolverSetup({id(job.solver): job.solver for job in jobs}.values())
        results = imap(_play_chunk, calls(), 1 if workers == 1 else n_jobs, ordered=False,
                       worker_setup=setup or None)
        shown = 0.0
        try:
            for segments, parts in results:
                for (j, a, b), part in zip(segments, parts, strict=True):
                    jobs[j].games.write(a, part)
                    tally.add(jobs[j].name, int(part.won.sum()), b - a)
                    left[j] -= b - a
                    if left[j] == 0 and done is not None:
                        done(j)
                    played += b - a
                    bar.update(b - a)
                now = _time.monotonic()
                if progress and now - shown > 0.5:
                    bar.set_postfix_str(str(tally), refresh=False)
                    shown = now
        except KeyboardInterrupt:
            log("interrupted")
            if store_path is None:
                raise
            raise KeyboardInterrupt(
                f"interrupted: {stored + played} of {total} games are recorded in {os.fspath(store_path)!r}; "
                f"run the same command again to play the rest"
            ) from None
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
        if progress:
            bar.set_postfix_str(str(tally), refresh=True)
    log("finished")


def _machine() -> str:
    """The processor this process runs on, for the account of a run (its model name where known)."""
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _open_store(store, base_seed: int, first_click: str):
    """The run's game store: a :class:`GameStore` at ``store``, or a :class:`MemoryStore` for None."""
    if store is None:
        return MemoryStore()
    if not isinstance(store, str | os.PathLike):
        raise ValueError(f"store must be a folder path or None; got {store!r}")
    return GameStore(store, base_seed=base_seed, first_click=first_click, version=__version__)


def _check_training_seeds(named: Mapping[str, Callable], datasets, base_seed: int, trials: int) -> list[str]:
    """Refuse evaluation seeds that a dataset or a solver's training data used; returns what was checked.

    The seeds are checked block by block (:class:`_Seeds`), so any number of games fits in memory.
    """
    items = []
    if datasets is not None:
        dsets = [datasets] if isinstance(datasets, str | os.PathLike | Mapping) else list(datasets)
        items += [(d, "evaluation",
                   os.fspath(d) if not isinstance(d, Mapping) else "<manifest>") for d in dsets]
    for name, fn in named.items():
        # Solvers that learned from games (neural ones) carry their training seeds.
        learned = getattr(fn, "training_seeds", None)
        if learned:
            items.append((learned, f"evaluation (solver {name!r})", f"{name}: training data"))
    if not items:
        return []
    seeds = _Seeds(base_seed)
    step = 1 << 20
    for a in range(0, trials, step):
        block = seeds.take(a, min(trials, a + step))
        for manifest, what, _ in items:
            check_seed_overlap(manifest, block, what=what)
    return [label for _, _, label in items]


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
    n_jobs : int or None, default=1
        Worker processes (joblib; -1 for all cores; at most
        :func:`nnsweeper.parallel.max_jobs`; None: every worker of the active backend,
        such as a Dask cluster's). The result does not depend on it as long as the
        solver's moves depend only on the env and ``rng``.
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
    n_jobs = check_n_jobs(n_jobs, allow_none=True)
    boards = _resolve_boards(mines_list, rows, cols, None, first_click)
    _check_size(1, boards, trials)
    _check_starts([solver_fn], boards)
    base_seed = _check_int("base_seed", base_seed, 0)
    store = MemoryStore()
    jobs = [_Job("solver", solver_fn, False, b, store.job("solver", _describe(solver_fn), b)) for b in boards]
    wins: dict[int, int] = {}

    def count(j: int) -> None:  # keep a finished mine count's wins, not its games
        wins[j] = jobs[j].games.tally(trials)[0]
        jobs[j].games.release()

    _run(jobs, base_seed, trials, first_click, n_jobs, bool(progress), done=count)
    return np.array([wins[j] / trials for j in range(len(jobs))], dtype=float)


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
    store=None,
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
    n_jobs : int or None, default=1
        Worker processes (joblib; -1 for all cores; at most
        :func:`nnsweeper.parallel.max_jobs`; None: every worker of the active backend,
        such as a Dask cluster's, see :func:`nnsweeper.parallel.backend`). Results other
        than times do not depend on it, nor on the backend.
    progress : bool, default=False
        Show a progress bar.
    datasets : path, dict, or a list of them, optional
        Datasets the solvers learned from (folders, ``manifest.json`` files or
        manifests). Their game seeds must not be evaluated on: any overlap raises
        :class:`~nnsweeper.errors.SeedOverlapError` before a game is played. Solvers
        whose model records its training seeds (``solver.training_seeds``, as the
        neural solvers' checkpoints do) are checked the same way without being asked.
    store : path, optional
        A folder that keeps every finished game (a :class:`~nnsweeper.evaluation.store.GameStore`):
        chunks of games are written to it as they finish, and an evaluation whose
        store already holds some of its games plays only the others, so running the
        same evaluation again after an interruption (Ctrl-C, a kill, a lost machine)
        continues it and returns the table an uninterrupted run returns (times aside).
        The store is keyed by solver name and options, board, ``base_seed`` and
        ``first_click``, not by ``trials``: a run with more games reuses it. Without a
        store, games are kept in memory until the table is made.

    Returns
    -------
    EvalTable
        One row per solver and configuration, in the order given; see
        :attr:`EvalTable.COLUMNS`. Each row also holds ``base_seed`` and ``outcomes``,
        every game's result in seed order (see :func:`~nnsweeper.evaluation.pack_outcomes`).
        Times per game (``mean_seconds``, ``median_seconds``) leave out the solvers'
        set-up (loading a model), which ``setup_seconds`` reports: every process that
        plays sets each model up once, before its games' clocks start, and the time
        goes to the first row that process played with that model.
    """
    named = _resolve_solvers(solvers)
    trials = _check_trials(trials)
    n_jobs = check_n_jobs(n_jobs, allow_none=True)
    configs = _resolve_boards(mines_list, rows, cols, boards, first_click)
    _check_size(len(named), configs, trials)
    _check_starts(named.values(), configs)
    base_seed = _check_int("base_seed", base_seed, 0)
    checked = _check_training_seeds(named, datasets, base_seed, trials)
    keys = [(name, b) for name in named for b in configs]
    with _open_store(store, base_seed, first_click) as kept:
        # Solvers with play() report a GameRecord (guesses); others only win or lose.
        jobs = [_Job(name, named[name], callable(getattr(named[name], "play", None)), b,
                     kept.job(name, _describe(named[name]), b)) for name, b in keys]
        rows: dict[int, dict] = {}

        def summarise(j: int) -> None:
            # Each job's games are summarised from the store, chunk by chunk, as soon as
            # they are all in; a store in memory then lets them go.
            rows[j] = {**_summarise(jobs[j], first_click, trials), "base_seed": base_seed}
            jobs[j].games.release()

        _run(jobs, base_seed, trials, first_click, n_jobs, bool(progress), store=kept, done=summarise)
        rows_out = [rows[j] for j in range(len(jobs))]
        runs = kept.runs()
    if boards is not None:
        arguments = {"boards": [[b.name, b.rows, b.cols, b.mines] for b in configs]}
    else:
        arguments = {"rows": configs[0].rows, "cols": configs[0].cols,
                     "mines_list": [b.mines for b in configs]}
    arguments.update(trials=trials, base_seed=base_seed, first_click=first_click,
                     n_jobs=n_jobs)
    if checked:
        arguments["held_out_from"] = checked
    metadata = {
        "nnsweeper_version": __version__,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "arguments": arguments,
        "solvers": {name: _describe(fn) for name, fn in named.items()},
    }
    if runs:  # where the games were played: every run that wrote to the store
        metadata["runs"] = runs
    return EvalTable(rows_out, metadata)


def _median(chunks, n: int) -> float:
    """The median of the non-negative times in ``chunks()`` (an iterable of arrays, ``n`` values in all).

    Exact, as ``numpy.median`` of all of them, in bounded memory: a first pass counts
    the values by the top 16 bits of their float32 pattern (which orders non-negative
    float32 numbers as integers), a second keeps only the values in the one or two
    bins that hold the middle ranks.
    """
    counts = np.zeros(1 << 16, dtype=np.int64)
    for x in chunks():
        counts += np.bincount(x.astype(np.float32).view(np.uint32) >> 16, minlength=1 << 16)
    ranks = ((n - 1) // 2, n // 2)
    cum = np.cumsum(counts)
    bins = [int(np.searchsorted(cum, r, side="right")) for r in ranks]
    low = int(cum[bins[0] - 1]) if bins[0] else 0  # values before the first middle bin
    kept = []
    for x in chunks():
        keys = x.astype(np.float32).view(np.uint32) >> 16
        kept.append(x[(keys >= bins[0]) & (keys <= bins[1])])
    middle = np.sort(np.concatenate(kept))
    return float((middle[ranks[0] - low] + middle[ranks[1] - low]) / 2)


def _pack_stream(parts) -> str:
    """:func:`~nnsweeper.evaluation.pack_outcomes` of the concatenated boolean arrays ``parts``, streamed."""
    out, rest = [], np.zeros(0, dtype=bool)
    for won in parts:
        x = np.concatenate([rest, won])
        cut = len(x) - len(x) % 8
        out.append(np.packbits(x[:cut]).tobytes())
        rest = x[cut:]
    out.append(np.packbits(rest).tobytes())
    return b"".join(out).hex()


def _fsum(values) -> float:
    """``math.fsum`` of the arrays ``values``: exactly rounded, so the same whatever their chunks."""
    return math.fsum(itertools.chain.from_iterable(v.tolist() for v in values))


def _summarise(job: _Job, first_click: str, trials: int) -> dict:
    """One table row from a job's stored games, read chunk by chunk.

    Counts are summed as integers and real numbers with ``math.fsum`` (exactly
    rounded, whatever the order), so a row does not depend on how the games were cut
    into chunks or in which runs they were played. Memory stays bounded: the games
    are read a few times over instead of held.
    """
    def read():
        return job.games.read(trials)

    n = k = guesses = calls = picks = safe = lost = 0
    setup, seconds_max, model_asked = 0.0, 0.0, False
    for part in read():
        won = part.won
        n, k, lost = n + len(won), k + int(won.sum()), lost + int((~won).sum())
        if job.record:
            guesses += int(part.guesses.astype(np.int64).sum())
        seconds_max = max(seconds_max, float(part.seconds.max()))
        calls += int(part.model_calls.astype(np.int64).sum())
        model_asked = model_asked or bool(part.model_calls.any())
        picks += int(part.model_picks.astype(np.int64).sum())
        safe += int(part.model_safe.astype(np.int64).sum())
        setup += part.setup_seconds
    low, high = wilson_interval(k, n)
    board = job.board
    return {
        "solver": job.name,
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
        "mean_guesses": guesses / n if job.record else math.nan,
        "mean_cleared_lost": _fsum(p.cleared[~p.won] for p in read()) / lost if lost else math.nan,
        "mean_seconds": _fsum(p.seconds for p in read()) / n,
        "median_seconds": _median(lambda: (p.seconds for p in read()), n),
        "max_seconds": seconds_max,
        "setup_seconds": setup,
        "model_calls": calls / n if model_asked else math.nan,
        "model_safe_rate": safe / picks if picks else math.nan,
        "outcomes": _pack_stream(p.won for p in read()),
    }
