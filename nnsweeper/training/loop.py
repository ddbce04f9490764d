"""The training loop: a run's life from its start or resume to its last epoch.

:func:`train` checks the dataset and the run folder (:mod:`.folder`), builds the model
and the loaders of its kind of input, AdamW and the schedule, resumes when asked,
then trains epoch after epoch: optimiser steps (:func:`_step`), a validation pass
(:func:`~.scoring.validate`), the files of an epoch's end written while Ctrl-C waits,
TensorBoard logs (:mod:`.board`). A run's life (start, resume, interruption, the
files of an epoch's end) is one state machine, and its checks and messages sit beside
the steps they guard.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from nnsweeper.fileio import file_sha256, write_text_atomic
from nnsweeper.training_config import (
    DataSection,
    TrainingConfig,
    TrainingError,
    TrainSection,
    check_config,
    is_value_config,
    load_value_config,
)

from .board import TensorBoardLog
from .folder import (
    CONFIG_FILE,
    HISTORY_FILE,
    RESUME_FILE,
    damaged_file,
    finished_note,
    kept_checkpoint,
    lock_run,
    prepare_run,
    recorded_config,
)
from .objectives import calibration_penalty, decision_loss
from .scoring import bce_loss, is_value_model, split_configurations, to_device, validate

if TYPE_CHECKING:
    from nnsweeper.models import MineModel

__all__ = ["TrainResult", "TrainingInterrupted", "Run", "train", "train_value"]


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
            world: int, configs=None, workers: bool = True):
    """The loader of the model's inputs for one split, with the options of ``[train]`` and ``[data]``.

    Only the training loader (``shuffle``) augments. ``configs``: these configurations
    only (default: ``[data] configurations``, or all). ``workers=False``: no loader
    processes, whatever ``[train] num_workers`` says.
    """
    from nnsweeper.datasets import make_loader

    options = config.train.loader_options()
    options["augment"] = options["augment"] and shuffle
    if not workers:
        options["num_workers"] = 0
    if options["num_workers"]:
        options["worker_init_fn"] = _loader_process_setup
    configs = configs or list(config.data.configurations or ()) or None
    return make_loader(model, root, split, shuffle=shuffle, rank=rank, world_size=world, drop_last=False,
                       configs=configs, **options)


def _loader_process_setup(worker_id: int) -> None:
    """A loader process leaves SIGTERM to the main process, and ends with it however it ends.

    A batch system ends a job by sending SIGTERM to every process of it: a loader process
    killed by it would make the main process fail with "DataLoader worker ... is killed by
    signal" instead of stopping as it does on Ctrl-C (where it stands, what ``resume.pt``
    holds). The main process ends its loader processes as it stops. Killed outright (SIGKILL,
    the out-of-memory killer), it cannot: on Linux the kernel then kills its loader processes
    at once (``PR_SET_PDEATHSIG``), where torch's own check would leave them running for up to
    five seconds; elsewhere that check ends them.
    """
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes
        import multiprocessing

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
        parent = multiprocessing.parent_process()
        if parent is not None and os.getppid() != parent.pid:  # it died before the line above
            os._exit(0)


def _val_loaders(model: MineModel, config: TrainingConfig, root: Path, manifest: dict):
    """What each epoch validates on: a loader per configuration of the validation split
    (``{key: loader}``, so that the figures come by kind too), or a value network's one loader."""
    split = config.data.val_split
    if is_value_model(model):
        return _loader(model, config, root, split, shuffle=False, rank=0, world=1)
    keys = split_configurations(manifest, split, config.data.configurations)
    if not keys:
        raise TrainingError(f"the {split!r} split of {os.fspath(root)!r} holds no states to validate on")
    # One small loader per configuration (a hundred states or so each): loader processes
    # would be started for every one of them, every epoch, and cost more than they build.
    return {key: _loader(model, config, root, split, shuffle=False, rank=0, world=1, configs=[key],
                         workers=False)
            for key in keys}


