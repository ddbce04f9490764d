"""Training of the mine-probability models: the loop, checkpoints, resume, DDP.

A run is described by a TOML config (``train/*.toml``) with the tables ``[data]``,
``[model]``, ``[train]`` and ``[output]``; :mod:`nnsweeper.training_config` reads and
checks it (:func:`load_config`, :func:`check_config`, re-exported here) and lists
every key with its default (``nnsweeper train --help``). :func:`train` runs it: it
checks the dataset and the run folder, builds the model, its loaders
(:meth:`nnsweeper.models.MineModel.make_loader`), AdamW and the schedule, resumes
when asked, then trains epoch after epoch.

The loss is the binary cross-entropy of every unknown (covered, unflagged) cell
against the target, weighted so that the GNN's shared interior prediction counts
once per interior cell. Each epoch ends with a validation pass
(:func:`nnsweeper.metrics.evaluate_predictions`, frontier and interior apart) and
writes ``last.pt`` (and ``best.pt`` when the validation loss improved), each a
state dict with its JSON config (:func:`nnsweeper.models.save_checkpoint`), plus
``resume.pt`` (model, optimiser, schedule, position) for ``--resume``. Resuming
after a kill replays the same batches in the same order, so on the CPU it ends with
the same weights as a run that was never stopped.

Several processes (``torchrun --nproc_per_node N -m nnsweeper train ...``) train
one model with ``DistributedDataParallel`` (gloo on CPU, NCCL on GPUs): each rank
takes every N-th batch; rank 0 validates and writes the files.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping
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
    load_config,
)

__all__ = [
    "TrainingError", "TrainResult", "TrainingConfig", "DataSection", "TrainSection", "OutputSection",
    "SECTIONS", "load_config", "apply_overrides", "check_config", "config_help", "train", "validate",
    "evaluate_model",
]

if TYPE_CHECKING:
    from nnsweeper.models import MineModel

_RESUME = "resume.pt"


def _check_dataset(data: DataSection) -> tuple[Path, dict, str]:
    """The dataset folder, its manifest and the manifest's SHA-256, checked against ``[data]``."""
    from nnsweeper.datasets import load_manifest

    root = Path(data.path)
    manifest = load_manifest(root)
    digest = file_sha256(root / "manifest.json")
    if data.manifest_sha256 and data.manifest_sha256 != digest:
        raise TrainingError(
            f"the dataset in {os.fspath(root)!r} does not match the config: its manifest's SHA-256 is "
            f"{digest[:16]}..., the config asks for {data.manifest_sha256[:16]}..."
        )
    if data.configurations:
        have = {c["key"] for c in manifest["configurations"]}
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


class _Outputs(torch.nn.Module):
    # DistributedDataParallel synchronises gradients through forward(); the models'
    # training interface is outputs(), so it is wrapped as a forward.
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, batch):
        return self.model.outputs(batch)


def _loader(model: MineModel, config: TrainingConfig, root: Path, split: str, *, shuffle: bool, rank: int,
            world: int):
    """The model's loader of one split, with the options of ``[train]`` and ``[data]``."""
    return model.make_loader(root, split, shuffle=shuffle, rank=rank, world_size=world, drop_last=False,
                             configs=list(config.data.configurations or ()) or None,
                             **config.train.loader_options())


def _to(batch, device: torch.device):
    if isinstance(batch, dict):
        return {k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}
    return batch.to(device)


def _loss(out: dict, target: str, certain_weight: float = 1.0) -> torch.Tensor:
    """Weighted mean binary cross-entropy of the logits against the target.

    ``certain_weight`` multiplies the weight of rows whose exact probability is 0 or
    1 (cells the engine proves safe or mined), which sharpens the model there.
    """
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


def _predict(model, loader, *, target: str, max_batches: int, device):
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
            out = model.outputs(_to(batch, device))
            w = float(out["weight"].sum())
            total += float(_loss(out, target)) * w
            weight += w
            acc.add(torch.sigmoid(out["logit"].float()), out["prob"], out["mine"], weight=out["weight"],
                    frontier=out["frontier"])
    model.train(was_training)
    return acc.to_set(), total / max(weight, 1.0)


def validate(model, loader, *, target: str = "exact", max_batches: int = 0, device=None) -> dict:
    """Loss and metrics of ``model`` over ``loader`` (frontier, interior and all cells)."""
    from nnsweeper.metrics import evaluate_predictions

    device = device or model.device
    preds, loss = _predict(model, loader, target=target, max_batches=max_batches, device=device)
    result = evaluate_predictions(preds)
    result["loss"] = loss
    return result


def _distributed() -> tuple[int, int, int]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    return int(os.environ.get("RANK", "0")), world, int(os.environ.get("LOCAL_RANK", "0"))


