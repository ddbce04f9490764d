"""A random search for the engine's slowest positions: dense boards, long frontiers.

Draws positions no game reaches — boards of up to ``--max-side`` cells a side, mine
densities from 15 to 35%, safe cells revealed either at random all over the board
(frontiers that are one web of hundreds of cells) or in random blobs (long frontier
lines) — and times ``analyze`` on each with the default bound, the component cache
off. A position is either answered or refused with
:class:`~nnsweeper.EngineLimitError`; the search prints how many of each, the slowest
of each kind, and what the slowest looked like::

    python benchmarks/bench_dense.py                        # 60 s, boards up to 120 a side
    python benchmarks/bench_dense.py --seconds 300 --max-side 400 --seed 7
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import nnsweeper as ns
from nnsweeper import probability
from nnsweeper.grid import dilate, neighbour_sum


def _position(rng: np.random.Generator, max_side: int):
    rows, cols = (int(rng.integers(8, max_side + 1)) for _ in range(2))
    density = rng.uniform(0.15, 0.35)
    mines = max(1, int(density * rows * cols))
    layout = np.zeros(rows * cols, dtype=bool)
    layout[rng.choice(rows * cols, mines, replace=False)] = True
    layout = layout.reshape(rows, cols)
    kind = "scattered" if rng.random() < 0.5 else "blobs"
    if kind == "scattered":
        revealed = ~layout & (rng.random((rows, cols)) < rng.uniform(0.1, 0.8))
    else:
        revealed = np.zeros((rows, cols), dtype=bool)
        for _ in range(int(rng.integers(1, 12))):
            seed = np.zeros((rows, cols), dtype=bool)
            seed[rng.integers(rows), rng.integers(cols)] = True
            for _ in range(int(rng.integers(1, max(rows, cols)))):
                seed = dilate(seed) & (rng.random((rows, cols)) < 0.8)
                if not seed.any():
                    break
            revealed |= seed
        revealed &= ~layout
    grid = np.where(revealed, neighbour_sum(layout), -1).astype(np.int8)
    return grid, mines, kind


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="search time (default: 60)")
    parser.add_argument("--max-side", type=int, default=120, help="largest board side (default: 120)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the search (default: 0)")
    args = parser.parse_args(argv)
    if args.max_side < 8 or args.seconds <= 0:
        parser.error("--max-side must be at least 8 and --seconds positive")
    ns.analyze(np.array([[1, -1], [-1, -1]]), 1)  # compile the kernels outside the timings
    probability.set_cache_size(0)
    rng = np.random.default_rng(args.seed)
    slowest = {"answered": (0.0, None), "refused": (0.0, None)}
    counts = {"answered": 0, "refused": 0}
    end = time.perf_counter() + args.seconds
    while time.perf_counter() < end:
        grid, mines, kind = _position(rng, args.max_side)
        t0 = time.perf_counter()
        try:
            ns.analyze(grid, mines)
            outcome = "answered"
        except ns.EngineLimitError:
            outcome = "refused"
        dt = time.perf_counter() - t0
        counts[outcome] += 1
        if dt > slowest[outcome][0]:
            covered = grid < 0
            front = int((covered & dilate(~covered)).sum())
            slowest[outcome] = (dt, f"{grid.shape[0]}x{grid.shape[1]}:{mines} {kind}, {front} frontier cells")
    print(f"dense search: seed {args.seed}, boards up to {args.max_side} a side, {args.seconds:g} s")
    for outcome in ("answered", "refused"):
        dt, what = slowest[outcome]
        print(f"  {outcome:8s} {counts[outcome]:6d} positions, slowest {dt * 1000:8.1f} ms"
              + (f"  ({what})" if what else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
