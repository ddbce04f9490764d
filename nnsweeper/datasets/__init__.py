"""Labelled datasets: generation, storage, held-out seeds, and torch / PyG loaders.

- :func:`generate` plays games with a behaviour policy and writes sharded ``.npz``
  files plus ``manifest.json`` (:mod:`~nnsweeper.datasets.generate`; the policies and
  the recording of one game in :mod:`~nnsweeper.datasets.policies`, the dataset card in
  :mod:`~nnsweeper.datasets.card`, the files in :mod:`~nnsweeper.datasets.storage`).
- :mod:`nnsweeper.seeds`: the game-seed streams of the splits, disjoint
  from each other and from every evaluation seed; :func:`check_seed_overlap`.
- :mod:`~nnsweeper.datasets.loaders`: a torch ``Dataset`` of grid tensors for the
  CNN and a torch-geometric dataset of constraint graphs for the GNN, loaded shard
  by shard; :data:`LOADERS`, the loader of each kind of model input (a model's
  ``inputs``: ``"grid"``, ``"graph"``), and :func:`make_loader`, a model's training
  batches.
"""

from nnsweeper.datasets.card import format_card, shard_statistics
from nnsweeper.datasets.generate import MIXES, STARTS, Part, generate, parse_part, resolve_parts
from nnsweeper.datasets.policies import FLAG_MODES, POLICIES, RECORD_MODES, record_game
from nnsweeper.datasets.storage import (
    SHARD_FIELDS,
    check_shards,
    file_sha256,
    load_manifest,
    read_shard,
    write_shard,
)
from nnsweeper.seeds import SPLITS, check_seed_overlap, manifest_seeds, split_range, stream_seeds

# The loaders need torch; they are imported on first use, so that generating data (and
# its worker processes) does not load torch.
_LOADERS = (
    "StateDataset", "GraphDataset", "ShardBatchSampler", "collate_grids", "grid_loader", "graph_loader",
    "LOADERS", "register_loader", "make_loader",
)


def __getattr__(name):
    if name in _LOADERS:
        from nnsweeper.datasets import loaders

        return getattr(loaders, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    *_LOADERS,
    "FLAG_MODES",
    "MIXES",
    "POLICIES",
    "RECORD_MODES",
    "SHARD_FIELDS",
    "SPLITS",
    "STARTS",
    "Part",
    "check_seed_overlap",
    "file_sha256",
    "format_card",
    "generate",
    "load_manifest",
    "manifest_seeds",
    "parse_part",
    "read_shard",
    "check_shards",
    "record_game",
    "resolve_parts",
    "shard_statistics",
    "split_range",
    "stream_seeds",
    "write_shard",
]
