"""A training run's folder: its files, the checks before a run starts or resumes.

A run folder holds ``config.json`` (written first), ``resume.pt`` (what a resume
continues from), the checkpoints, ``history.json`` and the TensorBoard logs.
:func:`prepare_run` checks the folder before a run (empty, or resumable with the same
config but for :data:`RESUMABLE_CHANGES`) and gives the resume state;
:func:`load_resume_state` reads and checks a ``resume.pt``, and :func:`damaged_file` says
of a run file that cannot be read what of the run is left and how to go on.

Every file is written atomically (:func:`nnsweeper.fileio.atomic_path`): a run killed
while it wrote one (``kill -9``, a machine that went down) may leave its temporary copy,
``.NAME.XXXXXXXX.SUFFIX``, which never counts as a file of the run (:func:`leftovers`).
"""

from __future__ import annotations

import contextlib
import json
import numbers
import os
import shutil
from pathlib import Path

import torch

from nnsweeper import fileio
from nnsweeper.fileio import file_sha256, leftover_of, write_text_atomic
from nnsweeper.training_config import SECTIONS, TrainingConfig, TrainingError

from .board import TENSORBOARD

__all__ = ["RESUME_FILE", "CONFIG_FILE", "HISTORY_FILE", "CHECKPOINTS", "RESUMABLE_CHANGES", "KEPT",
           "LOCK_NAME", "kept_checkpoint", "finished_note", "lock_run", "prepare_run", "recorded_config",
           "load_resume_state", "damaged_file", "leftovers"]

#: What a resume continues from: weights, optimiser, schedule, position (``nnsweeper train --resume``).
RESUME_FILE = "resume.pt"
#: The run's config, written before anything else.
CONFIG_FILE = "config.json"
#: Each epoch's line: loss, validation, compute.
HISTORY_FILE = "history.json"
#: The checkpoints an epoch's end writes (each a ``.pt`` with its ``.json``), the latest first.
CHECKPOINTS = ("last.pt", "best.pt")
#: Config keys that may differ when a run resumes (see :mod:`nnsweeper.training`).
#: Where the run computes (device, threads, loader processes) may change too: a run
#: started on a CPU can go on on a GPU.
RESUMABLE_CHANGES = ("train.epochs", "output.dir", "data.path", "train.tensorboard", "train.keep_every",
                     "train.device", "train.threads", "train.num_workers")
#: The folder of the checkpoints kept along the way (``train.keep_every``).
KEPT = "checkpoints"
#: The lock file of the process training into the folder (removed as it ends; a killed one leaves it).
LOCK_NAME = ".train.lock"


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


def lock_run(run_dir: Path, rank: int) -> contextlib.AbstractContextManager:
    """Hold the run folder for this process (rank 0; its folder created if new), or refuse at once
    with a :class:`TrainingError`: two trainings into one folder would overwrite each other's files."""
    if rank != 0:
        return contextlib.nullcontext()
    return fileio.exclusive_lock(run_dir / LOCK_NAME, what=f"training run {os.fspath(run_dir)!r}",
                                 error=TrainingError, then="--resume continues it")


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
        state = load_resume_state(path)
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
    left = leftovers(run_dir)
    if run_dir.exists() and any(p.name not in (CONFIG_FILE, TENSORBOARD, LOCK_NAME) and p not in left
                                for p in run_dir.iterdir()):
        raise TrainingError(
            f"run folder {os.fspath(run_dir)!r} is not empty; use --resume to continue it or choose another "
            f"output.dir"
        )
    # What a run stopped before its first save logged (or began to write when killed) goes with it.
    shutil.rmtree(run_dir / TENSORBOARD, ignore_errors=True)
    for path in left:
        path.unlink(missing_ok=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run_dir / CONFIG_FILE, config.to_json(indent=1) + "\n")
    return None


#: The files of a run folder that an atomic write may leave a temporary copy of.
_RUN_FILES = (CONFIG_FILE, RESUME_FILE, HISTORY_FILE, *CHECKPOINTS, *(Path(c).with_suffix(".json").name
                                                                       for c in CHECKPOINTS))


def leftovers(run_dir: Path) -> list[Path]:
    """The temporary files of atomic writes of ``run_dir``'s files that a killed run left behind
    (``.resume.pt.XXXXXXXX.pt`` and the like): they are no files of the run."""
    return [p for p in fileio.leftovers(run_dir) if leftover_of(p.name) in _RUN_FILES]


