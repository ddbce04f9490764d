"""Per-configuration test figures of the bundled models, as one Markdown table.

Reads ``nnsweeper/models/weights/{cnn,gnn}_test_metrics.json`` (written by
``train/bundle.py``) and writes ``eval/results/models_by_configuration.md``: for every
board size and mine count of the test split, the frontier log-loss ratio against the
exact engine, the mean absolute error against the exact probabilities and the share
of engine-proven safe cells given P < 0.02, for each model::

    python eval/model_table.py
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from nnsweeper.fileio import write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "nnsweeper" / "models" / "weights"
OUT = ROOT / "eval" / "results" / "models_by_configuration.md"
_KEY = re.compile(r"^(\d+)x(\d+)-m(\d+)-")


def _order(key: str) -> tuple:
    m = _KEY.match(key)
    return (int(m[1]) * int(m[2]), int(m[1]), int(m[3])) if m else (10**9, 0, 0)


def _label(key: str) -> str:
    m = _KEY.match(key)
    return f"{m[1]}x{m[2]}, {m[3]} mines" if m else key


def _cells(region: dict) -> list[str]:
    return [f"{region['log_loss_ratio']:.3f}", f"{region['mae_exact']:.4f}",
            f"{100 * region['safe_below_threshold']:.1f}%" if region["safe_cells"] else "-"]


def table(results: dict[str, dict]) -> str:
    """Markdown: one row per configuration (and one for all), three columns per model."""
    names = list(results)
    head = ["board", "frontier cells", "safe cells"]
    for name in names:
        head += [f"{name} LL ratio", f"{name} MAE", f"{name} safe<0.02"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first = results[names[0]]
    rows = [("all", first["frontier"], {n: r["frontier"] for n, r in results.items()})]
    for key in sorted(first["by"], key=_order):
        rows.append((_label(key), first["by"][key]["frontier"],
                     {n: r["by"][key]["frontier"] for n, r in results.items()}))
    for label, base, regions in rows:
        name = f"**{label}**" if label == "all" else label
        row = [name, f"{base['cells']:,.0f}", f"{base['safe_cells']:,.0f}"]
        for name in names:
            row += _cells(regions[name])
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["gnn", "cnn"], help="bundled model names")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    results = {}
    for name in args.models:
        path = WEIGHTS / f"{name}_test_metrics.json"
        if not path.exists():
            print(f"no test metrics for {name!r} at {path}; run train/bundle.py first", file=sys.stderr)
            return 2
        results[name.upper()] = json.loads(path.read_text())
    keys = [set(r["by"]) for r in results.values()]
    if any(k != keys[0] for k in keys):
        print("the models were scored on different test splits", file=sys.stderr)
        return 2
    text = (
        "# Bundled models on the test split, per board size and mine count\n\n"
        "Frontier cells of the held-out test games of the mixed dataset. *LL ratio*: the\n"
        "model's log-loss against the truth over the exact engine's on the same cells (1 is\n"
        "the best possible); *MAE*: mean absolute error against the exact probabilities;\n"
        "*safe<0.02*: engine-proven safe cells the model gives P < 0.02.\n"
        "Made by `python eval/model_table.py` from `nnsweeper/models/weights/*_test_metrics.json`.\n\n"
        + table(results) + "\n"
    )
    write_text_atomic(args.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
