"""Playing an evaluation's missing games: seeds in blocks, chunks for the workers, each chunk into the store.

:class:`Seeds` draws the game seeds of :func:`~nnsweeper.evaluation.game_seeds` block by
block; :func:`chunks` cuts the games a run's store lacks into chunks (runs of games of one
solver and board, or lockstep batches of a batched solver); :func:`run` sends them to the
workers through :func:`nnsweeper.parallel.imap` (loky, a Dask cluster, Ray) and writes each
chunk to the store as it comes back, in any order, with a progress bar that shows every
solver's running win rate. Nothing but a running tally stays in memory.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import os
import sys
import time
from collections.abc import Callable, Iterator

import numpy as np

from nnsweeper._version import __version__
from nnsweeper.parallel import effective_jobs, imap, machine

from .games import Board, SolverSetup, batched, play_games, play_lockstep
from .identity import code_digest
from .stats import wilson_interval

__all__ = ["BATCH_GAMES", "CHUNK_GAMES", "SEED_BLOCK", "SEED_HIGH", "Job", "Seeds", "Tally", "chunks",
           "machine", "play_chunk", "run"]

#: Upper end (exclusive) of the seed notebook's game seeds.
SEED_HIGH = 2**31 - 1
#: Most games one lockstep batch of a batched solver plays at once.
BATCH_GAMES = 1024
#: Most games in one chunk of a solver that plays game by game: a chunk is the unit of
#: work sent to a worker and written to the store, so a killed run replays at most
#: this many games per worker.
CHUNK_GAMES = 1000
#: Seeds drawn at a time (:class:`Seeds`): 512 KiB, whatever ``trials`` is.
SEED_BLOCK = 1 << 16


class Seeds:
    """The game seeds of :func:`game_seeds`, drawn block by block: any run of them in bounded memory.

    ``take(a, b)`` returns ``game_seeds(base_seed, n)[a:b]`` for any ``n >= b``. The
    seeds come from one generator drawn in blocks of :data:`SEED_BLOCK`, which
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
            self._block = self._rng.integers(0, SEED_HIGH, size=SEED_BLOCK, dtype=np.int64)
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


@dataclasses.dataclass
class Job:
    """One solver on one board: what plays, where its games are kept, and its running tally."""

    name: str
    solver: Callable
    record: bool  # call solver.play (guesses known) rather than solver(env, rng)
    board: Board
    games: object  # the store's job (store.py)


def chunks(jobs: list[Job], gaps: list[list[tuple[int, int]]],
            workers: int) -> Iterator[list[tuple[int, int, int]]]:
    """Every chunk of the games still to play, as ``(job, first game, end)`` segments, generated as needed.

    A chunk of a plain solver is a run of at most :data:`CHUNK_GAMES` games of one
    job. A batched solver (:func:`~nnsweeper.evaluation.games.batched`, recording)
    plays the jobs of its boards of one size together: their games, job after job,
    cut into lockstep batches of at most :data:`BATCH_GAMES` (and about eight per worker,
    so that the progress moves and the workers end together). Chunking never changes a
    game: each is a function of its solver, board and seed.
    """
    missing = sum(b - a for g in gaps for a, b in g)
    # Several chunks per worker balance the load.
    size = max(1, min(CHUNK_GAMES, math.ceil(missing / (8 * workers))))
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
        # Several batches per worker too: the progress moves (and the load balances) every
        # few seconds rather than once a worker ends its one batch.
        step = max(1, min(BATCH_GAMES, math.ceil(total / (8 * workers))))
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


def played_by(solver) -> tuple[str, dict]:
    """What plays where this runs: the digest of the playing code, and of the solver's weights.

    A worker reports it with every chunk, so that a worker with other code installed
    (a cluster's), or one that loaded a checkpoint replaced since the run began, cannot
    slip its games into the store (:func:`run` refuses them).
    """
    weights = getattr(solver, "weights", None)
    return code_digest(solver), (weights() if callable(weights) else {})


def play_chunk(tag, solver, segments, first_click: str, record: bool) -> tuple:
    """The games of one chunk (``segments``: (Board, seeds) pairs of one solver), one result each.

    Returns ``(tag, results, played_by(solver))``: results come back in any order, ``tag``
    says whose they are, and the last item what played them (checked by :func:`run`).
    """
    if len(segments) == 1 and not (record and batched(solver)):
        board, seeds = segments[0]
        results = [play_games(solver, board, first_click, seeds, record)]
    else:
        results = play_lockstep(solver, segments, first_click)
    return tag, results, played_by(solver)


