"""TensorBoard logs of a training run (``RUN/tensorboard``)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["TENSORBOARD", "TensorBoardLog"]

#: The folder of a run's TensorBoard logs.
TENSORBOARD = "tensorboard"


class TensorBoardLog:
    """A run's TensorBoard log, ``RUN/tensorboard`` (rank 0 only): every step's loss and
    learning rate, every epoch's validation figures (by kind where the split has kinds)."""

    def __init__(self):
        self.writer = None

    def open(self, run) -> Path | None:
        """Start writing for ``run`` (a :class:`~nnsweeper.training.loop.Run`); a resumed run
        drops what a stopped one logged past its ``resume.pt``. Returns the folder, or None."""
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
        for key in ("train_loss", "examples", "seconds", "examples_per_second"):
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
