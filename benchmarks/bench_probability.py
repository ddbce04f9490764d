"""Time the exact mine-probability engine on expert mid-game positions.

Builds a fixed set of positions (16 rows x 30 cols, 99 mines) by playing seeded games
with a safe first click in the corner. With ``--source engine`` (the default) each turn
reveals every cell the engine proves safe, or else the covered cell with the lowest
mine probability, and every few turns the visible board is kept; with ``--source csp``
or ``--source search`` the positions are those the registry's solver decided on in
its own games (every few decisions). Only positions with at least 10% and less than
90% of the safe cells revealed are kept. Then ``mine_probabilities`` is timed on each
kept position (the median of several repeats) and the distribution is printed.

The engine keeps the components it counted in a cache (consecutive positions of one
game share most of them, see :func:`nnsweeper.engine.set_cache_size`). The
timings are cold by default: the cache is off, every call counts every component.
``--cache`` times the calls in game order with the cache on instead, one call per
position, cleared at each game's first position: what a solver's games see.

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
from nnsweeper import probability

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


def solver_positions(name: str, seed: int, every: int) -> list[Position]:
    """The mid-game positions the registry solver ``name`` decided on in one game."""
    from nnsweeper.solvers import get_solver

    rules = ns.Rules(ROWS, COLS, MINES, "safe")
    safe_cells = rules.cells - MINES
    kept = []

    def keep(decision) -> None:
        share = float((decision.grid >= 0).sum()) / safe_cells
        if decision.step % every == 0 and 0.1 <= share < 0.9:
            kept.append(Position(seed, decision.step, decision.grid, share))

    get_solver(name, start="corner").play(ns.Game(rules, seed), np.random.default_rng(seed), on_decision=keep)
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
    parser.add_argument("--source", choices=("engine", "csp", "search"), default="engine",
                        help="the games the positions come from")
    parser.add_argument("--every", type=int, default=2, help="keep a position every N turns")
    parser.add_argument("--cache", action="store_true",
                        help="time in game order with the component cache on (one call per position)")
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
        def positions_of(seed):
            if args.source == "engine":
                return play(seed, args.every)
            return solver_positions(args.source, seed, args.every)

        positions = [pos for seed in range(args.seed_base, args.seed_base + args.games)
                     for pos in positions_of(seed)]
        source = (f"{args.games} {args.source} games "
                  f"(seeds {args.seed_base}..{args.seed_base + args.games - 1})")
    build_s = time.perf_counter() - t0
    if not positions:
        parser.error("no mid-game positions; play more games")
    if args.save:
        np.savez_compressed(
            args.save, seed=[p.seed for p in positions], turn=[p.turn for p in positions],
            grid=np.stack([p.grid for p in positions]), share=[p.revealed_share for p in positions],
        )
    reference = reference_engine()
    ns.mine_probabilities(positions[0].grid, MINES)  # the compiled kernels load outside the timings
    repeats = 1 if args.cache else args.repeats
    probability.clear_cache()
    old_size = probability.set_cache_size(probability.CACHE_SIZE if args.cache else 0)
    ms, ref_ms, worst = [], [], 0.0
    for k, pos in enumerate(positions):  # interleaved, so that both engines see the same machine state
        if args.cache and (k == 0 or positions[k - 1].seed != pos.seed):
            probability.clear_cache()
        took, exact = time_position(pos.grid, repeats)
        ms.append(took)
        if reference is not None:
            took, theirs = _median_ms(lambda g=pos.grid: reference(g), repeats)
            ref_ms.append(took)
            worst = max(worst, float(np.abs(theirs - exact)[pos.grid < 0].max()))
    ms, ref_ms = np.array(ms), np.array(ref_ms)
    probability.set_cache_size(old_size)

    print(
        f"expert {ROWS}x{COLS}, {MINES} mines: {len(positions)} positions from {source}, "
        f"built in {build_s:.1f} s"
    )
    if args.cache:
        print("mine_probabilities in game order, the component cache on, one call per position (ms):")
    else:
        print(f"mine_probabilities, cache off, median of {args.repeats} calls per position (ms):")
    print(_summary(ms))
    print(f"  max {ms.max():.2f} ms: {'within' if ms.max() <= 20 else 'OVER'} the 20 ms bound")
    if reference is not None:
        print("ms_toollib cal_probability_onboard on the same positions (ms):")
        print(_summary(ref_ms))
        print(f"  nnsweeper / ms_toollib: median {np.median(ms) / np.median(ref_ms):.2f}x, "
              f"per-position median ratio {np.median(ms / ref_ms):.2f}x; "
              f"largest difference in P(mine) {worst:.2g}")
    else:
        print("(ms_toollib is not installed: nnsweeper alone)")
    print("slowest positions:")
    probability.set_cache_size(0)
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
