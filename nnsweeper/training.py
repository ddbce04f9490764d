"""Training of the mine-probability models: configs, the loop, checkpoints, resume, DDP.

A run is described by a TOML config (``train/*.toml``) with four tables:

``[data]``
    ``path`` (a dataset folder from :func:`nnsweeper.datasets.generate`), optionally
    ``manifest_sha256`` (the SHA-256 of its ``manifest.json``) and ``configurations``
    (configuration keys the dataset must hold): a dataset that does not match is
    refused. ``train_split`` / ``val_split`` name the splits (default train / val).
``[model]``
    ``arch`` (``cnn`` or ``gnn``) and the architecture's settings
    (:class:`nnsweeper.models.MineCNN`, :class:`nnsweeper.models.MineGNN`).
``[train]``
    epochs, batch size, AdamW's learning rate and weight decay, the schedule (linear
    warm-up, then cosine decay), the target (``exact``: the exact probabilities, the
    default; ``truth``: the hard labels), device (``auto | cpu | cuda``), seed, ...
    (see :data:`DEFAULTS`).
``[output]``
    ``dir``: the run folder.

Every value can be overridden on the command line as ``section.key=value`` (TOML
syntax for the value: ``train.epochs=2``, ``model.dilations=[1,2]``).

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

import copy
import json
import math
import os
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nnsweeper.errors import NnsweeperError, check_int
from nnsweeper.fileio import atomic_path, file_sha256, write_text_atomic

__all__ = [
    "DEFAULTS", "TrainingError", "TrainResult", "load_config", "apply_overrides", "check_config", "train",
    "validate", "evaluate_model",
]


class TrainingError(NnsweeperError):
    """A training config, dataset or run folder that cannot be used, or a run that diverged."""


#: Every config key and its default (``None``: required or optional without default).
DEFAULTS: dict[str, dict[str, Any]] = {
    "data": {
        "path": None,
        "manifest_sha256": None,
        "configurations": None,
        "train_split": "train",
        "val_split": "val",
    },
    "model": {"arch": None},
    "train": {
        "epochs": 10,
        "batch_size": 128,
        "lr": 2e-3,
        "weight_decay": 1e-4,
        "warmup": 0.05,
        "min_lr": 0.02,
        "target": "exact",
        "grad_clip": 1.0,
        "seed": 0,
        "device": "auto",
        "num_workers": 0,
        "threads": 0,
        "max_batches": 0,
        "val_max_batches": 0,
        "save_every": 0,
        "pool": 4,
        "cache_shards": 8,
        "in_memory": False,
        "certain_weight": 1.0,
    },
    "output": {"dir": None},
}
_TARGETS = ("exact", "truth")
_RESUME = "resume.pt"


# ------------------------------------------------------------------ configs
def _parse_value(text: str):
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text  # a bare word: a string


def apply_overrides(config: dict, overrides) -> dict:
    """A copy of ``config`` with ``section.key=value`` overrides applied (values in TOML syntax)."""
    out = copy.deepcopy(config)
    for item in overrides or ():
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise TrainingError(f"an override must look like section.key=value; got {item!r}")
        dotted, text = item.split("=", 1)
        section, key = dotted.strip().split(".", 1)
        if section not in DEFAULTS:
            raise TrainingError(
                f"unknown config section {section!r} in {item!r}; sections: {', '.join(DEFAULTS)}"
            )
        out.setdefault(section, {})[key.strip()] = _parse_value(text.strip())
    return out


def load_config(path, overrides=()) -> dict:
    """Read a TOML training config, apply overrides, fill defaults and check it.

    Raises
    ------
    TrainingError
        A missing or malformed file, unknown sections or keys, bad values.
    """
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TrainingError(f"no training config at {os.fspath(path)!r}") from None
    except tomllib.TOMLDecodeError as exc:
        raise TrainingError(f"{os.fspath(path)!r} is not valid TOML: {exc}") from None
    return check_config(apply_overrides(raw, overrides))


def check_config(raw: dict) -> dict:
    """``raw`` completed with :data:`DEFAULTS` and checked (model keys are checked by the model)."""
    from nnsweeper.models import MineModel

    unknown = set(raw) - set(DEFAULTS)
    if unknown:
        raise TrainingError(f"unknown config section(s) {sorted(unknown)}; sections: {', '.join(DEFAULTS)}")
    config = {}
    for section, defaults in DEFAULTS.items():
        given = dict(raw.get(section, {}))
        if section != "model":
            bad = set(given) - set(defaults)
            if bad:
                raise TrainingError(
                    f"unknown key(s) {sorted(bad)} in [{section}]; keys: {', '.join(defaults)}"
                )
        config[section] = {**defaults, **given}
    if not config["data"]["path"]:
        raise TrainingError("[data] path is required: the dataset folder to train on")
    if not config["output"]["dir"]:
        raise TrainingError("[output] dir is required: the run folder")
    try:
        config["model"] = MineModel.from_config(config["model"]).config
    except ValueError as exc:
        raise TrainingError(f"[model]: {exc}") from None
    t = config["train"]
    for key in ("epochs", "batch_size"):
        _check_int(f"train.{key}", t[key], 1)
    for key in ("max_batches", "val_max_batches", "save_every", "seed"):
        _check_int(f"train.{key}", t[key], 0)
    # Loader processes and torch threads: bounded like every other n_jobs.
    from nnsweeper.parallel import max_jobs

    for key in ("num_workers", "threads"):
        check_int(f"train.{key}", t[key], 0, TrainingError, maximum=max_jobs())
    _check_int("train.pool", t["pool"], 1)
    _check_int("train.cache_shards", t["cache_shards"], 1)
    for key, lo, hi in (("lr", 0, math.inf), ("weight_decay", 0, math.inf), ("warmup", 0, 1),
                        ("min_lr", 0, 1), ("grad_clip", 0, math.inf), ("certain_weight", 0, math.inf)):
        v = t[key]
        number = not isinstance(v, bool) and isinstance(v, int | float)
        positive = key in ("lr", "certain_weight")
        if not number or not lo <= v <= hi or (positive and v == 0):
            above = " above 0" if positive else ""
            raise TrainingError(f"train.{key} must be a number in [{lo}, {hi}]{above}; got {v!r}")
        t[key] = float(v)
    if not isinstance(t["in_memory"], bool):
        raise TrainingError(f"train.in_memory must be true or false; got {t['in_memory']!r}")
    if t["target"] not in _TARGETS:
        raise TrainingError(f"train.target must be one of {', '.join(_TARGETS)}; got {t['target']!r}")
    if t["device"] not in ("auto", "cpu", "cuda") and not str(t["device"]).startswith("cuda:"):
        raise TrainingError(f"train.device must be auto, cpu or cuda; got {t['device']!r}")
    return config


def _check_int(name: str, value, minimum: int) -> int:
    return check_int(name, value, minimum, TrainingError)


def _check_dataset(config: dict) -> tuple[Path, dict, str]:
    """The dataset folder, its manifest and the manifest's SHA-256, checked against the config."""
    from nnsweeper.datasets import load_manifest

    data = config["data"]
    root = Path(data["path"])
    manifest = load_manifest(root)
    digest = file_sha256(root / "manifest.json")
    if data["manifest_sha256"] and data["manifest_sha256"] != digest:
        raise TrainingError(
            f"the dataset in {os.fspath(root)!r} does not match the config: its manifest's SHA-256 is "
            f"{digest[:16]}..., the config asks for {str(data['manifest_sha256'])[:16]}..."
        )
    if data["configurations"]:
        have = {c["key"] for c in manifest["configurations"]}
        missing = [k for k in data["configurations"] if k not in have]
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


