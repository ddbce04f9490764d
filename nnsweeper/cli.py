"""The ``nnsweeper`` command line.

``nnsweeper eval`` plays solvers on fixed game seeds and writes a table (CSV and
JSON) and a win-rate plot; ``nnsweeper compare`` does the same with the logic,
neural and hybrid solvers on every 10x10 mine count from 5 to 30; ``nnsweeper plot``
draws the figure of saved tables (one or several); ``nnsweeper analyze`` prints the exact
mine probability of every cell of a board typed as text, its number of consistent
layouts and the move each solver would make there; ``generate``, ``train`` and
``evaluate-model`` make datasets and models. Bad input ends with one line on stderr,
``nnsweeper: error: <message>``, and exit code 2. Every number an option takes is
bounded (board sides, trials, games, jobs, batch sizes: the limits of the modules
that use them), so a huge request is refused before any work starts.

This module is longer than most: it is one parser, and each subcommand's options and
handler sit side by side so that ``--help`` text, checks and defaults are read in
one place; the work itself lives in the modules the handlers call.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

__all__ = ["build_parser", "main", "one_board"]

PROG = "nnsweeper"
_DEFAULT_MINES = (5, 10, 15, 20, 25, 30)
_DEFAULT_SIZE = 10
_PRESET_CHOICES = ("classic", "beginner", "intermediate", "expert")
_COMPARE_TRIALS = 200
_OUT_SUFFIXES = (".csv", ".json", ".png")
#: Beside OUT.csv, OUT.json and OUT.png, the folder of every finished game (a resumable game store).
_STORE_SUFFIX = ".games"


class _UsageError(Exception):
    """A command-line mistake found by argparse."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the usage and exits; the command instead reports one line and
    # returns 2 from main(), like every other input error.
    def error(self, message):
        raise _UsageError(f"{message} (see '{self.prog} --help')")


# ------------------------------------------------------------ argument types
def _int_list(text: str) -> list[int]:
    from nnsweeper.evaluation import MAX_TABLE_ROWS

    values: list[int] = []
    try:
        for token in (t.strip() for t in text.split(",")):
            if not token:
                continue
            lo, sep, hi = token.partition("-")
            if sep and lo:  # a range A-B (a leading minus is a negative number)
                lo, hi = int(lo), int(hi)
                if len(values) + hi - lo + 1 > MAX_TABLE_ROWS:  # counted before it is listed
                    raise argparse.ArgumentTypeError(
                        f"expected at most {MAX_TABLE_ROWS} values (the rows of one table); "
                        f"{text!r:.80} holds {len(values) + hi - lo + 1}"
                    )
                values += range(lo, hi + 1)
            else:
                values.append(int(token))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers or ranges such as 5,10,15 or 5-30; got {text!r:.80}"
        ) from None
    if not values:
        raise argparse.ArgumentTypeError(f"expected at least one integer; got {text!r:.80}")
    if len(values) > MAX_TABLE_ROWS:
        raise argparse.ArgumentTypeError(
            f"expected at most {MAX_TABLE_ROWS} values (the rows of one table); got {len(values)}"
        )
    return values


def _name_list(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names; got {text!r}")
    return names


def _int_in(low: int, high: int | None = None, limit: str = ""):
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


def _jobs(text: str) -> int:
    from nnsweeper.parallel import check_n_jobs

    try:
        value = int(text)
    except ValueError:
        value = text
    try:
        return check_n_jobs(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).replace("n_jobs must be", "expected", 1)) from None


def _start(text: str):
    if text in ("center", "corner"):
        return text
    try:
        i, j = (int(t) for t in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'center', 'corner' or ROW,COL such as 0,4; got {text!r}"
        ) from None
    return (i, j)


