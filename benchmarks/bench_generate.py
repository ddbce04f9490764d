"""Labelled states per second of ``nnsweeper generate``, and its peak memory.

Generates the same dataset ``--repeats`` times into fresh temporary folders (every
state labelled with the truth and exact probabilities, written to compressed
shards) and prints states per second for each run and their median. The memory
figure is the peak resident set size of the whole process tree (this process and
its joblib workers, summed), sampled from /proc every 50 ms::

    python benchmarks/bench_generate.py                          # expert, 2 jobs
    python benchmarks/bench_generate.py --parts expert:400 --jobs 2 --repeats 3
    python benchmarks/bench_generate.py --parts mixed --games 1500 --repeats 1 --keep data/big
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from process_tree import PeakRSS

from nnsweeper.datasets import generate


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="expert:200",
                        help="comma-separated parts or mixture names (default: expert:200)")
    parser.add_argument("--games", type=int, default=100, help="games where a part does not say")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default: 2)")
    parser.add_argument("--record", default="all", help="all or guess (default: all)")
    parser.add_argument("--policy", default="csp", help="behaviour policy (default: csp)")
    parser.add_argument("--shard-games", type=int, default=10, help="games per shard (default: 10)")
    parser.add_argument("--repeats", type=int, default=3, help="runs (default: 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the game streams (default: 0)")
    parser.add_argument("--keep", default=None, help="write the (last) dataset here instead of a temp folder")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]

    rates, peaks = [], []
    for r in range(args.repeats):
        tmp = Path(tempfile.mkdtemp(prefix="bench-generate-"))
        out = Path(args.keep) if args.keep and r == args.repeats - 1 else tmp / "data"
        with PeakRSS() as rss:
            t0 = time.perf_counter()
            m = generate(out, parts, games=args.games, record=args.record, policy=args.policy,
                         shard_games=args.shard_games, seed=args.seed, n_jobs=args.jobs,
                         progress=args.repeats == 1)
            seconds = time.perf_counter() - t0
        states = sum(s["states"] for s in m["shards"])
        size = sum((out / s["file"]).stat().st_size for s in m["shards"])
        rates.append(states / seconds)
        peaks.append(rss.peak)
        print(f"run {r + 1}: {states} states in {seconds:.1f} s = {states / seconds:.0f} states/s; "
              f"peak RSS (process tree) {rss.peak / 2**20:.0f} MiB; shards {size / 2**20:.1f} MiB")
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"parts {', '.join(parts)}, record {args.record}, policy {args.policy}, {args.jobs} jobs: "
          f"median {statistics.median(rates):.0f} states/s over {len(rates)} runs; "
          f"max peak RSS {max(peaks) / 2**20:.0f} MiB")
    print(m["card_text"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
