"""Ship a trained checkpoint as bundled weights, with its model card.

Saves ``RUN/best.pt`` as ``nnsweeper/models/weights/NAME.{pt,json}`` (its JSON keeps
the training run's information and the dataset's seed streams, so that evaluations
can refuse the games it learned from), scores it on the dataset's test split
(:func:`nnsweeper.training.evaluate_model`) and
writes ``nnsweeper/models/weights/NAME.md``: the data manifest's checksum, the config,
the metrics next to the exact engine's, and the commands that made it::

    python train/bundle.py gnn runs/gnn_small --config train/gnn_small.toml \\
        --data-command "nnsweeper generate data/mixed --mix mixed --games 400 --jobs 2"
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nnsweeper.datasets import load_manifest
from nnsweeper.metrics import format_metrics, to_json
from nnsweeper.models import load_checkpoint, save_checkpoint
from nnsweeper.training import evaluate_model

WEIGHTS = Path(__file__).resolve().parents[1] / "nnsweeper" / "models" / "weights"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=("cnn", "gnn"))
    parser.add_argument("run", type=Path, help="the training run folder")
    parser.add_argument("--config", required=True, help="the training config the run used")
    parser.add_argument("--data-command", required=True, help="the command that made the dataset")
    args = parser.parse_args(argv)

    model = load_checkpoint(args.run / "best.pt")
    extra = model.checkpoint_meta["extra"]
    data = extra["data_path"]
    result, _ = evaluate_model(model, data, "test", progress=True)
    history = json.loads((args.run / "history.json").read_text())
    train_config = json.loads((args.run / "config.json").read_text())["train"]
    weight = train_config.get("certain_weight", 1.0)
    exact = train_config["target"] == "exact"
    target = ("the exact probabilities (soft" if exact else "the true mines (") + \
        " binary cross-entropy on every unknown cell"
    target += f"; cells the engine proves safe or mined weigh {weight:g} times)" if weight != 1.0 else ")"
    seconds = sum(h["seconds"] for h in history)

    if "data_seed_streams" not in extra:
        extra = {**extra, "data_seed_streams": load_manifest(data)["seed_streams"]}
    save_checkpoint(WEIGHTS / f"{args.name}.pt", model, extra=extra)
    to_json(result, WEIGHTS / f"{args.name}_test_metrics.json")
    front = result["frontier"]
    card = f"""# Bundled {args.name.upper()}: model card

- Architecture: `{model.arch}`, {model.n_parameters:,} parameters; config
  `{json.dumps(model.config)}`.
- Data: `{data}`, manifest SHA-256 `{extra["data_manifest_sha256"]}`, made by
  `{args.data_command}` (10x10 boards with 5..30 mines plus beginner, intermediate and
  expert; CSP policy; every decision recorded; train / val / test split by game seed).
- Training: `nnsweeper train --config {args.config}` ({len(history)} epochs, best
  validation loss at epoch {extra["epoch"]}; {seconds / 60:.1f} minutes of training on 2 CPU cores),
  then `python train/bundle.py {args.name} {args.run} --config {args.config} --data-command "..."`.
- Target: {target}.

## Test split (held-out games)

Frontier cells: log-loss {front["log_loss"]:.4f} against the exact engine's
{front["log_loss_exact"]:.4f} (ratio {front["log_loss_ratio"]:.3f}); mean absolute error
against the exact probabilities {front["mae_exact"]:.4f}; engine-proven safe cells given
P < 0.02: {100 * front["safe_below_threshold"]:.2f}%.

```
{format_metrics(result)}
```
"""
    (WEIGHTS / f"{args.name}.md").write_text(card)
    print(card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
