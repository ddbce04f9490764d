"""Tests of the neural mine predictors: shapes, invariances, the shared interfaces, checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch_geometric.data import Batch, HeteroData

from nnsweeper import mine_probabilities
from nnsweeper.datasets import GraphDataset, StateDataset, collate_grids, grid_loader
from nnsweeper.errors import InconsistentBoardError, NnsweeperError
from nnsweeper.features import GRID_CHANNELS, build_graph, encode_grids
from nnsweeper.fileio import file_sha256
from nnsweeper.game import Game, Rules
from nnsweeper.grid import dilate
from nnsweeper.models import (
    ARCHS,
    CheckpointError,
    MineCNN,
    MineGNN,
    MineModel,
    ModelError,
    load_checkpoint,
    load_model,
    resolve_device,
    save_checkpoint,
)
from nnsweeper.models import checkpoint as checkpoint_module

TINY = "data/fixtures/tiny"
SMALL_CNN = {"arch": "cnn", "channels": 8, "blocks": 2, "dilations": [1, 2]}
SMALL_GNN = {"arch": "gnn", "hidden": 16, "layers": 2}

torch.set_num_threads(1)


def _model(arch: str, seed: int = 0, **overrides) -> MineModel:
    torch.manual_seed(seed)
    config = dict(SMALL_CNN if arch == "cnn" else SMALL_GNN, **overrides)
    return MineModel.from_config(config)


def _randomise(model: torch.nn.Module, seed: int = 1) -> None:
    """Non-trivial weights everywhere (the residual branches start at zero)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)


def _board(rows: int, cols: int, mines: int, seed: int, flag: bool = True):
    """A visible board after one opening click, with one correct flag: (grid, total, flags, layout)."""
    game = Game(Rules(rows, cols, mines, "zero"), seed)
    game.reveal(rows // 2, cols // 2)
    grid = game.observe()
    layout = game.mine_layout()
    flags = np.zeros(grid.shape, dtype=bool)
    if flag:
        i, j = np.argwhere(layout & (grid == -1))[0]
        flags[i, j] = True
    return grid, mines, flags, layout


@pytest.fixture(scope="module")
def states():
    return StateDataset(TINY, "train")


@pytest.fixture(scope="module")
def graphs():
    return GraphDataset(TINY, "train")


@pytest.fixture(scope="module")
def idx9(states):
    """Indices of 24 9x9 training states."""
    return [i for i in range(len(states)) if states.shape_of(i) == (9, 9)][:24]


# --------------------------------------------------------------------------- configuration
def test_configs_are_complete_and_rebuild():
    cnn, gnn = MineCNN(), MineGNN()
    assert cnn.config == {"arch": "cnn", "channels": 32, "blocks": 6, "dilations": [1, 2, 4, 8], "kernel": 3,
                          "norm": "group", "global_pool": False, "symmetric": False}
    assert gnn.config == {"arch": "gnn", "hidden": 64, "layers": 6, "conv": "sage", "cell_edges": True,
                          "global_pool": True, "shared": False}
    assert set(ARCHS) == {"cnn", "gnn"}
    for model in (cnn, gnn):
        assert json.loads(json.dumps(model.config)) == model.config
        again = MineModel.from_config(model.config)
        assert type(again) is type(model) and again.config == model.config
        assert again.n_parameters == model.n_parameters
    assert MineCNN({"dilations": (1, 3)}).config["dilations"] == [1, 3]


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"arch": "rnn"}, ["'rnn'", "cnn"]),
        ({"channels": 8}, ["'arch'"]),
        ({"arch": "cnn", "width": 8}, ["'width'", "channels"]),
        ({"arch": "cnn", "kernel": 4}, ["kernel", "odd", "4"]),
        ({"arch": "cnn", "dilations": []}, ["dilations", "non-empty"]),
        ({"arch": "cnn", "dilations": [1, 0]}, ["dilations", "at least 1"]),
        ({"arch": "cnn", "channels": 2.5}, ["channels", "integer"]),
        ({"arch": "cnn", "norm": "batch"}, ["norm", "'batch'"]),
        ({"arch": "gnn", "conv": "gcn"}, ["conv", "'gcn'", "sage"]),
        ({"arch": "gnn", "cell_edges": "yes"}, ["cell_edges", "'yes'"]),
        ({"arch": "gnn", "global_pool": 1}, ["global_pool", "1"]),
        ({"arch": "gnn", "shared": "no"}, ["shared", "'no'"]),
        ({"arch": "cnn", "global_pool": 0}, ["global_pool", "0"]),
        ({"arch": "gnn", "layers": -1}, ["layers", "at least 0"]),
    ],
)
def test_bad_configs_are_refused(config, words):
    with pytest.raises(ModelError) as info:
        MineModel.from_config(config)
    assert isinstance(info.value, NnsweeperError)
    for word in words:
        assert word in str(info.value)


