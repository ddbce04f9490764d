"""Torch and torch-geometric views of a dataset folder, read shard by shard.

A dataset (:mod:`nnsweeper.datasets.storage`) is a folder of ``.npz`` shards and a
manifest. The datasets here index the states of one split without reading any
shard up front: the manifest's per-shard state counts give every state's place, a
shard is read (and its checksum checked, once per process) the first time one of
its states is asked for, and a few decoded shards stay in a small LRU cache.

* :class:`StateDataset`: a ``torch.utils.data.Dataset`` of grid tensors for a
  convolutional model (:func:`nnsweeper.features.encode_grid`), with
  :func:`collate_grids` to batch them (padding boards of different sizes).
* :class:`GraphDataset`: a ``torch_geometric.data.Dataset`` of frontier graphs
  (:func:`nnsweeper.features.build_graph`).
* :class:`ShardBatchSampler`: batches of one board size drawn from a few shards at a
  time, so that shuffling never needs the whole split in memory; it also splits the
  batches between the ranks of a distributed run.
* :func:`grid_loader` and :func:`graph_loader`: data loaders wired with all of these,
  and :func:`value_loader` (the value networks' positions), the entries of
  :data:`LOADERS` (the loader of each kind of model input, a model's ``inputs``), from
  which :func:`make_loader` gives a model its training batches.

Every object here pickles without its cache, so ``DataLoader`` worker processes
open the shards they need themselves.

The module is longer than most because both datasets and the sampler share the
shard index, the cache and the batch-size bounds; each part is short.
"""

from __future__ import annotations

import bisect
import math
import numbers
import os
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath

import numpy as np
import torch
import torch.utils.data
import torch_geometric.data
import torch_geometric.loader

from nnsweeper import features
from nnsweeper.errors import DatasetError, check_int
from nnsweeper.grid import apply_symmetry, board_symmetries, dilate
from nnsweeper.seeds import SPLITS

from .storage import SHARD_FIELDS, load_manifest, read_shard

__all__ = [
    "MAX_BATCH_CELLS",
    "StateDataset",
    "GraphDataset",
    "ShardBatchSampler",
    "collate_grids",
    "grid_loader",
    "graph_loader",
]

# Keys a manifest's shard entry must have for the loaders.
_ENTRY_KEYS = ("file", "split", "config", "rows", "cols", "states", "sha256")
# Keyword arguments that the loader helpers hand to the dataset and to the sampler.
_DATASET_KW = ("verify", "cache_shards", "configs", "in_memory", "augment")
_SAMPLER_KW = ("pool", "drop_last", "rank", "world_size")

#: Most board cells per batch (states x rows x cols), checked for every board size of
#: a dataset when its :class:`ShardBatchSampler` is made. Memory follows the cells: a
#: forward and backward pass of the CNN takes about 3.6 KB a cell (2.3 GB for 64
#: boards of 100x100), inference about 0.7 KB. At 2**19 cells a training step stays
#: under 2 GB: 128 states fit up to 64x64 boards, 52 states of 100x100.
MAX_BATCH_CELLS = 2**19


def _check_int(name: str, value, minimum: int) -> int:
    return check_int(name, value, minimum, DatasetError)


def _is_scalar_index(idx) -> bool:
    """Whether ``idx`` asks for one item (an integer, or a 0-d integer tensor or array)."""
    if isinstance(idx, torch.Tensor):
        return idx.dim() == 0 and not idx.is_floating_point() and idx.dtype != torch.bool
    if isinstance(idx, np.ndarray):
        return idx.ndim == 0 and np.issubdtype(idx.dtype, np.integer)
    return isinstance(idx, numbers.Integral) and not isinstance(idx, bool | np.bool_)


