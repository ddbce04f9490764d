"""What every command of ``nnsweeper`` shares: the parser, error handling and option types.

:class:`Parser` reports a usage mistake as one line and remembers the long options
each command declares (for the "did you mean" hint); :func:`make_parser` builds the
``nnsweeper`` parser from the table of commands in :mod:`nnsweeper.cli`, and
:func:`run` parses, runs the command's handler and turns every input error into
``nnsweeper: error: <message>`` on stderr and exit code 2. The option types here
(:func:`int_in`, :func:`n_jobs`, :func:`one_board`, ...) and the option helpers
(:func:`add_backend_options`, :func:`out_prefix`) are those of several commands.
Every number an option takes is bounded (board sides, trials, games, jobs, batch
sizes: the limits of the modules that use them), so a huge request is refused before
any work starts.

Only argparse's public interface is used: the long options of a command are recorded
as its module adds them, not read back from the parser.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["PROG", "Parser", "UsageError", "add_backend_options", "boards", "boards_any_rule",
           "check_boards", "device_name", "fail", "int_in", "make_parser", "n_jobs", "name_list", "note",
           "one_board", "one_board_any_rule", "out_prefix", "run", "start_cell"]

PROG = "nnsweeper"
#: What ``eval`` and ``compare`` write at an ``--out`` prefix (:func:`out_prefix` drops one given).
OUT_SUFFIXES = (".csv", ".json", ".png")


class UsageError(Exception):
    """A command-line mistake found by argparse."""


def _long_options(action: argparse.Action) -> list[str]:
    return [o for o in action.option_strings if o.startswith("--")]


class _Group:
    """A mutually exclusive group that records its long options in its parser's list."""

    def __init__(self, group, options: list[str]):
        self._group, self._options = group, options

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = self._group.add_argument(*args, **kwargs)
        self._options += _long_options(action)
        return action


class Parser(argparse.ArgumentParser):
    """The parser of ``nnsweeper`` and of each of its commands.

    argparse prints the usage and exits on a mistake; the command instead reports one
    line and returns 2 from :func:`run`, like every other input error. Each parser
    keeps :attr:`long_options`, the ``--`` options added to it (for the "did you mean"
    hint), and the top-level one :attr:`commands`, each command's parser by name.

    Parameters
    ----------
    *args, **kwargs
        Those of :class:`argparse.ArgumentParser`; ``add_parser`` passes the two below too.
    help_tail : callable, optional
        Returns text printed after the help. It is called when the help is shown, so
        that text which takes heavy imports to make (``train``'s config keys) costs
        nothing otherwise.
    take_extras : callable, optional
        ``take_extras(args, extras)`` takes the arguments argparse left over that the
        command accepts after all (into ``args``) and returns the others, which are an
        error.
    """

    def __init__(self, *args, help_tail: Callable[[], str] | None = None,
                 take_extras: Callable[[argparse.Namespace, list[str]], list[str]] | None = None, **kwargs):
        self.long_options: list[str] = []  # set first: argparse adds --help through add_argument
        self.commands: dict[str, Parser] = {}
        self.help_tail, self.take_extras = help_tail, take_extras
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.long_options += _long_options(action)
        return action

    def add_mutually_exclusive_group(self, **kwargs) -> _Group:
        return _Group(super().add_mutually_exclusive_group(**kwargs), self.long_options)

    def format_help(self) -> str:
        text = super().format_help()
        if self.help_tail is None:
            return text
        # As argparse does for its own sections: one blank line between paragraphs at most.
        return re.sub(r"\n\n\n+", "\n\n", text.rstrip("\n") + "\n\n" + self.help_tail()).strip("\n") + "\n"

    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def make_parser(commands: Iterable[Callable]) -> Parser:
    """The ``nnsweeper`` parser with ``commands``: functions ``add(sub)`` that each add one command.

    Each ``add`` calls ``sub.add_parser(NAME, ...)``, adds the command's options, sets
    ``handler=`` (a function ``handler(args, argv)`` returning the exit code) and returns
    its parser; the commands are listed in ``--help`` in this order.
    """
    from nnsweeper import __version__

    parser = Parser(
        prog=PROG,
        description="Minesweeper solvers, an exact mine-probability engine and their "
        "evaluation across mine densities.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in commands:
        command = add(sub)
        parser.commands[command.prog.rpartition(" ")[2]] = command  # its prog is "nnsweeper NAME"
    return parser


# ---------------------------------------------------------------------- running
def _unrecognized(command: Parser, name: str, extras: list[str]) -> str:
    """The message for arguments the command does not take, pointing to its help and a close option."""
    message = f"{name} does not take {' '.join(extras)}"
    flag = next((e.partition("=")[0] for e in extras if e.startswith("-")), None)
    close = difflib.get_close_matches(flag, command.long_options, n=1, cutoff=0.6) if flag else []
    if close:
        message += f"; did you mean {close[0]}?"
    return f"{message} (see '{command.prog} --help')"


def fail(message: str) -> int:
    """Print ``nnsweeper: error: <message>`` on one line of stderr; returns the exit code, 2."""
    print(f"{PROG}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def note(note: str) -> None:
    """A notice on stderr, ``nnsweeper: note: ...`` (the work goes on)."""
    print(f"{PROG}: note: {note}", file=sys.stderr)


def run(parser: Parser, argv=None) -> int:
    """Run the command of ``argv`` (default: ``sys.argv[1:]``) with ``parser``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            args, extras = parser.parse_known_args(argv)
        except SystemExit as e:  # --help and --version
            return e.code if isinstance(e.code, int) else 0
        command = parser.commands[args.command]
        if extras and command.take_extras is not None:
            extras = command.take_extras(args, extras)
        if extras:
            raise UsageError(_unrecognized(command, args.command, extras))
        from nnsweeper.parallel import terminate_on_sigterm

        with terminate_on_sigterm():  # a kill stops the work as Ctrl-C does: finished files stay
            return args.handler(args, argv)
    except UsageError as e:
        return fail(str(e))
    except (ValueError, OSError) as e:  # every NnsweeperError is a ValueError
        return fail(str(e) or type(e).__name__)
    except KeyboardInterrupt as e:  # a message says where the work stands (training's does)
        print(f"{PROG}: {' '.join(str(e).split()) or 'interrupted'}", file=sys.stderr)
        return 130


# ------------------------------------------------------------------ option types
def int_in(low: int, high: int | None = None, limit: str = ""):
    """An argparse type: an integer from ``low`` to ``high`` (no upper end when None).

    ``limit`` says what the upper end is, for the message.
    """
    what = {0: "a non-negative integer", 1: "a positive integer"}.get(low, f"an integer of at least {low}")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}; got {text!r:.80}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected {what}; got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}{f' ({limit})' if limit else ''}; "
                                             f"got {value}")
        return value

    return parse


def positive_seconds(text: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds; got {text!r:.80}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive, finite number of seconds; got {text!r:.80}")
    return value


def name_list(text: str) -> list[str]:
    """An argparse type: comma-separated names (solvers)."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names; got {text!r}")
    return names


def n_jobs(text: str) -> int:
    """An argparse type: a number of worker processes, -1 for all cores."""
    from nnsweeper.parallel import check_n_jobs

    try:
        value = int(text)
    except ValueError:
        value = text
    try:
        return check_n_jobs(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).replace("n_jobs must be", "expected", 1)) from None