def _schedule(optimizer, total_steps: int, warmup: float, min_lr: float):
    warm = max(1, int(round(warmup * total_steps)))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        progress = min(1.0, (step - warm) / max(1, total_steps - warm))
        return min_lr + (1 - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def _distributed() -> tuple[int, int, int]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    return int(os.environ.get("RANK", "0")), world, int(os.environ.get("LOCAL_RANK", "0"))


def train(config: Mapping | TrainingConfig, *, resume: bool = False, progress: bool = True,
          notify: Callable[[str], None] | None = None,
          started: Callable[[Path | None], None] | None = None) -> TrainResult:
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
    started : callable, optional
        Called once the run is set up and about to train (its dataset, folder, model and
        loaders checked), with the folder of its TensorBoard logs (None when it writes
        none); not called for a run that has finished already.

    Raises
    ------
    TrainingError
        A dataset that does not match the config, a run folder in the way (or, with
        ``resume``, nothing to resume or another config, naming each differing key), a
        loss that is not finite (naming the epoch and step), another process training into
        the same folder (it holds the folder's lock), a file that could not be written (a
        full disk, a file-size limit), each saying where the run stands and how to continue.
    TrainingInterrupted
        Ctrl-C (a :class:`KeyboardInterrupt`): its message names the epoch reached,
        what ``resume.pt`` holds and how to continue.
    """
    config = check_config(config)
    _check_machine(config)
    rank, world, local = _distributed()
    run_dir = Path(config.output.dir)
    new = [folder for folder in (run_dir, *run_dir.parents) if not folder.exists()]
    try:
        with lock_run(run_dir, rank):  # a second training into the folder is refused, not mixed in
            return _train(config, rank, world, local, resume=resume, progress=progress, notify=notify,
                          started=started)
    except BaseException:
        with contextlib.suppress(OSError):  # a run refused at its start leaves no folder made for the lock
            for folder in new:
                folder.rmdir()  # (the deepest first; a folder not empty stays, and so do its parents)
        raise


def _train(config: TrainingConfig, rank: int, world: int, local: int, *, resume: bool, progress: bool,
           notify: Callable[[str], None] | None,
           started: Callable[[Path | None], None] | None) -> TrainResult:
    """:func:`train` of a checked config, in the folder this process holds."""
    from nnsweeper.datasets import check_shards

    root, manifest, digest = _check_dataset(config.data, value=is_value_config(config))
    run_dir = Path(config.output.dir)
    initial = _initial_weights(config)  # refused before the run folder is written
    if rank == 0:  # a damaged shard of a split the run reads is named now, not after an epoch
        check_shards(root, manifest, {config.data.train_split, config.data.val_split},
                     config.data.configurations or None)
    state = prepare_run(run_dir, config, digest, resume=resume, rank=rank)
    if state is not None:
        finished = finished_note(run_dir, state, config.train.epochs)
        if finished:
            history = json.loads(state["history"])
            return TrainResult(run_dir, run_dir / "best.pt", run_dir / "last.pt", history,
                               already_finished=finished)
    run = None
    signals = contextlib.ExitStack()
    signals.enter_context(_sigterm_as_interrupt())
    try:
        device = _setup_device(config.train, world=world, local=local)
        model = _build_model(config, device, initial if state is None else None)
        train_loader = _loader(model, config, root, config.data.train_split, shuffle=True, rank=rank,
                               world=world)
        val_loader = _val_loaders(model, config, root, manifest)
        run = Run.start(config, model, device, train_loader, rank=rank, run_dir=run_dir, digest=digest,
                         extra=_checkpoint_extra(config, root, manifest, digest, initial),
                         configurations={c["key"]: c for c in manifest.get("configurations", ())})
        if state is not None:
            try:
                run.restore(state)
            except (KeyError, TypeError, ValueError, RuntimeError) as exc:  # weights that do not fit
                why = f"it does not fit the run's model: {type(exc).__name__}"
                raise TrainingError(damaged_file(run_dir / RESUME_FILE, why)) from None
            before = recorded_config(state)["train"]["epochs"]
            if before != config.train.epochs:
                note = run.change_epochs(before)
                if rank == 0:
                    write_text_atomic(run_dir / CONFIG_FILE, config.to_json(indent=1) + "\n")
                    if notify is not None:
                        notify(note)
        net = _distributed_net(model, device, world)
        board = run.board.open(run)
        if started is not None and rank == 0:
            started(board)
        model.train()
        while run.epoch < config.train.epochs:
            began, seen = time.perf_counter(), run.examples
            train_loss = _train_epoch(run, net, train_loader, progress=progress)
            speed = (run.examples - seen) / max(time.perf_counter() - began, 1e-9)
            if rank == 0:
                _end_epoch(run, val_loader, train_loss, began, speed, progress=progress)
            if world > 1:
                torch.distributed.barrier()
        run.board.close()
    except KeyboardInterrupt as exc:
        if isinstance(exc, TrainingInterrupted):
            raise
        raise TrainingInterrupted(_standing("interrupted", run, state, config.train, rank)) from None
    except OSError as exc:  # a file that could not be written (a full disk, a file-size limit) or read
        raise TrainingError(_standing(f"stopped ({' '.join(str(exc).split())})", run, state, config.train,
                                      rank)) from exc
    finally:
        signals.close()
        if run is not None:
            run.board.close(quiet=True)  # (closed above unless the run stopped)
    return TrainResult(run_dir, run_dir / "best.pt", run_dir / "last.pt", run.history, tensorboard=board)


def _check_machine(config: TrainingConfig) -> None:
    """Refuse, before the dataset or the run folder is touched, a config this machine cannot train:
    a device it lacks (``train.device=cuda`` without CUDA), or a model too big for its memory
    (counted before any allocation: :func:`~nnsweeper.models.base.check_model_size`)."""
    from nnsweeper.models.base import TRAIN_BYTES_PER_PARAMETER, check_model_size, resolve_device

    try:
        resolve_device(config.train.device)
    except ValueError as exc:
        raise TrainingError(f"train.device: {exc}") from None
    try:
        check_model_size(config.model, bytes_per_parameter=TRAIN_BYTES_PER_PARAMETER, doing="train")
    except ValueError as exc:
        raise TrainingError(f"[model]: {exc}") from None


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


def _build_model(config: TrainingConfig, device: torch.device, initial: MineModel | None = None) -> MineModel:
    """The model at its start, on ``device``: freshly initialised (its weights drawn from
    ``[train] seed``), then given the weights of ``initial`` when there is one (a run starting
    from ``[train] init``; a resumed run's weights come from its ``resume.pt``)."""
    from nnsweeper.models import MineModel

    torch.manual_seed(config.train.seed)
    model = MineModel.from_config(config.model)
    if initial is not None:
        model.load_state_dict(initial.state_dict(), strict=True)
    return model.to(device)


def _initial_weights(config: TrainingConfig) -> MineModel | None:
    """The model of ``[train] init`` (a checkpoint's path or a bundled model's name), on the CPU;
    None without one.

    Raises
    ------
    TrainingError
        ``init`` is no loadable checkpoint, or its model config differs from ``[model]``
        (naming each differing key).
    """
    from nnsweeper.models import CheckpointError, load_model

    init = config.train.init
    if init is None:
        return None
    try:
        loaded = load_model(init)
    except CheckpointError as exc:
        raise TrainingError(f"train.init={init!r}: {exc}") from None
    differ = sorted(k for k in set(loaded.config) | set(config.model)
                    if loaded.config.get(k) != config.model.get(k))
    if "arch" in differ:  # another architecture: its other keys say nothing more
        differ = ["arch"]
    if differ:
        theirs = ", ".join(f"{k}={loaded.config.get(k)!r} (here {config.model.get(k)!r})" for k in differ)
        raise TrainingError(f"train.init={init!r} holds another model than [model]: {theirs}")
    return loaded


def _init_record(config: TrainingConfig, initial: MineModel | None) -> dict | None:
    """What a checkpoint records of ``[train] init`` (``initial``, its model): its path or name,
    SHA-256 and the training it had (states seen, optimiser steps, seconds), so that a fine-tuned
    run's compute adds up."""
    if initial is None:
        return None
    meta = initial.checkpoint_meta
    extra = meta.get("extra") or {}
    # streams_merged: this checkpoint's seed streams hold the parent's (with_parent_streams), so
    # that it can ship where the parent's file is gone (a plan keeps only its latest weights).
    return {"init": config.train.init, "sha256": meta["sha256"], "epoch": extra.get("epoch"),
            "examples": extra.get("examples"), "steps": extra.get("step"), "seconds": extra.get("seconds"),
            "streams_merged": True}


def with_parent_streams(streams, parent: MineModel | None) -> list:
    """``streams`` (training seed streams) with those ``parent``'s checkpoint records added after them,
    none twice: the games a model started from ``parent`` learned from. A generated stream of no
    games names no seed and is left out (most of a mixed dataset's validation and test streams:
    a checkpoint that carries the streams of many datasets stays small)."""
    def used(s) -> bool:
        return not (isinstance(s, Mapping) and "seeds" not in s and s.get("games") == 0)

    own = [s for s in streams or [] if used(s)]
    inherited = (((parent.checkpoint_meta or {}).get("extra") or {}).get("data_seed_streams")
                 if parent is not None else None)
    seen = {json.dumps(s, sort_keys=True) for s in own}
    return own + [s for s in inherited or [] if used(s) and json.dumps(s, sort_keys=True) not in seen]


def _checkpoint_extra(config: TrainingConfig, root: Path, manifest: dict, digest: str,
                      initial: MineModel | None = None) -> dict:
    """What every checkpoint records besides the weights: the dataset and the training config.

    The dataset's seed streams travel with the weights, so that an evaluation can
    refuse games the model learned from without the dataset at hand; a run that starts
    from another model's weights (``[train] init``) carries that model's streams too
    (after its own), since it learned from those games as well.
    """
    streams = with_parent_streams(manifest.get("seed_streams", []), initial)
    return {"data_manifest_sha256": digest, "data_path": os.fspath(root), "train_config": config.to_dict(),
            "data_seed_streams": streams, "init": _init_record(config, initial)}


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
class Run:
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
    #: The current epoch's sum of batch losses and its batches done, so that an epoch resumed in
    #: its middle reports the mean over all its batches, as one never stopped does.
    epoch_loss_sum: float = 0.0
    epoch_batches: int = 0
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
    #: The TensorBoard log (one that writes nothing until :meth:`TensorBoardLog.open`).
    board: TensorBoardLog = field(default_factory=lambda: TensorBoardLog())
    #: The machine the epochs run on, as the history records it.
    hardware: str = ""

    @classmethod
    def start(cls, config: TrainingConfig, model, device, train_loader, **kwargs) -> Run:
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
        # (Older resume states lack the epoch's running loss: its mean is then over the batches after it.)
        self.epoch_loss_sum = float(state.get("epoch_loss_sum", 0.0))
        self.epoch_batches = int(state.get("epoch_batches", 0))
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


    def save_resume(self, epoch: int, batch: int) -> None:
        """Write ``resume.pt``: continue at batch ``batch`` of epoch ``epoch`` (rank 0 only)."""
        from nnsweeper.models.checkpoint import save_torch

        if self.rank != 0:
            return
        blob = {
            "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(), "epoch": epoch, "batch": batch, "step": self.step,
            "examples": self.examples,
            "epoch_loss_sum": self.epoch_loss_sum, "epoch_batches": self.epoch_batches,
            "best": self.best, "history": json.dumps(self.history), "torch_rng": torch.get_rng_state(),
            "config": self.config.to_json(sort_keys=True), "data_manifest_sha256": self.digest,
            "epochs_changes": json.dumps(self.epochs_changes),
        }
        save_torch(self.run_dir / RESUME_FILE, blob)
        self.saved = (epoch, batch)


def _hardware(device: torch.device) -> str:
    """What the epochs run on: the GPU's name, or the CPU's with the torch threads."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    from nnsweeper.parallel import machine

    return f"{machine()}, {torch.get_num_threads()} torch thread(s)"


def _standing(what: str, run: Run | None, state: dict | None, t: TrainSection, rank: int) -> str:
    """The message of a run stopped by ``what`` (a Ctrl-C, a file it could not write): where the run
    was, what ``resume.pt`` holds and how to continue. ``run`` is None while starting (``state``: the
    resume state it started from, or None)."""
    if run is not None and run.doing:
        doing, saved, per_epoch = run.doing, run.saved, run.per_epoch
    else:
        saved = None if state is None else (int(state["epoch"]), int(state["batch"]))
        doing = f"while starting (before epoch {(saved or (0, 0))[0] + 1} of {t.epochs})"
        per_epoch = None
    head = f"{what} {doing}"
    if rank != 0:
        return f"{head} (rank {rank}; rank 0 writes {RESUME_FILE})"
    if saved is None:
        when = "at the end of epoch 1" + (f" or after {t.save_every} steps" if t.save_every else "")
        return (f"{head}; nothing is saved yet ({RESUME_FILE} is first written {when}): run the same command "
                f"to start again")
    epoch, batch = saved
    of = f" of {per_epoch}" if per_epoch else ""
    holds = f"the end of epoch {epoch}" if not batch else f"epoch {epoch + 1} up to batch {batch}{of}"
    return f"{head}; {RESUME_FILE} holds {holds}: run the same command with --resume to continue"


@contextlib.contextmanager
def _holding_interrupts():
    """Hold Ctrl-C (and SIGTERM) back while the block writes files that must agree; deliver it afterwards.

    Each file is written atomically, but an epoch's end writes several (a checkpoint's
    ``.pt`` and ``.json``, ``history.json``, ``resume.pt``). Only the main thread can
    handle signals; elsewhere the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in held}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if caught:
        signal.raise_signal(caught[0])  # handled as it would have been (KeyboardInterrupt)


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """Within the block, SIGTERM (a batch system's end of a job's time, ``kill``) stops the run
    as Ctrl-C does: where it stands and what ``resume.pt`` holds, instead of dying silently.

    Only in the main thread, and only where SIGTERM has its default action.
    """
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _train_epoch(run: Run, net, loader, *, progress: bool) -> float:
    """One epoch of optimiser steps (from ``run.batch`` when resuming); returns its mean loss.

    Advances ``run.epoch`` and writes ``resume.pt`` every ``[train] save_every`` steps.
    """
    from tqdm.auto import tqdm

    t = run.config.train
    # Resumed in the middle of an epoch: the loader starts at the first batch not done.
    if hasattr(loader, "set_epoch"):
        loader.set_epoch(run.epoch, start=run.batch)  # a loader with an order of its own (value positions)
    else:
        loader.batch_sampler.set_epoch(run.epoch, start=run.batch)
        if getattr(loader.dataset, "augment", False):
            loader.dataset.set_epoch(run.epoch)
    if not run.batch:
        run.epoch_loss_sum, run.epoch_batches = 0.0, 0
    bar = tqdm(total=run.per_epoch, initial=run.batch, disable=not progress or run.rank != 0,
               desc=f"epoch {run.epoch + 1}/{t.epochs}", unit="batch", leave=False)
    run.doing = f"in epoch {run.epoch + 1} of {t.epochs}"
    try:
        for b, batch in enumerate(loader, start=run.batch):
            if b >= run.per_epoch:
                break
            run.doing = f"in epoch {run.epoch + 1} of {t.epochs} (batch {b + 1} of {run.per_epoch})"
            loss = _step(run, net, batch, b)
            run.epoch_batches += 1
            run.epoch_loss_sum += loss
            bar.update(1)
            bar.set_postfix(loss=f"{run.epoch_loss_sum / run.epoch_batches:.4f}")
            if t.save_every and run.step % t.save_every == 0 and b + 1 < run.per_epoch:
                run.save_resume(run.epoch, b + 1)
    finally:
        bar.close()
    run.batch = 0
    run.epoch += 1
    return run.epoch_loss_sum / max(run.epoch_batches, 1)


