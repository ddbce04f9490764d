"""Where an evaluation keeps its finished games: in memory, or on disk in chunks that a rerun resumes.

An evaluation plays each solver on each board (a *job*) for games ``0 .. trials - 1``
of its seed stream (:func:`~nnsweeper.evaluation.game_seeds`). Workers send back
each chunk of games as a :class:`~nnsweeper.evaluation.games.GameResults`; the harness
hands it to the run's store and forgets it, so the memory of a run does not grow
with the number of games. The table is summarised from the store at the end.

:class:`GameStore` keeps the chunks on disk, one folder per job::

    OUT.games/
        store.json                      format, base seed, first-click rule, version
        runs.json                       each run: games played, wall time, workers, machine
        LOCK                            held by the run writing the store
        csp-30x16x99/
            job.json                    solver name, its description, the board
            000000000000-000000001000.npz   games [0, 1000): every figure of every game

Each chunk is written under a temporary name and renamed, so a killed run leaves
only whole chunks, and running the same evaluation again plays only the games no
chunk holds. A job's games depend on the solver, the board, the first-click rule and
the base seed only, not on ``trials``: the first ``k`` seeds of a stream never change,
so a store also serves a later run with more games. :class:`MemoryStore` has the
same interface and keeps the chunks in memory (library calls without a folder).
"""

from __future__ import annotations

import json
import os
import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from nnsweeper.errors import NnsweeperError
from nnsweeper.fileio import atomic_path, exclusive_lock, write_text_atomic

from .games import Board, GameResults

__all__ = ["GameStore", "MemoryStore", "StoreError", "STORE_FORMAT"]

#: Version of the folder layout and chunk files; a store of another format is refused.
STORE_FORMAT = 1
_STORE_FILE = "store.json"
_JOB_FILE = "job.json"
_RUNS_FILE = "runs.json"
_LOCK_FILE = "LOCK"
_CHUNK = re.compile(r"^(\d{12})-(\d{12})\.npz$")
#: How each figure is written to a chunk file. Times are kept as float32 (a
#: microsecond is a tiny fraction of any game) and guesses, whole numbers or NaN, as
#: float32 too; everything else keeps the dtype of :class:`GameResults`.
_DISK_DTYPES = {"seconds": np.float32, "guesses": np.float32}


class StoreError(NnsweeperError):
    """A game store that this evaluation cannot use (another run's, damaged, or locked)."""


def _check_chunk(a: int, part: GameResults) -> tuple[int, int]:
    if not isinstance(part, GameResults):
        raise TypeError(f"a chunk must be GameResults; got {type(part).__name__}")
    if isinstance(a, bool) or not isinstance(a, int | np.integer) or a < 0:
        raise ValueError(f"a chunk's first game must be a non-negative integer; got {a!r}")
    return int(a), int(a) + len(part)


def _to_disk(part: GameResults) -> GameResults:
    """``part`` as it reads back from a chunk file (times and guesses rounded to float32)."""
    arrays = {name: getattr(part, name) for name, _ in GameResults.FIELDS}
    for name, dtype in _DISK_DTYPES.items():
        arrays[name] = arrays[name].astype(dtype).astype(np.float64)
    return GameResults(**arrays, setup_seconds=part.setup_seconds)


def _cover(chunks: list[tuple[int, int]], trials: int) -> tuple[list[tuple[int, ...]], list[tuple[int, int]]]:
    """How the stored ``chunks`` (sorted ``(a, b)``) cover games ``[0, trials)``.

    Returns ``(used, missing)``: ``used`` holds ``(a, b, lo, hi)`` for every chunk
    that contributes games ``[lo, hi)`` (each game once, in order), ``missing`` the
    gaps as ``(a, b)``.
    """
    used, missing, pos = [], [], 0
    for a, b in chunks:
        if pos >= trials:
            break
        if b <= pos:
            continue
        if a > pos:
            missing.append((pos, min(a, trials)))
            pos = min(a, trials)
            if pos >= trials:
                break
        hi = min(b, trials)
        used.append((a, b, pos, hi))
        pos = hi
    if pos < trials:
        missing.append((pos, trials))
    return used, missing


