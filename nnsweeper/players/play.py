"""``nnsweeper play``: Minesweeper in the terminal, with the exact engine's hints.

A Textual app (the ``play`` extra: ``pip install "nnsweeper[play]"``). Keys: arrows
move the cursor, space or enter reveals, ``f`` flags, ``c`` chords (reveals the
neighbours of a number whose mines are all flagged), ``h`` shows every covered cell's
exact P(mine) as a colour and a percentage (``M``: proved a mine), ``s`` asks a solver for its move and its
reason, ``n`` starts a new game, ``q`` quits. The mouse works too: left click reveals
(a click on a number chords), right click flags.

A game is saved as JSON with ``--save`` (its rules, seed and every action) and
played back with ``--replay``, which is also what :func:`load_game` reads.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nnsweeper.errors import InvalidBoardError, NnsweeperError
from nnsweeper.fileio import write_text_atomic
from nnsweeper.game import MinesweeperEnv, Rules

__all__ = ["GameLog", "PlaySession", "load_game", "run_app"]

GAME_FORMAT = "nnsweeper-game"
#: The largest board ``play`` takes (each cell is three characters of a terminal line).
MAX_PLAY_SIDE = 100
#: Most actions a saved game may hold (a game has at most a reveal or two flag
#: toggles per cell, and chords; far fewer in practice).
MAX_ACTIONS = 4 * MAX_PLAY_SIDE * MAX_PLAY_SIDE
ACTIONS = ("reveal", "flag", "chord")


@dataclass
class GameLog:
    """A game as it was played: its rules, its seed and its actions, in order."""

    rules: Rules
    seed: int
    actions: list[tuple[str, int, int]] = field(default_factory=list)
    #: Seconds from the first reveal to the end of the game (or to the save of an unfinished
    #: one), as the screen's timer shows them; None when not recorded.
    seconds: float | None = None

    def to_json(self) -> str:
        r = self.rules
        data = {"format": GAME_FORMAT, "rows": r.rows, "cols": r.cols, "mines": r.mines,
                "first_click": r.first_click, "seed": self.seed, "actions": [list(a) for a in self.actions]}
        if self.seconds is not None:
            data["seconds"] = round(float(self.seconds), 3)
        return json.dumps(data, indent=1) + "\n"

    def save(self, path) -> Path:
        return write_text_atomic(path, self.to_json())


def load_game(path) -> GameLog:
    """Read a game saved by ``nnsweeper play --save``; a malformed file is refused, naming the problem."""
    from nnsweeper.fileio import read_regular_file

    path = Path(path)
    raw = read_regular_file(path, 64 * MAX_ACTIONS, "saved game", InvalidBoardError)
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        if not isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):  # a number past Python's digits
            raise InvalidBoardError(f"{os.fspath(path)!r} is not a saved game: {exc}") from None
        raise InvalidBoardError(f"{os.fspath(path)!r} is not a saved game: a game is the JSON file that "
                                "nnsweeper play --save writes (grade also reads .avf, .rmv, .mvf and .evf "
                                "replays)") from None
    except RecursionError:
        # A PNG, a board's text, JSON nested past the parser's depth: say what is read.
        raise InvalidBoardError(f"{os.fspath(path)!r} is not a saved game: a game is the JSON file that "
                                "nnsweeper play --save writes (grade also reads .avf, .rmv, .mvf and .evf "
                                "replays)") from None
    if not isinstance(data, dict) or data.get("format") != GAME_FORMAT:
        raise InvalidBoardError(f"{os.fspath(path)!r} is not a saved game (format != {GAME_FORMAT!r})")
    try:
        rules = Rules(data["rows"], data["cols"], data["mines"], data["first_click"])
        seed = MinesweeperEnv._check_seed(data["seed"])
        actions = data["actions"]
    except KeyError as exc:
        raise InvalidBoardError(f"{os.fspath(path)!r} lacks {exc.args[0]!r}") from None
    seconds = data.get("seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float)
                                or not 0 <= seconds < 1e9):
        raise InvalidBoardError(f"{os.fspath(path)!r}: seconds must be a non-negative number; "
                                f"got {seconds!r:.40}")
    if not isinstance(actions, list) or len(actions) > MAX_ACTIONS:
        raise InvalidBoardError(f"{os.fspath(path)!r}: actions must be a list of at most {MAX_ACTIONS}")
    out = []
    for k, a in enumerate(actions):
        if (not isinstance(a, list) or len(a) != 3 or a[0] not in ACTIONS
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in a[1:])
                or not (0 <= a[1] < rules.rows and 0 <= a[2] < rules.cols)):
            raise InvalidBoardError(f"{os.fspath(path)!r}: action {k} must be [reveal|flag|chord, row, col] "
                                    f"on the {rules.rows}x{rules.cols} board; got {a!r:.60}")
        out.append((a[0], a[1], a[2]))
    return GameLog(rules, seed, out, None if seconds is None else float(seconds))


class PlaySession:
    """The game behind the app: actions that never raise on a player's mistake.

    Holds a :class:`MinesweeperEnv`, the player's flags and the log. Every action
    returns a short message for the status line ("" when there is nothing to say).
    """

    def __init__(self, rules: Rules, seed: int | None):
        self.rules = rules
        self.game = MinesweeperEnv(rules.rows, rules.cols, rules.mines, seed=seed,
                                   first_click=rules.first_click)
        self.log = GameLog(rules, self.game.seed)  # the seed the game drew when given None
        self.started: float | None = None
        self.finished: float | None = None

    @property
    def seed(self) -> int:
        return self.game.seed

    @property
    def over(self) -> bool:
        return self.game.done

    def elapsed(self) -> float:
        if self.started is None:
            return 0.0
        return (self.finished or time.monotonic()) - self.started

    def mines_left(self) -> int:
        return self.rules.mines - int(self.game.flags.sum())

    def grid(self) -> np.ndarray:
        return self.game.observe()

    def act(self, action: str, i: int, j: int) -> str:
        """Do one action; the message for the status line.

        Raises
        ------
        nnsweeper.noguess.NoGuessBudgetError
            The first reveal of a no-guess rule found no certified layout within its budget:
            no game can start (the command line ends with that one line).
        """
        g = self.game
        if g.done:
            return "the game is over: n for a new one"
        if action == "flag":
            if g.mask[i, j] == 0:
                return ""
            g.toggle_flag(i, j)
        elif action == "reveal":
            if g.mask[i, j] == 0:
                return self.act("chord", i, j)
            if g.flags[i, j]:
                return f"({i}, {j}) is flagged: f to take the flag off"
            self._reveal(i, j)
        else:  # chord
            if g.mask[i, j] == 1:
                return ""
            around = [(a, b) for a, b in g._neighbors(i, j) if g.mask[a, b] == 1]
            flagged = sum(bool(g.flags[a, b]) for a, b in around)
            if flagged != g._counts[i, j] or flagged == len(around):
                return ""
            for a, b in around:
                if not g.flags[a, b] and g.mask[a, b] == 1 and not g.done:
                    g.reveal(a, b)
        self.log.actions.append((action, int(i), int(j)))
        if g.done:
            self.finished = time.monotonic()
        self.log.seconds = self.elapsed() if self.started is not None else None
        return ""

    def save(self, path) -> Path:
        """Write the game so far (finished or not) with its time, as ``play --save`` does."""
        self.log.seconds = self.elapsed() if self.started is not None else None
        return self.log.save(path)

    def _reveal(self, i: int, j: int) -> None:
        if self.started is None:
            self.started = time.monotonic()
        self.game.reveal(i, j)


#: How the status line names a first-click rule other than the default (safe).
_RULE_WORDS = {"zero": ", first click opens", "none": ", first click unprotected", "no-guess": ", no-guess",
               "no-guess-fast": ", no-guess (fast)"}


def _hint_style(p: float) -> str:
    """Background colour of a covered cell with P(mine) ``p``: green (safe) to red (mine)."""
    red, green = int(255 * min(1.0, 2 * p)), int(255 * min(1.0, 2 * (1 - p)))
    return f"black on rgb({red},{green},60)"


_NUMBER_STYLES = ["", "bold blue", "bold green", "bold red", "bold dark_blue", "bold dark_red", "bold cyan",
                  "bold black", "bold grey50"]


def render_board(session: PlaySession, cursor: tuple[int, int] | None, hints: np.ndarray | None,
                 mark: tuple[int, int] | None = None):
    """The board as Rich text: three characters per cell, one line per row."""
    from rich.text import Text

    g = session.game
    grid = g.observe()
    text = Text()
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            v = int(grid[i, j])
            if g.exploded == (i, j):
                cell, style = " * ", "bold white on red"
            elif v >= 0:
                cell, style = (" . ", "grey50") if v == 0 else (f" {v} ", _NUMBER_STYLES[v])
            elif g.flags[i, j]:
                cell, style = " F ", "bold red on grey23"
            elif g.done and g._mine[i, j]:
                cell, style = " * ", "bold white on grey23"  # the game is over: the mines are shown
            elif hints is not None:
                p = float(hints[i, j])
                # Percent, 99 at most; a proven mine is M (and a proven safe cell 0).
                cell = " M " if p == 1 else f"{min(99, round(100 * p)):>2} "
                style = _hint_style(p)
            else:
                cell, style = " # ", "grey70 on grey23"
            if mark == (i, j):
                style += " underline"
            if cursor == (i, j):
                style += " reverse"
            text.append(cell, style=style)
        if i < grid.shape[0] - 1:
            text.append("\n")
    return text


def run_app(rules: Rules, seed: int | None, *, solver: str = "search", save=None,
            replay: GameLog | None = None, replay_delay: float = 0.4):
    """Build the Textual app (``app.run()`` plays it); the CLI's ``nnsweeper play``."""
    from textual import events
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.containers import Center, ScrollableContainer
    from textual.screen import ModalScreen
    from textual.widget import Widget
    from textual.widgets import Footer, Static

    from nnsweeper.engine import analyze
    from nnsweeper.observation import Observation
    from nnsweeper.solvers import get_solver
    from nnsweeper.solvers.suggest import suggest_move

    class Board(Widget):
        can_focus = True

        def __init__(self, app_: PlayApp):
            super().__init__()
            self.owner = app_

        def render(self):
            o = self.owner
            return render_board(o.session, None if o.replaying else o.cursor, o.hints, o.mark)

        def get_content_width(self, container, viewport) -> int:
            return 3 * self.owner.session.rules.cols

        def get_content_height(self, container, viewport, width) -> int:
            return self.owner.session.rules.rows

        def on_click(self, event: events.Click) -> None:
            i, j = event.y, event.x // 3
            r = self.owner.session.rules
            if not (0 <= i < r.rows and 0 <= j < r.cols) or self.owner.replaying:
                return
            self.owner.cursor = (i, j)
            self.owner.do("flag" if event.button == 3 else "reveal")

    class Result(ModalScreen):
        BINDINGS = [Binding("n", "app.new_game", "new game"), Binding("q", "app.quit", "quit"),
                    Binding("escape", "app.pop_screen", "look at the board")]

        def __init__(self, message: str):
            super().__init__()
            self.message = message

        def compose(self) -> ComposeResult:
            yield Center(Static(self.message, id="result"))

    class PlayApp(App):
        CSS = """
        #status { height: 1; padding: 0 1; background: $boost; }
        #message { height: 2; padding: 0 1; }
        #result { width: auto; padding: 1 3; border: thick $accent; background: $surface; }
        Result { align: center middle; }
        """
        BINDINGS = [
            Binding("up", "move(-1, 0)", "up", show=False), Binding("down", "move(1, 0)", "down", show=False),
            Binding("left", "move(0, -1)", "left", show=False),
            Binding("right", "move(0, 1)", "right", show=False),
            Binding("space,enter", "act('reveal')", "reveal"), Binding("f", "act('flag')", "flag"),
            Binding("c", "act('chord')", "chord"), Binding("h", "hint", "hints"),
            Binding("s", "suggest", "solver's move"), Binding("n", "new_game", "new game"),
            Binding("q", "quit", "quit"),
        ]

        def __init__(self):
            super().__init__()
            self.solver_name = solver
            self.solver = get_solver(solver)
            self.session = PlaySession(rules, seed if replay is None else replay.seed)
            self.cursor = (0, 0)
            self.hints: np.ndarray | None = None
            self.mark: tuple[int, int] | None = None
            self.message = ("replaying a saved game: space pauses" if replay is not None else
                            "arrows move, space reveals, f flags, h hints, s asks " + solver)
            self.replaying = replay is not None
            self.paused = False
            self._replay_step = 0
            self._games = 0
            #: Why the app stopped with return code 2 (no no-guess layout within the budget).
            self.error: str | None = None
            #: Where the game was saved, for the line printed after the screen closes.
            self.saved: str | None = None

        def compose(self) -> ComposeResult:
            yield Static(id="status")
            with ScrollableContainer():
                yield Board(self)
            yield Static(id="message")
            yield Footer()

        def on_mount(self) -> None:
            self.query_one(Board).focus()
            self.set_interval(0.5, self.refresh_status)
            if self.replaying:
                self.set_interval(replay_delay, self.replay_step)
            self.refresh_all()

        # ------------------------------------------------------------ drawing
        def refresh_status(self) -> None:
            s = self.session
            if s.over:
                state = "won" if s.game.won else "lost"
            else:
                state = "replay" if self.replaying else "playing"
            self.query_one("#status", Static).update(
                f"{rules.rows}x{rules.cols}, {rules.mines} mines{_RULE_WORDS.get(rules.first_click, '')}   "
                f"mines left {s.mines_left():>3}   "
                f"time {int(s.elapsed()):>4} s   seed {s.seed}   {state}"
                + ("   hints on" if self.hints is not None else ""))

        def refresh_all(self) -> None:
            if self.hints is not None:
                self.hints = self.exact_map()
            self.query_one(Board).refresh(layout=True)
            self.query_one("#message", Static).update(self.message)
            self.refresh_status()

        def exact_map(self) -> np.ndarray:
            grid = self.session.grid()
            return analyze(Observation.of(grid, rules.mines)).probabilities

        # ------------------------------------------------------------ actions
        def do(self, action: str) -> None:
            if self.replaying:
                if action == "reveal":  # space pauses and resumes a replay
                    self.paused = not self.paused
                return
            was_over = self.session.over
            try:
                self.message = self.session.act(action, *self.cursor)
            except NnsweeperError as exc:  # no no-guess layout within the budget: no game
                self.error = str(exc)
                self.exit(return_code=2)
                return
            self.mark = None
            self.refresh_all()
            if self.session.over and not was_over:
                self.finish()

        def save_game(self) -> None:
            """Save the game of the screen (--save), once it has a move; remember where."""
            if save is not None and self.session.log.actions and not self.replaying:
                self.session.save(save)
                self.saved = save

        async def action_quit(self) -> None:
            # An unfinished game is kept too (a finished one was saved when it ended).
            if not self.session.over:
                self.save_game()
            self.exit()

        def finish(self) -> None:
            s = self.session
            self.save_game()
            what = (f"You won in {s.elapsed():.0f} s!" if s.game.won
                    else f"Boom: ({s.game.exploded[0]}, {s.game.exploded[1]}) was a mine.")
            saved = f"\nsaved to {save}" if save is not None else ""
            self.push_screen(Result(f"{what}{saved}\n\nn: new game   q: quit   esc: look at the board"))

        def action_act(self, action: str) -> None:
            self.do(action)

        def action_move(self, di: int, dj: int) -> None:
            i, j = self.cursor
            self.cursor = (min(max(i + di, 0), rules.rows - 1), min(max(j + dj, 0), rules.cols - 1))
            self.query_one(Board).refresh()

        def action_hint(self) -> None:
            self.hints = None if self.hints is not None else self.exact_map()
            on = self.hints is not None
            self.message = "hints: each covered cell's exact P(mine) in percent" if on else ""
            self.refresh_all()

        def action_suggest(self) -> None:
            if self.session.over:
                return
            obs = Observation.of(self.session.grid(), rules.mines)
            move = suggest_move(self.solver, obs, np.random.default_rng(self._games))
            if move is None:
                self.message = f"{self.solver_name}: nothing left to reveal"
            else:
                self.mark = self.cursor = move.cell
                flagged = f"; after flagging {', '.join(map(str, move.flags))}" if move.flags else ""
                self.message = f"{self.solver_name}: reveal {move.cell}. {move.reason}{flagged}"
            self.refresh_all()

        def action_new_game(self) -> None:
            if isinstance(self.screen, Result):
                self.pop_screen()
            if not self.session.over:
                self.save_game()
            self._games += 1
            next_seed = int(np.random.default_rng([self.session.seed, self._games]).integers(2**31))
            self.session = PlaySession(rules, next_seed)
            self.replaying, self.hints, self.mark, self.cursor = False, None, None, (0, 0)
            self.message = f"new game, seed {next_seed}"
            self.refresh_all()

        def replay_step(self) -> None:
            if not self.replaying or self.paused or self.session.over:
                return
            if self._replay_step >= len(replay.actions):
                self.message = "end of the saved game"
                self.replaying = False
                self.refresh_all()
                return
            action, i, j = replay.actions[self._replay_step]
            self._replay_step += 1
            self.mark = (i, j)
            self.session.act(action, i, j)
            self.message = f"replay: action {self._replay_step} of {len(replay.actions)}: {action} ({i}, {j})"
            self.refresh_all()

    return PlayApp()
