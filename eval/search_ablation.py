"""What each guessing element of ``search`` is worth: paired games with one option on at a time.

Every variant of :data:`VARIANTS` is :class:`~nnsweeper.solvers.SearchSolver` (first
click in the corner, safe first click) with the options of its first version
(:data:`~nnsweeper.solvers.search.V1`, the reference, ``search-v1``) and one guessing
option on (``all``: every one of the published solver's; ``deep``: the two-step
look-ahead on the two best candidates; ``big_endgame``: the exact endgame on 4 times the
layouts, with the published solver's node budget; ``fast``: ``all`` less its two slowest
options, with ``deep``), and ``search`` as it ships (the combination its defaults
chose), played on the same games, on expert and intermediate, from base seed
:data:`SEED` (kept apart from the records' 2026, on which ``search`` is finally
measured). The games go to one store, ``eval/results/search_ablation.games``
(committed, so a run continues where it stopped, on this machine or another with the
same code), and the table to ``eval/results/search_ablation.{json,md}``: each
variant's win rate, its paired difference from ``search-v1`` with its 95% interval,
and its mean time per game::

    python eval/search_ablation.py                       # every variant, --trials games per board
    python eval/search_ablation.py blend pseudo --trials 20000 --jobs 2
    python eval/search_ablation.py --status              # games recorded so far
    python eval/search_ablation.py --table               # the table from what is recorded

A variant's games are refused by the store once the search code changes (its code
digest is in every chunk): measure on the code that will ship.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "eval" / "results"
STORE = RESULTS / "search_ablation.games"
TABLE = RESULTS / "search_ablation.json"
#: Base seed of the ablation's games (not the records').
SEED = 4343
TRIALS = 100_000
BOARDS = ("expert", "intermediate")
#: Each variant's options on top of the first version's (``V1``); ``search``: as it ships.
VARIANTS: dict[str, dict | None] = {
    "v1": {},
    "blend": {"next_value": "blend"},
    "pseudo": {"pseudo": True},
    "influence": {"influence": True},
    "dominance": {"dominance": True},
    "spread": {"spread": True, "candidates": None, "interior_margin": 0.05},
    "endgame": {"endgame_density": 250},
    "isolated": {"isolated": True},
    "defer_dead": {"defer_dead": True},
    "progress": {"progress_weight": True},
    "deep": {"depth": 2, "deep_top": 2},
    "big_endgame": {"endgame": 4000, "endgame_density": 250, "node_limit": 300_000},
    "all": {"next_value": "blend", "pseudo": True, "influence": True, "dominance": True, "spread": True,
            "candidates": None, "interior_margin": 0.05, "endgame_density": 250, "isolated": True,
            "defer_dead": True, "progress_weight": True},
    # The published solver's set less its two slowest options (the 50/50 influence, the spread
    # candidates), with the two-step look-ahead on the two best candidates.
    "fast": {"next_value": "blend", "pseudo": True, "dominance": True, "endgame_density": 250,
             "isolated": True, "defer_dead": True, "progress_weight": True, "depth": 2, "deep_top": 2},
    "search": None,
}
REFERENCE = "search-v1"


def solver_name(variant: str) -> str:
    return {"v1": REFERENCE, "search": "search"}.get(variant, f"{REFERENCE}+{variant}")


def solver(variant: str):
    """The variant's solver: ``V1`` and its options, or ``search`` as it ships."""
    from nnsweeper.solvers import SearchSolver
    from nnsweeper.solvers.search import V1

    options = VARIANTS[variant]
    if options is None:
        return SearchSolver(start="corner")
    return SearchSolver(start="corner", **{**V1, **options})


def play(variants: list[str], trials: int, jobs: int, boards=BOARDS, on_change: str = "refuse"):
    """Play the variants (and ``v1``, their reference) on ``boards``; their table."""
    from nnsweeper.evaluation import evaluate

    names = ["v1", *(v for v in variants if v != "v1")]
    solvers = {solver_name(v): solver(v) for v in names}
    return evaluate(solvers, boards=list(boards), trials=trials, base_seed=SEED, first_click="safe",
                    n_jobs=jobs, store=STORE, progress=True, on_change=on_change)


def _shipped() -> dict:
    """The options in which ``search`` as it ships differs from ``V1``."""
    from nnsweeper.solvers.search import V1

    shipped = solver("search")
    return {k: getattr(shipped, k) for k in V1 if getattr(shipped, k) != V1[k]}


