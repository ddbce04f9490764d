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
cleared in lost games and time per game.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import math
import numbers
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

from nnsweeper.datasets.seeds import check_seed_overlap
from nnsweeper.errors import InvalidRulesError
from nnsweeper.errors import check_int as _check_int
from nnsweeper.fileio import write_text_atomic
from nnsweeper.game import FIRST_CLICK_RULES, PRESETS, MinesweeperEnv, Rules
from nnsweeper.parallel import single_threaded_workers

__all__ = ["EvalTable", "eval_solver_over_mines", "evaluate", "game_seeds"]

# Upper end (exclusive) of the seed notebook's game seeds.
_SEED_HIGH = 2**31 - 1


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


def _check_n_jobs(n_jobs) -> int:
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(
            f"n_jobs must be a non-zero integer (1: no parallelism, -1: all cores); got {n_jobs!r}"
        )
    return int(n_jobs)


def game_seeds(base_seed: int, trials: int) -> np.ndarray:
    """The game seeds of an evaluation: the seed notebook's scheme.

    Parameters
    ----------
    base_seed : int
        Non-negative seed of the master generator.
    trials : int
        Number of games (seeds), at least 1.

    Returns
    -------
    ndarray of int64, shape (trials,)
        ``np.random.default_rng(base_seed).integers(0, 2**31 - 1, size=trials,
        dtype=np.int64)``. The first ``k`` seeds do not depend on ``trials``.
    """
    base_seed = _check_int("base_seed", base_seed, 0)
    trials = _check_int("trials", trials, 1)
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


def _boards_from_mines(mines_list, rows, cols, first_click) -> list[_Board]:
    if isinstance(mines_list, str) or not isinstance(mines_list, Iterable):
        raise ValueError(f"mines_list must be a sequence of mine counts; got {mines_list!r}")
    counts = [_check_count("each entry of mines_list", m) for m in mines_list]
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
    for b in boards:
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

def _play_games(solver, board: _Board, first_click: str, seeds: np.ndarray, record: bool):
    """Play one game per seed; returns per game (won, guesses, cleared, seconds, model calls,
    model picks, model picks that were safe)."""
    def env_of(sd):
        return MinesweeperEnv(
            rows=board.rows, cols=board.cols, mines=board.mines, seed=int(sd),
            first_click=first_click,
        )

    if record and _batched(solver):
        # Lockstep play: every board waiting on the model goes in one batch.
        records = solver.play_many([env_of(sd) for sd in seeds], [np.random.default_rng(sd) for sd in seeds])
        return [_game_tuple(rec, rec.seconds) for rec in records]
    out = []
    for sd in seeds:
        env = env_of(sd)
        rng = np.random.default_rng(sd)
        t0 = time.perf_counter()
        if record:
            rec = solver.play(env, rng)
            out.append(_game_tuple(rec, time.perf_counter() - t0))
        else:
            won = bool(solver(env, rng))
            seconds = time.perf_counter() - t0
            # The env is ours, so the share cleared is known even for plain callables.
            out.append((won, math.nan, env.revealed_safe / env.safe_cells, seconds, 0, 0, 0))
    return out


def _batched(solver) -> bool:
    """Whether a solver plays many games in lockstep (``play_many(envs, rngs)``)."""
    return callable(getattr(solver, "play_many", None))


def _game_tuple(rec, seconds: float) -> tuple:
    return (bool(rec.won), float(rec.guesses), float(rec.cleared), seconds,
            int(getattr(rec, "model_calls", 0)), int(getattr(rec, "model_picks", 0)),
            int(getattr(rec, "model_safe", 0)))


