"""Replay files written with ms-toollib (it records games and saves EVF), read back and graded."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.errors import InvalidBoardError
from nnsweeper.grid import neighbour_sum
from nnsweeper.players.grading import Replay, bbbv, grade

pytest.importorskip("ms_toollib")

from nnsweeper.players.replays import read_replay  # noqa: E402

# Records a game with ms-toollib's BaseVideo in a child process (the library stops a process it
# cannot go on with): the board (-1 a mine), then left clicks at (row, col), saved as EVF. Each
# press is held a moment: a game of one click released at once sometimes saved no file (2 of 40
# tries; none of 120 held).
_RECORD = r"""
import json, sys, time
import ms_toollib
board, clicks, out = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
video = ms_toollib.BaseVideo(board, 16)
for i, j in clicks:
    time.sleep(0.002)
    video.step("lc", (16 * i + 8, 16 * j + 8))
    time.sleep(0.01)
    video.step("lr", (16 * i + 8, 16 * j + 8))
video.generate_evf_v4_raw_data()
video.save_to_evf_file(out)
"""


def record(tmp_path, mines: np.ndarray, clicks, name="game"):
    board = np.where(mines, -1, neighbour_sum(mines)).tolist()
    done = subprocess.run([sys.executable, "-c", _RECORD, json.dumps(board), json.dumps(clicks),
                           str(tmp_path / name)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / f"{name}.evf").is_file(), f"ms-toollib saved no replay: {done.stderr}"
    return tmp_path / f"{name}.evf"


def _beginner_game(seed: int):
    """A beginner game csp plays (first click in the corner): its layout and its clicks."""
    env = ns.MinesweeperEnv(9, 9, 10, seed=seed)
    rec = ns.get_solver("csp", start="corner").play(env, np.random.default_rng(seed))
    return env.mine_layout(), [list(m.cell) for m in rec.moves], rec


def test_a_recorded_beginner_game_reads_back_as_played_and_grades_as_its_moves(tmp_path):
    for seed in range(40):
        mines, clicks, rec = _beginner_game(seed)
        if rec.guesses >= 2:
            break
    path = record(tmp_path, mines, clicks)
    replay = read_replay(path)
    assert np.array_equal(replay.mines, mines)
    assert [cells for _, cells in replay.moves] == [(tuple(c),) for c in clicks]
    assert replay.seconds > 0 and replay.source == "EVF replay game.evf"
    graded = grade(replay)
    direct = grade(Replay(mines, [("reveal", (tuple(c),)) for c in clicks]))
    assert graded.won == rec.won and graded.summary()["guesses"] == rec.guesses
    assert [m.loss for m in graded.moves] == [m.loss for m in direct.moves]
    assert graded.seconds == replay.seconds
    assert graded.summary()["3bv_per_second"] == graded.bbbv / replay.seconds


def test_a_lost_game_is_graded_lost_at_its_mine(tmp_path):
    mines = np.zeros((4, 4), dtype=bool)
    mines[[0, 3, 3], [3, 0, 3]] = True
    path = record(tmp_path, mines, [[0, 0], [3, 3]], "lost")
    g = grade(read_replay(path))
    assert not g.won and g.moves[-1].cells == ((3, 3),) and not g.moves[-1].survived
    assert g.moves[-1].kind == "needless guess" and g.moves[-1].loss == 1.0


@pytest.mark.parametrize("content, suffix, match", [
    (None, ".evf", "is not a readable EVF replay"),                      # truncated
    (b"", ".evf", "is empty"),
    (b'{"format": "nnsweeper-game"}', ".evf", "is not a readable EVF replay"),
    ("evf", ".avf", "is not a readable AVF replay"),                     # another format's file
    (b"x", ".txt", "a replay file ends in .avf, .rmv, .mvf or .evf"),
])
def test_bad_replay_files_are_refused_in_one_line(tmp_path, content, suffix, match):
    one_mine = np.zeros((4, 4), dtype=bool)
    one_mine[3, 3] = True
    good = record(tmp_path, one_mine, [[0, 0]], "good")  # the click opens all but the mine: won
    data = good.read_bytes()
    bad = tmp_path / f"bad{suffix}"
    bad.write_bytes(data[: len(data) // 2] if content is None else data if content == "evf" else content)
    with pytest.raises(InvalidBoardError, match=match):
        read_replay(bad)
    done = subprocess.run([sys.executable, "-m", "nnsweeper", "grade", str(bad)], capture_output=True,
                          text=True)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert match.split()[0] in done.stderr


def test_the_grade_command_writes_its_json_and_picture(tmp_path):
    mines, clicks, _ = _beginner_game(3)
    path = record(tmp_path, mines, clicks)
    command = [sys.executable, "-m", "nnsweeper", "grade", str(path), "--json", str(tmp_path / "g.json"),
               "--png", str(tmp_path / "g.png")]
    out = subprocess.run(command, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "EVF replay game.evf: 9x9/10" in out.stdout and "3BV/s" in out.stdout
    data = json.loads((tmp_path / "g.json").read_text())
    assert data["summary"]["3bv"] == bbbv(mines) > 0 and len(data["moves"]) == len(clicks)
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
