"""nnsweeper play: the terminal game, driven headless through Textual's pilot."""

import asyncio
import json

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.cli import main
from nnsweeper.game import Rules
from nnsweeper.players.play import PlaySession, load_game

pytest.importorskip("textual")

from nnsweeper.players.play import run_app  # noqa: E402


async def _walk(pilot, app, cell):
    """Move the app's cursor to ``cell`` with the arrow keys."""
    i, j = app.cursor
    keys = (["down"] * (cell[0] - i) + ["up"] * (i - cell[0]) + ["right"] * (cell[1] - j)
            + ["left"] * (j - cell[1]))
    if keys:
        await pilot.press(*keys)
    assert app.cursor == cell


def test_a_scripted_session_reveals_flags_asks_and_wins(tmp_path):
    # 6x6 with 4 mines, seed 11: the first click at (1, 1) opens an area; the test then
    # flags every mine (it reads the layout; the app never does) and reveals the rest,
    # one cell with the mouse.
    saved = tmp_path / "game.json"
    app = run_app(Rules(6, 6, 4), 11, solver="csp", save=saved)

    async def session():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("right", "down", "space")
            grid = app.session.grid()
            assert grid[1, 1] >= 0 and (grid >= 0).sum() > 1
            mines = app.session.game.mine_layout()
            # Hints: the exact engine's P(mine) of every covered cell.
            await pilot.press("h")
            expected = ns.analyze(ns.Observation.of(grid, 4)).probabilities
            np.testing.assert_array_equal(app.hints, expected)
            status = str(app.query_one("#status").render())
            assert "mines left   4" in status and "hints on" in status and "seed 11" in status
            # The solver's move and its reason, and the cursor on it.
            await pilot.press("s")
            move = ns.suggest_move(ns.get_solver("csp"), ns.Observation.of(grid, 4), np.random.default_rng(0))
            assert app.message.startswith(f"csp: reveal {move.cell}. {move.reason}")
            assert app.cursor == move.cell and app.mark == move.cell
            for cell in map(tuple, np.argwhere(mines)):
                await _walk(pilot, app, cell)
                await pilot.press("f")
            assert "mines left   0" in str(app.query_one("#status").render())
            # A flagged cell is not revealed by space.
            await pilot.press("space")
            assert app.session.game.mask[cell] == 1 and "is flagged" in app.message
            safe = [tuple(c) for c in np.argwhere(~mines & (app.session.game.mask == 1))]
            # The last safe cell with the mouse: column j is at x = 3 j + 1 of the board.
            *keyed, last = safe
            for cell in keyed:
                if app.session.game.mask[cell] == 1:
                    await _walk(pilot, app, cell)
                    await pilot.press("space")
            assert not app.session.over
            await pilot.click("Board", offset=(3 * last[1] + 1, last[0]))
            await pilot.pause()
            assert app.session.game.won
            assert "You won" in str(app.screen.query_one("#result").render())
            app.save_screenshot(str(tmp_path / "won.svg"))

    asyncio.run(session())
    assert (tmp_path / "won.svg").stat().st_size > 1000
    log = load_game(saved)
    assert log.seed == 11 and log.rules == Rules(6, 6, 4)
    assert log.actions[0] == ("reveal", 1, 1) and sum(a[0] == "flag" for a in log.actions) == 4
    # The saved actions replay to the same won board.
    again = PlaySession(log.rules, log.seed)
    for action in log.actions:
        again.act(*action)
    assert again.game.won


def test_a_saved_game_plays_back(tmp_path):
    session = PlaySession(Rules(5, 5, 3), 2)
    session.act("reveal", 0, 0)
    session.act("flag", 4, 4)
    session.act("flag", 4, 4)
    path = session.log.save(tmp_path / "g.json")
    app = run_app(Rules(5, 5, 3), 0, replay=load_game(path), replay_delay=0.01)

    async def replay():
        async with app.run_test(size=(60, 16)) as pilot:
            for _ in range(50):
                await pilot.pause(0.02)
                if not app.replaying:
                    break
            assert app.message == "end of the saved game"
            assert (app.session.grid() == session.grid()).all() and not app.session.game.flags.any()

    asyncio.run(replay())


def test_a_game_without_a_seed_draws_one_and_saves_it(tmp_path):
    session = PlaySession(Rules(5, 5, 3), None)
    session.act("reveal", 2, 2)
    log = load_game(session.log.save(tmp_path / "g.json"))
    assert log.seed == session.seed >= 0
    again = PlaySession(log.rules, log.seed)
    again.act(*log.actions[0])
    assert (again.grid() == session.grid()).all()