def device_name(text: str) -> str:
    """An argparse type: where models run (``cpu``, ``cuda``, ``cuda:N``, ``auto``), refused at once,
    before torch is imported, when it cannot be here (:func:`nnsweeper.models.devices.check_device_name`)."""
    from nnsweeper.models.devices import check_device_name

    try:
        return check_device_name(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def start_cell(text: str):
    """An argparse type: where a solver clicks first, ``center``, ``corner`` or ``(row, col)``."""
    if text in ("center", "corner"):
        return text
    try:
        i, j = (int(t) for t in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'center', 'corner' or ROW,COL such as 0,4; got {text!r}"
        ) from None
    return (i, j)


def boards(text: str, *, first_click: str = "safe") -> list[tuple[str, int, int, int]]:
    """An argparse type: boards in nnsweeper's board syntax, as ``(name, rows, cols, mines)``.

    Mine counts are checked against the limit of ``first_click``. A command with a
    ``--first-click`` option takes its boards with :func:`boards_any_rule` instead and
    checks them with :func:`check_boards` once every option is known.
    """
    from nnsweeper.game import parse_boards

    try:
        return parse_boards(text, first_click=first_click)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def boards_any_rule(text: str) -> list[tuple[str, int, int, int]]:
    """An argparse type: :func:`boards` within the loosest first-click rule's limits.

    That is ``none`` (every cell may hold a mine): the syntax and the sizes are checked
    while parsing, the mine counts against the command's own rule by :func:`check_boards`.
    """
    try:
        return boards(text, first_click="none")
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(_rule_limits(str(e))) from None


def _rule_limits(message: str) -> str:
    """A mine-limit message of the loosest rule, parsed before the command's rule is known,
    said with every rule's limit: the default rule's first."""
    from nnsweeper.game import Rules

    m = re.search(r"between 1 and \d+ for a (\d+)x(\d+) board with an unprotected first click; got (-?\d+)",
                  message)
    if m is None:
        return message
    rows, cols, got = (int(v) for v in m.groups())
    limits = {}
    for rule in ("safe", "zero", "none"):
        try:
            limits[rule] = Rules(rows, cols, 1, rule).max_mines()
        except ValueError:  # no room for one mine under that rule
            limits[rule] = 0
    return (f"mines must be between 1 and {limits['safe']} for a {rows}x{cols} board with a safe first "
            f"click, the default ({limits['zero']} with --first-click zero, {limits['none']} with "
            f"--first-click none); got {got}")


def check_boards(found: list[tuple[str, int, int, int]], first_click: str) -> list[tuple[str, int, int, int]]:
    """``found`` (from :func:`boards_any_rule`) as it is, or the InvalidRulesError of the
    first board that ``first_click`` refuses, naming the board, the limit and the rule."""
    from nnsweeper.game import Rules

    for _, rows, cols, mines in found:
        Rules(rows, cols, mines, first_click)
    return found


def one_board(text: str, *, first_click: str = "safe") -> tuple[int, int, int]:
    """An argparse type for one board in nnsweeper's board syntax (``10x10:20``, ``expert``).

    Returns ``(rows, cols, mines)``; the scripts and benchmarks that play one board use it.
    Mine counts are checked against the limit of ``first_click``; a command with a
    ``--first-click`` option takes its board with :func:`one_board_any_rule` instead.
    """
    found = boards(text, first_click=first_click)
    if len(found) != 1:
        raise argparse.ArgumentTypeError(
            f"expected one board such as 10x10:20 or expert; {text!r} names {len(found)}"
        )
    return found[0][1:]


def one_board_any_rule(text: str) -> tuple[int, int, int]:
    """An argparse type: :func:`one_board` within the loosest first-click rule's limits
    (as :func:`boards_any_rule`); the command checks the mines against its own rule."""
    try:
        return one_board(text, first_click="none")
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(_rule_limits(str(e))) from None


# ---------------------------------------------------------------- option helpers
def add_backend_options(p) -> None:
    """``--backend`` and ``--scheduler``, shared by the commands that fan out to workers."""
    from nnsweeper.parallel import BACKENDS

    p.add_argument("--backend", choices=BACKENDS, default=None,
                   help="where the work runs (default: loky, local processes); dask or ray run on a "
                   "cluster, with the same results")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="with --backend dask: a running scheduler, e.g. tcp://host:8786 "
                   "(default: a local cluster)")


