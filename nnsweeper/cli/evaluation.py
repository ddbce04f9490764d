"""``nnsweeper eval``, ``compare`` and ``plot``: play solvers on fixed game seeds, draw the tables.

``eval`` plays solvers on fixed game seeds and writes a table (CSV and JSON), a
win-rate plot and the store of every finished game; ``compare`` is ``eval`` with the
main comparison's defaults (every registered solver, 10x10 boards with 5 to 30 mines);
``plot`` draws the figure of saved tables (one or several). The games themselves are
played by :func:`nnsweeper.evaluation.evaluate`.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from nnsweeper.cli.core import (
    OUT_SUFFIXES,
    PROG,
    add_backend_options,
    add_no_guess,
    boards,
    boards_any_rule,
    check_boards,
    device_name,
    first_click_rule,
    int_in,
    n_jobs,
    name_list,
    note,
    out_prefix,
    start_cell,
)

_DEFAULT_MINES = (5, 10, 15, 20, 25, 30)
_DEFAULT_SIZE = 10
_PRESET_CHOICES = ("classic", "beginner", "intermediate", "expert")
_COMPARE_TRIALS = 200
#: ``compare``'s ``--out`` for the main job's boards (10x10, 5 to 30 mines); others: :func:`compare_out`.
_COMPARE_OUT = "compare"
#: Beside OUT.csv, OUT.json and OUT.png, the folder of every finished game (a resumable game store).
_STORE_SUFFIX = ".games"
#: ``eval``'s ``--out`` when none is given: nnsweeper-eval.csv, .json, .png and .games in the current
#: folder (not ``eval``, the name of a folder of this repository).
EVAL_OUT = "nnsweeper-eval"


# ------------------------------------------------------------------------ eval
def add_eval(sub):
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
    _add_play_options(ev, solvers=("single_point", "csp"), mines=_DEFAULT_MINES, trials=200, out=EVAL_OUT)
    ev.set_defaults(handler=_cmd_eval)
    return ev


def _cmd_eval(args, argv) -> int:
    from nnsweeper.evaluation import evaluate
    from nnsweeper.evaluation.summary import format_summary
    from nnsweeper.parallel import backend

    args.first_click = first_click_rule(args)

    out = out_prefix(args.out)
    solvers = _play_solvers(args)
    # Every finished chunk of games goes to OUT.games, so that the same command run
    # again after an interruption plays only what is missing.
    store = out.with_name(out.name + _STORE_SUFFIX)
    cluster = args.backend in ("dask", "ray")
    common = dict(
        trials=args.trials, base_seed=args.base_seed, first_click=args.first_click,
        n_jobs=None if cluster else args.jobs, progress=not args.quiet, datasets=args.dataset or None,
        store=store, on_change="replace" if args.replace_changed else "refuse",
    )
    played, x = _board_arguments(args)
    if not args.quiet:
        _note_continued(store, solvers, played)
    with backend(args.backend, args.scheduler):
        table = evaluate(solvers, **played, **common)
    table.metadata["command"] = shlex.join([PROG, *argv])

    paths = [out.with_name(out.name + s) for s in OUT_SUFFIXES]
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


# --------------------------------------------------------------------- compare
def add_compare(sub):
    from nnsweeper.solvers import compare_solvers

    compared = compare_solvers()
    co = sub.add_parser(
        "compare",
        help="the main comparison: logic, neural and hybrid solvers across mine densities",
        description=f"Play every registered solver ({', '.join(compared)}; the models' bundled "
        "weights unless --model names checkpoints) on the same held-out games: 10x10 "
        "boards with 5 to 30 mines by default, or the classic boards with --preset "
        "classic. Prints the table and writes OUT.csv, OUT.json and OUT.png (win rate "
        "against mine count with 95% intervals, and below it each solver's gap to csp with "
        "its paired 95% interval: pooled over bands of neighbouring mine counts, one panel "
        "per solver, on a sweep; per board otherwise). The models' training seeds are checked "
        "against the evaluation seeds before any game is played.",
        epilog="example: nnsweeper compare --preset classic --start corner --trials 2000 "
        "--jobs 2 --out eval/results/compare_classic",
    )
    _add_play_options(co, solvers=compared, mines=tuple(range(5, 31)), trials=_COMPARE_TRIALS,
                      out=None, jobs=-1)
    co.set_defaults(handler=_cmd_compare)
    return co


def _cmd_compare(args, argv) -> int:
    # eval with other defaults (set by add_compare): the same games, table, figure and store.
    if args.out is None:
        args.out = compare_out(args)
    return _cmd_eval(args, argv)


def compare_out(args) -> str:
    """``compare``'s ``--out`` when none is given: ``compare`` for the main job's boards, else named by them.

    The main job (10x10 boards with 5 to 30 mines) writes compare.csv, .json, .png and
    .games; other boards get a name of their own (``compare-9x9``, ``compare-classic``,
    ``compare-expert``, ``compare-10x10`` for other mine counts on 10x10), so that they
    never overwrite the main job's table and figure nor add their games to its store.
    """
    from nnsweeper.game import PRESETS

    try:
        played, _ = _board_arguments(args)
    except ValueError:  # reported where eval reads the boards, after the solvers' names
        return _COMPARE_OUT
    if "boards" in played:
        boards = [(b, *PRESETS[b]) if isinstance(b, str) else (f"{b[0]}x{b[1]}", *b)
                  for b in played["boards"]]
    else:
        size = f"{played['rows']}x{played['cols']}"
        boards = [(size, played["rows"], played["cols"], m) for m in played["mines_list"]]
    main_job = [(f"{_DEFAULT_SIZE}x{_DEFAULT_SIZE}", _DEFAULT_SIZE, _DEFAULT_SIZE, m)
                for m in args.default_mines]
    if sorted(set(boards)) == sorted(main_job):
        return _COMPARE_OUT
    names = list(dict.fromkeys(name for name, *_ in boards))
    classic = list(PRESETS)
    if all(n in names for n in classic):  # the three presets together: "classic", as --preset names them
        at = names.index(classic[0])
        names = [*names[:at], "classic", *(n for n in names[at:] if n not in classic)]
    return "-".join([_COMPARE_OUT, *names])


# ------------------------------------------------ the options of eval and compare
def _add_play_options(p, *, solvers, mines, trials: int, out: str | None, jobs: int = 1) -> None:
    """The options of ``eval`` and ``compare`` (which differ in their defaults).

    ``out`` None: ``--out`` defaults to None, and the handler names the output by the
    boards played (``compare``: :func:`compare_out`).
    """
    from nnsweeper.evaluation import MAX_TRIALS
    from nnsweeper.game import FIRST_CLICK_RULES, MAX_COLS, MAX_ROWS, PRESETS

    p.add_argument(
        "--solvers", type=name_list, default=None, metavar="NAMES",
        help=f"comma-separated solver names (default: {','.join(solvers)}, then the solvers of "
        "each named --model)",
    )
    p.set_defaults(default_solvers=list(solvers))
    p.add_argument(
        "--board", type=boards_any_rule, action="append", default=[], metavar="BOARD",
        help="boards to play, in the one board syntax of nnsweeper: ROWSxCOLS:MINES with MINES as "
        "N, A-B, A-B/STEP or a comma list (10x10:5-30), a preset name, or classic; mine counts "
        "within the limit of --first-click (repeatable; instead of --rows/--cols/--mines/--preset)",
    )
    p.add_argument(
        "--rows", type=int_in(1, MAX_ROWS, "the largest board"), default=None,
        help=f"board rows (default: {_DEFAULT_SIZE}); not with --preset",
    )
    p.add_argument(
        "--cols", type=int_in(1, MAX_COLS, "the largest board"), default=None,
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
        "--trials", type=int_in(1, MAX_TRIALS, "games per solver and configuration"), default=trials,
        help=f"games per solver and mine count, at most {MAX_TRIALS} (default: {trials})",
    )
    p.add_argument(
        "--base-seed", type=int, default=0,
        help="seed of the game seeds; the same value plays the same games (default: 0)",
    )
    p.add_argument(
        "--first-click", choices=FIRST_CLICK_RULES, default=None,
        help="first-click rule: safe (never a mine), zero (opens an area), none, no-guess, "
        "no-guess-fast (see --no-guess) (default: safe)",
    )
    add_no_guess(p)
    p.add_argument(
        "--start", type=start_cell, default="center", metavar="WHERE",
        help="where solvers click first: center, corner or ROW,COL (default: center)",
    )
    p.add_argument(
        "--jobs", type=n_jobs, default=jobs,
        help=f"worker processes, -1 for all cores; results do not depend on it (default: {jobs})",
    )
    add_backend_options(p)
    # A default, so that the first mistake reported is one in the options that matter
    # (a solver's name), not a missing --out.
    if out is None:
        shown = (f"{_COMPARE_OUT} for the main job's {_DEFAULT_SIZE}x{_DEFAULT_SIZE} boards with "
                 f"{mines[0]} to {mines[-1]} mines, else named by the boards played: {_COMPARE_OUT}-9x9, "
                 f"{_COMPARE_OUT}-classic, ...")
    else:
        shown = out
    p.add_argument(
        "--out", default=out, metavar="PREFIX",
        help="output path prefix: eval/results/NAME writes eval/results/NAME.csv, .json "
        f"and .png (folders are created) (default: {shown}, in the current folder)",
    )
    p.add_argument(
        "--model", type=_model_choice, action="append", default=[], metavar="NAME=[ARCH:]PATH",
        help="a checkpoint to play. ARCH=PATH (gnn=runs/gnn/best.pt) replaces the bundled weights of "
        "the ARCH and hybrid-ARCH solvers; NAME=ARCH:PATH (mygnn=gnn:runs/gnn/best.pt) adds the "
        "solvers NAME and hybrid-NAME playing it, beside the bundled ones (repeatable)",
    )
    p.add_argument("--device", type=device_name, default="cpu",
                   help="where the models run: cpu, cuda or auto (default: cpu)")
    p.add_argument(
        "--dataset", action="append", default=[], metavar="FOLDER",
        help="a dataset the solvers learned from (its folder or manifest.json); the "
        "evaluation refuses to play any of its game seeds (repeatable; models' own "
        "training seeds are always checked)",
    )
    p.add_argument(
        "--replace-changed", action="store_true",
        help="OUT.games keeps every finished game with the experiment that played it (solver and "
        "options, a digest of the code that plays, the bytes of every checkpoint); a rerun whose "
        "experiment differs for a solver is refused, naming the difference. With this option that "
        "solver's recorded games are removed and played anew (the other solvers' are kept)",
    )
    p.add_argument("--table", action="store_true",
                   help="print the whole table (every solver and configuration) after the summary")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _int_list(text: str) -> list[int]:
    """The argparse type of ``--mines``: comma-separated integers and ranges A-B."""
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


def _note_continued(store, solvers, played: dict) -> None:
    """Say that a run continues from games its store holds of these solvers and boards, if any."""
    from nnsweeper.evaluation.store import recorded_games
    from nnsweeper.game import Rules

    if "boards" in played:
        rules = [Rules.preset(b) if isinstance(b, str) else Rules(*b, "none") for b in played["boards"]]
    else:
        rules = [Rules(played["rows"], played["cols"], m, "none") for m in played["mines_list"]]
    held = recorded_games(store, list(solvers), rules)
    if held:
        note(f"continuing from the {held:,} games of these solvers and boards recorded in {store}")


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

        played = [b for spec in args.board or [boards(args.preset)] for b in spec]  # --preset: one spec
        check_boards(played, first_click_rule(args))  # --board was read before the rule was known
        sizes = {(r, c) for name, r, c, _ in played if name not in PRESETS}
        x = "mines" if len(sizes) == 1 and all(name not in PRESETS for name, *_ in played) else "board"
        return {"boards": [name if name in PRESETS else (r, c, m) for name, r, c, m in played]}, x
    return {"mines_list": args.mines or args.default_mines, "rows": args.rows or _DEFAULT_SIZE,
            "cols": args.cols or _DEFAULT_SIZE}, "mines"


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


# ------------------------------------------------------------------------ plot
def add_plot(sub):
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
    return pl


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
