"""Training of the models: the loop, checkpoints, resume, DDP.

A run is described by a TOML config (``train/*.toml``) with the tables ``[data]``,
``[model]``, ``[train]`` and ``[output]``; :mod:`nnsweeper.training_config` reads and
checks it (:func:`load_config`, :func:`check_config`, re-exported here) and lists
every key with its default (``nnsweeper train --help``). :func:`train` runs it: it
checks the dataset and the run folder, builds the model, the loaders of its kind of
input (:func:`nnsweeper.datasets.make_loader`), AdamW and the schedule, resumes
when asked, then trains epoch after epoch.

The loss is the binary cross-entropy of every unknown (covered, unflagged) cell
against the target, weighted so that the GNN's shared interior prediction counts
once per interior cell. Each epoch ends with a validation pass
(:func:`nnsweeper.metrics.evaluate_predictions`, frontier and interior apart) and
writes ``last.pt`` (and ``best.pt`` when the validation loss improved), each a
state dict with its JSON config (:func:`nnsweeper.models.save_checkpoint`), plus
``resume.pt`` (model, optimiser, schedule, position) for ``--resume``. Resuming
after a kill replays the same batches in the same order, so on the CPU it ends with
the same weights as a run that was never stopped. Every file is written atomically,
and Ctrl-C waits while the files of an epoch's end are written, so they always agree;
the interruption (:class:`TrainingInterrupted`) says what ``resume.pt`` holds.

A run resumes with the config it started with, except for ``train.epochs`` (to train a
finished run longer, or stop it sooner), ``output.dir`` (a moved run folder) and
``data.path`` (a moved dataset: its manifest's SHA-256 must not change). With another
``train.epochs`` the warm-up and cosine decay are recomputed over the new number of
steps from the step reached: the learning rate jumps to that schedule's value (up,
when a run is extended), so the weights are not those of a run started with that
number of epochs. The change is recorded in ``resume.pt`` and the checkpoints
(``epochs_changes``). Resuming a run that has done all its epochs trains nothing.

Several processes (``torchrun --nproc_per_node N -m nnsweeper train ...``) train
one model with ``DistributedDataParallel`` (gloo on CPU, NCCL on GPUs): each rank
takes every N-th batch; rank 0 validates and writes the files.

A model of target ``"value"`` (``[model] arch = "value-gnn"`` or ``"value-cnn"``, a
state-value network of :mod:`nnsweeper.models.value`) is trained by the same loop, with
the same files, resume and DDP: its loader (the model's ``inputs`` are ``"value"``) gives
the positions of a value dataset with their exact analyses
(:class:`nnsweeper.datasets.values.PositionBatches`), batches of one board size; the
loss is the cross-entropy of one logit per position against its value label, and the
validation pass :func:`nnsweeper.models.value.value_metrics` (cross-entropy, squared
error against the labels and against each board size's mean value).
:func:`load_value_config` reads its config with the value defaults (``nnsweeper
train-value``, an alias of ``train`` for these configs).

This module is longer than most: a run's life (start, resume, interruption, the files
of an epoch's end) is one state machine, and its checks and messages sit beside the
steps they guard; the config lives in :mod:`nnsweeper.training_config`, the models and
their loaders in :mod:`nnsweeper.models`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from nnsweeper.fileio import atomic_path, file_sha256, write_text_atomic
from nnsweeper.training_config import (
    SECTIONS,
    DataSection,
    OutputSection,
    TrainingConfig,
    TrainingError,
    TrainSection,
    apply_overrides,
    check_config,
    config_help,
    is_value_config,
    load_config,
    load_value_config,
)

__all__ = [
    "TrainingError", "TrainResult", "TrainingConfig", "DataSection", "TrainSection", "OutputSection",
    "SECTIONS", "load_config", "apply_overrides", "check_config", "config_help", "train", "validate",
    "evaluate_model", "KIND_FIELDS", "TrainingInterrupted", "train_value", "load_value_config",
    "is_value_config", "RunState", "run_states", "resume_runs", "TENSORBOARD",
]

if TYPE_CHECKING:
    from nnsweeper.models import MineModel

_RESUME = "resume.pt"
_CONFIG = "config.json"
#: Config keys that may differ when a run resumes (see the module's docstring).
_RESUMABLE_CHANGES = ("train.epochs", "output.dir", "data.path", "train.tensorboard")
#: The folder of a run's TensorBoard logs.
TENSORBOARD = "tensorboard"


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`train`; its message says where the run stands and how to continue."""


def _check_dataset(data: DataSection, *, value: bool = False) -> tuple[Path, dict, str]:
    """The dataset folder, its manifest and the manifest's SHA-256, checked against ``[data]``.

    ``value``: a value network's dataset (:func:`~nnsweeper.datasets.values.load_value_manifest`).
    """
    from nnsweeper.datasets import load_manifest
    from nnsweeper.datasets.values import load_value_manifest

    root = Path(data.path)
    manifest = (load_value_manifest if value else load_manifest)(root)
    digest = file_sha256(root / "manifest.json")
    if data.manifest_sha256 and data.manifest_sha256 != digest:
        raise TrainingError(
            f"the dataset in {os.fspath(root)!r} does not match the config: its manifest's SHA-256 is "
            f"{digest[:16]}..., the config asks for {data.manifest_sha256[:16]}..."
        )
    if data.configurations:
        have = {c["key"] for c in manifest.get("configurations", ())}
        missing = [k for k in data.configurations if k not in have]
        if missing:
            raise TrainingError(
                f"the dataset in {os.fspath(root)!r} does not match the config: it lacks the "
                f"configuration(s) {', '.join(missing)}"
            )
    return root, manifest, digest


# ------------------------------------------------------------------ the loop
@dataclass
class TrainResult:
    """What :func:`train` returns: where the files are and the per-epoch history."""

    run_dir: Path
    best: Path
    last: Path
    history: list[dict] = field(default_factory=list)
    #: When ``resume`` found the run finished (nothing trained): a line that says so.
    already_finished: str | None = None
    #: The folder of the run's TensorBoard logs (None when it writes none).
    tensorboard: Path | None = None