def test_typed_configs_hold_the_defaults_and_rules():
    from dataclasses import FrozenInstanceError

    from nnsweeper.models.cnn import CNNConfig
    from nnsweeper.models.gnn import GNNConfig

    assert MineCNN.Config is CNNConfig and MineGNN.Config is GNNConfig
    cnn = MineCNN({"channels": 8, "dilations": [1, 2]})
    assert cnn.settings == CNNConfig(channels=8, dilations=(1, 2))
    assert cnn.settings.dilations == (1, 2) and cnn.config["dilations"] == [1, 2]
    assert MineCNN(cnn.settings).config == cnn.config
    # One source of defaults: the dataclass.
    assert MineCNN().config == {"arch": "cnn", **CNNConfig().to_dict()}
    assert MineGNN().config == {"arch": "gnn", **GNNConfig().to_dict()}
    assert MineGNN({"layers": 2}).settings.layers == 2
    with pytest.raises(FrozenInstanceError):
        cnn.settings.channels = 4
    odd = r"config\['kernel'\] must be odd so that padding keeps the board size; got 4"
    with pytest.raises(ModelError, match=odd):
        CNNConfig(kernel=4)
    conv = r"config\['conv'\] must be one of 'sage', 'graph', 'gatv2', 'transformer'; got 'gcn'"
    with pytest.raises(ModelError, match=conv):
        GNNConfig(conv="gcn")
    with pytest.raises(ModelError, match=r"config\['hidden'\] must be at least 1; got 0"):
        GNNConfig(hidden=0)


def test_a_new_architecture_declares_only_its_config():
    from dataclasses import dataclass

    from nnsweeper.datasets import make_loader
    from nnsweeper.errors import DatasetError
    from nnsweeper.models import ARCHITECTURES, register_architecture, unregister_architecture
    from nnsweeper.models.base import ModelConfig

    @dataclass(frozen=True)
    class LinearConfig(ModelConfig):
        #: Scale of the logits.
        scale: int = 2

        def __post_init__(self):
            self._int("scale", 1)

    class Linear(MineModel):
        arch = "linear_test"
        Config = LinearConfig

        def __init__(self, config=None):
            super().__init__(config)
            self.w = torch.nn.Linear(1, 1)

    assert "linear_test" not in ARCHITECTURES  # defining a class registers nothing
    register_architecture("linear_test", Linear)
    try:
        model = MineModel.from_config({"arch": "linear_test"})
        assert type(model) is Linear and model.config == {"arch": "linear_test", "scale": 2}
        assert MineModel.complete_config({"arch": "linear_test", "scale": 3}) == {"arch": "linear_test",
                                                                                  "scale": 3}
        with pytest.raises(ModelError, match=r"config\['scale'\] must be at least 1; got 0"):
            MineModel.from_config({"arch": "linear_test", "scale": 0})
        with pytest.raises(ModelError, match="unknown config key 'width'.*the keys are scale"):
            MineModel.from_config({"arch": "linear_test", "width": 1})
        with pytest.raises(DatasetError, match="no loader for Linear: it does not say which inputs"):
            make_loader(model, TINY, "train")
    finally:
        if "linear_test" in ARCHITECTURES:
            unregister_architecture("linear_test")


@pytest.mark.parametrize("arch", ["cnn", "gnn"])
def test_make_loader_gives_batches_that_outputs_reads(arch):
    from nnsweeper.datasets import make_loader

    model = _model(arch)
    loader = make_loader(model, TINY, "val", batch_size=8, shuffle=False)
    batch = next(iter(loader))
    out = model.outputs(batch)
    assert set(out) == {"logit", "prob", "mine", "weight", "frontier", "graph"}
    n = out["logit"].shape[0]
    assert n > 0 and all(v.shape == (n,) for v in out.values())
    if arch == "gnn":
        # The graphs follow the model's config: without cell edges they have none.
        plain = _model("gnn", cell_edges=False)
        graphs = next(iter(make_loader(plain, TINY, "val", batch_size=8, shuffle=False)))
        assert ("cell", "near", "cell") not in graphs.edge_types
        assert plain.outputs(graphs)["logit"].shape[0] > 0
        with pytest.raises(ModelError, match="which the graph lacks"):
            model.outputs(graphs)


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ModelError, match="'tpu'"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ModelError, match="CUDA is not available"):
            resolve_device("cuda")


# --------------------------------------------------------------------------- CNN
def test_cnn_receptive_field_by_hand_and_by_gradient():
    # kernel 3: stem 3, blocks of dilations 1, 2, 1 add 2*2*1 + 2*2*2 + 2*2*1 = 16.
    assert MineCNN({"channels": 4, "blocks": 3, "dilations": [1, 2], "kernel": 3}).receptive_field == 19
    # kernel 5: stem 5, blocks of dilations 1, 3 add 2*4*1 + 2*4*3 = 32.
    assert MineCNN({"channels": 4, "blocks": 2, "dilations": [1, 3], "kernel": 5}).receptive_field == 37
    assert MineCNN({"blocks": 0}).receptive_field == 3
    assert MineCNN().receptive_field == 75

    # Without normalisation, the input cells an output cell depends on span exactly the receptive field
    # (positive weights and inputs keep every ReLU open, so no path is cut).
    model = MineCNN({"channels": 3, "blocks": 3, "dilations": [1, 2], "norm": "none"})
    with torch.no_grad():
        for p in model.parameters():
            p.uniform_(0.05, 0.2)
    x = torch.rand(1, len(GRID_CHANNELS), 41, 41, requires_grad=True)
    model(x)[0, 20, 20].backward()
    touched = np.argwhere(x.grad.abs().sum(dim=(0, 1)).numpy() > 0)
    assert (touched.max(axis=0) - touched.min(axis=0) + 1).tolist() == [19, 19]


def test_cnn_runs_on_any_board_size():
    model = _model("cnn")
    for rows, cols in ((10, 10), (16, 30), (5, 7), (1, 1)):
        x = torch.rand(3, len(GRID_CHANNELS), rows, cols)
        assert model(x).shape == (3, rows, cols)
    with pytest.raises(ModelError, match="shape"):
        model(torch.rand(1, 3, 5, 5))


