"""Ship a trained checkpoint as bundled weights, with its model card.

Copies ``RUN/best.pt`` and its JSON into ``nnsweeper/models/weights/NAME.{pt,json}``,
scores it on the dataset's test split (:func:`nnsweeper.training.evaluate_model`) and
writes ``nnsweeper/models/weights/NAME.md``: the data manifest's checksum, the config,
the metrics next to the exact engine's, and the commands that made it::

    python train/bundle.py gnn runs/gnn_small --config train/gnn_small.toml \\
        --data-command "nnsweeper generate data/mixed --mix mixed --games 200 --jobs 2"
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from nnsweeper.metrics import format_metrics, to_json
from nnsweeper.models import load_checkpoint
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
    seconds = sum(h["seconds"] for h in history)

    WEIGHTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(args.run / "best.pt", WEIGHTS / f"{args.name}.pt")
    shutil.copyfile(args.run / "best.json", WEIGHTS / f"{args.name}.json")
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
- Target: the exact probabilities (soft binary cross-entropy on every unknown cell).

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
