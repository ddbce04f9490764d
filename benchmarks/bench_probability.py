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

When the ms_toollib package (a Rust engine; not a dependency of nnsweeper) is
installed, its ``cal_probability_onboard`` is timed on the same positions in the same
run, interleaved with nnsweeper's, and the ratio of the medians printed; its answers
are checked against nnsweeper's exact ones (largest difference printed).
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


def time_position(grid: np.ndarray, repeats: int) -> tuple[float, np.ndarray]:
    """Median wall time of one ``mine_probabilities`` call, in milliseconds, and its answer."""
    return _median_ms(lambda: ns.mine_probabilities(grid, MINES), repeats)


def _median_ms(call, repeats: int):
    """(median wall time of ``call()`` over ``repeats`` calls in milliseconds, its last answer)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        answer = call()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times)), answer


def _summary(ms: np.ndarray) -> str:
    return (f"  count {ms.size}  median {np.median(ms):.2f}  mean {ms.mean():.2f}  "
            f"p90 {np.percentile(ms, 90):.2f}  p99 {np.percentile(ms, 99):.2f}  max {ms.max():.2f}")


def reference_engine():
    """ms_toollib's probability call on a grid (-1 covered), or None when it is not installed."""
    try:
        import ms_toollib
    except ImportError:
        return None

    def probabilities(grid: np.ndarray) -> np.ndarray:
        board = np.where(grid < 0, 10, grid).tolist()  # its code for a covered cell is 10
        return np.asarray(ms_toollib.cal_probability_onboard(board, MINES)[0], dtype=float)

    return probabilities


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
    reference = reference_engine()
    ms, ref_ms, worst = [], [], 0.0
    for pos in positions:  # interleaved, so that both engines see the same machine state
        took, exact = time_position(pos.grid, args.repeats)
        ms.append(took)
        if reference is not None:
            took, theirs = _median_ms(lambda g=pos.grid: reference(g), args.repeats)
            ref_ms.append(took)
            worst = max(worst, float(np.abs(theirs - exact)[pos.grid < 0].max()))
    ms, ref_ms = np.array(ms), np.array(ref_ms)

    print(
        f"expert {ROWS}x{COLS}, {MINES} mines: {len(positions)} positions from {source}, "
        f"built in {build_s:.1f} s"
    )
    print(f"mine_probabilities, median of {args.repeats} calls per position (ms):")
    print(_summary(ms))
    if reference is not None:
        print("ms_toollib cal_probability_onboard on the same positions (ms):")
        print(_summary(ref_ms))
        print(f"  nnsweeper / ms_toollib: median {np.median(ms) / np.median(ref_ms):.2f}x, "
              f"per-position median ratio {np.median(ms / ref_ms):.2f}x; "
              f"largest difference in P(mine) {worst:.2g}")
    else:
        print("(ms_toollib is not installed: nnsweeper alone)")
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
