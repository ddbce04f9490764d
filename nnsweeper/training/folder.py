"""A training run's folder: its files, the checks before a run starts or resumes.

A run folder holds ``config.json`` (written first), ``resume.pt`` (what a resume
continues from), the checkpoints, ``history.json`` and the TensorBoard logs.
:func:`prepare_run` checks the folder before a run (empty, or resumable with the same
config but for :data:`RESUMABLE_CHANGES`) and gives the resume state.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch

from nnsweeper.fileio import write_text_atomic
from nnsweeper.training_config import SECTIONS, TrainingConfig, TrainingError

from .board import TENSORBOARD

__all__ = ["RESUME_FILE", "CONFIG_FILE", "HISTORY_FILE", "RESUMABLE_CHANGES", "KEPT", "kept_checkpoint",
           "finished_note", "prepare_run", "recorded_config"]

#: What a resume continues from: weights, optimiser, schedule, position (``nnsweeper train --resume``).
RESUME_FILE = "resume.pt"
#: The run's config, written before anything else.
CONFIG_FILE = "config.json"
#: Each epoch's line: loss, validation, compute.
HISTORY_FILE = "history.json"
#: Config keys that may differ when a run resumes (see :mod:`nnsweeper.training`).
#: Where the run computes (device, threads, loader processes) may change too: a run
#: started on a CPU can go on on a GPU.
RESUMABLE_CHANGES = ("train.epochs", "output.dir", "data.path", "train.tensorboard", "train.keep_every",
                     "train.device", "train.threads", "train.num_workers")
#: The folder of the checkpoints kept along the way (``train.keep_every``).
KEPT = "checkpoints"


def finished_note(run_dir: Path, state: dict, epochs: int) -> str | None:
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


def prepare_run(run_dir: Path, config: TrainingConfig, digest: str, *, resume: bool,
                 rank: int) -> dict | None:
    """Check the run folder; returns the resume state when resuming.

    A folder that holds only ``config.json`` (and TensorBoard logs) is a run stopped
    before its first save: it starts again (without ``resume``), its logs cleared.
    """
    path = run_dir / RESUME_FILE
    if resume:
        if not path.exists():
            started = (run_dir / CONFIG_FILE).exists()
            raise TrainingError(
                f"nothing to resume in {os.fspath(run_dir)!r}: it has no {RESUME_FILE}"
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
        _check_same_config(run_dir, recorded_config(state, path), config)
        if state.get("data_manifest_sha256") != digest:
            raise TrainingError(
                f"the dataset changed since {os.fspath(run_dir)!r} began (its manifest SHA-256 differs)"
            )
        done, batch, epochs = int(state["epoch"]), int(state["batch"]), config.train.epochs
        if epochs < done + (1 if batch else 0):
            where = (f"is in epoch {done + 1} ({RESUME_FILE} holds it up to batch {batch}), past"
                     if batch else f"has done {done} epoch{'s' if done != 1 else ''}, more than")
            raise TrainingError(
                f"{os.fspath(run_dir)!r} {where} train.epochs={epochs}: give "
                f"train.epochs={done + (1 if batch else 0)} or more, or leave out train.epochs to keep its "
                f"{recorded_config(state)['train']['epochs']}"
            )
        return state
    if rank != 0:
        return None  # rank 0 checks and creates the folder (and stops the run if it is in the way)
    if run_dir.exists() and any(p.name not in (CONFIG_FILE, TENSORBOARD) for p in run_dir.iterdir()):
        raise TrainingError(
            f"run folder {os.fspath(run_dir)!r} is not empty; use --resume to continue it or choose another "
            f"output.dir"
        )
    # What a run stopped before its first save logged goes with it.
    shutil.rmtree(run_dir / TENSORBOARD, ignore_errors=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run_dir / CONFIG_FILE, config.to_json(indent=1) + "\n")
    return None


def recorded_config(state: dict, path: Path | None = None) -> dict:
    """The config a resume state records (a dict of tables)."""
    try:
        recorded = json.loads(state.get("config") or "null")
    except (TypeError, ValueError):
        recorded = None
    if not isinstance(recorded, dict) or not all(isinstance(recorded.get(s), dict) for s in SECTIONS):
        where = os.fspath(path) if path is not None else RESUME_FILE
        raise TrainingError(f"{where!r} records no usable config: it is not a resume state of nnsweeper "
                            f"train")
    return recorded


def _toml(value) -> str:
    """A config value as it is typed in an override (``none`` when it is not set)."""
    return "none" if value is None else json.dumps(value)


def _check_same_config(run_dir: Path, recorded: dict, config: TrainingConfig) -> None:
    """Refuse to resume with a config that differs from the run's but in :data:`RESUMABLE_CHANGES`."""
    now = config.to_dict()
    differ = []
    for section in SECTIONS:
        old, new = recorded.get(section, {}), now[section]
        for key in [*old, *(k for k in new if k not in old)]:
            label = f"{section}.{key}"
            if label not in RESUMABLE_CHANGES and old.get(key) != new.get(key):
                differ.append((label, old.get(key), new.get(key)))
    if not differ:
        return
    changes = "; ".join(f"{k} is {_toml(b)}, the run has {_toml(a)}" for k, a, b in differ)
    typed = " ".join(f"{k}={_toml(a)}" for k, a, _ in differ if a is not None)
    raise TrainingError(
        f"cannot resume {os.fspath(run_dir)!r} with another config: {changes} (on resume only "
        f"{', '.join(RESUMABLE_CHANGES)} may change); resume with the config it started with "
        f"(recorded in {os.fspath(run_dir / CONFIG_FILE)})" + (f" or the overrides {typed}" if typed else "")
        + ", or train the new config into another output.dir"
    )


def kept_checkpoint(run_dir: Path, epoch: int) -> Path:
    """Where the weights after ``epoch`` are kept (``train.keep_every``)."""
    return Path(run_dir) / KEPT / f"epoch-{epoch:04d}.pt"