def _run(jobs, seeds: np.ndarray, first_click: str, n_jobs: int, progress: bool):
    """Play every (solver, record, board) job on every seed.

    Returns one list of per-game tuples per job, in job order and seed order.
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
    tasks = [
        (j, solver, board, record, seeds[s : s + step])
        for j, (solver, record, board) in enumerate(jobs)
        for step in [big if record and _batched(solver) else size]
        for s in range(0, trials, step)
    ]
    results: list[list] = [[] for _ in jobs]
    with tqdm(total=total, disable=not progress, unit="game", desc="games") as bar:
        if workers == 1:
            for j, solver, board, record, chunk in tasks:
                results[j].extend(_play_games(solver, board, first_click, chunk, record))
                bar.update(len(chunk))
        else:
            with single_threaded_workers():
                parallel = Parallel(n_jobs=n_jobs, return_as="generator")
                done = parallel(
                    delayed(_play_games)(solver, board, first_click, chunk, record)
                    for _, solver, board, record, chunk in tasks
                )
                for (j, *_), games in zip(tasks, done, strict=True):
                    results[j].extend(games)
                    bar.update(len(games))
    return results


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
        Games per mine count.
    base_seed : int, default=0
        Seed of the game seeds.
    first_click : {"safe", "zero", "none"}, default="safe"
        First-click rule of the games.
    n_jobs : int, default=1
        Worker processes (joblib; -1 for all cores). The result does not depend on it
        as long as the solver's moves depend only on the env and ``rng``.
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
    boards = _resolve_boards(mines_list, rows, cols, None, first_click)
    seeds = game_seeds(base_seed, trials)
    n_jobs = _check_n_jobs(n_jobs)
    jobs = [(solver_fn, False, b) for b in boards]
    results = _run(jobs, seeds, first_click, n_jobs, bool(progress))
    wins = [sum(g[0] for g in games) for games in results]
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
        Games per solver and configuration.
    base_seed : int, default=0
        Seed of the game seeds (:func:`game_seeds`); the games are those of
        :func:`eval_solver_over_mines` with the same arguments.
    first_click : {"safe", "zero", "none"}, default="safe"
        First-click rule of the games.
    n_jobs : int, default=1
        Worker processes (joblib; -1 for all cores). Results other than times do not
        depend on it.
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
        :attr:`EvalTable.COLUMNS`.
    """
    named = _resolve_solvers(solvers)
    configs = _resolve_boards(mines_list, rows, cols, boards, first_click)
    seeds = game_seeds(base_seed, trials)
    n_jobs = _check_n_jobs(n_jobs)
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
    rows_out = [
        _summarise(name, board, first_click, record, games)
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


def _wilson(wins: int, games: int) -> tuple[float, float]:
    ci = binomtest(wins, games).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def _summarise(name: str, board: _Board, first_click: str, record: bool, games) -> dict:
    won = np.array([g[0] for g in games], dtype=bool)
    guesses = np.array([g[1] for g in games], dtype=float)
    cleared = np.array([g[2] for g in games], dtype=float)
    seconds = np.array([g[3] for g in games], dtype=float)
    calls, picks, safe = (np.array([g[c] for g in games], dtype=float) for c in (4, 5, 6))
    n, k = len(games), int(won.sum())
    low, high = _wilson(k, n)
    lost = ~won
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
        "mean_guesses": float(guesses.mean()) if record else math.nan,
        "mean_cleared_lost": float(cleared[lost].mean()) if lost.any() else math.nan,
        "mean_seconds": float(seconds.mean()),
        "median_seconds": float(np.median(seconds)),
        "model_calls": float(calls.mean()) if calls.any() else math.nan,
        "model_safe_rate": float(safe.sum() / picks.sum()) if picks.any() else math.nan,
    }


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
    """

    COLUMNS = (
        "solver", "board", "rows", "cols", "mines", "density", "first_click", "games",
        "wins", "win_rate", "ci_low", "ci_high", "mean_guesses", "mean_cleared_lost",
        "mean_seconds", "median_seconds", "model_calls", "model_safe_rate",
    )
    #: Columns that tables written before they existed lack (read as NaN).
    _LATER = ("model_calls", "model_safe_rate")

    def __init__(self, rows, metadata=None):
        self.rows = [{**dict.fromkeys(self._LATER, math.nan), **dict(r)} for r in rows]
        for i, r in enumerate(self.rows):
            missing = [c for c in self.COLUMNS if c not in r]
            if missing:
                raise ValueError(f"row {i} of the table lacks column(s) {', '.join(missing)}")
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
        if solver not in self.solvers:
            raise ValueError(
                f"solver must be one of {', '.join(self.solvers)}; got {solver!r}"
            )
        return self.column("win_rate", solver=solver, **criteria)

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
        """Write the metadata and the rows as JSON (null for NaN), atomically."""
        doc = {
            "metadata": self.metadata,
            "columns": list(self.COLUMNS),
            "rows": [{c: None if _is_nan(r[c]) else r[c] for c in self.COLUMNS}
                     for r in self.rows],
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
        for r in doc["rows"]:
            if not isinstance(r, dict):
                raise ValueError(f"{path} is not an evaluation table: a row is not an object")
            rows.append({c: _from_json_value(c, v) for c, v in r.items()})
        return cls(rows, doc.get("metadata"))


def _is_nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _from_json_value(column: str, v):
    if column in _TEXT or column not in EvalTable.COLUMNS:
        return v
    if column in _INT:
        return int(v)
    return math.nan if v is None else float(v)
