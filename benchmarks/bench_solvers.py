"""Win rate and time per game of each solver on the classic boards.

Plays the same games (seeds from ``--seed``) for every solver, one process, safe
first click, first click in the corner, and prints the win rate with its 95%
interval, games per second, and the median, mean and longest time per game::

    python benchmarks/bench_solvers.py
    python benchmarks/bench_solvers.py --games 100 --solvers csp --presets expert
"""

from __future__ import annotations

import argparse
import sys
import time

from nnsweeper.evaluation import evaluate
from nnsweeper.game import PRESETS
from nnsweeper.solvers import SOLVERS, get_solver


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100,
                        help="games per solver and preset (default: 100)")
    parser.add_argument("--solvers", type=_names, default=["single_point", "csp", "search"],
                        help=f"comma-separated, from {', '.join(SOLVERS)} "
                        "(default: single_point,csp,search)")
    parser.add_argument("--presets", type=_names, default=list(PRESETS),
                        help=f"comma-separated, from {', '.join(PRESETS)} (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the games (default: 0)")
    parser.add_argument("--start", default="corner",
                        help="first click: corner or center (default: corner)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1; got {args.games}")

    solvers = {n: get_solver(n, start=args.start) for n in args.solvers}
    # One untimed game each first, so lazy imports and caches do not land in the figures.
    evaluate(solvers, boards=args.presets, trials=1, base_seed=args.seed + 1)
    t0 = time.perf_counter()
    table = evaluate(solvers, boards=args.presets, trials=args.games, base_seed=args.seed)
    wall = time.perf_counter() - t0

    header = ("solver", "preset", "games", "win rate", "95% interval", "games/s", "median ms", "mean ms",
              "max ms")
    body = [
        (r["solver"], f"{r['board']} {r['rows']}x{r['cols']}/{r['mines']}", str(r["games"]),
         f"{r['win_rate']:.3f}", f"{r['ci_low']:.3f}-{r['ci_high']:.3f}", f"{1 / r['mean_seconds']:.1f}",
         f"{1000 * r['median_seconds']:.2f}", f"{1000 * r['mean_seconds']:.2f}",
         f"{1000 * r['max_seconds']:.0f}")
        for r in table
    ]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]
    for row in (header, *body):
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    print(f"\nsafe first click, start={args.start}, one process; {wall:.1f} s in all "
          "(time per game: the solver's play call, mine placement at the first click included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