class _Outputs(torch.nn.Module):
    # DistributedDataParallel synchronises gradients through forward(); the models'
    # training interface is outputs(), so it is wrapped as a forward.
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, batch):
        return self.model.outputs(batch)


def _loader(model: MineModel, config: TrainingConfig, root: Path, split: str, *, shuffle: bool, rank: int,
            world: int, configs=None):
    """The loader of the model's inputs for one split, with the options of ``[train]`` and ``[data]``.

    Only the training loader (``shuffle``) augments. ``configs``: these configurations
    only (default: ``[data] configurations``, or all).
    """
    from nnsweeper.datasets import make_loader

    options = config.train.loader_options()
    options["augment"] = options["augment"] and shuffle
    configs = configs or list(config.data.configurations or ()) or None
    return make_loader(model, root, split, shuffle=shuffle, rank=rank, world_size=world, drop_last=False,
                       configs=configs, **options)


def _val_loaders(model: MineModel, config: TrainingConfig, root: Path, manifest: dict):
    """What each epoch validates on: a loader per configuration of the validation split
    (``{key: loader}``, so that the figures come by kind too), or a value network's one loader."""
    split = config.data.val_split
    if _is_value(model):
        return _loader(model, config, root, split, shuffle=False, rank=0, world=1)
    chosen = set(config.data.configurations or ())
    keys = [c["key"] for c in manifest["configurations"]
            if c.get("states_per_split", {}).get(split, 0) and (not chosen or c["key"] in chosen)]
    if not keys:
        raise TrainingError(f"the {split!r} split of {os.fspath(root)!r} holds no states to validate on")
    return {key: _loader(model, config, root, split, shuffle=False, rank=0, world=1, configs=[key])
            for key in keys}


def _to(batch, device: torch.device):
    if isinstance(batch, dict):
        return {k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}
    return batch.to(device)


def _loss(out: dict, target: str, certain_weight: float = 1.0) -> torch.Tensor:
    """Weighted mean binary cross-entropy of the logits against the target.

    ``certain_weight`` multiplies the weight of rows whose exact probability is 0 or
    1 (cells the engine proves safe or mined), which sharpens the model there. A value
    network's outputs (a ``value`` per position) give the mean cross-entropy against
    the value labels (the loss is least at the policy's chance to win).
    """
    if "value" in out:
        return torch.nn.functional.binary_cross_entropy_with_logits(out["logit"].float(),
                                                                    out["value"].float())
    y = out["prob"] if target == "exact" else out["mine"]
    w = out["weight"]
    if certain_weight != 1.0:
        p = out["prob"]
        w = torch.where((p == 0) | (p == 1), w * certain_weight, w)
    bce = torch.nn.functional.binary_cross_entropy_with_logits(
        out["logit"].float(), y.float(), reduction="none"
    )
    return (bce * w).sum() / w.sum().clamp_min(1.0)


