"""Ship a trained checkpoint as bundled weights, with its model card.

Saves ``RUN/best.pt`` as ``nnsweeper/models/weights/NAME.{pt,json}`` (its JSON keeps
the training run's information and the dataset's seed streams, so that evaluations
can refuse the games it learned from), scores it on the dataset's test split and on
the test split of every ``--test`` dataset (:func:`nnsweeper.training.evaluate_model`;
datasets made with other seeds, so their games are held out too), and writes
``nnsweeper/models/weights/NAME.md``: the data manifest's checksum, the config, the
frontier figures per kind of position (board, behaviour policy, flag mode) next to
the exact engine's, and the commands that made it::

    python train/bundle.py gnn runs/gnn_broad --config train/gnn_broad.toml \\
        --data-command "nnsweeper generate data/broad --mix broad --games 50 --seed 0 --jobs 2" \\
        --test data/broad_test "nnsweeper generate data/broad_test --mix broad --games 40 ..." \\
        --test data/unseen_test "nnsweeper generate data/unseen_test --mix unseen ..." \\
        --gate eval/results/gate/recipe-gnn

Weights replace bundled ones only through the gate (``train/gate.py``): ``--gate PREFIX``
names its grid (``PREFIX.json``), which must have passed and must have measured these
weights against the bundled ones (by digest); the card shows its summary.

The metrics go to ``NAME_test_metrics.json`` (the dataset's test split, read by
``eval/model_table.py``) and ``NAME_heldout_metrics.json`` (``{folder name: result}``
of the ``--test`` datasets).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nnsweeper.datasets import load_manifest
from nnsweeper.decisions import format_decisions
from nnsweeper.fileio import write_text_atomic
from nnsweeper.metrics import format_metrics, to_json
from nnsweeper.models import load_checkpoint, save_checkpoint
from nnsweeper.training import evaluate_model

WEIGHTS = Path(__file__).resolve().parents[1] / "nnsweeper" / "models" / "weights"


def describe_data(manifest: dict) -> str:
    """The boards, policies and flag modes of a dataset, from its manifest."""
    configs = manifest["configurations"]
    boards = list(dict.fromkeys(f"{c['rows']}x{c['cols']}/{c['mines']}" for c in configs))
    policies = list(dict.fromkeys(c.get("policy", "csp") for c in configs))
    flags = list(dict.fromkeys(c.get("flags", "all") for c in configs))
    states = {s: sum(c["states_per_split"].get(s, 0) for c in configs) for s in ("train", "val", "test")}
    return (f"{len(configs)} configurations: boards {', '.join(boards)}; policies {', '.join(policies)}; "
            f"flags {', '.join(flags)}; states train / val / test {states['train']:,} / {states['val']:,} / "
            f"{states['test']:,}")


def with_parent_streams(extra: dict) -> list:
    """A checkpoint's training seed streams with those of the weights it started from (``init``) added,
    so that evaluations refuse the games its parent learned from too (checkpoints written before
    training recorded them lack them). The parent must still be where the run found it, with the
    same bytes, unless it is gone and the checkpoint says that training merged its streams already
    (``init.streams_merged``)."""
    from nnsweeper.models import load_model
    from nnsweeper.training.loop import with_parent_streams as merged

    parent = extra.get("init")
    if not parent:
        return list(extra.get("data_seed_streams") or [])
    if parent.get("streams_merged") and not _checkpoint_exists(parent["init"]):
        # Gone (a plan keeps only its latest weights), but training merged its streams already.
        return list(extra.get("data_seed_streams") or [])
    model = load_model(parent["init"])
    if model.checkpoint_meta["sha256"] != parent["sha256"]:
        raise SystemExit(f"the weights the run started from ({parent['init']!r}, sha256 "
                         f"{parent['sha256'][:12]}) are no longer there (now "
                         f"{model.checkpoint_meta['sha256'][:12]}): their training seeds cannot be carried")
    return merged(extra.get("data_seed_streams"), model)


def _checkpoint_exists(name_or_path: str) -> bool:
    """Whether a model option names weights that are there (a bundled name's, or a path's)."""
    from nnsweeper.models.registry import all_architectures

    if name_or_path in {a.name for a in all_architectures().values() if a.bundled}:
        return (WEIGHTS / f"{name_or_path}.pt").is_file()
    return Path(name_or_path).is_file()


def check_gate(name: str, checkpoint: Path, prefix: str | None, weights: Path | None = None) -> str:
    """The card's section on the gate that clears ``checkpoint`` to replace the bundled ``name``
    (in ``weights``; empty where nothing is bundled under that name); stops the script where it
    does not."""
    from nnsweeper.gate import GateReport
    from nnsweeper.models.digest import weights_digest

    weights = WEIGHTS if weights is None else weights
    if not (weights / f"{name}.pt").is_file():
        return ""
    bundled = weights_digest(weights / f"{name}.pt")
    if prefix is None:
        raise SystemExit(f"weights are bundled under {name!r}: new ones ship only through the gate "
                         f"(python train/gate.py {name} {checkpoint} --out PREFIX, then --gate PREFIX)")
    path = Path(f"{prefix}.json")
    try:
        grid = GateReport.from_json(path.read_text(encoding="utf-8"))
        report = grid.clears(weights_digest(checkpoint), bundled)
    except (OSError, ValueError, KeyError) as exc:  # GateError is a ValueError
        raise SystemExit(f"{path}: {exc}") from None
    return f"""## The gate