def _loader(config: dict, root: Path, split: str, *, shuffle: bool, rank: int, world: int):
    from nnsweeper.datasets import graph_loader, grid_loader

    t = config["train"]
    kw = dict(batch_size=t["batch_size"], shuffle=shuffle, seed=t["seed"], num_workers=t["num_workers"],
              pool=t["pool"], cache_shards=t["cache_shards"], rank=rank, world_size=world,
              drop_last=False, configs=config["data"]["configurations"] or None, in_memory=t["in_memory"])
    if config["model"]["arch"] == "gnn":
        return graph_loader(root, split, cell_edges=config["model"].get("cell_edges", True), **kw)
    return grid_loader(root, split, **kw)


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


def train(config: dict, *, resume: bool = False, progress: bool = True) -> TrainResult:
    """Train a model as ``config`` says (see :func:`load_config`); returns the run's files.

    Parameters
    ----------
    config : dict
        A checked config (:func:`load_config` or :func:`check_config`).
    resume : bool, default=False
        Continue the run in ``config["output"]["dir"]`` from its ``resume.pt``. The
        config must be the one the run started with.
    progress : bool, default=True
        Show progress bars (rank 0 only).

    Raises
    ------
    TrainingError
        A dataset that does not match the config, a run folder in the way (or, with
        ``resume``, nothing to resume or another config), a loss that is not finite
        (naming the epoch and step).
    """
    from tqdm.auto import tqdm

    from nnsweeper.metrics import to_json
    from nnsweeper.models import MineModel, resolve_device, save_checkpoint

    config = check_config(config)
    t = config["train"]
    rank, world, local = _distributed()
    run_dir = Path(config["output"]["dir"])
    root, manifest, digest = _check_dataset(config)
    state = _prepare_run(run_dir, config, digest, resume=resume, rank=rank)

    if t["threads"]:
        torch.set_num_threads(t["threads"])
    device = resolve_device(t["device"])
    if device.type == "cuda" and world > 1:
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
    if world > 1 and not torch.distributed.is_initialized():
        torch.distributed.init_process_group("nccl" if device.type == "cuda" else "gloo")

    torch.manual_seed(t["seed"])
    model = MineModel.from_config(config["model"]).to(device)
    train_loader = _loader(config, root, config["data"]["train_split"], shuffle=True, rank=rank, world=world)
    val_loader = _loader(config, root, config["data"]["val_split"], shuffle=False, rank=0, world=1)
    per_epoch = len(train_loader) if not t["max_batches"] else min(t["max_batches"], len(train_loader))
    total_steps = per_epoch * t["epochs"]
    optimizer = torch.optim.AdamW(model.parameters(), lr=t["lr"], weight_decay=t["weight_decay"])
    scheduler = _schedule(optimizer, total_steps, t["warmup"], t["min_lr"])
    epoch, start_batch, step, best, history = 0, 0, 0, math.inf, []
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        epoch, start_batch, step = int(state["epoch"]), int(state["batch"]), int(state["step"])
        best, history = float(state["best"]), json.loads(state["history"])
        torch.set_rng_state(state["torch_rng"])
    net = _Outputs(model)
    if world > 1:
        net = torch.nn.parallel.DistributedDataParallel(
            net, device_ids=[device.index] if device.type == "cuda" else None,
            find_unused_parameters=config["model"]["arch"] == "gnn",
        )
    # The dataset's seed streams travel with the weights, so that an evaluation can
    # refuse games the model learned from without the dataset at hand.
    extra = {"data_manifest_sha256": digest, "data_path": os.fspath(root), "train_config": config,
             "data_seed_streams": manifest.get("seed_streams", [])}

    def save_resume(e: int, b: int) -> None:
        if rank != 0:
            return
        blob = {
            "model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(), "epoch": e, "batch": b, "step": step, "best": best,
            "history": json.dumps(history), "torch_rng": torch.get_rng_state(),
            "config": json.dumps(config, sort_keys=True), "data_manifest_sha256": digest,
        }
        with atomic_path(run_dir / _RESUME) as tmp:
            torch.save(blob, tmp)

    autocast = device.type == "cuda"
    model.train()
    while epoch < t["epochs"]:
        train_loader.batch_sampler.set_epoch(epoch)
        t0 = time.perf_counter()
        seen, loss_sum = 0, 0.0
        bar = tqdm(total=per_epoch, initial=start_batch, disable=not progress or rank != 0,
                   desc=f"epoch {epoch + 1}/{t['epochs']}", unit="batch", leave=False)
        for b, batch in enumerate(train_loader):
            if b >= per_epoch:
                break
            if b < start_batch:
                continue  # resuming mid-epoch: these batches are done
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
                out = net(_to(batch, device))
            loss = _loss(out, t["target"], t["certain_weight"])
            if not torch.isfinite(loss.detach()):
                raise TrainingError(
                    f"the loss became {float(loss.detach())} at epoch {epoch + 1}, step {step + 1} "
                    f"(batch {b + 1}); lower train.lr or check the dataset"
                )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if t["grad_clip"]:
                torch.nn.utils.clip_grad_norm_(model.parameters(), t["grad_clip"])
            optimizer.step()
            scheduler.step()
            step += 1
            seen += 1
            loss_sum += float(loss.detach())
            bar.update(1)
            bar.set_postfix(loss=f"{loss_sum / seen:.4f}")
            if t["save_every"] and step % t["save_every"] == 0 and b + 1 < per_epoch:
                save_resume(epoch, b + 1)
        bar.close()
        start_batch = 0
        epoch += 1
        if rank == 0:
            val = validate(model, val_loader, target=t["target"], max_batches=t["val_max_batches"],
                           device=device)
            record = {
                "epoch": epoch, "step": step, "train_loss": loss_sum / max(seen, 1), "val_loss": val["loss"],
                "val_frontier_log_loss_ratio": val["frontier"]["log_loss_ratio"],
                "val_frontier_mae": val["frontier"]["mae_exact"],
                "val_interior_mae": val["interior"]["mae_exact"],
                "lr": scheduler.get_last_lr()[0], "seconds": time.perf_counter() - t0,
            }
            history.append(record)
            improved = val["loss"] < best
            best = min(best, val["loss"])
            meta = {**extra, "epoch": epoch, "step": step, "val": json.loads(to_json(val))}
            save_checkpoint(run_dir / "last.pt", model, extra=meta)
            if improved:
                save_checkpoint(run_dir / "best.pt", model, extra=meta)
            to_json(history, run_dir / "history.json", indent=1)
            save_resume(epoch, 0)
            if progress:
                tqdm.write(
                    f"epoch {epoch}: train loss {record['train_loss']:.4f}, val loss {val['loss']:.4f}, "
                    f"frontier log-loss ratio {record['val_frontier_log_loss_ratio']:.3f}, "
                    f"frontier MAE {record['val_frontier_mae']:.4f}"
                )
        if world > 1:
            torch.distributed.barrier()
    return TrainResult(run_dir, run_dir / "best.pt", run_dir / "last.pt", history)


