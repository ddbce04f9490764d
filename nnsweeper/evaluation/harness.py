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

Here the arguments are checked and the table is made; the games a run still lacks are
played in chunks by :func:`~nnsweeper.evaluation.runner.run` into the run's store
(:mod:`~nnsweeper.evaluation.store`: a folder that a rerun continues from, or memory),
and each configuration's row is summarised from the store
(:func:`~nnsweeper.evaluation.rows.summarise`) as soon as its games are all in.

Times per game leave out the solvers' one-time set-up (a neural solver loading its
model): every process that plays does it before its games' clocks start, worker
processes as they start, and each row reports it apart, as ``setup_seconds``.
"""

from __future__ import annotations

import datetime
import itertools
import numbers
import os
from collections.abc import Callable, Iterable, Mapping

import numpy as np

from nnsweeper._version import __version__
from nnsweeper.errors import InvalidRulesError
from nnsweeper.errors import check_int as _check_int
from nnsweeper.game import FIRST_CLICK_RULES, PRESETS, Rules
from nnsweeper.parallel import check_n_jobs
from nnsweeper.seeds import check_seed_overlap

from .games import Board
from .identity import describe, solver_identity
from .rows import summarise
from .runner import SEED_HIGH, Job, Seeds, run
from .store import ON_CHANGE, GameStore, MemoryStore
from .table import EvalTable

__all__ = [
    "MAX_TRIALS",
    "MAX_GAMES",
    "MAX_TABLE_ROWS",
    "eval_solver_over_mines",
    "evaluate",
    "game_seeds",
]


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
    return rng_master.integers(0, SEED_HIGH, size=trials, dtype=np.int64)


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


def _open_store(store, base_seed: int, first_click: str, on_change: str = "refuse"):
    """The run's game store: a :class:`GameStore` at ``store``, or a :class:`MemoryStore` for None."""
    if on_change not in ON_CHANGE:
        raise ValueError(f"on_change must be one of {', '.join(ON_CHANGE)}; got {on_change!r}")
    if store is None:
        return MemoryStore()
    if not isinstance(store, str | os.PathLike):
        raise ValueError(f"store must be a folder path or None; got {store!r}")
    return GameStore(store, base_seed=base_seed, first_click=first_click, version=__version__,
                     on_change=on_change)


def _check_training_seeds(named: Mapping[str, Callable], datasets, base_seed: int, trials: int) -> list[str]:
    """Refuse evaluation seeds that a dataset or a solver's training data used; returns what was checked.

    The seeds are checked block by block (:class:`Seeds`), so any number of games fits in memory.
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
    seeds = Seeds(base_seed)
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
    first_click : {"safe", "zero", "none", "no-guess", "no-guess-fast"}, default="safe"
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
    jobs = [Job("solver", solver_fn, False, b, store.job("solver", {}, b)) for b in boards]
    wins: dict[int, int] = {}

    def count(j: int) -> None:  # keep a finished mine count's wins, not its games
        wins[j] = jobs[j].games.tally(trials)[0]
        jobs[j].games.release()

    run(jobs, base_seed, trials, first_click, n_jobs, bool(progress), done=count)
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
    on_change="refuse",
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
    first_click : {"safe", "zero", "none", "no-guess", "no-guess-fast"}, default="safe"
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
        The store is keyed by the experiment (solver name and options, the digest of
        the code that plays, the digest of every checkpoint's bytes, board,
        ``base_seed`` and ``first_click``; see :mod:`~nnsweeper.evaluation.store`),
        not by ``trials``: a run with more games reuses it. Every chunk of games
        records its experiment and is checked when read, so a table never mixes two
        experiments. Without a store, games are kept in memory until the table is made.
    on_change : {"refuse", "replace"}, default "refuse"
        What a ``store`` does with a solver's games that another experiment played
        (another description, other code, a checkpoint with other bytes): refuse with
        a :class:`~nnsweeper.evaluation.StoreError` naming the difference, or remove
        them and play them anew.

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
    identities = {name: solver_identity(fn) for name, fn in named.items()}
    with _open_store(store, base_seed, first_click, on_change) as kept:
        # Solvers with play() report a GameRecord (guesses); others only win or lose.
        jobs = [Job(name, named[name], callable(getattr(named[name], "play", None)), b,
                     kept.job(name, identities[name], b)) for name, b in keys]
        rows: dict[int, dict] = {}

        def finish(j: int) -> None:
            # Each job's games are summarised from the store, chunk by chunk, as soon as
            # they are all in; a store in memory then lets them go.
            rows[j] = {**summarise(jobs[j], first_click, trials), "base_seed": base_seed}
            jobs[j].games.release()

        run(jobs, base_seed, trials, first_click, n_jobs, bool(progress), store=kept, done=finish)
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
        "solvers": {name: describe(fn) for name, fn in named.items()},
        # What the games were played by: each solver's playing code digest and its checkpoints.
        "code": {name: ident["code"] for name, ident in identities.items()},
        "weights": {name: ident["weights"] for name, ident in identities.items() if ident["weights"]},
    }
    if runs:  # where the games were played: every run that wrote to the store
        metadata["runs"] = runs
    return EvalTable(rows_out, metadata)