# -------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``nnsweeper`` command."""
    from nnsweeper import __version__
    from nnsweeper.probability import MAX_STATES

    parser = _Parser(
        prog=PROG,
        description="Minesweeper solvers, an exact mine-probability engine and their "
        "evaluation across mine densities.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    ev = sub.add_parser(
        "eval",
        help="play solvers on fixed game seeds; write a table and a win-rate plot",
        description="Play each solver on the same games (seeds drawn from --base-seed, as "
        "in the seed notebook's eval_solver_over_mines) for every mine count or preset "
        "board, print the results and write OUT.csv, OUT.json (with every game's result) and "
        "OUT.png (win rates; with csp and another solver, also each solver's difference from "
        "csp).",
        epilog="example: nnsweeper eval --solvers single_point,csp --mines 5,10,15,20 "
        "--trials 1000 --jobs 2 --out eval/results/sp_vs_csp",
    )
    _add_play_options(ev, solvers=("single_point", "csp"), mines=_DEFAULT_MINES, trials=200, out=None)
    ev.set_defaults(handler=_cmd_eval)

    from nnsweeper.solvers import compare_solvers

    compared = compare_solvers()
    co = sub.add_parser(
        "compare",
        help="the main comparison: logic, neural and hybrid solvers across mine densities",
        description=f"Play every registered solver ({', '.join(compared)}; the models' bundled "
        "weights unless --model names checkpoints) on the same held-out games: 10x10 "
        "boards with 5 to 30 mines by default, or the classic boards with --preset "
        "classic. Prints the table and writes OUT.csv, OUT.json and OUT.png (win rate "
        "against mine count with 95% intervals, and below it each solver's difference from "
        "csp with its paired 95% interval). The models' training seeds are checked "
        "against the evaluation seeds before any game is played.",
        epilog="example: nnsweeper compare --preset classic --start corner --trials 2000 "
        "--jobs 2 --out eval/results/compare_classic",
    )
    _add_play_options(co, solvers=compared, mines=tuple(range(5, 31)), trials=_COMPARE_TRIALS,
                      out="compare", jobs=-1)
    co.set_defaults(handler=_cmd_eval)

    pl = sub.add_parser(
        "plot",
        help="draw the win-rate figure of saved evaluation tables, one or several together",
        description="Read tables written by eval or compare (OUT.json) and draw their figure: "
        "win rate per solver with 95% intervals and, when the reference solver is in the tables "
        "with at least one other, each solver's difference from it below (paired where both "
        "played the same games). Several tables are drawn as one; a solver name may appear in "
        "only one of them per configuration (name your own checkpoints with --model NAME=ARCH:PATH "
        "when you play them).",
        epilog="example: nnsweeper plot eval/results/compare_10x10.json mine.json --out both.png",
    )
    pl.add_argument("table", nargs="+", metavar="TABLE.json", help="evaluation tables (JSON)")
    pl.add_argument("--out", default=None, metavar="PNG",
                    help="the figure to write; its suffix picks the format (default: the first "
                    "TABLE with .png, for one table; required for several)")
    pl.add_argument("--reference", default=None, metavar="SOLVER",
                    help="the solver the others are compared with (default: csp when the table has it)")
    pl.set_defaults(handler=_cmd_plot)

    _add_generate(sub)
    _add_train(sub)
    _add_evaluate_model(sub)
    _add_values(sub)
    _add_watch(sub)
    _add_play(sub)

    an = sub.add_parser(
        "analyze",
        help="print the exact mine probability of every cell of a board, and each solver's next move",
        description="Read a board typed as text and print P(mine) for every covered cell, marking "
        "revealed numbers as [n], flags as F and the cells the exact engine proves safe or mined as "
        "'safe' and 'mine'; then the mines left, the interior probability, the number of consistent "
        "mine layouts, and the cell each solver would reveal next, with its reason. Cells are "
        "(row, col), both from 0. Board text: one row per line, '.' covered, 'F' flag, digits 0-8 "
        "revealed numbers; spaces between cells are allowed. MineSweeperProb's format is read too: a "
        "first line WIDTHxHEIGHTxMINES, then H covered, M flagged mine, m covered, digits.",
        epilog="example: nnsweeper analyze examples/board.txt --mines 10 --solvers single_point,csp",
    )
    an.add_argument("file", metavar="FILE", help="board text file, or - to read stdin")
    an.add_argument(
        "--mines", type=_int_in(0), default=None,
        help="total mines on the board, flagged ones included (may be left out for a board text "
        "whose header gives it)",
    )
    an.add_argument(
        "--max-states", type=_int_in(1), default=MAX_STATES, metavar="N",
        help="most partial solutions the exact engine may hold at one box of a frontier component "
        f"(default: {MAX_STATES}); a wider frontier is refused",
    )
    an.add_argument(
        "--solvers", type=_name_list, default=None, metavar="NAMES",
        help="comma-separated solvers whose next move to show (default: single_point, csp and the "
        "neural solvers whose models load)",
    )
    an.add_argument(
        "--seed", type=_int_in(0), default=0,
        help="seed of the solvers' randomness (ties, random guesses; default: 0)",
    )
    an.add_argument(
        "--value", nargs="?", const=200, type=_int_in(1, 100_000, "Monte Carlo games"), default=None,
        metavar="GAMES",
        help="also print the chance that the search solver wins from here: the value network's estimate "
        "and a Monte Carlo estimate from GAMES games on layouts drawn from the position (default: 200)",
    )
    an.add_argument(
        "--png", default=None, metavar="OUT",
        help="also draw the position as a picture: exact P(mine) of every covered cell, the proven safe "
        "cells and mines, and each solver's next move (any matplotlib format by OUT's suffix)",
    )
    an.set_defaults(handler=_cmd_analyze)
    return parser


def _add_play_options(p, *, solvers, mines, trials: int, out: str | None, jobs: int = 1) -> None:
    """The options of ``eval`` and ``compare`` (which differ in their defaults)."""
    from nnsweeper.evaluation import MAX_TRIALS
    from nnsweeper.game import FIRST_CLICK_RULES, MAX_COLS, MAX_ROWS, PRESETS

    p.add_argument(
        "--solvers", type=_name_list, default=None, metavar="NAMES",
        help=f"comma-separated solver names (default: {','.join(solvers)}, then the solvers of "
        "each named --model)",
    )
    p.set_defaults(default_solvers=list(solvers))
    p.add_argument(
        "--board", type=_boards, action="append", default=[], metavar="BOARD",
        help="boards to play, in the one board syntax of nnsweeper: ROWSxCOLS:MINES with MINES as "
        "N, A-B, A-B/STEP or a comma list (10x10:5-30), a preset name, or classic "
        "(repeatable; instead of --rows/--cols/--mines/--preset)",
    )
    p.add_argument(
        "--rows", type=_int_in(1, MAX_ROWS, "the largest board"), default=None,
        help=f"board rows (default: {_DEFAULT_SIZE}); not with --preset",
    )
    p.add_argument(
        "--cols", type=_int_in(1, MAX_COLS, "the largest board"), default=None,
        help=f"board columns (default: {_DEFAULT_SIZE}); not with --preset",
    )
    shown = f"{mines[0]}..{mines[-1]}" if len(mines) > 6 else ",".join(map(str, mines))
    p.add_argument(
        "--mines", type=_int_list, default=None, metavar="LIST",
        help=f"comma-separated mine counts, or A-B for a range (default: {shown}); not with --preset",
    )
    p.set_defaults(default_mines=list(mines))
    p.add_argument(
        "--preset", choices=_PRESET_CHOICES, default=None,
        help="evaluate a classic board instead of --rows/--cols/--mines: "
        + ", ".join(f"{n} {r}x{c}/{m}" for n, (r, c, m) in PRESETS.items())
        + "; classic = all three",
    )
    p.add_argument(
        "--trials", type=_int_in(1, MAX_TRIALS, "games per solver and configuration"), default=trials,
        help=f"games per solver and mine count, at most {MAX_TRIALS} (default: {trials})",
    )
    p.add_argument(
        "--base-seed", type=int, default=0,
        help="seed of the game seeds; the same value plays the same games (default: 0)",
    )
    p.add_argument(
        "--first-click", choices=FIRST_CLICK_RULES, default="safe",
        help="first-click rule: safe (never a mine), zero (opens an area), none "
        "(default: safe)",
    )
    p.add_argument(
        "--start", type=_start, default="center", metavar="WHERE",
        help="where solvers click first: center, corner or ROW,COL (default: center)",
    )
    p.add_argument(
        "--jobs", type=_jobs, default=jobs,
        help=f"worker processes, -1 for all cores; results do not depend on it (default: {jobs})",
    )
    _add_backend_options(p)
    p.add_argument(
        "--out", required=out is None, default=out, metavar="PREFIX",
        help="output path prefix: eval/results/NAME writes eval/results/NAME.csv, .json "
        "and .png (folders are created)" + (f" (default: {out})" if out else ""),
    )
    p.add_argument(
        "--model", type=_model_choice, action="append", default=[], metavar="NAME=[ARCH:]PATH",
        help="a checkpoint to play. ARCH=PATH (gnn=runs/gnn/best.pt) replaces the bundled weights of "
        "the ARCH and hybrid-ARCH solvers; NAME=ARCH:PATH (mygnn=gnn:runs/gnn/best.pt) adds the "
        "solvers NAME and hybrid-NAME playing it, beside the bundled ones (repeatable)",
    )
    p.add_argument("--device", default="cpu", help="where the models run: cpu, cuda or auto (default: cpu)")
    p.add_argument(
        "--dataset", action="append", default=[], metavar="FOLDER",
        help="a dataset the solvers learned from (its folder or manifest.json); the "
        "evaluation refuses to play any of its game seeds (repeatable; models' own "
        "training seeds are always checked)",
    )
    p.add_argument("--table", action="store_true",
                   help="print the whole table (every solver and configuration) after the summary")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


