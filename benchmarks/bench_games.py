"""Time per game of one solver on fixed seeds, with a digest of every move played.

Plays ``--games`` games (safe first click, ``--start`` corner by default) one after
the other in one process and prints the mean and median time per game, the wins, and
a SHA-256 digest of every game's result and moves. Two versions of nnsweeper that
play the same games print the same digest, so the command times a change and checks
that it changed no game::

    python benchmarks/bench_games.py --solver csp --board expert --games 300 --seed 50000
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_games.py --solver csp ...

``--against PATH`` times another checkout (its folder, put first on ``PYTHONPATH``)
and this one in alternating subprocesses, ``--rounds`` times each, on the same games,
and prints both, the ratio of their mean and median times per game, and whether
their digests agree::

    python benchmarks/bench_games.py --solver search --games 300 --against /path/to/before --rounds 3

``--option KEY=VALUE`` passes an option to the solver (its value read as JSON), for
instance the guessing options of ``search``::

    python benchmarks/bench_games.py --solver search --option next_value=blend --option influence=true

``--no-cache`` turns the engine's component cache off (``set_cache_size(0)``), to
measure what it saves.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import nnsweeper
from nnsweeper.cli import one_board
from nnsweeper.game import Game, Rules
from nnsweeper.solvers import get_solver


def _option(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` as (key, value): the value read as JSON, else kept as a string."""
    key, sep, value = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE with KEY a solver option's name")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solver", default="csp", help="a registry name (default: csp)")
    parser.add_argument("--board", type=one_board, default=one_board("expert"), metavar="BOARD",
                        help="ROWSxCOLS:MINES or a preset name (default: expert)")
    parser.add_argument("--games", type=int, default=300, help="games (default: 300)")
    parser.add_argument("--seed", type=int, default=50000, help="seed of the first game (default: 50000)")
    parser.add_argument("--start", default="corner", help="first click: corner, center (default: corner)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", type=_option,
                        help="a solver option, its value as JSON (a bare word is a string); repeatable, "
                             "e.g. --option next_value=blend --option influence=true")
    parser.add_argument("--no-cache", action="store_true", help="turn the component cache off")
    parser.add_argument("--against", default=None, metavar="PATH",
                        help="another checkout to time in alternation with this one")
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --against (default: 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON line (used by --against)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    if args.against is not None:
        return _interleave(args, argv if argv is not None else sys.argv[1:])
    if args.no_cache:
        from nnsweeper import probability

        probability.set_cache_size(0)
    rows, cols, mines = args.board
    rules = Rules(rows, cols, mines, "safe")
    solver = get_solver(args.solver, start=args.start, **dict(args.option))
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
    if args.json:
        print(json.dumps({"ms": ms.tolist(), "wins": wins, "digest": digest.hexdigest()[:16],
                          "version": nnsweeper.__version__}))
        return 0
    shown = "".join(f" {k}={v!r}" for k, v in args.option)
    print(f"{args.solver}{shown} on {rows}x{cols}:{mines}, {args.games} games from seed {args.seed}, "
          f"start {args.start}{', cache off' if args.no_cache else ''} (nnsweeper {nnsweeper.__version__})")
    print(f"  mean {ms.mean():.2f} ms  median {np.median(ms):.2f} ms per game, {wins} won; "
          f"moves digest {digest.hexdigest()[:16]}")
    return 0


def _interleave(args, argv: list[str]) -> int:
    """Time ``--against``'s checkout and this one in alternating subprocesses on the same games."""
    here = str(Path(__file__).resolve().parents[1])
    against = str(Path(args.against).resolve())
    rest, skip = [], False
    for a in argv:  # the same arguments, less --against/--rounds
        if skip:
            skip = False
            continue
        if a in ("--against", "--rounds"):
            skip = True
            continue
        if not a.startswith(("--against=", "--rounds=")):
            rest.append(a)
    runs: dict[str, list] = {"before": [], "after": []}
    for r in range(args.rounds):
        for label, path in (("before", against), ("after", here)):
            paths = (path, os.environ.get("PYTHONPATH"))
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
            out = subprocess.run([sys.executable, __file__, *rest, "--json"], env=env, check=True,
                                 capture_output=True, text=True).stdout.splitlines()[-1]
            res = json.loads(out)
            runs[label].append(res)
            ms = np.array(res["ms"])
            print(f"round {r + 1} {label:6s}: mean {ms.mean():.2f} ms, median {np.median(ms):.2f} ms, "
                  f"{res['wins']} won, digest {res['digest']}", flush=True)
    pooled = {k: np.concatenate([np.array(x["ms"]) for x in v]) for k, v in runs.items()}
    digests = {x["digest"] for v in runs.values() for x in v}
    b, a = pooled["before"], pooled["after"]
    print(f"{args.solver}: before mean {b.mean():.2f} / median {np.median(b):.2f} ms, after mean "
          f"{a.mean():.2f} / median {np.median(a):.2f} ms per game ({args.rounds} rounds of {args.games} "
          f"games): {b.mean() / a.mean():.2f}x mean, {np.median(b) / np.median(a):.2f}x median; "
          f"moves {'identical' if len(digests) == 1 else 'DIFFER'} ({', '.join(sorted(digests))})")
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
