"""``nnsweeper generate`` and ``generate-values``: play games and write labelled datasets.

``generate`` writes board states labelled with the truth and exact mine probabilities
(:func:`nnsweeper.datasets.generate`); ``generate-values`` writes positions labelled
with a reference policy's chance to win (:func:`nnsweeper.datasets.values.generate_values`).
The options that are those functions' keyword arguments take their defaults from the
functions' signatures, so that the command and the library cannot disagree.
"""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

from nnsweeper.cli.core import add_backend_options, int_in, n_jobs, positive_seconds

#: The options of ``generate`` that are :func:`nnsweeper.datasets.generate`'s own keyword
#: arguments (``--first-click`` is ``first_click``): their defaults are read from it.
_GENERATE_OPTIONS = ("games", "splits", "seed", "policy", "flags", "record", "epsilon", "start",
                     "first_click", "shard_games")
#: The options of ``generate-values`` that are :func:`nnsweeper.datasets.values.generate_values`'s
#: keyword arguments, with their defaults read from it.
_GENERATE_VALUES_OPTIONS = ("games", "seed", "policy", "start", "record", "splits", "shard_games")


def _keyword_options(p, function):
    """``option(name, what, **kw)``: adds ``--name`` with the default of ``function``'s argument ``name``.

    The help is ``what`` followed by the default.
    """
    defaults = {name: q.default for name, q in inspect.signature(function).parameters.items()}

    def option(name: str, what: str, **kw) -> None:
        value = defaults[name]
        shown = ",".join(map(str, value)) if isinstance(value, tuple) else value
        p.add_argument("--" + name.replace("_", "-"), default=value, help=f"{what} (default: {shown})", **kw)

    return option


def _fractions(text: str) -> tuple[float, ...]:
    """The argparse type of ``--splits``: three fractions, train,val,test."""
    try:
        values = tuple(float(t) for t in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected three fractions such as 0.8,0.1,0.1; got {text!r}"
        ) from None
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f"expected three fractions (train,val,test); got {text!r}")
    return values


def _games():
    from nnsweeper.datasets.generate import MAX_DATASET_GAMES

    return int_in(1, MAX_DATASET_GAMES, "games of one dataset")


# -------------------------------------------------------------------- generate
def add_generate(sub):
    from nnsweeper.datasets import MIXES, POLICIES, RECORD_MODES, STARTS, generate
    from nnsweeper.datasets.generate import MAX_SHARD_CELLS, describe_mix
    from nnsweeper.datasets.policies import FLAG_MODES
    from nnsweeper.game import FIRST_CLICK_RULES, PRESETS

    ge = sub.add_parser(
        "generate",
        help="play games and write labelled board states (truth and exact probabilities)",
        description="Play games with a behaviour policy, record the board states it decides "
        "on, label every covered cell with the truth and its exact mine probability, and "
        "write sharded .npz files and manifest.json into OUT. Running the same command "
        "again after an interruption resumes it; the output does not depend on --jobs.",
        epilog="parts: ROWSxCOLS:MINES[:GAMES[:POLICY[:FLAGS[:RECORD]]]] or "
        "PRESET[:GAMES[:POLICY[:FLAGS[:RECORD]]]]; MINES is N, A-B (every count), A-B/STEP or a "
        "comma list; RECORD (all or guess) is the part's own --record; an empty field takes the "
        "default; presets: " + ", ".join(PRESETS)
        + "; mixtures: " + "; ".join(f"{k} = {describe_mix(k)}" for k in MIXES)
        + ". example: nnsweeper generate data/mixed --mix mixed --games 400 --jobs 2",
    )
    ge.add_argument("out", metavar="OUT", help="output folder (new, empty, or an unfinished run to resume)")
    ge.add_argument("parts", nargs="*", metavar="PART", help="configurations (see below)")
    ge.add_argument("--mix", action="append", default=[], choices=sorted(MIXES),
                    help="add a named mixture of configurations (repeatable)")
    option = _keyword_options(ge, generate)
    games = _games()
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
    ge.add_argument("--jobs", type=n_jobs, default=-1,
                    help="worker processes, -1 for all cores; the output does not depend on it (default: -1)")
    add_backend_options(ge)
    ge.add_argument("--quiet", action="store_true", help="no progress bar, no card")
    ge.set_defaults(handler=_cmd_generate)
    return ge


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


# ------------------------------------------------------------- generate-values
def add_generate_values(sub):
    from nnsweeper.datasets.policies import POLICIES
    from nnsweeper.datasets.values import generate_values
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
    option = _keyword_options(gv, generate_values)
    games = _games()
    option("games", "games per configuration", type=games)
    option("seed", "entropy of the seed streams", type=int_in(0))
    option("policy", "reference policy", choices=POLICIES)
    option("start", "first click", choices=STARTS)
    option("record", "positions kept: around the guesses, or all", choices=("guess", "all"))
    option("splits", "shares of each configuration's games per split", type=_fractions,
           metavar="TRAIN,VAL,TEST")
    option("shard_games", "games per shard file", type=games)
    gv.add_argument("--jobs", type=n_jobs, default=-1,
                    help="worker processes, -1 for all cores (default: -1)")
    gv.add_argument("--quiet", action="store_true", help="no progress bar")
    gv.set_defaults(handler=_cmd_generate_values)
    return gv


