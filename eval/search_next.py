"""Past the peer: options of ``search`` on top of what it ships with, paired with it game by game.

Where the Java solver and ``search`` part on the expert record (``benchmarks/peers/java_dnh.py
discord``), the peer wins at the first guesses (it opens the far corner where ``search`` opens
a cell two steps out from the first number) and at early look-ahead guesses between cells of
equal risk (a corner where ``search`` takes an edge cell): what its 50/50 influence prefers.
Each variant of :data:`VARIANTS` is ``search`` as it ships (first click in the corner, safe
first click) with some options changed, played on the same games as ``search`` from base seed
:data:`SEED` (the ablation's, kept apart from the records' 2026, on which the chosen options are
finally measured). Games go to ``eval/results/search_next.games`` (committed, so a run continues
where it stopped, on this machine or another with the same code) and the table to
``eval/results/search_next.{json,md}``: each variant's win rate, its paired difference from
``search`` with its 95% interval, and its mean time per game::

    python eval/search_next.py                        # every variant, --trials games per board
    python eval/search_next.py first_influence --trials 20000 --board expert
    python eval/search_next.py --status               # games recorded so far
    python eval/search_next.py --table                # the table from what is recorded
    python eval/search_next.py corner_ties corner_band --trials 20000 --board expert --out search_ties

``--record`` plays the variants named on the record's games instead (expert, first click in the
corner, base seed 2026: the first 100,000 games of ``record_expert_models``, on which ``search``,
``csp`` and the Java solver's rows were played) into ``eval/results/search_next_record.games``
and pairs them with those rows in ``eval/results/search_next_record.{json,md}``::

    python eval/search_next.py --record corner_ties --jobs 1

A variant's games are refused by the store once the search code changes (its code digest is in
every chunk; ``--replace-changed`` plays them again): measure on the code that will ship. Times in
the table are a rough guide (one worker, the other core busy); times to compare come from
``benchmarks/bench_games.py --against``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "eval" / "results"
STORE = RESULTS / "search_next.games"
TABLE = RESULTS / "search_next.json"
#: Base seed of the games (the ablation's, not the records').
SEED = 4343
TRIALS = 100_000
BOARDS = ("expert", "intermediate")
#: The record table a ``--record`` run pairs its variants with (``eval/records.py``'s, 100,000 expert games).
RECORD_TABLE = RESULTS / "record_expert_models.json"
RECORD_STORE = RESULTS / "search_next_record.games"
RECORD_OUT = RESULTS / "search_next_record.json"
#: The record table's solvers a variant is paired with, in the markdown's order.
RECORD_PEERS = ("search", "java-dnh", "csp")
#: Share of the cells covered at and above which ``first_influence`` weighs the 50/50 patterns
#: (400 of expert's 480 cells: where the first guesses are made).
FIRST_SHARE = 0.83
#: Each variant's options on top of ``search`` as it ships (``search``: none).
VARIANTS: dict[str, dict] = {
    "search": {},
    "first_influence": {"influence": True, "influence_covered": FIRST_SHARE},
    "influence": {"influence": True},
    "peer": {"influence": True, "pseudo": True, "dominance": True, "isolated": True},
    # The single-step lesson (issue: ties decide): corners, then edges, first among equal-risk cells.
    "corner_ties": {"tie_break": "fewest_covered_neighbours"},
    "corner_band": {"tie_break": "fewest_covered_neighbours", "tie_band": 0.01},
    "corner_band_wide": {"tie_break": "fewest_covered_neighbours", "tie_band": 0.03},
}
REFERENCE = "search"


def solver_name(variant: str) -> str:
    return REFERENCE if variant == REFERENCE else f"{REFERENCE}+{variant}"


def solver(variant: str):
    from nnsweeper.solvers import SearchSolver

    return SearchSolver(start="corner", **VARIANTS[variant])


def play(variants: list[str], trials: int, jobs: int, boards=BOARDS, on_change: str = "refuse"):
    """Play the variants (and ``search``, their reference) on ``boards``; their table."""
    from nnsweeper.evaluation import evaluate

    names = [REFERENCE, *(v for v in variants if v != REFERENCE)]
    solvers = {solver_name(v): solver(v) for v in names}
    return evaluate(solvers, boards=list(boards), trials=trials, base_seed=SEED, first_click="safe",
                    n_jobs=jobs, store=STORE, progress=True, on_change=on_change)


def markdown(table) -> str:
    """The table: per board, each variant's win rate and paired gap to ``search``."""
    out = ["Options of `search` on top of what it ships with, each paired with `search` on the same games "
           f"(first click in the corner, safe first click, base seed {SEED}); made by "
           "`python eval/search_next.py`. Gaps in percentage points with paired 95% intervals; time: mean "
           "time per game of one worker as the variants were played, a rough guide only (times to compare "
           "come from `benchmarks/bench_games.py --against`).", ""]
    for board in table.boards:
        rows = table.select(board=board)
        out += [f"### {board} ({rows[0]['games']:,} games per variant)", "",
                "| variant | options | win rate | - search | won by it only / by search only "
                "| time per game |",
                "| --- | --- | ---: | ---: | ---: | ---: |"]
        by_name = {r["solver"]: r for r in rows}
        for variant, options in VARIANTS.items():
            r = by_name.get(solver_name(variant))
            if r is None:
                continue
            opts = ", ".join(f"{k}={v!r}" for k, v in options.items()) or "as it ships"
            if variant == REFERENCE:
                gap, split = "reference", ""
            else:
                d = table.difference(r["solver"], REFERENCE, board=board)[0]
                gap = (f"{100 * d['difference']:+.2f} ({100 * d['ci_low']:+.2f} to "
                       f"{100 * d['ci_high']:+.2f})")
                split = f"{d['solver_only']:,} / {d['reference_only']:,}"
            out.append(f"| {variant} | {opts} | {100 * r['win_rate']:.2f}% | {gap} | {split} | "
                       f"{1000 * r['mean_seconds']:.1f} ms |")
        out.append("")
    return "\n".join(out)


