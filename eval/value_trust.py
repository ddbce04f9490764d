"""How far to trust the value network: the value-gnn solver at several ``trust`` margins
against search, paired on the same games.

``trust=none`` plays the candidate of highest Q (the network decides every look-ahead
guess); a number keeps the search solver's own look-ahead guess unless another
candidate's Q beats it by more than that. Writes an evaluation table (rows
``value-gnn/trust=T``, and ``search``) and prints each row's paired gap to search::

    python eval/value_trust.py --board expert --trials 4000 --base-seed 11 --trust none,0.005,0.01,0.02 \\
        --out eval/results/value_trust_expert
"""

from __future__ import annotations

import argparse
import shlex
import sys

from nnsweeper.evaluation import evaluate
from nnsweeper.solvers import SearchSolver, ValueSolver


def trust_values(text: str) -> list[float | None]:
    """``"none,0.01"`` -> [None, 0.01]."""
    out = []
    for part in text.split(","):
        part = part.strip().lower()
        try:
            out.append(None if part == "none" else float(part))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"trust values are 'none' or numbers in [0, 1]; got {part!r}") from None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="expert", help="board text, e.g. expert or 10x10:20 (default: expert)")
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--base-seed", type=int, default=11,
                    help="seed of the games (default 11: outside the committed evaluations' base seed 0)")
    ap.add_argument("--trust", type=trust_values, default=[None, 0.01, 0.02])
    ap.add_argument("--model", default="value-gnn", help="value model name or .pt path")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", help="output prefix: writes PREFIX.json and PREFIX.csv")
    args = ap.parse_args(argv)

    solvers = {"search": SearchSolver(start="corner")}
    for t in args.trust:
        solvers[f"value-gnn/trust={'none' if t is None else t}"] = ValueSolver(
            model=args.model, start="corner", trust=t)
    table = evaluate(solvers, boards=[args.board], trials=args.trials, base_seed=args.base_seed,
                     n_jobs=args.jobs, progress=False)
    print(f"{args.board}, {args.trials} games from base seed {args.base_seed}, first click in the corner")
    for name in solvers:
        if name == "search":
            continue
        for d in table.difference(name, reference="search"):
            gap = 100 * d["difference"], 100 * d["ci_low"], 100 * d["ci_high"]
            print(f"  {name:24s} {d['win_rate']:.2%} vs search {d['reference_win_rate']:.2%}: "
                  f"{gap[0]:+.2f} points ({gap[1]:+.2f} to {gap[2]:+.2f}); "
                  f"games only it won {d['solver_only']}, only search won {d['reference_only']}")
    if args.out:
        table.metadata["command"] = "python eval/value_trust.py " + shlex.join(argv or sys.argv[1:])
        table.to_json(args.out + ".json")
        table.to_csv(args.out + ".csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
