"""How ``csp`` should break ties among its cells of lowest risk: each order paired with the one it ships with.

Every variant of :data:`VARIANTS` is :class:`~nnsweeper.solvers.CSPSolver` with one
tie-break (:data:`~nnsweeper.solvers.ranking.TIE_BREAKS`; ``*_near``: cells within 0.001 of
the lowest risk count as tied), played on the same games as ``csp`` with ties by the chance
of a zero (``prob_zero``, its default when this study was made; it chose
``fewest_covered_prob_zero``, the default since): expert and intermediate with the first click in the
corner (the records' rule) and the 10x10 sweep (5 to 30 mines, the first click at the
centre, as ``compare`` plays), from base seed :data:`SEED` (selection games: not the
records' 2026, on which the chosen default is measured again). The games go to
``eval/results/tie_breaks.games`` (committed, so a run continues where it stopped), the
tables to ``eval/results/tie_breaks.json`` (the classic boards) and
``tie_breaks_10x10.json`` (the sweep: its solvers start elsewhere, and a table describes
each solver once), and both to ``eval/results/tie_breaks.md``: per board each order's win
rate and its paired difference from ``prob_zero`` with its 95% interval (pooled over the
sweep's 26 counts)::

    python eval/tie_breaks.py                          # every variant, --trials games per board
    python eval/tie_breaks.py fewest_covered_neighbours --board expert --trials 20000 --jobs 2
    python eval/tie_breaks.py --status                 # games recorded so far
    python eval/tie_breaks.py --table                  # the table from what is recorded

The sweep plays ``--trials`` games in all, split evenly over its mine counts.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "eval" / "results"
STORE = RESULTS / "tie_breaks.games"
TABLE = RESULTS / "tie_breaks.json"
SWEEP_TABLE = RESULTS / "tie_breaks_10x10.json"
#: Base seed of the selection games (not the records').
SEED = 6868
TRIALS = 100_000
BOARDS = ("expert", "intermediate", "10x10")
SWEEP = tuple(range(5, 31))
#: Each variant's options of CSPSolver; ``prob_zero``: the reference (csp's default before this study).
VARIANTS: dict[str, dict] = {
    "prob_zero": {"tie_break": "prob_zero"},
    "random": {"tie_break": "random"},
    "fewest_covered_neighbours": {"tie_break": "fewest_covered_neighbours"},
    "most_revealed_neighbours": {"tie_break": "most_revealed_neighbours"},
    "fewest_board_neighbours": {"tie_break": "fewest_board_neighbours"},
    "fewest_covered_prob_zero": {"tie_break": "fewest_covered_prob_zero"},
    "fewest_covered_near": {"tie_break": "fewest_covered_neighbours", "tolerance": 1e-3},
    "prob_zero_near": {"tie_break": "prob_zero", "tolerance": 1e-3},
}
REFERENCE = "prob_zero"


def solver_name(variant: str) -> str:
    return "csp" if variant == REFERENCE else f"csp+{variant}"


def solver(variant: str, start: str):
    from nnsweeper.solvers import CSPSolver

    return CSPSolver(start=start, **VARIANTS[variant])


def play(variants: list[str], trials: int, jobs: int, boards=BOARDS) -> None:
    """Play the variants (and the reference) on ``boards``, writing each table as its boards finish."""
    from nnsweeper.evaluation import evaluate

    names = [REFERENCE, *(v for v in variants if v != REFERENCE)]
    for board in boards:
        start = "center" if board == "10x10" else "corner"
        solvers = {solver_name(v): solver(v, start) for v in names}
        played = [(10, 10, m) for m in SWEEP] if board == "10x10" else [board]
        n = math.ceil(trials / len(SWEEP)) if board == "10x10" else trials
        table = evaluate(solvers, boards=played, trials=n, base_seed=SEED, first_click="safe", n_jobs=jobs,
                         store=STORE, progress=True)
        _merged(SWEEP_TABLE if board == "10x10" else TABLE, table).to_json(
            SWEEP_TABLE if board == "10x10" else TABLE)


def _merged(path: Path, table):
    """``table`` with the rows of the table at ``path`` that it does not replace (other boards, or
    solvers it did not play)."""
    from nnsweeper.evaluation import EvalTable

    if not path.exists():
        return table
    old = EvalTable.from_json(path)
    mine = {(r["solver"], r["board"], r["rows"], r["cols"], r["mines"]) for r in table}
    kept = [r for r in old if (r["solver"], r["board"], r["rows"], r["cols"], r["mines"]) not in mine]
    solvers = {**(old.metadata.get("solvers") or {}), **(table.metadata.get("solvers") or {})}
    return EvalTable(kept + list(table), {**old.metadata, **table.metadata, "solvers": solvers})


def markdown(tables) -> str:
    """Per board (the sweep pooled), each order's win rate and paired gap to ``prob_zero``."""
    from nnsweeper.evaluation.summary import pooled_difference

    out = ["`csp`'s tie-breaks among its cells of lowest risk, each paired with `csp` breaking ties by the "
           "chance of a zero (`prob_zero`, its default when this study was made; the study made "
           "`fewest_covered_prob_zero` the default) on the same games (safe first click; base seed "
           f"{SEED}); made by "
           "`python eval/tie_breaks.py`. Expert and intermediate with the first click in the corner, the "
           "10x10 sweep (5 to 30 mines, pooled) at the centre. Gaps in percentage points with paired 95% "
           "intervals; time: mean time per game of one worker as it was played (a rough guide).", ""]
    groups = {"expert": [], "intermediate": [], "10x10 sweep": []}
    of = {}
    for table in tables:
        for r in table:
            name = "10x10 sweep" if r["board"] == "10x10" else r["board"]
            groups[name].append(r)
            of[name] = table
    for name, rows in groups.items():
        if not rows:
            continue
        table = of[name]
        games = sum(r["games"] for r in rows if r["solver"] == solver_name(REFERENCE))
        out += [f"### {name} ({games:,} games per order)", "",
                "| tie-break | options | win rate | - prob_zero | won by it only / by prob_zero only "
                "| time per game |", "| --- | --- | ---: | ---: | ---: | ---: |"]
        for variant, options in VARIANTS.items():
            mine = [r for r in rows if r["solver"] == solver_name(variant)]
            if not mine:
                continue
            n, won = sum(r["games"] for r in mine), sum(r["wins"] for r in mine)
            seconds = sum(r["mean_seconds"] * r["games"] for r in mine) / n
            opts = ", ".join(f"{k}={v!r}" for k, v in options.items())
            if variant == REFERENCE:
                gap, split = "reference", ""
            else:
                keys = {(r["board"], r["rows"], r["cols"], r["mines"]) for r in mine}
                diffs = [d for d in table.difference(solver_name(variant), solver_name(REFERENCE))
                         if (d["board"], d["rows"], d["cols"], d["mines"]) in keys]
                g, low, high, _ = pooled_difference(diffs)
                gap = f"{100 * g:+.2f} ({100 * low:+.2f} to {100 * high:+.2f})"
                only = sum(d["solver_only"] for d in diffs), sum(d["reference_only"] for d in diffs)
                split = f"{only[0]:,} / {only[1]:,}"
            out.append(f"| {variant} | {opts} | {100 * won / n:.2f}% | {gap} | {split} | "
                       f"{1000 * seconds:.1f} ms |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    import argparse

    from nnsweeper.evaluation import EvalTable
    from nnsweeper.fileio import write_text_atomic

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*",
                        help=f"variants to play (default: all of {', '.join(VARIANTS)})")
    parser.add_argument("--trials", type=int, default=TRIALS, help=f"games per board (default: {TRIALS:,})")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default: 1)")
    parser.add_argument("--board", action="append", choices=BOARDS, default=None,
                        help="only this board (repeatable; default: all of them, in this order)")
    parser.add_argument("--status", action="store_true", help="games recorded per variant and board")
    parser.add_argument("--table", action="store_true", help="write the markdown from the tables")
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant {unknown[0]!r}; the variants: {', '.join(VARIANTS)}")
    if args.status:
        from nnsweeper.evaluation.store import held_games

        for folder, (_, games) in held_games(STORE, args.trials).items():
            print(f"{folder}: {games:,} games")
        return 0
    if not args.table:
        play(args.variants or list(VARIANTS), args.trials, args.jobs, args.board or BOARDS)
    tables = [EvalTable.from_json(p) for p in (TABLE, SWEEP_TABLE) if p.exists()]
    if not tables:
        print("no table yet: play the variants first", file=sys.stderr)
        return 2
    text = markdown(tables)
    write_text_atomic(TABLE.with_suffix(".md"), text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
