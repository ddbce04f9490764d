"""Time the exact mine-probability engine on expert mid-game positions.

Builds a fixed set of positions (16 rows x 30 cols, 99 mines) by playing seeded games
with a safe first click in the corner: each turn reveals every cell the engine proves
safe, or else the covered cell with the lowest mine probability. Every few turns, once
at least 10% and before 90% of the safe cells are revealed, the visible board is kept.
Then ``mine_probabilities`` is timed on each kept position (the median of several
repeats) and the distribution is printed.

To time two versions of the engine on the very same positions, write them once and
read them back (the positions depend on the engine's choices while they are built):

    python benchmarks/bench_probability.py [--games 100] [--seed-base 0] [--save POS.npz]
    python benchmarks/bench_probability.py --load POS.npz
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

import nnsweeper as ns

ROWS, COLS, MINES = ns.PRESETS["expert"]


@dataclass
class Position:
    seed: int
    turn: int
    grid: np.ndarray  # int8 (rows, cols): -1 covered, 0..8 revealed
    revealed_share: float  # share of the safe cells revealed


def play(seed: int, every: int) -> list[Position]:
    """Play one game and keep its mid-game positions (none once the game is over)."""
    game = ns.Game(ns.Rules(ROWS, COLS, MINES, "safe"), seed)
    game.reveal(0, 0)
    kept = []
    turn = 0
    while not game.done:
        turn += 1
        grid = game.observe()
        share = game.revealed_safe / game.safe_cells
        if turn % every == 0 and 0.1 <= share < 0.9:
            kept.append(Position(seed, turn, grid, share))
        analysis = ns.analyze(grid, MINES)
        safe = np.argwhere(analysis.safe)
        if len(safe):
            for i, j in safe:
                if game.mask[i, j]:
                    game.reveal(int(i), int(j))
        else:
            p = np.where(analysis.unknown, analysis.probabilities, np.inf)
            i, j = np.unravel_index(int(np.argmin(p)), p.shape)
            game.reveal(int(i), int(j))
    return kept


def time_position(grid: np.ndarray, repeats: int) -> float:
    """Median wall time of one ``mine_probabilities`` call, in milliseconds."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        ns.mine_probabilities(grid, MINES)
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=100, help="games to play")
    parser.add_argument("--seed-base", type=int, default=0, help="seed of the first game")
    parser.add_argument("--every", type=int, default=2, help="keep a position every N turns")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per position")
    parser.add_argument("--slowest", type=int, default=5, help="slowest positions to list")
    parser.add_argument("--save", metavar="NPZ", help="write the positions to this file")
    parser.add_argument("--load", metavar="NPZ", help="time the positions of this file instead")
    args = parser.parse_args(argv)
    if args.games < 1 or args.every < 1 or args.repeats < 1:
        parser.error("--games, --every and --repeats must be at least 1")

    t0 = time.perf_counter()
    if args.load:
        with np.load(args.load) as f:
            positions = [Position(int(s), int(t), g, float(r))
                         for s, t, g, r in zip(f["seed"], f["turn"], f["grid"], f["share"], strict=True)]
        source = args.load
    else:
        positions = [
            pos for seed in range(args.seed_base, args.seed_base + args.games)
            for pos in play(seed, args.every)
        ]
        source = f"{args.games} games (seeds {args.seed_base}..{args.seed_base + args.games - 1})"
    build_s = time.perf_counter() - t0
    if not positions:
        parser.error("no mid-game positions; play more games")
    if args.save:
        np.savez_compressed(
            args.save, seed=[p.seed for p in positions], turn=[p.turn for p in positions],
            grid=np.stack([p.grid for p in positions]), share=[p.revealed_share for p in positions],
        )
    ms = np.array([time_position(pos.grid, args.repeats) for pos in positions])

    print(
        f"expert {ROWS}x{COLS}, {MINES} mines: {len(positions)} positions from {source}, "
        f"built in {build_s:.1f} s"
    )
    print(f"mine_probabilities, median of {args.repeats} calls per position (ms):")
    print(
        f"  count {ms.size}  median {np.median(ms):.2f}  mean {ms.mean():.2f}  "
        f"p90 {np.percentile(ms, 90):.2f}  p99 {np.percentile(ms, 99):.2f}  max {ms.max():.2f}"
    )
    print("slowest positions:")
    for k in np.argsort(ms)[::-1][: args.slowest]:
        pos = positions[k]
        a = ns.analyze(pos.grid, MINES)
        print(
            f"  {ms[k]:8.2f} ms  seed {pos.seed:4d} turn {pos.turn:3d}  "
            f"frontier {int(a.frontier.sum()):3d} cells in {a.n_components:2d} components, "
            f"{int(a.unknown.sum()):3d} covered, {pos.revealed_share:.0%} of safe cells revealed"
        )


if __name__ == "__main__":
    main()