def _bce(model: MineModel, batch) -> torch.Tensor:
    out = model.outputs(batch)
    loss = F.binary_cross_entropy_with_logits(
        out["logit"], out["prob"], weight=out["weight"], reduction="sum"
    )
    return loss / out["weight"].sum()


def test_cnn_trains_on_small_boards_then_plays_expert(states, idx9):
    model = _model("cnn", channels=16)
    held_out = collate_grids([states[i] for i in idx9])
    with torch.no_grad():
        before = float(_bce(model, held_out))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loader = grid_loader(TINY, "train", batch_size=16, seed=0)
    steps = 0
    while steps < 40:
        for batch in loader:
            opt.zero_grad()
            _bce(model, batch).backward()
            opt.step()
            steps += 1
            if steps == 40:
                break
    with torch.no_grad():
        after = float(_bce(model, held_out))
    assert after < before - 0.02

    grid, total, flags, _ = _board(16, 30, 99, seed=3)
    p = model.predict_proba(grid, total, flags)
    assert p.shape == (16, 30) and p.dtype == np.float64
    assert np.isfinite(p).all()
    unknown = (grid == -1) & ~flags
    assert ((p[unknown] > 0) & (p[unknown] < 1)).all()


# --------------------------------------------------------------------------- GNN
def _permuted(data: HeteroData, seed: int) -> tuple[HeteroData, np.ndarray, np.ndarray]:
    """``data`` with its cell and constraint nodes (and its edges) in another order.

    Returns the new graph and the permutations: new node ``k`` is old node ``perm[k]``.
    """
    rng = np.random.default_rng(seed)
    perms = {t: rng.permutation(data[t].num_nodes) for t in ("cell", "constraint")}
    out = data.clone()
    for t, perm in perms.items():
        for key in ("x", "pos", "y_prob", "y_mine"):
            if key in data[t]:
                out[t][key] = data[t][key][torch.from_numpy(perm)]
    inverse = {t: torch.from_numpy(np.argsort(perm)) for t, perm in perms.items()}
    for src, rel, dst in data.edge_types:
        ei = data[src, rel, dst].edge_index
        ei = torch.stack([inverse[src][ei[0]], inverse[dst][ei[1]]])
        out[src, rel, dst].edge_index = ei[:, torch.from_numpy(rng.permutation(ei.shape[1]))]
    return out, perms["cell"], perms["constraint"]


@pytest.mark.parametrize(("conv", "global_pool", "shared"),
                         [("sage", True, False), ("sage", False, False), ("graph", True, False),
                          ("gatv2", True, False), ("transformer", True, False), ("sage", True, True)])
def test_gnn_does_not_depend_on_node_order(graphs, idx9, conv, global_pool, shared):
    model = _model("gnn", conv=conv, global_pool=global_pool, shared=shared).eval()
    _randomise(model)
    items = [graphs[i] for i in idx9]
    data = next(d for d in items if d["cell"].num_nodes > 8 and int(d.n_interior) > 0)
    shuffled, perm, _ = _permuted(data, seed=5)
    assert not np.array_equal(perm, np.arange(perm.size))
    with torch.no_grad():
        cells, interior = model(data)
        cells2, interior2 = model(shuffled)
        # Also inside a batch, next to another graph.
        other = items[0]
        b_cells, b_interior = model(Batch.from_data_list([other, shuffled]))
    torch.testing.assert_close(cells2, cells[torch.from_numpy(perm)], atol=1e-5, rtol=0)
    torch.testing.assert_close(interior2, interior, atol=1e-5, rtol=0)
    n_other = other["cell"].num_nodes
    torch.testing.assert_close(b_cells[n_other:], cells2, atol=1e-5, rtol=0)
    torch.testing.assert_close(b_interior[1:], interior, atol=1e-5, rtol=0)


def _odd_boards():
    """Boards without frontier, without interior, without any unknown cell, and a usual one."""
    boards = [
        (np.full((4, 4), -1), 3),  # nothing revealed: no frontier, no constraint, all interior
        (np.array([[1, -1], [-1, -1]]), 1),  # every covered cell is frontier: no interior
        (np.array([[0, 0], [0, 0]]), 0),  # nothing covered at all
    ]
    grid, total, _, _ = _board(6, 6, 5, seed=2, flag=False)
    boards.append((grid, total))
    out = []
    for g, t in boards:
        prob = mine_probabilities(g, t)
        layout = np.zeros(g.shape, dtype=bool)
        covered = np.argwhere(g == -1)
        for i, j in covered[np.argsort(-prob[g == -1], kind="stable")][:t]:
            layout[i, j] = True
        out.append((g, t, prob, layout))
    return out


@pytest.mark.parametrize("arch", ["cnn", "gnn"])
def test_graphs_without_frontier_or_interior(arch):
    model = _model(arch).eval()
    boards = _odd_boards()
    grids = [g for g, *_ in boards]
    totals = [t for _, t, *_ in boards]
    if arch == "gnn":
        batch = Batch.from_data_list(
            [build_graph(g, t, probabilities=p, mines=m) for g, t, p, m in boards]
        )
        assert batch["cell"].batch.tolist().count(0) == 0 and int(batch.n_interior[1]) == 0
        with torch.no_grad():
            out = model.outputs(batch)
        n_int = batch.n_interior
        assert out["logit"].shape[0] == batch["cell"].num_nodes + int((n_int > 0).sum())
    probs = model.predict_proba(grids, totals)
    for (g, *_), p in zip(boards, probs, strict=True):
        assert p.shape == g.shape
        assert (p[g >= 0] == 0).all() and ((p[g == -1] > 0) & (p[g == -1] < 1)).all()
    if arch == "gnn":  # the board without frontier is all interior: one probability
        assert np.unique(probs[0]).size == 1