def _schedule(optimizer, total_steps: int, warmup: float, min_lr: float):
    warm = max(1, int(round(warmup * total_steps)))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        progress = min(1.0, (step - warm) / max(1, total_steps - warm))
        return min_lr + (1 - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def _predict(model, loader, *, target: str, max_batches: int, device, symmetric: bool = False):
    """Every prediction row of ``model`` over ``loader`` and the mean loss (eval mode, no grad)."""
    from nnsweeper.metrics import PredictionAccumulator

    acc = PredictionAccumulator()
    total, weight = 0.0, 0.0
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        for b, batch in enumerate(loader):
            if max_batches and b >= max_batches:
                break
            # Only asked for when wanted: an architecture's outputs() may not take it.
            out = model.outputs(_to(batch, device), **({"symmetric": True} if symmetric else {}))
            w = float(out["weight"].sum())
            total += float(_loss(out, target)) * w
            weight += w
            acc.add(torch.sigmoid(out["logit"].float()), out["prob"], out["mine"], weight=out["weight"],
                    frontier=out["frontier"])
    model.train(was_training)
    return acc.to_set(), total / max(weight, 1.0)


def validate(model, loader, *, target: str = "exact", max_batches: int = 0, device=None,
             configurations: Mapping | None = None) -> dict:
    """Loss and metrics of ``model`` over ``loader`` (frontier, interior and all cells).

    ``loader`` may be a mapping ``{configuration key: loader}``: then ``max_batches`` is
    shared between them (each takes its ceiling share), the result adds ``"by"`` (each
    configuration's figures) and, with the manifest's ``configurations`` (their dicts by
    key), ``"kinds"``: the figures pooled by each of :data:`KIND_FIELDS` that has more
    than one value among them. A value network's figures are
    :func:`~nnsweeper.models.value.value_metrics` over the loader's positions (all of
    them), with ``loss`` its cross-entropy.
    """
    from nnsweeper.metrics import evaluate_predictions

    if _is_value(model):
        from nnsweeper.models.value import value_metrics

        was_training = model.training
        result = value_metrics(model, loader.positions, loader.batch_size)
        model.train(was_training)
        return {**result, "loss": result["bce"]}
    device = device or model.device
    if not isinstance(loader, Mapping):
        preds, loss = _predict(model, loader, target=target, max_batches=max_batches, device=device)
        return {**evaluate_predictions(preds), "loss": loss}
    share = -(-max_batches // len(loader)) if max_batches else 0
    preds, keys, loss = _predict_by_key(model, loader, target=target, max_batches=share, device=device)
    result = {**evaluate_predictions(preds, by=keys), "loss": loss}
    if configurations is not None:
        result.update(_kinds(preds, keys, configurations))
    return result


def _predict_by_key(model, loaders: Mapping, *, target: str, max_batches: int, device,
                    symmetric: bool = False, progress: bool = False):
    """:func:`_predict` over each loader of ``{key: loader}``: every row, its key, the mean loss."""
    from tqdm.auto import tqdm

    from nnsweeper.metrics import PredictionSet

    sets, total, weight = [], 0.0, 0.0
    for key in tqdm(list(loaders), disable=not progress, desc="configurations", unit="config"):
        s, loss = _predict(model, loaders[key], target=target, max_batches=max_batches, device=device,
                           symmetric=symmetric)
        w = float(s.weight.sum()) if len(s) else 0.0
        sets.append(s)
        total += loss * w
        weight += w
    preds = PredictionSet.concat(sets)
    keys = np.repeat(np.array(list(loaders), dtype=object), [len(s) for s in sets])
    return preds, keys, total / max(weight, 1.0)


def _kinds(preds, keys: np.ndarray, configurations: Mapping) -> dict:
    """``{"kinds": {field: {label: figures}}}`` for each of :data:`KIND_FIELDS` with more than
    one label among the rows' configurations (``{}`` when none has)."""
    from nnsweeper.metrics import evaluate_predictions

    kinds = {}
    present = list(dict.fromkeys(keys.tolist()))
    for kind in KIND_FIELDS:
        label = {key: _kind(configurations[key], kind) for key in present}
        if len(set(label.values())) > 1:
            names = np.array([label[k] for k in keys.tolist()], dtype=object)
            kinds[kind] = evaluate_predictions(preds, by=names)["by"]
    return {"kinds": kinds} if kinds else {}


def _is_value(model) -> bool:
    """Whether ``model`` is a value network (an architecture of target ``"value"``)."""
    return getattr(model, "target", "probability") == "value"


def _distributed() -> tuple[int, int, int]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    return int(os.environ.get("RANK", "0")), world, int(os.environ.get("LOCAL_RANK", "0"))


def train(config: Mapping | TrainingConfig, *, resume: bool = False, progress: bool = True,
          notify: Callable[[str], None] | None = None) -> TrainResult:
    """Train a model as ``config`` says (see :func:`load_config`); returns the run's files.

    A config whose ``[model] arch`` is a value architecture (:func:`is_value_config`)
    trains that value network on a value dataset (see the module's docstring).

    Parameters
    ----------
    config : TrainingConfig or dict
        A config from :func:`load_config` or :func:`check_config`, or a dict of
        tables (checked here).
    resume : bool, default=False
        Continue the run in ``[output] dir`` from its ``resume.pt``. The config must
        be the one the run started with, but for ``train.epochs``, ``output.dir`` and
        ``data.path`` (see the module's docstring: another ``train.epochs`` reshapes
        the learning-rate schedule from the step reached). A run that has done all its
        epochs is not trained again: the result's ``already_finished`` says so.
    progress : bool, default=True
        Show progress bars (rank 0 only).
    notify : callable, optional
        Called with a one-line note when resuming changes the number of epochs (how
        the learning rate changes).

    Raises
    ------
    TrainingError
        A dataset that does not match the config, a run folder in the way (or, with
        ``resume``, nothing to resume or another config, naming each differing key), a
        loss that is not finite (naming the epoch and step).
    TrainingInterrupted
        Ctrl-C (a :class:`KeyboardInterrupt`): its message names the epoch reached,
        what ``resume.pt`` holds and how to continue.
    """
    config = check_config(config)
    rank, world, local = _distributed()
    root, manifest, digest = _check_dataset(config.data, value=is_value_config(config))
    run_dir = Path(config.output.dir)
    state = _prepare_run(run_dir, config, digest, resume=resume, rank=rank)
    if state is not None:
        finished = _finished(run_dir, state, config.train.epochs)
        if finished:
            history = json.loads(state["history"])
            return TrainResult(run_dir, run_dir / "best.pt", run_dir / "last.pt", history,
                               already_finished=finished)
    run = None
    try:
        device = _setup_device(config.train, world=world, local=local)
        model = _build_model(config, device)
        train_loader = _loader(model, config, root, config.data.train_split, shuffle=True, rank=rank,
                               world=world)
        val_loader = _val_loaders(model, config, root, manifest)
        run = _Run.start(config, model, device, train_loader, rank=rank, run_dir=run_dir, digest=digest,
                         extra=_checkpoint_extra(config, root, manifest, digest),
                         configurations={c["key"]: c for c in manifest.get("configurations", ())})
        if state is not None:
            run.restore(state)
            before = _recorded_config(state)["train"]["epochs"]
            if before != config.train.epochs:
                note = run.change_epochs(before)
                if rank == 0:
                    write_text_atomic(run_dir / _CONFIG, config.to_json(indent=1) + "\n")
                    if notify is not None:
                        notify(note)
        net = _distributed_net(model, device, world)
        board = run.board.open(run)
        model.train()
        while run.epoch < config.train.epochs:
            started = time.perf_counter()
            train_loss = _train_epoch(run, net, train_loader, progress=progress)
            if rank == 0:
                _end_epoch(run, val_loader, train_loss, started, progress=progress)
            if world > 1:
                torch.distributed.barrier()
    except KeyboardInterrupt as exc:
        if isinstance(exc, TrainingInterrupted):
            raise
        if run is not None and run.doing:
            raise TrainingInterrupted(run.interrupted()) from None
        saved = None if state is None else (int(state["epoch"]), int(state["batch"]))
        epoch = 0 if state is None else int(state["epoch"])
        raise TrainingInterrupted(_interrupted(
            f"while starting (before epoch {epoch + 1} of {config.train.epochs})", saved, config.train,
            None, rank)) from None
    finally:
        if run is not None:
            run.board.close()
    return TrainResult(run_dir, run_dir / "best.pt", run_dir / "last.pt", run.history, tensorboard=board)


def _finished(run_dir: Path, state: dict, epochs: int) -> str | None:
    """The line that says a resumed run has nothing left to train, or None."""
    done = int(state["epoch"])
    if int(state["batch"]) or done < epochs:
        return None
    history = json.loads(state["history"])
    best = min(history, key=lambda h: h["val_loss"]) if history else None
    where = f"best epoch {best['epoch']}, val loss {best['val_loss']:.4f}" if best else "no history"
    return (
        f"{os.fspath(run_dir)} already finished its {done} epoch{'s' if done != 1 else ''} ({where}); to "
        f"train longer, run the same command with train.epochs=N --resume, N above {done}"
    )


def _setup_device(t: TrainSection, *, world: int, local: int) -> torch.device:
    """Torch threads, the training device (a rank's own GPU under torchrun) and the process group."""
    from nnsweeper.models import resolve_device

    if t.threads:
        torch.set_num_threads(t.threads)
    device = resolve_device(t.device)
    if device.type == "cuda" and world > 1:
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
    if world > 1 and not torch.distributed.is_initialized():
        torch.distributed.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return device


def _build_model(config: TrainingConfig, device: torch.device) -> MineModel:
    """The freshly initialised model (its weights drawn from ``[train] seed``), on ``device``."""
    from nnsweeper.models import MineModel

    torch.manual_seed(config.train.seed)
    return MineModel.from_config(config.model).to(device)


def _checkpoint_extra(config: TrainingConfig, root: Path, manifest: dict, digest: str) -> dict:
    """What every checkpoint records besides the weights: the dataset and the training config.

    The dataset's seed streams travel with the weights, so that an evaluation can
    refuse games the model learned from without the dataset at hand.
    """
    return {"data_manifest_sha256": digest, "data_path": os.fspath(root), "train_config": config.to_dict(),
            "data_seed_streams": manifest.get("seed_streams", [])}


def _distributed_net(model, device: torch.device, world: int) -> torch.nn.Module:
    """What the training steps call: the model's :meth:`outputs`, under DDP with several processes."""
    net = _Outputs(model)
    if world > 1:
        net = torch.nn.parallel.DistributedDataParallel(
            net, device_ids=[device.index] if device.type == "cuda" else None,
            find_unused_parameters=model.find_unused_parameters,
        )
    return net


class _Board:
    """A run's TensorBoard log, ``RUN/tensorboard`` (rank 0 only): every step's loss and
    learning rate, every epoch's validation figures (by kind where the split has kinds)."""

    def __init__(self):
        self.writer = None

    def open(self, run: _Run) -> Path | None:
        """Start writing (a resumed run drops what a stopped one logged past its ``resume.pt``)."""
        if run.rank != 0 or not run.config.train.tensorboard:
            return None
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            import warnings

            warnings.warn("the tensorboard package is not installed (pip install 'nnsweeper[tensorboard]'), "
                          "so this run writes no TensorBoard logs; train.tensorboard=false says so quietly",
                          stacklevel=3)
            return None
        folder = run.run_dir / TENSORBOARD
        # Steps are logged as the count done (1 for the first): a resumed run hides what a
        # stopped one logged after its resume.pt, from step run.step + 1 on.
        self.writer = SummaryWriter(log_dir=os.fspath(folder), purge_step=run.step + 1 if run.step else None)
        if not run.step:
            self.writer.add_text("config", "```\n" + run.config.to_json(indent=1) + "\n```", 0)
        return folder

    def step(self, step: int, loss: float, lr: float) -> None:
        if self.writer is not None:
            self.writer.add_scalar("train/loss", loss, step)
            self.writer.add_scalar("train/lr", lr, step)

    def epoch(self, step: int, record: dict) -> None:
        """The figures of an epoch's line of ``history.json`` (nested ones by kind and label)."""
        if self.writer is None:
            return
        for key, value in record.items():
            if key.startswith("val_") and isinstance(value, int | float):
                self.writer.add_scalar(f"val/{key[4:]}", value, step)
        for key in ("train_loss", "examples", "seconds"):
            self.writer.add_scalar(f"epoch/{key}", record[key], step)
        for kind, labels in record.get("val_kinds", {}).items():
            for label, figures in labels.items():
                for name, value in figures.items():
                    if value is not None:
                        self.writer.add_scalar(f"val_by_{kind}/{name}/{label}", value, step)
        self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


@dataclass
class _Run:
    """One run's model, optimiser and schedule, and how far it got (what ``resume.pt`` holds)."""

    config: TrainingConfig
    model: MineModel
    device: torch.device
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    per_epoch: int
    rank: int
    run_dir: Path
    digest: str
    extra: dict
    #: Epochs done.
    epoch: int = 0
    #: Batches of the current epoch done (when resuming mid-epoch).
    batch: int = 0
    #: Optimiser steps done.
    step: int = 0
    #: Training states seen (each state of every batch of every step done).
    examples: int = 0
    best: float = math.inf
    history: list[dict] = field(default_factory=list)
    #: Each change of ``train.epochs`` on resume: where, from and to.
    epochs_changes: list[dict] = field(default_factory=list)
    #: What ``resume.pt`` holds, ``(epoch, batch)`` as for :meth:`save_resume` (None: nothing yet).
    saved: tuple[int, int] | None = None
    #: Where the run is, for the message of an interruption.
    doing: str = ""
    #: The dataset's configurations by key (the kinds of the validation figures).
    configurations: dict = field(default_factory=dict)
    #: The TensorBoard log (:class:`_Board`; one that writes nothing until :meth:`_Board.open`).
    board: _Board = field(default_factory=lambda: _Board())
    #: The machine the epochs run on, as the history records it.
    hardware: str = ""

    @classmethod
    def start(cls, config: TrainingConfig, model, device, train_loader, **kwargs) -> _Run:
        """A run at its start: AdamW and the warm-up and cosine schedule over every step."""
        t = config.train
        per_epoch = len(train_loader) if not t.max_batches else min(t.max_batches, len(train_loader))
        optimizer = torch.optim.AdamW(model.parameters(), lr=t.lr, weight_decay=t.weight_decay)
        scheduler = _schedule(optimizer, per_epoch * t.epochs, t.warmup, t.min_lr)
        return cls(config, model, device, optimizer, scheduler, per_epoch, hardware=_hardware(device),
                   **kwargs)

    def restore(self, state: dict) -> None:
        """Continue from a ``resume.pt`` state: weights, optimiser, schedule, position, torch RNG."""
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.epoch, self.batch, self.step = int(state["epoch"]), int(state["batch"]), int(state["step"])
        self.examples = int(state.get("examples", 0))
        self.best, self.history = float(state["best"]), json.loads(state["history"])
        self.epochs_changes = json.loads(state.get("epochs_changes", "[]"))
        self.saved = (self.epoch, self.batch)
        torch.set_rng_state(state["torch_rng"])

    def change_epochs(self, before: int) -> str:
        """Follow the schedule of this config's ``train.epochs`` from the step reached; returns a note.

        The restored optimiser holds the learning rate of the old schedule at this
        step; it is set to the new schedule's, which the next steps follow.
        """
        after = self.config.train.epochs
        old_lr = self.optimizer.param_groups[0]["lr"]
        factors = [f(self.scheduler.last_epoch) for f in self.scheduler.lr_lambdas]
        for group, base, factor in zip(self.optimizer.param_groups, self.scheduler.base_lrs, factors,
                                       strict=True):
            group["lr"] = base * factor
        new_lr = self.optimizer.param_groups[0]["lr"]
        self.epochs_changes.append({"epoch": self.epoch, "batch": self.batch, "step": self.step,
                                    "from": before, "to": after})
        where = f"after epoch {self.epoch}" if not self.batch else f"in epoch {self.epoch + 1}"
        return (
            f"{os.fspath(self.run_dir)} continues {where} (step {self.step}) with train.epochs={after} "
            f"instead of {before}: the warm-up and cosine decay now span {after} epochs, so the learning "
            f"rate goes from {old_lr:.3g} to {new_lr:.3g} and the weights will differ from a run started "
            f"with train.epochs={after}"
        )

    def interrupted(self) -> str:
        """The message of a Ctrl-C: where the run is, what ``resume.pt`` holds, how to continue."""
        return _interrupted(self.doing, self.saved, self.config.train, self.per_epoch, self.rank)

    def save_resume(self, epoch: int, batch: int) -> None:
        """Write ``resume.pt``: continue at batch ``batch`` of epoch ``epoch`` (rank 0 only)."""
        if self.rank != 0:
            return
        blob = {
            "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(), "epoch": epoch, "batch": batch, "step": self.step,
            "examples": self.examples,
            "best": self.best, "history": json.dumps(self.history), "torch_rng": torch.get_rng_state(),
            "config": self.config.to_json(sort_keys=True), "data_manifest_sha256": self.digest,
            "epochs_changes": json.dumps(self.epochs_changes),
        }
        with atomic_path(self.run_dir / _RESUME) as tmp:
            torch.save(blob, tmp)
        self.saved = (epoch, batch)


def _hardware(device: torch.device) -> str:
    """What the epochs run on: the GPU's name, or the CPU's with the torch threads."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    from nnsweeper.parallel import machine

    return f"{machine()}, {torch.get_num_threads()} torch thread(s)"


def _interrupted(doing: str, saved: tuple[int, int] | None, t: TrainSection, per_epoch: int | None,
                 rank: int) -> str:
    """The message of a Ctrl-C ``doing`` something while ``resume.pt`` holds ``saved`` (epoch, batch)."""
    head = f"interrupted {doing}"
    if rank != 0:
        return f"{head} (rank {rank}; rank 0 writes {_RESUME})"
    if saved is None:
        when = "at the end of epoch 1" + (f" or after {t.save_every} steps" if t.save_every else "")
        return (f"{head}; nothing is saved yet ({_RESUME} is first written {when}): run the same command "
                f"to start again")
    epoch, batch = saved
    of = f" of {per_epoch}" if per_epoch else ""
    holds = f"the end of epoch {epoch}" if not batch else f"epoch {epoch + 1} up to batch {batch}{of}"
    return f"{head}; {_RESUME} holds {holds}: run the same command with --resume to continue"


@contextlib.contextmanager
def _holding_interrupts():
    """Hold Ctrl-C back while the block writes files that must agree; deliver it afterwards.

    Each file is written atomically, but an epoch's end writes several (a checkpoint's
    ``.pt`` and ``.json``, ``history.json``, ``resume.pt``). Only the main thread can
    handle signals; elsewhere the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        signal.raise_signal(signal.SIGINT)  # handled as it would have been (KeyboardInterrupt)


def _train_epoch(run: _Run, net, loader, *, progress: bool) -> float:
    """One epoch of optimiser steps (from ``run.batch`` when resuming); returns its mean loss.

    Advances ``run.epoch`` and writes ``resume.pt`` every ``[train] save_every`` steps.
    """
    from tqdm.auto import tqdm

    t = run.config.train
    if hasattr(loader, "set_epoch"):
        loader.set_epoch(run.epoch)  # a loader with an order of its own (the value positions)
    else:
        loader.batch_sampler.set_epoch(run.epoch)
        if getattr(loader.dataset, "augment", False):
            loader.dataset.set_epoch(run.epoch)
    seen, loss_sum = 0, 0.0
    bar = tqdm(total=run.per_epoch, initial=run.batch, disable=not progress or run.rank != 0,
               desc=f"epoch {run.epoch + 1}/{t.epochs}", unit="batch", leave=False)
    run.doing = f"in epoch {run.epoch + 1} of {t.epochs}"
    try:
        for b, batch in enumerate(loader):
            if b >= run.per_epoch:
                break
            if b < run.batch:
                continue  # resuming mid-epoch: these batches are done
            run.doing = f"in epoch {run.epoch + 1} of {t.epochs} (batch {b + 1} of {run.per_epoch})"
            loss = _step(run, net, batch, b)
            seen += 1
            loss_sum += loss
            bar.update(1)
            bar.set_postfix(loss=f"{loss_sum / seen:.4f}")
            if t.save_every and run.step % t.save_every == 0 and b + 1 < run.per_epoch:
                run.save_resume(run.epoch, b + 1)
    finally:
        bar.close()
    run.batch = 0
    run.epoch += 1
    return loss_sum / max(seen, 1)


def _step(run: _Run, net, batch, b: int) -> float:
    """One optimiser step on batch ``b``; returns its loss."""
    t, device = run.config.train, run.device
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        out = net(_to(batch, device))
    loss = _loss(out, t.target, t.certain_weight)
    if not torch.isfinite(loss.detach()):
        raise TrainingError(
            f"the loss became {float(loss.detach())} at epoch {run.epoch + 1}, step {run.step + 1} "
            f"(batch {b + 1}); lower train.lr or check the dataset"
        )
    run.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if t.grad_clip:
        torch.nn.utils.clip_grad_norm_(run.model.parameters(), t.grad_clip)
    lr = run.scheduler.get_last_lr()[0]
    run.optimizer.step()
    run.scheduler.step()
    run.step += 1
    run.examples += _states(batch)
    value = float(loss.detach())
    run.board.step(run.step, value, lr)
    return value


def _states(batch) -> int:
    """The training states in a batch: graphs, grids or value positions."""
    if isinstance(batch, Mapping):
        first = batch.get("value", batch.get("x"))
        return 0 if first is None else len(first)
    return int(getattr(batch, "num_graphs", 0))


def _end_epoch(run: _Run, val_loader, train_loss: float, started: float, *, progress: bool) -> None:
    """Validate, record the epoch, write ``last.pt`` (``best.pt`` when better), the history, ``resume.pt``."""
    from tqdm.auto import tqdm

    from nnsweeper.metrics import to_json
    from nnsweeper.models import save_checkpoint

    t = run.config.train
    run.doing = f"while validating epoch {run.epoch} of {t.epochs}"
    val = validate(run.model, val_loader, target=t.target, max_batches=t.val_max_batches, device=run.device,
                   configurations=run.configurations)
    record = {"epoch": run.epoch, "step": run.step, "examples": run.examples, "train_loss": train_loss,
              "val_loss": val["loss"], **_val_record(run.model, val),
              "lr": run.scheduler.get_last_lr()[0], "seconds": time.perf_counter() - started,
              "hardware": run.hardware}
    run.history.append(record)
    improved = val["loss"] < run.best
    run.best = min(run.best, val["loss"])
    meta = {**run.extra, "epoch": run.epoch, "step": run.step, "val": json.loads(to_json(val))}
    if run.epochs_changes:
        meta["epochs_changes"] = run.epochs_changes
    run.doing = f"after epoch {run.epoch} of {t.epochs}"
    with _holding_interrupts():
        save_checkpoint(run.run_dir / "last.pt", run.model, extra=meta)
        if improved:
            save_checkpoint(run.run_dir / "best.pt", run.model, extra=meta)
        to_json(run.history, run.run_dir / "history.json", indent=1)
        run.save_resume(run.epoch, 0)
    run.board.epoch(run.step, record)
    if progress:
        if _is_value(run.model):
            more = (f"squared error {record['val_mse']:.5f} (each board size's mean value: "
                    f"{record['val_mse_mean']:.5f})")
        else:
            more = (f"frontier log-loss ratio {record['val_frontier_log_loss_ratio']:.3f}, "
                    f"frontier MAE {record['val_frontier_mae']:.4f}")
        tqdm.write(f"epoch {run.epoch}: train loss {train_loss:.4f}, val loss {val['loss']:.4f}, {more}")


def _val_record(model, val: dict) -> dict:
    """The validation figures of an epoch's line in ``history.json``, besides its loss."""
    if _is_value(model):
        return {"val_mse": val["mse"], "val_mse_mean": val["mse_mean"], "val_brier": val["brier"]}
    record = {**_frontier_figures(val, "val_"), "val_interior_mae": val["interior"]["mae_exact"]}
    if "kinds" in val:
        record["val_kinds"] = {kind: {label: _frontier_figures(figures) for label, figures in labels.items()}
                               for kind, labels in val["kinds"].items()}
    return record


def _frontier_figures(result: dict, prefix: str = "") -> dict:
    """The frontier figures an epoch records: log-loss ratio to the exact engine, MAE, and
    the shares of proven-safe cells called safe (P < 0.02) and of proven mines called mines."""
    from nnsweeper.metrics import to_json

    f = json.loads(to_json(result["frontier"]))  # NaN (no such cells) as None
    return {f"{prefix}frontier_log_loss_ratio": f["log_loss_ratio"], f"{prefix}frontier_mae": f["mae_exact"],
            f"{prefix}frontier_safe_below": f["safe_below_threshold"],
            f"{prefix}frontier_mine_above": f["mine_above_threshold"]}


def _prepare_run(run_dir: Path, config: TrainingConfig, digest: str, *, resume: bool,
                 rank: int) -> dict | None:
    """Check the run folder; returns the resume state when resuming.

    A folder that holds only ``config.json`` (and TensorBoard logs) is a run stopped
    before its first save: it starts again (without ``resume``), its logs cleared.
    """
    path = run_dir / _RESUME
    if resume:
        if not path.exists():
            started = (run_dir / _CONFIG).exists()
            raise TrainingError(
                f"nothing to resume in {os.fspath(run_dir)!r}: it has no {_RESUME}"
                + ("; the run stopped before its first save: run the same command without --resume to "
                   "start it again" if started else "")
            )
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # a truncated or foreign file: torch raises many kinds
            raise TrainingError(f"cannot read {os.fspath(path)!r} to resume ({type(exc).__name__}); "
                                f"it is damaged: train into a new folder") from None
        if not isinstance(state, dict):
            raise TrainingError(f"{os.fspath(path)!r} is not a resume state of nnsweeper train")
        _check_same_config(run_dir, _recorded_config(state, path), config)
        if state.get("data_manifest_sha256") != digest:
            raise TrainingError(
                f"the dataset changed since {os.fspath(run_dir)!r} began (its manifest SHA-256 differs)"
            )
        done, batch, epochs = int(state["epoch"]), int(state["batch"]), config.train.epochs
        if epochs < done + (1 if batch else 0):
            where = (f"is in epoch {done + 1} ({_RESUME} holds it up to batch {batch}), past"
                     if batch else f"has done {done} epoch{'s' if done != 1 else ''}, more than")
            raise TrainingError(
                f"{os.fspath(run_dir)!r} {where} train.epochs={epochs}: give "
                f"train.epochs={done + (1 if batch else 0)} or more, or leave out train.epochs to keep its "
                f"{_recorded_config(state)['train']['epochs']}"
            )
        return state
    if rank != 0:
        return None  # rank 0 checks and creates the folder (and stops the run if it is in the way)
    if run_dir.exists() and any(p.name not in (_CONFIG, TENSORBOARD) for p in run_dir.iterdir()):
        raise TrainingError(
            f"run folder {os.fspath(run_dir)!r} is not empty; use --resume to continue it or choose another "
            f"output.dir"
        )
    # What a run stopped before its first save logged goes with it.
    shutil.rmtree(run_dir / TENSORBOARD, ignore_errors=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run_dir / _CONFIG, config.to_json(indent=1) + "\n")
    return None


def _recorded_config(state: dict, path: Path | None = None) -> dict:
    """The config a resume state records (a dict of tables)."""
    try:
        recorded = json.loads(state.get("config") or "null")
    except (TypeError, ValueError):
        recorded = None
    if not isinstance(recorded, dict) or not all(isinstance(recorded.get(s), dict) for s in SECTIONS):
        where = os.fspath(path) if path is not None else _RESUME
        raise TrainingError(f"{where!r} records no usable config: it is not a resume state of nnsweeper "
                            f"train")
    return recorded


def _toml(value) -> str:
    """A config value as it is typed in an override (``none`` when it is not set)."""
    return "none" if value is None else json.dumps(value)


def _check_same_config(run_dir: Path, recorded: dict, config: TrainingConfig) -> None:
    """Refuse to resume with a config that differs from the run's but in :data:`_RESUMABLE_CHANGES`."""
    now = config.to_dict()
    differ = []
    for section in SECTIONS:
        old, new = recorded.get(section, {}), now[section]
        for key in [*old, *(k for k in new if k not in old)]:
            label = f"{section}.{key}"
            if label not in _RESUMABLE_CHANGES and old.get(key) != new.get(key):
                differ.append((label, old.get(key), new.get(key)))
    if not differ:
        return
    changes = "; ".join(f"{k} is {_toml(b)}, the run has {_toml(a)}" for k, a, b in differ)
    typed = " ".join(f"{k}={_toml(a)}" for k, a, _ in differ if a is not None)
    raise TrainingError(
        f"cannot resume {os.fspath(run_dir)!r} with another config: {changes} (on resume only "
        f"{', '.join(_RESUMABLE_CHANGES)} may change); resume with the config it started with "
        f"(recorded in {os.fspath(run_dir / _CONFIG)})" + (f" or the overrides {typed}" if typed else "")
        + ", or train the new config into another output.dir"
    )


#: What :func:`evaluate_model` pools a dataset's configurations by: the board (size, mines
#: and first-click rule), the behaviour policy, the flag mode, and policy with flag mode.
KIND_FIELDS: tuple[str, ...] = ("board", "policy", "flags", "policy_flags")


def _kind(config: dict, field: str) -> str:
    """The label of a manifest configuration for one of :data:`KIND_FIELDS`."""
    rule = config.get("first_click", "safe")
    board = f"{config['rows']}x{config['cols']}-m{config['mines']}" + ("" if rule == "safe" else f"-{rule}")
    # Manifests written before policies and flag modes existed hold csp games with every flag.
    policy, flags = config.get("policy", "csp"), config.get("flags", "all")
    return {"board": board, "policy": policy, "flags": flags, "policy_flags": f"{policy}-{flags}"}[field]


def evaluate_model(model, root, split: str = "test", *, batch_size: int = 128, max_batches: int = 0,
                   progress: bool = False, name: str | None = None,
                   notify: Callable[[str], None] | None = None, symmetric: bool = False):
    """Score a model on one split of a dataset, per configuration and overall.

    The split's game seeds are compared with the seed streams the model's checkpoint
    records (its training dataset's): scoring a model on games it was trained or
    validated on is allowed (it shows over-fitting) but the figures are not held-out.

    Parameters
    ----------
    model : MineModel
    root : str or os.PathLike
        A dataset folder.
    split : {"train", "val", "test"}, default="test"
    batch_size : int, default=128
    max_batches : int, default=0
        At most this many batches per configuration (0: all).
    progress : bool, default=False
    name : str, optional
        What to call the model in the note (default: its architecture).
    notify : callable, optional
        Called, before any scoring, with a one-line note when the split holds games
        the model learned from.
    symmetric : bool, default=False
        Score the mean over each board's symmetries (``predict_proba(symmetric=True)``).

    Returns
    -------
    result : dict
        :func:`nnsweeper.metrics.evaluate_predictions` with ``by`` the configuration
        keys: frontier, interior and all cells, overall and per configuration, each
        figure next to the exact engine's. ``kinds`` pools the configurations by each
        field of :data:`KIND_FIELDS` that takes more than one value in the split
        (``{field: {label: regions}}``; labels such as ``"16x30-m99"``, ``"reveal"``,
        ``"none"``, ``"reveal-none"``). ``held_out`` is False when the split holds
        games of the model's training or validation split (``held_out_note`` says
        which), True when it holds none, None when the checkpoint records no seeds.
    preds : PredictionSet
        Every row, for reliability diagrams.
    """
    from nnsweeper.datasets import load_manifest, make_loader
    from nnsweeper.metrics import evaluate_predictions

    manifest = load_manifest(root)
    keys = [c["key"] for c in manifest["configurations"] if c["states_per_split"].get(split, 0)]
    if not keys:
        raise TrainingError(f"the {split!r} split of {os.fspath(root)!r} holds no states")
    held_out, note = _held_out(model, manifest, root, split, name or model.arch)
    if note and notify is not None:
        notify(note)
    loaders = {key: make_loader(model, root, split, batch_size=batch_size, shuffle=False, configs=[key])
               for key in keys}
    preds, row_keys, _ = _predict_by_key(model, loaders, target="exact", max_batches=max_batches,
                                         device=model.device, symmetric=symmetric, progress=progress)
    result = evaluate_predictions(preds, by=row_keys)
    result.update(_kinds(preds, row_keys, {c["key"]: c for c in manifest["configurations"]}))
    result["held_out"] = held_out
    if note:
        result["held_out_note"] = note
    return result, preds


def _held_out(model, manifest: dict, root, split: str, name: str) -> tuple[bool | None, str | None]:
    """Whether ``split`` of a dataset is new to ``model`` (None: unknown), and a note when it is not.

    The model's checkpoint records its dataset's seed streams and training config; the
    games of its training and validation splits are the ones it learned from.
    """
    from nnsweeper.seeds import manifest_seeds

    extra = (getattr(model, "checkpoint_meta", None) or {}).get("extra") or {}
    streams = extra.get("data_seed_streams")
    if not streams or not isinstance(manifest.get("seed_streams"), list):
        return None, None
    data = (extra.get("train_config") or {}).get("data") or {}
    roles = ((data.get("train_split") or "train", "trained on"),
             (data.get("val_split") or "val", "validated on to choose its best epoch"))
    ours = manifest_seeds(manifest, [split]).get(split, np.zeros(0, dtype=np.int64))
    for theirs_split, role in roles:
        theirs = manifest_seeds({"seed_streams": streams}, [theirs_split]).get(theirs_split)
        shared = 0 if theirs is None else np.intersect1d(ours, theirs).size
        if not shared:
            continue
        where = f"split {theirs_split!r} of its dataset"
        if extra.get("data_path"):
            where += f" {os.fspath(extra['data_path'])}"
        entropy = sorted({int(e["entropy"]) for e in streams
                          if e.get("split") == theirs_split and "entropy" in e})
        if entropy:
            where += f", seed {', '.join(map(str, entropy))}"
        return False, (
            f"split {split!r} of {os.fspath(root)}: {shared} of its {ours.size} games are games {name} was "
            f"{role} ({where}): these figures are not held-out"
        )
    return True, None


# ------------------------------------------------------------------ every unfinished run
@dataclass(frozen=True)
class RunState:
    """Where a run folder stands (:func:`run_states`)."""

    #: The run folder.
    run_dir: Path
    #: Epochs done and asked for, and batches of the next epoch done.
    epoch: int
    epochs: int
    batch: int

    @property
    def finished(self) -> bool:
        return self.epoch >= self.epochs and not self.batch

    def __str__(self) -> str:
        where = (f"{self.epoch} of {self.epochs} epochs" if not self.batch
                 else f"{self.epoch} of {self.epochs} epochs and {self.batch} batches of the next")
        return f"{os.fspath(self.run_dir)}: {where}" + (" (finished)" if self.finished else "")


def run_states(root) -> list[RunState]:
    """Every training run under ``root`` (a run folder, or a folder of them, searched at any
    depth): folders with the ``config.json`` that :func:`train` writes first, in path order.

    A run with ``resume.pt`` stands where that file says; one without has done nothing
    yet (it stopped before its first save, or has not started).
    """
    root = Path(root)
    if not root.is_dir():
        raise TrainingError(f"{os.fspath(root)!r} is not a folder of training runs")
    states = []
    for config in sorted(root.rglob(_CONFIG)):
        run_dir = config.parent
        try:
            recorded = json.loads(config.read_text(encoding="utf-8"))
            epochs = int(recorded["train"]["epochs"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # another program's config.json
        epoch = batch = 0
        if (run_dir / _RESUME).is_file():
            state = torch.load(run_dir / _RESUME, map_location="cpu", weights_only=True)
            epoch, batch = int(state["epoch"]), int(state["batch"])
            epochs = int(_recorded_config(state, run_dir / _RESUME)["train"]["epochs"])
        states.append(RunState(run_dir, epoch, epochs, batch))
    return states


def resume_runs(root, *, progress: bool = True,
                notify: Callable[[str], None] | None = None) -> list[TrainResult]:
    """Continue every unfinished run under ``root`` (:func:`run_states`), one after the other,
    each with the config it recorded (``config.json``): a long training started in parts,
    after a kill or on another day, resumed by one call (``nnsweeper resume``).

    A run that had not saved yet starts again. The results are those of :func:`train`.
    """
    results = []
    for state in run_states(root):
        if state.finished:
            continue
        config = check_config(json.loads((state.run_dir / _CONFIG).read_text(encoding="utf-8")))
        # The folder may have moved since the run began: it is where the run is now.
        config = check_config(apply_overrides(config, [f"output.dir={json.dumps(os.fspath(state.run_dir))}"]))
        if notify is not None:
            notify(f"continuing {state}")
        resume = (state.run_dir / _RESUME).is_file()
        results.append(train(config, resume=resume, progress=progress, notify=notify))
    return results


# ------------------------------------------------------------------ the value target
def train_value(config, overrides=(), *, resume: bool = False, progress: bool = True,
                notify: Callable[[str], None] | None = None) -> TrainResult:
    """Train a value network: :func:`train` of :func:`load_value_config` (``nnsweeper train-value``).

    ``config`` is a TOML path, a dict of tables or a checked config; its ``[model] arch``
    defaults to ``"value-gnn"`` (the older ``"gnn"`` and ``"cnn"`` name the value
    networks) and its older ``[train] n_jobs`` is ``num_workers``. The other arguments
    are :func:`train`'s.
    """
    return train(load_value_config(config, overrides), resume=resume, progress=progress, notify=notify)
