"""The page of nnsweeper serve in a real browser: headless Chromium (Debian's package) driven by Playwright.

They skip, with one line saying how to run them, where Playwright or Chromium is missing
(``make setup`` installs both where it can: Playwright with the dev tools, Chromium with
the system's package manager when run as root).
"""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.players.serve import serving

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = next((p for p in (os.environ.get("NNSWEEPER_CHROMIUM"), shutil.which("chromium"),
                             shutil.which("chromium-browser")) if p), None)
sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright: make setup")
if CHROMIUM is None:
    pytest.skip("the browser tests need Chromium (Debian: apt-get install chromium; or set "
                "NNSWEEPER_CHROMIUM to its path)", allow_module_level=True)
pytest.importorskip("starlette", reason="the browser tests need the serve extra: make setup")


@pytest.fixture(scope="module")
def server():
    with serving(cwd=ROOT) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []  # the page's own errors (a refused request is the server's answer, shown on the page)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource") else None)
    page.goto(server)
    page.wait_for_function("document.querySelectorAll('.cell').length > 0 "
                           "&& document.querySelector('#solver').options.length > 0")
    yield page
    context.close()
    assert errors == [], errors


def _new_game(page, preset, seed, rule="safe", source="exact"):
    page.select_option("#preset", preset)
    page.select_option("#rule", rule)
    page.select_option("#source", source)
    page.fill("#seed", str(seed))
    page.click("#new")  # a new game of the seed typed
    page.wait_for_function(f"game.seed === {seed}")


def _cell(page, rows_cols, i, j):
    return page.locator(".cell").nth(i * rows_cols[1] + j)


def _wait_for_overlay(page):
    """The board after the first click with its overlay painted, read in one step: (grid, titles).

    Every redraw of the board removes the painted values, so values on a board with open cells
    are those of its latest state (an answer for an older board is aborted, never painted)."""
    page.wait_for_function("document.querySelectorAll('.cell.open').length > 0 "
                           "&& document.querySelectorAll('.cell .p').length > 0")
    grid, titles = page.evaluate("[Array.from(game.grid), cells.map((el) => el.title)]")
    return np.array(grid, dtype=np.int8), titles


def test_a_seeded_beginner_game_won_by_clicks(page):
    seed, first = 7, (4, 4)
    _new_game(page, "beginner", seed, source="none")
    game = ns.Game(ns.Rules(9, 9, 10), seed)
    game.reveal(*first)
    mine = game.board == -1
    _cell(page, (9, 9), *first).click()
    page.wait_for_function("document.querySelectorAll('.cell.open').length > 0")
    for i, j in zip(*np.nonzero(~mine), strict=True):
        el = _cell(page, (9, 9), int(i), int(j))
        if "open" not in (el.get_attribute("class") or ""):
            el.click()
    page.wait_for_function("document.querySelector('#result').textContent.startsWith('won')")
    result = page.text_content("#result")
    assert result.startswith("won: 3BV ") and "3BV/s" in result
    from nnsweeper.players.grading import bbbv

    assert result.startswith(f"won: 3BV {bbbv(mine)}, ")
    # Every number on the page is the game's own.
    for i, j in zip(*np.nonzero(~mine), strict=True):
        shown = _cell(page, (9, 9), int(i), int(j)).text_content()
        assert shown == ("" if game.board[i, j] == 0 else str(game.board[i, j]))


def test_the_overlay_is_the_exact_engine(page):
    seed = 3
    _new_game(page, "expert", seed)
    _cell(page, (16, 30), 0, 0).click()
    grid, titles = _wait_for_overlay(page)
    grid = grid.reshape(16, 30)
    want = ns.analyze(ns.Observation.of(grid, 99)).probabilities
    checked = 0
    for k, title in enumerate(titles):
        i, j = divmod(k, 30)
        if grid[i, j] >= 0:
            assert title == ""
            continue
        assert title.startswith("P(mine) = ")
        assert abs(float(title.split("= ")[1]) - want[i, j]) <= 1e-9
        checked += 1
    assert checked == int((grid < 0).sum()) > 0
    assert "P(mine) in %" in page.text_content("#legend")  # what the numbers are


