"""Time of ``import nnsweeper`` in fresh Python processes.

Starts ``--runs`` new interpreters one after another; each times its own ``import
nnsweeper`` (interpreter start-up excluded) and reports which heavy packages the
import loaded. Prints every time and their median::

    python benchmarks/bench_import.py
    python benchmarks/bench_import.py --runs 11 --module nnsweeper.evaluation
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

#: Packages whose presence after the import is reported (each costs a lot to load).
HEAVY = ("torch", "torch_geometric", "scipy", "sklearn", "matplotlib", "joblib", "pandas", "numba")

_CHILD = """
import json, sys, time
t0 = time.perf_counter()
import {module}
seconds = time.perf_counter() - t0
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"seconds": seconds, "heavy": heavy}}))
"""


def _one(module: str) -> dict:
    code = _CHILD.format(module=module, heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes (default: 5)")
    parser.add_argument("--module", default="nnsweeper", help="module to import (default: nnsweeper)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1; got {args.runs}")

    times = []
    for r in range(args.runs):
        result = _one(args.module)
        times.append(result["seconds"])
        loaded = ", ".join(result["heavy"]) or "none"
        print(f"run {r + 1}: {result['seconds']:.3f} s (heavy packages loaded: {loaded})")
    print(f"import {args.module}: median {statistics.median(times):.3f} s over {len(times)} fresh processes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
