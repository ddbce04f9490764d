"""``nnsweeper train``, ``train-value`` and ``evaluate-model``: train and score the models.

``train`` trains a model from a TOML config with overrides
(:func:`nnsweeper.training.train`): a mine-probability model, or a state-value network
when ``[model] arch`` is a value architecture (``value-gnn``, ``value-cnn``);
``train-value`` is ``train`` with the value defaults (:func:`nnsweeper.training.train_value`),
and ``evaluate-model`` scores a model's
probabilities on a dataset split next to the exact engine's
(:func:`nnsweeper.training.evaluate_model`).
"""

from __future__ import annotations

import shlex
from functools import partial
from pathlib import Path

from nnsweeper.cli.core import PROG, device_name, int_in, note, out_prefix


# ----------------------------------------------------------------------- train
def _config_keys(*, value: bool = False) -> str:
    """Every config key with its default and comment, printed after ``train``'s help (``value``:
    ``train-value``'s, with its architectures and defaults).

    The keys are read from the config classes when the help is shown (which imports
    the models), not when the parser is built.
    """
    from nnsweeper.training_config import config_help

    return config_help(value=value)


def _overrides_anywhere(args, extras: list[str]) -> list[str]:
    """Overrides may stand on both sides of an option: those argparse left over join ``args.overrides``."""
    args.overrides += [e for e in extras if "=" in e and not e.startswith("-")]
    return [e for e in extras if e not in args.overrides]


def add_train(sub):
    tr = sub.add_parser(
        "train",
        help="train a mine-probability model (or a value network) from a TOML config",
        description="Train the model a config describes (train/*.toml) on its dataset; write best.pt, "
        "last.pt (state dicts with JSON configs), history.json and resume.pt into its output folder. "
        "Overrides take the form section.key=value with TOML values; the keys are listed below. For "
        "several processes or GPUs run it under torchrun: torchrun --nproc_per_node 2 -m nnsweeper "
        "train --config ...",
        epilog="example: nnsweeper train --config train/cnn_small.toml train.epochs=2 output.dir=runs/try",
        help_tail=_config_keys,
        take_extras=_overrides_anywhere,
    )
    _train_options(tr, _cmd_train)
    return tr


def _train_options(parser, handler) -> None:
    """The options ``train`` and ``train-value`` share, and the handler."""
    parser.add_argument("--config", required=True, metavar="TOML", help="the training config")
    parser.add_argument("overrides", nargs="*", metavar="SECTION.KEY=VALUE", help="config overrides")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in the output folder (train.epochs=N may raise its epochs)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(handler=handler)


def _cmd_train(args, argv) -> int:
    from nnsweeper.training_config import check_config

    return _train(check_config(_checked_tables(args, "training config")), args)


def _checked_tables(args, what: str) -> dict:
    """The tables of ``args.config`` with ``args.overrides`` applied (read once), after a
    ``train.device`` this machine cannot have is refused, before torch and the models are
    imported, as ``--device`` is (:func:`~nnsweeper.cli.core.device_name`).

    The config is then checked with ``nnsweeper.training_config`` alone, which checks ``[data]``,
    ``[train]`` and ``[output]`` before the model's class (and torch) is imported, so that every
    bad setting but the model's is refused at once.
    """
    from nnsweeper.configs import read_toml
    from nnsweeper.models.devices import check_device_name
    from nnsweeper.training_config import TrainingError, apply_overrides

    raw = apply_overrides(read_toml(args.config, what, TrainingError), args.overrides)
    device = raw.get("train", {}).get("device") if isinstance(raw.get("train"), dict) else None
    if isinstance(device, str):
        try:
            check_device_name(device)
        except ValueError as exc:
            raise TrainingError(f"train.device: {exc}") from None
    return raw


