"""The page's server: its JSON endpoints, their limits, and the app that serves them with the page.

Every endpoint takes and answers JSON. A request that cannot be answered gets
``{"error": "<one line>"}`` and a 4xx status (400 a malformed request, 404 an unknown
model or path, 413 a body over :attr:`Limits.body_bytes`, 422 a well-formed request the
rules refuse: a board that no layout fits, one over the engine's limit, no no-guess board
within the budget), or 503 while every worker is busy for longer than
:attr:`Limits.queue_seconds`. No traceback reaches the page or goes unhandled in the log.

The engine's work runs in worker threads (at most :attr:`Limits.workers` at once), off
the event loop, so the server keeps answering while a long analysis runs; each analysis is
bounded by the engine's own limit on the states it keeps (:attr:`Limits.max_states`), and
a board by :attr:`Limits.max_cells`.

Endpoints (``/api/...``):

- ``GET info``: the version, presets, first-click rules, the networks that can be asked,
  the solvers and the limits.
- ``POST analyze``: ``{"board": TEXT, "mines": N}`` (``TEXT`` as ``nnsweeper analyze``
  reads it; ``mines`` may be left out when the text's header carries it) ->
  ``{"probabilities": [[p or null, ...], ...], "layouts": "COUNT", "mines_left": M}``:
  the exact P(mine) of every covered cell (a flag's is 1: the engine takes flags as
  mines), null for revealed cells, and the number of layouts (a decimal string: it can
  be larger than any float).
- ``POST predict``: ``{"board", "mines", "model": "gnn" | "cnn"}`` -> ``{"probabilities"}``:
  the network's P(mine) (``predict_proba``), null for revealed cells.
- ``POST suggest``: ``{"board", "mines", "solver": NAME, "seed": S}`` -> the solver's next
  move (``cell``, ``kind``, ``probability``, ``exact_probability``, ``flags``, ``reason``, and
  for a look-ahead guess the ``candidates`` it scored, best first: ``cell``, ``probability``,
  ``score`` (the chance that it and the next decision are safe), ``progress``, ``dead``), as
  ``nnsweeper play``'s hint gives it.
- ``POST parse``: ``{"text": TEXT}`` -> ``{"grid": [[-1 or 0..8, ...], ...], "flags": [[bool,
  ...], ...], "mines": N or null}``: a board's text as ``analyze`` reads it (either format;
  ``mines`` is the count a ``WxHxM`` header carries).
- ``POST review``: ``{"name": FILE NAME, "data": BASE64}`` (a game ``nnsweeper play --save``
  wrote, ``.json``, or an ``.avf``, ``.rmv``, ``.mvf`` or ``.evf`` replay, read by the
  project's own readers) -> ``{"rows", "cols", "mines": [INDEX, ...], "moves": [{"action",
  "cells"}, ...], "source", "grade"}``: the layout, what each move opened, and
  :func:`~nnsweeper.players.grading.grade`'s review (``GameGrade.to_dict``: each move's exact risk,
  its loss in chance of winning, the better cell; the summary with mistakes, accuracy, luck).
- ``POST layout``: ``{"rows", "cols", "mines", "first_click", "seed", "click": [ROW, COL]}``
  -> ``{"mines": [INDEX, ...], "3bv": N}``: the mines of ``Game(Rules(rows, cols, mines,
  first_click), seed)`` after a first click there (flat indices, row-major), the same
  layout the game engine places, and its 3BV (:func:`~nnsweeper.players.grading.bbbv`).
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import asdict, dataclass

import numpy as np

from nnsweeper._version import __version__
from nnsweeper.errors import EngineLimitError, InconsistentBoardError, NnsweeperError
from nnsweeper.noguess import NoGuessBudgetError

__all__ = ["Limits", "RequestError", "create_app"]


@dataclass(frozen=True)
class Limits:
    """What one request may ask of the server.

    Attributes
    ----------
    body_bytes : int
        Largest request body (bytes; 1 MiB: a replay file in base64 fits, an expert game's is
        tens of kilobytes); a larger one is refused (413) before it is read whole.
    max_cells : int
        Largest board (rows x columns) the endpoints analyse, predict, suggest or lay out.
    max_states : int
        The exact engine's bound on the partial layouts it keeps
        (:data:`nnsweeper.engine.probability.MAX_STATES` by default); a board over it is
        refused (422) with the engine's own message.
    workers : int
        Engine calls running at once (threads); more wait their turn.
    queue_seconds : float
        Longest wait for a worker before the request is refused (503).
    no_guess_seconds : float
        Longest search for a no-guess layout (the game's own budget of certifications
        too); without one found in time the request is refused (422), never answered with
        an uncertified board.
    """

    body_bytes: int = 1 << 20
    max_cells: int = 250 * 250
    max_states: int = 1 << 20
    workers: int = 2
    queue_seconds: float = 30.0
    no_guess_seconds: float = 20.0


class RequestError(Exception):
    """A request the server refuses: ``status`` and a one-line ``message``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = " ".join(str(message).split())


