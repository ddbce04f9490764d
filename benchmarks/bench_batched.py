"""Games per second of a neural solver: lockstep batches against one game at a time.

Plays the same games twice with the same solver, once with ``play_many`` (every
board waiting on the model goes to it in one batch) and once game by game with
``play`` (one board per model call), checks that the records agree, and prints the
games per second of each and their ratio. One process, torch on one thread unless
``--threads`` says otherwise, the median of ``--repeats`` runs::

    python benchmarks/bench_batched.py                       # gnn, 10x10 with 20 mines
    python benchmarks/bench_batched.py --solver cnn --board expert --games 200
    python benchmarks/bench_batched.py --device cuda --board expert --games 4096

``--engine torch`` times the pure policy on the torch engine instead
(:func:`nnsweeper.batched.play_batched`: the games as tensors, no Python step per
game) against ``play_many`` on the same seeds, and compares their win rates (the
two break exact ties differently, so single games may differ; the rates should
agree within their intervals)::

    python benchmarks/bench_batched.py --engine torch --board expert --games 1000 --threads 2
    python benchmarks/bench_batched.py --engine torch --games 1000 --repeats 1   # 10x10:20 win rates
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import torch

from nnsweeper.batched import play_batched
from nnsweeper.cli import one_board
from nnsweeper.evaluation import game_seeds, newcombe_paired_interval, wilson_interval
from nnsweeper.game import MinesweeperEnv, Rules
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
    parser.add_argument("--in-play", type=int, default=None,
                        help="--engine torch: games in lockstep (default: max(batch size, 1024))")
    parser.add_argument("--engine", choices=("lockstep", "torch"), default="lockstep",
                        help="lockstep: play_many against one by one (the default); torch: play_batched "
                             "on the torch engine against play_many")
    args = parser.parse_args(argv)
    if min(args.games, args.repeats) < 1:
        parser.error("--games and --repeats must be at least 1")
    torch.set_num_threads(args.threads)

    options = {"device": args.device, "batch_size": args.batch_size}
    if args.model:
        options["model"] = args.model
    solver = get_solver(args.solver, **options)
    if args.engine == "torch" and solver.hybrid:
        parser.error("--engine torch plays the pure policy: choose cnn or gnn")
    seeds = game_seeds(args.seed, args.games)
    if args.engine == "torch":
        return _torch_engine(args, solver, seeds)
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


def _rate(wins: int, games: int) -> str:
    lo, hi = wilson_interval(wins, games)
    return f"{wins / games:.3f} ({lo:.3f} to {hi:.3f})"


def _torch_engine(args, solver, seeds) -> int:
    """play_batched against play_many on the same seeds: games per second and win rates."""
    rows, cols, mines = args.board
    rules = Rules(rows, cols, mines)  # MinesweeperEnv's rules: a safe first click
    solver.play_many(*_games(args.board, seeds[:2]))  # load the model, warm the caches
    play_batched(solver, rules, seeds[:2])
    in_play = args.in_play if args.in_play else max(args.batch_size, 1024)

    torch_rates, many_rates = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        results = play_batched(solver, rules, seeds, in_play=in_play)
        torch_rates.append(len(seeds) / (time.perf_counter() - t0))

        envs, rngs = _games(args.board, seeds)
        t0 = time.perf_counter()
        records = solver.play_many(envs, rngs)
        many_rates.append(len(seeds) / (time.perf_counter() - t0))

    won_torch = results.won
    won_many = np.array([r.won for r in records])
    n = len(seeds)
    b, m = statistics.median(torch_rates), statistics.median(many_rates)
    print(f"{args.solver} on {rows}x{cols}/{mines}, device {solver.model.device}, "
          f"torch threads {args.threads}, {n} games a run, {args.batch_size} boards per forward pass, "
          f"{in_play} games in lockstep on the torch engine")
    runs = {name: ", ".join(f"{x:.1f}" for x in rates) for name, rates in (("torch", torch_rates),
                                                                           ("many", many_rates))}
    print(f"play_batched (torch engine): {b:9.1f} games/s  (runs: {runs['torch']})")
    print(f"play_many (lockstep):        {m:9.1f} games/s  (runs: {runs['many']})")
    print(f"speed-up:                    {b / m:9.2f}x")
    print(f"win rate, 95% Wilson interval: torch engine {_rate(int(won_torch.sum()), n)}, "
          f"play_many {_rate(int(won_many.sum()), n)}")
    both = int((won_torch & won_many).sum())
    first = int((won_torch & ~won_many).sum())
    second = int((~won_torch & won_many).sum())
    lo, hi = newcombe_paired_interval(both, first, second, n - both - first - second)
    same = float(np.mean((won_torch == won_many) & (results.moves == [len(r.moves) for r in records])))
    diff = won_torch.mean() - won_many.mean()
    print(f"difference (paired 95% interval): {diff:+.3f} ({lo:+.3f} to {hi:+.3f}); "
          f"games with the same result and move count: {same:.1%}")
    print(f"mean per game, torch engine / play_many: moves {results.moves.mean():.1f} / "
          f"{np.mean([len(r.moves) for r in records]):.1f}, guesses {results.guesses.mean():.2f} / "
          f"{np.mean([r.guesses for r in records]):.2f}, model calls {results.model_calls.mean():.1f} / "
          f"{np.mean([r.model_calls for r in records]):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
