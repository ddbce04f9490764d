"""Every run under a folder: where each stands, and continuing the unfinished ones."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nnsweeper.errors import NnsweeperError
from nnsweeper.fileio import write_text_atomic
from nnsweeper.training_config import SECTIONS, TrainingError, check_config

from .folder import CONFIG_FILE, HISTORY_FILE, RESUME_FILE, damaged_file, load_resume_state, recorded_config
from .loop import TrainResult, train

__all__ = ["RunState", "ResumedRuns", "run_states", "resume_runs"]


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
    #: Why the run cannot be continued, when one of its files is damaged (its ``resume.pt``, or
    #: without one its ``history.json`` or ``config.json``): the message names the file, what of
    #: the run is left and how to go on. The figures are then zeros.
    damaged: str | None = None
    #: Why its ``config.json`` cannot be used, when its ``resume.pt`` (which records the config
    #: too) can: :func:`resume_runs` writes ``config.json`` again from there.
    config_damaged: str | None = None

    @property
    def finished(self) -> bool:
        return not self.damaged and self.epoch >= self.epochs and not self.batch

    @property
    def stuck(self) -> bool:
        """Unfinished, with epochs done but no ``resume.pt`` to continue from."""
        return not self.damaged and not self.finished and not self.saved and self.epoch > 0

    def __str__(self) -> str:
        if self.damaged:
            return f"{os.fspath(self.run_dir)}: damaged: {self.damaged}"
        where = (f"{self.epoch} of {self.epochs} epochs" if not self.batch
                 else f"{self.epoch} of {self.epochs} epochs and {self.batch} batches of the next")
        if not self.saved and self.epoch:
            where += f" by its {HISTORY_FILE}, without {RESUME_FILE}"
        if self.finished:
            where += " (finished)"
        elif self.stuck:
            where += ": it cannot be continued (a new run may start from its weights, train.init)"
        if self.config_damaged:
            where += (f"; its {CONFIG_FILE} is damaged ({self.config_damaged}): nnsweeper resume writes it "
                      f"again from the config its {RESUME_FILE} records")
        return f"{os.fspath(self.run_dir)}: {where}"


class ResumedRuns(list):
    """What :func:`resume_runs` returns: the :class:`TrainResult` of each run continued (a list),
    and :attr:`skipped`."""

    def __init__(self, results=(), skipped=()):
        super().__init__(results)
        #: ``(run folder, why)`` of each run that could not be continued (damaged, or refused by
        #: :func:`train`), in the order met.
        self.skipped: list[tuple[Path, str]] = list(skipped)


def run_states(root) -> list[RunState]:
    """Every training run under ``root`` (a run folder, or a folder of them, searched at any
    depth): folders with the ``config.json`` that :func:`train` writes first, in path order.

    A run with ``resume.pt`` stands where that file says; one without stands where its
    ``history.json`` ends (:attr:`RunState.saved` is false), or has done nothing yet (it
    stopped before its first save, or has not started). A run whose ``resume.pt`` (or, without
    one, ``history.json`` or ``config.json``) is damaged is listed as such
    (:attr:`RunState.damaged`), the others as they stand. A ``config.json`` that is not a
    training config, in a folder without ``resume.pt``, is another program's: not a run.
    """
    root = Path(root)
    if not root.is_dir():
        raise TrainingError(f"{os.fspath(root)!r} is not a folder of training runs")
    states = []
    for config in sorted(root.rglob(CONFIG_FILE)):
        run_dir = config.parent
        try:
            state = _run_state(run_dir)
        except TrainingError as exc:
            state = RunState(run_dir, 0, 0, 0, (run_dir / RESUME_FILE).is_file(), damaged=_line(exc))
        if state is not None:
            states.append(state)
    return states


def _line(exc: Exception) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _run_state(run_dir: Path) -> RunState | None:
    """Where the run in ``run_dir`` stands; None for a folder that is not a run.

    Raises
    ------
    TrainingError
        A file of the run that is damaged (see :attr:`RunState.damaged`).
    """
    recorded, why = _read_config(run_dir / CONFIG_FILE)
    if (run_dir / RESUME_FILE).is_file():
        state = load_resume_state(run_dir / RESUME_FILE)
        epochs = int(recorded_config(state)["train"]["epochs"])
        return RunState(run_dir, int(state["epoch"]), epochs, int(state["batch"]), True, config_damaged=why)
    if recorded is None:
        if why is None:
            return None  # another program's config.json
        raise TrainingError(f"{os.fspath(run_dir / CONFIG_FILE)!r} holds no usable config ({why}) and the "
                            f"run has no {RESUME_FILE} that records one: correct it")
    epoch = _history_epochs(run_dir / HISTORY_FILE) if (run_dir / HISTORY_FILE).is_file() else 0
    return RunState(run_dir, epoch, recorded.train.epochs, 0, False)


def _read_config(path: Path):
    """``(config, None)``: the checked config a run's ``config.json`` holds; ``(None, why)``: it
    cannot be used (damaged); ``(None, None)``: it is not a training config (another program's,
    or damaged beyond telling).

    A file that is not JSON, or JSON of anything but the tables of a training config, counts as
    another program's unless the folder holds a ``resume.pt``.
    """
    resume = (path.parent / RESUME_FILE).is_file()
    try:
        text = path.read_text(encoding="utf-8")
        recorded = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        if not resume:
            return None, None
        return None, _unreadable(path, exc)
    if not isinstance(recorded, dict) or not all(isinstance(recorded.get(s), dict) for s in SECTIONS):
        return None, ("not the tables of a training config" if resume else None)
    try:
        return check_config(recorded), None
    except TrainingError as exc:
        return None, _line(exc)


def _unreadable(path: Path, exc: Exception) -> str:
    """Why a JSON file of a run could not be read (``exc``), in a few words."""
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    try:
        empty = not path.stat().st_size
    except OSError:
        empty = False
    return "it is empty" if empty else f"not JSON: {type(exc).__name__}"


def _history_epochs(path: Path) -> int:
    """The last epoch a run's ``history.json`` records (0 for none).

    Raises
    ------
    TrainingError
        The file is not the history of a run (damaged).
    """
    try:
        history = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise TrainingError(damaged_file(path, _unreadable(path, exc))) from None
    lines = history if isinstance(history, list) else None
    if lines is None or not all(isinstance(line, dict) and isinstance(line.get("epoch"), int)
                                and not isinstance(line.get("epoch"), bool) for line in lines):
        raise TrainingError(damaged_file(path, "not a list of epoch lines"))
    return max((line["epoch"] for line in lines), default=0)


def resume_runs(root, *, progress: bool = True,
                notify: Callable[[str], None] | None = None) -> ResumedRuns:
    """Continue every unfinished run under ``root`` (:func:`run_states`), one after the other,
    each with the config it recorded (``config.json``): a long training started in parts,
    after a kill or on another day, resumed by one call (``nnsweeper resume``).

    A run that had not saved yet starts again; one that cannot be continued
    (:attr:`RunState.stuck`) is left as it is, with a note. A damaged run
    (:attr:`RunState.damaged`), or one that :func:`train` refuses (its dataset gone or
    changed, say), is skipped with a note and recorded in :attr:`ResumedRuns.skipped`; the
    others go on. A run whose ``config.json`` is damaged but whose ``resume.pt`` is not goes on
    with the config ``resume.pt`` records, written again to ``config.json``. The results are
    those of :func:`train`.

    Raises
    ------
    TrainingError
        ``root`` is no folder; or ``root`` is itself the one run found and it is damaged or
        refused (as :func:`train` would raise).
    """
    root = Path(root)
    states = run_states(root)
    alone = len(states) == 1 and states[0].run_dir == root  # one run given: its error is the error
    results = ResumedRuns()
    for state in states:
        try:
            result = _resume(state, progress=progress, notify=notify)
        except (NnsweeperError, OSError) as exc:
            if alone:
                raise
            results.skipped.append((state.run_dir, _line(exc)))
            if notify is not None:
                notify(f"skipped {os.fspath(state.run_dir)}: {_line(exc)}")
            continue
        if result is not None:
            results.append(result)
    return results


def _resume(state: RunState, *, progress: bool, notify: Callable[[str], None] | None) -> TrainResult | None:
    """Continue one run of :func:`resume_runs` (None: nothing to do); raises what stops it."""
    if state.damaged:
        raise TrainingError(state.damaged)
    if state.config_damaged:
        _rewrite_config(state, notify)
    if state.finished:
        return None
    if state.stuck:
        if notify is not None:
            notify(f"left alone: {state}")
        return None
    recorded = json.loads((state.run_dir / CONFIG_FILE).read_text(encoding="utf-8"))
    # The folder may have moved since the run began: it is where the run is now.
    config = check_config({**recorded, "output": {**recorded["output"], "dir": os.fspath(state.run_dir)}})
    if notify is not None:  # (a config.json written again said so already)
        notify(f"continuing {dataclasses.replace(state, config_damaged=None)}")
    return train(config, resume=state.saved, progress=progress, notify=notify)


def _rewrite_config(state: RunState, notify: Callable[[str], None] | None) -> None:
    """Write a run's damaged ``config.json`` again from the config its ``resume.pt`` records."""
    recorded = recorded_config(load_resume_state(state.run_dir / RESUME_FILE), state.run_dir / RESUME_FILE)
    config = check_config({**recorded, "output": {**recorded["output"], "dir": os.fspath(state.run_dir)}})
    write_text_atomic(state.run_dir / CONFIG_FILE, config.to_json(indent=1) + "\n")
    if notify is not None:
        notify(f"{os.fspath(state.run_dir / CONFIG_FILE)} was damaged ({state.config_damaged}); wrote it "
               f"again from the config {RESUME_FILE} records")