#: The options of ``generate`` that are :func:`nnsweeper.datasets.generate`'s own keyword
#: arguments (``--first-click`` is ``first_click``): their defaults are read from it.
_GENERATE_OPTIONS = ("games", "splits", "seed", "policy", "flags", "record", "epsilon", "start",
                     "first_click", "shard_games")


def _add_backend_options(p) -> None:
    """``--backend`` and ``--scheduler``, shared by the commands that fan out to workers."""
    from nnsweeper.parallel import BACKENDS

    p.add_argument("--backend", choices=BACKENDS, default=None,
                   help="where the work runs (default: loky, local processes); dask or ray run on a "
                   "cluster, with the same results")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="with --backend dask: a running scheduler, e.g. tcp://host:8786 "
                   "(default: a local cluster)")


def _add_generate(sub) -> None:
    import inspect

    from nnsweeper.datasets import MIXES, POLICIES, RECORD_MODES, STARTS, generate
    from nnsweeper.datasets.generate import MAX_DATASET_GAMES, MAX_SHARD_CELLS, describe_mix
    from nnsweeper.datasets.policies import FLAG_MODES
    from nnsweeper.game import FIRST_CLICK_RULES, PRESETS

    ge = sub.add_parser(
        "generate",
        help="play games and write labelled board states (truth and exact probabilities)",
        description="Play games with a behaviour policy, record the board states it decides "
        "on, label every covered cell with the truth and its exact mine probability, and "
        "write sharded .npz files and manifest.json into OUT. Running the same command "
        "again after an interruption resumes it; the output does not depend on --jobs.",
        epilog="parts: ROWSxCOLS:MINES[:GAMES[:POLICY[:FLAGS]]] or PRESET[:GAMES[:POLICY[:FLAGS]]]; "
        "MINES is N, A-B (every count), A-B/STEP or a comma list; an empty field takes the "
        "default; presets: " + ", ".join(PRESETS)
        + "; mixtures: " + "; ".join(f"{k} = {describe_mix(k)}" for k in MIXES)
        + ". example: nnsweeper generate data/mixed --mix mixed --games 400 --jobs 2",
    )
    ge.add_argument("out", metavar="OUT", help="output folder (new, empty, or an unfinished run to resume)")
    ge.add_argument("parts", nargs="*", metavar="PART", help="configurations (see below)")
    ge.add_argument("--mix", action="append", default=[], choices=sorted(MIXES),
                    help="add a named mixture of configurations (repeatable)")
    defaults = {name: p.default for name, p in inspect.signature(generate).parameters.items()}

    def option(name: str, what: str, **kw) -> None:
        value = defaults[name]
        shown = ",".join(map(str, value)) if isinstance(value, tuple) else value
        ge.add_argument("--" + name.replace("_", "-"), default=value, help=f"{what} (default: {shown})", **kw)

    games = _int_in(1, MAX_DATASET_GAMES, "games of one dataset")
    option("games", "games per configuration where a part does not say", type=games)
    option("splits", "shares of each configuration's games per split", type=_fractions,
           metavar="TRAIN,VAL,TEST")
    option("seed", "entropy of the game-seed streams", type=int)
    option("policy", "behaviour policy where a part does not say", choices=POLICIES)
    option("flags", "which of the policy's flags the states keep, where a part does not say",
           choices=FLAG_MODES)
    option("record", "record every decision, or only guesses", choices=RECORD_MODES)
    option("epsilon", "explore policy: chance per decision of a random non-certain reveal", type=float)
    option("start", "where the first click goes", choices=STARTS)
    option("first_click", "first-click rule where a part does not say", choices=FIRST_CLICK_RULES)
    option("shard_games", f"games per shard file; fewer on big boards, as a shard holds at most "
           f"{MAX_SHARD_CELLS} board cells (games x rows x cols)", type=games)
    # Unlike generate() (one process unless asked), the command uses every core by default.
    ge.add_argument("--jobs", type=_jobs, default=-1,
                    help="worker processes, -1 for all cores; the output does not depend on it (default: -1)")
    _add_backend_options(ge)
    ge.add_argument("--quiet", action="store_true", help="no progress bar, no card")
    ge.set_defaults(handler=_cmd_generate)


_TRAIN_EXAMPLE = "example: nnsweeper train --config train/cnn_small.toml train.epochs=2 output.dir=runs/try"


class _TrainHelpFormatter(argparse.HelpFormatter):
    """The help of ``train``: after the example, every config key with its default and comment.

    The keys are read from the config classes when the help is shown (which imports
    the models), not when the parser is built.
    """

    def _fill_text(self, text, width, indent):
        if text != _TRAIN_EXAMPLE:
            return super()._fill_text(text, width, indent)
        from nnsweeper.training_config import config_help

        return super()._fill_text(text, width, indent) + "\n\n" + config_help()


def _add_train(sub) -> None:
    tr = sub.add_parser(
        "train",
        help="train a CNN or GNN mine-probability model from a TOML config",
        description="Train the model a config describes (train/*.toml) on its dataset; write best.pt, "
        "last.pt (state dicts with JSON configs), history.json and resume.pt into its output folder. "
        "Overrides take the form section.key=value with TOML values; the keys are listed below. For "
        "several processes or GPUs run it under torchrun: torchrun --nproc_per_node 2 -m nnsweeper "
        "train --config ...",
        epilog=_TRAIN_EXAMPLE,
        formatter_class=_TrainHelpFormatter,
    )
    tr.add_argument("--config", required=True, metavar="TOML", help="the training config")
    tr.add_argument("overrides", nargs="*", metavar="SECTION.KEY=VALUE", help="config overrides")
    tr.add_argument("--resume", action="store_true",
                    help="continue the run in the output folder (train.epochs=N may raise its epochs)")
    tr.add_argument("--quiet", action="store_true", help="no progress bars")
    tr.set_defaults(handler=_cmd_train)


