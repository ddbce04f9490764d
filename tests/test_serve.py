"""nnsweeper serve: the page's endpoints against the engine, the game and the solvers, and hostile input."""

import json
import subprocess
import sys
import threading
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

import nnsweeper as ns  # noqa: E402
from nnsweeper.players.serve import STATIC, Limits, create_app, serving  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def _text(grid, flags=None):
    return ns.format_board(np.asarray(grid), flags)


def test_analyze_gives_the_engines_exact_values(client):
    # A 1 in the corner of a 3x3 board with 2 mines: 1/3 next to it, 1/5 elsewhere (15 layouts).
    r = client.post("/api/analyze", json={"board": "1 . .\n. . .\n. . .", "mines": 2})
    assert r.status_code == 200
    body = r.json()
    assert body["layouts"] == "15" and body["mines_left"] == 2
    p = body["probabilities"]
    assert p[0][0] is None
    assert [Fraction(x).limit_denominator(100) for x in (p[0][1], p[1][1], p[2][2])] == [
        Fraction(1, 3), Fraction(1, 3), Fraction(1, 5)]
    # The header format carries its own count; a flag's value is 1 (the engine takes it as a mine).
    r = client.post("/api/analyze", json={"board": "3x3x2\n11H\nHMH\nHHH"})
    assert r.status_code == 200 and r.json()["probabilities"][1][1] == 1.0


def test_analyze_equals_ns_analyze_on_played_positions(client):
    from nnsweeper.solvers.replay import game_frames

    checked = 0
    for seed in range(2):
        frames = game_frames(ns.get_solver("csp"), ns.MinesweeperEnv(16, 30, 99, seed=seed),
                             np.random.default_rng(seed), final=False)
        for f in frames[1::3]:
            obs = ns.Observation.of(f["grid"], 99, f["flags"])
            want = ns.analyze(obs).probabilities
            text = _text(f["grid"], f["flags"])
            got = client.post("/api/analyze", json={"board": text, "mines": 99}).json()
            p = np.array([[np.nan if v is None else v for v in row] for row in got["probabilities"]])
            covered = obs.grid < 0
            assert np.isnan(p[~covered]).all()
            assert np.array_equal(p[covered], want[covered])  # the same float64, bit for bit
            checked += 1
    assert checked >= 4


def test_parse_reads_both_formats_as_analyze_does(client):
    r = client.post("/api/parse", json={"text": "1 F .\n. . ."}).json()
    assert r == {"grid": [[1, -1, -1], [-1, -1, -1]], "flags": [[False, True, False], [False] * 3],
                 "mines": None}
    r = client.post("/api/parse", json={"text": "3x2x2\n11H\nHMm"}).json()
    assert r["mines"] == 2 and r["flags"][1] == [False, True, False] and r["grid"][1] == [-1, -1, -1]
    bad = client.post("/api/parse", json={"text": "1 x"})
    assert bad.status_code == 400 and "\n" not in bad.json()["error"]


def test_review_grades_a_saved_game_as_grade_does(client, tmp_path):
    import base64

    from nnsweeper.players.grading import grade
    from nnsweeper.players.play import GAME_FORMAT

    log = {"format": GAME_FORMAT, "rows": 9, "cols": 9, "mines": 10, "first_click": "safe", "seed": 3,
           "actions": [["reveal", 4, 4], ["reveal", 0, 0], ["flag", 1, 1], ["reveal", 8, 8]]}
    (tmp_path / "g.json").write_text(json.dumps(log))
    data = base64.b64encode((tmp_path / "g.json").read_bytes()).decode()
    r = client.post("/api/review", json={"name": "my game.json", "data": data})
    assert r.status_code == 200, r.json()
    body = r.json()
    want = grade(tmp_path / "g.json")
    assert body["grade"]["summary"]["luck"] == pytest.approx(want.summary()["luck"])
    assert [m["number"] for m in body["grade"]["moves"]] == [m.number for m in want.moves]
    assert body["moves"][0] == {"action": "reveal", "cells": [[4, 4]]}
    game = ns.Game(ns.Rules(9, 9, 10), 3)
    game.reveal(4, 4)
    assert body["mines"] == np.flatnonzero((game.board == -1).ravel()).tolist()
    for name, payload, words in [("g.txt", data, "a game is the JSON file"), ("g.json", "@@@", "base64"),
                                 ("g.json", base64.b64encode(b"{}").decode(), "not a saved game"),
                                 ("g.evf", base64.b64encode(b"not a replay").decode(), "")]:
        bad = client.post("/api/review", json={"name": name, "data": payload})
        assert 400 <= bad.status_code < 500 and words in bad.json()["error"], (name, bad.json())
        assert "\n" not in bad.json()["error"]