# --------------------------------------------------------------------------- predict_proba
@pytest.mark.parametrize("arch", ["cnn", "gnn"])
def test_predict_proba_shapes_and_fixed_cells(arch):
    model = _model(arch)
    _randomise(model)
    model.train()
    boards = [_board(9, 9, 10, seed=s) for s in range(4)]
    grids = np.stack([b[0] for b in boards])
    flags = np.stack([b[2] for b in boards])

    one = model.predict_proba(grids[0], 10, flags[0])
    assert one.shape == (9, 9) and one.dtype == np.float64
    stacked = model.predict_proba(grids, 10, flags, batch_size=3)
    assert stacked.shape == (4, 9, 9)
    np.testing.assert_allclose(stacked[0], one, atol=1e-6)
    # Nested lists are one board too.
    np.testing.assert_allclose(model.predict_proba(grids[0].tolist(), 10, flags[0]), one, atol=1e-6)

    for k in range(4):
        g, f = grids[k], flags[k]
        p = stacked[k]
        assert (p[g >= 0] == 0.0).all()
        assert (p[f] == 1.0).all() and f.sum() == 1
        unknown = (g == -1) & ~f
        assert ((p[unknown] > 0) & (p[unknown] < 1)).all()
        if arch == "gnn":
            interior = unknown & ~dilate(g >= 0)
            assert interior.sum() > 1
            assert np.unique(p[interior]).size == 1

    mixed = [boards[0][0], _board(16, 30, 99, seed=1)[0], _board(5, 7, 4, seed=2)[0], boards[1][0]]
    out = model.predict_proba(mixed, [10, 99, 4, 10], [flags[0], None, None, flags[1]], batch_size=2)
    assert isinstance(out, list) and [p.shape for p in out] == [(9, 9), (16, 30), (5, 7), (9, 9)]
    np.testing.assert_allclose(out[0], one, atol=1e-6)
    np.testing.assert_allclose(out[3], stacked[1], atol=1e-6)
    # The train/eval mode of every submodule is left as it was.
    assert all(m.training for m in model.modules())
    # Also when only some are training (the others in eval mode), and when none is.
    model.eval()
    head = list(model.modules())[-1]
    head.train()
    np.testing.assert_allclose(model.predict_proba(grids[0], 10, flags[0]), one, atol=1e-6)
    assert [m for m in model.modules() if m.training] == [head]
    model.eval()
    np.testing.assert_allclose(model.predict_proba(grids[0], 10, flags[0]), one, atol=1e-6)
    assert not any(m.training for m in model.modules())


@pytest.mark.parametrize("arch", ["cnn", "gnn"])
def test_predict_proba_names_the_bad_board(arch):
    model = _model(arch)
    good = _board(5, 5, 3, seed=0, flag=False)[0]
    with pytest.raises(InconsistentBoardError, match="board 1"):
        model.predict_proba([good, good], [3, 500])
    with pytest.raises(NnsweeperError, match="one integer per board"):
        model.predict_proba(np.stack([good, good]), [3, 3, 3])
    with pytest.raises(NnsweeperError, match="batch_size"):
        model.predict_proba(good, 3, batch_size=0)


# --------------------------------------------------------------------------- outputs
def test_cnn_outputs_rows_are_the_unknown_cells(states, graphs, idx9):
    model = _model("cnn")
    items = [states[i] for i in idx9]
    batch = collate_grids(items)
    out = model.outputs(batch)
    unknown = batch["unknown"]
    n = int(unknown.sum())
    assert {k: v.shape[0] for k, v in out.items()} == dict.fromkeys(out, n)
    assert out["logit"].dtype == torch.float32 and out["frontier"].dtype == torch.bool
    assert out["graph"].dtype == torch.int64
    assert float(out["weight"].sum()) == n
    torch.testing.assert_close(out["prob"], batch["prob"][unknown])
    torch.testing.assert_close(out["mine"], batch["mine"][unknown])
    assert torch.equal(out["frontier"], batch["frontier"][unknown])
    assert out["graph"].bincount(minlength=len(items)).tolist() == unknown.sum(dim=(1, 2)).tolist()
    with torch.no_grad():
        logits = model(batch["x"])
    torch.testing.assert_close(out["logit"], logits[unknown])

    # symmetric: the logits of predict_proba(symmetric=True), row for row.
    _randomise(model)
    with torch.no_grad():
        sym = torch.sigmoid(model.outputs(batch, symmetric=True)["logit"].double())
    for b, i in enumerate(idx9):
        s = states.state(i)
        p = model.predict_proba(s["grid"], int(s["total_mines"]), s["flags"], symmetric=True)
        rows = out["graph"] == b
        np.testing.assert_allclose(sym[rows].numpy(), p[unknown[b].numpy()], rtol=0, atol=1e-6)
    gnn = _model("gnn")
    graph_batch = Batch.from_data_list([graphs[i] for i in idx9])
    with torch.no_grad():
        torch.testing.assert_close(gnn.outputs(graph_batch, symmetric=True), gnn.outputs(graph_batch))


