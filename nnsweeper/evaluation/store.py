"""Where an evaluation keeps its finished games: in memory, or on disk in chunks that a rerun resumes.

An evaluation plays each solver on each board (a *job*) for games ``0 .. trials - 1``
of its seed stream (:func:`~nnsweeper.evaluation.game_seeds`). Workers send back
each chunk of games as a :class:`~nnsweeper.evaluation.games.GameResults`; the harness
hands it to the run's store and forgets it, so the memory of a run does not grow
with the number of games. The table is summarised from the store at the end.

:class:`GameStore` keeps the chunks on disk, one folder per job::

    OUT.games/
        store.json                      format, base seed, first-click rule
        runs.json                       each run: games played, wall time, workers, machine
        LOCK                            held by the run writing the store (removed as it ends)
        csp-30x16x99/
            job.json                    the job's experiment (below)
            000000000000-000000001000.npz   games [0, 1000): every figure of every game,
                                            and the experiment that played them

A job's games depend on its *experiment*: the solver's name and description, the
digest of the code that plays (:func:`~nnsweeper.evaluation.identity.code_digest`),
the digest of the bytes of every checkpoint it plays with, the board, the
first-click rule and the base seed; not on ``trials``: the first ``k`` seeds of a
stream never change, so a store also serves a later run with more games. Every chunk
records its experiment and its range of games, and every read checks them against
the run's, so a store never mixes two experiments: a rerun with another checkpoint
under the same path, other code, or a chunk copied in from another store is refused
with one line that names the difference and the way out (or, with
``on_change="replace"``, the job's old games are removed and played anew).

Each file is written under a temporary name, flushed to the disk and renamed (the
folder flushed too), so a killed run or a lost machine leaves only whole chunks, and
running the same evaluation again plays only the games no chunk holds. A damaged file
is refused with one line naming it and the way out that keeps every good game.
:class:`MemoryStore` has the same interface and keeps the chunks in memory (library
calls without a folder).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from nnsweeper.errors import NnsweeperError
from nnsweeper.fileio import atomic_path, exclusive_lock, leftovers, reader_error, write_text_atomic

from .games import Board, GameResults

__all__ = ["GameStore", "MemoryStore", "StoreError", "STORE_FORMAT", "ON_CHANGE", "held_games",
           "recorded_games"]

#: Version of the folder layout and chunk files; a store of another format is refused.
#: 2: every chunk records its experiment (format 1 chunks recorded nothing).
STORE_FORMAT = 2
#: What :class:`GameStore` does with a job whose recorded experiment differs from the run's:
#: refuse (one line naming the difference), or remove its games and play them anew.
ON_CHANGE = ("refuse", "replace")
_STORE_FILE = "store.json"
_JOB_FILE = "job.json"
_RUNS_FILE = "runs.json"
_LOCK_FILE = "LOCK"
_CHUNK = re.compile(r"^(\d{12})-(\d{12})\.npz$")
#: How each figure is written to a chunk file. Times are kept as float32 (a
#: microsecond is a tiny fraction of any game) and guesses, whole numbers or NaN, as
#: float32 too; everything else keeps the dtype of :class:`GameResults`.
_DISK_DTYPES = {"seconds": np.float32, "guesses": np.float32}


#: What reading a damaged chunk may raise: any exception of the reader. numpy, zipfile and zlib
#: raise many kinds (a zero-length file: EOFError; cut short: BadZipFile, zlib.error; one byte of
#: the zip's index changed: NotImplementedError for an unknown compression method, RuntimeError
#: for an entry marked encrypted; an array header that asks for exabytes: MemoryError), so no list
#: of types is complete. Only the reading of the file stands inside the ``try``, and a
#: :class:`StoreError` of the checks is raised before this is caught.
_DAMAGE = Exception


class StoreError(NnsweeperError):
    """A game store that this evaluation cannot use (another experiment's, damaged, or locked)."""


def _short(value) -> str:
    """A digest cut to 12 characters for a message; anything else as its repr."""
    if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value):
        return value[:12]
    return "none" if value is None else repr(value)


