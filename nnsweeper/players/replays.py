"""Players' replay files (AVF, RMV, MVF, EVF) read through ms-toollib, as a grading Replay.

ms-toollib (the ``replays`` extra: ``pip install "nnsweeper[replays]"``) is the library
made for these formats: Arbiter's AVF, Minesweeper Clone's RMV, Vienna Minesweeper's MVF
and Metasweeper's EVF. It parses a file into the board and the player's mouse events,
each with the board before and after it. :func:`read_replay` turns those into moves: the
cells an event revealed, and the cell under the cursor (a left click on a covered cell
reveals it, a click on a number chords its neighbours); flags are not read (grading
uses what the board shows).

The parsing runs in a child process: ms-toollib stops the whole process (a Rust panic,
which Python cannot catch) on some malformed files, such as truncated or empty ones, and
a replay that cannot be read must be refused in one line, not take its caller down.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from nnsweeper.errors import InvalidBoardError
from nnsweeper.players.grading import Replay

__all__ = ["FORMATS", "MAX_REPLAY_BYTES", "read_replay"]

#: The replay formats, by file suffix: ms-toollib's class for each.
FORMATS = {".avf": "AvfVideo", ".rmv": "RmvVideo", ".mvf": "MvfVideo", ".evf": "EvfVideo"}
#: The largest replay file read (an expert game's is tens of kilobytes).
MAX_REPLAY_BYTES = 16 << 20
#: Seconds the child process may take to parse one file.
PARSE_SECONDS = 60

# The child: parse the file, print the board, the cell size, the time and, per event that
# revealed cells, the cursor (x, y in pixels) and those cells (value 0-8, or 15: the mine
# that ended the game).
_CHILD = r"""
import json, sys
import ms_toollib
cls, path = sys.argv[1], sys.argv[2]
v = getattr(ms_toollib, cls)(path)
v.parse()
v.analyse()
events = []
for k, ev in enumerate(v.events):
    before, after = ev.prior_game_board.game_board, ev.next_game_board.game_board
    opened = [[i, j] for i, row in enumerate(after) for j, x in enumerate(row)
              if (0 <= x <= 8 or x == 15) and not 0 <= before[i][j] <= 8]
    if opened:
        v.current_event_id = k
        x, y = v.x_y
        events.append([int(x), int(y), float(ev.time), opened])
print(json.dumps({"board": v.board, "pix": int(v.pix_size), "rtime": float(v.rtime),
                  "completed": bool(v.is_completed), "events": events}))
"""


def read_replay(path) -> Replay:
    """The game of a replay file, by its suffix (.avf, .rmv, .mvf or .evf).

    Raises
    ------
    InvalidBoardError
        No such file, another suffix, an empty or oversized file, or one ms-toollib cannot
        read (a ``ValueError``: the command line prints it in one line and exits with 2).
    ValueError
        ms-toollib is not installed.
    """
    import numpy as np

    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        got = path.suffix or "no suffix"
        raise InvalidBoardError(f"{str(path)!r}: a replay file ends in .avf, .rmv, .mvf or .evf (or is a "
                                f"game saved by nnsweeper play, .json); got {got!r}")
    if not path.is_file():
        raise InvalidBoardError(f"no replay file at {str(path)!r}")
    size = path.stat().st_size
    if size == 0:
        raise InvalidBoardError(f"{str(path)!r} is empty")
    if size > MAX_REPLAY_BYTES:
        raise InvalidBoardError(f"{str(path)!r} is {size:,} bytes, more than a replay's {MAX_REPLAY_BYTES:,}")
    if importlib.util.find_spec("ms_toollib") is None:
        raise ValueError("reading replay files needs ms-toollib: pip install 'nnsweeper[replays]'")
    kind = path.suffix.lower()[1:].upper()
    # In a folder of its own: a panic of the library writes crash.log where it runs.
    with tempfile.TemporaryDirectory() as where:
        try:
            done = subprocess.run([sys.executable, "-c", _CHILD, fmt, str(path.resolve())], cwd=where,
                                  capture_output=True, text=True, timeout=PARSE_SECONDS)
        except subprocess.TimeoutExpired:
            raise InvalidBoardError(
                f"{str(path)!r}: reading it as {kind} took more than {PARSE_SECONDS} s") from None
        crash = Path(where) / "crash.log"
        said = crash.read_text(errors="replace").splitlines() if crash.exists() else []
    if done.returncode != 0:
        panic = [line.removeprefix("message:").strip() for line in said if line.startswith("message:")]
        why = (panic or done.stderr.strip().splitlines() or ["the reader stopped on it"])[-1][:200]
        raise InvalidBoardError(f"{str(path)!r} is not a readable {kind} replay ({why})")
    try:
        data = json.loads(done.stdout)
        board = np.array(data["board"], dtype=np.int64)
        pix = int(data["pix"])
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidBoardError(f"{str(path)!r}: the {kind} reader gave no game ({exc})") from None
    if board.ndim != 2 or 0 in board.shape or pix < 1:
        raise InvalidBoardError(f"{str(path)!r}: the {kind} reader gave no board")
    mines = board == -1
    moves = _moves(mines.shape, pix, data["events"])
    if not moves:
        raise InvalidBoardError(f"{str(path)!r}: the replay reveals no cell")
    seconds = data["rtime"] if data["rtime"] > 0 else None
    return Replay(mines, moves, seconds, f"{kind} replay {path.name}")


def _moves(shape, pix: int, events) -> list:
    """The moves of the events that revealed cells: a reveal of the cell under the cursor, or a chord
    of its neighbours that opened (the rest of what an event revealed is their openings)."""
    rows, cols = shape
    moves = []
    for x, y, _, opened in events:
        cells = {(int(i), int(j)) for i, j in opened}
        cursor = (int(y) // pix, int(x) // pix)
        if cursor in cells:
            moves.append(("reveal", (cursor,)))
            continue
        near = tuple(sorted(c for c in cells if max(abs(c[0] - cursor[0]), abs(c[1] - cursor[1])) == 1))
        # No opened cell next to the cursor (a misplaced event): a reveal of the first cell it
        # opened, whose opening is the rest.
        moves.append(("chord", near) if near else ("reveal", (min(cells),)))
    for _, cells in moves:
        for i, j in cells:
            if not (0 <= i < rows and 0 <= j < cols):
                raise InvalidBoardError(f"a move of the replay opens ({i}, {j}), off its {rows}x{cols} board")
    return moves