def test_the_network_overlay_is_predict_proba(page):
    models = page.evaluate("info.models")
    if "gnn" not in models:
        pytest.skip("no bundled GNN here")
    from nnsweeper.models import load_model

    _new_game(page, "intermediate", 11, source="gnn")
    _cell(page, (16, 16), 8, 8).click()
    grid, titles = _wait_for_overlay(page)
    grid = grid.reshape(16, 16)
    want = load_model("gnn").predict_proba(ns.Observation.of(grid, 40))
    for k, title in enumerate(titles):
        i, j = divmod(k, 16)
        if grid[i, j] < 0:
            assert abs(float(title.split("= ")[1]) - want[i, j]) <= 1e-6


def test_a_no_guess_board_is_said_to_be_certified_and_is_the_games(page):
    _new_game(page, "beginner", 4, rule="no-guess", source="none")
    _cell(page, (9, 9), 4, 4).click()
    page.wait_for_function("document.querySelectorAll('.cell.open').length > 0")
    assert page.text_content("#message").startswith("a certified no-guess board")
    game = ns.Game(ns.Rules(9, 9, 10, "no-guess"), 4)
    game.reveal(4, 4)
    assert page.evaluate("Array.from(game.mine)") == (game.board == -1).ravel().astype(int).tolist()


def test_a_no_guess_board_that_cannot_be_made_says_so(page):
    page.select_option("#preset", "custom")
    page.fill("#rows", "9")
    page.fill("#cols", "9")
    page.fill("#mines", "60")
    _new_game(page, "custom", 1, rule="no-guess", source="none")
    _cell(page, (9, 9), 4, 4).click()
    page.wait_for_function("document.querySelector('#message').textContent.length > 0", timeout=90_000)
    assert page.text_content("#message").startswith("no no-guess layout of 9x9 with 60 mines")
    assert page.locator(".cell.open").count() == 0  # no board was made up


def test_the_page_keeps_answering_while_auto_play_runs(page):
    _new_game(page, "expert", 5)
    page.select_option("#solver", "csp")
    page.fill("#speed", "0")
    assert page.text_content("#speed-ms") == "0"  # the speed chosen, shown beside its slider
    page.click("#auto")
    page.wait_for_function("document.querySelectorAll('.cell.open').length > 30 || game.over", timeout=60_000)
    # While the solver plays on, the page and the server answer at once.
    took = page.evaluate("""async () => {
        const t = performance.now();
        const ok = (await fetch('/api/info')).ok;
        return ok ? performance.now() - t : -1;
    }""")
    assert 0 <= took < 5000
    assert page.text_content("#reason").startswith("csp (")
    if page.text_content("#auto") == "stop":
        page.click("#auto")
    assert page.text_content("#auto") == "auto play"


def test_a_pasted_position_travels_in_its_address(page, browser, server):
    text = "1 1 .\n. F .\n. . ."
    page.select_option("#mode", "analyse")
    page.click("#editor summary")
    page.fill("#paste", text)
    page.fill("#pos-mines", "3")
    page.click("#load-text")
    page.wait_for_function("game.rows === 3 && game.cols === 3")
    page.click("#copy-address")
    url = page.text_content("#address")
    assert url.endswith("#pos=3x3x3:11..F....")
    # A new page opened at that address shows the same position, in the analyser, with its overlay.
    other = browser.new_page()
    other.goto(url)
    other.wait_for_function("document.querySelectorAll('.cell .p').length > 0")
    assert other.evaluate("positionCode()") == "3x3x3:11..F...."
    assert other.evaluate("mode") == "analyse"
    want = ns.analyze(ns.parse_observation(text, 3)).probabilities
    titles = other.evaluate("cells.map((el) => el.title)")
    assert abs(float(titles[8].split("= ")[1]) - want[2, 2]) <= 1e-9
    # Editing by keys: the cell under the pointer becomes a 2, and the download is analyze's text.
    other.locator(".cell").nth(8).hover()
    other.keyboard.press("2")
    assert other.evaluate("positionCode()") == "3x3x3:11..F...2"
    with other.expect_download() as download:
        other.click("#download")
    assert Path(download.value.path()).read_text() == "1 1 .\n. F .\n. . 2\n"
    other.close()