def test_gnn_outputs_rows_are_frontier_cells_and_interiors(states, graphs, idx9):
    model = _model("gnn")
    batch = Batch.from_data_list([graphs[i] for i in idx9])
    out = model.outputs(batch)
    n_int = batch.n_interior
    n_rows = batch["cell"].num_nodes + int((n_int > 0).sum())
    assert {k: v.shape[0] for k, v in out.items()} == dict.fromkeys(out, n_rows)
    assert out["logit"].dtype == torch.float32 and out["graph"].dtype == torch.int64
    assert torch.all(out["graph"][1:] >= out["graph"][:-1])  # grouped by graph
    assert int(out["frontier"].sum()) == batch["cell"].num_nodes

    unknown_per_board = []
    for b, i in enumerate(idx9):
        s = states.state(i)
        g, f, prob, mines = s["grid"], s["flags"], s["prob"], s["mines"]
        unknown = (g == -1) & ~f
        interior = unknown & ~dilate(g >= 0)
        unknown_per_board.append(int(unknown.sum()))
        rows = out["graph"] == b
        fr = rows & out["frontier"]
        pos = batch["cell"].pos[batch["cell"].batch == b].numpy()
        np.testing.assert_allclose(out["prob"][fr].numpy(), prob[pos[:, 0], pos[:, 1]], atol=1e-6)
        np.testing.assert_array_equal(out["mine"][fr].numpy(), mines[pos[:, 0], pos[:, 1]])
        inner = rows & ~out["frontier"]
        assert int(inner.sum()) == int(interior.any())
        if interior.any():
            assert float(out["weight"][inner]) == interior.sum()
            np.testing.assert_allclose(float(out["prob"][inner]) * interior.sum(), prob[interior].sum(),
                                       rtol=1e-5)
            np.testing.assert_allclose(float(out["mine"][inner]) * interior.sum(), mines[interior].sum(),
                                       rtol=1e-6)
            # A weighted interior row is the sum of its cells' cross-entropies.
            logit = out["logit"][inner].detach().expand(int(interior.sum()))
            per_cell = F.binary_cross_entropy_with_logits(
                logit, torch.from_numpy(prob[interior]).float(), reduction="sum"
            )
            row = F.binary_cross_entropy_with_logits(
                out["logit"][inner].detach(), out["prob"][inner], weight=out["weight"][inner], reduction="sum"
            )
            torch.testing.assert_close(row, per_cell, rtol=1e-5, atol=1e-5)
    assert float(out["weight"].sum()) == sum(unknown_per_board)
    # Both architectures weigh the same cells.
    cnn_out = _model("cnn").outputs(collate_grids([states[i] for i in idx9]))
    assert float(cnn_out["weight"].sum()) == float(out["weight"].sum())


def test_gnn_refuses_graphs_it_cannot_read(graphs, idx9):
    model = _model("gnn")
    plain = GraphDataset(TINY, "train", cell_edges=False)[idx9[0]]
    with pytest.raises(ModelError, match="cell_edges=True"):
        model(plain)
    assert _model("gnn", cell_edges=False)(plain)[0].shape == (plain["cell"].num_nodes,)
    grid, total, _, _ = _board(6, 6, 5, seed=0, flag=False)
    with pytest.raises(ModelError, match="targets"):
        model.outputs(Batch.from_data_list([build_graph(grid, total)]))


# --------------------------------------------------------------------------- checkpoints
@pytest.mark.parametrize("arch", ["cnn", "gnn"])
def test_checkpoint_round_trip(arch, tmp_path):
    model = _model(arch)
    _randomise(model)
    path = save_checkpoint(tmp_path / "run" / "model.pt", model, extra={"epoch": 3, "val_loss": 0.25})
    assert path == tmp_path / "run" / "model.pt" and path.is_file()
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["arch"] == arch and meta["config"] == model.config
    assert meta["features"]["grid_channels"] == list(GRID_CHANNELS)
    assert set(meta["features"]) == {"grid_channels", "cell_features", "constraint_features"}
    assert meta["parameters"] == model.n_parameters and meta["extra"] == {"epoch": 3, "val_loss": 0.25}
    assert len(meta["sha256"]) == 64 and meta["nnsweeper_version"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.json", "model.pt"]  # no temporaries

    loaded = load_checkpoint(path, expected={"arch": arch})
    assert type(loaded) is type(model) and not loaded.training
    assert loaded.checkpoint_meta["extra"]["epoch"] == 3
    boards = [_board(9, 9, 10, seed=s)[0] for s in range(3)]
    np.testing.assert_array_equal(np.stack(loaded.predict_proba(boards, 10)),
                                  np.stack(model.predict_proba(boards, 10)))
    # Named by its .json, and as a path through load_model.
    assert load_checkpoint(path.with_suffix(".json")).config == model.config
    assert load_model(str(path)).config == model.config


@pytest.fixture
def cnn_checkpoint(tmp_path):
    return save_checkpoint(tmp_path / "cnn.pt", _model("cnn"))


def _rewrite_weights(path, state) -> None:
    """Replace a checkpoint's weights by ``state`` and record the new checksum."""
    torch.save(state, path)
    meta_path = path.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    meta["sha256"] = file_sha256(path)
    meta_path.write_text(json.dumps(meta))


def test_checkpoint_of_another_arch_or_config_is_refused(cnn_checkpoint):
    with pytest.raises(CheckpointError, match="'cnn' model; expected arch 'gnn'"):
        load_checkpoint(cnn_checkpoint, expected={"arch": "gnn"})
    with pytest.raises(CheckpointError, match=r"config\['channels'\] = 8; expected 32") as info:
        load_checkpoint(cnn_checkpoint, expected={"arch": "cnn", "channels": 32})
    assert "cnn.json" in str(info.value)
    loaded = load_checkpoint(cnn_checkpoint, expected={"channels": 8, "dilations": (1, 2)})
    assert loaded.config["channels"] == 8
    with pytest.raises(CheckpointError, match="'hidden' is not a config key"):
        load_checkpoint(cnn_checkpoint, expected={"hidden": 64})


def test_damaged_checkpoints_are_refused(cnn_checkpoint, tmp_path):
    data = cnn_checkpoint.read_bytes()
    cnn_checkpoint.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="cnn.pt.*damaged"):
        load_checkpoint(cnn_checkpoint)
    # Truncated with a matching checksum: torch.load itself fails.
    cnn_checkpoint.write_bytes(data[: len(data) // 2])
    meta = json.loads(cnn_checkpoint.with_suffix(".json").read_text())
    meta["sha256"] = file_sha256(cnn_checkpoint)
    cnn_checkpoint.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="cnn.pt.*cannot be read by torch.load"):
        load_checkpoint(cnn_checkpoint)

    with pytest.raises(CheckpointError, match="absent.pt.*does not exist"):
        load_checkpoint(tmp_path / "absent.pt")
    with pytest.raises(CheckpointError, match="end in .pt"):
        load_checkpoint(tmp_path / "model.bin")
    cnn_checkpoint.with_suffix(".json").write_text("{not json")
    with pytest.raises(CheckpointError, match="cnn.json.*not readable JSON"):
        load_checkpoint(cnn_checkpoint)


def test_weights_that_do_not_fit_are_refused(cnn_checkpoint):
    state = _model("cnn").state_dict()
    missing = dict(state)
    del missing["head.weight"]
    _rewrite_weights(cnn_checkpoint, missing)
    with pytest.raises(CheckpointError, match="missing keys 'head.weight'"):
        load_checkpoint(cnn_checkpoint)

    wrong = dict(state, **{"head.bias": torch.zeros(2)})
    _rewrite_weights(cnn_checkpoint, wrong)
    with pytest.raises(CheckpointError, match=r"'head.bias' \(2,\) instead of \(1,\)"):
        load_checkpoint(cnn_checkpoint)


def test_checkpoint_of_other_features_is_refused(cnn_checkpoint):
    meta_path = cnn_checkpoint.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    meta["features"]["grid_channels"] = meta["features"]["grid_channels"][:-1]
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="grid_channels"):
        load_checkpoint(cnn_checkpoint)