class _ShardIndex:
    """The states of one split of a dataset folder, located by shard, read lazily.

    Parameters
    ----------
    root : str or os.PathLike
        The dataset folder (or its ``manifest.json``).
    split : {"train", "val", "test"}
        Which split.
    verify : bool
        Check each shard's SHA-256 against the manifest the first time this process
        reads it.
    cache_shards : int
        Decoded shards kept in memory (least recently used first out), at least 1.
    configs : str or iterable of str, optional
        Only the shards of these configuration keys.
    """

    def __init__(self, root, split: str, *, verify: bool, cache_shards: int, configs):
        path = Path(os.fspath(root))
        self.root = path.parent if path.is_file() else path
        self.manifest = load_manifest(path)
        if split not in SPLITS:
            raise DatasetError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")
        self.split = split
        self.verify = bool(verify)
        self.cache_shards = _check_int("cache_shards", cache_shards, 1)
        self.configs = self._check_configs(configs)

        shards = []
        for n, entry in enumerate(self.manifest["shards"]):
            if not isinstance(entry, Mapping) or any(k not in entry for k in _ENTRY_KEYS):
                raise DatasetError(
                    f"shard entry {n} of the manifest in {os.fspath(self.root)!r} must have the keys "
                    f"{', '.join(_ENTRY_KEYS)}; got {entry!r}"
                )
            if entry["split"] != split or (self.configs is not None and entry["config"] not in self.configs):
                continue
            _check_int(f"'states' of shard {entry['file']!r}", entry["states"], 0)
            self._shard_path(entry)  # reject paths outside the folder early
            shards.append(dict(entry))
        self.shards: list[dict] = shards
        self.offsets = np.concatenate([[0], np.cumsum([e["states"] for e in shards], dtype=np.int64)])
        if self.offsets[-1] == 0:
            which = "" if self.configs is None else f" of configurations {', '.join(self.configs)}"
            raise DatasetError(
                f"the {split!r} split{which} of the dataset in {os.fspath(self.root)!r} holds no states; "
                f"a dataset needs at least one"
            )
        self._cache: OrderedDict[int, dict[str, np.ndarray]] = OrderedDict()
        self._verified: set[int] = set()
        self.reads = 0

    def _check_configs(self, configs) -> tuple[str, ...] | None:
        if configs is None:
            return None
        keys = (configs,) if isinstance(configs, str) else tuple(configs)
        known = [c.get("key") for c in self.manifest["configurations"] if isinstance(c, Mapping)]
        known += [e.get("config") for e in self.manifest["shards"] if isinstance(e, Mapping)]
        for key in keys:
            if key not in known:
                raise DatasetError(
                    f"configs must name configurations of the dataset ({', '.join(dict.fromkeys(known))}); "
                    f"got {key!r}"
                )
        if not keys:
            raise DatasetError("configs must name at least one configuration; got none")
        return keys

    def _shard_path(self, entry: Mapping) -> Path:
        rel = PurePosixPath(str(entry["file"]))
        if rel.is_absolute() or ".." in rel.parts or Path(str(entry["file"])).is_absolute():
            raise DatasetError(
                f"shard file {entry['file']!r} must be a path inside the dataset folder (relative, no '..')"
            )
        return self.root.joinpath(*rel.parts)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def position(self, i) -> int:
        """``i`` as a state number in ``[0, len)`` (negative ``i`` counts from the end)."""
        if not _is_scalar_index(i):
            raise DatasetError(f"a state index must be an integer; got {i!r}")
        i = int(i)
        n = len(self)
        if not -n <= i < n:
            raise DatasetError(
                f"state index {i} is out of range for the {n} states of the {self.split!r} split "
                f"(valid: -{n} to {n - 1})"
            )
        return i + n if i < 0 else i

    def locate(self, i) -> tuple[int, int]:
        """``(shard number, row)`` of state ``i``."""
        i = self.position(i)
        k = int(np.searchsorted(self.offsets, i, side="right")) - 1
        return k, i - int(self.offsets[k])

    def arrays(self, k: int) -> dict[str, np.ndarray]:
        """The decoded arrays of shard ``k`` (read on first use, then cached)."""
        hit = self._cache.get(k)
        if hit is not None:
            self._cache.move_to_end(k)
            return hit
        entry = self.shards[k]
        path = self._shard_path(entry)
        check = self.verify and k not in self._verified
        arrays = read_shard(path, entry["sha256"] if check else None)
        if check:
            self._verified.add(k)
        self.reads += 1
        n, r, c = arrays["grid"].shape
        if (n, r, c) != (entry["states"], entry["rows"], entry["cols"]):
            raise DatasetError(
                f"shard {os.fspath(path)!r} holds {n} states of {r}x{c} boards; the manifest records "
                f"{entry['states']} states of {entry['rows']}x{entry['cols']}"
            )
        self._cache[k] = arrays
        while len(self._cache) > self.cache_shards:
            self._cache.popitem(last=False)
        return arrays

    def state(self, i) -> dict[str, np.ndarray]:
        """The raw arrays of state ``i`` (copies): one entry per shard field."""
        k, row = self.locate(i)
        arrays = self.arrays(k)
        return {name: np.array(arrays[name][row]) for name in SHARD_FIELDS}

    def __getstate__(self) -> dict:
        # Worker processes get the index without the decoded shards and read their own.
        state = self.__dict__.copy()
        state["_cache"] = OrderedDict()
        return state