def _add_values(sub) -> None:
    from nnsweeper.datasets.generate import MAX_DATASET_GAMES
    from nnsweeper.datasets.policies import POLICIES
    from nnsweeper.solvers.base import STARTS

    gv = sub.add_parser(
        "generate-values",
        help="play survival games of a reference policy and write positions labelled with its chance to win",
        description="Play games with a reference policy (search by default) in which revealing a mine "
        "redraws the hidden layout from the position's posterior with that cell safe, and label the "
        "positions around its guesses with the product of the exact safeties of its guesses from there "
        "on: an unbiased, low-noise label of the policy's chance to win. Writes .npz shards and "
        "manifest.json into OUT; the output does not depend on --jobs.",
        epilog="parts as for generate; mixtures: value = 10x10:5-30/5 + beginner + intermediate + expert, "
        "classic = the three presets. example: nnsweeper generate-values data/values --mix value --games 400",
    )
    gv.add_argument("out", metavar="OUT", help="output folder (new, or an unfinished run to resume)")
    gv.add_argument("parts", nargs="*", metavar="PART", help="configurations, as for generate")
    gv.add_argument("--mix", choices=("value", "classic"), default=None, help="a named mixture")
    games = _int_in(1, MAX_DATASET_GAMES, "games of one dataset")
    gv.add_argument("--games", type=games, default=100, help="games per configuration (default: 100)")
    gv.add_argument("--seed", type=_int_in(0), default=0, help="entropy of the seed streams (default: 0)")
    gv.add_argument("--policy", choices=POLICIES, default="search", help="reference policy (default: search)")
    gv.add_argument("--start", choices=STARTS, default="corner", help="first click (default: corner)")
    gv.add_argument("--record", choices=("guess", "all"), default="guess",
                    help="positions kept: around the guesses, or all (default: guess)")
    gv.add_argument("--splits", type=_fractions, default=(0.8, 0.1, 0.1), metavar="TRAIN,VAL,TEST",
                    help="shares of each configuration's games per split (default: 0.8,0.1,0.1)")
    gv.add_argument("--shard-games", type=games, default=20, help="games per shard file (default: 20)")
    gv.add_argument("--jobs", type=_jobs, default=-1, help="worker processes, -1 for all cores (default: -1)")
    gv.add_argument("--quiet", action="store_true", help="no progress bar")
    gv.set_defaults(handler=_cmd_generate_values)

    tv = sub.add_parser(
        "train-value",
        help="train the state-value network of the value solvers from a TOML config",
        description="Train a ValueGNN on a value dataset (generate-values) as the config says "
        "(sections data, model, train, output; see train/value_gnn.toml); writes value-gnn.pt, its .json "
        "and metrics.json into the output folder.",
        epilog="example: nnsweeper train-value --config train/value_gnn.toml",
    )
    tv.add_argument("--config", required=True, metavar="TOML", help="the training config")
    tv.add_argument("--quiet", action="store_true", help="no progress bars")
    tv.set_defaults(handler=_cmd_train_value)


def _cmd_generate_values(args, argv) -> int:
    from nnsweeper.datasets.values import generate_values

    items = [args.mix] if args.mix else []
    items += args.parts
    if not items:
        raise ValueError("give at least one PART (such as expert:400) or --mix NAME")
    m = generate_values(args.out, items, games=args.games,
                        splits=args.splits, seed=args.seed, policy=args.policy, start=args.start,
                        record=args.record, shard_games=args.shard_games, n_jobs=args.jobs,
                        progress=not args.quiet)
    if not args.quiet:
        sizes = [f"{s} {v['games']} games / {v['states']} positions" for s, v in m["splits"].items()]
        print("splits: " + ", ".join(sizes) + f"; dropped games: {m['dropped_games']}")
        print(f"wrote {Path(args.out) / 'manifest.json'} and {len(m['shards'])} shards")
    return 0


def _cmd_train_value(args, argv) -> int:
    from nnsweeper.value_training import train_value

    m = train_value(args.config, progress=not args.quiet)
    if not args.quiet:
        b = m["best"]
        print(f"best epoch {b['epoch']}: validation cross-entropy {b['bce']:.4f}, "
              f"squared error {b['mse']:.5f} "
              f"(each board size's mean value: {b['mse_mean']:.5f}); wrote {m['config']['output']['dir']}")
    return 0


def _add_one_board(p, default: str) -> None:
    """--board or --preset: the one board a command plays (``args.preset or args.board``, or None)."""
    board = p.add_mutually_exclusive_group()
    board.add_argument("--board", type=one_board, default=None, metavar="BOARD",
                       help=f"ROWSxCOLS:MINES or a preset name (default: {default})")
    board.add_argument("--preset", type=one_board, default=None, metavar="NAME",
                       help="beginner, intermediate or expert")


def _add_play(sub) -> None:
    from nnsweeper.game import FIRST_CLICK_RULES

    pa = sub.add_parser(
        "play",
        help="play Minesweeper in the terminal, with the exact engine's hints and a solver's advice",
        description="Play a seeded game in the terminal (needs the play extra: pip install "
        "'nnsweeper[play]'). Arrows move, space or enter reveals, f flags, c chords, h shows every covered "
        "cell's exact P(mine), s asks a solver for its move and its reason, n starts a new game, q quits; "
        "left click reveals, right click flags.",
        epilog="example: nnsweeper play --preset beginner --seed 7 --save game.json; "
        "then nnsweeper play --replay game.json",
    )
    _add_one_board(pa, "beginner")
    pa.add_argument("--seed", type=_int_in(0), default=None, help="the game seed (default: a new one)")
    pa.add_argument("--first-click", choices=FIRST_CLICK_RULES, default="safe",
                    help="first-click rule (default: safe)")
    pa.add_argument("--solver", default="search", help="the solver the s key asks (default: search)")
    pa.add_argument("--save", default=None, metavar="FILE", help="save the game (JSON) when it ends")
    pa.add_argument("--replay", default=None, metavar="FILE", help="play back a game saved with --save")
    pa.set_defaults(handler=_cmd_play)