def train(config: Mapping | TrainingConfig, *, resume: bool = False, progress: bool = True) -> TrainResult:
    """Train a model as ``config`` says (see :func:`load_config`); returns the run's files.

    Parameters
    ----------
    config : TrainingConfig or dict
        A config from :func:`load_config` or :func:`check_config`, or a dict of
        tables (checked here).
    resume : bool, default=False
        Continue the run in ``[output] dir`` from its ``resume.pt``. The config must
        be the one the run started with.
    progress : bool, default=True
        Show progress bars (rank 0 only).

    Raises
    ------
    TrainingError
        A dataset that does not match the config, a run folder in the way (or, with
        ``resume``, nothing to resume or another config), a loss that is not finite
        (naming the epoch and step).
    """
    config = check_config(config)
    rank, world, local = _distributed()
    root, manifest, digest = _check_dataset(config.data)
    run_dir = Path(config.output.dir)
    state = _prepare_run(run_dir, config, digest, resume=resume, rank=rank)
    device = _setup_device(config.train, world=world, local=local)
    model = _build_model(config, device)
    train_loader = _loader(model, config, root, config.data.train_split, shuffle=True, rank=rank, world=world)
    val_loader = _loader(model, config, root, config.data.val_split, shuffle=False, rank=0, world=1)
    run = _Run.start(config, model, device, train_loader, rank=rank, run_dir=run_dir, digest=digest,
                     extra=_checkpoint_extra(config, root, manifest, digest))
    if state is not None:
        run.restore(state)
    net = _distributed_net(model, device, world)
    model.train()
    while run.epoch < config.train.epochs:
        started = time.perf_counter()
        train_loss = _train_epoch(run, net, train_loader, progress=progress)
        if rank == 0:
            _end_epoch(run, val_loader, train_loss, started, progress=progress)
        if world > 1:
            torch.distributed.barrier()
    return TrainResult(run_dir, run_dir / "best.pt", run_dir / "last.pt", run.history)


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
    best: float = math.inf
    history: list[dict] = field(default_factory=list)

    @classmethod
    def start(cls, config: TrainingConfig, model, device, train_loader, **kwargs) -> _Run:
        """A run at its start: AdamW and the warm-up and cosine schedule over every step."""
        t = config.train
        per_epoch = len(train_loader) if not t.max_batches else min(t.max_batches, len(train_loader))
        optimizer = torch.optim.AdamW(model.parameters(), lr=t.lr, weight_decay=t.weight_decay)
        scheduler = _schedule(optimizer, per_epoch * t.epochs, t.warmup, t.min_lr)
        return cls(config, model, device, optimizer, scheduler, per_epoch, **kwargs)

    def restore(self, state: dict) -> None:
        """Continue from a ``resume.pt`` state: weights, optimiser, schedule, position, torch RNG."""
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.epoch, self.batch, self.step = int(state["epoch"]), int(state["batch"]), int(state["step"])
        self.best, self.history = float(state["best"]), json.loads(state["history"])
        torch.set_rng_state(state["torch_rng"])

    def save_resume(self, epoch: int, batch: int) -> None:
        """Write ``resume.pt``: continue at batch ``batch`` of epoch ``epoch`` (rank 0 only)."""
        if self.rank != 0:
            return
        blob = {
            "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(), "epoch": epoch, "batch": batch, "step": self.step,
            "best": self.best, "history": json.dumps(self.history), "torch_rng": torch.get_rng_state(),
            "config": self.config.to_json(sort_keys=True), "data_manifest_sha256": self.digest,
        }
        with atomic_path(self.run_dir / _RESUME) as tmp:
            torch.save(blob, tmp)


def _train_epoch(run: _Run, net, loader, *, progress: bool) -> float:
    """One epoch of optimiser steps (from ``run.batch`` when resuming); returns its mean loss.

    Advances ``run.epoch`` and writes ``resume.pt`` every ``[train] save_every`` steps.
    """
    from tqdm.auto import tqdm

    t = run.config.train
    loader.batch_sampler.set_epoch(run.epoch)
    seen, loss_sum = 0, 0.0
    bar = tqdm(total=run.per_epoch, initial=run.batch, disable=not progress or run.rank != 0,
               desc=f"epoch {run.epoch + 1}/{t.epochs}", unit="batch", leave=False)
    for b, batch in enumerate(loader):
        if b >= run.per_epoch:
            break
        if b < run.batch:
            continue  # resuming mid-epoch: these batches are done
        loss = _step(run, net, batch, b)
        seen += 1
        loss_sum += loss
        bar.update(1)
        bar.set_postfix(loss=f"{loss_sum / seen:.4f}")
        if t.save_every and run.step % t.save_every == 0 and b + 1 < run.per_epoch:
            run.save_resume(run.epoch, b + 1)
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
    run.optimizer.step()
    run.scheduler.step()
    run.step += 1
    return float(loss.detach())


