"""Deprecated: the names of the former value-network training module, kept for their callers.

The value networks are architectures of the registry now (``value-gnn``, ``value-cnn``,
target ``"value"``), trained by the one training module: :func:`nnsweeper.training.train`
with a config whose ``[model] arch`` is one of them, or
:func:`nnsweeper.training.train_value` (``nnsweeper train-value``). What was
value-specific moved beside what it belongs to, and is re-exported here:

- :func:`load_value_config` (a checked :class:`~nnsweeper.training.TrainingConfig` now, no
  longer a dict), :data:`TRAIN_DEFAULTS` (the value defaults that differ from a probability
  model's): :mod:`nnsweeper.training_config`;
- :func:`prepare_positions`: :mod:`nnsweeper.datasets.values` (the loader of value
  positions);
- :func:`predict_positions`, :func:`value_metrics`: :mod:`nnsweeper.models.value`.

- :func:`train_value`: :mod:`nnsweeper.training` (this shim sits one layer above it in
  ``pyproject.toml``'s import layers); it returns a :class:`~nnsweeper.training.TrainResult`
  (``best.pt``, ``last.pt``, ``history.json``) as :func:`~nnsweeper.training.train` does.
"""

from __future__ import annotations

from nnsweeper.datasets.values import prepare_positions
from nnsweeper.models.value import predict_positions, value_metrics
from nnsweeper.training import train_value
from nnsweeper.training_config import VALUE_TRAIN_DEFAULTS as TRAIN_DEFAULTS
from nnsweeper.training_config import load_value_config

__all__ = ["TRAIN_DEFAULTS", "load_value_config", "prepare_positions", "predict_positions", "train_value",
           "value_metrics"]