def add_one_board(p, default: str, *, any_rule: bool = False) -> None:
    """--board or --preset: the one board a command plays (``args.preset or args.board``, or None).

    With ``any_rule`` (a command with --first-click) the mine count is read within the
    loosest rule's limit; the command checks it against its rule (``Rules(...)``).
    """
    board = p.add_mutually_exclusive_group()
    kind = one_board_any_rule if any_rule else one_board
    within = ", mines within the limit of --first-click" if any_rule else ""
    board.add_argument("--board", type=kind, default=None, metavar="BOARD",
                       help=f"ROWSxCOLS:MINES or a preset name{within} (default: {default})")
    board.add_argument("--preset", type=kind, default=None, metavar="NAME",
                       help="beginner, intermediate or expert")


def add_no_guess(p) -> None:
    """``--no-guess [MODE]`` beside ``--first-click`` (read by :func:`first_click_rule`)."""
    p.add_argument("--no-guess", nargs="?", const="uniform", choices=("uniform", "fast"), default=None,
                   metavar="MODE",
                   help="boards that never need a guess, certified by the exact engine from the first "
                   "click (it opens an area): uniform (every such board equally likely, the default) or "
                   "fast (mines moved until solvable, for dense boards); the first-click rule no-guess "
                   "or no-guess-fast")


def first_click_rule(args) -> str:
    """The first-click rule of a command with ``--first-click`` and ``--no-guess``, both given or either."""
    mode = getattr(args, "no_guess", None)
    given = args.first_click  # None: not given (the default, safe)
    if mode is None:
        return given or "safe"
    rule = "no-guess" if mode == "uniform" else "no-guess-fast"
    if given not in (None, rule):
        raise ValueError(f"give --no-guess or --first-click {given}, not both: a no-guess "
                         "board's first click opens an area")
    return rule


def out_prefix(text: str) -> Path:
    """The ``--out`` prefix of a command writing OUT.json and others; a suffix of them given is dropped."""
    if not text.strip() or text.endswith(("/", "\\")) or Path(text).is_dir():
        raise ValueError(
            f"--out must be a path prefix such as eval/results/NAME, not a folder; got {text!r}"
        )
    out = Path(text)
    if out.suffix.lower() in OUT_SUFFIXES:
        out = out.with_suffix("")
    return out