def test_chords_and_mistakes_never_raise():
    s = PlaySession(Rules(4, 4, 2), 5)
    assert s.act("flag", 0, 0) == "" and s.game.flags[0, 0]
    assert "is flagged" in s.act("reveal", 0, 0)
    s.act("flag", 0, 0)
    s.act("reveal", 3, 3)
    grid = s.grid()
    number = next(tuple(c) for c in np.argwhere(grid > 0))
    assert s.act("chord", *number) == ""  # no flags around it: nothing happens
    assert (s.grid() == grid).all()
    mines = s.game.mine_layout()
    for c in map(tuple, np.argwhere(mines)):
        s.act("flag", *c)
    s.act("chord", *number)
    while not s.over:
        s.act("reveal", *next(tuple(c) for c in np.argwhere(~mines & (s.game.mask == 1))))
    assert s.game.won and s.act("reveal", 0, 0).startswith("the game is over")


@pytest.mark.parametrize("argv, message", [
    (["play", "--solver", "nope"], "unknown solver 'nope'"),
    (["play", "--board", "101x5:3"], "at most 100 rows and columns"),
    (["play", "--board", "3x3:9"], "mines"),
    (["play", "--seed", "-3"], "seed"),
    (["play", "--replay", "missing.json"], "no saved game at"),
    (["play", "--replay", "bad.json"], "is not a saved game"),
    (["play", "--replay", "odd.json"], "action 0 must be"),
    (["play", "--replay", "odd.json", "--seed", "3"], "give no --board, --preset, --seed"),
    (["play", "--replay", "odd.json", "--no-guess"], "--seed, --first-click or --no-guess with it"),
    (["play", "--replay", "digits.json"], "digits.json' is not a saved game: Exceeds the limit"),
    (["play", "--save", "."], "is a folder"),
])
def test_bad_input_is_one_line(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "digits.json").write_text('{"seed": ' + "7" * 5000 + "}")
    (tmp_path / "odd.json").write_text(json.dumps({
        "format": "nnsweeper-game", "rows": 4, "cols": 4, "mines": 2, "first_click": "safe", "seed": 1,
        "actions": [["reveal", 9, 0]]}))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


def test_board_is_checked_against_the_first_click_rule(tmp_path, capsys, monkeypatch):
    # --board is read within the loosest rule and checked against --first-click: 80 mines on
    # 9x9 is a game with an unprotected first click (play then wants a terminal, which the
    # tests lack), and refused with a safe one in the line eval gives for --mines 80.
    monkeypatch.chdir(tmp_path)
    assert main(["play", "--board", "9x9:80", "--first-click", "none"]) == 2
    assert capsys.readouterr().err.strip() == ("nnsweeper: error: nnsweeper play needs a terminal "
                                               "(standard input and output are not one)")
    refused = ("nnsweeper: error: mines must be between 1 and 79 for a 9x9 board with a safe first click; "
               "got 80")
    assert main(["play", "--board", "9x9:80"]) == 2
    assert capsys.readouterr().err.strip() == refused
    assert main(["eval", "--rows", "9", "--cols", "9", "--mines", "80", "--out", "o"]) == 2
    assert capsys.readouterr().err.strip() == refused
    assert main(["play", "--board", "9x9:72", "--first-click", "zero"]) == 2
    assert capsys.readouterr().err.strip() == ("nnsweeper: error: mines must be between 1 and 71 for a 9x9 "
                                               "board with an opening (zero) first click; got 72")


def test_an_unfinished_game_is_saved_on_quit_with_its_time(tmp_path):
    saved = tmp_path / "unfinished.json"
    app = run_app(Rules(6, 6, 4), 11, solver="csp", save=saved)

    async def session():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("right", "down", "space")
            assert not app.session.over
            await pilot.press("q")

    asyncio.run(session())
    assert app.saved == saved and app.error is None
    log = load_game(saved)
    assert log.actions == [("reveal", 1, 1)] and log.seconds is not None and log.seconds >= 0
    # grade reads the time back: the 3BV/s line instead of "no time recorded".
    graded = ns.grade(log)
    assert graded.seconds == log.seconds


def test_a_no_guess_board_out_of_budget_ends_play_in_one_line(tmp_path, monkeypatch):
    import nnsweeper.game as game_module

    monkeypatch.setattr(game_module, "NO_GUESS_TRIES", 1)
    monkeypatch.setattr(game_module, "NO_GUESS_SECONDS", 0.001)
    app = run_app(Rules(9, 9, 40, "no-guess"), 1, save=tmp_path / "g.json")

    async def session():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("space")
            await pilot.pause()

    asyncio.run(session())
    assert app.return_code == 2 and "no no-guess layout of 9x9 with 40 mines" in app.error
    assert not (tmp_path / "g.json").exists()