def markdown(table) -> str:
    """The table: per board, each variant's win rate and paired gap to ``v1``."""
    out = [f"Each guessing option of `search` alone on top of its first version's options (`v1`; `all`: "
           "every one of the published solver's), and `search` as it ships, paired with `v1` on the same "
           f"games (first click in the corner, safe first click, base seed {SEED}); made by "
           "`python eval/search_ablation.py`. Gaps in percentage points with paired 95% intervals; time: "
           "mean time per game of one worker as the variants were played (in several runs over days and "
           "machines, the other core busy), so a rough guide only: times to compare come from "
           "`benchmarks/bench_games.py --against`, which alternates the two versions.", ""]
    for board in table.boards:
        rows = table.select(board=board)
        games = rows[0]["games"]
        out += [f"### {board} ({games:,} games per variant)", "",
                "| variant | options | win rate | - v1 | time per game |",
                "| --- | --- | ---: | ---: | ---: |"]
        by_name = {r["solver"]: r for r in rows}
        for variant, options in VARIANTS.items():
            r = by_name.get(solver_name(variant))
            if r is None:
                continue
            if options is None:
                opts = "as it ships: " + ", ".join(f"{k}={v!r}" for k, v in _shipped().items())
            else:
                opts = ", ".join(f"{k}={v!r}" for k, v in options.items()) or "the first version's"
            if variant == "v1":
                gap = "reference"
            else:
                d = table.difference(r["solver"], REFERENCE, board=board)[0]
                gap = (f"{100 * d['difference']:+.2f} ({100 * d['ci_low']:+.2f} to "
                       f"{100 * d['ci_high']:+.2f})")
            out.append(f"| {variant} | {opts} | {100 * r['win_rate']:.2f}% | {gap} | "
                       f"{1000 * r['mean_seconds']:.1f} ms |")
        out.append("")
    return "\n".join(out)


def run_variants(argv, *, description: str, variants, trials: int, boards, store: Path, table: Path,
                 play, markdown) -> int:
    """The command line of a paired experiment of variants (this script's and ``search_next.py``'s):
    play the variants asked (all by default) into ``store`` and write ``table`` and its markdown,
    or print what is recorded (``--status``), or write the markdown from ``table`` (``--table``)."""
    from nnsweeper.evaluation import EvalTable
    from nnsweeper.fileio import write_text_atomic

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("variants", nargs="*",
                        help=f"variants to play (default: all of {', '.join(variants)})")
    parser.add_argument("--trials", type=int, default=trials, help=f"games per board (default: {trials:,})")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default: 1)")
    parser.add_argument("--board", action="append", choices=boards, default=None,
                        help="only this board (repeatable; default: all of them)")
    parser.add_argument("--status", action="store_true", help="games recorded per variant and board")
    parser.add_argument("--table", action="store_true", help="write the table from the recorded games")
    parser.add_argument("--out", default=None, metavar="NAME",
                        help=f"write the table to NAME.json and NAME.md beside {table.name} (default: "
                        f"{table.stem}), so that another set of variants keeps its own table")
    parser.add_argument("--replace-changed", action="store_true",
                        help="play again the games that other code recorded (by default the store "
                        "refuses them)")
    args = parser.parse_args(argv)
    if args.out is not None:
        if not args.out or Path(args.out).name != args.out or args.out.startswith("."):
            parser.error(f"--out must be a plain file name, without folders; got {args.out!r}")
        table = table.with_name(args.out + ".json")
    unknown = [v for v in args.variants if v not in variants]
    if unknown:
        parser.error(f"unknown variant {unknown[0]!r}; the variants: {', '.join(variants)}")
    if args.status:
        from nnsweeper.evaluation.store import held_games

        for folder, (_, games) in held_games(store, args.trials).items():
            print(f"{folder}: {games:,} games")
        return 0
    if args.table:
        if not table.exists():
            print(f"no table yet ({table.name}): play the variants first", file=sys.stderr)
            return 2
        result = EvalTable.from_json(table)
    else:
        result = play(args.variants or list(variants), args.trials, args.jobs, args.board or boards,
                      on_change="replace" if args.replace_changed else "refuse")
        result.to_json(table)
    write_text_atomic(table.with_suffix(".md"), markdown(result) + "\n")
    print(markdown(result))
    return 0


def main(argv=None) -> int:
    return run_variants(argv, description=__doc__.splitlines()[0], variants=VARIANTS, trials=TRIALS,
                        boards=BOARDS, store=STORE, table=TABLE, play=play, markdown=markdown)

if __name__ == "__main__":
    sys.exit(main())
