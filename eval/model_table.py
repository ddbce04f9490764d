"""Held-out figures of the bundled models per kind of position, as Markdown tables.

Reads ``nnsweeper/models/weights/{gnn,cnn}_test_metrics.json`` and
``{gnn,cnn}_heldout_metrics.json`` (written by ``train/bundle.py``; a model trained on data made
for training alone has held-out datasets only) and writes
``eval/results/models_by_configuration.md``: for the test split of the training
dataset and for each held-out dataset, one table per kind (board, behaviour policy,
flag mode, policy with flag mode) with the frontier log-loss ratio against the exact
engine, the mean absolute error against the exact probabilities, and the shares of
engine-proven safe cells given P < 0.02 and of proven mines given P > 0.98, for each
model::

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
_KEY = re.compile(r"^(\d+)x(\d+)-m(\d+)")
#: The tables of a dataset, in order: the kind field and its column header.
FIELDS = (("board", "board"), ("policy", "policy"), ("flags", "flags"), ("policy_flags", "policy, flags"))


def _order(key: str) -> tuple:
    m = _KEY.match(key)
    return (int(m[1]) * int(m[2]), int(m[1]), int(m[3])) if m else (10**9, 0, 0)


def _label(key: str) -> str:
    m = _KEY.match(key)
    return f"{m[1]}x{m[2]}, {m[3]} mines" if m else key


def _share(region: dict, key: str, count: str) -> str:
    return f"{100 * region[key]:.1f}%" if region.get(count) else "-"


def _cells(region: dict) -> list[str]:
    return [f"{region['log_loss_ratio']:.3f}", f"{region['mae_exact']:.4f}",
            _share(region, "safe_below_threshold", "safe_cells"),
            _share(region, "mine_above_threshold", "mine_cells")]


def _groups(result: dict, field: str) -> dict:
    return result["by"] if field == "configuration" else result.get("kinds", {}).get(field, {})


def table(results: dict[str, dict], field: str = "configuration", header: str = "board") -> str:
    """Markdown: one row per label of ``field`` (and one for all), four columns per model.

    ``field`` is ``"configuration"`` (the result's ``by``) or a key of its ``kinds``;
    boards are listed smaller first, then by mine count, other labels as scored.
    """
    names = list(results)
    head = [header, "frontier cells", "safe cells"]
    for name in names:
        head += [f"{name} LL ratio", f"{name} MAE", f"{name} safe<0.02", f"{name} mine>0.98"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first = results[names[0]]
    rows = [("all", first["frontier"], {n: r["frontier"] for n, r in results.items()})]
    labels = list(_groups(first, field))
    if field in ("configuration", "board"):
        labels.sort(key=_order)
    for key in labels:
        shown = _label(key) if field in ("configuration", "board") else key
        rows.append((shown, _groups(first, field)[key]["frontier"],
                     {n: _groups(r, field)[key]["frontier"] for n, r in results.items()}))
    for label, base, regions in rows:
        name = f"**{label}**" if label == "all" else label
        row = [name, f"{base['cells']:,.0f}", f"{base['safe_cells']:,.0f}"]
        for name in names:
            row += _cells(regions[name])
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _sections(results: dict[str, dict]) -> list[str]:
    """One table per kind field the results have (the configurations when they have none)."""
    first = next(iter(results.values()))
    fields = [(f, h) for f, h in FIELDS if f in first.get("kinds", {})] or [("configuration", "board")]
    return [table(results, f, h) for f, h in fields]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["gnn", "cnn"], help="bundled model names")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    datasets: dict[str, dict[str, dict]] = {}
    for name in args.models:
        path = WEIGHTS / f"{name}_test_metrics.json"
        held = WEIGHTS / f"{name}_heldout_metrics.json"
        if not path.exists() and not held.exists():
            print(f"no test metrics for {name!r} at {path} or {held}; run train/bundle.py first",
                  file=sys.stderr)
            return 2
        if path.exists():  # a model trained on data made for training alone has no test split of its own
            datasets.setdefault("test split of the training dataset", {})[name.upper()] = json.loads(
                path.read_text())
        for folder, result in (json.loads(held.read_text()) if held.exists() else {}).items():
            datasets.setdefault(f"held-out dataset `{folder}`", {})[name.upper()] = result
    for title, results in datasets.items():
        keys = [set(r["by"]) for r in results.values()]
        if any(k != keys[0] for k in keys):
            print(f"the models were scored on different configurations of the {title}", file=sys.stderr)
            return 2
    text = (
        "# Bundled models on held-out positions, per kind\n\n"
        "Frontier cells of held-out games. *LL ratio*: the model's log-loss against the truth\n"
        "over the exact engine's on the same cells (1 is the best possible); *MAE*: mean\n"
        "absolute error against the exact probabilities; *safe<0.02*: engine-proven safe\n"
        "cells the model gives P < 0.02; *mine>0.98*: engine-proven mines it gives P > 0.98.\n"
        "Every configuration's figures are in the JSON files beside the weights.\n"
        "Made by `python eval/model_table.py` from `nnsweeper/models/weights/*_metrics.json`.\n"
    )
    models = [name.upper() for name in args.models]
    for title, results in datasets.items():
        # A dataset not every model was scored on is shown for those that were, and says so.
        only = ("" if len(results) == len(models)
                else f" ({', '.join(results)} only: the others were not scored on it)")
        text += f"\n## The {title}{only}\n\n" + "\n\n".join(_sections(results)) + "\n"
    write_text_atomic(args.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
