"""TensorBoard logs of a training run (``RUN/tensorboard``)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from nnsweeper.fileio import write_error

__all__ = ["TENSORBOARD", "TensorBoardLog"]

#: The folder of a run's TensorBoard logs.
TENSORBOARD = "tensorboard"


class TensorBoardLog:
    """A run's TensorBoard log, ``RUN/tensorboard`` (rank 0 only): every step's loss and
    learning rate, every epoch's validation figures (by kind where the split has kinds)."""

    def __init__(self):
        self.writer = None
        self.folder: Path | None = None
        self._hook = None

    @contextlib.contextmanager
    def _writing(self):
        """A write of the logs that fails (a full disk, a file-size limit) is an OSError naming them.

        tensorboard writes in a thread of its own, which keeps the error and raises it again
        at the writer's next call, here; the thread's own report (a traceback on stderr) is
        left out while the log is open.
        """
        try:
            yield
        except OSError as exc:
            raise write_error(exc, f"the TensorBoard logs in {os.fspath(self.folder)!r}") from None

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
        folder = self.folder = run.run_dir / TENSORBOARD
        self._hook = threading.excepthook
        threading.excepthook = _quiet_writer_thread(self._hook)
        # Steps are logged as the count done (1 for the first): a resumed run hides what a
        # stopped one logged after its resume.pt, from step run.step + 1 on.
        with self._writing():
            self.writer = SummaryWriter(log_dir=os.fspath(folder),
                                        purge_step=run.step + 1 if run.step else None)
            if not run.step:
                self.writer.add_text("config", "```\n" + run.config.to_json(indent=1) + "\n```", 0)
        return folder

    def step(self, step: int, loss: float, lr: float) -> None:
        if self.writer is not None:
            with self._writing():
                self.writer.add_scalar("train/loss", loss, step)
                self.writer.add_scalar("train/lr", lr, step)

    def epoch(self, step: int, record: dict) -> None:
        """The figures of an epoch's line of ``history.json`` (nested ones by kind and label)."""
        if self.writer is None:
            return
        with self._writing():
            self._epoch(step, record)

    def _epoch(self, step: int, record: dict) -> None:
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

    def close(self, *, quiet: bool = False) -> None:
        """Flush and close the logs; ``quiet``: whatever that raises is dropped (a run stopping for
        another reason, which its message says)."""
        writer, self.writer = self.writer, None
        try:
            if writer is not None:
                with self._writing():
                    writer.close()
        except OSError:
            if not quiet:
                raise
        finally:
            if self._hook is not None:
                threading.excepthook, self._hook = self._hook, None


def _quiet_writer_thread(previous):
    """``threading.excepthook`` that leaves out tensorboard's writer thread (whose error its
    writer raises again in the main thread) and hands every other thread to ``previous``."""
    def hook(args):
        if type(args.thread).__name__ != "_AsyncWriterThread":
            previous(args)

    return hook