`python train/gate.py {name} {checkpoint} --out {prefix}` measured these weights against the ones
they replace (sha256 {bundled[:12]}) on the same games and positions; no cell worse beyond its
noise. The whole grid: `{prefix}.md`.

```
{report.summary()}
```
"""


def kinds_text(result: dict) -> str:
    """The overall lines and the per-kind table of :func:`format_metrics`, without the configurations."""
    return format_metrics({k: v for k, v in result.items() if k != "by"})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the bundled model's name (cnn, gnn, ...)")
    parser.add_argument("run", type=Path, help="the training run folder")
    parser.add_argument("--config", required=True, help="the training config the run used")
    parser.add_argument("--data-command", required=True, help="the command that made the dataset")
    parser.add_argument("--test", nargs=2, action="append", default=[], metavar=("FOLDER", "COMMAND"),
                        help="a held-out dataset to score on (its test split) and the command that made it")
    parser.add_argument("--scored-on", nargs=2, default=None, metavar=("FOLDER", "COMMAND"),
                        help="the dataset whose test split is the model's own test (default: the run's; a "
                        "run fine-tuned on a dataset without a test split: the dataset its initial weights "
                        "were trained on) and the command that made it")
    parser.add_argument("--train-command", default=None,
                        help="the command that trained the run (default: nnsweeper train --config CONFIG)")
    parser.add_argument("--gate", metavar="PREFIX", default=None,
                        help="the gate's grid (PREFIX.json, written by train/gate.py --out PREFIX) that "
                        "clears these weights against the bundled ones; required where weights are bundled "
                        "under NAME")
    parser.add_argument("--weights-dir", type=Path, default=WEIGHTS, metavar="DIR",
                        help="where the bundled weights are (default: the package's); a scaled run of the "
                        "networks' plan ships into a folder of its own")
    parser.add_argument("--checkpoint", default="best.pt",
                        help="which checkpoint of the run to ship (default: best.pt, the best validation "
                        "loss; a checkpoint chosen by play: last.pt or checkpoints/epoch-NNNN.pt)")
    args = parser.parse_args(argv)

    weights_out = args.weights_dir
    gate = check_gate(args.name, args.run / args.checkpoint, args.gate, weights_out)
    model = load_checkpoint(args.run / args.checkpoint)
    extra = model.checkpoint_meta["extra"]
    data = extra["data_path"]
    # The seed streams it carries, its parent's merged in (checkpoints written before training recorded
    # them: its data's); a parent gone missing or changed stops here, before the long scoring.
    if "data_seed_streams" not in extra:
        extra = {**extra, "data_seed_streams": load_manifest(data)["seed_streams"]}
    extra = {**extra, "data_seed_streams": with_parent_streams(extra)}
    scored, scored_command = args.scored_on or (data, args.data_command)
    # Training data made again for every chunk and deleted after (the networks' plan) is gone: the
    # held-out datasets score the model.
    gone = args.scored_on is None and not Path(scored).exists()
    if gone and not args.test:
        raise SystemExit(f"the run's data {scored} is gone: give --test datasets to score the model on")
    scored_manifest = None if gone else load_manifest(scored)
    trained_on = (describe_data(load_manifest(data)) if Path(data).exists()
                  else "deleted after training; its command makes it again")
    own_test = 0 if gone else sum(c["states_per_split"].get("test", 0)
                                  for c in scored_manifest["configurations"])
    # A dataset made for training alone (no test split) is scored on the held-out datasets only.
    result = evaluate_model(model, scored, "test", progress=True)[0] if own_test else None
    if result is not None and result.get("held_out") is False:
        raise SystemExit(f"the test split of {scored} holds games the model learned from: "
                         f"{result.get('held_out_note')}")
    held = {}
    for folder, _command in args.test:
        held[Path(folder).name], _ = evaluate_model(model, folder, "test", progress=True)
    history = json.loads((args.run / "history.json").read_text())
    train_config = json.loads((args.run / "config.json").read_text())["train"]
    weight = train_config.get("certain_weight", 1.0)
    exact = train_config["target"] == "exact"
    target = ("the exact probabilities (soft" if exact else "the true mines (") + \
        " binary cross-entropy on every unknown cell"
    target += f"; cells the engine proves safe or mined weigh {weight:g} times)" if weight != 1.0 else ")"
    if train_config.get("augment"):
        target += "; each training state in a random symmetry of the board, drawn anew each epoch"
    seconds = sum(h["seconds"] for h in history)
    threads = train_config.get("threads") or "all"
    hardware = ", ".join(sorted({h.get("hardware") or "a CPU" for h in history}))
    if "thread" not in hardware:  # runs record their threads with the hardware
        hardware += f", {threads} torch thread(s)"
    init = ""
    if extra.get("init"):
        parent = extra["init"]
        counted = (("epoch", "epochs"), ("examples", "states"), ("steps", "steps"))
        own = [f"{parent[k]:,} {what if parent[k] != 1 else what[:-1]}"
               for k, what in counted if parent.get(k)]
        if parent.get("seconds"):
            own.append(f"{parent['seconds'] / 60:.1f} minutes")
        init = (f" from the weights of `{parent['init']}` (sha256 {parent['sha256'][:12]}"
                + (f"; its own training: {', '.join(own)}" if own else "")
                + "; the checkpoint carries the seed streams of its data after its own)")
    train_command = args.train_command or f"nnsweeper train --config {args.config}"

    save_checkpoint(weights_out / f"{args.name}.pt", model, extra=extra)
    if result is not None:
        to_json(result, weights_out / f"{args.name}_test_metrics.json")
    else:
        (weights_out / f"{args.name}_test_metrics.json").unlink(missing_ok=True)
    if held:
        to_json(held, weights_out / f"{args.name}_heldout_metrics.json")
    own_title = ("Test split of the training dataset (held-out games)" if args.scored_on is None else
                 f"Test split of `{scored}`, the data its initial weights were trained on (held-out games)")
    sections = [] if result is None else [(own_title, scored, scored_command, describe_data(scored_manifest),
                                           result)]
    sections += [(f"Held-out dataset `{Path(folder).name}`", folder, command,
                  describe_data(load_manifest(folder)), held[Path(folder).name])
                 for folder, command in args.test]
    body = []
    for title, folder, command, description, res in sections:
        front = res["frontier"]
        body.append(f"""## {title}