def _cmd_generate_values(args, argv) -> int:
    from nnsweeper.datasets.values import generate_values

    items = [args.mix] if args.mix else []
    items += args.parts
    if not items:
        raise ValueError("give at least one PART (such as expert:400) or --mix NAME")
    m = generate_values(args.out, items, **{name: getattr(args, name) for name in _GENERATE_VALUES_OPTIONS},
                        n_jobs=args.jobs, progress=not args.quiet)
    if not args.quiet:
        sizes = [f"{s} {v['games']} games / {v['states']} positions" for s, v in m["splits"].items()]
        print("splits: " + ", ".join(sizes) + f"; dropped games: {m['dropped_games']}")
        print(f"wrote {Path(args.out) / 'manifest.json'} and {len(m['shards'])} shards")
    return 0


# ---------------------------------------------------------------------- boards
#: The most layouts one ``boards`` command writes.
MAX_BOARDS = 10_000


def add_boards(sub):
    from nnsweeper.cli.core import add_no_guess, add_one_board, start_cell
    from nnsweeper.game import FIRST_CLICK_RULES, NO_GUESS_SECONDS, NO_GUESS_TRIES

    bo = sub.add_parser(
        "boards",
        help="write seeded mine layouts as text, boards that never need a guess with --no-guess",
        description="Write the mine layouts of the games of --base-seed (the seeds eval plays) for a first "
        "click at --start: each board is the layout Game(rules, seed) places at that click, as rows of * "
        "(a mine) and . (safe) under # lines naming its board, rule and game seed. With --no-guess each "
        "is certified by the exact engine with the mine count: cells proved safe alone win it from the "
        "first click. A board whose budget runs out stops the command (exit 2) rather than be written.",
        epilog="example: nnsweeper boards expert_ng.txt --preset expert --no-guess --count 100 "
        "--start corner",
    )
    bo.add_argument("out", metavar="FILE", help="the text file to write")
    add_one_board(bo, "beginner", any_rule=True)
    bo.add_argument("--count", type=int_in(1, MAX_BOARDS, "boards"), default=10,
                    help=f"boards to write, at most {MAX_BOARDS:,} (default: 10)")
    bo.add_argument("--base-seed", type=int_in(0), default=0, help="seed of the game seeds (default: 0)")
    bo.add_argument("--start", type=start_cell, default="center", metavar="WHERE",
                    help="the first click: center, corner or ROW,COL (default: center)")
    bo.add_argument("--first-click", choices=FIRST_CLICK_RULES, default=None,
                    help="first-click rule (default: safe)")
    add_no_guess(bo)
    bo.add_argument("--max-tries", type=int_in(1), default=NO_GUESS_TRIES,
                    help=f"with --no-guess: certifications per board before giving up (default: "
                    f"{NO_GUESS_TRIES:,}; more finds denser boards, and never changes one found)")
    bo.add_argument("--time-limit", type=positive_seconds, default=NO_GUESS_SECONDS, metavar="SECONDS",
                    help=f"with --no-guess: seconds per board before giving up (default: "
                    f"{NO_GUESS_SECONDS:g}; "
                    "a board found is the same on any machine, only whether it is found in time is not)")
    bo.add_argument("--quiet", action="store_true", help="no progress bar")
    bo.set_defaults(handler=_cmd_boards)
    return bo


def _cmd_boards(args, argv) -> int:
    from tqdm.auto import tqdm

    from nnsweeper.cli.core import first_click_rule
    from nnsweeper.evaluation.harness import game_seeds
    from nnsweeper.fileio import atomic_path, output_target
    from nnsweeper.game import NO_GUESS_RULES, NO_GUESS_SECONDS, NO_GUESS_TRIES, Rules, draw_layout
    from nnsweeper.noguess import format_layouts, no_guess_board
    from nnsweeper.solvers.base import first_click_cell

    rule = first_click_rule(args)
    rows, cols, mines = args.preset or args.board or (9, 9, 10)
    rules = Rules(rows, cols, mines, rule)  # --board was read before the rule was known
    cell = first_click_cell(args.start, rows, cols)
    if rule not in NO_GUESS_RULES:
        for option, default in (("max_tries", NO_GUESS_TRIES), ("time_limit", NO_GUESS_SECONDS)):
            if getattr(args, option) != default:
                raise ValueError(f"--{option.replace('_', '-')} is a budget of --no-guess boards; this "
                                 f"command writes boards of the rule {rule!r}")
    output_target(args.out)  # a folder, a device or a FIFO is refused before any work
    seeds = game_seeds(args.base_seed, args.count).tolist()
    # Each board's text goes to the file as it is made (a few MB a huge board): never the whole
    # file in memory. The file appears, whole, only when every board is written.
    with atomic_path(args.out) as tmp, open(tmp, "w", encoding="utf-8") as out:
        for k, seed in enumerate(tqdm(seeds, desc="boards", unit="board", disable=args.quiet)):
            if rule in NO_GUESS_RULES:
                layout = no_guess_board(rows, cols, mines, cell, seed, mode=NO_GUESS_RULES[rule],
                                        max_tries=args.max_tries, time_limit=args.time_limit)
            else:
                layout = draw_layout(rules, seed, cell)
            click = "placed at reset" if rule == "none" else f"first click ({cell[0]}, {cell[1]})"
            heading = (f"board {k + 1} of {len(seeds)}: {rows}x{cols}, {mines} mines, {click}, "
                       f"rule {rule}, game seed {seed}")
            out.write(("\n" if k else "") + format_layouts([layout], [heading]))
    if not args.quiet:
        print(f"wrote {len(seeds)} boards to {args.out}")
    return 0
