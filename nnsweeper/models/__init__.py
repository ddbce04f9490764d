"""Neural mine predictors: a dilated CNN over the grid and a GNN over the constraint graph.

- :class:`MineModel`: the shared interface, :meth:`~MineModel.predict_proba` (boards
  in, P(mine) out) for playing and evaluation, :meth:`~MineModel.outputs` (a
  training batch in, logits and targets out) for losses and metrics, and
  :meth:`~MineModel.from_config`.
- :class:`MineCNN` (``"cnn"``) and :class:`MineGNN` (``"gnn"``): the architectures.
- :func:`save_checkpoint`, :func:`load_checkpoint`, :func:`load_model`: weights and
  their description on disk, checked when read back (:class:`CheckpointError`).
- :func:`resolve_device`: ``"auto"``, ``"cpu"`` or ``"cuda"`` to a torch device.
"""

from nnsweeper.models.base import ARCHS, MineModel, ModelError, resolve_device
from nnsweeper.models.checkpoint import CheckpointError, load_checkpoint, load_model, save_checkpoint
from nnsweeper.models.cnn import MineCNN
from nnsweeper.models.gnn import MineGNN

__all__ = [
    "ARCHS",
    "CheckpointError",
    "MineCNN",
    "MineGNN",
    "MineModel",
    "ModelError",
    "load_checkpoint",
    "load_model",
    "resolve_device",
    "save_checkpoint",
]