def _cmd_play(args, argv) -> int:

    from nnsweeper.game import Rules
    from nnsweeper.play import MAX_PLAY_SIDE, load_game
    from nnsweeper.solvers import get_solver

    get_solver(args.solver)  # an unknown name is refused before the screen changes
    if args.replay is not None:
        if args.board or args.preset or args.seed is not None:
            raise ValueError("--replay plays the saved game's own board and seed: give no --board, "
                             "--preset or --seed with it")
        log = load_game(args.replay)
        rules, seed = log.rules, log.seed
    else:
        log = None
        rows, cols, mines = args.preset or args.board or (9, 9, 10)
        rules = Rules(rows, cols, mines, args.first_click)
        seed = args.seed  # None: the game draws a new one (shown on the status line)
    if max(rules.rows, rules.cols) > MAX_PLAY_SIDE:
        raise ValueError(f"play takes boards of at most {MAX_PLAY_SIDE} rows and columns; "
                         f"got {rules.rows}x{rules.cols}")
    if args.save is not None and Path(args.save).is_dir():
        raise ValueError(f"--save {args.save!r} is a folder; give a file name")
    try:
        from nnsweeper.play import run_app

        app = run_app(rules, seed, solver=args.solver, save=args.save, replay=log)
    except ImportError:
        raise ValueError("nnsweeper play needs Textual: pip install 'nnsweeper[play]'") from None
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise ValueError("nnsweeper play needs a terminal (standard input and output are not one)")
    app.run()
    return 0


#: Evaluation games ``watch`` searches for one with enough guesses, without --seed.
WATCH_SCAN = 1000


def _add_watch(sub) -> None:
    wa = sub.add_parser(
        "watch",
        help="play one seeded game with a solver and write it as a GIF (or MP4) of its moves",
        description="Play one game with a solver and write an animation: one frame per move (runs "
        "of proven-safe moves share one), the board before it coloured by the solver's P(mine) (its "
        "model's for a neural solver, the exact engine's otherwise), the next cell outlined and "
        "labelled with the move's kind and risk, and a last frame with the finished board. Without "
        "--seed the game is the first evaluation game (the seeds of nnsweeper eval) in which the "
        "solver guesses at least --min-guesses times.",
        epilog="example: nnsweeper watch csp --preset expert --seed 3 --out game.gif",
    )
    wa.add_argument("solver", metavar="SOLVER", help="a registered solver name (csp, search, gnn, ...)")
    _add_one_board(wa, "10x10:20")
    wa.add_argument("--seed", type=_int_in(0), default=None,
                    help="the game seed (default: the first evaluation game with enough guesses)")
    wa.add_argument("--min-guesses", type=_int_in(0, 10_000), default=2, metavar="N",
                    help="guesses the chosen game must have, without --seed (default: 2)")
    wa.add_argument("--start", type=_start, default=None,
                    help="first click: center, corner or ROW,COL (default: the solver's)")
    wa.add_argument("--exact", action="store_true", help="colour by the exact engine's P(mine)")
    wa.add_argument("--fps", type=float, default=1.5, help="frames per second (default: 1.5)")
    wa.add_argument("--out", required=True, help="the animation to write: .gif, or .mp4 with ffmpeg")
    wa.set_defaults(handler=_cmd_watch)


def _cmd_watch(args, argv) -> int:
    import numpy as np

    from nnsweeper import MinesweeperEnv, get_solver
    from nnsweeper.evaluation import game_seeds
    from nnsweeper.plots import animate_game
    from nnsweeper.solvers.replay import game_frames

    rows, cols, mines = args.preset or args.board or (10, 10, 20)
    if Path(args.out).suffix.lower() not in (".gif", ".mp4"):
        raise ValueError(f"--out must end in .gif or .mp4; got {args.out!r}")
    solver = get_solver(args.solver, **({} if args.start is None else {"start": args.start}))
    if args.seed is None:
        def guesses(seed: int) -> int:
            env = MinesweeperEnv(rows, cols, mines, seed=seed)
            return solver.play(env, np.random.default_rng(seed)).guesses

        seeds = [int(s) for s in game_seeds(0, WATCH_SCAN)]
        index = next((k for k, s in enumerate(seeds) if guesses(s) >= args.min_guesses), None)
        if index is None:
            raise ValueError(f"none of the first {WATCH_SCAN} evaluation games on {rows}x{cols} with "
                             f"{mines} mines has {args.min_guesses} guesses by {args.solver}; give --seed")
        seed = seeds[index]
        print(f"game {index} of the evaluation games (game_seeds(0, {WATCH_SCAN})): seed {seed}")
    else:
        seed = args.seed
    env = MinesweeperEnv(rows, cols, mines, seed=seed)
    frames = game_frames(solver, env, np.random.default_rng(seed),
                         probabilities="exact" if args.exact else None)
    model = getattr(solver, "arch", None) if not args.exact else None
    colours = f"{model} P(mine)" if model else "exact P(mine)"
    title = f"{args.solver}, {rows}x{cols}, {mines} mines, seed {seed}\ncolour: {colours}"
    if model and getattr(solver, "hybrid", False):
        title += "; P in the label: exact risk"
    path = animate_game(frames, args.out, fps=args.fps, title=title)
    record = solver.last_record
    result = "won" if record.won else "lost"
    print(f"wrote {path}: {len(frames)} frames; {result} after {len(record.moves)} moves "
          f"({record.guesses} guesses)")
    return 0