def _differences(old: dict, new: dict) -> str:
    """What differs between two experiments (a job's or a chunk's record), in words."""
    said = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if key == "code":
            said.append(f"other nnsweeper code played them (playing code {_short(a)}, this run's "
                        f"{_short(b)})")
        elif key == "weights" and isinstance(a, dict) and isinstance(b, dict):
            for name in sorted(set(a) | set(b)):
                if a.get(name) != b.get(name):
                    said.append(f"checkpoint {name!r} held other bytes (sha256 {_short(a.get(name))}, "
                                f"now {_short(b.get(name))})")
        elif key == "source":
            said.append(f"the solver's source differed (sha256 {_short(a)}, now {_short(b)})")
        else:
            said.append(f"its {key} {a!r} (this run's {b!r})")
    return "; ".join(said)


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

    def job(self, name: str, identity: dict, board: Board) -> _MemoryJob:
        """The chunks of solver ``name`` on ``board`` (created empty the first time).

        ``identity`` (:func:`~nnsweeper.evaluation.identity.solver_identity`) is not
        needed here: a store in memory holds the games of one run only.
        """
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


def _chunks(folder: Path) -> list[tuple[int, int]]:
    """The ``(first, end)`` of every finished chunk file in a job's folder, sorted."""
    out = []
    for entry in os.scandir(folder):
        m = _CHUNK.match(entry.name)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if b > a:
                out.append((a, b))
    return sorted(out)


def held_games(path, trials: int) -> dict[str, tuple[str | None, int]]:
    """What a game store on disk holds of games ``[0, trials)``, per job, read without opening it.

    For a progress line while another process writes the store: no lock is taken and
    nothing is checked (a chunk of another experiment counts until a run opens the
    store and refuses it). Returns, for each job folder (by its name, sorted), the
    solver its ``job.json`` names (None where that file is missing or unreadable) and
    how many of the games its finished chunks hold, each game once. Empty where
    ``path`` is no folder.
    """
    path = Path(path)
    out = {}
    for folder in sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []:
        try:
            solver = _read_json(folder / _JOB_FILE, way_out="").get("solver")
        except StoreError:  # not written yet, or damaged: a run that opens the store says so
            solver = None
        out[folder.name] = (solver, sum(hi - lo for _, _, lo, hi in _cover(_chunks(folder), trials)[0]))
    return out


class _DiskJob(_Job):
    """The chunks of one job in its folder; ``record`` is the experiment every chunk must carry."""

    def __init__(self, name: str, board: Board, folder: Path, record: dict):
        super().__init__(name, board)
        self.folder = folder
        self.record = record
        self._checked: set[tuple[int, int]] = set()  # chunks whose record was read and found right

    def chunks(self) -> list[tuple[int, int]]:
        return _chunks(self.folder)

    def _path(self, a: int, b: int) -> Path:
        return self.folder / f"{a:012d}-{b:012d}.npz"

    def write(self, a: int, part: GameResults) -> None:
        a, b = _check_chunk(a, part)
        if b == a:
            return
        arrays = {name: getattr(part, name).astype(_DISK_DTYPES.get(name, dtype), copy=False)
                  for name, dtype in GameResults.FIELDS}
        record = json.dumps({**self.record, "games": [a, b]}, sort_keys=True)
        with atomic_path(self._path(a, b)) as tmp:
            np.savez_compressed(tmp, setup_seconds=np.float64(part.setup_seconds), record=np.array(record),
                                **arrays)
        self._checked.add((a, b))

    def _check_record(self, z, a: int, b: int) -> None:
        """Refuse a chunk whose recorded experiment or range of games is not this job's."""
        if (a, b) in self._checked:
            return
        path = self._path(a, b)
        if "record" not in z.files:
            raise StoreError(f"chunk {os.fspath(path)!r} records no experiment (it was not written by "
                             f"this store); remove it and run again to play its games anew")
        try:
            record = json.loads(str(z["record"][()]))
        except (ValueError, TypeError) as e:
            raise StoreError(f"chunk {os.fspath(path)!r} is damaged (its record: {e}); remove it and run "
                             f"again to play its games anew") from None
        expected = {**self.record, "games": [a, b]}
        if record != expected:
            raise StoreError(f"chunk {os.fspath(path)!r} holds games of another experiment: "
                             f"{_differences(record if isinstance(record, dict) else {}, expected)}; "
                             f"remove it and run again to play its games anew")
        self._checked.add((a, b))

    def _load_won(self, a: int, b: int) -> np.ndarray:
        try:
            with open(self._path(a, b), "rb") as fh, np.load(fh, allow_pickle=False) as z:
                self._check_record(z, a, b)
                won = z["won"]
        except StoreError:
            raise
        except _DAMAGE:
            return self._load(a, b).won  # raises StoreError naming the damage
        if won.shape != (b - a,) or won.dtype != np.bool_:
            return self._load(a, b).won
        return won

    def _load(self, a: int, b: int) -> GameResults:
        path = self._path(a, b)
        try:
            # The file is opened here so that it is closed even when numpy finds it cut short.
            with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as z:
                self._check_record(z, a, b)
                arrays = {name: z[name].astype(dtype, copy=False) for name, dtype in GameResults.FIELDS}
                setup = float(z["setup_seconds"])
            part = GameResults(**arrays, setup_seconds=setup)
        except StoreError:
            raise
        except _DAMAGE as e:
            raise StoreError(f"chunk {os.fspath(path)!r} is damaged ({reader_error(e)}); remove it "
                             f"and run again to play its games anew") from None
        if len(part) != b - a:
            raise StoreError(f"chunk {os.fspath(path)!r} holds {len(part)} games, not {b - a}; remove "
                             f"it and run again to play its games anew")
        return part