def test_an_evf_replay_opens_with_its_grade(page, tmp_path):
    pytest.importorskip("ms_toollib", reason="reading replays needs the replays extra: make setup")
    from test_replays import _beginner_game, record

    from nnsweeper.players.grading import grade
    from nnsweeper.players.replays import read_replay

    for seed in range(40):
        mines, clicks, rec = _beginner_game(seed)
        if rec.guesses >= 2:
            break
    path = record(tmp_path, mines, clicks)
    want = grade(read_replay(path)).summary()
    page.select_option("#mode", "review")
    page.set_input_files("#review-file", str(path))
    page.wait_for_function("document.querySelector('#review-summary').textContent.length > 0", timeout=60_000)
    summary = page.text_content("#review-summary")
    assert summary.startswith("EVF replay game.evf: 9x9/10, " + ("won" if want["won"] else "lost"))
    assert f"{want['guesses']} guesses" in summary and f"3BV {want['3bv']}" in summary
    # Stepping to the end shows the game's last board: every cell the replay opened.
    page.click("#review-last")
    opened = page.evaluate("Array.from(game.grid).filter((v) => v >= 0).length")
    assert opened == (81 - 10 if want["won"] else opened) and opened > 0
    page.click("#review-first")
    assert page.evaluate("Array.from(game.grid).every((v) => v < 0)")
    assert page.text_content("#review-move").startswith("next, move 1: reveal ")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("+document.querySelector('#review-step').value") == 1


def test_every_solvers_next_move_with_its_reason(page):
    from nnsweeper.solvers.suggest import suggest_move

    _new_game(page, "beginner", 9, source="none")
    _cell(page, (9, 9), 4, 4).click()
    page.wait_for_function("document.querySelectorAll('.cell.open').length > 0")
    page.select_option("#solver", "every solver")
    page.click("#hint")
    solvers = page.evaluate("info.solvers")
    page.wait_for_function("document.querySelector('#reason').textContent.split('\\n').length === "
                           f"{len(solvers)}")
    lines = page.text_content("#reason").split("\n")
    grid = np.array(page.evaluate("Array.from(game.grid)"), dtype=np.int8).reshape(9, 9)
    want = suggest_move("csp", ns.Observation.of(grid, 10), np.random.default_rng(9))
    line = next(x for x in lines if x.startswith("csp ("))
    assert line == f"csp ({want.cell[0]}, {want.cell[1]}): {want.reason}"


def test_touch_a_tap_reveals_and_a_long_press_flags(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = context.new_page()
    page.goto(server)
    page.wait_for_function("document.querySelector('#solver').options.length > 0")
    _new_game(page, "beginner", 7, source="none")

    def press(k: int, ms: int) -> None:
        cell = page.locator(".cell").nth(k)
        init = {"pointerType": "touch", "isPrimary": True, "bubbles": True}
        cell.dispatch_event("pointerdown", init)
        page.wait_for_timeout(ms)
        cell.dispatch_event("pointerup", init)

    press(40, 50)  # a tap: the first click
    page.wait_for_function("document.querySelectorAll('.cell.open').length > 0")
    covered = page.evaluate("Array.from(game.grid).findIndex((v, k) => v < 0)")
    press(covered, 700)  # held past the long press: a flag, nothing revealed
    assert page.evaluate(f"game.flags[{covered}]") == 1 and page.evaluate(f"game.grid[{covered}]") == -1
    context.close()
