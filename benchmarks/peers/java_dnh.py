"""DavidNHill's Java Minesweeper solver (the peer, ``java-dnh``) on nnsweeper's boards, game for game.

The peer's source has no licence file, so none of it is in this repository: clone it
yourself (github DavidNHill/Minesweeper) and name the clone with ``--source``. Only our
adapter (``benchmarks/peers/java/``: a game state that takes a given layout, and the small
programs that drive the peer's own bulk machinery with it) is ours. See ``docs/peers.md``.

::

    python benchmarks/peers/java_dnh.py build --source PATH          # javac of the system's JDK
    python benchmarks/peers/java_dnh.py own-boards --games 5000      # its bulk runner, its boards
    python benchmarks/peers/java_dnh.py check --games 300            # our boards, checked cell by cell
    python benchmarks/peers/java_dnh.py play --board expert --games 100000 --base-seed 2026 --out DIR
    python benchmarks/peers/java_dnh.py table --out DIR --into eval/results/record_expert_models.json
    python benchmarks/peers/java_dnh.py discord --out DIR --table TABLE.json --solver search --report PREFIX

``play`` exports the mine layout of each of nnsweeper's games (``Game(rules, seed)`` after
its first click in the corner, seeds of :func:`~nnsweeper.evaluation.game_seeds`), has the
peer play them with the settings of its reference bulk runs (SMALL_ANALYSIS, single thread,
NO_FLAG, its safe first click in the corner) through its own ``BulkController`` and
``BulkWorker``, and keeps each chunk of games (won, guesses, safe cells revealed, time) in
``DIR`` as soon as it ends, written atomically: running the same command again plays only
the games no chunk holds. Every game's board as the peer held it is checked against
nnsweeper's (a CRC-32 of every cell). ``table`` reads the chunks back into an evaluation
table row of the solver ``java-dnh`` and adds it to a table whose rows played the same games,
so that ``EvalTable.difference`` pairs it game by game. ``discord`` plays the games that the
peer and one of the table's solvers end differently again, both recording their moves, and
classifies the first guess where they part (:mod:`nnsweeper.evaluation.divergence`).

Unusable input stops a command with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gzip
import hashlib
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import nnsweeper
from nnsweeper.errors import NnsweeperError
from nnsweeper.evaluation import MAX_TRIALS, EvalTable, config_key, game_seeds, pack_outcomes, unpack_outcomes
from nnsweeper.evaluation.divergence import KINDS, Click, first_divergence, tally
from nnsweeper.evaluation.stats import wilson_interval
from nnsweeper.fileio import atomic_path, exclusive_lock, reader_error, write_text_atomic
from nnsweeper.game import Game, Rules, draw_layout, parse_boards
from nnsweeper.grid import neighbour_sum
from nnsweeper.parallel import machine

#: The solver's name in nnsweeper's tables.
PEER = "java-dnh"
#: Where the peer's code lives, as the repository it comes from names itself.
PROGRAM = "DavidNHill/Minesweeper"
#: The peer's source folders the adapter needs (no GUI, no outside jars), relative to its clone.
SOURCE_ROOTS = ("MinesweeperGameState/src", "Asynchronous/src", "MineSweeperSolver/src",
                "MinesweeperBulk/src")
HERE = Path(__file__).resolve().parent
#: Our adapter's Java source.
ADAPTER = HERE / "java"
#: Where ``build`` puts the classes unless told (``build/`` folders are ignored by git).
DEFAULT_BUILD = HERE / "build" / PEER
#: The peer's settings, as its reference bulk runs set them (``PeerSettings.java``).
SETTINGS = "SMALL_ANALYSIS, single thread, NO_FLAG"
#: The first click of every game, (row, col): nnsweeper's ``start="corner"``, the peer's (0, 0).
START = (0, 0)
#: The first-click rule of the games (the peer's standard game: a safe first click).
FIRST_CLICK = "safe"
#: The peer's final game states (``GameStateModel``): won, lost, unfinished (its worker gave up).
WON, LOST, UNFINISHED = 3, 2, 1
#: Version of run.json and of the chunk files.
FORMAT = 1
#: Most games per chunk (a chunk's layouts and results are held in memory).
MAX_CHUNK = 100_000
#: Most cells of a board: the chunks keep guesses and safe cells revealed as 16-bit numbers.
MAX_CELLS = 65_535
#: The peer's own expert games each JVM plays first, untimed: the first few hundred games of a JVM
#: take two to four times as long as later ones (the JIT compiler's start), which would otherwise
#: land in the times of the first chunk.
WARMUP_GAMES = 400
#: What the adapter's PlayLayouts prints when it is ready and when it has played a chunk.
_SAID = "nnsweeper-peers "
RUN_FILE = "run.json"
BUILD_FILE = "build.json"
LOCK_FILE = "LOCK"
_CHUNK = re.compile(r"^(\d{12})-(\d{12})\.npz$")
#: The chunk arrays and their dtypes: whether each game was won, the peer's count of guesses
#: (its first click excluded), the safe cells revealed when it ended, its time in microseconds.
CHUNK_FIELDS = (("won", np.bool_), ("guesses", np.uint16), ("revealed", np.uint16), ("micros", np.uint32))
#: The keys of run.json that say which games and which peer; a chunk records them all.
IDENTITY = ("format", "peer", "board", "rows", "cols", "mines", "first_click", "start", "base_seed",
            "sources", "commit", "adapter", "settings")


class PeerError(NnsweeperError):
    """Unusable input to the peer's harness: a source, a build, a run folder, a chunk or a table."""


# ------------------------------------------------------------------ boards
@dataclass(frozen=True)
class PeerBoard:
    """One board: its name in tables (a preset's name or ``RxC``), rows, columns and mines."""

    name: str
    rows: int
    cols: int
    mines: int

    @property
    def rules(self) -> Rules:
        return Rules(self.rows, self.cols, self.mines, FIRST_CLICK)

    @property
    def safe_cells(self) -> int:
        return self.rows * self.cols - self.mines


def board_arg(text: str) -> PeerBoard:
    """An argparse type: one board in nnsweeper's syntax (``expert``, ``16x30:99``)."""
    try:
        found = parse_boards(text, first_click=FIRST_CLICK)
    except NnsweeperError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if len(found) != 1:
        raise argparse.ArgumentTypeError(f"expected one board such as expert or 16x30:99; {text!r} names "
                                         f"{len(found)}")
    return PeerBoard(*found[0])


# ---------------------------------------------------------------- building
def source_roots(source: str | os.PathLike) -> list[Path]:
    """The peer's source folders in the clone ``source``, each checked to hold Java files."""
    root = Path(source)
    if not root.is_dir():
        raise PeerError(f"--source must be a folder holding a clone of github {PROGRAM}; got {str(root)!r}")
    out = []
    for rel in SOURCE_ROOTS:
        folder = root / rel
        if not folder.is_dir() or not any(folder.rglob("*.java")):
            raise PeerError(f"--source {str(root)!r} is not a clone of github {PROGRAM}: it lacks the "
                            f"Java sources in {rel}/")
        out.append(folder)
    return out