def _train(config, args) -> int:
    """Train a checked config as ``train`` and ``train-value`` do: where the logs go (once the run
    has started), then the files."""
    from nnsweeper.training import train

    def started(board: Path | None) -> None:
        if board is not None and not args.quiet:
            print(f"TensorBoard logs go to {board}; watch them with: tensorboard "
                  f"--logdir {shlex.quote(config.output.dir)}", flush=True)

    result = train(config, resume=args.resume, progress=not args.quiet, notify=note, started=started)
    if result.already_finished:
        print(result.already_finished)
    elif not args.quiet and result.history:
        print(f"wrote {result.best} and {result.last}")
    return 0


# ----------------------------------------------------------------- train-value
def add_train_value(sub):
    tv = sub.add_parser(
        "train-value",
        help="train the state-value network of the value solvers from a TOML config (as train does)",
        description="Train a value network on a value dataset (generate-values) as the config says "
        "(sections data, model, train, output; see train/value_gnn.toml), as train does: best.pt, last.pt, "
        "history.json and resume.pt in the output folder. [model] arch defaults to value-gnn (the older "
        "gnn and cnn of these configs mean value-gnn and value-cnn), [train] epochs to 8 and warmup to 0.1; "
        "the older [train] n_jobs is num_workers.",
        epilog="example: nnsweeper train-value --config train/value_gnn.toml train.epochs=2",
        help_tail=partial(_config_keys, value=True),
        take_extras=_overrides_anywhere,
    )
    _train_options(tv, _cmd_train_value)
    return tv


def _cmd_train_value(args, argv) -> int:
    from nnsweeper.training_config import load_value_config

    return _train(load_value_config(_checked_tables(args, "value training config")), args)


# ---------------------------------------------------------------------- resume
def add_resume(sub):
    rs = sub.add_parser(
        "resume",
        help="continue every unfinished training run under a folder",
        description="Continue every training run under FOLDER (default runs) that has not done all its "
        "epochs, one after the other, each with the config it recorded (config.json) from where its "
        "resume.pt stands: the way to run a long training in parts. A run stopped before its first save "
        "starts again; finished runs are skipped. --status lists the runs and where they stand. A run "
        "whose resume.pt is damaged (or, without one, its history.json or config.json) is skipped with a "
        "note that says what of it is left and how to go on, and --status lists it as damaged; the others "
        "go on, and the exit code is 2. A damaged config.json is written again from the config resume.pt "
        "records.",
        epilog="example: nnsweeper resume runs --status",
    )
    rs.add_argument("folder", nargs="?", default="runs",
                    help="a run folder or a folder of them (default: runs)")
    rs.add_argument("--status", action="store_true", help="list the runs and where they stand; train nothing")
    rs.add_argument("--quiet", action="store_true", help="no progress bars")
    rs.set_defaults(handler=_cmd_resume)
    return rs


def _cmd_resume(args, argv) -> int:
    from nnsweeper.training import resume_runs, run_states

    if args.status:
        states = run_states(args.folder)
        for state in states:
            print(state)
        if not states:
            print(f"no training runs under {args.folder}")
        return 2 if any(state.damaged for state in states) else 0
    # A damaged run (or one train refuses) is skipped with a note; the others go on, and the exit code
    # says that one was skipped. A run given alone raises its error instead.
    results = resume_runs(args.folder, progress=not args.quiet, notify=note)
    if not args.quiet:
        print(f"continued {len(results)} run(s)" + "".join(f"; wrote {r.last}" for r in results)
              + (f"; skipped {len(results.skipped)}" if results.skipped else ""))
    return 2 if results.skipped else 0


