"""Ship a trained value network as the bundled ``value-gnn`` weights, with its model card.

Saves ``RUN/best.pt`` (the epoch of the lowest validation loss) as
``nnsweeper/models/weights/value-gnn.{pt,json}`` (its JSON keeps the dataset's checksum
and seed streams, so that evaluations refuse the games it learned from), scores it on
the dataset's test split (games the training never saw) and writes ``nnsweeper/models/weights/value-gnn.md``::

    python train/bundle_value.py runs/value_gnn --config train/value_gnn.toml \\
        --data-command "nnsweeper generate-values data/values ..."

The test figures also go to ``value-gnn_test_metrics.json`` beside the weights.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nnsweeper.datasets.values import load_value_manifest, prepare_positions
from nnsweeper.fileio import file_sha256, write_text_atomic
from nnsweeper.models.value import load_value_model, save_value_model, value_metrics
from nnsweeper.training_config import load_value_config

WEIGHTS = Path(__file__).resolve().parents[1] / "nnsweeper" / "models" / "weights"


def board_table(result: dict) -> str:
    """A markdown table of a :func:`value_metrics` result, per board and pooled."""
    lines = ["| board | positions | BCE | MSE vs label | mean label | mean prediction |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, m in [*result["boards"].items(), ("all", result)]:
        lines.append(f"| {name} | {m['positions']:,} | {m['bce']:.4f} | {m['mse']:.5f} | "
                     f"{m['mean_value']:.4f} | {m['mean_prediction']:.4f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the training run folder (the config's output.dir)")
    parser.add_argument("--config", required=True, help="the training config the run used")
    parser.add_argument("--data-command", required=True, help="the command that made the dataset")
    parser.add_argument("--jobs", type=int, default=2, help="processes that analyse the test positions")
    parser.add_argument("--out", type=Path, default=WEIGHTS,
                        help="where the weights go (default: the package's)")
    args = parser.parse_args(argv)

    cfg = load_value_config(args.config)
    folder = Path(cfg.data.path)
    manifest = load_value_manifest(folder)
    history = json.loads((args.run / "history.json").read_text(encoding="utf-8"))
    best = min(history, key=lambda h: h["val_loss"])
    model = load_value_model(args.run / "best.pt")
    extra = {"dataset": folder.as_posix(), "data_manifest_sha256": file_sha256(folder / "manifest.json"),
             "data_seed_streams": manifest["seed_streams"], "data_command": args.data_command,
             "train_config": cfg.to_dict(), "epoch": best["epoch"]}
    test = value_metrics(model, prepare_positions(folder, "test", args.jobs))
    args.out.mkdir(parents=True, exist_ok=True)
    save_value_model(args.out / "value-gnn.pt", model, extra=extra)
    write_text_atomic(args.out / "value-gnn_test_metrics.json", json.dumps(test, indent=1) + "\n")

    splits = manifest["splits"]
    per_epoch = "; ".join(f"epoch {h['epoch']}: {h['val_loss']:.4f}" for h in history)
    minutes = sum(h["seconds"] for h in history) / 60
    card = f"""# Bundled value network (`value-gnn`): model card

- What it predicts: the chance that the `search` solver wins from a position (first
  click in the corner, safe first click), from the position alone: what a player sees
  plus the exact engine's per-cell probabilities, proofs and layout count. The
  `value-gnn` solver scores its look-ahead candidates with it.
- Architecture: `{model.config['arch']}`, {model.n_parameters:,} parameters; config
  `{json.dumps(model.config)}`.
- Data: `{folder.as_posix()}`, manifest SHA-256 `{extra['data_manifest_sha256']}`, made by
  `{args.data_command}`; positions train / val / test {splits['train']['states']:,} /
  {splits['val']['states']:,} / {splits['test']['states']:,} (games {splits['train']['games']:,} /
  {splits['val']['games']:,} / {splits['test']['games']:,}, split by game seed). Each is a position where
  `search` guessed, or the board right after the guessed cell showed its number, labelled with
  the product of the exact safeties of `search`'s guesses from there on, in a game where a
  revealed mine redraws the hidden layout from the posterior (an unbiased label of the
  chance to win with far less noise than the one-bit outcome).
- Training: `nnsweeper train --config {args.config}` ({cfg.train.epochs} epochs, best
  validation BCE at epoch {best['epoch']}; {minutes:.1f} min of epochs (training and validation) on a
  2-core CPU, {cfg.train.threads} torch thread(s), after the positions were analysed); validation BCE
  per epoch: {per_epoch}.
  Then `python train/bundle_value.py {args.run.as_posix()} --config {args.config} --data-command "..."`.

## Held-out test split (games the training never saw)

{board_table(test)}

BCE is against the soft value label; MSE against the label includes the label's own
noise. Calibration against won and lost games: `python eval/value_calibration.py
{folder.as_posix()} --out eval/results/calibration/value-gnn` (reliability diagram and ECE).
"""
    write_text_atomic(args.out / "value-gnn.md", card)
    print(card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