def recorded_games(path, names, boards) -> int:
    """Games a game store at ``path`` holds of the solvers ``names`` on ``boards`` (each with
    ``rows``, ``cols`` and ``mines``), by its chunk files: what a run of them continues from
    (0 where there is no store). Reads no chunk."""
    total = 0
    for name in names:
        for board in boards:
            folder = Path(path) / _job_folder_name(name, board)
            if folder.is_dir():
                total += sum(b - a for a, b in _chunks(folder))
    return total


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
        for the same ``base_seed`` and ``first_click``.
    base_seed : int
        The seed of the games' seeds.
    first_click : str
        The games' first-click rule.
    version : str
        The nnsweeper version playing the games (recorded with each job).
    on_change : {"refuse", "replace"}, default "refuse"
        What to do with a job whose games another experiment played (another
        description, code or checkpoint bytes; :meth:`job`): refuse with one line
        naming the difference, or remove those games and play them anew.

    Raises
    ------
    StoreError
        ``path`` is a file, a folder that holds something else, a store of other
        games, a damaged store, or a store another process is writing (the lock is
        released when that process ends, however it ends).

    Notes
    -----
    Use it as a context manager (or call :meth:`close`) to release the lock.
    """

    def __init__(self, path, *, base_seed: int, first_click: str, version: str, on_change: str = "refuse"):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"game store {os.fspath(self.path)!r} exists and is not a folder")
        if on_change not in ON_CHANGE:
            raise ValueError(f"on_change must be one of {', '.join(ON_CHANGE)}; got {on_change!r}")
        self.on_change = on_change
        self.version = version
        self.meta = {"format": STORE_FORMAT, "base_seed": int(base_seed), "first_click": first_click}
        self._lock = exclusive_lock(self.path / _LOCK_FILE, what=f"game store {os.fspath(self.path)!r}",
                                    error=StoreError)
        self._lock.__enter__()
        try:
            self._open()
        except BaseException:
            self.close()
            raise
        self._jobs: dict[tuple, _DiskJob] = {}

    def _open(self) -> None:
        self._remove_leftovers()
        file = self.path / _STORE_FILE
        if file.exists():
            old = _read_json(file, way_out="remove it and run the same command again: every game is "
                                           "kept (each chunk records its experiment)")
            found = old.get("format")
            if isinstance(found, int) and not isinstance(found, bool) and found > STORE_FORMAT:
                raise StoreError(
                    f"game store {os.fspath(self.path)!r} has format {found}, newer than the format "
                    f"{STORE_FORMAT} this nnsweeper ({self.version}) reads: a newer nnsweeper wrote it; "
                    f"upgrade nnsweeper to continue it (its games are kept), or choose another output")
            if found != STORE_FORMAT:
                raise StoreError(
                    f"game store {os.fspath(self.path)!r} has format {old.get('format')!r}, not "
                    f"{STORE_FORMAT} (before format 2 its chunks recorded no experiment, so they cannot be "
                    f"checked); choose another output, or remove the folder to play its games anew")
            diff = sorted(k for k in self.meta if old.get(k) != self.meta[k])
            if diff:
                said = ", ".join(f"{k} {old.get(k)!r} (this run: {self.meta[k]!r})" for k in diff)
                raise StoreError(f"game store {os.fspath(self.path)!r} holds other games: its {said}; "
                                 f"choose another output, or remove the folder to start over")
            return
        # No store.json: a new folder, or a store whose store.json was removed (its jobs
        # are kept: every chunk records its experiment and is checked on reading).
        for entry in self.path.iterdir():
            if entry.name in (_LOCK_FILE, _RUNS_FILE):
                continue
            if not (entry.is_dir() and (entry / _JOB_FILE).exists()):
                raise StoreError(f"folder {os.fspath(self.path)!r} is not empty and holds no game store "
                                 f"(found {entry.name!r}); choose another output")
        write_text_atomic(file, json.dumps(self.meta, indent=1) + "\n")

    def _remove_leftovers(self) -> None:
        """Remove the temporary files a killed run left (atomic_path's), in the store and its jobs."""
        folders = [self.path, *(p for p in self.path.iterdir() if p.is_dir())] if self.path.is_dir() else []
        for folder in folders:
            for tmp in leftovers(folder):
                tmp.unlink(missing_ok=True)

    def job(self, name: str, identity: dict, board: Board) -> _DiskJob:
        """The chunks of solver ``name`` on ``board``, played by the experiment ``identity``.

        ``identity`` is :func:`~nnsweeper.evaluation.identity.solver_identity` of the
        solver (its description, the code digest, the digests of its checkpoints).
        When the store holds games of a solver of that name on that board played by
        another experiment, :class:`StoreError` names the difference, or (with
        ``on_change="replace"``) those games are removed to be played anew.
        """
        key = (name, board.rows, board.cols, board.mines)
        record = {"solver": name, **identity, "rows": board.rows, "cols": board.cols, "mines": board.mines,
                  "base_seed": self.meta["base_seed"], "first_click": self.meta["first_click"],
                  "format": STORE_FORMAT}
        if key in self._jobs and self._jobs[key].record == record:
            return self._jobs[key]
        folder = self.path / _job_folder_name(name, board)
        file = folder / _JOB_FILE
        if file.exists():
            old = _read_json(file, way_out="remove it and run the same command again: its chunks are kept "
                                           "and checked one by one (each records its experiment)")
            old = {k: v for k, v in old.items() if k != "nnsweeper_version"}
            if old != record:
                if self.on_change == "replace":
                    shutil.rmtree(folder)
                else:
                    raise StoreError(
                        f"game store {os.fspath(self.path)!r} holds games of {name!r} on {board.rows}x"
                        f"{board.cols} with {board.mines} mines played by another experiment: "
                        f"{_differences(old, record)}; remove {os.fspath(folder)!r} (or run with "
                        f"--replace-changed; in Python, on_change='replace') to play them anew, or choose "
                        f"another output")
        if not file.exists():
            folder.mkdir(parents=True, exist_ok=True)
            account = {**record, "nnsweeper_version": self.version}
            write_text_atomic(file, json.dumps(account, indent=1) + "\n")
        job = self._jobs[key] = _DiskJob(name, board, folder, record)
        return job

    def runs(self) -> list[dict]:
        """What each run that wrote to the store did (:meth:`log_run`), oldest first."""
        file = self.path / _RUNS_FILE
        if not file.exists():
            return []
        runs = _read_json(file, way_out="remove it and run the same command again: it only lists the "
                                        "past runs, every game is kept").get("runs", [])
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


def _read_json(path: Path, *, way_out: str) -> dict:
    """A JSON object from ``path``, or :class:`StoreError` naming the file and ``way_out``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StoreError(f"{os.fspath(path)!r} is damaged ({e}); {way_out}") from None
    if not isinstance(data, dict):
        raise StoreError(f"{os.fspath(path)!r} is damaged (not a JSON object); {way_out}")
    return data