def _add_evaluate_model(sub) -> None:
    em = sub.add_parser(
        "evaluate-model",
        help="score a model's probabilities on a dataset split, next to the exact engine's",
        description="Score a model on held-out states: log-loss against the truth next to the exact "
        "engine's (and their ratio), mean absolute error against the exact probabilities, ROC AUC, "
        "Brier score, calibration error, and how often engine-proven safe cells get P < 0.02 and "
        "proven mines P > 0.98; frontier "
        "and interior cells apart, overall and per configuration. Writes OUT.json and a reliability "
        "diagram OUT.png.",
        epilog="example: nnsweeper evaluate-model --model gnn --data data/mixed --out eval/results/gnn_test",
    )
    em.add_argument("--model", required=True, metavar="NAME|PATH",
                    help="cnn or gnn (the bundled weights) or a checkpoint .pt")
    em.add_argument("--data", required=True, metavar="FOLDER", help="a dataset folder")
    em.add_argument("--split", choices=("train", "val", "test"), default="test",
                    help="which split (default: test)")
    em.add_argument("--batch-size", type=_int_in(1), default=128,
                    help="states per batch; fewer on big boards, as a batch holds a bounded number of "
                    "board cells (nnsweeper.datasets.loaders.MAX_BATCH_CELLS) (default: 128)")
    em.add_argument("--max-batches", type=_int_in(0), default=0,
                    help="at most this many batches per configuration (default: 0, all)")
    em.add_argument("--device", default="cpu", help="cpu, cuda or auto (default: cpu)")
    em.add_argument("--symmetric", action="store_true",
                    help="score the mean over each board's symmetries (8 for a square board, 4 otherwise), "
                    "as predict_proba(symmetric=True); the GNN's graphs do not change under them")
    em.add_argument("--out", required=True, metavar="PREFIX", help="writes PREFIX.json and PREFIX.png")
    em.add_argument("--quiet", action="store_true", help="no progress bar")
    em.set_defaults(handler=_cmd_evaluate_model)


def _fractions(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(t) for t in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected three fractions such as 0.8,0.1,0.1; got {text!r}"
        ) from None
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f"expected three fractions (train,val,test); got {text!r}")
    return values


# ------------------------------------------------------------------ commands
def _cmd_evaluate_model(args, argv) -> int:
    from nnsweeper.metrics import format_metrics, to_json
    from nnsweeper.models import load_model
    from nnsweeper.plots import agg_figure, plot_reliability, save_figure
    from nnsweeper.training import evaluate_model

    out = _out_prefix(args.out)
    model = load_model(args.model, device=args.device)
    result, preds = evaluate_model(model, args.data, args.split, batch_size=args.batch_size,
                                   max_batches=args.max_batches, progress=not args.quiet,
                                   name=args.model, notify=_note, symmetric=args.symmetric)
    result["model"] = {"name": args.model, "arch": model.arch, "config": model.config,
                       "symmetric": args.symmetric}
    result["data"] = {"path": args.data, "split": args.split}
    result["command"] = shlex.join([PROG, *argv])
    to_json(result, out.with_name(out.name + ".json"))
    fig = agg_figure((9.6, 4.4))
    axes = fig.subplots(1, 2)
    for ax, frontier, name in ((axes[0], True, "frontier cells"), (axes[1], False, "interior cells")):
        part = preds.select(frontier=frontier)
        if part.cells > 0:
            plot_reliability(part, ax, label=_model_label(args.model), title=f"{name} ({args.split} split)")
    save_figure(fig, out.with_name(out.name + ".png"))
    print(format_metrics(result))
    if not args.quiet:
        print(f"wrote {out.with_name(out.name + '.json')} and {out.with_name(out.name + '.png')}")
    return 0


def _note(note: str) -> None:
    """A notice on stderr, ``nnsweeper: note: ...`` (the work goes on)."""
    print(f"{PROG}: note: {note}", file=sys.stderr)


def _model_label(model: str) -> str:
    """A model's name in legends: a bundled model's name, or a checkpoint's run folder and file."""
    path = Path(model)
    if path.suffix != ".pt":
        return model
    return f"{path.parent.name}/{path.stem}" if path.parent.name else path.stem


def _cmd_train(args, argv) -> int:
    from nnsweeper.training import load_config, train

    config = load_config(args.config, args.overrides)
    result = train(config, resume=args.resume, progress=not args.quiet, notify=_note)
    if result.already_finished:
        print(result.already_finished)
    elif not args.quiet and result.history:
        print(f"wrote {result.best} and {result.last}")
    return 0


def _cmd_generate(args, argv) -> int:
    from nnsweeper.datasets import generate
    from nnsweeper.parallel import backend

    items = [*args.mix, *args.parts]
    if not items:
        raise ValueError("give at least one PART (such as 10x10:5-30:100) or --mix NAME")
    with backend(args.backend, args.scheduler):
        manifest = generate(
            args.out, items, **{name: getattr(args, name) for name in _GENERATE_OPTIONS},
            n_jobs=None if args.backend in ("dask", "ray") else args.jobs, progress=not args.quiet,
        )
    if not args.quiet:
        print(manifest["card_text"])
        sizes = [f"{s} {v['games']} games / {v['states']} states" for s, v in manifest["splits"].items()]
        print("splits: " + ", ".join(sizes))
        print(f"wrote {Path(args.out) / 'manifest.json'} and {len(manifest['shards'])} shards")
    return 0


def _out_prefix(text: str) -> Path:
    if not text.strip() or text.endswith(("/", "\\")) or Path(text).is_dir():
        raise ValueError(
            f"--out must be a path prefix such as eval/results/NAME, not a folder; got {text!r}"
        )
    out = Path(text)
    if out.suffix.lower() in _OUT_SUFFIXES:
        out = out.with_suffix("")
    return out


def _cmd_eval(args, argv) -> int:
    from nnsweeper.evaluation import evaluate
    from nnsweeper.evaluation.summary import format_summary
    from nnsweeper.parallel import backend

    out = _out_prefix(args.out)
    solvers = _play_solvers(args)
    # Every finished chunk of games goes to OUT.games, so that the same command run
    # again after an interruption plays only what is missing.
    store = out.with_name(out.name + _STORE_SUFFIX)
    cluster = args.backend in ("dask", "ray")
    common = dict(
        trials=args.trials, base_seed=args.base_seed, first_click=args.first_click,
        n_jobs=None if cluster else args.jobs, progress=not args.quiet, datasets=args.dataset or None,
        store=store,
    )
    boards, x = _board_arguments(args)
    if not args.quiet and (store / "store.json").exists():
        _note(f"continuing from the games recorded in {store}")
    with backend(args.backend, args.scheduler):
        table = evaluate(solvers, **boards, **common)
    table.metadata["command"] = shlex.join([PROG, *argv])

    paths = [out.with_name(out.name + s) for s in _OUT_SUFFIXES]
    table.to_csv(paths[0])
    table.to_json(paths[1])
    _save_plot(table, paths[2], x=x)
    print(format_summary(table))
    if args.table:
        print("\n" + str(table))
    if not args.quiet:
        print("wrote " + ", ".join(str(p) for p in paths)
              + ("" if args.table else f" (every row: {paths[0]}, or --table)")
              + f"; every game is kept in {store}")
    return 0