def _files_digest(folders: Sequence[Path], base: Path) -> str:
    """SHA-256 of the ``.java`` files under ``folders``: each path relative to ``base``, then its bytes."""
    h = hashlib.sha256()
    for path in sorted(p for f in folders for p in f.rglob("*.java")):
        h.update(path.relative_to(base).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def adapter_digest() -> str:
    """SHA-256 of our adapter's Java source."""
    return _files_digest([ADAPTER], ADAPTER)


def _commit(source: Path) -> str | None:
    """The clone's commit (``git rev-parse HEAD``), or None when it is no git checkout or git is missing."""
    git = shutil.which("git")
    if git is None or not (source / ".git").exists():
        return None
    done = subprocess.run([git, "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True)
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", commit) else None


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise PeerError(f"{name} is not on PATH: install a JDK from the system's packages (Debian: "
                        f"apt-get install default-jdk-headless)")
    return path


def _version(tool: str) -> str:
    """The first line ``TOOL -version`` prints (``javac 17.0.15``, ``openjdk version "17.0.15" ...``)."""
    done = subprocess.run([tool, "-version"], capture_output=True, text=True)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def build(source: str | os.PathLike, out: str | os.PathLike = DEFAULT_BUILD) -> dict:
    """Compile the peer's sources in the clone ``source`` and our adapter into ``out``.

    ``javac --release 8`` of the system's JDK; the classes go to ``out/classes`` and what was
    built (the clone's commit, a digest of its sources and of the adapter's, the JDK's
    version) to ``out/build.json``. The new build replaces an old one only once it is whole.

    Returns
    -------
    dict
        What ``build.json`` holds.
    """
    source = Path(source).resolve()
    roots = source_roots(source)
    javac = _tool("javac")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    files = sorted(str(p) for f in [*roots, ADAPTER] for p in f.rglob("*.java"))
    new = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", dir=new, delete=False) as listing:
            listing.write("\n".join(f'"{f}"' for f in files) + "\n")  # javac @file: one quoted path a line
        done = subprocess.run([javac, "--release", "8", "-encoding", "UTF-8", "-nowarn", "-d",
                               str(new / "classes"), f"@{listing.name}"], capture_output=True, text=True)
        os.unlink(listing.name)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            first = said[0] if said else f"exit status {done.returncode}"
            raise PeerError(f"javac failed on the sources of {str(source)!r}: {first}")
        info = {"format": FORMAT, "peer": PEER, "program": PROGRAM, "commit": _commit(source),
                "sources": _files_digest(roots, source), "adapter": adapter_digest(),
                "javac": _version(javac), "files": len(files),
                "built": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}
        write_text_atomic(new / BUILD_FILE, json.dumps(info, indent=2) + "\n")
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old."))
            os.replace(out, old / "build")
        os.replace(new, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    return info


def load_build(folder: str | os.PathLike = DEFAULT_BUILD) -> dict:
    """What ``build`` made in ``folder`` (its ``build.json``, with ``classes`` its classes' folder).

    Raises
    ------
    PeerError
        No build there, a build of an older adapter, or a damaged ``build.json``.
    """
    folder = Path(folder)
    path = folder / BUILD_FILE
    if not path.is_file() or not (folder / "classes").is_dir():
        raise PeerError(f"no build of the peer in {str(folder)!r}: run `python benchmarks/peers/java_dnh.py "
                        f"build --source PATH` with PATH your clone of github {PROGRAM}")
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise PeerError(f"{str(path)!r} is damaged ({reader_error(e)}); build again") from None
    if not isinstance(info, dict) or info.get("format") != FORMAT or info.get("peer") != PEER:
        raise PeerError(f"{str(path)!r} is not a build of this harness (format {FORMAT}); build again")
    if info.get("adapter") != adapter_digest():
        raise PeerError(f"the build in {str(folder)!r} was made from another version of the adapter "
                        f"(benchmarks/peers/java/); build again")
    return {**info, "classes": str(folder / "classes")}


def _java_command(info: dict, main: str, *args: str) -> list[str]:
    """The command line of one of the adapter's programs on the build ``info``."""
    return [_tool("java"), "-XX:+UseSerialGC", "-cp", info["classes"], f"nnsweeper.peers.{main}", *args]


def _failure(main: str, status: int, stderr: str) -> PeerError:
    """A program of the adapter's that failed, with its own line of why (else its last line)."""
    said = [line for line in stderr.splitlines() if line.strip()]
    why = next((line for line in said if line.startswith("nnsweeper.peers.")), said[-1] if said else "")
    return PeerError(f"the peer's {main} failed (exit status {status}): {why.strip()}")


def _java(info: dict, main: str, *args: str) -> subprocess.CompletedProcess:
    """Run one of the adapter's programs on the build ``info`` to its end."""
    done = subprocess.run(_java_command(info, main, *args), capture_output=True, text=True)
    if done.returncode != 0:
        raise _failure(main, done.returncode, done.stderr)
    return done


# ----------------------------------------------------------------- layouts
@dataclass(frozen=True)
class Layouts:
    """The mine layouts of a run of nnsweeper's games, after their first click in the corner.

    ``tiles[k]`` are game ``first_game + k``'s mines as flat indices ``row * cols + col``
    (the peer's ``y * width + x``), ascending; ``boards[k]`` is that game's ``Game.board``
    (int8, -1 for a mine, else the number of neighbouring mines).
    """

    first_game: int
    seeds: np.ndarray
    tiles: np.ndarray
    boards: np.ndarray

    def __len__(self) -> int:
        return len(self.seeds)

    def crc(self) -> np.ndarray:
        """CRC-32 of each board's bytes, row by row (the peer's ``boardCrc``)."""
        return np.array([zlib.crc32(b.tobytes()) for b in self.boards], dtype=np.uint32)

    def cells(self, k: int) -> str:
        """Game ``k``'s board as the peer writes it: ``*`` a mine, else the digit, row by row."""
        return "".join("*" if v < 0 else str(v) for v in self.boards[k].ravel().tolist())


def export_layouts(board: PeerBoard, seeds: np.ndarray, first_game: int = 0) -> Layouts:
    """The layouts of the games of ``seeds`` as nnsweeper plays them: each ``Game(rules, seed)``
    after its first click at :data:`START` (where ``start="corner"`` clicks first)."""
    rules = board.rules
    n = len(seeds)
    tiles = np.zeros((n, board.mines), dtype=np.int32)
    boards = np.zeros((n, board.rows, board.cols), dtype=np.int8)
    for k, sd in enumerate(seeds):
        game = Game(rules, int(sd))
        game.reveal(*START)
        tiles[k] = np.flatnonzero(game.mine_layout().ravel())
        boards[k] = game.board
    return Layouts(first_game, np.asarray(seeds, dtype=np.int64), tiles, boards)


def _layout_head(board: PeerBoard) -> list[str]:
    """The first lines of a layout file of ``board``: its format, the board (width first), the first click."""
    row, col = START
    return [f"nnsweeper-layouts {FORMAT}", f"board {board.cols} {board.rows} {board.mines}",
            f"start {col} {row}"]


def read_layouts(text: str, board: PeerBoard) -> Layouts:
    """The layouts of a layout file (the adapter's ``OwnBoards`` writes the peer's own games so),
    their boards counted here. Raises :class:`PeerError` for a file of another form or board."""
    lines = text.splitlines()
    head = _layout_head(board)
    if lines[:3] != head or len(lines) < 4 or lines[3] != f"games {len(lines) - 4}":
        raise PeerError(f"a layout file of {board.name} must begin {head!r} and name its games; it begins "
                        f"{lines[:4]!r}")
    try:
        fields = np.array([[int(x) for x in line.split()] for line in lines[4:]], dtype=np.int64)
    except ValueError:
        raise PeerError("a layout file's game lines must hold integers only") from None
    n = len(lines) - 4
    if fields.shape != (n, 2 + board.mines) or not np.array_equal(fields[:, 0], np.arange(n)):
        raise PeerError(f"a layout file's game lines must be INDEX SEED and {board.mines} tiles, numbered "
                        f"from 0")
    tiles = fields[:, 2:].astype(np.int32)
    mine = np.zeros((n, board.rows * board.cols), dtype=bool)
    np.put_along_axis(mine, tiles, True, axis=1)
    mine = mine.reshape(n, board.rows, board.cols)
    boards = np.where(mine, -1, neighbour_sum(mine)).astype(np.int8)
    return Layouts(0, fields[:, 1], tiles, boards)


def layouts_text(board: PeerBoard, layouts: Layouts) -> str:
    """The layout file the adapter's ``PlayLayouts`` reads (its format in ``PlayLayouts.java``)."""
    head = [*_layout_head(board), f"games {len(layouts)}"]
    body = [f"{layouts.first_game + k} {int(sd)} {' '.join(map(str, layouts.tiles[k].tolist()))}"
            for k, sd in enumerate(layouts.seeds)]
    return "\n".join([*head, *body]) + "\n"


# ----------------------------------------------------------------- results
@dataclass(frozen=True)
class PeerGames:
    """The peer's results of a run of games, one entry per game in order.

    ``state`` the peer's final game state (:data:`WON`, :data:`LOST` or :data:`UNFINISHED`),
    ``guesses`` its count of guesses, ``revealed`` the safe cells revealed, ``nanos`` the
    game's time, ``cells`` (when asked for) each board as the peer held it, ``moves`` (when
    asked for) each game's clicks as :class:`~nnsweeper.evaluation.divergence.Click` (row,
    col), each marked certain when the peer knew the cell was safe.
    """

    state: np.ndarray
    guesses: np.ndarray
    revealed: np.ndarray
    nanos: np.ndarray
    cells: list[str] | None = None
    moves: list[list[Click]] | None = None

    def __len__(self) -> int:
        return len(self.state)

    @property
    def won(self) -> np.ndarray:
        return self.state == WON


def parse_moves(text: str, board: PeerBoard, game: str) -> list[Click]:
    """The peer's actions of one game (``x,y,action,certain`` separated by ``;``) as clicks.

    Flags (action 3) reveal nothing and are left out.

    Raises
    ------
    PeerError
        An action of another form, off the board, or a clear-around (action 2: the
        peer's bulk play without flags never asks for one).
    """
    out = []
    for item in text.split(";"):
        f = item.split(",")
        if len(f) != 4 or not all(x.isdigit() for x in f):
            raise PeerError(f"{game}: the peer's action {item[:40]!r} is not x,y,action,certain")
        x, y, action, certain = map(int, f)
        if not (x < board.cols and y < board.rows) or action not in (1, 2, 3) or certain > 1:
            raise PeerError(f"{game}: the peer's action {item!r} is off the {board.name} board or unknown")
        if action == 2:
            raise PeerError(f"{game}: the peer cleared around ({x}, {y}); its play without flags never does")
        if action == 1:
            out.append(Click((y, x), bool(certain)))
    return out


def parse_results(text: str, board: PeerBoard, layouts: Layouts, *, cells: bool = False,
                  moves: bool = False) -> PeerGames:
    """Read ``PlayLayouts``'s results of ``layouts`` and check them game by game.

    Raises
    ------
    PeerError
        A header or line of another form, games missing or out of order, a state other than
        won, lost or unfinished, counts out of range, a won game with safe cells left, or a
        board (its CRC-32, and with ``cells`` every cell) other than nnsweeper's game's: each
        naming the game and its seed.
    """
    lines = text.splitlines()
    n = len(layouts)
    if lines[:2] != [f"nnsweeper-peer-results {FORMAT}", f"games {n}"] or len(lines) != n + 2:
        raise PeerError(f"the peer's results are not those of {n} games (they begin {lines[:2]!r} and hold "
                        f"{max(len(lines) - 2, 0)} game lines)")
    fields = 6 + cells + moves
    state, guesses, revealed, nanos = (np.zeros(n, dtype=np.int64) for _ in range(4))
    crc = np.zeros(n, dtype=np.int64)
    boards: list[str] = []
    clicks: list[list[Click]] = []
    for k, line in enumerate(lines[2:]):
        f = line.split(" ")
        game = f"game {layouts.first_game + k} (seed {int(layouts.seeds[k])})"
        if len(f) != fields or not all(x.lstrip("-").isdigit() for x in f[:6]):
            raise PeerError(f"the peer's line of {game} is not INDEX STATE GUESSES REVEALED NANOS CRC"
                            f"{' BOARD' if cells else ''}{' MOVES' if moves else ''}: {line[:80]!r}")
        index, state[k], guesses[k], revealed[k], nanos[k], crc[k] = map(int, f[:6])
        if index != layouts.first_game + k:
            raise PeerError(f"the peer's results are out of order: game {index} where {game} belongs")
        if state[k] not in (WON, LOST, UNFINISHED):
            raise PeerError(f"{game}: the peer's final state must be won (3), lost (2) or unfinished (1); "
                            f"got {state[k]}")
        safe = board.safe_cells
        if not 0 <= revealed[k] <= safe or (state[k] == WON) != (revealed[k] == safe):
            raise PeerError(f"{game}: the peer revealed {revealed[k]} of {safe} safe cells, which does not "
                            f"fit its state {state[k]}")
        if not 0 <= guesses[k] <= board.safe_cells or nanos[k] < 0:
            raise PeerError(f"{game}: {guesses[k]} guesses and {nanos[k]} ns are out of range")
        if cells:
            boards.append(f[6])
        if moves:
            clicks.append(parse_moves(f[-1], board, game))
    expected = layouts.crc()
    for k in np.flatnonzero(crc != expected):
        raise PeerError(f"game {layouts.first_game + k} (seed {int(layouts.seeds[k])}): the peer played "
                        f"another board than nnsweeper's game (CRC-32 {crc[k]}, nnsweeper's {expected[k]})")
    for k, held in enumerate(boards):
        ours = layouts.cells(k)
        if held != ours:
            i = next((i for i, (x, y) in enumerate(zip(held, ours, strict=False)) if x != y),
                     min(len(held), len(ours)))
            raise PeerError(f"game {layouts.first_game + k} (seed {int(layouts.seeds[k])}): the peer's board "
                            f"differs from nnsweeper's at row {i // board.cols}, col {i % board.cols}")
    return PeerGames(state, guesses, revealed, nanos, boards if cells else None, clicks if moves else None)


class PeerProcess:
    """The adapter's ``PlayLayouts`` in one JVM that plays chunk after chunk (a context manager).

    It plays ``warmup`` of the peer's own games first (:data:`WARMUP_GAMES`), so that the
    times of the games it plays for us are those of compiled code, and keeps that code for every
    later chunk. The peer's own messages on its standard error go to a temporary file, whose
    line naming the failure is said if the JVM ends early.
    """

    def __init__(self, info: dict, warmup: int = WARMUP_GAMES):
        self._err = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        self._proc = subprocess.Popen(_java_command(info, "PlayLayouts", str(warmup)), stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._err, text=True, bufsize=1)
        self._wait("ready")

    def __enter__(self) -> PeerProcess:
        return self

    def __exit__(self, kind, *exc) -> None:
        self.close(kill=kind is not None)  # an interrupted run does not wait for the chunk in play

    def _wait(self, word: str) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:  # the peer prints its own lines too (its worker's cache statistics)
            if line.startswith(_SAID) and line[len(_SAID):].strip() == word:
                return
        status = self._proc.wait()
        self._err.seek(0)
        raise _failure("PlayLayouts", status, self._err.read())

    def play(self, board: PeerBoard, layouts: Layouts, *, cells: bool = False,
             moves: bool = False) -> PeerGames:
        """Have the peer play ``layouts``; its results, checked (:func:`parse_results`), with each
        board (``cells``) and each game's clicks (``moves``)."""
        assert self._proc.stdin is not None
        with tempfile.TemporaryDirectory(prefix="java-dnh-") as tmp:
            lay, res = Path(tmp) / "layouts.txt", Path(tmp) / "results.txt"
            lay.write_text(layouts_text(board, layouts), encoding="utf-8")
            self._proc.stdin.write(f"play\t{lay}\t{res}\t{int(cells) | 2 * int(moves)}\n")
            self._proc.stdin.flush()
            self._wait("done")
            text = res.read_text(encoding="utf-8")
        return parse_results(text, board, layouts, cells=cells, moves=moves)

    def close(self, *, kill: bool = False) -> None:
        """End the JVM (its input closed; killed with ``kill`` or if it does not end) and remove its
        error file."""
        if self._proc.poll() is None:
            try:
                if kill:
                    raise OSError("killed")
                self._proc.stdin.close()
                self._proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        for pipe in (self._proc.stdin, self._proc.stdout):
            with contextlib.suppress(OSError):
                pipe.close()
        self._err.close()


def run_peer(info: dict, board: PeerBoard, layouts: Layouts, *, warmup: int = WARMUP_GAMES,
             cells: bool = False) -> PeerGames:
    """Have the peer (the build ``info``) play ``layouts`` in a JVM of its own; its checked results."""
    with PeerProcess(info, warmup) as peer:
        return peer.play(board, layouts, cells=cells)


# ------------------------------------------------------------------ chunks
def chunk_name(a: int, b: int) -> str:
    """The file of games ``[a, b)``: ``000000000000-000000001000.npz``."""
    return f"{a:012d}-{b:012d}.npz"


@dataclass(frozen=True)
class Chunk:
    """One chunk of a run: games ``[a, b)``, their arrays (:data:`CHUNK_FIELDS`) and its record."""

    a: int
    b: int
    arrays: dict[str, np.ndarray]
    record: dict


def write_chunk(folder: Path, run: dict, layouts: Layouts, games: PeerGames, extra: dict) -> Path:
    """Write one chunk of ``run`` (the games of ``layouts`` as the peer played them), atomically."""
    a, b = layouts.first_game, layouts.first_game + len(layouts)
    micros = np.minimum(np.round(games.nanos / 1e3), np.iinfo(np.uint32).max)
    unfinished = [a + int(k) for k in np.flatnonzero(games.state == UNFINISHED)]
    record = {**{k: run[k] for k in IDENTITY}, "games": [a, b],
              "seeds": [int(layouts.seeds[0]), int(layouts.seeds[-1])], "unfinished": unfinished,
              "boards_checked": len(layouts), **extra}
    arrays = {"won": games.won, "guesses": games.guesses.astype(np.uint16),
              "revealed": games.revealed.astype(np.uint16), "micros": micros.astype(np.uint32)}
    path = folder / chunk_name(a, b)
    with atomic_path(path) as tmp:
        np.savez_compressed(tmp, record=np.array(json.dumps(record, sort_keys=True)), **arrays)
    return path


def read_chunk(path: Path, run: dict) -> Chunk:
    """A chunk of ``run``, checked: its record (the same games, board and peer) and its arrays.

    Raises
    ------
    PeerError
        A damaged or cut short file, a record of another run, or arrays that do not hold its
        games (each naming the file, and removing it the way out: its games are played again).
    """
    m = _CHUNK.match(path.name)
    if m is None:
        raise PeerError(f"{path.name!r} is not the name of a chunk (AAAAAAAAAAAA-BBBBBBBBBBBB.npz)")
    a, b = int(m[1]), int(m[2])
    again = "; remove it and run play again to play its games anew"
    try:
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as z:
            record = json.loads(str(z["record"][()]))
            arrays = {name: z[name] for name, _ in CHUNK_FIELDS}
    except Exception as e:  # numpy, zipfile and zlib raise many kinds for a damaged file
        raise PeerError(f"chunk {str(path)!r} is damaged ({reader_error(e)}){again}") from None
    if not isinstance(record, dict):
        raise PeerError(f"chunk {str(path)!r} records no run{again}")
    if b <= a or record.get("games") != [a, b]:
        raise PeerError(f"chunk {str(path)!r} records games {record.get('games')!r}, not [{a}, {b}]{again}")
    differ = [k for k in IDENTITY if record.get(k) != run[k]]
    if differ:
        k = differ[0]
        raise PeerError(f"chunk {str(path)!r} holds games of another run: its {k} is {record.get(k)!r}, the "
                        f"run's {run[k]!r}{again}")
    for name, dtype in CHUNK_FIELDS:
        x = arrays[name]
        if x.shape != (b - a,) or x.dtype != dtype:
            raise PeerError(f"chunk {str(path)!r}: {name} must hold {b - a} values of "
                            f"{np.dtype(dtype).name}; it holds {x.shape} of {x.dtype}{again}")
    safe = run["rows"] * run["cols"] - run["mines"]
    if np.any(arrays["won"] != (arrays["revealed"] == safe)) or np.any(arrays["revealed"] > safe):
        raise PeerError(f"chunk {str(path)!r}: its won games and safe cells revealed disagree{again}")
    seeds = game_seeds(run["base_seed"], b)
    if record.get("seeds") != [int(seeds[a]), int(seeds[b - 1])]:
        raise PeerError(f"chunk {str(path)!r} records seeds {record.get('seeds')!r}, not those of games "
                        f"[{a}, {b}) of base seed {run['base_seed']}{again}")
    return Chunk(a, b, arrays, record)


def held_chunks(folder: Path, run: dict) -> list[Chunk]:
    """Every chunk in ``folder``, checked, in order of their games; overlapping chunks are refused."""
    chunks = sorted((read_chunk(p, run) for p in folder.iterdir() if _CHUNK.match(p.name)),
                    key=lambda c: (c.a, c.b))
    for c, d in zip(chunks, chunks[1:], strict=False):
        if d.a < c.b:
            raise PeerError(f"chunks {chunk_name(c.a, c.b)} and {chunk_name(d.a, d.b)} in {str(folder)!r} "
                            f"overlap; remove one")
    return chunks


def missing(chunks: list[Chunk], games: int, size: int) -> list[tuple[int, int]]:
    """The runs of games in ``[0, games)`` no chunk holds, cut at multiples of ``size``."""
    held = [(c.a, c.b) for c in chunks]
    out = []
    for start in range(0, games, size):
        lo, hi = start, min(start + size, games)
        for a, b in held:
            if b <= lo or a >= hi:
                continue
            if a > lo:
                out.append((lo, a))
            lo = max(lo, b)
        if lo < hi:
            out.append((lo, hi))
    return out


# --------------------------------------------------------------------- run
def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def new_run(board: PeerBoard, base_seed: int, info: dict) -> dict:
    """The record of a run: which games (board, first click, base seed) and which peer."""
    return {"format": FORMAT, "peer": PEER, "board": board.name, "rows": board.rows, "cols": board.cols,
            "mines": board.mines, "first_click": FIRST_CLICK, "start": list(START), "base_seed": base_seed,
            "sources": info["sources"], "commit": info["commit"], "adapter": info["adapter"],
            "settings": SETTINGS}


def _config_key(run: dict) -> tuple:
    """The run's board and rule as :func:`~nnsweeper.evaluation.config_key` gives them for a table row."""
    return run["board"], run["rows"], run["cols"], run["mines"], run["first_click"]


def load_run(folder: Path) -> dict:
    """The run record of a run folder (its ``run.json``)."""
    path = folder / RUN_FILE
    if not path.is_file():
        raise PeerError(f"{str(folder)!r} holds no run of the peer ({RUN_FILE}): run play first")
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise PeerError(f"{str(path)!r} is damaged ({reader_error(e)})") from None
    if not isinstance(run, dict) or run.get("format") != FORMAT or run.get("peer") != PEER \
            or any(k not in run for k in IDENTITY):
        raise PeerError(f"{str(path)!r} is not the record of a run of this harness (format {FORMAT})")
    return run


def play(info: dict, board: PeerBoard, games: int, base_seed: int, chunk: int, out: str | os.PathLike, *,
         command: str = "", warmup: int = WARMUP_GAMES, log=None) -> list[Chunk]:
    """Play games ``[0, games)`` of ``base_seed`` on ``board`` with the peer, chunk by chunk, into ``out``.

    Chunks already in ``out`` are kept and their games not played again; each new chunk is
    written as soon as it ends. A folder of another run (other games, another build of the
    peer or of the adapter) is refused, naming the difference.

    Returns
    -------
    list of Chunk
        Every chunk ``out`` holds at the end.
    """
    log = log or _say
    for name, value, lo, hi in (("games", games, 1, MAX_TRIALS), ("chunk", chunk, 1, MAX_CHUNK),
                                ("base_seed", base_seed, 0, None)):
        if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi and value > hi):
            rule = f"an integer from {lo}" + (f" to {hi}" if hi else "")
            raise PeerError(f"{name} must be {rule}; got {value!r}")
    if board.rows * board.cols > MAX_CELLS:
        raise PeerError(f"the chunks count cells in 16 bits: a board must have at most {MAX_CELLS} cells; "
                        f"{board.name} has {board.rows * board.cols}")
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise PeerError(f"--out must be a folder; {str(folder)!r} is a file")
    run = new_run(board, base_seed, info)
    with exclusive_lock(folder / LOCK_FILE, what=f"the peer's run {str(folder)!r}", error=PeerError):
        if (folder / RUN_FILE).exists():
            old = load_run(folder)
            differ = [k for k in IDENTITY if old[k] != run[k]]
            if differ:
                k = differ[0]
                raise PeerError(f"{str(folder)!r} holds a run with {k} {old[k]!r}; this one has {run[k]!r}: "
                                f"play into another folder")
            run = {**old, **run}
        else:
            run = {**run, "runs": []}
        started = _now()
        entry = {"started": started, "status": "interrupted", "games": 0, "wall_seconds": 0.0, "workers": 1,
                 "cpus": os.cpu_count(), "machine": machine(), "nnsweeper_version": nnsweeper.__version__,
                 "java": _version(_tool("java")), "command": command}
        run["runs"] = [*run.get("runs", []), entry]
        write_text_atomic(folder / RUN_FILE, json.dumps(run, indent=2) + "\n")
        chunks = held_chunks(folder, run)
        todo = missing(chunks, games, chunk)
        held = sum(c.b - c.a for c in chunks if c.b <= games)
        log(f"{str(folder)}: {held} of {games} games held, {sum(b - a for a, b in todo)} to play "
            f"in {len(todo)} chunk(s)")
        if todo:
            seeds = game_seeds(base_seed, games)
            t0 = time.perf_counter()
            with PeerProcess(info, warmup) as peer:
                log(f"the peer is warmed up ({warmup} games of its own, {time.perf_counter() - t0:.0f} s)")
                for a, b in todo:
                    layouts = export_layouts(board, seeds[a:b], a)
                    result = peer.play(board, layouts)
                    now = time.perf_counter()
                    wall, t0 = now - t0, now  # the first chunk's time holds the warm-up's
                    write_chunk(folder, run, layouts, result,
                                {"run_started": started, "wall_seconds": round(wall, 3)})
                    entry["games"] += b - a
                    entry["wall_seconds"] = round(entry["wall_seconds"] + wall, 3)
                    write_text_atomic(folder / RUN_FILE, json.dumps(run, indent=2) + "\n")
                    held += b - a
                    ms = result.nanos / 1e6
                    log(f"games {a}-{b}: {int(result.won.sum())} won, {ms.mean():.1f} ms mean, "
                        f"{np.median(ms):.1f} ms median per game; {held} of {games} held")
        entry["status"] = "finished"
        write_text_atomic(folder / RUN_FILE, json.dumps(run, indent=2) + "\n")
        return held_chunks(folder, run)


# ------------------------------------------------------------------- table
def describe(run: dict) -> str:
    """The peer's description in a table's ``metadata["solvers"]``.

    ``Peer(...)``: a program outside nnsweeper, which ``eval/reproduce.py`` names and skips
    (it cannot rebuild it); ``start`` first, as nnsweeper's solvers print theirs.
    """
    return (f"Peer(start='corner', program={PROGRAM!r}, commit={run['commit']!r}, "
            f"sources={run['sources'][:12]!r}, adapter={run['adapter'][:12]!r}, "
            f"settings={run['settings']!r})")


def peer_row(chunks: list[Chunk], run: dict, games: int) -> dict:
    """The table row of games ``[0, games)`` of the run, from its chunks (which must hold them all)."""
    used, end = [], 0
    for c in chunks:
        if c.a >= games:
            break
        if c.a != end or c.b > games:
            raise PeerError(f"the run holds games [{c.a}, {c.b}) after {end} games: a table row of {games} "
                            f"games needs chunks that tile [0, {games}) (play --games {games} fills gaps)")
        used.append(c)
        end = c.b
    if end != games:
        raise PeerError(f"the run holds {end} of the {games} games the row needs: run play with "
                        f"--games {games} to play the rest")
    won = np.concatenate([c.arrays["won"] for c in used])
    guesses = np.concatenate([c.arrays["guesses"] for c in used]).astype(np.int64)
    revealed = np.concatenate([c.arrays["revealed"] for c in used]).astype(np.int64)
    seconds = np.concatenate([c.arrays["micros"] for c in used]).astype(np.float64) / 1e6
    wins, lost = int(won.sum()), int((~won).sum())
    low, high = wilson_interval(wins, games)
    safe = run["rows"] * run["cols"] - run["mines"]
    return {
        "solver": PEER, "board": run["board"], "rows": run["rows"], "cols": run["cols"],
        "mines": run["mines"], "density": run["mines"] / (run["rows"] * run["cols"]),
        "first_click": run["first_click"],
        "games": games, "wins": wins, "win_rate": wins / games, "ci_low": low, "ci_high": high,
        "mean_guesses": int(guesses.sum()) / games,
        "mean_cleared_lost": math.fsum((revealed[~won] / safe).tolist()) / lost if lost else math.nan,
        "mean_seconds": math.fsum(seconds.tolist()) / games, "median_seconds": float(np.median(seconds)),
        "max_seconds": float(seconds.max()), "setup_seconds": 0.0, "model_calls": math.nan,
        "model_safe_rate": math.nan, "base_seed": run["base_seed"], "outcomes": pack_outcomes(won),
    }


def peer_table(folder: str | os.PathLike, games: int | None = None,
               arguments: dict | None = None) -> EvalTable:
    """The peer's run in ``folder`` as an evaluation table of one row (games ``[0, games)``, by default
    every game its chunks hold from the first on), with the run's account in the metadata."""
    folder = Path(folder)
    run = load_run(folder)
    chunks = held_chunks(folder, run)
    if games is None:
        games = 0
        for c in chunks:
            if c.a != games:
                break
            games = c.b
        if games == 0:
            raise PeerError(f"{str(folder)!r} holds no chunk from game 0 on: run play first")
    row = peer_row(chunks, run, games)
    runs = [{k: v for k, v in r.items() if k != "command"} for r in run.get("runs", []) if r.get("games")]
    commands = [r.get("command") for r in run.get("runs", []) if r.get("games") and r.get("command")]
    own = {"boards": [[run["board"], run["rows"], run["cols"], run["mines"]]], "trials": games,
           "base_seed": run["base_seed"], "first_click": run["first_click"]}
    meta = {
        "nnsweeper_version": nnsweeper.__version__, "created": _now(), "arguments": arguments or own,
        "solvers": {PEER: describe(run)}, "runs": runs,
        "command": commands[-1] if commands else "python benchmarks/peers/java_dnh.py play",
        "peer": {k: run[k] for k in ("sources", "commit", "adapter", "settings")},
    }
    return EvalTable([row], meta)


def into_table(folder: str | os.PathLike, table_path: str | os.PathLike,
               write: str | os.PathLike | None = None) -> EvalTable:
    """Add the peer's row to the table at ``table_path`` (its row replaced when it has one), paired with
    its rows of the same games; a new table of the peer's row alone when there is no file there.

    The row plays as many games as the table's rows of its configuration, from the same base seed.
    The merged table is written to ``write`` (default: ``table_path``), its CSV beside it when one is there.
    """
    table_path = Path(table_path)
    target = Path(write) if write is not None else table_path
    if not table_path.exists():
        table = peer_table(folder)
    else:
        base = EvalTable.from_json(table_path)
        run = load_run(Path(folder))
        key = _config_key(run)
        rows = [r for r in base if config_key(r) == key and r["solver"] != PEER]
        if not rows:
            raise PeerError(f"table {str(table_path)!r} has no row of {run['board']} ({run['rows']}x"
                            f"{run['cols']}, {run['mines']} mines, {run['first_click']} first click) to pair "
                            f"the peer's with")
        played = {(r["games"], r["base_seed"]) for r in rows}
        if len(played) != 1:
            raise PeerError(f"the rows of {run['board']} in {str(table_path)!r} played different games: "
                            f"{sorted(played, key=str)}")
        games, seed = played.pop()
        if seed != run["base_seed"]:
            raise PeerError(f"the rows of {run['board']} in {str(table_path)!r} played games of base seed "
                            f"{seed}; the peer's run in {str(folder)!r} has base seed {run['base_seed']}")
        other = [r for r in base if config_key(r) != key]
        if other:
            raise PeerError(f"table {str(table_path)!r} holds other boards too ({other[0]['board']}, "
                            f"{other[0]['mines']} mines): add the peer to a table of its board alone")
        mine = peer_table(folder, games, arguments=base.metadata.get("arguments"))
        table = base.replace(mine) if PEER in base.solvers else base.merge(mine)
    table.to_json(target)
    csv = target.with_suffix(".csv")
    if csv.exists():
        table.to_csv(csv)
    return table


# ---------------------------------------------------------------- discord
def _reproduce():
    """``eval/reproduce.py`` (rebuilds a table's solver from its recorded description)."""
    import importlib.util

    path = HERE.parents[1] / "eval" / "reproduce.py"
    spec = importlib.util.spec_from_file_location("reproduce", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _solver_clicks(solver, board: PeerBoard, seed: int) -> tuple[bool, list[Click]]:
    """One game of a solver of ours, played as the evaluation plays it: won, and its clicks."""
    from nnsweeper import MinesweeperEnv
    from nnsweeper.solvers.base import GUESS_KINDS

    env = MinesweeperEnv(rows=board.rows, cols=board.cols, mines=board.mines, seed=int(seed),
                         first_click=FIRST_CLICK)
    record = solver.play(env, np.random.default_rng(int(seed)))
    return bool(record.won), [Click(m.cell, m.kind not in GUESS_KINDS) for m in record.moves]


def discord(info: dict, folder: str | os.PathLike, table_path: str | os.PathLike, solver_name: str, *,
            games: int | None = None, chunk: int = 1000, warmup: int = WARMUP_GAMES, log=None) -> dict:
    """The games the peer's run and ``solver_name``'s row of a table end differently, each classified
    by the first guess at which the two part (:func:`~nnsweeper.evaluation.divergence.first_divergence`).

    Both play those games again recording their moves (the peer in a JVM of the build ``info``, our
    solver rebuilt from the table's record of it), and each must end as recorded.

    Returns
    -------
    dict
        ``games``, ``peer_only`` and ``solver_only`` (discordant games won by one side), ``kinds``
        (:func:`~nnsweeper.evaluation.divergence.tally`, the peer the first player) and ``rows``, one
        per discordant game: its index, seed, who won, the guess, kind, both cells and their P(mine),
        the covered cells and the layouts' count there.
    """
    log = log or _say
    folder = Path(folder)
    run = load_run(folder)
    peer = peer_table(folder, games)
    games = peer.rows[0]["games"]
    table = EvalTable.from_json(table_path)
    key = _config_key(run)
    rows = [r for r in table if r["solver"] == solver_name and config_key(r) == key]
    if not rows:
        raise PeerError(f"table {str(table_path)!r} has no row of solver {solver_name!r} on {run['board']}")
    row = rows[0]
    if row["base_seed"] != run["base_seed"] or row["games"] < games or row["outcomes"] is None:
        raise PeerError(f"{solver_name}'s row in {str(table_path)!r} did not play games 0..{games - 1} of "
                        f"base seed {run['base_seed']} with their outcomes kept")
    ours = unpack_outcomes(row["outcomes"], row["games"])[:games]
    theirs = unpack_outcomes(peer.rows[0]["outcomes"], games)
    picked = np.flatnonzero(ours != theirs)
    seeds = game_seeds(run["base_seed"], games)
    board = PeerBoard(run["board"], run["rows"], run["cols"], run["mines"])
    solver = _reproduce().recorded_solver(solver_name, table.metadata["solvers"][solver_name])
    log(f"{len(picked)} of {games} games end differently (the peer won {int(theirs[picked].sum())}, "
        f"{solver_name} {int(ours[picked].sum())}); playing them again with their moves recorded")
    out_rows, pairs = [], []
    with PeerProcess(info, warmup) as proc:
        for start in range(0, len(picked), chunk):
            part = picked[start:start + chunk]
            layouts = export_layouts(board, seeds[part], 0)
            played = proc.play(board, layouts, moves=True)
            for k, g in enumerate(part):
                if played.won[k] != theirs[g]:
                    raise PeerError(f"game {g} (seed {int(seeds[g])}): the peer ended it otherwise than in "
                                    f"its run")
                won, clicks = _solver_clicks(solver, board, seeds[g])
                if won != ours[g]:
                    raise PeerError(f"game {g} (seed {int(seeds[g])}): {solver_name} ended it otherwise than "
                                    f"in its row")
                d = first_divergence(board.rules, int(seeds[g]), played.moves[k], clicks)
                if d is None:
                    raise PeerError(f"game {g} (seed {int(seeds[g])}): the two made the same guesses on the "
                                    f"same boards, yet one won and the other lost")
                pairs.append((d, bool(theirs[g])))
                out_rows.append({"game": int(g), "seed": int(seeds[g]), "peer_won": bool(theirs[g]),
                                 "guess": d.guess, "kind": d.kind, "peer_cell": d.cells[0],
                                 "solver_cell": d.cells[1], "peer_p": d.probabilities[0],
                                 "solver_p": d.probabilities[1], "covered": d.covered,
                                 "log10_layouts": round(math.log10(d.layouts), 3) if d.layouts else None})
            log(f"  {min(start + chunk, len(picked))} of {len(picked)} classified")
    kinds = tally(pairs, games)
    return {"games": games, "solver": solver_name, "peer_only": int((theirs & ~ours).sum()),
            "solver_only": int((ours & ~theirs).sum()), "kinds": kinds, "rows": out_rows}


def discord_markdown(result: dict) -> str:
    """The classification as a Markdown table: per kind, the games each side won, the net points and
    a few of the games' seeds."""
    name = result["solver"]
    lines = [f"| kind | won by the peer only | won by {name} only | peer - {name} (points) "
             "| seeds (first five) |",
             "| --- | ---: | ---: | ---: | --- |"]
    for kind in KINDS:
        k = result["kinds"][kind]
        seeds = [str(r["seed"]) for r in result["rows"] if r["kind"] == kind][:5]
        lines.append(f"| {kind} | {k['first']:,} | {k['second']:,} | {k['points']:+.3f} "
                     f"| {', '.join(seeds)} |")
    lines.append(f"| all | {result['peer_only']:,} | {result['solver_only']:,} | "
                 f"{100 * (result['peer_only'] - result['solver_only']) / result['games']:+.3f} | |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ checks
def own_boards(info: dict, games: int, seed: int, board: PeerBoard, *, adapter: bool = False,
               warmup: int = WARMUP_GAMES) -> dict:
    """The peer's bulk runner on its own boards (its seeds from ``new Random(seed)``), one worker.

    With ``adapter``, the same games are then played again through the adapter (its game state
    taking each layout, in a JVM warmed up by ``warmup`` games): ``"same"`` counts the games that
    end alike both times (the final state, won, lost or unfinished, and the number of guesses).

    Returns
    -------
    dict
        ``games``, ``wins``, ``guesses`` (in all), ``seconds`` (the whole run, the JVM's start
        included) and, with ``adapter``, ``same`` and ``adapter_wins``.
    """
    with tempfile.TemporaryDirectory(prefix="java-dnh-") as tmp:
        files = [str(Path(tmp) / "layouts.txt"), str(Path(tmp) / "ends.txt")] if adapter else []
        done = _java(info, "OwnBoards", str(games), str(seed), str(board.cols), str(board.rows),
                     str(board.mines), *files)
        if adapter:
            layouts = read_layouts(Path(files[0]).read_text(encoding="utf-8"), board)
            ends = np.loadtxt(files[1], dtype=np.int64, ndmin=2)
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith("played ")), "")
    m = re.fullmatch(r"played (\d+) won (\d+) guesses (\d+) millis (\d+)", line.strip())
    if m is None:
        raise PeerError(f"the peer's OwnBoards printed no result line; its last line: {line!r}")
    played, won, guesses, millis = map(int, m.groups())
    out = {"games": played, "wins": won, "guesses": guesses, "seconds": millis / 1e3}
    if adapter:
        if ends.shape != (played, 3) or int((ends[:, 1] == WON).sum()) != won:
            raise PeerError(f"the peer's OwnBoards recorded {ends.shape[0]} game ends for {played} games")
        again = run_peer(info, board, layouts, warmup=warmup)
        out["same"] = int(((again.state == ends[:, 1]) & (again.guesses == ends[:, 2])).sum())
        out["adapter_wins"] = int(again.won.sum())
    return out


def check(info: dict, board: PeerBoard, games: int, base_seed: int, repeat: int, *,
          warmup: int = WARMUP_GAMES, log=None) -> bool:
    """Play games ``[0, games)`` of ``base_seed`` with every board compared cell by cell (after
    ``warmup`` of the peer's own games), then the first ``repeat`` again, alone, in a new JVM
    without warm-up; whether every board matched and every outcome repeated."""
    log = log or _say
    seeds = game_seeds(base_seed, games)
    layouts = export_layouts(board, seeds)

    same = sum(np.array_equal(draw_layout(board.rules, int(sd), START), layouts.boards[k] < 0)
               for k, sd in enumerate(seeds))
    log(f"layouts: {same} of {games} exported layouts equal draw_layout's for a first click at {START}")
    first = run_peer(info, board, layouts, warmup=warmup, cells=True)
    log(f"boards: {games} of {games} boards the peer played equal nnsweeper's Game, cell for cell "
        f"(the first click at {START} safe in all)")
    ms = first.nanos / 1e6
    wins = int(first.won.sum())
    low, high = wilson_interval(wins, games)
    log(f"played: {games} games of base seed {base_seed}, {wins} won ({wins / games:.2%}, "
        f"{low:.2%}-{high:.2%}), {first.guesses.mean():.2f} guesses per game, "
        f"{int((first.state == UNFINISHED).sum())} unfinished; "
        f"{ms.mean():.1f} ms mean, {np.median(ms):.1f} ms median per game")
    repeat = min(repeat, games)
    sub = Layouts(0, layouts.seeds[:repeat], layouts.tiles[:repeat], layouts.boards[:repeat])
    again = run_peer(info, board, sub, warmup=0)
    agree = all(np.array_equal(getattr(first, f)[:repeat], getattr(again, f))
                for f in ("state", "guesses", "revealed"))
    log(f"repeat: the first {repeat} games played again, alone in a new JVM, cold: outcomes, guesses and "
        f"safe cells revealed {'identical' if agree else 'DIFFER'} ({int(first.won[:repeat].sum())} and "
        f"{int(again.won.sum())} won)")
    return same == games and agree


# -------------------------------------------------------------------- main
def _say(text: str) -> None:
    print(text, flush=True)


def _gap(d: dict) -> str:
    """One line of :meth:`EvalTable.difference`: the gap in points, its interval, the discordant games."""
    text = (f"{d['solver']} - {d['reference']} on {d['board']}: {100 * d['difference']:+.2f} points "
            f"({100 * d['ci_low']:+.2f} to {100 * d['ci_high']:+.2f}")
    if not d["paired"]:
        return text + ", not paired)"
    return text + (f", paired; won by {d['solver']} only {d['solver_only']}, by {d['reference']} only "
                   f"{d['reference_only']})")


def _command(argv: Sequence[str]) -> str:
    return shlex.join(["python", "benchmarks/peers/java_dnh.py", *argv])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="compile the peer's clone and our adapter with javac")
    p.add_argument("--source", required=True, metavar="PATH", help=f"your clone of github {PROGRAM}")
    p.add_argument("--out", default=str(DEFAULT_BUILD), metavar="DIR",
                   help="build folder (default: build/java-dnh beside this script)")

    def with_build(q):
        q.add_argument("--build", default=str(DEFAULT_BUILD), metavar="DIR",
                       help="the build folder of `build` (default: build/java-dnh beside this script)")

    def with_warmup(q):
        q.add_argument("--warmup", type=int, default=WARMUP_GAMES,
                       help=f"the peer's own games its JVM plays first, untimed (default: {WARMUP_GAMES})")

    p = sub.add_parser("own-boards", help="the peer's bulk runner on its own boards")
    with_build(p)
    p.add_argument("--games", type=int, default=5000, help="games (default: 5000)")
    p.add_argument("--seed", type=int, default=450637648, help="the seed of its runner (default: 450637648, "
                   "its MinesweeperBulk's)")
    p.add_argument("--board", type=board_arg, default=board_arg("expert"), help="a board (default: expert)")
    p.add_argument("--adapter", action="store_true",
                   help="then play the same games through the adapter's game state and compare them")
    with_warmup(p)

    p = sub.add_parser("check", help="our boards, checked cell by cell, and a repeat of the first ones")
    with_build(p)
    p.add_argument("--board", type=board_arg, default=board_arg("expert"), help="a board (default: expert)")
    p.add_argument("--games", type=int, default=300, help="games (default: 300)")
    p.add_argument("--base-seed", type=int, default=2026, help="base seed of the games (default: 2026)")
    p.add_argument("--repeat", type=int, default=100, help="games played twice (default: 100)")
    with_warmup(p)

    p = sub.add_parser("play", help="play nnsweeper's games, resumable, in chunks")
    with_build(p)
    p.add_argument("--board", type=board_arg, required=True, help="expert, intermediate, beginner or RxC:M")
    p.add_argument("--games", type=int, required=True, help="games 0 .. N-1 of the base seed")
    p.add_argument("--base-seed", type=int, required=True, help="the base seed of nnsweeper's game seeds")
    p.add_argument("--chunk", type=int, default=1000, help="games per chunk (default: 1000)")
    with_warmup(p)
    p.add_argument("--out", required=True, metavar="DIR", help="the run's folder (chunks and run.json)")

    p = sub.add_parser("table", help="the run's games as a table row, added to a table of the same games")
    p.add_argument("--out", required=True, metavar="DIR", help="the run's folder")
    p.add_argument("--into", required=True, metavar="TABLE.json",
                   help="the table to add the row to (a new table of the row alone where there is none)")
    p.add_argument("--write", default=None, metavar="PATH",
                   help="write the merged table here (default: --into)")
    p = sub.add_parser("discord",
                       help="the games the peer and a solver of a table end differently, classified")
    with_build(p)
    p.add_argument("--out", required=True, metavar="DIR", help="the peer's run folder")
    p.add_argument("--table", required=True, metavar="TABLE.json",
                   help="a table whose row of --solver played the same games")
    p.add_argument("--solver", default="search", help="the table's solver to compare with (default: search)")
    p.add_argument("--games", type=int, default=None, help="games 0 .. N-1 (default: all the run holds)")
    p.add_argument("--report", required=True, metavar="PREFIX",
                   help="writes PREFIX.md (the counts per kind) and PREFIX.json.gz (every game's row)")
    with_warmup(p)
    args = parser.parse_args(argv)
    try:
        return _run(args, argv)
    except (NnsweeperError, OSError, ValueError) as exc:
        print(f"java_dnh: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.command == "build":
        info = build(args.source, args.out)
        print(f"built {info['files']} Java files ({PROGRAM} {info['commit'] or 'not a git checkout'}, "
              f"sources {info['sources'][:12]}, adapter {info['adapter'][:12]}) with {info['javac']} "
              f"into {args.out}")
        return 0
    if args.command == "table":
        table = into_table(args.out, args.into, args.write)
        where = args.write or args.into
        print(f"{where}: {len(table)} rows")
        for other in table.solvers:
            if other != PEER:
                for d in table.difference(PEER, other):
                    print(f"  {_gap(d)}")
        return 0
    info = load_build(args.build)
    if args.command == "discord":
        result = discord(info, args.out, args.table, args.solver, games=args.games, warmup=args.warmup)
        text = discord_markdown(result)
        write_text_atomic(Path(args.report + ".md"), text)
        with atomic_path(Path(args.report + ".json.gz")) as tmp:
            Path(tmp).write_bytes(gzip.compress(json.dumps(result).encode(), mtime=0))
        print(text, end="")
        return 0
    if args.command == "own-boards":
        if args.games < 1:
            raise PeerError(f"--games must be at least 1; got {args.games}")
        r = own_boards(info, args.games, args.seed, args.board, adapter=args.adapter, warmup=args.warmup)
        low, high = wilson_interval(r["wins"], r["games"])
        n = r["games"]
        print(f"the peer on its own {args.board.name} boards (seed {args.seed}, {SETTINGS}): {n} games, "
              f"{r['wins']} won, {r['wins'] / n:.2%} ({low:.2%}-{high:.2%}); {r['guesses'] / n:.2f} guesses "
              f"per game, {1e3 * r['seconds'] / n:.1f} ms per game (the JVM's start included)")
        if args.adapter:
            print(f"the same games through the adapter's game state: {r['adapter_wins']} won; {r['same']} of "
                  f"{n} end as in the peer's own game state (the final state and the guesses)")
            return 0 if r["same"] == n else 1
        return 0
    if args.command == "check":
        if args.games < 1 or args.repeat < 1 or args.warmup < 0:
            raise PeerError(f"--games and --repeat must be at least 1 and --warmup at least 0; got "
                            f"{args.games}, {args.repeat} and {args.warmup}")
        good = check(info, args.board, args.games, args.base_seed, args.repeat, warmup=args.warmup)
        return 0 if good else 1
    if args.warmup < 0:
        raise PeerError(f"--warmup must be at least 0; got {args.warmup}")
    play(info, args.board, args.games, args.base_seed, args.chunk, args.out, command=_command(argv),
         warmup=args.warmup)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