`{folder}`, made by `{command}`: {description}.

Frontier cells: log-loss {front["log_loss"]:.4f} against the exact engine's
{front["log_loss_exact"]:.4f} (ratio {front["log_loss_ratio"]:.3f}); mean absolute error
against the exact probabilities {front["mae_exact"]:.4f}; engine-proven safe cells given
P < 0.02: {100 * front["safe_below_threshold"]:.2f}%; proven mines given P > 0.98:
{100 * front["mine_above_threshold"]:.2f}%.

```
{kinds_text(res)}
```

Decisions on the positions with no proven-safe cell (`nnsweeper.decisions`: the model's safest
cell, interior pooled, against the exact risks):

```
{format_decisions(res["decision"])}
```
""")
    held_json = f" and `{args.name}_heldout_metrics.json`" if held else ""
    gate_arg = f" --gate {args.gate}" if gate else ""
    test_json = f"`{args.name}_test_metrics.json`" if result is not None else "(no test split of its own)"
    card = f"""# Bundled {args.name.upper()}: model card

- Architecture: `{model.arch}`, {model.n_parameters:,} parameters; config
  `{json.dumps(model.config)}`.
- Data: `{data}`, manifest SHA-256 `{extra["data_manifest_sha256"]}`, made by
  `{args.data_command}` ({trained_on}; every decision recorded; train / val / test
  split by game seed).
- Training: `{train_command}`{init} ({len(history)} epochs, shipped: epoch
  {extra["epoch"]} ({args.checkpoint}); {seconds / 60:.1f} minutes of training on {hardware}), then
  `python train/bundle.py {args.name} {args.run} --checkpoint {args.checkpoint} --config {args.config}
  --data-command "..." {" ".join(f'--test {folder} "..."' for folder, _ in args.test)}{gate_arg}`.
- Target: {target}.
- Every configuration's figures (frontier, interior and all cells): {test_json}{held_json}
  beside the weights.

{gate}
{chr(10).join(body)}"""
    write_text_atomic(weights_out / f"{args.name}.md", card)
    print(card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