def _prepare_run(run_dir: Path, config: dict, digest: str, *, resume: bool, rank: int) -> dict | None:
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
        if state.get("config") != json.dumps(config, sort_keys=True):
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
    write_text_atomic(run_dir / "config.json", json.dumps(config, indent=1) + "\n")
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

    from nnsweeper.datasets import graph_loader, grid_loader, load_manifest
    from nnsweeper.metrics import PredictionSet, evaluate_predictions

    manifest = load_manifest(root)
    keys = [c["key"] for c in manifest["configurations"] if c["states_per_split"].get(split, 0)]
    if not keys:
        raise TrainingError(f"the {split!r} split of {os.fspath(root)!r} holds no states")
    make = graph_loader if model.arch == "gnn" else grid_loader
    kw = {"cell_edges": model.config.get("cell_edges", True)} if model.arch == "gnn" else {}
    sets, labels = [], []
    for key in tqdm(keys, disable=not progress, desc="configurations", unit="config"):
        loader = make(root, split, batch_size=batch_size, shuffle=False, configs=[key], **kw)
        s, _ = _predict(model, loader, target="exact", max_batches=max_batches, device=model.device)
        sets.append(s)
        labels += [key] * len(s)
    preds = PredictionSet.concat(sets)
    return evaluate_predictions(preds, by=np.array(labels)), preds