class _ShardedStates:
    """What :class:`StateDataset` and :class:`GraphDataset` share: the lazy shard index."""

    _index: _ShardIndex
    _items: dict | None = None

    def _init_memory(self, in_memory: bool) -> None:
        self._items = {} if in_memory else None

    def _item(self, i: int, build):
        """Item ``i`` from ``build(state)``, kept after the first build when ``in_memory``."""
        if self._items is None:
            return build(self._index.state(i))
        item = self._items.get(i)
        if item is None:
            item = self._items[i] = build(self._index.state(i))
        return item

    @property
    def in_memory(self) -> bool:
        """Whether built items are kept in memory (see the ``in_memory`` parameter)."""
        return self._items is not None

    @property
    def manifest(self) -> dict:
        """The dataset's manifest."""
        return self._index.manifest

    @property
    def shards(self) -> list[dict]:
        """The manifest entries of the shards in use, in manifest order (shard numbers index it)."""
        return self._index.shards

    @property
    def split(self) -> str:
        return self._index.split

    @property
    def folder(self) -> Path:
        """The dataset folder."""
        return self._index.root

    @property
    def cached_shards(self) -> tuple[int, ...]:
        """Numbers of the shards now decoded in this process's cache, least recently used first."""
        return tuple(self._index._cache)

    @property
    def shards_read(self) -> int:
        """How many times this process has read a shard file (cache misses)."""
        return self._index.reads

    def shard_index(self, i) -> tuple[int, int]:
        """``(shard number, row in the shard)`` of state ``i``; reads nothing.

        Raises
        ------
        DatasetError
            ``i`` is not an integer, or out of range.
        """
        return self._index.locate(i)

    def shape_of(self, i) -> tuple[int, int]:
        """``(rows, cols)`` of the board of state ``i``; reads nothing."""
        entry = self._index.shards[self._index.locate(i)[0]]
        return int(entry["rows"]), int(entry["cols"])

    def state(self, i) -> dict[str, np.ndarray]:
        """The raw arrays of state ``i``, copied out of its shard.

        Returns
        -------
        dict of ndarray
            One entry per shard field: ``grid``, ``flags``, ``mines``, ``prob`` of shape
            (rows, cols), and ``total_mines``, ``game_seed``, ``game``, ``step``,
            ``guess``, ``won`` as 0-d arrays.
        """
        return self._index.state(i)


def _state_tensors(s: Mapping[str, np.ndarray]) -> dict[str, torch.Tensor]:
    grid, flags = s["grid"], s["flags"]
    total = int(s["total_mines"])
    unknown = (grid == -1) & ~flags
    return {
        "x": torch.from_numpy(features.encode_grid(grid, total, flags)),
        "prob": torch.from_numpy(s["prob"].astype(np.float32)),
        "mine": torch.from_numpy(s["mines"].astype(np.float32)),
        "unknown": torch.from_numpy(unknown),
        "frontier": torch.from_numpy(unknown & dilate(grid >= 0)),
        "total_mines": torch.tensor(total, dtype=torch.int64),
    }


