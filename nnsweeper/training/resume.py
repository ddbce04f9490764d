"""Every run under a folder: where each stands, and continuing the unfinished ones."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from nnsweeper.training_config import TrainingError, check_config

from .folder import CONFIG_FILE, RESUME_FILE, recorded_config
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
    for config in sorted(root.rglob(CONFIG_FILE)):
        run_dir = config.parent
        try:
            recorded = json.loads(config.read_text(encoding="utf-8"))
            epochs = int(recorded["train"]["epochs"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # another program's config.json
        epoch = batch = 0
        if (run_dir / RESUME_FILE).is_file():
            state = torch.load(run_dir / RESUME_FILE, map_location="cpu", weights_only=True)
            epoch, batch = int(state["epoch"]), int(state["batch"])
            epochs = int(recorded_config(state, run_dir / RESUME_FILE)["train"]["epochs"])
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
        recorded = json.loads((state.run_dir / CONFIG_FILE).read_text(encoding="utf-8"))
        # The folder may have moved since the run began: it is where the run is now.
        config = check_config({**recorded, "output": {**recorded["output"], "dir": os.fspath(state.run_dir)}})
        if notify is not None:
            notify(f"continuing {state}")
        resume = (state.run_dir / RESUME_FILE).is_file()
        results.append(train(config, resume=resume, progress=progress, notify=notify))
    return results