def _step(run: Run, net, batch, b: int) -> float:
    """One optimiser step on batch ``b``; returns its loss."""
    t, device = run.config.train, run.device
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        out = net(to_device(batch, device))
    loss = bce_loss(out, t.target, t.certain_weight, t.certain_margin)
    if "value" not in out:  # a value network's positions have no cells to choose among
        if t.decision_weight:
            loss = loss + t.decision_weight * decision_loss(out, t.decision_loss, t.decision_temperature)
        if t.calibration_margin:
            loss = loss + t.calibration_margin * calibration_penalty(out)
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


def _end_epoch(run: Run, val_loader, train_loss: float, started: float, speed: float, *,
               progress: bool) -> None:
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
              "examples_per_second": speed,
              "hardware": run.hardware}
    run.history.append(record)
    improved = val["loss"] < run.best
    run.best = min(run.best, val["loss"])
    # The checkpoint keeps the pooled and per-kind figures (each configuration's: evaluate-model).
    kept = {k: v for k, v in val.items() if k != "by"}
    meta = {**run.extra, "epoch": run.epoch, "step": run.step, "examples": run.examples,
            "seconds": sum(h["seconds"] for h in run.history), "val": json.loads(to_json(kept))}
    if run.epochs_changes:
        meta["epochs_changes"] = run.epochs_changes
    run.doing = f"after epoch {run.epoch} of {t.epochs}"
    checkpoints = ["last.pt", *(["best.pt"] if improved else [])]
    if t.keep_every and run.epoch % t.keep_every == 0:
        checkpoints.append(kept_checkpoint(run.run_dir, run.epoch))
    written: list[Path] = []
    with _holding_interrupts():
        try:
            for name in checkpoints:
                written += [pt := run.run_dir / name, pt.with_suffix(".json")]
                save_checkpoint(pt, run.model, extra=meta)
            written.append(run.run_dir / HISTORY_FILE)
            to_json(run.history, written[-1], indent=1)
            run.save_resume(run.epoch, 0)
        except OSError:
            # A file that could not be written (a full disk, a file-size limit). Were this the run's
            # first save, what it wrote before would leave a folder that neither starts again (not
            # empty) nor resumes (no resume.pt): it goes, and the run starts again as it says.
            if run.saved is None:
                for path in written:
                    path.unlink(missing_ok=True)
                    if path.parent != run.run_dir:  # the folder of kept checkpoints, made for this one
                        with contextlib.suppress(OSError):
                            path.parent.rmdir()
            raise
    run.board.epoch(run.step, record)
    if progress:
        if is_value_model(run.model):
            more = (f"squared error {record['val_mse']:.5f} (each board size's mean value: "
                    f"{record['val_mse_mean']:.5f})")
        else:
            more = (f"frontier log-loss ratio {record['val_frontier_log_loss_ratio']:.3f}, "
                    f"frontier MAE {record['val_frontier_mae']:.4f}")
            if record.get("val_decision_positions"):
                more += (f"; on {record['val_decision_positions']:,} guess positions lowest-risk pick "
                         f"{record['val_decision_lowest_risk']:.1%}, mean regret "
                         f"{record['val_decision_regret_mean']:.4f}")
        tqdm.write(f"epoch {run.epoch}: train loss {train_loss:.4f}, val loss {val['loss']:.4f}, {more}")


