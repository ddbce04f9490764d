"""Every run under a folder: where each stands, and continuing the unfinished ones."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from nnsweeper.training_config import TrainingError, check_config

from .folder import CONFIG_FILE, HISTORY_FILE, RESUME_FILE, recorded_config
from .loop import TrainResult, train

__all__ = ["RunState", "run_states", "resume_runs"]


@dataclass(frozen=True)
class RunState:
    """Where a run folder stands (:func:`run_states`)."""

    #: The run folder.
    run_dir: Path
    #: Epochs done and asked for, and batches of the next epoch done.
    epoch: int
    epochs: int
    batch: int
    #: Whether the folder holds the ``resume.pt`` the figures come from. Without it, a run whose
    #: ``history.json`` records epochs (its ``resume.pt`` deleted, or left behind when the run's
    #: files were copied from another machine) stands where that history ends and cannot be
    #: continued; one without either has done nothing yet.
    saved: bool = True

    @property
    def finished(self) -> bool:
        return self.epoch >= self.epochs and not self.batch

    @property
    def stuck(self) -> bool:
        """Unfinished, with epochs done but no ``resume.pt`` to continue from."""
        return not self.finished and not self.saved and self.epoch > 0

    def __str__(self) -> str:
        where = (f"{self.epoch} of {self.epochs} epochs" if not self.batch
                 else f"{self.epoch} of {self.epochs} epochs and {self.batch} batches of the next")
        if not self.saved and self.epoch:
            where += f" by its {HISTORY_FILE}, without {RESUME_FILE}"
        if self.finished:
            where += " (finished)"
        elif self.stuck:
            where += ": it cannot be continued (a new run may start from its weights, train.init)"
        return f"{os.fspath(self.run_dir)}: {where}"


def run_states(root) -> list[RunState]:
    """Every training run under ``root`` (a run folder, or a folder of them, searched at any
    depth): folders with the ``config.json`` that :func:`train` writes first, in path order.

    A run with ``resume.pt`` stands where that file says; one without stands where its
    ``history.json`` ends (:attr:`RunState.saved` is false), or has done nothing yet (it
    stopped before its first save, or has not started).
    """
    root = Path(root)
    if not root.is_dir():
        raise TrainingError(f"{os.fspath(root)!r} is not a folder of training runs")
    states = []
    for config in sorted(root.rglob(CONFIG_FILE)):
        run_dir = config.parent
        try:
            recorded = json.loads(config.read_text(encoding="utf-8"))
            epochs = int(recorded["train"]["epochs"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # another program's config.json
        epoch = batch = 0
        saved = (run_dir / RESUME_FILE).is_file()
        if saved:
            state = torch.load(run_dir / RESUME_FILE, map_location="cpu", weights_only=True)
            epoch, batch = int(state["epoch"]), int(state["batch"])
            epochs = int(recorded_config(state, run_dir / RESUME_FILE)["train"]["epochs"])
        elif (run_dir / HISTORY_FILE).is_file():
            epoch = _history_epochs(run_dir / HISTORY_FILE)
        states.append(RunState(run_dir, epoch, epochs, batch, saved))
    return states


def _history_epochs(path: Path) -> int:
    """The last epoch a run's ``history.json`` records (0 for none or a file not of a run)."""
    try:
        history = json.loads(path.read_text(encoding="utf-8"))
        return max((int(line["epoch"]) for line in history), default=0)
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def resume_runs(root, *, progress: bool = True,
                notify: Callable[[str], None] | None = None) -> list[TrainResult]:
    """Continue every unfinished run under ``root`` (:func:`run_states`), one after the other,
    each with the config it recorded (``config.json``): a long training started in parts,
    after a kill or on another day, resumed by one call (``nnsweeper resume``).

    A run that had not saved yet starts again; one that cannot be continued
    (:attr:`RunState.stuck`) is left as it is, with a note. The results are those of
    :func:`train`.
    """
    results = []
    for state in run_states(root):
        if state.finished:
            continue
        if state.stuck:
            if notify is not None:
                notify(f"left alone: {state}")
            continue
        recorded = json.loads((state.run_dir / CONFIG_FILE).read_text(encoding="utf-8"))
        # The folder may have moved since the run began: it is where the run is now.
        config = check_config({**recorded, "output": {**recorded["output"], "dir": os.fspath(state.run_dir)}})
        if notify is not None:
            notify(f"continuing {state}")
        resume = (state.run_dir / RESUME_FILE).is_file()
        results.append(train(config, resume=resume, progress=progress, notify=notify))
    return results
