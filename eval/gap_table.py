"""A comparison's win rates and each solver's gap to a reference, as a Markdown table.

Reads a table written by ``nnsweeper compare`` / ``nnsweeper eval`` (its JSON) and
writes one row per configuration: every solver's win rate, and for the others their
difference from the reference in percentage points with its 95% interval (paired
when the table holds the per-game outcomes of the same games, see
:meth:`nnsweeper.evaluation.EvalTable.difference`), then per solver the largest gap
and the number of configurations within a few thresholds::

    python eval/gap_table.py eval/results/compare_10x10.json            # writes compare_10x10.md
    python eval/gap_table.py eval/results/compare_classic.json --reference csp --out -
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nnsweeper.evaluation import EvalTable
from nnsweeper.evaluation.summary import THRESHOLDS, summarize
from nnsweeper.fileio import atomic_path


def _config(row: dict) -> str:
    if row["board"] == f"{row['rows']}x{row['cols']}":
        return f"{row['rows']}x{row['cols']}/{row['mines']}"
    return f"{row['board']} {row['rows']}x{row['cols']}/{row['mines']}"


def gap_markdown(table: EvalTable, reference: str = "csp") -> str:
    """The Markdown text: win rates with gaps, then a summary per solver."""
    if reference not in table.solvers:
        raise ValueError(f"reference must be a solver of the table ({', '.join(table.solvers)}); "
                         f"got {reference!r}")
    others = [s for s in table.solvers if s != reference]
    diffs = {s: table.difference(s, reference) for s in others}
    configs = [d for d in diffs[others[0]]] if others else []
    lines = []
    command = table.metadata.get("command")
    if command:
        lines += [f"Made by `{command}`.", ""]
    paired = all(d["paired"] for s in others for d in diffs[s])
    lines += [
        f"Win rate in %; for the other solvers, in brackets, the difference from `{reference}` in "
        f"percentage points and its 95% interval ({'paired: the same games' if paired else 'unpaired'}).",
        "",
        "| configuration | " + " | ".join([reference, *others]) + " |",
        "| --- " + "| ---: " * (len(others) + 1) + "|",
    ]
    for k, c in enumerate(configs):
        cells = [f"{100 * c['reference_win_rate']:.1f}"]
        for s in others:
            d = diffs[s][k]
            cells.append(f"{100 * d['win_rate']:.1f} ({100 * d['difference']:+.1f}; "
                         f"{100 * d['ci_low']:+.1f} to {100 * d['ci_high']:+.1f})")
        lines.append(f"| {_config(c)} | " + " | ".join(cells) + " |")
    lines += ["", f"| solver | win rate | gap to `{reference}` (pp, 95% interval) | worst gap (pp) | "
              "configuration | "
              + " | ".join(f"within {t:g} pp" for t in THRESHOLDS)
              + " | interval excludes 0 (below) |",
              "| --- | ---: | ---: | ---: | --- |" + " ---: |" * (len(THRESHOLDS) + 1)]
    for board in summarize(table, reference):
        for s in board.solvers:
            if s.gap is None:
                continue
            n = s.configurations
            gap = f"{100 * s.gap:+.1f} ({100 * s.gap_low:+.1f} to {100 * s.gap_high:+.1f})"
            worst = f"{100 * s.worst['difference']:+.1f} | {_config(s.worst)}"
            within = " | ".join(f"{w} of {n}" for w in s.within)
            rate = f"{100 * s.win_rate:.1f}"
            lines.append(f"| {s.solver} | {rate} | {gap} | {worst} | {within} | {s.below} of {n} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", type=Path, help="a table's JSON (from nnsweeper compare or eval)")
    parser.add_argument("--reference", default="csp", help="the solver the others are compared with "
                        "(default: csp)")
    parser.add_argument("--out", default=None,
                        help="Markdown file to write, '-' for stdout (default: the table's path with .md)")
    args = parser.parse_args(argv)
    try:
        text = gap_markdown(EvalTable.from_json(args.table), args.reference)
    except (OSError, ValueError) as exc:
        print(f"gap_table: {exc}", file=sys.stderr)
        return 2
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.out) if args.out else args.table.with_suffix(".md")
    with atomic_path(out) as tmp:
        Path(tmp).write_text(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
