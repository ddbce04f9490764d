"""Time per game of every solver of the main job, on its 10x10 sweep and on expert.

Plays the same games (seeds from ``--seed``) for every solver, one process, safe first
click: the 10x10 boards with 5 to 30 mines from the centre (as ``nnsweeper compare``
plays them) and expert from the corner (as the records do). Prints per solver and board
the games, the win rate with its 95% interval, the mean, median and longest time per
game in ms, and the model's load apart (not in the times per game); the mean of the
10x10 sweep is the figure ``compare`` prints as "ms per game"::

    python benchmarks/bench_solvers.py
    python benchmarks/bench_solvers.py --games 40 --solvers csp,search --boards expert
    python benchmarks/bench_solvers.py --boards 10x10:5-30,beginner,intermediate --start corner
    python benchmarks/bench_solvers.py --solvers cnn --boards 10x10:5-30 --option batch_size=128

``--option KEY=VALUE`` passes an option to every solver named (its value read as JSON), to
measure one setting at a time (the networks' ``batch_size``, say); ``--threads N`` sets the
torch threads of the process (default: torch's own, every core; ``compare``'s workers use one
each).

The networks play a board size's games in lockstep (batches of an eighth of them per
worker, as every evaluation does), so their time per game falls with the games played:
the default plays as many per worker as ``compare`` does. A change that slows a solver
shows here first: quote these figures as medians of a few runs on a quiet machine
(another process on the machine moves them by tens of percent).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from nnsweeper.cli.core import boards
from nnsweeper.evaluation import evaluate
from nnsweeper.game import PRESETS
from nnsweeper.solvers import SOLVERS, compare_solvers, get_solver


def _option(text: str):
    """``KEY=VALUE`` as (key, value), read as ``bench_games.py`` (beside this script) reads it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_games", Path(__file__).with_name("bench_games.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._option(text)


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _groups(text: str) -> list[tuple[str, list]]:
    """Comma-separated board specs, each a group of boards: ``(label, boards evaluate plays)``."""
    out = []
    for spec in _names(text):
        found = boards(spec)
        label = found[0][0] if len(found) == 1 and found[0][0] in PRESETS else spec
        out.append((label, [name if name in PRESETS else (r, c, m) for name, r, c, m in found]))
    return out


def _start(label: str, boards_: list, start: str) -> str:
    """The first click of a group: ``--start``, or with ``auto`` the centre for sizes given by
    rows and columns (as ``compare`` plays them) and the corner for the classic presets (as the
    records do)."""
    if start != "auto":
        return start
    return "corner" if all(isinstance(b, str) for b in boards_) else "center"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=None,
                        help="games per solver and board, each mine count of a sweep a board (default: "
                        "100 per count of a sweep, so that the networks play the 10x10 sweep's 2,600 "
                        "games in lockstep batches of 325 as compare's 5,200 on two workers; 40 on a "
                        "preset)")
    parser.add_argument("--solvers", type=_names, default=compare_solvers(),
                        help=f"comma-separated, from {', '.join(SOLVERS)} (default: compare's "
                        f"{','.join(compare_solvers())})")
    parser.add_argument("--boards", "--presets", type=_groups, default=_groups("10x10:5-30,expert"),
                        help="comma-separated boards in nnsweeper's syntax (default: 10x10:5-30,expert)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the games (default: 0)")
    parser.add_argument("--start", default="auto",
                        help="first click: corner, center, or auto (default: the centre on sizes "
                        "given as RxC, the corner on presets)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", type=_option,
                        help="an option of every solver named, its value as JSON (repeatable), e.g. "
                        "--option batch_size=128")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads of this process (default: torch's own; compare's workers use 1)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        if args.threads < 1:
            parser.error(f"--threads must be at least 1; got {args.threads}")
        import os

        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # torch reads it when first imported
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(args.threads)
    if args.games is not None and args.games < 1:
        parser.error(f"--games must be at least 1; got {args.games}")

    rows = []
    t_all = time.perf_counter()
    for label, played in args.boards:
        start = _start(label, played, args.start)
        solvers = {n: get_solver(n, start=start, **dict(args.option)) for n in args.solvers}
        games = args.games or (40 if all(isinstance(b, str) for b in played) else 100)
        # One untimed game each first, so that lazy imports and compilation stay out of the figures
        # (the models' load is reported apart either way).
        setup = evaluate(solvers, boards=played[:1], trials=1, base_seed=args.seed + 10**9).setup_by_solver()
        table = evaluate(solvers, boards=played, trials=games, base_seed=args.seed)
        for name in args.solvers:
            got = table.select(solver=name)
            n = sum(r["games"] for r in got)
            wins = sum(r["wins"] for r in got)
            total = sum(r["mean_seconds"] * r["games"] for r in got)
            medians = sorted(r["median_seconds"] for r in got)
            rows.append((name, f"{label} ({start})", str(n), f"{wins / n:.3f}", f"{1000 * total / n:.2f}",
                         f"{1000 * medians[len(medians) // 2]:.2f}",
                         f"{1000 * max(r['max_seconds'] for r in got):.0f}",
                         f"{setup[name]:.2f}" if name in setup else "-"))
    wall = time.perf_counter() - t_all

    header = ("solver", "boards", "games", "won", "mean ms", "median ms", "max ms", "load s")
    widths = [max(len(h), *(len(b[i]) for b in rows)) for i, h in enumerate(header)]
    for row in (header, *rows):
        cells = zip(row, widths, strict=True)
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(cells)))
    shown = "".join(f" {k}={v!r}" for k, v in args.option) + (f" {args.threads} torch thread(s)"
                                                                 if args.threads else "")
    print(f"\nsafe first click, one process{';' + shown if shown else ''}; {wall:.1f} s in all. mean ms: "
          "over every game (the 10x10 "
          "sweep's is compare's ms per game); median ms: the middle configuration's median; load s: "
          "the model's load in this process (a second solver of the same model finds it loaded)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
