"""Training of the models: the loop, checkpoints, resume, DDP.

A run is described by a TOML config (``train/*.toml``) with the tables ``[data]``,
``[model]``, ``[train]`` and ``[output]``; :mod:`nnsweeper.training_config` reads and
checks it (:func:`load_config`, :func:`check_config`, re-exported here) and lists
every key with its default (``nnsweeper train --help``). :func:`train` runs it: it
checks the dataset and the run folder, builds the model, the loaders of its kind of
input (:func:`nnsweeper.datasets.make_loader`), AdamW and the schedule, resumes
when asked, then trains epoch after epoch.

The loss is the binary cross-entropy of every unknown (covered, unflagged) cell
against the target, weighted so that the GNN's shared interior prediction counts
once per interior cell. Each epoch ends with a validation pass
(:func:`nnsweeper.metrics.evaluate_predictions`, frontier and interior apart) and
writes ``last.pt`` (and ``best.pt`` when the validation loss improved), each a
state dict with its JSON config (:func:`nnsweeper.models.save_checkpoint`), plus
``resume.pt`` (model, optimiser, schedule, position) for ``--resume``. Resuming
after a kill replays the same batches in the same order, so on the CPU it ends with
the same weights as a run that was never stopped. Every file is written atomically,
and Ctrl-C waits while the files of an epoch's end are written, so they always agree;
the interruption (:class:`TrainingInterrupted`) says what ``resume.pt`` holds.
A ``resume.pt`` that cannot be read (truncated, empty, another file, keys missing) is
refused with a :class:`TrainingError` that names it and what of the run is left (its
checkpoints, if intact, for a new run's ``train.init``); :func:`resume_runs` skips such a
run with a note and goes on with the others.

A run resumes with the config it started with, except for ``train.epochs`` (to train a
finished run longer, or stop it sooner), ``output.dir`` (a moved run folder) and
``data.path`` (a moved dataset: its manifest's SHA-256 must not change). With another
``train.epochs`` the warm-up and cosine decay are recomputed over the new number of
steps from the step reached: the learning rate jumps to that schedule's value (up,
when a run is extended), so the weights are not those of a run started with that
number of epochs. The change is recorded in ``resume.pt`` and the checkpoints
(``epochs_changes``). Resuming a run that has done all its epochs trains nothing.

Several processes (``torchrun --nproc_per_node N -m nnsweeper train ...``) train
one model with ``DistributedDataParallel`` (gloo on CPU, NCCL on GPUs): each rank
takes every N-th batch; rank 0 validates and writes the files.

A model of target ``"value"`` (``[model] arch = "value-gnn"`` or ``"value-cnn"``, a
state-value network of :mod:`nnsweeper.models.value`) is trained by the same loop, with
the same files, resume and DDP: its loader (the model's ``inputs`` are ``"value"``) gives
the positions of a value dataset with their exact analyses
(:class:`nnsweeper.datasets.values.PositionBatches`), batches of one board size; the
loss is the cross-entropy of one logit per position against its value label, and the
validation pass :func:`nnsweeper.models.value.value_metrics` (cross-entropy, squared
error against the labels and against each board size's mean value).
:func:`load_value_config` reads its config with the value defaults (``nnsweeper
train-value``, an alias of ``train`` for these configs).

The package: :mod:`.loop` (the loop, :func:`train`), :mod:`.folder` (a run folder's
files and checks), :mod:`.scoring` (the loss, :func:`validate`, :func:`evaluate_model`),
:mod:`.board` (TensorBoard logs), :mod:`.resume` (:func:`resume_runs`); the config lives
in :mod:`nnsweeper.training_config`, the models in :mod:`nnsweeper.models` and their
loaders in :mod:`nnsweeper.datasets`.
"""

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
    is_value_config,
    load_config,
    load_value_config,
)

from .board import TENSORBOARD
from .loop import TrainingInterrupted, TrainResult, train, train_value
from .resume import ResumedRuns, RunState, resume_runs, run_states
from .scoring import KIND_FIELDS, READY_SHARE, evaluate_model, play_readiness, validate

__all__ = [
    "TrainingError", "TrainResult", "TrainingConfig", "DataSection", "TrainSection", "OutputSection",
    "SECTIONS", "load_config", "apply_overrides", "check_config", "config_help", "train", "validate",
    "evaluate_model", "KIND_FIELDS", "TrainingInterrupted", "train_value", "load_value_config",
    "is_value_config", "RunState", "ResumedRuns", "run_states", "resume_runs", "TENSORBOARD",
    "play_readiness", "READY_SHARE",
]