def one_line(error: BaseException) -> str:
    """An exception's message on one line (its type's name when it has none)."""
    text = " ".join(str(error).split())
    return text or type(error).__name__


# --------------------------------------------------------------------------- reading requests
def _field(body: dict, name: str, kind, *, default=None, required: bool = True):
    """``body[name]`` checked to be of ``kind`` (bool is never an int here)."""
    if name not in body or body[name] is None:
        if required:
            raise RequestError(400, f"the request lacks {name!r}")
        return default
    value = body[name]
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise RequestError(400, f"{name!r} must be {_KIND_WORDS.get(kind, kind.__name__)}; got {value!r:.60}")
    return value


_KIND_WORDS = {int: "an integer", str: "a string", list: "a list"}


def _position(text: str, limits: Limits):
    """``parse_position`` of a board's text, refused past :attr:`Limits.max_cells`."""
    from nnsweeper.boardtext import parse_position

    grid, flags, carried = parse_position(text)
    if grid.size > limits.max_cells:
        raise RequestError(422, f"the board has {grid.size} cells; this server reads at most "
                                f"{limits.max_cells}")
    return grid, flags, carried


def _observation(body: dict, limits: Limits):
    """The position of a request: its board text and mine count, checked."""
    from nnsweeper.observation import Observation

    grid, flags, carried = _position(_field(body, "board", str), limits)
    mines = _field(body, "mines", int, required=False)
    if mines is None and carried is None:
        raise RequestError(400, "the request lacks 'mines' and the board text carries no count")
    if mines is not None and carried is not None and mines != carried:
        raise RequestError(422, f"the board text's header says {carried} mines; 'mines' is {mines}")
    return Observation.of(grid, carried if mines is None else mines, flags)


def _rows(p: np.ndarray, revealed: np.ndarray) -> list[list[float | None]]:
    """Probabilities as nested lists, None on revealed cells (JSON null)."""
    return [[None if r else float(v) for v, r in zip(prow, rrow, strict=True)]
            for prow, rrow in zip(p.tolist(), revealed.tolist(), strict=True)]


def _finite(value):
    """``value`` with every NaN or infinity as None (JSON has neither), tuples as lists."""
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


