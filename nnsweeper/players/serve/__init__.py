"""``nnsweeper serve``: the game, the exact engine and the networks in the browser.

A page with no build step and nothing fetched from elsewhere (it runs offline): plain
HTML, CSS and one script under ``static/``, served with the JSON endpoints of
:mod:`nnsweeper.players.serve.api` by Starlette on uvicorn (the ``serve`` extra:
``pip install "nnsweeper[serve]"``). It binds to 127.0.0.1 unless told otherwise.

>>> from nnsweeper.players.serve import create_app          # doctest: +SKIP
>>> from starlette.testclient import TestClient      # doctest: +SKIP
>>> TestClient(create_app()).post("/api/analyze", json={"board": "1 .\\n. .", "mines": 1}).json()
{'probabilities': [[None, 0.3333333333333333], [0.3333333333333333, 0.3333333333333333]], ...}
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

__all__ = ["STATIC", "Limits", "create_app", "serve", "serving"]

#: The page's files.
STATIC = Path(__file__).with_name("static")

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def __getattr__(name):
    if name in ("Limits", "create_app"):
        from nnsweeper.players.serve import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def serve(host: str = "127.0.0.1", port: int = 8000, *, open_browser: bool = True, limits=None) -> None:
    """Serve the page and its endpoints until interrupted (Ctrl-C).

    Parameters
    ----------
    host : str, default="127.0.0.1"
        The address to bind; anything but the loopback exposes the page and its endpoints
        (the engine, the networks and the solvers) to every machine that reaches it, and
        the server says so when it starts.
    port : int, default=8000
        The port (0: any free one).
    open_browser : bool, default=True
        Open the page in the user's browser once the server listens.
    limits : Limits, optional
        What one request may ask (:class:`~nnsweeper.players.serve.api.Limits`).
    """
    import socket
    import threading
    import webbrowser

    import uvicorn

    from nnsweeper.players.serve.api import create_app

    app = create_app(limits)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))  # bound here, so that the address printed is the one that listens
    sock.listen(2048)  # connections wait in the queue from now on, before the server runs
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else shown}:{bound}/"
    print(f"nnsweeper serve: the page is at {url} (Ctrl-C stops the server)", flush=True)
    if host not in _LOOPBACK:
        print(f"nnsweeper serve: note: bound to {host}, not the loopback: every machine that reaches "
              f"port {bound} here can use the page and its endpoints (the engine, the networks and the "
              "solvers)", file=sys.stderr, flush=True)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, (url,)).start()
    config = uvicorn.Config(app, log_level="warning", limit_concurrency=256, timeout_keep_alive=5)
    uvicorn.Server(config).run(sockets=[sock])


@contextmanager
def serving(*args: str, cwd=None):
    """``nnsweeper serve`` in a process of its own, on a free port: yields ``(url, process)``.

    The server is started as the command line starts it (``python -m nnsweeper serve --port 0
    --no-browser``, then ``args``, such as ``"--host", "0.0.0.0"``), its address read from the
    line it prints once it listens, and it is stopped on leaving the block. The process's
    standard output and error are pipes (text). For scripts and tests that drive the page
    from outside (a browser, many clients at once).
    """
    cmd = [sys.executable, "-m", "nnsweeper", "serve", "--port", "0", "--no-browser", *args]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd) as proc:
        try:
            line = proc.stdout.readline()
            if " at http://" not in line:
                proc.terminate()
                raise RuntimeError(f"nnsweeper serve did not start: {(line + proc.stderr.read()).strip()}")
            yield line.split(" at ")[1].split()[0], proc
        finally:
            proc.terminate()
            proc.wait(timeout=30)