def _count(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _json_list(text, item=lambda x: True) -> bool:
    """Whether ``text`` is the JSON of a list whose items pass ``item``."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return False
    return isinstance(value, list) and all(item(x) for x in value)


def _epoch_line(line) -> bool:
    return isinstance(line, dict) and _count(line.get("epoch")) and _number(line.get("val_loss"))


def _config_json(text) -> bool:
    try:
        epochs = recorded_config({"config": text})["train"].get("epochs")
    except TrainingError:
        return False
    return _count(epochs) and epochs >= 1


#: What a resume state holds: each key, whether its value will do, and what it must be.
_RESUME_FIELDS = {
    "model": (lambda v: isinstance(v, dict) and bool(v)
              and all(isinstance(t, torch.Tensor) for t in v.values()), "a state dict of tensors"),
    "optimizer": (lambda v: isinstance(v, dict) and isinstance(v.get("state"), dict)
                  and isinstance(v.get("param_groups"), list), "an optimiser state"),
    "scheduler": (lambda v: isinstance(v, dict), "a schedule state"),
    "epoch": (_count, "a count"),
    "batch": (_count, "a count"),
    "step": (_count, "a count"),
    "best": (_number, "a number"),
    "history": (lambda v: _json_list(v, _epoch_line), "the JSON of the epochs' lines"),
    "torch_rng": (lambda v: isinstance(v, torch.Tensor) and v.dtype == torch.uint8, "a torch random state"),
    "config": (_config_json, "the JSON of a training config"),
    "data_manifest_sha256": (lambda v: isinstance(v, str), "a SHA-256"),
}
#: Keys that older resume states lack, and their checks.
_RESUME_OPTIONAL = {
    "examples": (_count, "a count"),
    "epochs_changes": (_json_list, "the JSON of a list"),
    "epoch_loss_sum": (_number, "a number"),
    "epoch_batches": (_count, "a count"),
}


def _resume_fault(state) -> str | None:
    """What makes ``state`` (a loaded ``resume.pt``) no resume state of :func:`train`, or None."""
    if not isinstance(state, dict):
        return f"it holds a {type(state).__name__}, not a resume state"
    missing = [key for key in _RESUME_FIELDS if key not in state]
    if missing:
        return f"it lacks {', '.join(missing)}"
    for key, (fits, what) in (*_RESUME_FIELDS.items(), *_RESUME_OPTIONAL.items()):
        if key in state and not fits(state[key]):
            return f"its {key} is not {what}"
    return None


def load_resume_state(path: Path) -> dict:
    """The resume state a run's ``resume.pt`` holds (read with ``weights_only=True``), checked:
    every key that resuming reads is there, of its type.

    Raises
    ------
    TrainingError
        The file cannot be read, or holds no resume state (truncated, empty, another file,
        keys missing or of another type): naming it, what of the run is left and how to go on
        (:func:`damaged_file`).
    """
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            empty = not fh.read(1)
    except OSError as exc:
        raise TrainingError(f"cannot read {os.fspath(path)!r}: {exc.strerror or exc}") from None
    try:
        state = None if empty else torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a truncated or foreign file: torch raises many kinds
        raise TrainingError(damaged_file(path, f"torch.load cannot read it: {type(exc).__name__}")) from None
    fault = "it is empty" if empty else _resume_fault(state)
    if fault:
        raise TrainingError(damaged_file(path, fault))
    return state


def _intact_checkpoints(run_dir: Path) -> list[str]:
    """The run's checkpoints whose weights match the SHA-256 their ``.json`` records."""
    intact = []
    for name in CHECKPOINTS:
        pt = run_dir / name
        try:
            recorded = json.loads(pt.with_suffix(".json").read_text(encoding="utf-8")).get("sha256")
            if pt.is_file() and recorded == file_sha256(pt):
                intact.append(name)
        except (OSError, ValueError, AttributeError):
            continue
    return intact


def damaged_file(path: Path, why: str) -> str:
    """The message of a run file (``resume.pt``, ``history.json``, ``config.json``) that cannot be
    used, ``why``: that the run cannot be continued, what of it is left and how to go on.

    With intact checkpoints (weights that match their recorded SHA-256), a new run can start
    from their weights (``train.init``); without ``resume.pt``, the run stands where its
    ``history.json`` ends, so removing a damaged ``resume.pt`` has ``nnsweeper resume`` leave
    the run as it is. A run that saved nothing else (stopped within its first epoch) starts
    again once the file is removed.
    """
    path = Path(path)
    run_dir = path.parent
    head = f"{os.fspath(path)!r} is damaged ({why}): the run cannot be continued"
    if not any((run_dir / name).exists() for name in (*CHECKPOINTS, HISTORY_FILE) if name != path.name):
        return (f"{head}, and nothing else of it is saved yet: remove {path.name} and nnsweeper resume "
                f"{os.fspath(run_dir)} starts it again")
    intact = _intact_checkpoints(run_dir)
    if intact:
        kept = (f"its checkpoint{'s' if len(intact) > 1 else ''} {' and '.join(intact)} "
                f"{'are' if len(intact) > 1 else 'is'} intact: a new run can start from their weights, with "
                f"train.init={os.fspath(run_dir / intact[0])} and another output.dir")
    else:
        kept = "it has no intact checkpoint (last.pt, best.pt) either"
    if path.name == RESUME_FILE:
        kept += (f"; remove {RESUME_FILE} to have nnsweeper resume leave the run as its {HISTORY_FILE} "
                 f"says it stands")
    return f"{head}; {kept}"


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