class StateDataset(_ShardedStates, torch.utils.data.Dataset):
    """The board states of one split as grid tensors, read shard by shard.

    Parameters
    ----------
    root : str or os.PathLike
        A dataset folder written by :func:`nnsweeper.datasets.generate` (or its
        ``manifest.json``).
    split : {"train", "val", "test"}, default="train"
        Which split.
    verify : bool, default=True
        Check each shard's SHA-256 against the manifest the first time it is read
        (once per process; a cache eviction does not check again).
    cache_shards : int, default=4
        Decoded shards kept in memory per process (least recently used first out).
    configs : str or iterable of str, optional
        Only the states of these configuration keys (e.g. ``"9x9-m10-safe-csp"``).
    in_memory : bool, default=False
        Keep every item once built, so that later epochs skip decoding and encoding
        (for datasets that fit in memory; each ``DataLoader`` worker keeps its own).
    augment : bool, default=False
        Return each state under one of its board's symmetries
        (:func:`nnsweeper.grid.board_symmetries`: 8 for a square board, 4 otherwise),
        every tensor of it transformed alike. The symmetry is drawn from ``seed``, the
        epoch (:meth:`set_epoch`) and the state's number, so an epoch's items are the
        same on every run and in every loader process.
    seed : int, default=0
        With ``augment``: the entropy of the symmetries drawn.

    Notes
    -----
    Construction reads the manifest only. States are numbered in manifest shard
    order, then in shard row order. ``dataset[i]`` is a dict of tensors
    (``r x c`` the board of state ``i``):

    ==================  =========  ==============================================
    ``"x"``             float32    (C, r, c) :func:`nnsweeper.features.encode_grid`
    ``"prob"``          float32    (r, c) exact P(mine) (0 revealed, 1 flagged)
    ``"mine"``          float32    (r, c) truth: 1 at covered cells holding a mine
    ``"unknown"``       bool       (r, c) covered unflagged cells (the loss mask)
    ``"frontier"``      bool       (r, c) unknown cells next to a revealed cell
    ``"total_mines"``   int64      () mines on the board
    ==================  =========  ==============================================

    Raises
    ------
    DatasetError
        A missing or invalid manifest, an unknown split or configuration, a
        selection without states; later, a bad index or an unreadable shard.
    ChecksumError
        A shard whose bytes differ from the manifest's checksum (when first read).
    """

    def __init__(self, root, split: str = "train", *, verify: bool = True, cache_shards: int = 4,
                 configs: str | Iterable[str] | None = None, in_memory: bool = False, augment: bool = False,
                 seed: int = 0):
        self._index = _ShardIndex(root, split, verify=verify, cache_shards=cache_shards, configs=configs)
        self._init_memory(in_memory)
        if not isinstance(augment, bool):
            raise DatasetError(f"augment must be True or False; got {augment!r}")
        self.augment = augment
        self.seed = _check_int("seed", seed, 0)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Draw the next items' symmetries for epoch ``epoch`` (with ``augment``)."""
        self.epoch = _check_int("epoch", epoch, 0)

    def __len__(self) -> int:
        return len(self._index)

    def __getitem__(self, i) -> dict[str, torch.Tensor]:
        item = self._item(i, _state_tensors)
        if not self.augment:
            return item
        symmetries = board_symmetries(*item["prob"].shape)
        draw = np.random.default_rng((self.seed, self.epoch, self._index.position(i)))
        symmetry = symmetries[int(draw.integers(len(symmetries)))]
        return {k: apply_symmetry(v, symmetry) if v.dim() >= 2 else v for k, v in item.items()}

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({os.fspath(self.folder)!r}, split={self.split!r}, "
                f"states={len(self)}, shards={len(self.shards)})")


class GraphDataset(_ShardedStates, torch_geometric.data.Dataset):
    """The board states of one split as frontier graphs, read shard by shard.

    Item ``i`` is :func:`nnsweeper.features.build_graph` of state ``i`` with its
    exact probabilities and mine truth as targets (``data["cell"].y_prob``,
    ``data["cell"].y_mine``, ``data.interior_prob``, ``data.interior_mines``).
    Nothing is processed or written to disk.

    Parameters
    ----------
    root, split, verify, cache_shards, configs, in_memory
        As for :class:`StateDataset`.
    cell_edges : bool, default=True
        Add the ``("cell", "near", "cell")`` edges.
    transform : callable, optional
        Applied to each graph as it is returned (torch-geometric's convention).

    Notes
    -----
    A graph needs no symmetry augmentation: its features are counts over neighbours
    and board-wide figures, so a symmetry of the board renumbers its nodes and changes
    nothing else. The attribute ``root`` of torch-geometric datasets is the dataset folder here
    (as a string); no ``raw`` or ``processed`` folder is used.
    """

    def __init__(self, root, split: str = "train", *, verify: bool = True, cache_shards: int = 4,
                 configs: str | Iterable[str] | None = None, cell_edges: bool = True, transform=None,
                 in_memory: bool = False):
        index = _ShardIndex(root, split, verify=verify, cache_shards=cache_shards, configs=configs)
        super().__init__(None, transform=transform)
        self._index = index
        self._init_memory(in_memory)
        self.cell_edges = bool(cell_edges)
        self.root = os.fspath(index.root)

    def len(self) -> int:
        return len(self._index)

    def get(self, idx: int) -> torch_geometric.data.HeteroData:
        data = self._item(idx, self._graph)
        # A transform may change the graph in place; the kept one must stay as built.
        return data.clone() if self.in_memory and self.transform is not None else data

    def _graph(self, s: dict) -> torch_geometric.data.HeteroData:
        return features.build_graph(
            s["grid"], int(s["total_mines"]), s["flags"], cell_edges=self.cell_edges,
            probabilities=s["prob"], mines=s["mines"],
        )

    def __getitem__(self, idx):
        if _is_scalar_index(idx) and self._indices is None:
            idx = self._index.position(idx)  # a clear error for a bad index
        return super().__getitem__(idx)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.root!r}, split={self.split!r}, "
                f"states={len(self)}, shards={len(self.shards)})")