def _check_played_by(job: Job, expected: tuple[str, dict], got: tuple[str, dict]) -> None:
    """Refuse a chunk that other code or other weights played than this run's (a worker's report)."""
    if got == expected:
        return
    from .store import StoreError

    if got[0] != expected[0]:
        raise StoreError(f"a worker plays other nnsweeper code (playing code {got[0][:12]}, this run's "
                         f"{expected[0][:12]}); its games of {job.name!r} were not kept: install the same "
                         f"nnsweeper everywhere the games are played")
    raise StoreError(f"a worker played {job.name!r} with other weights than this run's ({got[1]}, this "
                     f"run's {expected[1]}); its games were not kept: was a checkpoint replaced during the "
                     f"run? Every process must see the same checkpoint files")


class Tally:
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
        # The boards are played in turn: a solver's rate so far is over the boards it has played
        # yet (the sparse ones first), not a running estimate of its final pooled rate.
        return ("won so far, on the boards played yet: " + " | ".join(parts)) if parts else ""


def _time_left(games_left: int, since_first: float, games_since_first: int) -> str:
    """The time left at the pace since the first results came in (worker start-up and model loads
    excluded: they are done once), or what is awaited before there is a pace to go by."""
    if games_since_first <= 0 or since_first < 2.0:
        return "time left: measured once the first results are in"
    seconds = games_left * since_first / games_since_first
    return "about " + _duration(seconds) + " left"


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def run(jobs: list[Job], base_seed: int, trials: int, first_click: str, n_jobs: int, progress: bool,
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
    from tqdm.auto import tqdm

    workers = effective_jobs(n_jobs)
    gaps = [job.games.missing(trials) for job in jobs]
    left = [sum(b - a for a, b in g) for g in gaps]  # games each job still lacks
    tally = Tally()
    for job in jobs:
        tally.add(job.name, *job.games.tally(trials))
    if done is not None:
        for j in (j for j, n in enumerate(left) if n == 0):
            done(j)
    total = trials * len(jobs)
    stored = sum(n for _, n in tally.counts.values())
    if stored == total:
        return

    seeds = Seeds(base_seed)
    expected = [played_by(job.solver) for job in jobs]  # what this process would play with

    def calls():
        for segments in chunks(jobs, gaps, workers):
            job = jobs[segments[0][0]]
            yield (segments, job.solver, [(jobs[j].board, seeds.take(a, b)) for j, a, b in segments],
                   first_click, job.record)

    played, started, wall = 0, datetime.datetime.now(datetime.UTC), time.perf_counter()
    store_path = None if store is None else store.path

    def log(status: str) -> None:
        if store is not None and played:
            store.log_run({
                "started": started.isoformat(timespec="seconds"), "status": status,
                "games": played, "wall_seconds": round(time.perf_counter() - wall, 3),
                "workers": workers, "cpus": os.cpu_count(), "machine": machine(),
                "nnsweeper_version": __version__,
            })

    if progress:
        print(f"games: {total - stored:,} to play ({stored:,} recorded already) with {len(jobs)} "
              f"solver-board jobs on {workers} worker{'s' if workers > 1 else ''}; each worker first loads "
              "its solvers (the networks' weights: seconds)", file=sys.stderr, flush=True)
    # tqdm's own time left averages over the start-up too (a first estimate of hours for minutes of
    # work): the bar shows the pace since the first results instead.
    with tqdm(total=total, initial=stored, disable=not progress, unit="game", desc="games",
              dynamic_ncols=True, bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
              "[{elapsed}]{postfix}") as bar:
        # One worker: played here, in this process. Worker processes set the solvers
        # up (load their models) before their first task.
        setup = SolverSetup({id(job.solver): job.solver for job in jobs}.values())
        results = imap(play_chunk, calls(), 1 if workers == 1 else n_jobs, ordered=False,
                       worker_setup=setup or None)
        shown, first, first_played = 0.0, None, 0
        bar.set_postfix_str(_time_left(total - stored, 0.0, 0))
        try:
            for segments, parts, by in results:
                if first is None:
                    first, first_played = time.monotonic(), played + sum(b - a for _, a, b in segments)
                _check_played_by(jobs[segments[0][0]], expected[segments[0][0]], by)
                for (j, a, b), part in zip(segments, parts, strict=True):
                    jobs[j].games.write(a, part)
                    tally.add(jobs[j].name, int(part.won.sum()), b - a)
                    left[j] -= b - a
                    if left[j] == 0 and done is not None:
                        done(j)
                    played += b - a
                    bar.update(b - a)
                now = time.monotonic()
                if progress and now - shown > 0.5:
                    pace = _time_left(total - stored - played, now - first, played - first_played)
                    bar.set_postfix_str(f"{pace}; {tally}", refresh=False)
                    shown = now
        except KeyboardInterrupt:
            log("interrupted")
            if store_path is None:
                raise
            raise KeyboardInterrupt(
                f"interrupted: {stored + played} of {total} games are recorded in {os.fspath(store_path)!r}; "
                f"run the same command again to play the rest"
            ) from None
        except BaseException:  # a solver's error, a lost cluster: the games so far are kept
            log("failed")
            raise
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
        if progress:
            bar.set_postfix_str(str(tally), refresh=True)
    log("finished")