class _Job:
    """The chunks of one job (a solver on a board); see :class:`GameStore` and :class:`MemoryStore`."""

    def __init__(self, name: str, board: Board):
        self.name = name
        self.board = board

    # Implemented by the two kinds of job.
    def chunks(self) -> list[tuple[int, int]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def write(self, a: int, part: GameResults) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _load(self, a: int, b: int) -> GameResults:  # pragma: no cover - abstract
        raise NotImplementedError

    def release(self) -> None:
        """Drop what the job holds in memory once it is summarised (nothing, on disk)."""

    def missing(self, trials: int) -> list[tuple[int, int]]:
        """The runs of games in ``[0, trials)`` that no chunk holds, as ``(first, end)``."""
        return _cover(self.chunks(), trials)[1]

    def done(self, trials: int) -> int:
        """How many of games ``[0, trials)`` are stored."""
        return trials - sum(b - a for a, b in self.missing(trials))

    def tally(self, trials: int) -> tuple[int, int]:
        """Games won and games stored among games ``[0, trials)``."""
        wins = games = 0
        for a, b, lo, hi in _cover(self.chunks(), trials)[0]:
            won = self._load_won(a, b)[lo - a:hi - a]
            wins, games = wins + int(won.sum()), games + hi - lo
        return wins, games

    def _load_won(self, a: int, b: int) -> np.ndarray:
        return self._load(a, b).won

    def read(self, trials: int) -> Iterator[GameResults]:
        """Games ``[0, trials)`` chunk by chunk, in seed order (all of them must be stored).

        A chunk's ``setup_seconds`` comes with the part of it that holds its first game.
        """
        used, missing = _cover(self.chunks(), trials)
        if missing:
            a, b = missing[0]
            raise StoreError(f"job {self.name!r} lacks games {a} to {b - 1} of the {trials} asked for")
        for a, b, lo, hi in used:
            part = self._load(a, b)
            if (lo, hi) != (a, b):
                arrays = {name: getattr(part, name)[lo - a:hi - a] for name, _ in GameResults.FIELDS}
                part = GameResults(**arrays, setup_seconds=part.setup_seconds if lo == a else 0.0)
            yield part


class _MemoryJob(_Job):
    def __init__(self, name: str, board: Board):
        super().__init__(name, board)
        self._parts: dict[tuple[int, int], GameResults] = {}

    def chunks(self) -> list[tuple[int, int]]:
        return sorted(self._parts)

    def write(self, a: int, part: GameResults) -> None:
        a, b = _check_chunk(a, part)
        self._parts[(a, b)] = _to_disk(part)

    def _load(self, a: int, b: int) -> GameResults:
        return self._parts[(a, b)]

    def release(self) -> None:
        """Let the games go (a finished, summarised job): only an in-memory job holds them."""
        self._parts.clear()


class MemoryStore:
    """A game store in memory: the chunks of each job, read back as :class:`GameStore` reads its files.

    Times and guesses are rounded to float32 as on disk, so a table does not depend
    on where its games were kept.
    """

    path = None

    def __init__(self):
        self._jobs: dict[tuple, _MemoryJob] = {}

    def job(self, name: str, description: str, board: Board) -> _MemoryJob:
        """The chunks of solver ``name`` on ``board`` (created empty the first time)."""
        key = (name, board.rows, board.cols, board.mines)
        if key not in self._jobs:
            self._jobs[key] = _MemoryJob(name, board)
        return self._jobs[key]

    def log_run(self, entry: dict) -> None:
        """Keep nothing: a store in memory lives for one run."""

    def runs(self) -> list[dict]:
        """None: a store in memory lives for one run."""
        return []

    def close(self) -> None:
        """Nothing to release (for symmetry with :class:`GameStore`)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _DiskJob(_Job):
    def __init__(self, name: str, board: Board, folder: Path):
        super().__init__(name, board)
        self.folder = folder

    def chunks(self) -> list[tuple[int, int]]:
        out = []
        for entry in os.scandir(self.folder):
            m = _CHUNK.match(entry.name)
            if m:
                a, b = int(m.group(1)), int(m.group(2))
                if b > a:
                    out.append((a, b))
        return sorted(out)

    def write(self, a: int, part: GameResults) -> None:
        a, b = _check_chunk(a, part)
        if b == a:
            return
        arrays = {name: getattr(part, name).astype(_DISK_DTYPES.get(name, dtype), copy=False)
                  for name, dtype in GameResults.FIELDS}
        with atomic_path(self.folder / f"{a:012d}-{b:012d}.npz") as tmp:
            np.savez_compressed(tmp, setup_seconds=np.float64(part.setup_seconds), **arrays)

    def _load_won(self, a: int, b: int) -> np.ndarray:
        try:
            path = self.folder / f"{a:012d}-{b:012d}.npz"
            with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as z:
                won = z["won"]
        except (OSError, ValueError, KeyError, zlib.error, zipfile.BadZipFile):
            return self._load(a, b).won  # raises StoreError naming the damage
        if won.shape != (b - a,) or won.dtype != np.bool_:
            return self._load(a, b).won
        return won

    def _load(self, a: int, b: int) -> GameResults:
        path = self.folder / f"{a:012d}-{b:012d}.npz"
        try:
            # The file is opened here so that it is closed even when numpy finds it cut short.
            with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as z:
                arrays = {name: z[name].astype(dtype, copy=False) for name, dtype in GameResults.FIELDS}
                setup = float(z["setup_seconds"])
            part = GameResults(**arrays, setup_seconds=setup)
        except (OSError, ValueError, KeyError, zlib.error, zipfile.BadZipFile) as e:
            raise StoreError(f"chunk {os.fspath(path)!r} is damaged ({e}); remove it and run again "
                             f"to play its games anew") from None
        if len(part) != b - a:
            raise StoreError(f"chunk {os.fspath(path)!r} holds {len(part)} games, not {b - a}; remove "
                             f"it and run again to play its games anew")
        return part


def _job_folder_name(name: str, board: Board) -> str:
    """A folder name for a job: the solver's name made safe for any file system, and the board."""
    safe = re.sub(r"[^A-Za-z0-9_.+-]", "_", name).lstrip(".") or "_"
    if safe != name:  # two names that clean up alike must not share a folder
        safe += "-" + format(zlib.crc32(name.encode()), "08x")
    return f"{safe[:80]}-{board.rows}x{board.cols}x{board.mines}"


class GameStore:
    """The finished games of an evaluation, on disk, in chunks that a rerun resumes.

    Parameters
    ----------
    path : str or os.PathLike
        The store's folder (created if new). An existing store must have been made
        for the same ``base_seed`` and ``first_click`` by the same version of nnsweeper.
    base_seed : int
        The seed of the games' seeds.
    first_click : str
        The games' first-click rule.
    version : str
        The nnsweeper version playing the games.

    Raises
    ------
    StoreError
        ``path`` is a file, a folder that holds something else, a store of other
        games, or a store another process is writing (the lock is released when that
        process ends, however it ends).

    Notes
    -----
    Use it as a context manager (or call :meth:`close`) to release the lock.
    """

    def __init__(self, path, *, base_seed: int, first_click: str, version: str):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"game store {os.fspath(self.path)!r} exists and is not a folder")
        meta = {"format": STORE_FORMAT, "base_seed": int(base_seed), "first_click": first_click,
                "nnsweeper_version": version}
        self._lock = exclusive_lock(self.path / _LOCK_FILE, what=f"game store {os.fspath(self.path)!r}",
                                    error=StoreError)
        self._lock.__enter__()
        try:
            self._open(meta)
        except BaseException:
            self.close()
            raise
        self._jobs: dict[tuple, _DiskJob] = {}

    def _open(self, meta: dict) -> None:
        file = self.path / _STORE_FILE
        if not file.exists():
            others = [p.name for p in self.path.iterdir() if p.name != _LOCK_FILE]
            if others:
                raise StoreError(f"folder {os.fspath(self.path)!r} is not empty and holds no game store "
                                 f"(found {others[0]!r}); choose another output")
            write_text_atomic(file, json.dumps(meta, indent=1) + "\n")
            return
        old = _read_json(file)
        diff = sorted(k for k in meta if old.get(k) != meta[k])
        if diff:
            said = ", ".join(f"{k} {old.get(k)!r} (this run: {meta[k]!r})" for k in diff)
            raise StoreError(f"game store {os.fspath(self.path)!r} holds other games: its {said}; "
                             f"choose another output, or remove the folder to start over")
        for tmp in self.path.glob("*/.*.npz"):  # left by a killed run (atomic_path's names)
            tmp.unlink(missing_ok=True)

    def job(self, name: str, description: str, board: Board) -> _DiskJob:
        """The chunks of solver ``name`` (described by ``description``) on ``board``.

        Raises :class:`StoreError` when the store holds games of a solver of that name
        described otherwise (other options or another model).
        """
        key = (name, board.rows, board.cols, board.mines)
        if key in self._jobs:
            return self._jobs[key]
        folder = self.path / _job_folder_name(name, board)
        meta = {"solver": name, "description": description, "rows": board.rows, "cols": board.cols,
                "mines": board.mines}
        file = folder / _JOB_FILE
        if file.exists():
            old = _read_json(file)
            if old != meta:
                diff = sorted(k for k in meta if old.get(k) != meta[k])
                said = "; ".join(f"{k} {old.get(k)!r}, this run's {meta[k]!r}" for k in diff)
                raise StoreError(f"game store {os.fspath(self.path)!r} holds games of another solver "
                                 f"named {name!r} ({said}); choose another output, or remove "
                                 f"{os.fspath(folder)!r} to play them anew")
        else:
            folder.mkdir(parents=True, exist_ok=True)
            write_text_atomic(file, json.dumps(meta, indent=1) + "\n")
        job = self._jobs[key] = _DiskJob(name, board, folder)
        return job

    def runs(self) -> list[dict]:
        """What each run that wrote to the store did (:meth:`log_run`), oldest first."""
        file = self.path / _RUNS_FILE
        if not file.exists():
            return []
        runs = _read_json(file).get("runs", [])
        return runs if isinstance(runs, list) else []

    def log_run(self, entry: dict) -> None:
        """Add a run's account (games played, wall time, workers, machine) to ``runs.json``, atomically."""
        runs = [*self.runs(), entry]
        write_text_atomic(self.path / _RUNS_FILE, json.dumps({"runs": runs}, indent=1) + "\n")

    def close(self) -> None:
        """Release the store's lock."""
        lock, self._lock = getattr(self, "_lock", None), None
        if lock is not None:
            lock.__exit__(None, None, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StoreError(f"{os.fspath(path)!r} is damaged ({e}); remove the folder to start over") from None
    if not isinstance(data, dict):
        raise StoreError(f"{os.fspath(path)!r} is damaged (not a JSON object); remove the folder to "
                         f"start over")
    return data