def _end_epoch(run: _Run, val_loader, train_loss: float, started: float, *, progress: bool) -> None:
    """Validate, record the epoch, write ``last.pt`` (``best.pt`` when better), the history, ``resume.pt``."""
    from tqdm.auto import tqdm

    from nnsweeper.metrics import to_json
    from nnsweeper.models import save_checkpoint

    t = run.config.train
    val = validate(run.model, val_loader, target=t.target, max_batches=t.val_max_batches, device=run.device)
    record = {
        "epoch": run.epoch, "step": run.step, "train_loss": train_loss, "val_loss": val["loss"],
        "val_frontier_log_loss_ratio": val["frontier"]["log_loss_ratio"],
        "val_frontier_mae": val["frontier"]["mae_exact"],
        "val_interior_mae": val["interior"]["mae_exact"],
        "lr": run.scheduler.get_last_lr()[0], "seconds": time.perf_counter() - started,
    }
    run.history.append(record)
    improved = val["loss"] < run.best
    run.best = min(run.best, val["loss"])
    meta = {**run.extra, "epoch": run.epoch, "step": run.step, "val": json.loads(to_json(val))}
    save_checkpoint(run.run_dir / "last.pt", run.model, extra=meta)
    if improved:
        save_checkpoint(run.run_dir / "best.pt", run.model, extra=meta)
    to_json(run.history, run.run_dir / "history.json", indent=1)
    run.save_resume(run.epoch, 0)
    if progress:
        tqdm.write(
            f"epoch {run.epoch}: train loss {train_loss:.4f}, val loss {val['loss']:.4f}, "
            f"frontier log-loss ratio {record['val_frontier_log_loss_ratio']:.3f}, "
            f"frontier MAE {record['val_frontier_mae']:.4f}"
        )


def _prepare_run(run_dir: Path, config: TrainingConfig, digest: str, *, resume: bool,
                 rank: int) -> dict | None:
    """Check the run folder; returns the resume state when resuming."""
    path = run_dir / _RESUME
    if resume:
        if not path.exists():
            raise TrainingError(f"nothing to resume in {os.fspath(run_dir)!r}: it has no {_RESUME}")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # a truncated or foreign file: torch raises many kinds
            raise TrainingError(f"cannot read {os.fspath(path)!r} to resume ({type(exc).__name__}); "
                                f"it is damaged: train into a new folder") from None
        if not isinstance(state, dict):
            raise TrainingError(f"{os.fspath(path)!r} is not a resume state of nnsweeper train")
        if state.get("config") != config.to_json(sort_keys=True):
            raise TrainingError(
                f"{os.fspath(run_dir)!r} was started with another config; resume it with the same "
                f"config and overrides, or train into a new folder"
            )
        if state.get("data_manifest_sha256") != digest:
            raise TrainingError(
                f"the dataset changed since {os.fspath(run_dir)!r} began (its manifest SHA-256 differs)"
            )
        return state
    if rank != 0:
        return None  # rank 0 checks and creates the folder (and stops the run if it is in the way)
    if run_dir.exists() and any(run_dir.iterdir()):
        raise TrainingError(
            f"run folder {os.fspath(run_dir)!r} is not empty; use --resume to continue it or choose another "
            f"output.dir"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run_dir / "config.json", config.to_json(indent=1) + "\n")
    return None


def evaluate_model(model, root, split: str = "test", *, batch_size: int = 128, max_batches: int = 0,
                   progress: bool = False):
    """Score a model on one split of a dataset, per configuration and overall.

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

    Returns
    -------
    result : dict
        :func:`nnsweeper.metrics.evaluate_predictions` with ``by`` the configuration
        keys: frontier, interior and all cells, overall and per configuration, each
        figure next to the exact engine's.
    preds : PredictionSet
        Every row, for reliability diagrams.
    """
    from tqdm.auto import tqdm

    from nnsweeper.datasets import load_manifest
    from nnsweeper.metrics import PredictionSet, evaluate_predictions

    manifest = load_manifest(root)
    keys = [c["key"] for c in manifest["configurations"] if c["states_per_split"].get(split, 0)]
    if not keys:
        raise TrainingError(f"the {split!r} split of {os.fspath(root)!r} holds no states")
    sets, labels = [], []
    for key in tqdm(keys, disable=not progress, desc="configurations", unit="config"):
        loader = model.make_loader(root, split, batch_size=batch_size, shuffle=False, configs=[key])
        s, _ = _predict(model, loader, target="exact", max_batches=max_batches, device=model.device)
        sets.append(s)
        labels += [key] * len(s)
    preds = PredictionSet.concat(sets)
    return evaluate_predictions(preds, by=np.array(labels)), preds