def _board_arguments(args) -> tuple[dict, str]:
    """The boards of ``eval`` / ``compare`` as arguments of ``evaluate``, and the x axis."""
    given = [f for f, v in (("--rows", args.rows), ("--cols", args.cols), ("--mines", args.mines))
             if v is not None]
    if args.board or args.preset is not None:
        which = "--board" if args.board else "--preset"
        if args.board and args.preset is not None:
            given.append("--preset")
        if given:
            raise ValueError(f"{which} sets the board; do not combine it with {', '.join(given)}")
        from nnsweeper.game import PRESETS

        boards = [b for spec in args.board or [_boards(args.preset)] for b in spec]  # --preset: one spec
        sizes = {(r, c) for name, r, c, _ in boards if name not in PRESETS}
        x = "mines" if len(sizes) == 1 and all(name not in PRESETS for name, *_ in boards) else "board"
        return {"boards": [name if name in PRESETS else (r, c, m) for name, r, c, m in boards]}, x
    return {"mines_list": args.mines or args.default_mines, "rows": args.rows or _DEFAULT_SIZE,
            "cols": args.cols or _DEFAULT_SIZE}, "mines"


def _boards(text: str) -> list[tuple[str, int, int, int]]:
    from nnsweeper.game import parse_boards

    try:
        return parse_boards(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def one_board(text: str) -> tuple[int, int, int]:
    """An argparse type for one board in nnsweeper's board syntax (``10x10:20``, ``expert``).

    Returns ``(rows, cols, mines)``; the scripts and benchmarks that play one board use it.
    """
    boards = _boards(text)
    if len(boards) != 1:
        raise argparse.ArgumentTypeError(
            f"expected one board such as 10x10:20 or expert; {text!r} names {len(boards)}"
        )
    return boards[0][1:]


def _model_choice(text: str) -> tuple[str, str, str]:
    """``NAME=[ARCH:]PATH`` of ``--model`` as (name, architecture, path), checked against the registry."""
    from nnsweeper.models.registry import ARCHITECTURES

    name, sep, rest = (t.strip() for t in text.partition("="))
    arch, colon, path = (t.strip() for t in rest.partition(":"))
    if not colon or arch not in ARCHITECTURES:  # ARCH=PATH (a path may hold ':' itself)
        arch, path = name, rest
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(
            f"expected ARCH=PATH (gnn=runs/gnn/best.pt) or NAME=ARCH:PATH (mygnn=gnn:runs/gnn/best.pt); "
            f"got {text!r}"
        )
    if arch not in ARCHITECTURES:
        raise argparse.ArgumentTypeError(
            f"{name!r} in {text!r} is not an architecture ({', '.join(ARCHITECTURES)}); to name a "
            f"checkpoint, write NAME=ARCH:PATH such as {name}={next(iter(ARCHITECTURES))}:{path}"
        )
    return name, arch, path


def _play_solvers(args) -> dict:
    """The solvers of ``eval`` / ``compare``: registry names, and the named checkpoints of ``--model``."""
    from nnsweeper.solvers import SOLVERS, get_solver

    seen: dict[str, tuple[str, str]] = {}
    for name, arch, path in args.model:
        if name in seen:
            raise ValueError(f"--model names {name!r} more than once; give each checkpoint its own NAME")
        if name != arch and (name in SOLVERS or f"hybrid-{name}" in SOLVERS):
            taken = name if name in SOLVERS else f"hybrid-{name}"
            raise ValueError(f"--model {name}={arch}:{path}: {taken!r} is a registered solver; choose "
                             f"another NAME, such as my{name}")
        seen[name] = (arch, path)
    named = {n: v for n, v in seen.items() if n not in SOLVERS}
    names = args.solvers
    if names is None:
        names = [*args.default_solvers, *(f"{p}{n}" for n in named for p in ("", "hybrid-"))]
    solvers = {}
    for name in names:
        base = name.removeprefix("hybrid-")
        if base in named:
            arch, path = named[base]
            registry_name = f"hybrid-{arch}" if name != base else arch
            solvers[name] = get_solver(registry_name, start=args.start, model=path, device=args.device)
        else:
            solvers[name] = get_solver(name, start=args.start, **_model_options(name, seen, args.device))
    return solvers


def _model_options(name: str, models: dict, device: str) -> dict:
    """The model options of a registry neural solver (none for the others): --model or the bundled weights."""
    from nnsweeper.solvers import SOLVERS, NeuralSolver

    cls = SOLVERS.get(name)
    arch = getattr(cls, "arch", None)
    if cls is None or not issubclass(cls, NeuralSolver) or arch is None:
        return {}
    if arch in models:
        return {"model": models[arch][1], "device": device}
    from nnsweeper.models.registry import ARCHITECTURES

    if not ARCHITECTURES[arch].bundled:
        raise ValueError(f"solver {name!r} plays a {arch!r} model and none ships with nnsweeper: "
                         f"give --model {arch}=PATH")
    return {"model": arch, "device": device}


def _save_plot(table, path: Path, *, x: str, reference: str = "csp") -> None:
    from nnsweeper.plots import agg_figure, evaluation_title, plot_evaluation, save_figure

    fig = agg_figure((6.4, 4.2))  # plot_evaluation sizes it for one or two panels
    plot_evaluation(table, fig, x=x, reference=reference, title=evaluation_title(table, x))
    save_figure(fig, path)


def _cmd_plot(args, argv) -> int:
    from nnsweeper.evaluation import EvalTable, config_key

    tables = []
    for name in args.table:
        source = Path(name)
        if not source.is_file():
            reason = "it is a folder" if source.is_dir() else "no such file"
            raise ValueError(f"cannot read table {name!r}: {reason}")
        table = EvalTable.from_json(source)
        if len(table) == 0:
            raise ValueError(f"{name} holds no rows to plot")
        tables.append(table)
    if len(tables) == 1:
        table = tables[0]
    else:
        if args.out is None:
            raise ValueError("plotting several tables needs --out PNG (the figure to write)")
        owner: dict[tuple, str] = {}
        for name, t in zip(args.table, tables, strict=True):
            for r in t:
                key = (r["solver"], *config_key(r))
                if key in owner:
                    raise ValueError(
                        f"solver {r['solver']!r} has results for {r['board']} with {r['mines']} mines in "
                        f"both {owner[key]} and {name}; plot them apart, or play one under another name "
                        "(a checkpoint: --model NAME=ARCH:PATH)"
                    )
                owner[key] = name
        table = EvalTable([r for t in tables for r in t],
                          metadata={**tables[0].metadata, "sources": list(args.table)})
    reference = args.reference
    if reference is not None and reference not in table.solvers:
        raise ValueError(
            f"--reference must be one of the tables' solvers ({', '.join(table.solvers)}); "
            f"got {reference!r}"
        )
    out = Path(args.out) if args.out is not None else Path(args.table[0]).with_suffix(".png")
    from nnsweeper.plots import evaluation_axis

    _save_plot(table, out, x=evaluation_axis(table), reference=reference or "csp")
    print(f"wrote {out}")
    return 0


def _cmd_analyze(args, argv) -> int:
    import os

    from nnsweeper.boardtext import format_analysis, parse_observation
    from nnsweeper.probability import analyze
    from nnsweeper.solvers.suggest import format_suggestions, load_solvers, suggest_move

    if args.png is not None:
        _check_figure_path(args.png)
    board = parse_observation(_read_board_text(args.file), args.mines)
    if args.png is not None and board.grid.size > MAX_PICTURE_CELLS:
        rows, cols = board.grid.shape
        raise ValueError(f"--png draws boards of at most {MAX_PICTURE_CELLS} cells; got {rows}x{cols}")
    result = analyze(board, max_states=args.max_states)
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    solvers, skipped = load_solvers(args.solvers)
    moves = [(s.name, suggest_move(s, board, args.seed, analysis=result, max_states=args.max_states))
             for s in solvers]
    print(format_analysis(board, result, color=color))
    print()
    print(f"next move of each solver (row, col from 0; solver seed {args.seed}):")
    if moves:
        print(format_suggestions(moves))
    for note in skipped:
        print(f"  {note}")
    if args.value:
        print()
        print(_value_line(board, args.value, args.seed))
    if args.png is not None:
        from nnsweeper.plots import agg_figure, plot_position, save_figure

        save_figure(plot_position(board, result, moves, fig=agg_figure()), args.png, dpi=120)
        print(f"\nwrote {args.png}")
    return 0


#: The largest board ``analyze --png`` draws (one text per cell: 100x100 takes seconds).
MAX_PICTURE_CELLS = 10_000


def _check_figure_path(path: str) -> None:
    """Refuse a figure path whose suffix matplotlib cannot write, before any work."""
    from matplotlib.figure import Figure

    suffix = Path(path).suffix.lower().lstrip(".")
    formats = Figure().canvas.get_supported_filetypes()
    if suffix not in formats:
        raise ValueError(f"--png {path!r}: the suffix must name an image format "
                         f"({', '.join(sorted(formats))})")


def _value_line(board, games: int, seed: int) -> str:
    """The chance that search wins from ``board``: the value network's and a Monte Carlo estimate."""
    from nnsweeper.evaluation.rollouts import monte_carlo_value
    from nnsweeper.models.checkpoint import CheckpointError
    from nnsweeper.models.value import position_value

    mc = monte_carlo_value(board, "search", n=games, seed=seed)
    try:
        net = f"value network {position_value(board):.1%}"
    except CheckpointError as exc:
        net = f"value network unavailable ({exc})"
    return (f"chance that search wins from here: {net}; Monte Carlo {mc.rate:.1%} "
            f"(95% interval {mc.low:.1%}-{mc.high:.1%}, {mc.games} games, seed {seed})")


def _read_board_text(name: str) -> str:
    """The text of a board file (``-``: stdin), read no further than the longest board text."""
    from nnsweeper.boardtext import MAX_TEXT_CHARS

    where = "stdin" if name == "-" else f"board file {name!r}"
    if name == "-":
        stream = getattr(sys.stdin, "buffer", sys.stdin)  # bytes where there are any
        data = stream.read(MAX_TEXT_CHARS + 1)
    else:
        try:
            with open(name, "rb") as f:
                data = f.read(MAX_TEXT_CHARS + 1)
        except OSError as e:
            raise ValueError(f"cannot read {where}: {e.strerror or e}") from None
    if len(data) > MAX_TEXT_CHARS:
        raise ValueError(f"{where} holds more than {MAX_TEXT_CHARS} bytes, more than any board's text "
                         f"(a {_largest_board()} board takes about 2 million); not read further")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{where} is not UTF-8 text") from None
    return data


def _largest_board() -> str:
    from nnsweeper.game import MAX_COLS, MAX_ROWS

    return f"{MAX_ROWS}x{MAX_COLS}"


# ---------------------------------------------------------------------- main
def _unrecognized(parser, command: str, extras: list[str]) -> str:
    """The message for arguments the subcommand does not take, pointing to its help."""
    import difflib

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    options = [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
    message = f"{command} does not take {' '.join(extras)}"
    flag = next((e.partition("=")[0] for e in extras if e.startswith("-")), None)
    close = difflib.get_close_matches(flag, options, n=1, cutoff=0.6) if flag else []
    if close:
        message += f"; did you mean {close[0]}?"
    return f"{message} (see '{sub.prog} --help')"


def _fail(message: str) -> int:
    print(f"{PROG}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    """Run the command with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        try:
            args, extras = parser.parse_known_args(argv)
        except SystemExit as e:  # --help and --version
            return e.code if isinstance(e.code, int) else 0
        if args.command == "train":  # overrides may stand on both sides of an option
            args.overrides += [e for e in extras if "=" in e and not e.startswith("-")]
            extras = [e for e in extras if e not in args.overrides]
        if extras:
            raise _UsageError(_unrecognized(parser, args.command, extras))
        from nnsweeper.parallel import terminate_on_sigterm

        with terminate_on_sigterm():  # a kill stops the work as Ctrl-C does: finished files stay
            return args.handler(args, argv)
    except _UsageError as e:
        return _fail(str(e))
    except (ValueError, OSError) as e:  # every NnsweeperError is a ValueError
        return _fail(str(e) or type(e).__name__)
    except KeyboardInterrupt as e:  # a message says where the work stands (training's does)
        print(f"{PROG}: {' '.join(str(e).split()) or 'interrupted'}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
