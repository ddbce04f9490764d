"""Time per game of one solver on fixed seeds, with a digest of every move played.

Plays ``--games`` games (safe first click, ``--start`` corner by default) one after
the other in one process and prints the mean and median time per game, the wins, and
a SHA-256 digest of every game's result and moves. Two versions of nnsweeper that
play the same games print the same digest, so the command times a change and checks
that it changed no game::

    python benchmarks/bench_games.py --solver csp --board expert --games 300 --seed 50000
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_games.py --solver csp ...

``--no-cache`` turns the engine's component cache off (``set_cache_size(0)``), to
measure what it saves.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

import numpy as np

import nnsweeper
from nnsweeper.cli import one_board
from nnsweeper.game import Game, Rules
from nnsweeper.solvers import get_solver


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solver", default="csp", help="a registry name (default: csp)")
    parser.add_argument("--board", type=one_board, default=one_board("expert"), metavar="BOARD",
                        help="ROWSxCOLS:MINES or a preset name (default: expert)")
    parser.add_argument("--games", type=int, default=300, help="games (default: 300)")
    parser.add_argument("--seed", type=int, default=50000, help="seed of the first game (default: 50000)")
    parser.add_argument("--start", default="corner", help="first click: corner, center (default: corner)")
    parser.add_argument("--no-cache", action="store_true", help="turn the component cache off")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    if args.no_cache:
        from nnsweeper import probability

        probability.set_cache_size(0)
    rows, cols, mines = args.board
    rules = Rules(rows, cols, mines, "safe")
    solver = get_solver(args.solver, start=args.start)
    warm = args.seed - 1  # a game outside the timed ones: imports and compiled kernels load there
    solver.play(Game(rules, warm), np.random.default_rng(warm))
    digest, times, wins = hashlib.sha256(), [], 0
    for seed in range(args.seed, args.seed + args.games):
        game = Game(rules, seed)
        t0 = time.perf_counter()
        rec = solver.play(game, np.random.default_rng(seed))
        times.append(time.perf_counter() - t0)
        wins += bool(rec.won)
        moves = [[int(m.cell[0]), int(m.cell[1]), m.kind] for m in rec.moves]
        digest.update(json.dumps([seed, bool(rec.won), game.revealed_safe, moves]).encode())
    ms = 1e3 * np.array(times)
    print(f"{args.solver} on {rows}x{cols}:{mines}, {args.games} games from seed {args.seed}, "
          f"start {args.start}{', cache off' if args.no_cache else ''} (nnsweeper {nnsweeper.__version__})")
    print(f"  mean {ms.mean():.2f} ms  median {np.median(ms):.2f} ms per game, {wins} won; "
          f"moves digest {digest.hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
