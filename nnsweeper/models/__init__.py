"""Neural mine predictors: a dilated CNN over the grid and a GNN over the constraint graph.

- :class:`MineModel`: the shared interface, :meth:`~MineModel.predict_proba` (boards
  in, P(mine) out) for playing and evaluation, :meth:`~MineModel.outputs` (a
  training batch in, logits and targets out) for losses and metrics,
  :attr:`~MineModel.inputs` (the kind of input it reads, which picks the loader of
  its training batches in :data:`nnsweeper.datasets.LOADERS`) and
  :meth:`~MineModel.from_config`.
- :class:`MineCNN` (``"cnn"``) and :class:`MineGNN` (``"gnn"``): the architectures,
  listed in :mod:`nnsweeper.models.registry` (:data:`ARCHITECTURES`).
- :class:`ValueGNN` (``"value-gnn"``) and :class:`ValueCNN` (``"value-cnn"``): the
  state-value networks of :mod:`nnsweeper.models.value`, architectures of target
  ``"value"`` (:data:`VALUE_ARCHITECTURES`), saved and loaded by the same checkpoint
  functions.
- :func:`save_checkpoint`, :func:`load_checkpoint`, :func:`load_model`: weights and
  their description on disk, checked when read back (:class:`CheckpointError`).
- :func:`resolve_device`: ``"auto"``, ``"cpu"`` or ``"cuda"`` to a torch device.
- :func:`symmetry_gaps`: how far a model is from commuting with the board's symmetries.

The registry needs no torch; everything else here is imported on first use, so that
``import nnsweeper`` (and the solver registry, which reads the architectures) stays
free of it. The models import nothing of the packages that use them (solvers,
datasets, training, batched play).
"""

from nnsweeper.models.registry import (
    ARCHITECTURES,
    TARGETS,
    VALUE_ARCHITECTURES,
    Architecture,
    all_architectures,
    get_architecture,
    register_architecture,
    unregister_architecture,
)

_LAZY = {
    "MineModel": "nnsweeper.models.base",
    "ModelConfig": "nnsweeper.models.config",
    "CNNConfig": "nnsweeper.models.config",
    "GNNConfig": "nnsweeper.models.config",
    "ModelError": "nnsweeper.models.config",
    "resolve_device": "nnsweeper.models.base",
    "board_batches": "nnsweeper.models.base",
    "symmetry_gaps": "nnsweeper.models.base",
    "CheckpointError": "nnsweeper.models.checkpoint",
    "load_checkpoint": "nnsweeper.models.checkpoint",
    "load_model": "nnsweeper.models.checkpoint",
    "save_checkpoint": "nnsweeper.models.checkpoint",
    "MineCNN": "nnsweeper.models.cnn",
    "MineGNN": "nnsweeper.models.gnn",
    "ValueConfig": "nnsweeper.models.config",
    "ValueGNN": "nnsweeper.models.value",
    "ValueCNN": "nnsweeper.models.value",
}


def __getattr__(name):
    if name == "ARCHS":
        # The architecture names, in registration order (kept for existing callers).
        return tuple(ARCHITECTURES)
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ARCHITECTURES",
    "ARCHS",
    "Architecture",
    "CNNConfig",
    "CheckpointError",
    "GNNConfig",
    "MineCNN",
    "MineGNN",
    "MineModel",
    "ModelConfig",
    "ModelError",
    "TARGETS",
    "VALUE_ARCHITECTURES",
    "ValueCNN",
    "ValueConfig",
    "ValueGNN",
    "all_architectures",
    "board_batches",
    "get_architecture",
    "load_checkpoint",
    "load_model",
    "register_architecture",
    "resolve_device",
    "save_checkpoint",
    "symmetry_gaps",
    "unregister_architecture",
]