def play_record(variants: list[str], jobs: int):
    """Play the variants on the record's games; the record table with their rows added (paired)."""
    from nnsweeper.evaluation import EvalTable, evaluate

    record = EvalTable.from_json(RECORD_TABLE)
    args = record.metadata["arguments"]
    solvers = {solver_name(v): solver(v) for v in variants}
    from nnsweeper.game import PRESETS

    boards = [name if name in PRESETS else (rows, cols, mines) for name, rows, cols, mines in args["boards"]]
    mine = evaluate(solvers, boards=boards,
                    trials=args["trials"], base_seed=args["base_seed"], first_click=args["first_click"],
                    n_jobs=jobs, store=RECORD_STORE, progress=True)
    kept = [s for s in record.solvers if s in RECORD_PEERS]
    return EvalTable([r for r in record if r["solver"] in kept],
                     {**record.metadata, "solvers": {k: v for k, v in record.metadata["solvers"].items()
                                                     if k in kept}}).merge(mine)


def record_markdown(table) -> str:
    """Each variant against each of :data:`RECORD_PEERS` on the record's games, paired."""
    games = table.rows[0]["games"]
    out = [f"Options of `search` on the expert record's games ({games:,}: first click in the corner, safe "
           f"first click, base seed {table.rows[0]['base_seed']}; the first games of "
           f"`{RECORD_TABLE.name}`), each paired game by game with the record's rows of "
           + ", ".join(f"`{p}`" for p in RECORD_PEERS)
           + "; made by `python eval/search_next.py --record`. Gaps in percentage points with paired 95% "
           "intervals.", "",
           "| solver | options | win rate | " + " | ".join(f"- {p}" for p in RECORD_PEERS) + " |",
           "| --- | --- | ---: | " + " | ".join("---:" for _ in RECORD_PEERS) + " |"]
    for r in table:
        variant = r["solver"].removeprefix(f"{REFERENCE}+")
        if r["solver"] in RECORD_PEERS:
            opts = "as it ships" if r["solver"] == REFERENCE else "(the record's row)"
        else:
            opts = ", ".join(f"{k}={v!r}" for k, v in VARIANTS[variant].items())
        gaps = []
        for peer in RECORD_PEERS:
            if peer == r["solver"] or peer not in table.solvers:
                gaps.append("")
                continue
            d = table.difference(r["solver"], peer)[0]
            gaps.append(f"{100 * d['difference']:+.2f} ({100 * d['ci_low']:+.2f} to "
                        f"{100 * d['ci_high']:+.2f})")
        out.append(f"| {r['solver']} | {opts} | {100 * r['win_rate']:.2f}% | " + " | ".join(gaps) + " |")
    return "\n".join(out)


def record(argv) -> int:
    import argparse

    from nnsweeper.fileio import write_text_atomic

    parser = argparse.ArgumentParser(description="the variants on the expert record's games")
    parser.add_argument("--record", action="store_true", required=True)
    parser.add_argument("variants", nargs="+", help=f"variants to play (of {', '.join(VARIANTS)})")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default: 1)")
    args = parser.parse_args(argv)
    bad = [v for v in args.variants if v not in VARIANTS or v == REFERENCE]
    if bad:
        parser.error(f"{bad[0]!r} is not a variant to play on the record (the record has search's own "
                     f"rows); the variants: {', '.join(v for v in VARIANTS if v != REFERENCE)}")
    table = play_record(args.variants, args.jobs)
    table.to_json(RECORD_OUT)
    text = record_markdown(table)
    write_text_atomic(RECORD_OUT.with_suffix(".md"), text + "\n")
    print(text)
    return 0


def _ablation():
    """``search_ablation.py`` beside this script, whose command line this one shares."""
    import importlib.util

    path = Path(__file__).with_name("search_ablation.py")
    spec = importlib.util.spec_from_file_location("search_ablation", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    if "--record" in (sys.argv[1:] if argv is None else argv):
        return record(sys.argv[1:] if argv is None else argv)
    return _ablation().run_variants(argv, description=__doc__.splitlines()[0], variants=VARIANTS,
                                    trials=TRIALS, boards=BOARDS, store=STORE, table=TABLE, play=play,
                                    markdown=markdown)

if __name__ == "__main__":
    sys.exit(main())