def test_torch_load_reads_weights_only(cnn_checkpoint, monkeypatch):
    calls = []
    real_load = torch.load

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    load_checkpoint(cnn_checkpoint)
    assert calls and all(kw.get("weights_only") is True for kw in calls)


def test_load_model_bundled_weights(tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint_module, "WEIGHTS_DIR", tmp_path / "weights")
    with pytest.raises(CheckpointError, match="no bundled weights for 'cnn' in this installation"):
        load_model("cnn")
    with pytest.raises(CheckpointError, match="neither a bundled model name"):
        load_model("rnn")
    model = _model("gnn")
    save_checkpoint(tmp_path / "weights" / "gnn.pt", model)
    assert load_model("gnn").config == model.config
    # A bundled name holding another architecture is refused.
    save_checkpoint(tmp_path / "weights" / "cnn.pt", model)
    with pytest.raises(CheckpointError, match="expected arch 'cnn'"):
        load_model("cnn")


def test_save_checkpoint_refuses_bad_arguments(tmp_path):
    model = _model("cnn")
    with pytest.raises(CheckpointError, match="end in .pt"):
        save_checkpoint(tmp_path / "model.pth", model)
    with pytest.raises(CheckpointError, match="MineModel"):
        save_checkpoint(tmp_path / "model.pt", torch.nn.Linear(2, 2))
    with pytest.raises(CheckpointError, match="JSON-able"):
        save_checkpoint(tmp_path / "model.pt", model, extra={"when": object()})
    assert not any(tmp_path.iterdir())


def test_encoded_batches_match_single_boards():
    # The CNN reads boards batched by encode_grids exactly as one by one.
    model = _model("cnn").eval()
    grids = np.stack([_board(8, 8, 9, seed=s, flag=False)[0] for s in range(3)])
    with torch.no_grad():
        batched = model(torch.from_numpy(encode_grids(grids, 9)))
    for k in range(3):
        np.testing.assert_allclose(
            model.predict_proba(grids[k], 9)[grids[k] == -1],
            torch.sigmoid(batched[k].double()).numpy()[grids[k] == -1],
            atol=1e-6,
        )


@pytest.mark.parametrize("name", ["cnn", "gnn"])
def test_bundled_models_predict_close_to_the_engine(name):
    """The shipped weights load by name, track the exact probabilities and carry their seeds."""
    import nnsweeper as ns
    from nnsweeper.datasets import StateDataset
    from nnsweeper.seeds import stream_seeds

    if not (checkpoint_module.WEIGHTS_DIR / f"{name}.pt").exists():
        pytest.skip(f"no bundled {name} weights in this installation")
    model = ns.load_model(name)
    assert model.arch == name
    data = StateDataset(Path(__file__).resolve().parents[1] / "data" / "fixtures" / "tiny", "test")
    states = [data.state(i) for i in range(len(data))]
    p = model.predict_proba([s["grid"] for s in states], [int(s["total_mines"]) for s in states],
                            [s["flags"] for s in states])
    unknown = [(s["grid"] < 0) & ~s["flags"] for s in states]
    err = np.concatenate([np.abs(q - s["prob"])[u] for q, s, u in zip(p, states, unknown, strict=True)])
    assert err.mean() < 0.05, err.mean()
    extra = model.checkpoint_meta["extra"]
    assert extra["data_manifest_sha256"]
    # The training seeds travel with the weights: all in the dataset ranges, none below 2**62.
    seeds = np.concatenate([stream_seeds(e) for e in extra["data_seed_streams"]])
    assert len(seeds) > 10_000 and seeds.min() >= 2**62


