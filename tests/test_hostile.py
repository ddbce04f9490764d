"""Hostile input to the players' commands: one line and exit 2, bounded work, nothing replaced
that was not the command's to write."""

import json
import os
import stat
import threading

import pytest

from nnsweeper.cli import main


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nested.json").write_text("[" * 5000 + "]" * 5000)
    (tmp_path / "pos.txt").write_text("1 2\n")
    (tmp_path / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    game = {"format": "nnsweeper-game", "rows": 5, "cols": 5, "mines": 3, "first_click": "safe", "seed": 2,
            "actions": [["reveal", 0, 0]]}
    (tmp_path / "game.json").write_text(json.dumps(game))
    return tmp_path


def _one_line(capsys, *words):
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, err
    return err


@pytest.mark.parametrize(("game", "words"), [
    ("nested.json", ["is not a saved game", "play --save", ".avf"]),  # JSON nested past the parser's depth
    ("pos.txt", ["is not a saved game"]),
    ("picture.png", ["is not a saved game"]),
    ("folder", ["is a folder"]),
    ("fifo", ["is a FIFO"]),  # would block a reader forever
    ("/dev/zero", ["is a device"]),  # would never end
    ("missing.json", ["no saved game at"]),
])
def test_grade_and_play_refuse_what_is_no_saved_game(files, capsys, game, words):
    assert main(["grade", game]) == 2
    _one_line(capsys, *words)
    assert main(["play", "--replay", game]) == 2
    _one_line(capsys, *words)


def test_outputs_that_are_special_files_or_the_input_are_refused_before_the_work(files, capsys):
    before = (files / "game.json").read_text()
    for argv, words in [
        (["grade", "game.json", "--json", "game.json"], ["is the input 'game.json'"]),
        (["grade", "game.json", "--json", "fifo"], ["is a FIFO", "not replaced"]),
        (["grade", "game.json", "--json", "folder"], ["is a folder"]),
        (["grade", "game.json", "--png", "out"], ["--png 'out'", "suffix"]),
        (["grade", "game.json", "--png", "g.txt"], ["--png 'g.txt'", "suffix"]),
        (["boards", "fifo", "--count", "2"], ["is a FIFO"]),
        (["play", "--replay", "game.json", "--save", "game.json"], ["is the input"]),
    ]:
        assert main(argv) == 2, argv
        _one_line(capsys, *words)
        assert capsys.readouterr().out == ""  # refused before any grade was printed
    assert (files / "game.json").read_text() == before
    assert stat.S_ISFIFO(os.stat(files / "fifo").st_mode)
    # A device is checked without a command that would write it: were the check ever lost, such a
    # test would replace the machine's /dev/null with a file (as root).
    from nnsweeper.fileio import SpecialFileError, output_target

    with pytest.raises(SpecialFileError, match="is a device"):
        output_target("/dev/null")


def test_an_atomic_write_through_a_symbolic_link_keeps_the_link(tmp_path):
    from nnsweeper.fileio import SpecialFileError, write_text_atomic

    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    write_text_atomic(tmp_path / "link.txt", "new")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "new"
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "to-pipe").symlink_to("pipe")
    with pytest.raises(SpecialFileError, match="is a FIFO"):
        write_text_atomic(tmp_path / "to-pipe", "x")
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe").st_mode) and not list(tmp_path.glob(".pipe*"))


def test_a_read_of_a_fifo_never_blocks(tmp_path):
    from nnsweeper.fileio import read_regular_file

    os.mkfifo(tmp_path / "pipe")
    done = []
    reader = threading.Thread(target=lambda: done.append(_refused(tmp_path / "pipe")), daemon=True)
    reader.start()
    reader.join(10)
    assert done == ["refused"]
    (tmp_path / "big").write_bytes(bytes(101))
    with pytest.raises(ValueError, match="more than 100 bytes"):
        read_regular_file(tmp_path / "big", 100, "thing")


def _refused(path) -> str:
    from nnsweeper.fileio import read_regular_file

    try:
        read_regular_file(path, 100, "thing")
    except ValueError:
        return "refused"
    return "read"


def test_boards_streams_and_is_bounded_in_time(files, capsys):
    assert main(["boards", "b.txt", "--board", "60x60:1500", "--no-guess", "fast", "--max-tries", "100000",
                 "--time-limit", "0.2", "--quiet"]) == 2
    _one_line(capsys, "no no-guess layout", "time_limit=0.2")
    assert not (files / "b.txt").exists() and not list(files.glob(".b.txt*"))
    assert main(["boards", "b.txt", "--max-tries", "5"]) == 2
    _one_line(capsys, "--max-tries is a budget of --no-guess boards")
    assert main(["boards", "b.txt", "--count", "3", "--quiet"]) == 0
    text = (files / "b.txt").read_text()
    assert text.count("# board") == 3 and "\n\n# board 2 of 3" in text and text.endswith(".\n")