def collate_grids(items: Sequence[Mapping[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Batch :class:`StateDataset` items, padding boards of different sizes.

    Parameters
    ----------
    items : sequence of dict
        Items with at least ``"x"`` (C, r, c). Tensors whose last two dimensions are
        the item's board size are per-cell; other tensors are stacked as they are.

    Returns
    -------
    dict of Tensor
        Every key stacked along a new first dimension. When the boards differ in
        size, every per-cell tensor is padded at the bottom and right to the largest
        rows and cols: ``"x"`` with :func:`nnsweeper.features.pad_encoded` (``outside``
        channel 1, the others 0), the rest with 0 (``False`` for masks, so that
        ``"unknown"`` and ``"frontier"`` exclude padding). ``"board_mask"`` bool
        (B, R, C) is True on real board cells (all True when sizes agree).

    Raises
    ------
    DatasetError
        No items, items without ``"x"`` or with different keys.
    """
    items = list(items)
    if not items:
        raise DatasetError("collate_grids needs at least one item; got none")
    keys = list(items[0])
    if "x" not in keys:
        raise DatasetError(f"collate_grids needs items with an 'x' tensor; got keys {keys}")
    for b, item in enumerate(items):
        if list(item) != keys:
            raise DatasetError(f"collate_grids needs items with the same keys; item {b} has {list(item)}, "
                               f"item 0 has {keys}")
    shapes = [tuple(item["x"].shape[-2:]) for item in items]
    rows = max(r for r, _ in shapes)
    cols = max(c for _, c in shapes)
    same = all(s == (rows, cols) for s in shapes)

    out: dict[str, torch.Tensor] = {}
    for key in keys:
        values = [item[key] for item in items]
        if not all(isinstance(v, torch.Tensor) for v in values):
            out[key] = values
            continue
        per_cell = all(v.dim() >= 2 and tuple(v.shape[-2:]) == s for v, s in zip(values, shapes, strict=True))
        if same or not per_cell:
            out[key] = torch.stack(values)
        elif key == "x":
            out[key] = torch.stack(
                [torch.from_numpy(features.pad_encoded(v.numpy(), rows, cols)) for v in values]
            )
        else:
            padded = values[0].new_zeros((len(values), *values[0].shape[:-2], rows, cols))
            for b, v in enumerate(values):
                padded[b, ..., : v.shape[-2], : v.shape[-1]] = v
            out[key] = padded
    mask = torch.zeros((len(items), rows, cols), dtype=torch.bool)
    for b, (r, c) in enumerate(shapes):
        mask[b, :r, :c] = True
    out["board_mask"] = mask
    return out


class ShardBatchSampler(torch.utils.data.Sampler[list[int]]):
    """Batches of state indices, each of one board size, drawn from few shards at a time.

    Shuffling: the shards of each board size are shuffled, taken ``pool`` at a time,
    and the states of a pool are shuffled together; each board size's states, pool
    after pool, are cut into batches (so only a batch at a pool's end reaches into
    the next pool, and only the last batch of a board size can be short). The pools'
    runs of batches of the different sizes are then interleaved in a random order.
    With ``cache_shards >= pool`` a loader holds about ``pool`` decoded shards at a
    time and reads each shard about once per epoch. The order depends on ``seed``
    and the epoch only (:meth:`set_epoch`, as for ``DistributedSampler``).

    Parameters
    ----------
    dataset : StateDataset or GraphDataset
        Any object with ``shards`` (manifest entries with ``rows``, ``cols``,
        ``states``) numbering its states shard after shard, and ``len``.
    batch_size : int
        States per batch, at least 1; times the cells of each board size of the
        dataset at most :data:`MAX_BATCH_CELLS`.
    shuffle : bool, default=True
        Without shuffling, the batches follow the state order: board sizes in the
        order of their first shard, each size's states in index order.
    seed : int, default=0
        Seed of the shuffling (non-negative).
    pool : int, default=4
        Shards of one board size whose states are shuffled together.
    drop_last : bool, default=False
        Drop the short last batch of each board size.
    rank, world_size : int, default 0 and 1
        For distributed training: this process keeps batches ``rank``,
        ``rank + world_size``, ... of the epoch's batches. So that every rank gets
        the same number of batches, the epoch's batches are padded by repeating its
        first batches (``drop_last=False``; a few states are then seen twice) or its
        last batches are dropped (``drop_last=True``).

    Notes
    -----
    ``len(sampler)`` is the number of batches this rank yields per epoch.
    """

    def __init__(self, dataset, batch_size: int, *, shuffle: bool = True, seed: int = 0, pool: int = 4,
                 drop_last: bool = False, rank: int = 0, world_size: int = 1):
        if getattr(dataset, "_indices", None) is not None:
            raise DatasetError("ShardBatchSampler needs a whole dataset, not a subset made by indexing one")
        shards = getattr(dataset, "shards", None)
        if shards is None:
            raise DatasetError(
                f"ShardBatchSampler needs a dataset with 'shards' (StateDataset, GraphDataset); "
                f"got {type(dataset).__name__}"
            )
        self.batch_size = _check_int("batch_size", batch_size, 1)
        self.seed = _check_int("seed", seed, 0)
        self.pool = _check_int("pool", pool, 1)
        self.world_size = _check_int("world_size", world_size, 1)
        self.rank = _check_int("rank", rank, 0)
        if self.rank >= self.world_size:
            raise DatasetError(f"rank must be below world_size={self.world_size}; got {self.rank}")
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.epoch = 0
        self.start = 0

        states = [int(e["states"]) for e in shards]
        self._offsets = np.concatenate([[0], np.cumsum(states, dtype=np.int64)]).tolist()
        if self._offsets[-1] != len(dataset):
            raise DatasetError(
                f"the dataset's shards hold {self._offsets[-1]} states but its length is {len(dataset)}; "
                f"ShardBatchSampler needs states numbered shard after shard"
            )
        # Shard numbers grouped by board size, sizes in order of first appearance.
        self._groups: dict[tuple[int, int], list[int]] = {}
        for k, e in enumerate(shards):
            if states[k]:
                self._groups.setdefault((int(e["rows"]), int(e["cols"])), []).append(k)
        for rows, cols in self._groups:
            if self.batch_size * rows * cols > MAX_BATCH_CELLS:
                raise DatasetError(
                    f"batch_size={self.batch_size} is too large for the dataset's {rows}x{cols} boards: a "
                    f"batch holds at most {MAX_BATCH_CELLS} board cells (states x rows x cols), so at most "
                    f"{max(1, MAX_BATCH_CELLS // (rows * cols))} states of {rows}x{cols}"
                )

    def set_epoch(self, epoch: int, start: int = 0) -> None:
        """Use the shuffling of epoch ``epoch`` (call before iterating, every epoch), from its
        batch ``start`` on: a run resumed in the middle of an epoch skips the batches it has
        done without building them (``len`` still counts the whole epoch's)."""
        self.epoch = _check_int("epoch", epoch, 0)
        self.start = _check_int("start", start, 0)

    def _group_batches(self, shard_ids: list[int]) -> int:
        n = sum(self._offsets[k + 1] - self._offsets[k] for k in shard_ids)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _total(self) -> int:
        return sum(self._group_batches(ids) for ids in self._groups.values())

    def __len__(self) -> int:
        total = self._total()
        if self.drop_last:
            return total // self.world_size
        return math.ceil(total / self.world_size)

    def _runs(self, rng: np.random.Generator | None) -> list[list[list[int]]]:
        """Per board size, its batches in runs: one run per pool, holding the batches that start in it."""
        out = []
        bs = self.batch_size
        for ids in self._groups.values():
            if rng is None:
                pools = [ids]
            else:
                ids = [ids[j] for j in rng.permutation(len(ids))]
                pools = [ids[p : p + self.pool] for p in range(0, len(ids), self.pool)]
            stream: list[int] = []
            starts: list[int] = []
            for pool in pools:
                idx = np.concatenate([np.arange(self._offsets[k], self._offsets[k + 1]) for k in pool])
                if rng is not None:
                    idx = rng.permutation(idx)
                starts.append(len(stream))
                stream.extend(idx.tolist())
            runs: list[list[list[int]]] = [[] for _ in pools]
            for b in range(self._group_batches(ids)):
                runs[bisect.bisect_right(starts, b * bs) - 1].append(stream[b * bs : (b + 1) * bs])
            out.append([run for run in runs if run])
        return out

    def _epoch_batches(self) -> list[list[int]]:
        rng = np.random.default_rng(np.random.SeedSequence((self.seed, self.epoch))) if self.shuffle else None
        per_size = self._runs(rng)
        if rng is None:
            return [batch for runs in per_size for run in runs for batch in run]
        # Interleave the sizes' runs at random, each size keeping its own run order.
        order = np.repeat(np.arange(len(per_size)), [len(r) for r in per_size])
        order = rng.permutation(order)
        nxt = [0] * len(per_size)
        batches = []
        for g in order.tolist():
            batches.extend(per_size[g][nxt[g]])
            nxt[g] += 1
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        batches = self._epoch_batches()
        if self.world_size > 1:
            if self.drop_last:
                batches = batches[: len(batches) - len(batches) % self.world_size]
            elif batches:
                pad = -len(batches) % self.world_size
                batches = batches + [batches[j % len(batches)] for j in range(pad)]
            batches = batches[self.rank :: self.world_size]
        yield from batches[self.start :]


def _split_kw(kw: dict) -> tuple[dict, dict, dict]:
    dataset_kw = {k: kw.pop(k) for k in _DATASET_KW if k in kw}
    sampler_kw = {k: kw.pop(k) for k in _SAMPLER_KW if k in kw}
    return dataset_kw, sampler_kw, kw


def grid_loader(root, split: str, batch_size: int = 64, *, shuffle: bool = True, seed: int = 0,
                num_workers: int = 0, **kw) -> torch.utils.data.DataLoader:
    """A ``DataLoader`` of :class:`StateDataset` batches (:func:`collate_grids`).

    Parameters
    ----------
    root, split
        As for :class:`StateDataset`.
    batch_size, shuffle, seed
        As for :class:`ShardBatchSampler`.
    num_workers : int, default=0
        Loader worker processes.
    **kw
        ``verify``, ``cache_shards``, ``configs``, ``in_memory``, ``augment`` go to the
        dataset (``seed`` too: it draws the symmetries); ``pool``,
        ``drop_last``, ``rank``, ``world_size`` to the sampler; the rest (e.g.
        ``pin_memory``, ``persistent_workers``, ``collate_fn``) to the ``DataLoader``.

    Returns
    -------
    torch.utils.data.DataLoader
        Its ``dataset`` is the :class:`StateDataset` and its ``batch_sampler`` the
        :class:`ShardBatchSampler`; call ``loader.batch_sampler.set_epoch(e)`` (and, with
        ``augment``, ``loader.dataset.set_epoch(e)``) each epoch.
    """
    dataset_kw, sampler_kw, loader_kw = _split_kw(dict(kw))
    dataset = StateDataset(root, split, seed=seed, **dataset_kw)
    sampler = ShardBatchSampler(dataset, batch_size, shuffle=shuffle, seed=seed, **sampler_kw)
    loader_kw.setdefault("collate_fn", collate_grids)
    return torch.utils.data.DataLoader(dataset, batch_sampler=sampler, num_workers=num_workers, **loader_kw)


def graph_loader(root, split: str, batch_size: int = 64, *, shuffle: bool = True, seed: int = 0,
                 num_workers: int = 0, cell_edges: bool = True, **kw) -> torch_geometric.loader.DataLoader:
    """A torch-geometric ``DataLoader`` of :class:`GraphDataset` batches.

    Parameters
    ----------
    root, split, cell_edges
        As for :class:`GraphDataset`.
    batch_size, shuffle, seed, num_workers, **kw
        As for :func:`grid_loader` (``follow_batch`` and ``exclude_keys`` go to the
        loader, as does ``transform`` to the dataset).

    Returns
    -------
    torch_geometric.loader.DataLoader
        Batches are ``HeteroData`` batches of graphs of one board size; call
        ``loader.batch_sampler.set_epoch(e)`` each epoch.
    """
    dataset_kw, sampler_kw, loader_kw = _split_kw(dict(kw))
    if dataset_kw.pop("augment", False):
        raise DatasetError(
            "augment is for grid models: a graph's features are counts over neighbours, so a symmetry of "
            "the board only renumbers its nodes"
        )
    if "transform" in loader_kw:
        dataset_kw["transform"] = loader_kw.pop("transform")
    dataset = GraphDataset(root, split, cell_edges=cell_edges, **dataset_kw)
    sampler = ShardBatchSampler(dataset, batch_size, shuffle=shuffle, seed=seed, **sampler_kw)
    return torch_geometric.loader.DataLoader(dataset, batch_sampler=sampler, num_workers=num_workers,
                                             **loader_kw)


# --------------------------------------------------------------------------- the loaders by input kind
#: The loader of each kind of model input (a model's :attr:`~nnsweeper.models.MineModel.inputs`),
#: called as ``loader(root, split, **options)``: the table at the end of this module, then what
#: :func:`register_loader` adds.
LOADERS: dict[str, Callable] = {}


def register_loader(kind: str, loader: Callable) -> Callable:
    """Add the loader of the models whose ``inputs`` is ``kind`` to :data:`LOADERS`.

    Parameters
    ----------
    kind : str
        The kind of input; must not be taken.
    loader : callable
        ``loader(root, split, **options)`` giving a data loader whose batches the
        models' :meth:`~nnsweeper.models.MineModel.outputs` read, with a ``len`` and an
        epoch to set: its ``batch_sampler`` a :class:`ShardBatchSampler`, or a
        ``set_epoch(e)`` of its own (as :class:`~nnsweeper.datasets.values.PositionBatches`).

    Returns
    -------
    callable
        ``loader``.
    """
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"an input kind must be a non-empty string; got {kind!r}")
    if kind in LOADERS:
        raise ValueError(f"the loader of {kind!r} inputs is registered already "
                         f"({LOADERS[kind].__qualname__})")
    if not callable(loader):
        raise ValueError(f"a loader must be callable as loader(root, split, **options); got {loader!r}")
    LOADERS[kind] = loader
    return loader


def make_loader(model, root, split: str, **options):
    """A data loader of the training batches of ``model``, from one split of a dataset folder.

    The loader of the model's kind of input (:data:`LOADERS` by ``model.inputs``), with
    the dataset options its inputs depend on (``model.input_options()``, such as the
    GNN's ``cell_edges``) and ``options``.

    Parameters
    ----------
    model : MineModel
        Any object with ``inputs`` (and optionally ``input_options()``).
    root : str or os.PathLike
        A dataset folder (:func:`nnsweeper.datasets.generate`).
    split : {"train", "val", "test"}
    **options
        ``batch_size``, ``shuffle``, ``seed``, ``num_workers`` and the dataset and
        sampler options of :func:`grid_loader` (``configs``, ``cache_shards``,
        ``in_memory``, ``pool``, ``rank``, ``world_size``, ``drop_last``, ...).

    Returns
    -------
    DataLoader or PositionBatches
        A ``DataLoader`` whose ``batch_sampler`` is a :class:`ShardBatchSampler` (call
        ``loader.batch_sampler.set_epoch(e)`` each epoch), or for the value networks a
        :class:`~nnsweeper.datasets.values.PositionBatches` (``loader.set_epoch(e)``).

    Raises
    ------
    DatasetError
        A model whose ``inputs`` names no loader.
    """
    kind = getattr(model, "inputs", "")
    if kind not in LOADERS:
        said = f"its inputs are {kind!r}" if kind else "it does not say which inputs it reads"
        raise DatasetError(f"no loader for {type(model).__name__}: {said}; set its class attribute inputs to "
                           f"one of {', '.join(map(repr, LOADERS))} (or register_loader one)")
    input_options = getattr(model, "input_options", None)
    return LOADERS[kind](root, split, **(input_options() if input_options is not None else {}), **options)


def value_loader(root, split: str, **options):
    """The loader of the value networks (inputs ``"value"``): a
    :class:`~nnsweeper.datasets.values.PositionBatches` of one split of a value dataset."""
    from nnsweeper.datasets.values import PositionBatches

    return PositionBatches(root, split, **options)


register_loader("grid", grid_loader)
register_loader("graph", graph_loader)
register_loader("value", value_loader)
