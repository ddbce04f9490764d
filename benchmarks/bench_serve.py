"""nnsweeper serve under load: the page's time from a move to its overlay, and many analyses at once.

Starts ``nnsweeper serve`` on a free port and measures, on expert positions of seeded
``csp`` games (the board before each of its moves, ``--positions`` of them):

- **overlay**: in headless Chromium (Playwright with the system's browser), the time from a
  change of the board on the page to the overlay painted on it, for the exact engine and for
  each network, as the page does it (its request, the server's work, the drawing): median,
  90th percentile and longest;
- **hostile**: malformed and oversized requests to ``POST /api/analyze``: the status of each
  and whether its answer is one line;
- **concurrent**: ``--concurrent`` analyses of the positions sent at once (one thread each):
  how many were answered and how, the longest wait, and the server's resident memory
  before and after.

::

    python benchmarks/bench_serve.py
    python benchmarks/bench_serve.py --positions 100 --concurrent 200

Without Playwright or Chromium the overlay part is left out, and said so.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

from nnsweeper.players.serve import serving

ROOT = Path(__file__).resolve().parents[1]


def positions(count: int, seed: int = 90_000) -> list[tuple[str, int]]:
    """``count`` expert positions (board text, mines) from seeded csp games, a few per game."""
    import nnsweeper as ns
    from nnsweeper.solvers.replay import game_frames

    out = []
    game = seed
    while len(out) < count:
        frames = game_frames(ns.get_solver("csp", start="corner"), ns.MinesweeperEnv(16, 30, 99, seed=game),
                             np.random.default_rng(game), final=False, group_certain=True)
        for f in frames[1::2]:
            out.append((ns.format_board(f["grid"], f["flags"]), 99))
        game += 1
    return out[:count]


def _post(url: str, body: bytes, timeout: float = 120) -> tuple[int, dict, float]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, json.loads(r.read()), time.perf_counter() - t
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}"), time.perf_counter() - t


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def hostile(url: str) -> list[tuple[str, int, bool]]:
    """Malformed and oversized requests: (what, status, answered in one line)."""
    cases = [
        ("not JSON", b"{bad"), ("a list", b"[1]"), ("bytes that are no text", b"\xff\xfe\xfd"),
        ("no board", b'{"mines": 3}'), ("a number for the board", b'{"board": 5, "mines": 3}'),
        ("a string for the mines", b'{"board": "1 .", "mines": "3"}'),
        ("true for the mines", b'{"board": "1 .", "mines": true}'), ("no mines", b'{"board": "1 ."}'),
        ("an unknown character", b'{"board": "1 x", "mines": 1}'),
        ("ragged rows", b'{"board": "1 .\\n.", "mines": 1}'),
        ("an empty board", b'{"board": "", "mines": 1}'),
        ("negative mines", b'{"board": "1 .", "mines": -1}'),
        ("10^30 mines", b'{"board": "1 .", "mines": 1000000000000000000000000000000}'),
        ("an 8 with 3 neighbours", b'{"board": "8 .\\n. .", "mines": 3}'),
        ("a header that disagrees", b'{"board": "3x3x2\\n11H\\nHMH\\nHHH", "mines": 5}'),
        ("1001 rows", json.dumps({"board": ".\n" * 1001, "mines": 1}).encode()),
        ("a 260x260 board", json.dumps({"board": (". " * 260 + "\n") * 260, "mines": 1}).encode()),
        ("a 2 MiB body", json.dumps({"board": "." * (2 << 20), "mines": 1}).encode()),
        ("nested JSON 100,000 deep", b"[" * 100_000 + b"]" * 100_000),
        ("a board past the engine's limit", None),  # filled in below
    ]
    import nnsweeper as ns

    game = ns.Game(ns.Rules(16, 30, 99), 3)
    game.reveal(0, 0)
    grid = np.full(game.board.shape, -1)
    shown = np.zeros(game.board.shape, dtype=bool)
    shown[::2, ::2] = True
    shown &= game.board >= 0
    grid[shown] = game.board[shown]
    cases[-1] = (cases[-1][0], json.dumps({"board": ns.format_board(grid), "mines": 99}).encode())
    out = []
    for what, body in cases:
        status, answer, _ = _post(url + "api/analyze", body)
        error = answer.get("error", "")
        out.append((what, status, isinstance(error, str) and bool(error) and "\n" not in error))
    return out


def concurrent(url: str, pid: int, boards: list[tuple[str, int]], n: int) -> dict:
    before = _rss_mib(pid)
    results: list = [None] * n

    def ask(k: int) -> None:
        text, mines = boards[k % len(boards)]
        results[k] = _post(url + "api/analyze", json.dumps({"board": text, "mines": mines}).encode())

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(n)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t
    statuses: dict = {}
    for status, _, _ in results:
        statuses[status] = statuses.get(status, 0) + 1
    return {"requests": n, "statuses": statuses, "longest_s": max(r[2] for r in results), "wall_s": wall,
            "rss_before_mib": before, "rss_after_mib": _rss_mib(pid)}


def overlay(url: str, boards: list[tuple[str, int]], sources: list[str]) -> dict:
    """Seconds from a board set on the page to its overlay painted, per source."""
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("NNSWEEPER_CHROMIUM") or shutil.which("chromium")
    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url)
        page.wait_for_function("document.querySelector('#solver').options.length > 0")
        page.select_option("#mode", "analyse")
        for source in sources:
            page.select_option("#source", source)
            times = []
            for text, mines in boards:
                grid = [[-1 if c in ".F" else int(c) for c in line.split()] for line in text.splitlines()]
                flags = [[c == "F" for c in line.split()] for line in text.splitlines()]
                # Set the position, then wait for the overlay's first painted cell of this board.
                ms = page.evaluate("""async ([grid, flags, mines]) => {
                    const t = performance.now();
                    setPosition(grid, flags, mines);
                    while (!document.querySelector('.cell .p')) await new Promise((r) => setTimeout(r, 1));
                    return performance.now() - t;
                }""", [grid, flags, mines])
                times.append(ms / 1000)
            out[source] = times
        browser.close()
    return out


def _summary(times: list[float]) -> str:
    a = np.array(times) * 1000
    return (f"median {np.median(a):.0f} ms, 90th percentile {np.percentile(a, 90):.0f} ms, longest "
            f"{a.max():.0f} ms over {len(a)}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=100, help="expert positions (default: 100)")
    parser.add_argument("--concurrent", type=int, default=200, help="analyses sent at once (default: 200)")
    args = parser.parse_args(argv)
    boards = positions(args.positions)
    with serving(cwd=ROOT) as (url, proc):
        with urllib.request.urlopen(url + "api/info", timeout=60) as r:
            info = json.loads(r.read())
        print(f"nnsweeper {info['version']} serve, {len(boards)} expert positions of seeded csp games; "
              f"load average {os.getloadavg()[0]:.2f} at the start")
        rows = hostile(url)
        print(f"hostile requests to POST /api/analyze: {sum(400 <= s < 500 for _, s, _ in rows)} of "
              f"{len(rows)} answered 4xx, {sum(one for *_, one in rows)} in one line")
        for what, status, one in rows:
            print(f"  {status} {'one line' if one else 'NOT ONE LINE'}  {what}")
        c = concurrent(url, proc.pid, boards, args.concurrent)
        print(f"{c['requests']} analyses at once: statuses {c['statuses']}, longest answer "
              f"{c['longest_s']:.2f} s, all in {c['wall_s']:.2f} s; server memory "
              f"{c['rss_before_mib']:.0f} MiB before, {c['rss_after_mib']:.0f} MiB after")
        browser = os.environ.get("NNSWEEPER_CHROMIUM") or shutil.which("chromium")
        if importlib_available("playwright") and browser:
            times = overlay(url, boards, ["exact", *info["models"]])
            for source, t in times.items():
                print(f"move to overlay, {source}: {_summary(t)}")
        else:
            print("move to overlay: left out (needs Playwright and Chromium)")
    return 0


def importlib_available(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


if __name__ == "__main__":
    sys.exit(main())