@pytest.mark.parametrize("global_pool", [False, True])
def test_gnn_global_pool_reaches_beyond_the_neighbours(graphs, idx9, global_pool):
    # One round without cell-cell edges: a cell hears only its own constraints, plus,
    # with global_pool, the mean state of the whole graph.
    model = _model("gnn", layers=1, cell_edges=False, global_pool=global_pool).eval()
    _randomise(model)
    data = next(d for d in (graphs[i] for i in idx9) if d["constraint"].num_nodes > 4)
    has = data["constraint", "has", "cell"].edge_index
    near = set(has[1][has[0] == 0].tolist())  # the cells of constraint 0
    cell = next(c for c in range(data["cell"].num_nodes) if c not in near)
    changed = data.clone()
    changed["constraint"].x[0] += 1.0
    with torch.no_grad():
        before = model(data)[0][cell]
        after = model(changed)[0][cell]
    assert bool(before != after) is global_pool


@pytest.mark.parametrize("global_pool", [False, True])
def test_cnn_global_pool_reaches_beyond_the_receptive_field(global_pool):
    # One block of dilation 1 without GroupNorm (whose board-wide statistics reach every cell)
    # sees 5x5 cells; with global_pool, a change anywhere on the
    # board moves every cell, through the board mean.
    model = MineCNN({"channels": 8, "blocks": 1, "dilations": [1], "norm": "none",
                      "global_pool": global_pool}).eval()
    _randomise(model)
    x = torch.rand(1, len(GRID_CHANNELS), 12, 12)
    x[:, GRID_CHANNELS.index("outside")] = 0.0
    far = x.clone()
    far[0, 0, 11, 11] += 1.0
    with torch.no_grad():
        before, after = model(x)[0, 0, 0], model(far)[0, 0, 0]
    assert bool(before != after) is global_pool
    if global_pool:
        # Padding cells (outside = 1) do not enter the mean.
        padded = torch.zeros(1, len(GRID_CHANNELS), 12, 15)
        padded[:, :, :, :12] = x
        padded[:, GRID_CHANNELS.index("outside"), :, 12:] = 1.0
        block = model.blocks[0]
        inside = 1.0 - padded[:, GRID_CHANNELS.index("outside")][:, None]
        h = model.stem(padded)
        mean = (h * inside).sum(dim=(2, 3)) / inside.sum(dim=(2, 3))
        torch.testing.assert_close(mean, h[:, :, :, :12].mean(dim=(2, 3)))
        assert block.pool is not None


def test_gnn_shared_rounds_reuse_one_set_of_weights(graphs, idx9):
    one = _model("gnn", layers=1)
    shared = _model("gnn", layers=5, shared=True)
    assert shared.n_parameters == one.n_parameters < _model("gnn", layers=5).n_parameters
    assert _model("gnn", layers=0, shared=True).n_parameters == _model("gnn", layers=0).n_parameters
    _randomise(shared)
    one.load_state_dict(shared.state_dict())
    data = graphs[idx9[0]]
    with torch.no_grad():
        # More rounds of the same update give other logits than one round.
        assert not torch.allclose(shared.eval()(data)[0], one.eval()(data)[0])


