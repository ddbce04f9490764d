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

from .games import Board, GameResults, SolverSetup, batched, play_games, play_lockstep
from .stats import wilson_interval
from .table import EvalTable, pack_outcomes

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


def _chunks(jobs, trials: int, size: int, workers: int) -> Iterator[list[tuple[int, int, int]]]:
    """Every chunk as its ``(job, first game, end)`` segments, job after job, generated as needed.

    A chunk of a plain solver is one job's run of ``size`` games. A batched solver
    (:func:`~nnsweeper.evaluation.games.batched`, recording) plays the jobs of its boards
    of one size together: their games, job after job, cut into lockstep batches of at
    most :data:`_BATCH_GAMES` (and enough batches to keep every worker busy).
    """
    done: set[int] = set()
    for j, (solver, record, board) in enumerate(jobs):
        if j in done:
            continue
        if not (record and batched(solver)):
            for a in range(0, trials, size):
                yield [(j, a, min(a + size, trials))]
            continue
        group = [k for k in range(j, len(jobs)) if jobs[k][0] is solver and jobs[k][1]
                 and (jobs[k][2].rows, jobs[k][2].cols) == (board.rows, board.cols)]
        done.update(group)
        games = [(k, g) for k in group for g in range(trials)]
        step = min(_BATCH_GAMES, math.ceil(len(games) / workers))
        for a in range(0, len(games), step):
            part = games[a:a + step]
            segments: list[tuple[int, int, int]] = []
            for k, g in part:
                if segments and segments[-1][0] == k:
                    segments[-1] = (k, segments[-1][1], g + 1)
                else:
                    segments.append((k, g, g + 1))
            yield segments


def _play_chunk(solver, segments, first_click: str, record: bool) -> list[GameResults]:
    """The games of one chunk (``segments``: (Board, seeds) pairs of one solver), one result each."""
    if len(segments) == 1 and not (record and batched(solver)):
        board, seeds = segments[0]
        return [play_games(solver, board, first_click, seeds, record)]
    return play_lockstep(solver, segments, first_click)


def _run(jobs, seeds: np.ndarray, first_click: str, n_jobs: int, progress: bool) -> Iterator[GameResults]:
    """Play every (solver, record, board) job on every seed.

    Yields each job's games (:class:`GameResults` in seed order) in job order, as
    soon as the last of them is played, so that only the jobs being played are held
    in memory; their ``setup_seconds`` add up what the job's chunks reported. Chunks
    are generated as the workers take them, never listed.
    """
    from tqdm.auto import tqdm

    workers = effective_jobs(n_jobs)
    trials = len(seeds)
    total = trials * len(jobs)
    # Several chunks per worker balance the load; each chunk is a whole number of
    # games, so chunking never changes a result. Batched solvers get large chunks:
    # a chunk is one lockstep batch.
    size = 1 if workers == 1 else max(1, min(64, math.ceil(total / (8 * workers))))

    def calls():
        for segments in _chunks(jobs, trials, size, workers):
            solver, record, _ = jobs[segments[0][0]]
            yield solver, [(jobs[j][2], seeds[a:b]) for j, a, b in segments], first_click, record

    with tqdm(total=total, disable=not progress, unit="game", desc="games") as bar:
        # One worker: played here, in this process. Worker processes set the solvers
        # up (load their models) before their first task.
        setup = SolverSetup({id(solver): solver for solver, _, _ in jobs}.values())
        done = imap(_play_chunk, calls(), 1 if workers == 1 else n_jobs, worker_setup=setup or None)
        # Chunks come in job order (a lockstep chunk may span several jobs), each job's
        # in seed order.
        open_jobs: dict[int, list] = {}  # job: [games, set-up seconds, games played]
        next_job = 0
        for segments, results in zip(_chunks(jobs, trials, size, workers), done, strict=True):
            for (j, a, b), chunk in zip(segments, results, strict=True):
                entry = open_jobs.setdefault(j, [GameResults.empty(trials), 0.0, 0])
                entry[0].put(a, chunk)
                entry[1] += chunk.setup_seconds
                entry[2] += b - a
                bar.update(b - a)
            while next_job in open_jobs and open_jobs[next_job][2] == trials:
                games, setup_seconds, _ = open_jobs.pop(next_job)
                yield dataclasses.replace(games, setup_seconds=setup_seconds)
                next_job += 1


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
    wins = [int(games.won.sum()) for games in _run(jobs, seeds, first_click, n_jobs, bool(progress))]
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
        every game's result in seed order (see :func:`~nnsweeper.evaluation.pack_outcomes`).
        Times per game (``mean_seconds``, ``median_seconds``) leave out the solvers'
        set-up (loading a model), which ``setup_seconds`` reports: every process that
        plays sets each model up once, before its games' clocks start, and the time
        goes to the first row that process played with that model.
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


def _summarise(name: str, board: Board, first_click: str, record: bool, games: GameResults) -> dict:
    """One table row from a job's :class:`GameResults` (in seed order)."""
    # Every figure is a float64 sum, mean or median over one field, the integer
    # fields first converted to float64 (one copy at a time: 8 bytes a game).
    won = games.won
    n, k = len(games), int(won.sum())
    low, high = wilson_interval(k, n)
    lost = ~won
    mean_seconds, median_seconds = float(games.seconds.mean()), float(np.median(games.seconds))
    calls = games.model_calls.astype(np.float64)
    model_calls = float(calls.mean()) if calls.any() else math.nan
    del calls
    picks = games.model_picks.astype(np.float64)
    model_safe_rate = (float(games.model_safe.astype(np.float64).sum() / picks.sum()) if picks.any()
                       else math.nan)
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
        "mean_guesses": float(games.guesses.mean()) if record else math.nan,
        "mean_cleared_lost": float(games.cleared[lost].mean()) if lost.any() else math.nan,
        "mean_seconds": mean_seconds,
        "median_seconds": median_seconds,
        "max_seconds": float(games.seconds.max()),
        "setup_seconds": games.setup_seconds,
        "model_calls": model_calls,
        "model_safe_rate": model_safe_rate,
        "outcomes": pack_outcomes(won),
    }