def _val_record(model, val: dict) -> dict:
    """The validation figures of an epoch's line in ``history.json``, besides its loss."""
    if is_value_model(model):
        return {"val_mse": val["mse"], "val_mse_mean": val["mse_mean"], "val_brier": val["brier"]}
    record = {**_frontier_figures(val, "val_"), "val_interior_mae": val["interior"]["mae_exact"]}
    if "decision" in val:  # on the positions with no proven-safe cell (nnsweeper.decisions)
        d = val["decision"]
        record.update({f"val_decision_{k}": d[k] for k in ("positions", "lowest_risk", "regret_mean",
                                                            "regret_p90", "overconfident", "safest5_mae",
                                                            "safest5_bias")})
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


def train_value(config, overrides=(), *, resume: bool = False, progress: bool = True,
                notify: Callable[[str], None] | None = None) -> TrainResult:
    """Train a value network: :func:`train` of :func:`load_value_config` (``nnsweeper train-value``).

    ``config`` is a TOML path, a dict of tables or a checked config; its ``[model] arch``
    defaults to ``"value-gnn"`` (the older ``"gnn"`` and ``"cnn"`` name the value
    networks) and its older ``[train] n_jobs`` is ``num_workers``. The other arguments
    are :func:`train`'s.
    """
    return train(load_value_config(config, overrides), resume=resume, progress=progress, notify=notify)
