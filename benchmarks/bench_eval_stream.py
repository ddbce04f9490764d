"""Streaming evaluation: peak memory against the number of games, and a run killed half-way then resumed.

``memory`` runs ``nnsweeper eval`` once per ``--trials`` value and stops it (SIGTERM)
after ``--seconds``, sampling the resident memory of its whole process tree (the
command and its workers) every 50 ms; the figure is the peak. A run keeps only
chunks in flight and a running tally, so the peak should not grow with ``--trials``::

    python benchmarks/bench_eval_stream.py memory --trials 10000,10000000 --seconds 60

``resume`` plays the same evaluation three times: uninterrupted; killed with SIGKILL
once half of its games are in its store; and run again on that store. It prints the
time of each, the games the rerun played, the worker processes still alive 10 s after
the kill, and whether the rerun's table equals the uninterrupted one game for game
(every figure but the times)::

    python benchmarks/bench_eval_stream.py resume --solvers csp,search --board expert --trials 4000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from process_tree import PeakRSS, tree_pids

TIMES = ("mean_seconds", "median_seconds", "max_seconds", "setup_seconds")


def _command(args, trials: int, out: Path) -> list[str]:
    return [sys.executable, "-m", "nnsweeper", "eval", "--solvers", args.solvers, "--board", args.board,
            "--start", args.start, "--trials", str(trials), "--jobs", str(args.jobs), "--quiet",
            "--out", str(out)]


def _stored(store: Path) -> int:
    games = 0
    for chunk in store.glob("*/*.npz"):
        a, b = chunk.stem.split("-")
        games += int(b) - int(a)
    return games


def memory(args) -> int:
    for trials in args.trials:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            proc = subprocess.Popen(_command(args, trials, Path(tmp) / "run"), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            with PeakRSS(proc.pid) as rss:
                try:
                    proc.wait(timeout=args.seconds)
                    ended = "finished"
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait()
                    ended = "stopped"
            played = _stored(Path(tmp) / "run.games")
        print(f"--trials {trials:>10}: {ended} after {time.perf_counter() - t0:.1f} s, {played} games "
              f"recorded, peak RSS of the process tree {rss.peak / 2**20:.0f} MiB", flush=True)
    return 0


def _rows(path: Path) -> list[dict]:
    return json.loads(path.read_text())["rows"]


def resume(args) -> int:
    total = args.trials * len(args.solvers.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        subprocess.run(_command(args, args.trials, tmp / "whole"), check=True, capture_output=True)
        whole = time.perf_counter() - t0
        t0 = time.perf_counter()
        proc = subprocess.Popen(_command(args, args.trials, tmp / "cut"), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        store = tmp / "cut.games"
        while proc.poll() is None and _stored(store) < total / 2:
            time.sleep(0.02)
        workers = [psutil.Process(p) for p in tree_pids(proc.pid)[1:]]
        proc.kill()
        proc.wait()
        killed_after, kept = time.perf_counter() - t0, _stored(store)
        time.sleep(10)
        alive = [w.pid for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
        t0 = time.perf_counter()
        subprocess.run(_command(args, args.trials, tmp / "cut"), check=True, capture_output=True)
        rerun = time.perf_counter() - t0
        a, b = _rows(tmp / "whole.json"), _rows(tmp / "cut.json")
        same = len(a) == len(b) and all(
            r[k] == s[k] or (isinstance(r[k], float) and math.isnan(r[k]) and math.isnan(s[k]))
            for r, s in zip(a, b, strict=True) for k in r if k not in TIMES)
    print(f"{args.solvers} on {args.board}, {args.trials} games each, --jobs {args.jobs}:")
    print(f"  uninterrupted run: {whole:.1f} s")
    print(f"  killed (SIGKILL) after {killed_after:.1f} s with {kept} of {total} games recorded; "
          f"{len(workers)} worker processes then, {len(alive)} alive 10 s later")
    print(f"  rerun: {rerun:.1f} s, playing the other {total - kept} games")
    print(f"  rerun's table {'equals' if same else 'DIFFERS from'} the uninterrupted one (every figure "
          f"but the times, outcomes of every game included)")
    return 0 if same and not alive else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("memory", "resume"))
    parser.add_argument("--solvers", default=None, help="default: single_point (memory), csp,search (resume)")
    parser.add_argument("--board", default=None, help="default: 10x10:10 (memory), expert (resume)")
    parser.add_argument("--start", default="corner", help="first click (default: corner)")
    parser.add_argument("--trials", default=None,
                        help="games per solver; for memory a comma list "
                        "(default: 10000,10000000; resume 4000)")
    parser.add_argument("--seconds", type=float, default=60,
                        help="memory: stop each run after this (default: 60)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default: 2)")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.what == "memory":
        args.solvers = args.solvers or "single_point"
        args.board = args.board or "10x10:10"
        args.trials = [int(t) for t in (args.trials or "10000,10000000").split(",")]
        return memory(args)
    args.solvers = args.solvers or "csp,search"
    args.board = args.board or "expert"
    args.trials = int(args.trials or 4000)
    return resume(args)


if __name__ == "__main__":
    raise SystemExit(main())