def test_layout_is_the_games_own(client):
    from nnsweeper.players.grading import bbbv

    for rule, (rows, cols, mines) in [("safe", (9, 9, 10)), ("zero", (8, 8, 12)), ("none", (5, 7, 6)),
                                      ("no-guess-fast", (8, 8, 10))]:
        for seed in (0, 5):
            click = (rows // 2, cols // 3)
            r = client.post("/api/layout", json={"rows": rows, "cols": cols, "mines": mines,
                                                 "first_click": rule, "seed": seed, "click": list(click)})
            assert r.status_code == 200, r.json()
            game = ns.Game(ns.Rules(rows, cols, mines, rule), seed)
            game.reveal(*click)
            assert r.json()["mines"] == np.flatnonzero((game.board == -1).ravel()).tolist()
            assert r.json()["3bv"] == bbbv(game.board == -1)


def test_predict_is_the_networks_predict_proba(client):
    models = client.get("/api/info").json()["models"]
    if "gnn" not in models:
        pytest.skip("no bundled GNN here")
    from nnsweeper.models import load_model

    text = "1 1 .\n. F .\n. . ."
    got = client.post("/api/predict", json={"board": text, "mines": 3, "model": "gnn"}).json()
    got = got["probabilities"]
    want = load_model("gnn").predict_proba(ns.parse_observation(text, 3))
    assert got[0][0] is None and got[0][1] is None
    assert got[2][2] == pytest.approx(float(want[2, 2]), abs=1e-9)


def test_suggest_is_the_solvers_move_with_its_reason(client):
    from nnsweeper.solvers.suggest import suggest_move

    text = "1 . .\n. . .\n. . ."
    got = client.post("/api/suggest", json={"board": text, "mines": 2, "solver": "csp", "seed": 4}).json()
    want = suggest_move("csp", ns.parse_observation(text, 2), np.random.default_rng(4))
    assert tuple(got["cell"]) == want.cell and got["reason"] == want.reason and got["kind"] == "guess"
    assert got["probability"] == pytest.approx(0.2)
    # A single-point guess records no probability: null, not NaN (which is no JSON).
    sp = client.post("/api/suggest", json={"board": text, "mines": 2, "solver": "single_point"})
    assert sp.status_code == 200 and sp.json()["probability"] is None


MALFORMED = [
    (b"{bad json", 400, "not JSON"),
    (b"[1, 2]", 400, "JSON object"),
    (b"\xff\xfe", 400, "not JSON"),
    (b"[" * 100_000 + b"]" * 100_000, 400, "nests its JSON deeper"),
    (json.dumps({"mines": 2}).encode(), 400, "lacks 'board'"),
    (json.dumps({"board": 7, "mines": 2}).encode(), 400, "'board' must be a string"),
    (json.dumps({"board": "1 .", "mines": "2"}).encode(), 400, "'mines' must be an integer"),
    (json.dumps({"board": "1 .", "mines": True}).encode(), 400, "'mines' must be an integer"),
    (json.dumps({"board": "1 ."}).encode(), 400, "lacks 'mines'"),
    (json.dumps({"board": "1 x\n. .", "mines": 1}).encode(), 400, ""),
    (json.dumps({"board": "1 .\n.", "mines": 1}).encode(), 400, ""),
    (json.dumps({"board": "", "mines": 1}).encode(), 400, ""),
    (json.dumps({"board": "1 .\n. .", "mines": -1}).encode(), 400, ""),
    (json.dumps({"board": "1 .\n. .", "mines": 10**30}).encode(), 422, "do not fit"),
    (json.dumps({"board": "8 .\n. .", "mines": 3}).encode(), 422, ""),
    (json.dumps({"board": "0 .\n. .", "mines": 3}).encode(), 422, ""),
    (json.dumps({"board": "3x3x2\n11H\nHMH\nHHH", "mines": 5}).encode(), 422, "header says 2"),
    (json.dumps({"board": ".\n" * 1001, "mines": 1}).encode(), 400, "1000"),
    (json.dumps({"board": (". " * 260 + "\n") * 260, "mines": 1}).encode(), 422, "at most 62500"),
]


def test_malformed_requests_get_one_line_and_a_4xx(client):
    assert len(MALFORMED) >= 18
    for body, status, words in MALFORMED:
        r = client.post("/api/analyze", content=body, headers={"content-type": "application/json"})
        assert r.status_code == status, (body[:40], r.json())
        error = r.json()["error"]
        assert isinstance(error, str) and error and "\n" not in error and words in error
        assert "Traceback" not in error
    others = [("/api/layout", {"rows": 9, "cols": 9, "mines": 81, "click": [0, 0]}, 400),
              ("/api/layout", {"rows": 9, "cols": 9, "mines": 10, "click": [9, 0]}, 400),
              ("/api/layout", {"rows": 9, "cols": 9, "mines": 10, "click": "a"}, 400),
              ("/api/layout", {"rows": 10**6, "cols": 10**6, "mines": 10, "click": [0, 0]}, 422),
              ("/api/layout", {"rows": 9, "cols": 9, "mines": 10, "seed": -1, "click": [0, 0]}, 400),
              ("/api/layout", {"rows": 9, "cols": 9, "mines": 10, "first_click": "x", "click": [0, 0]}, 400),
              ("/api/predict", {"board": "1 .\n. .", "mines": 1, "model": "nosuch"}, 404),
              ("/api/suggest", {"board": "1 .\n. .", "mines": 1, "solver": "nosuch"}, 404),
              ("/api/suggest", {"board": "1 .\n. .", "mines": 1, "solver": "csp", "seed": -3}, 400)]
    for path, body, status in others:
        r = client.post(path, json=body)
        assert r.status_code == status, (path, body, r.json())
        assert "\n" not in r.json()["error"]
    r = client.get("/api/nosuch")
    assert r.status_code == 404 and r.json()["error"] == "GET /api/nosuch: Not Found"
    assert client.get("/api/analyze").status_code == 405


def test_oversized_bodies_and_boards_are_refused_before_the_work():
    with TestClient(create_app(Limits(body_bytes=1000, max_cells=100))) as c:
        big = json.dumps({"board": ". " * 600, "mines": 1})
        r = c.post("/api/analyze", content=big, headers={"content-type": "application/json"})
        assert r.status_code == 413 and "at most 1000" in r.json()["error"]

        def chunks():  # no content-length: counted as it streams in
            for _ in range(10):
                yield b" " * 200

        r = c.post("/api/analyze", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413 and "over 1000 bytes" in r.json()["error"]
        r = c.post("/api/analyze", json={"board": (". " * 11 + "\n") * 10, "mines": 3})
        assert r.status_code == 422 and "at most 100" in r.json()["error"]


def test_the_engines_limit_is_a_422_with_its_own_message(client):
    # Every other cell of every other row of an expert game revealed: one frontier of hundreds of
    # cells, tangled in two dimensions, past the engine's bound on the partial layouts it keeps.
    game = ns.Game(ns.Rules(16, 30, 99), 3)
    game.reveal(0, 0)
    board = game.board
    grid = np.full(board.shape, -1)
    shown = np.zeros(board.shape, dtype=bool)
    shown[::2, ::2] = True
    shown &= board >= 0
    grid[shown] = board[shown]
    r = client.post("/api/analyze", json={"board": _text(grid), "mines": 99})
    assert r.status_code == 422
    assert "the engine refuses it" in r.json()["error"] and "\n" not in r.json()["error"]


def test_a_no_guess_board_not_found_in_the_budget_is_refused_never_made_up():
    with TestClient(create_app(Limits(no_guess_seconds=0.5))) as c:
        r = c.post("/api/layout", json={"rows": 9, "cols": 9, "mines": 60, "first_click": "no-guess",
                                        "seed": 1, "click": [4, 4]})
        assert r.status_code == 422
        assert r.json()["error"].startswith("no no-guess layout of 9x9 with 60 mines")


def test_many_requests_at_once_are_all_answered(client):
    text = "1 . .\n. . .\n. . ."
    results = []

    def ask():
        r = client.post("/api/analyze", json={"board": text, "mines": 2})
        results.append((r.status_code, r.json()["layouts"]))

    threads = [threading.Thread(target=ask) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [(200, "15")] * 40


def test_the_page_and_its_files_are_served_with_nothing_from_elsewhere(client):
    page = client.get("/")
    assert page.status_code == 200 and "<script src=\"/static/app.js\">" in page.text
    for name in ("app.js", "style.css"):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200
    for path in STATIC.iterdir():
        text = path.read_text()
        assert "http://" not in text and "https://" not in text and "//cdn" not in text, path.name
    info = client.get("/api/info").json()
    assert info["presets"]["expert"] == [16, 30, 99] and "no-guess" in info["first_click_rules"]
    assert "csp" in info["solvers"] and info["limits"]["max_cells"] == Limits().max_cells


def test_the_command_serves_on_the_loopback_and_says_where():
    import urllib.request

    with serving(cwd=ROOT) as (url, _):
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "api/info", timeout=30) as r:
            assert json.loads(r.read())["version"] == ns.__version__
    bad = subprocess.run([sys.executable, "-m", "nnsweeper", "serve", "--port", "70000"], capture_output=True,
                         text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_a_server_that_cannot_start_says_why():
    with pytest.raises(RuntimeError, match="did not start: .*port"):
        with serving("--port", "70000", cwd=ROOT):
            pass


def test_another_address_is_said_to_be_exposed():
    with serving("--host", "0.0.0.0", cwd=ROOT) as (_, proc):
        note = proc.stderr.readline()
        assert "not the loopback" in note and "every machine that reaches port" in note