# --------------------------------------------------------------------------- the work
class Engine:
    """The work behind the endpoints (plain functions of a request's JSON; run in a worker)."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self._models: dict = {}
        self._model_lock = threading.Lock()
        self._names: list[str] | None = None

    def info(self) -> dict:
        from nnsweeper.game import FIRST_CLICK_RULES, PRESETS
        from nnsweeper.solvers import compare_solvers

        return {"version": __version__, "presets": {k: list(v) for k, v in PRESETS.items()},
                "first_click_rules": list(FIRST_CLICK_RULES), "models": self.model_names(),
                "solvers": compare_solvers(), "limits": asdict(self.limits)}

    def model_names(self) -> list[str]:
        """The networks ``predict`` can ask: those whose bundled weights are installed, when torch is
        (looked up once: neither changes while the server runs)."""
        if self._names is None:
            import importlib.util
            from importlib.resources import files

            from nnsweeper.models.registry import ARCHITECTURES

            weights = files("nnsweeper.models") / "weights"
            self._names = ([] if importlib.util.find_spec("torch") is None else
                           [name for name in ARCHITECTURES if (weights / f"{name}.pt").is_file()])
        return self._names

    def analyze(self, body: dict) -> dict:
        from nnsweeper.engine import analyze

        obs = _observation(body, self.limits)
        a = analyze(obs, max_states=self.limits.max_states)
        return {"probabilities": _rows(a.probabilities, obs.grid >= 0), "layouts": str(a.layouts),
                "mines_left": int(a.mines_left)}

    def predict(self, body: dict) -> dict:
        name = _field(body, "model", str)
        if name not in self.model_names():
            raise RequestError(404, f"no network {name!r} here; the networks: "
                                    f"{', '.join(self.model_names()) or 'none (torch is not installed)'}")
        obs = _observation(body, self.limits)
        p = np.asarray(self.model(name).predict_proba(obs), dtype=np.float64)
        return {"probabilities": _rows(p, obs.grid >= 0)}

    def model(self, name: str):
        with self._model_lock:  # one load per network, however many requests ask at once
            if name not in self._models:
                from nnsweeper.models import load_model

                self._models[name] = load_model(name)
            return self._models[name]

    def suggest(self, body: dict) -> dict:
        from nnsweeper.solvers import compare_solvers, get_solver
        from nnsweeper.solvers.suggest import suggest_move

        name = _field(body, "solver", str)
        if name not in compare_solvers():
            raise RequestError(404, f"no solver {name!r}; the solvers: {', '.join(compare_solvers())}")
        seed = _field(body, "seed", int, default=0, required=False)
        if seed < 0:
            raise RequestError(400, f"'seed' must be at least 0; got {seed}")
        obs = _observation(body, self.limits)
        if name.split("-")[-1] in self.model_names():
            solver = get_solver(name, model=self.model(name.split("-")[-1]))
        else:
            solver = get_solver(name)
        s = suggest_move(solver, obs, np.random.default_rng(seed), max_states=self.limits.max_states)
        if s is None:
            return {"cell": None, "reason": "nothing is left to reveal"}
        # A single-point guess records no probability (NaN): null.
        return _finite({"solver": name, "cell": s.cell, "kind": s.kind, "probability": s.probability,
                        "exact_probability": s.exact_probability, "flags": s.flags, "reason": s.reason,
                        # The search solver's look-ahead: every cell it scored, best first.
                        "candidates": [{"cell": c.cell, "probability": float(c.probability),
                                        "score": float(c.score), "progress": float(c.progress),
                                        "dead": bool(c.dead)} for c in s.candidates]})

    def review(self, body: dict) -> dict:
        """A saved game or a player's replay, graded: its layout, its moves and ``grade``'s review."""
        import base64
        import binascii
        import os
        import tempfile

        from nnsweeper.players.grading import grade, replay_of_log
        from nnsweeper.players.play import load_game
        from nnsweeper.players.replays import FORMATS, read_replay

        name = _field(body, "name", str)
        suffix = os.path.splitext(name)[1].lower()
        if suffix not in (*FORMATS, ".json"):
            raise RequestError(400, f"{name[:80]!r}: a game is the JSON file nnsweeper play --save writes, "
                                    f"or an .avf, .rmv, .mvf or .evf replay")
        try:
            data = base64.b64decode(_field(body, "data", str), validate=True)
        except (binascii.Error, ValueError):
            raise RequestError(400, "'data' must be the file's bytes in base64") from None
        with tempfile.TemporaryDirectory() as folder:  # the project's readers read files
            path = os.path.join(folder, f"game{suffix}")
            with open(path, "wb") as f:
                f.write(data)
            replay = replay_of_log(load_game(path)) if suffix == ".json" else read_replay(path)
        rows, cols = replay.mines.shape
        if rows * cols > self.limits.max_cells:
            raise RequestError(422, f"the game's board has {rows * cols} cells; this server reviews at most "
                                    f"{self.limits.max_cells}")
        graded = grade(replay)
        moves = [{"action": a, "cells": [list(map(int, c)) for c in cells]} for a, cells in replay.moves]
        return {"rows": int(rows), "cols": int(cols), "mines": np.flatnonzero(replay.mines.ravel()).tolist(),
                "moves": moves, "source": replay.source,
                "grade": _finite(graded.to_dict())}

    def parse(self, body: dict) -> dict:
        """A board's text read as ``analyze`` reads it: its grid, flags and the count its header carries."""
        grid, flags, mines = _position(_field(body, "text", str), self.limits)
        return {"grid": grid.tolist(), "flags": flags.tolist(), "mines": mines}

    def layout(self, body: dict) -> dict:
        from nnsweeper.game import NO_GUESS_RULES, NO_GUESS_TRIES, Game, Rules, draw_layout

        rows, cols, mines = (_field(body, k, int) for k in ("rows", "cols", "mines"))
        rule = _field(body, "first_click", str, default="safe", required=False)
        seed = Game._check_seed(_field(body, "seed", int, default=0, required=False))
        click = _field(body, "click", list)
        if rows * cols > self.limits.max_cells and rows > 0 and cols > 0:
            raise RequestError(422, f"a {rows}x{cols} board has {rows * cols} cells; this server lays out "
                                    f"at most {self.limits.max_cells}")
        rules = Rules(rows, cols, mines, rule)
        if (len(click) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in click)
                or not (0 <= click[0] < rows and 0 <= click[1] < cols)):
            raise RequestError(400, f"'click' must be [row, col] on the {rows}x{cols} board; "
                                    f"got {click!r:.60}")
        if rule in NO_GUESS_RULES:  # the game's layout, within this server's time as well
            from nnsweeper.noguess import no_guess_board

            mine = no_guess_board(rows, cols, mines, (click[0], click[1]), seed, mode=NO_GUESS_RULES[rule],
                                  max_tries=NO_GUESS_TRIES, time_limit=self.limits.no_guess_seconds)
        else:
            mine = draw_layout(rules, seed, (click[0], click[1]))
        from nnsweeper.players.grading import bbbv

        return {"mines": np.flatnonzero(mine.ravel()).tolist(), "3bv": bbbv(mine)}