# -------------------------------------------------------------- evaluate-model
def add_evaluate_model(sub):
    em = sub.add_parser(
        "evaluate-model",
        help="score a model's probabilities on a dataset split, next to the exact engine's",
        description="Score a model on held-out states: log-loss against the truth next to the exact "
        "engine's (and their ratio), mean absolute error against the exact probabilities, ROC AUC, "
        "Brier score, calibration error, and how often engine-proven safe cells get P < 0.02 and "
        "proven mines P > 0.98; frontier "
        "and interior cells apart, overall and per configuration. Then its decisions on the positions "
        "with no proven-safe cell: how often its safest cell (interior pooled) is a lowest-risk cell, "
        "the regret (exact risk of its pick minus the least), how often an unproven cell is rated "
        "below 0.002 or above 0.995, and its error and bias on the five safest cells, by phase of the "
        "game. Writes OUT.json and a reliability diagram OUT.png.",
        epilog="example: nnsweeper evaluate-model --model gnn --data data/mixed --out eval/results/gnn_test",
    )
    em.add_argument("--model", required=True, metavar="NAME|PATH",
                    help="cnn or gnn (the bundled weights) or a checkpoint .pt")
    em.add_argument("--data", required=True, metavar="FOLDER", help="a dataset folder")
    em.add_argument("--split", choices=("train", "val", "test"), default="test",
                    help="which split (default: test)")
    em.add_argument("--batch-size", type=int_in(1), default=128,
                    help="states per batch; fewer on big boards, as a batch holds a bounded number of "
                    "board cells (nnsweeper.datasets.loaders.MAX_BATCH_CELLS) (default: 128)")
    em.add_argument("--max-batches", type=int_in(0), default=0,
                    help="at most this many batches per configuration (default: 0, all)")
    em.add_argument("--device", type=device_name, default="cpu", help="cpu, cuda or auto (default: cpu)")
    em.add_argument("--symmetric", action="store_true",
                    help="score the mean over each board's symmetries (8 for a square board, 4 otherwise), "
                    "as predict_proba(symmetric=True); the GNN's graphs do not change under them")
    em.add_argument("--out", required=True, metavar="PREFIX", help="writes PREFIX.json and PREFIX.png")
    em.add_argument("--quiet", action="store_true", help="no progress bar")
    em.set_defaults(handler=_cmd_evaluate_model)
    return em


def _cmd_evaluate_model(args, argv) -> int:
    from nnsweeper.decisions import format_decisions
    from nnsweeper.metrics import format_metrics, to_json
    from nnsweeper.models import load_model
    from nnsweeper.plots import agg_figure, plot_reliability, save_figure
    from nnsweeper.training import evaluate_model, play_readiness

    out = out_prefix(args.out)
    model = load_model(args.model, device=args.device)
    result, preds = evaluate_model(model, args.data, args.split, batch_size=args.batch_size,
                                   max_batches=args.max_batches, progress=not args.quiet,
                                   name=args.model, notify=note, symmetric=args.symmetric)
    result["model"] = {"name": args.model, "arch": model.arch, "config": model.config,
                       "symmetric": args.symmetric}
    result["data"] = {"path": args.data, "split": args.split}
    result["command"] = shlex.join([PROG, *argv])
    to_json(result, out.with_name(out.name + ".json"))
    fig = agg_figure((9.6, 4.4))
    axes = fig.subplots(1, 2)
    for ax, frontier, name in ((axes[0], True, "frontier cells"), (axes[1], False, "interior cells")):
        part = preds.select(frontier=frontier)
        if part.cells > 0:
            plot_reliability(part, ax, label=_model_label(args.model), title=f"{name} ({args.split} split)")
    save_figure(fig, out.with_name(out.name + ".png"))
    held = ("held out: games the model never saw" if result.get("held_out")
            else "NOT held out: the model learned from some of these games")
    print(f"{args.model} on the {args.split} split of {args.data} ({held}), each figure beside the exact "
          f"engine's:")
    print(format_metrics(result))
    print(format_decisions(result["decision"]))
    print(f"{args.model}: {play_readiness(result, model.arch)}")
    if not args.quiet:
        print(f"wrote {out.with_name(out.name + '.json')} and {out.with_name(out.name + '.png')}")
    return 0


def _model_label(model: str) -> str:
    """A model's name in legends: a bundled model's name, or a checkpoint's run folder and file."""
    path = Path(model)
    if path.suffix != ".pt":
        return model
    return f"{path.parent.name}/{path.stem}" if path.parent.name else path.stem