def test_an_explicit_first_click_rule_and_no_guess_are_one_or_the_other(files, capsys):
    assert main(["boards", "b.txt", "--first-click", "safe", "--no-guess", "fast"]) == 2
    _one_line(capsys, "give --no-guess or --first-click safe, not both")
    assert main(["boards", "b.txt", "--first-click", "no-guess-fast", "--no-guess", "fast", "--quiet"]) == 0
    assert "rule no-guess-fast" in (files / "b.txt").read_text()


@pytest.mark.parametrize(("make", "words"), [
    (lambda ns, np: ns.GameLog(ns.Rules(5, 5, 3), None, [("reveal", 0, 0)]), "seed must be"),
    (lambda ns, np: ns.GameLog(ns.Rules(5, 5, 3), 1, [("reveal", 0.5, 0)]), "action 0 must be"),
    (lambda ns, np: ns.GameLog(ns.Rules(5, 5, 3), 1, [("dig", 0, 0)]), "action 0 must be"),
    (lambda ns, np: ns.GameLog("5x5", 1, []), "rules must be Rules"),
    (lambda ns, np: ns.GameLog(ns.Rules(5, 5, 3), 1, None), "actions must be a list"),
    (lambda ns, np: ns.Replay(np.zeros((4, 4)), [("reveal", ((0, 0),))]), "2-d bool array"),
    (lambda ns, np: ns.Replay(np.zeros((4, 4), bool), None), "moves must be a list"),
    (lambda ns, np: ns.Replay(np.zeros((4, 4), bool), [("reveal", (0, 0))]), "move 1 must be"),
    (lambda ns, np: ns.Replay(np.zeros((4, 4), bool), [("reveal", ((0, 0), (0, 1)))]), "opens one cell"),
    # A chord opens the neighbours of one number: never more than 8 cells, all within a 3x3 square
    # (the exact chance of a chord is counted over subsets of its cells).
    (lambda ns, np: ns.Replay(np.zeros((6, 6), bool), [("chord", tuple((i, j) for i in range(6)
                                                                       for j in range(4)))]), "1 to 8"),
    (lambda ns, np: ns.Replay(np.zeros((6, 6), bool), [("chord", ((0, 0), (0, 5)))]), "3x3 square"),
    (lambda ns, np: ns.Replay(np.zeros((4, 4), bool), [("reveal", ((0, 0),))], seconds=-1), "seconds"),
    (lambda ns, np: 42, "grade takes a GameLog, a Replay or the path"),
])
def test_grade_names_what_is_wrong_with_a_half_built_game(make, words):
    import numpy as np

    import nnsweeper as ns
    from nnsweeper.errors import InvalidBoardError
    from nnsweeper.players.grading import Replay
    from nnsweeper.players.play import GameLog

    names = type("names", (), {"GameLog": GameLog, "Replay": Replay, "Rules": ns.Rules})
    with pytest.raises(InvalidBoardError, match=words):
        ns.grade(make(names, np))


def test_parse_layouts_reads_only_text():
    from nnsweeper.errors import InvalidRulesError
    from nnsweeper.noguess import parse_layouts

    for bad in (b"**", None, 3):
        with pytest.raises(InvalidRulesError, match="reads the text of layouts"):
            parse_layouts(bad)


def test_grade_of_a_no_guess_game_is_bounded_by_the_games_time_budget(files, capsys, monkeypatch):
    """A few bytes of JSON name a no-guess board whose layout would take hours to find: the
    game's time budget ends the search, and grade says so in one line."""
    import nnsweeper.game as game_module

    monkeypatch.setattr(game_module, "NO_GUESS_TRIES", 10**9)
    monkeypatch.setattr(game_module, "NO_GUESS_SECONDS", 0.3)
    (files / "dense.json").write_text(json.dumps({
        "format": "nnsweeper-game", "rows": 60, "cols": 60, "mines": 1500, "first_click": "no-guess-fast",
        "seed": 1, "actions": [["reveal", 30, 30]]}))
    assert main(["grade", "dense.json"]) == 2
    _one_line(capsys, "no no-guess layout of 60x60 with 1500 mines", "time_limit=0.3")