# --------------------------------------------------------------------------- the app
def create_app(limits: Limits | None = None):
    """The ASGI app (Starlette): the page at ``/``, its files under ``/static``, the endpoints
    under ``/api`` (see the module)."""
    import anyio
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import FileResponse, JSONResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from nnsweeper.players.serve import STATIC

    limits = limits or Limits()
    engine = Engine(limits)
    limiter = anyio.CapacityLimiter(limits.workers)

    async def read_json(request) -> dict:
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > limits.body_bytes):
            raise RequestError(413, f"the request body is {size} bytes; at most {limits.body_bytes}")
        chunks, total = [], 0
        async for chunk in request.stream():
            total += len(chunk)
            if total > limits.body_bytes:
                raise RequestError(413, f"the request body is over {limits.body_bytes} bytes")
            chunks.append(chunk)
        try:
            body = json.loads(b"".join(chunks))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise RequestError(400, f"the request body is not JSON: {one_line(e)}") from None
        except RecursionError:
            raise RequestError(400, "the request body nests its JSON deeper than Python reads") from None
        if not isinstance(body, dict):
            raise RequestError(400, "the request body must be a JSON object")
        return body

    async def in_worker(fn, body):
        # Wait for a worker at most queue_seconds; once started, the engine's bounds end the work.
        with anyio.move_on_after(limits.queue_seconds) as waited:
            await limiter.acquire()
        if waited.cancel_called:
            raise RequestError(503, f"every worker is busy; tried for {limits.queue_seconds:g} s")
        try:
            return await anyio.to_thread.run_sync(fn, body)
        finally:
            limiter.release()

    def endpoint(fn):
        async def handle(request):
            try:
                body = await read_json(request)
                return JSONResponse(await in_worker(fn, body))
            except RequestError as e:
                return JSONResponse({"error": e.message}, status_code=e.status)
            except (InconsistentBoardError, EngineLimitError, NoGuessBudgetError) as e:
                return JSONResponse({"error": one_line(e)}, status_code=422)
            except (NnsweeperError, ValueError, OverflowError) as e:
                return JSONResponse({"error": one_line(e)}, status_code=400)
        return handle

    async def info(request):
        return JSONResponse(engine.info())

    async def index(request):
        return FileResponse(STATIC / "index.html")

    async def not_found(request, exc: HTTPException):
        return JSONResponse({"error": f"{request.method} {request.url.path}: {exc.detail}"},
                            status_code=exc.status_code)

    async def server_error(request, exc: Exception):
        return JSONResponse({"error": f"the server failed on this request: {one_line(exc)}"}, status_code=500)

    routes = [Route("/", index), Route("/api/info", info),
              *(Route(f"/api/{name}", endpoint(getattr(engine, name)), methods=["POST"])
                for name in ("analyze", "predict", "suggest", "layout", "parse", "review")),
              Mount("/static", StaticFiles(directory=STATIC), name="static")]
    return Starlette(routes=routes, exception_handlers={HTTPException: not_found, Exception: server_error})
