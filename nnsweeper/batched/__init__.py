"""Many games of one board size in lockstep as torch tensors, and pure neural play on them.

- :mod:`~nnsweeper.batched.games`: :class:`BatchedGames`, N games of one
  :class:`~nnsweeper.game.Rules` as tensors (N, rows, cols) on any torch device, with
  the layouts of :class:`~nnsweeper.game.Game` for the same seeds and first clicks;
  every move is a whole-batch tensor operation.
- :mod:`~nnsweeper.batched.player`: :func:`play_batched`, a pure
  :class:`~nnsweeper.solvers.NeuralSolver`'s policy on them with no Python step per
  game (``play_batched(solver, rules, seeds)``), and :func:`predict_tensor`, a
  model's P(mine) maps of boards held as tensors.

The torch neighbourhood operations they share with the models live in
:mod:`nnsweeper.grid_torch`; each architecture builds its own inputs on the device
(:meth:`MineCNN.predict_tensor <nnsweeper.models.cnn.MineCNN.predict_tensor>`:
:func:`~nnsweeper.models.cnn.encode_grids_tensor`;
:meth:`MineGNN.predict_tensor <nnsweeper.models.gnn.MineGNN.predict_tensor>`:
:func:`~nnsweeper.models.gnn.graph_batch_tensor`, also importable from here).

The package imports torch; ``import nnsweeper`` does not import it. It sits above the
solvers and the models: it imports them, they never import it.
"""

from nnsweeper.batched.games import BatchedGames
from nnsweeper.batched.player import BatchedResults, play_batched, predict_tensor, tie_hash

__all__ = [
    "BatchedGames",
    "BatchedResults",
    "encode_grids_tensor",
    "graph_batch_tensor",
    "predict_tensor",
    "play_batched",
    "tie_hash",
]

#: The model-input builders, importable from here as before: each lives with its model
#: (imported on first use: the GNN's needs torch-geometric).
_MODEL_INPUTS = {"encode_grids_tensor": "nnsweeper.models.cnn", "graph_batch_tensor": "nnsweeper.models.gnn"}


def __getattr__(name):
    if name in _MODEL_INPUTS:
        import importlib

        return getattr(importlib.import_module(_MODEL_INPUTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
