"""No-guess boards per second, and the densest expert board each mode makes within a time budget.

Boards per second: :func:`nnsweeper.no_guess_board` on the classic boards, both modes, seeds 0..N-1
(the first click in the corner, an opening), one process: the median time per board and its
inverse, with the mean and the slowest (rejection's time has a long tail). Densest: for each mode,
expert with ``--step`` more mines at a time from 99, a board per seed for ``--seeds`` seeds, each
with ``time_limit=--budget`` seconds; the count reported is the last at which every seed found a
board::

    python benchmarks/bench_noguess.py                  # both parts
    python benchmarks/bench_noguess.py --boards 200 --no-densest
    python benchmarks/bench_noguess.py --densest-only --budget 10 --seeds 5
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from nnsweeper import PRESETS, NoGuessBudgetError, no_guess_board  # noqa: E402
from nnsweeper.noguess import MODES  # noqa: E402


def per_second(boards: int) -> None:
    print(f"boards per second, median over {boards} seeded boards (first click in the corner), one process")
    print(f"{'board':<14}{'mode':<9}{'median ms':>10}{'boards/s':>10}{'mean ms':>10}{'slowest ms':>11}")
    for name in ("beginner", "intermediate", "expert"):
        rows, cols, mines = PRESETS[name]
        for mode in MODES:
            no_guess_board(rows, cols, mines, (0, 0), 10**6, mode=mode)  # warm: imports and compiled code
            times = []
            for seed in range(boards):
                t = time.perf_counter()
                no_guess_board(rows, cols, mines, (0, 0), seed, mode=mode)
                times.append(time.perf_counter() - t)
            med = float(np.median(times))
            print(f"{name:<14}{mode:<9}{1000 * med:>10.1f}{1 / med:>10.1f}{1000 * np.mean(times):>10.1f}"
                  f"{1000 * max(times):>11.1f}", flush=True)


def densest(budget: float, seeds: int, step: int, first: int = 99, modes=MODES) -> None:
    rows, cols, _ = PRESETS["expert"]
    print(f"\ndensest expert board within {budget:g} s a board, every one of {seeds} seeds (steps of {step})")
    top = rows * cols - 10  # the most mines an opening in the corner leaves room for
    for mode in modes:
        reached, mines = None, first
        while mines <= top:
            try:
                worst = 0.0
                for seed in range(seeds):
                    t = time.perf_counter()
                    no_guess_board(rows, cols, mines, (0, 0), seed, mode=mode, max_tries=10**9,
                                   time_limit=budget)
                    worst = max(worst, time.perf_counter() - t)
            except NoGuessBudgetError:
                print(f"  {mode}: {mines} mines: a seed found no board within {budget:g} s", flush=True)
                break
            print(f"  {mode}: {mines} mines: every seed within {worst:.2f} s", flush=True)
            reached = mines
            mines = mines + step if mines + step <= top or mines == top else top
        print(f"{mode}: densest {reached} mines ({reached / (rows * cols):.1%} of the cells)" if reached
              else f"{mode}: not even {first} mines", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=200, help="boards per board and mode (default: 200)")
    parser.add_argument("--budget", type=float, default=10.0, help="seconds a board (default: 10)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per mine count (default: 5)")
    parser.add_argument("--step", type=int, default=10, help="mines added per step (default: 10)")
    parser.add_argument("--first", type=int, default=99,
                        help="the densest search's first count (default: 99)")
    parser.add_argument("--mode", choices=MODES, action="append", default=None,
                        help="the densest search's modes (repeatable; default: both)")
    parser.add_argument("--no-densest", action="store_true", help="only the boards per second")
    parser.add_argument("--densest-only", action="store_true", help="only the densest board")
    args = parser.parse_args(argv)
    if not args.densest_only:
        per_second(args.boards)
    if not args.no_densest:
        densest(args.budget, args.seeds, args.step, args.first, args.mode or MODES)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
