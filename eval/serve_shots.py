"""Screenshots of the page of ``nnsweeper serve`` for the docs, desktop-sized and phone-sized.

Starts the server, plays a few seeded moves in headless Chromium (Playwright with the
system's browser: ``NNSWEEPER_CHROMIUM`` or ``chromium`` on the PATH) and writes
``docs/images/serve-desktop.png`` (an expert game with the exact overlay and a hint) and
``docs/images/serve-phone.png`` (a beginner game on a 390x844 window)::

    python eval/serve_shots.py
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from nnsweeper.players.serve import serving

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"


def _play(page, preset: str, seed: int, clicks, cols: int, source: str = "exact") -> None:
    page.select_option("#preset", preset)
    page.select_option("#source", source)
    page.fill("#seed", str(seed))
    page.click("#new")
    page.wait_for_function(f"game.seed === {seed}")
    for i, j in clicks:
        page.locator(".cell").nth(i * cols + j).click()
        page.wait_for_function("document.querySelectorAll('.cell.open').length > 0")
    page.wait_for_function("document.querySelectorAll('.cell .p').length > 0")


def main() -> int:
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("NNSWEEPER_CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        print("serve_shots.py: needs Chromium (NNSWEEPER_CHROMIUM or chromium on the PATH)", file=sys.stderr)
        return 2
    with serving(cwd=ROOT) as (url, _):
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 820})
            page.goto(url)
            page.wait_for_function("document.querySelector('#solver').options.length > 0")
            _play(page, "expert", 2026, [(8, 15)], 30)
            page.select_option("#solver", "search")
            page.click("#hint")
            page.wait_for_function("document.querySelector('#reason').textContent.length > 0")
            page.screenshot(path=str(IMAGES / "serve-desktop.png"), full_page=True)
            phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
            phone.goto(url)
            phone.wait_for_function("document.querySelector('#solver').options.length > 0")
            _play(phone, "beginner", 7, [(4, 4)], 9)
            phone.screenshot(path=str(IMAGES / "serve-phone.png"), full_page=True)
            browser.close()
    print(f"wrote {IMAGES / 'serve-desktop.png'} and {IMAGES / 'serve-phone.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