@pytest.mark.parametrize("arch", ["cnn", "gnn"])
def test_symmetric_prediction_transforms_with_the_board(arch, states):
    from nnsweeper.grid import apply_symmetry, board_symmetries

    torch.manual_seed(0)
    model = MineCNN({"channels": 8, "blocks": 2}) if arch == "cnn" else MineGNN({"hidden": 16, "layers": 2})
    plain_gap = 0.0
    for i in range(0, len(states), max(1, len(states) // 6)):
        s = states.state(i)
        grid, flags, total = s["grid"], s["flags"], int(s["total_mines"])
        mean = model.predict_proba(grid, total, flags, symmetric=True)
        plain = model.predict_proba(grid, total, flags)
        for sym in board_symmetries(*grid.shape):
            g = np.ascontiguousarray(apply_symmetry(grid, sym))
            f = np.ascontiguousarray(apply_symmetry(flags, sym))
            moved = model.predict_proba(g, total, f, symmetric=True)
            np.testing.assert_allclose(moved, apply_symmetry(mean, sym), rtol=0, atol=1e-6)
            gap = np.abs(model.predict_proba(g, total, f) - apply_symmetry(plain, sym)).max()
            plain_gap = max(plain_gap, gap)
        assert (mean[grid >= 0] == 0).all() and (mean[flags] == 1).all()
    if arch == "cnn":  # a convolution with borders is not equivariant by itself
        assert plain_gap > 1e-4
    else:  # the graph's features are counts: a symmetry only renumbers its nodes
        assert plain_gap < 1e-5
    with pytest.raises(ModelError, match="symmetric must be True or False"):
        model.predict_proba(grid, total, flags, symmetric=1)


def test_kernel_orbits_by_hand():
    from nnsweeper.models.cnn import kernel_orbits

    np.testing.assert_array_equal(kernel_orbits(3), [[2, 1, 2], [1, 0, 1], [2, 1, 2]])
    np.testing.assert_array_equal(kernel_orbits(1), [[0]])
    k5 = kernel_orbits(5)
    assert k5.max() == 5 and k5[2, 2] == 0 and k5[0, 0] == k5[4, 4] == k5[0, 4] == 5
    assert k5[0, 1] == k5[1, 0] == k5[3, 4] == 4  # (2, 1) offsets: eight cells, one orbit


@pytest.mark.parametrize("shape", [(9, 9), (7, 11)])
def test_symmetric_cnn_commutes_with_the_board_symmetries(states, shape):
    """With every kernel invariant under the square's symmetries, a rotated or mirrored board gets
    the rotated or mirrored probabilities from one plain pass, whatever the weights: the borders,
    the dilations, GroupNorm and the global pool all commute with them."""
    from nnsweeper.grid import apply_symmetry, board_symmetries

    torch.manual_seed(0)
    model = MineCNN({"channels": 8, "blocks": 3, "dilations": [1, 2, 4], "global_pool": True,
                     "symmetric": True})
    _randomise(model)
    assert model.n_parameters < MineCNN({"channels": 8, "blocks": 3, "dilations": [1, 2, 4],
                                         "global_pool": True}).n_parameters
    worst = 0.0
    for seed in range(4):
        grid, total, flags, _ = _board(*shape, 12, seed=seed)
        p = model.predict_proba(grid, total, flags)
        assert 0.01 < p[(grid < 0) & ~flags].std()  # a network that tells cells apart
        for sym in board_symmetries(*shape):
            g = np.ascontiguousarray(apply_symmetry(grid, sym))
            f = np.ascontiguousarray(apply_symmetry(flags, sym))
            worst = max(worst, np.abs(model.predict_proba(g, total, f) - apply_symmetry(p, sym)).max())
    assert worst < 1e-5
    grids = [_board(*shape, 12, seed=seed)[0] for seed in range(4)]
    assert model.symmetry_gap(grids, 12).max() < 1e-5
    plain = MineCNN({"channels": 8, "blocks": 3, "dilations": [1, 2, 4], "global_pool": True})
    _randomise(plain)
    assert plain.symmetry_gap(grids, 12).min() > 1e-3  # the check tells a plain CNN apart
    # Its kernels hold one weight per orbit: each conv's full kernel is symmetric.
    conv = model.blocks[0].conv1
    kernel = conv.kernel().detach()
    torch.testing.assert_close(kernel, kernel.flip(-1))
    torch.testing.assert_close(kernel, kernel.transpose(-1, -2))


def test_symmetric_cnn_checkpoint_round_trip(tmp_path):
    model = MineCNN({"channels": 8, "blocks": 2, "symmetric": True})
    _randomise(model)
    path = save_checkpoint(tmp_path / "sym.pt", model)
    loaded = load_checkpoint(path, expected={"arch": "cnn"})
    assert loaded.config["symmetric"] is True
    grid, total, flags, _ = _board(9, 9, 10, seed=1)
    np.testing.assert_array_equal(loaded.predict_proba(grid, total, flags),
                                  model.predict_proba(grid, total, flags))
    # Its weights do not fit the plain network of the same size.
    with pytest.raises(ModelError, match="symmetric"):
        MineCNN({"channels": 8, "blocks": 2, "symmetric": "yes"})


# --------------------------------------------------------------------------- plain sage layers
def test_plain_sage_layers_give_torch_geometrics_numbers_bit_for_bit(graphs, idx9):
    # The sage GNN is built from plain torch layers (no torch-geometric to play); the same model
    # built from torch-geometric's HeteroConv(SAGEConv) with the same state gives the same bits:
    # on a batch by edge index (training, predict_proba) and by sparse adjacency (predict_tensor).
    from torch_geometric.nn import HeteroConv

    from nnsweeper.models.gnn import HeteroSage, make_conv

    model = _model("gnn", layers=3).eval()
    _randomise(model)
    assert all(isinstance(c, HeteroSage) for c in model.convs)
    reference = _model("gnn", layers=3).eval()
    h = reference.settings.hidden
    reference.convs = torch.nn.ModuleList(
        HeteroConv({et: make_conv("sage", h) for et in reference.edge_types}, aggr="sum") for _ in range(3))
    assert sorted(reference.state_dict()) == sorted(model.state_dict())
    reference.load_state_dict(model.state_dict())
    batch = Batch.from_data_list([graphs[i] for i in idx9[:8]])
    with torch.no_grad():
        for ours, theirs in zip(model(batch), reference(batch), strict=True):
            assert torch.equal(ours, theirs)
    grids = torch.as_tensor(np.stack(_boards_9x9(4)))
    flags = torch.zeros_like(grids, dtype=torch.bool)
    with torch.inference_mode():
        ours = model.predict_tensor(grids, 10, flags, sparse=True)
        # (the reference is not plain: it runs through forward, on a HeteroData graph)
        theirs = reference.predict_tensor(grids, 10, flags, sparse=True)
        dense = model.predict_tensor(grids, 10, flags, sparse=False)
    assert torch.equal(ours, theirs)
    torch.testing.assert_close(ours, dense, atol=1e-5, rtol=0)
    for g in grids.numpy():
        np.testing.assert_array_equal(model.predict_proba(g, total_mines=10),
                                      reference.predict_proba(g, total_mines=10))


def _boards_9x9(n: int) -> list[np.ndarray]:
    """``n`` 9x9 boards part-way through (10 mines), as a player sees them."""
    out = []
    for seed in range(n):
        grid, _, _, _ = _board(9, 9, 10, seed=seed, flag=False)
        out.append(grid.astype(np.int64))
    return out
