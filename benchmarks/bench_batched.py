"""Games per second of a neural solver: lockstep batches against one game at a time.

Plays the same games twice with the same solver, once with ``play_many`` (every
board waiting on the model goes to it in one batch) and once game by game with
``play`` (one board per model call), checks that the records agree, and prints the
games per second of each and their ratio. One process, torch on one thread unless
``--threads`` says otherwise, the median of ``--repeats`` runs::

    python benchmarks/bench_batched.py                       # gnn, 10x10 with 20 mines
    python benchmarks/bench_batched.py --solver cnn --board expert --games 200
    python benchmarks/bench_batched.py --device cuda --board expert --games 4096
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import torch

from nnsweeper.cli import one_board
from nnsweeper.evaluation import game_seeds
from nnsweeper.game import MinesweeperEnv
from nnsweeper.solvers import SOLVERS, NeuralSolver, get_solver


def _games(board, seeds):
    rows, cols, mines = board
    envs = [MinesweeperEnv(rows, cols, mines, seed=int(s)) for s in seeds]
    return envs, [np.random.default_rng(int(s)) for s in seeds]


def _key(rec):
    return rec.won, [(m.cell, m.kind) for m in rec.moves]


def main(argv=None) -> int:
    neural = [n for n, cls in SOLVERS.items() if issubclass(cls, NeuralSolver)]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solver", choices=neural, default="gnn", help="default: gnn")
    parser.add_argument("--model", default=None, help="a checkpoint path (default: the bundled model)")
    parser.add_argument("--board", type=one_board, default=(10, 10, 20), metavar="BOARD",
                        help="ROWSxCOLS:MINES or a preset name (default: 10x10:20)")
    parser.add_argument("--games", type=int, default=200, help="games per run (default: 200)")
    parser.add_argument("--one-by-one", type=int, default=None,
                        help="games of the one-at-a-time runs (default: as --games)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each, median reported (default: 3)")
    parser.add_argument("--batch-size", type=int, default=1024,
                        help="boards per forward pass (default: 1024)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto (default: cpu)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the games (default: 0)")
    args = parser.parse_args(argv)
    if min(args.games, args.repeats) < 1:
        parser.error("--games and --repeats must be at least 1")
    torch.set_num_threads(args.threads)

    options = {"device": args.device, "batch_size": args.batch_size}
    if args.model:
        options["model"] = args.model
    solver = get_solver(args.solver, **options)
    seeds = game_seeds(args.seed, args.games)
    single_seeds = seeds[: args.one_by_one or args.games]
    solver.play_many(*_games(args.board, seeds[:2]))  # load the model, warm the caches

    batched, single, wins = [], [], 0
    for _ in range(args.repeats):
        envs, rngs = _games(args.board, seeds)
        t0 = time.perf_counter()
        records = solver.play_many(envs, rngs)
        batched.append(len(seeds) / (time.perf_counter() - t0))
        wins = sum(r.won for r in records)

        envs, rngs = _games(args.board, single_seeds)
        t0 = time.perf_counter()
        alone = [solver.play(env, rng) for env, rng in zip(envs, rngs, strict=True)]
        single.append(len(single_seeds) / (time.perf_counter() - t0))
    same = [_key(r) for r in records[: len(alone)]] == [_key(r) for r in alone]

    rows, cols, mines = args.board
    b, s = statistics.median(batched), statistics.median(single)
    print(f"{args.solver} on {rows}x{cols}/{mines}, device {solver.model.device}, "
          f"torch threads {args.threads}")
    print(f"batched:    {b:9.1f} games/s  ({len(seeds)} games a run, runs: "
          + ", ".join(f"{x:.1f}" for x in batched) + ")")
    print(f"one by one: {s:9.1f} games/s  ({len(single_seeds)} games a run, runs: "
          + ", ".join(f"{x:.1f}" for x in single) + ")")
    print(f"speed-up:   {b / s:9.1f}x   win rate {wins / len(seeds):.3f}; "
          f"same records both ways: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
