"""Calibration of a value network on the held-out positions of a value dataset.

For every position of the dataset's test split (games whose seeds the training never
saw), the network's P(win) is set against two labels: the one-bit outcome the game
would have had (``survived``: the search solver won from there without a redrawn
layout) and the survival value label (the product of the exact safeties of the
search solver's guesses from there on, of the same expectation and far less noise).
Writes a reliability diagram (predicted chance against the observed share of wins,
per bin) and a JSON file with the expected calibration error (ECE, 15 equal-width
bins), the Brier score and the squared error against the value labels, overall and
per board size::

    python eval/value_calibration.py data/values --out eval/results/calibration/value-gnn
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nnsweeper.datasets.values import prepare_positions
from nnsweeper.fileio import write_text_atomic
from nnsweeper.metrics import PredictionSet, metrics
from nnsweeper.models.value import load_value_model, predict_positions, value_metrics


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", help="a value dataset folder (generate-values)")
    ap.add_argument("--model", default="value-gnn",
                    help="value model name or .pt path (default: the bundled)")
    ap.add_argument("--split", default="test", choices=("val", "test"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", required=True, help="output prefix: writes PREFIX.json and PREFIX.png")
    args = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch

    from nnsweeper.plots import plot_reliability

    torch.set_num_threads(1)
    model = load_value_model(args.model)
    positions = prepare_positions(args.dataset, args.split, args.jobs)
    predicted = predict_positions(model, positions)
    summary = value_metrics(model, positions, predictions=predicted)
    preds, rows = [], {}
    for shape, arrays in positions.items():
        p = predicted[shape]
        won = arrays["survived"].astype(bool)
        preds.append(PredictionSet(p, p, won.astype(float)))
        m = metrics(preds[-1])
        rows[f"{shape[0]}x{shape[1]}"] = {
            "positions": int(p.size), "ece": m["ece"], "brier": m["brier"],
            "mean_predicted": float(p.mean()), "observed_wins": float(won.mean()),
        }
    pooled_set = PredictionSet.concat(preds)
    pooled = metrics(pooled_set)
    result = {"dataset": str(args.dataset), "split": args.split, "model": str(args.model),
              "positions": summary["positions"], "ece": pooled["ece"], "brier": pooled["brier"],
              "value_label_mse": summary["mse"], "value_label_mse_of_board_means": summary["mse_mean"],
              "boards": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out.with_suffix(".json"), json.dumps(result, indent=1) + "\n")
    fig, ax = plt.subplots(figsize=(5, 5))
    title = f"value network on {summary['positions']} held-out positions (ECE {pooled['ece']:.3f})"
    plot_reliability(pooled_set, ax=ax, label="value-gnn", show_exact=False, title=title,
                     units="positions")
    ax.set_xlabel("predicted chance that search wins")
    ax.set_ylabel("observed share of wins")
    fig.tight_layout()
    fig.savefig(out.with_suffix(".png"), dpi=120)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
