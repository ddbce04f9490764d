"""Tests of the dataset loaders: lazy shard reading, checksums, batching and sampling."""

from __future__ import annotations

import json
import pickle
import shutil
from collections import Counter

import numpy as np
import pytest
import torch
import torch_geometric.loader

from nnsweeper import analyze, mine_probabilities
from nnsweeper.datasets import loaders
from nnsweeper.datasets.generate import generate
from nnsweeper.datasets.loaders import (
    GraphDataset,
    ShardBatchSampler,
    StateDataset,
    collate_grids,
    graph_loader,
    grid_loader,
)
from nnsweeper.datasets.storage import SHARD_FIELDS, read_shard, write_shard
from nnsweeper.errors import ChecksumError, DatasetError
from nnsweeper.features import GRID_CHANNELS, build_graph, encode_grid

SMALL = "6x6-m5-safe-csp"
WIDE = "5x7-m4-safe-csp"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """Two board sizes, several shards per size in train, one in val and test."""
    out = tmp_path_factory.mktemp("loaders") / "data"
    generate(out, ["6x6:5:20", "5x7:4:12"], shard_games=4, seed=1)
    return out


@pytest.fixture
def damaged_copy(root, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    return copy


def _shard_arrays(ds, k):
    return read_shard(ds.folder / ds.shards[k]["file"])


# --------------------------------------------------------------------------- StateDataset
def test_index_follows_manifest_order(root):
    ds = StateDataset(root, "train")
    manifest = json.loads((root / "manifest.json").read_text())
    train = [e for e in manifest["shards"] if e["split"] == "train"]
    assert ds.shards == train
    assert len(ds) == sum(e["states"] for e in train) == manifest["splits"]["train"]["states"]
    # The first state of every shard, and the last of the split.
    start = 0
    for k, e in enumerate(train):
        assert ds.shard_index(start) == (k, 0)
        assert ds.shape_of(start) == (e["rows"], e["cols"])
        start += e["states"]
    assert ds.shard_index(len(ds) - 1) == (len(train) - 1, train[-1]["states"] - 1)
    assert ds.shard_index(-1) == ds.shard_index(len(ds) - 1)


def test_item_equals_shard_arrays_and_encoding(root):
    ds = StateDataset(root, "train")
    for i in (0, 7, len(ds) // 2, len(ds) - 1):
        k, row = ds.shard_index(i)
        a = _shard_arrays(ds, k)
        grid, flags, total = a["grid"][row], a["flags"][row], int(a["total_mines"][row])
        item = ds[i]
        assert set(item) == {"x", "prob", "mine", "unknown", "frontier", "total_mines"}
        assert item["x"].dtype == torch.float32
        np.testing.assert_array_equal(item["x"].numpy(), encode_grid(grid, total, flags))
        assert item["prob"].dtype == torch.float32
        np.testing.assert_array_equal(item["prob"].numpy(), a["prob"][row].astype(np.float32))
        np.testing.assert_array_equal(item["mine"].numpy(), a["mines"][row].astype(np.float32))
        np.testing.assert_array_equal(item["unknown"].numpy(), (grid == -1) & ~flags)
        np.testing.assert_array_equal(item["frontier"].numpy(), analyze(grid, total, flags).frontier)
        assert item["unknown"].dtype == item["frontier"].dtype == torch.bool
        assert item["total_mines"].dtype == torch.int64 and item["total_mines"].shape == ()
        assert int(item["total_mines"]) == total
        state = ds.state(i)
        assert set(state) == set(SHARD_FIELDS)
        for name in SHARD_FIELDS:
            np.testing.assert_array_equal(state[name], a[name][row])


def test_prob_is_exact_and_truth_agrees(root):
    ds = StateDataset(root, "train")
    for i in range(0, len(ds), 17):
        s = ds.state(i)
        exact = mine_probabilities(s["grid"], int(s["total_mines"]), s["flags"])
        np.testing.assert_allclose(s["prob"], exact, rtol=0, atol=1e-12)
    for i in range(len(ds)):
        item = ds[i]
        unknown, prob, mine = item["unknown"], item["prob"], item["mine"]
        assert not mine[unknown & (prob == 0)].any()
        assert mine[unknown & (prob == 1)].all()
        assert not mine[torch.from_numpy(ds.state(i)["grid"] >= 0)].any()


def test_configs_and_splits(root):
    wide = StateDataset(root, "train", configs=WIDE)
    assert {(e["config"], e["rows"], e["cols"]) for e in wide.shards} == {(WIDE, 5, 7)}
    assert all(wide.shape_of(i) == (5, 7) for i in range(len(wide)))
    both = StateDataset(root, "train", configs=[SMALL, WIDE])
    assert len(both) == len(StateDataset(root, "train"))
    for split in ("val", "test"):
        ds = StateDataset(root, split)
        assert {e["split"] for e in ds.shards} == {split}


def test_bad_arguments_raise(root, tmp_path):
    with pytest.raises(DatasetError, match="split must be one of train, val, test; got 'dev'"):
        StateDataset(root, "dev")
    with pytest.raises(DatasetError, match="configs must name configurations.*got '9x9-m10'"):
        StateDataset(root, "train", configs="9x9-m10")
    with pytest.raises(DatasetError, match="cache_shards must be at least 1; got 0"):
        StateDataset(root, "train", cache_shards=0)
    with pytest.raises(DatasetError, match="no dataset manifest"):
        StateDataset(tmp_path / "nothing")
    ds = StateDataset(root, "val")
    n = len(ds)
    with pytest.raises(DatasetError, match=f"state index {n} is out of range for the {n} states"):
        ds[n]
    with pytest.raises(DatasetError, match="out of range"):
        ds.shard_index(-n - 1)
    with pytest.raises(DatasetError, match="must be an integer; got 1.5"):
        ds[1.5]
    # A split without any state.
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["shards"] = [e for e in manifest["shards"] if e["split"] != "val"]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError, match="'val' split of the dataset .* holds no states"):
        StateDataset(tmp_path, "val")


# --------------------------------------------------------------------------- laziness and cache
def test_construction_reads_no_shard(root, monkeypatch):
    calls = []
    monkeypatch.setattr(loaders, "read_shard", lambda *a, **k: calls.append(a) or read_shard(*a, **k))
    ds = StateDataset(root, "train", cache_shards=2)
    gd = GraphDataset(root, "train")
    assert calls == [] and ds.cached_shards == () and ds.shards_read == 0 and gd.cached_shards == ()
    ds.shape_of(len(ds) - 1)
    ds.shard_index(len(ds) - 1)
    assert calls == []
    i = ds.shard_index(0)[0]
    ds[3]
    assert ds.cached_shards == (i,) and len(calls) == 1
    ds[4]
    assert len(calls) == 1


def test_cache_bounded_and_each_shard_read_once(root):
    ds = StateDataset(root, "train", configs=SMALL, cache_shards=2)
    assert len(ds.shards) >= 3
    sampler = ShardBatchSampler(ds, 5, pool=2, seed=3)
    for batch in sampler:
        for i in batch:
            ds[i]
            assert len(ds.cached_shards) <= 2
    # One board size: pools are visited one after the other, so no shard is read twice.
    assert ds.shards_read == len(ds.shards)
    mixed = StateDataset(root, "train", cache_shards=3)
    for batch in ShardBatchSampler(mixed, 7, pool=3, seed=1):
        for i in batch:
            mixed[i]
            assert len(mixed.cached_shards) <= 3


def test_checksum_is_checked_once_when_first_read(root, monkeypatch):
    checks = []

    def spy(path, sha256=None):
        checks.append((path.name, sha256 is not None))
        return read_shard(path, sha256)

    monkeypatch.setattr(loaders, "read_shard", spy)
    ds = StateDataset(root, "train", cache_shards=1)
    first, second = 0, ds.shards[0]["states"]
    ds[first], ds[second], ds[first]
    names = [e["file"].rsplit("/", 1)[1] for e in ds.shards[:2]]
    assert checks == [(names[0], True), (names[1], True), (names[0], False)]
    assert StateDataset(root, "train", verify=False)[first] is not None
    assert checks[-1] == (names[0], False)


def test_truncated_shard_raises_checksum_error_naming_it(damaged_copy):
    ds = StateDataset(damaged_copy, "train")
    k = 1
    entry = ds.shards[k]
    path = damaged_copy / entry["file"]
    path.write_bytes(path.read_bytes()[:-100])
    fresh = StateDataset(damaged_copy, "train")  # construction reads nothing
    fresh[0]  # an intact shard still loads
    first = ds.shards[0]["states"]
    with pytest.raises(ChecksumError, match=entry["file"].rsplit("/", 1)[1]):
        fresh[first]


def test_edited_shard_fails_verification_unless_disabled(damaged_copy):
    ds = StateDataset(damaged_copy, "train")
    k = 2
    entry = ds.shards[k]
    path = damaged_copy / entry["file"]
    arrays = read_shard(path)
    arrays["step"] = arrays["step"] + np.int16(1000)
    write_shard(path, arrays)  # a valid shard, but not the one the manifest records
    i = sum(e["states"] for e in ds.shards[:k])
    with pytest.raises(ChecksumError, match=f"{entry['file'].rsplit('/', 1)[1]}.*damaged"):
        StateDataset(damaged_copy, "train")[i]
    loose = StateDataset(damaged_copy, "train", verify=False)
    assert loose.shard_index(i) == (k, 0)
    assert int(loose.state(i)["step"]) == int(arrays["step"][0])


def test_pickled_dataset_has_no_cache(root):
    ds = StateDataset(root, "train")
    ds[0]
    clone = pickle.loads(pickle.dumps(ds))
    assert clone.cached_shards == () and ds.cached_shards != ()
    torch.testing.assert_close(clone[0], ds[0])


# --------------------------------------------------------------------------- collate
def test_collate_same_size_stacks(root):
    ds = StateDataset(root, "train", configs=SMALL)
    items = [ds[i] for i in (0, 5, 9)]
    batch = collate_grids(items)
    for key in items[0]:
        assert torch.equal(batch[key], torch.stack([it[key] for it in items]))
    assert batch["board_mask"].shape == (3, 6, 6) and batch["board_mask"].all()


def test_collate_mixed_sizes_pads(root):
    small = StateDataset(root, "train", configs=SMALL)[4]  # 6x6
    wide = StateDataset(root, "train", configs=WIDE)[2]  # 5x7
    batch = collate_grids([small, wide])
    outside = GRID_CHANNELS.index("outside")
    assert batch["x"].shape == (2, len(GRID_CHANNELS), 6, 7)
    mask = torch.zeros(2, 6, 7, dtype=torch.bool)
    mask[0, :6, :6] = True
    mask[1, :5, :7] = True
    assert torch.equal(batch["board_mask"], mask)
    for b, item in enumerate((small, wide)):
        r, c = item["prob"].shape
        assert torch.equal(batch["x"][b, :, :r, :c], item["x"])
        pad = ~mask[b]
        assert (batch["x"][b, outside][pad] == 1).all()
        assert (batch["x"][b, outside][~pad] == 0).all()
        others = [ch for ch in range(len(GRID_CHANNELS)) if ch != outside]
        assert (batch["x"][b, others][:, pad] == 0).all()
        for key in ("prob", "mine", "unknown", "frontier"):
            assert torch.equal(batch[key][b, :r, :c], item[key])
            assert not batch[key][b][pad].any()
        assert batch["unknown"].dtype == torch.bool
    assert torch.equal(batch["total_mines"], torch.stack([small["total_mines"], wide["total_mines"]]))
    with pytest.raises(DatasetError, match="at least one item"):
        collate_grids([])


# --------------------------------------------------------------------------- sampler
def _flat(batches):
    return [i for b in batches for i in b]


def test_sampler_covers_every_index_once_per_shape_batch(root):
    ds = StateDataset(root, "train")
    for shuffle in (True, False):
        sampler = ShardBatchSampler(ds, 8, shuffle=shuffle, pool=2)
        batches = list(sampler)
        assert len(batches) == len(sampler)
        assert sorted(_flat(batches)) == list(range(len(ds)))
        for batch in batches:
            assert len({ds.shape_of(i) for i in batch}) == 1
            assert 1 <= len(batch) <= 8
        # Only the last batch of each board size may be short.
        assert sum(len(b) < 8 for b in batches) <= 2
    plain = list(ShardBatchSampler(ds, 8, shuffle=False))
    assert _flat(plain) == list(range(len(ds)))


def test_sampler_lengths_and_drop_last(root):
    ds = StateDataset(root, "train")
    sizes = Counter()
    for e in ds.shards:
        sizes[(e["rows"], e["cols"])] += e["states"]
    for bs in (1, 7, 10, 1000):
        full = ShardBatchSampler(ds, bs)
        assert len(full) == sum(-(-n // bs) for n in sizes.values()) == len(list(full))
        cut = ShardBatchSampler(ds, bs, drop_last=True)
        batches = list(cut)
        assert len(cut) == sum(n // bs for n in sizes.values()) == len(batches)
        assert all(len(b) == bs for b in batches)


def test_sampler_epochs_are_deterministic(root):
    ds = StateDataset(root, "train")
    a, b = ShardBatchSampler(ds, 8, seed=5), ShardBatchSampler(ds, 8, seed=5)
    assert list(a) == list(b)
    first = list(a)
    a.set_epoch(1)
    b.set_epoch(1)
    assert list(a) == list(b) != first
    assert sorted(_flat(a)) == sorted(_flat(first))
    a.set_epoch(0)
    assert list(a) == first
    assert list(ShardBatchSampler(ds, 8, seed=6)) != first


def test_sampler_starts_an_epoch_part_way_for_a_resume(root):
    # A run resumed after batch k of an epoch gets the epoch's batches from k on, and the
    # next epoch whole; len() counts the whole epoch either way.
    ds = StateDataset(root, "train")
    sampler = ShardBatchSampler(ds, 8, seed=5, world_size=2, rank=1)
    sampler.set_epoch(3)
    whole = list(sampler)
    sampler.set_epoch(3, start=4)
    assert list(sampler) == whole[4:] and len(sampler) == len(whole) > 4
    sampler.set_epoch(3, start=len(whole))
    assert list(sampler) == []
    sampler.set_epoch(3)
    assert list(sampler) == whole
    with pytest.raises(DatasetError, match="start"):
        sampler.set_epoch(3, start=-1)


def test_sampler_pools_keep_batches_on_few_shards(root):
    ds = StateDataset(root, "train", configs=SMALL)
    shard_of = [ds.shard_index(i)[0] for i in range(len(ds))]
    batches = list(ShardBatchSampler(ds, 4, pool=1, seed=2))
    # pool=1: a batch holds states of one shard, or of two when it crosses to the next.
    assert all(len({shard_of[i] for i in b}) <= 2 for b in batches)
    seen = [shard_of[i] for i in _flat(batches)]
    changes = sum(x != y for x, y in zip(seen, seen[1:], strict=False))
    assert changes == len(ds.shards) - 1


def test_sampler_splits_batches_between_ranks(root):
    ds = StateDataset(root, "train")
    whole = list(ShardBatchSampler(ds, 8, seed=4))
    world = 3
    parts = [list(ShardBatchSampler(ds, 8, seed=4, rank=r, world_size=world)) for r in range(world)]
    n = -(-len(whole) // world)
    assert [len(p) for p in parts] == [n] * world
    assert [len(ShardBatchSampler(ds, 8, rank=r, world_size=world)) for r in range(world)] == [n] * world
    for r in range(world):
        assert parts[r] == (whole + whole)[r : world * n : world]
    got = Counter(tuple(b) for p in parts for b in p)
    assert set(got) == {tuple(b) for b in whole}
    assert sum(got.values()) - len(whole) == world * n - len(whole)  # padding repeats first batches

    whole = list(ShardBatchSampler(ds, 8, seed=4, drop_last=True))
    parts = [list(ShardBatchSampler(ds, 8, seed=4, rank=r, world_size=world, drop_last=True))
             for r in range(world)]
    n = len(whole) // world
    assert [len(p) for p in parts] == [n] * world
    flat = [tuple(b) for p in parts for b in p]
    assert len(set(flat)) == len(flat) == world * n
    assert set(flat) == {tuple(b) for b in whole[: world * n]}


def test_sampler_bounds_the_board_cells_of_a_batch(root, monkeypatch):
    ds = StateDataset(root, "train")
    assert loaders.MAX_BATCH_CELLS == 2**19
    monkeypatch.setattr(loaders, "MAX_BATCH_CELLS", 36 * 10)  # ten 6x6 boards
    assert ShardBatchSampler(ds, 10).batch_size == 10
    with pytest.raises(DatasetError, match=r"batch_size=11 is too large for the dataset's 6x6 boards: .*"
                                           r"at most 360 board cells .*, so at most 10 states of 6x6"):
        ShardBatchSampler(ds, 11)


def test_sampler_bad_arguments(root):
    ds = StateDataset(root, "val")
    with pytest.raises(DatasetError, match="batch_size must be at least 1; got 0"):
        ShardBatchSampler(ds, 0)
    with pytest.raises(DatasetError, match="rank must be below world_size=2; got 2"):
        ShardBatchSampler(ds, 4, rank=2, world_size=2)
    with pytest.raises(DatasetError, match="pool must be an integer"):
        ShardBatchSampler(ds, 4, pool=1.5)
    with pytest.raises(DatasetError, match="needs a dataset with 'shards'"):
        ShardBatchSampler(list(range(10)), 4)
    with pytest.raises(DatasetError, match="not a subset"):
        ShardBatchSampler(GraphDataset(root, "val")[:3], 2)


# --------------------------------------------------------------------------- graphs
def test_graph_item_matches_build_graph(root):
    gd = GraphDataset(root, "train", cell_edges=False)
    ds = StateDataset(root, "train")
    assert len(gd) == len(ds) and gd.shards == ds.shards
    for i in (0, len(gd) // 3, len(gd) - 1):
        s = ds.state(i)
        want = build_graph(s["grid"], int(s["total_mines"]), s["flags"], cell_edges=False,
                           probabilities=s["prob"], mines=s["mines"])
        got = gd[i]
        assert got.node_types == want.node_types and got.edge_types == want.edge_types
        assert ("cell", "near", "cell") not in got.edge_types
        for a, b in zip(got.stores, want.stores, strict=True):
            assert set(a.keys()) == set(b.keys())
            for key in a.keys():
                torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, equal_nan=True)
        pos = got["cell"].pos
        torch.testing.assert_close(got["cell"].y_prob, ds[i]["prob"][pos[:, 0], pos[:, 1]])
    with pytest.raises(DatasetError, match="out of range"):
        gd[len(gd)]


def test_graph_loader_batches(root):
    ds = StateDataset(root, "train")
    loader = graph_loader(root, "train", batch_size=6, shuffle=False)
    assert isinstance(loader, torch_geometric.loader.DataLoader)
    batches = list(loader.batch_sampler)
    for data, idx in zip(loader, batches, strict=True):
        assert data.num_graphs == len(idx)
        assert data["cell"].num_nodes == sum(int(ds[i]["frontier"].sum()) for i in idx)
        assert data.globals.shape[0] == len(idx)
        assert len({(int(r), int(c)) for r, c in zip(data.rows, data.cols, strict=True)}) == 1
    # Plain torch-geometric loading (no sampler) works as well.
    gd = GraphDataset(root, "val")
    data = next(iter(torch_geometric.loader.DataLoader(gd, batch_size=len(gd))))
    assert data.num_graphs == len(gd)
    assert data["cell"].y_prob.shape == (data["cell"].num_nodes,)


def test_grid_loader_matches_dataset(root):
    ds = StateDataset(root, "train")
    loader = grid_loader(root, "train", batch_size=16, seed=9, pool=2)
    loader.batch_sampler.set_epoch(2)
    batches = list(loader.batch_sampler)
    for batch, idx in zip(loader, batches, strict=True):
        want = collate_grids([ds[i] for i in idx])
        for key, value in want.items():
            assert torch.equal(batch[key], value)


def test_loader_with_worker_processes(root):
    plain = list(grid_loader(root, "val", batch_size=4, shuffle=False))
    # "spawn" pickles the dataset into each worker, which then reads its shards itself.
    loader = grid_loader(root, "val", batch_size=4, shuffle=False, num_workers=2, cache_shards=1,
                         multiprocessing_context="spawn")
    got = list(loader)
    assert len(got) == len(plain) > 1
    for a, b in zip(got, plain, strict=True):
        assert a.keys() == b.keys()
        for key in a:
            assert torch.equal(a[key], b[key])


def test_in_memory_keeps_items_and_transforms_do_not_touch_them(root):
    ds = StateDataset(root, "train", in_memory=True)
    plain = StateDataset(root, "train")
    assert ds.in_memory and not plain.in_memory
    first = ds[5]
    assert ds[5] is first  # built once
    for key, value in plain[5].items():
        assert torch.equal(first[key], value)

    def scale(data):
        data["cell"].x *= 0  # changes the graph in place
        return data

    gd = GraphDataset(root, "train", in_memory=True, transform=scale)
    want = GraphDataset(root, "train")[5]["cell"].x
    assert float(gd[5]["cell"].x.abs().sum()) == 0
    assert torch.equal(gd.get(5)["cell"].x, want)  # the kept graph is unchanged
    assert torch.equal(gd.get(5)["cell"].x, want)


# --------------------------------------------------------------------------- symmetry
def test_board_symmetries_form_the_group_of_the_board():
    from nnsweeper.grid import SYMMETRIES, apply_symmetry, board_symmetries, invert_symmetry

    square = np.arange(25).reshape(5, 5)
    images = {apply_symmetry(square, s).tobytes() for s in board_symmetries(5, 5)}
    assert len(images) == 8 and board_symmetries(5, 5) == SYMMETRIES
    assert apply_symmetry(square, SYMMETRIES[0]) is square  # the identity first
    wide = np.arange(12).reshape(3, 4)
    assert len(board_symmetries(3, 4)) == 4
    assert {apply_symmetry(wide, s).shape for s in board_symmetries(3, 4)} == {(3, 4)}
    for s in SYMMETRIES:
        np.testing.assert_array_equal(invert_symmetry(apply_symmetry(square, s), s), square)
        t = torch.from_numpy(square.copy())
        np.testing.assert_array_equal(apply_symmetry(t, s).numpy(), apply_symmetry(square, s))
    # A quarter turn: transpose, then reverse the columns.
    np.testing.assert_array_equal(apply_symmetry(square, (True, False, True)), np.rot90(square, -1))


def test_labels_transform_with_the_board(root):
    # The engine's exact probabilities of a transformed board are the transformed
    # probabilities: augmentation keeps the labels exact.
    from nnsweeper.grid import apply_symmetry, board_symmetries

    ds = StateDataset(root, "train")
    for i in range(0, len(ds), 7):
        s = ds.state(i)
        for sym in board_symmetries(*s["grid"].shape):
            grid = np.ascontiguousarray(apply_symmetry(s["grid"], sym))
            flags = np.ascontiguousarray(apply_symmetry(s["flags"], sym))
            np.testing.assert_array_equal(mine_probabilities(grid, int(s["total_mines"]), flags),
                                          apply_symmetry(s["prob"], sym))


def test_augmented_items_are_transformed_states(root):
    from nnsweeper.grid import apply_symmetry, board_symmetries

    plain = StateDataset(root, "train")
    aug = StateDataset(root, "train", augment=True, seed=3)
    drawn = []
    for epoch in (0, 1):
        aug.set_epoch(epoch)
        for i in range(len(aug)):
            item, base, s = aug[i], plain[i], plain.state(i)
            boards = [k for k in base if base[k].dim() >= 2]
            matches = [sym for sym in board_symmetries(*s["grid"].shape)
                       if all(torch.equal(item[k], apply_symmetry(base[k], sym)) for k in boards)]
            assert matches, i
            # Every tensor moved with the board: the input is the encoding of the moved board.
            sym = matches[0]
            grid = np.ascontiguousarray(apply_symmetry(s["grid"], sym))
            flags = np.ascontiguousarray(apply_symmetry(s["flags"], sym))
            np.testing.assert_array_equal(item["x"].numpy(), encode_grid(grid, int(s["total_mines"]), flags))
            assert item["total_mines"] == base["total_mines"]
            drawn.append(tuple(item["prob"].flatten().tolist()))
    # The same draw for the same seed, epoch and state; epochs differ.
    aug.set_epoch(0)
    assert all(torch.equal(aug[i]["prob"], StateDataset(root, "train", augment=True, seed=3)[i]["prob"])
               for i in range(0, len(aug), 5))
    n = len(aug)
    assert sum(a != b for a, b in zip(drawn[:n], drawn[n:], strict=True)) > n // 2
    with pytest.raises(DatasetError, match="augment is for grid models"):
        graph_loader(root, "train", augment=True)
    with pytest.raises(DatasetError, match="augment must be True or False"):
        StateDataset(root, "train", augment="yes")
