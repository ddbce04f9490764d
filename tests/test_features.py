"""The CNN grid encoding and the frontier/constraint graph, against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch
from torch_geometric.loader import DataLoader

import nnsweeper as ns
from nnsweeper import InconsistentBoardError, InvalidBoardError, mine_probabilities
from nnsweeper.boardtext import parse_board
from nnsweeper.features import (
    CELL_FEATURES,
    CONSTRAINT_FEATURES,
    GLOBAL_FEATURES,
    GRID_CHANNELS,
    batch_to_grids,
    build_graph,
    build_graph_batch,
    build_graphs,
    encode_grid,
    encode_grids,
    graph_globals,
    graph_to_grid,
    pad_encoded,
)

IN = ("cell", "in", "constraint")
HAS = ("constraint", "has", "cell")
NEAR = ("cell", "near", "cell")

# Mines at (0, 3), (2, 1) (flagged) and (2, 3); total_mines = 3.
#   frontier cells (row-major): 0 (0,3)  1 (1,2)  2 (1,3)  3 (2,0)  4 (2,2); interior: (2,3)
#   constraints (row-major):    0 (0,1)  1 (0,2)  2 (1,0)  3 (1,1); (0,0) has no unknown neighbour
HAND = """
0 0 1 .
1 1 . .
. F . .
"""


@pytest.fixture
def hand():
    grid, flags = parse_board(HAND)
    return grid, 3, flags


def ch(name: str) -> int:
    return GRID_CHANNELS.index(name)


def midgame(seed: int, rows: int = 16, cols: int = 30, mines: int = 99, reveals: int = 6):
    """A board part-way through a game: a first click, then a few random safe cells."""
    env = ns.MinesweeperEnv(rows, cols, mines, seed=seed)
    rng = np.random.default_rng(seed)
    env.reveal(rows // 2, cols // 2)
    layout = env.mine_layout()
    for _ in range(reveals):
        grid = env.observe()
        cand = np.argwhere((grid < 0) & ~layout)
        if env.done or len(cand) == 0:
            break
        i, j = cand[rng.integers(len(cand))]
        env.reveal(int(i), int(j))
    grid = env.observe()
    analysis = ns.analyze(grid, mines)
    return grid, mines, analysis.mines, layout  # certain mines as flags


# --------------------------------------------------------------------------- grid encoding
def test_channel_names():
    assert len(GRID_CHANNELS) == 15
    assert GRID_CHANNELS[:3] == ("covered", "flagged", "revealed_0")
    assert GRID_CHANNELS[10:] == (
        "revealed_8", "outside", "mines_left_density", "revealed_fraction", "mine_density"
    )


def test_encode_grid_by_hand(hand):
    grid, total, flags = hand
    x = encode_grid(grid, total, flags)
    assert x.dtype == np.float32 and x.shape == (15, 3, 4)
    np.testing.assert_array_equal(x[ch("covered")], [[0, 0, 0, 1], [0, 0, 1, 1], [1, 0, 1, 1]])
    np.testing.assert_array_equal(x[ch("flagged")], [[0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0]])
    np.testing.assert_array_equal(x[ch("revealed_0")], [[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(x[ch("revealed_1")], [[0, 0, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0]])
    for k in range(2, 9):
        assert not x[ch(f"revealed_{k}")].any()
    assert not x[ch("outside")].any()
    # 3 mines, 1 flag, 6 covered unflagged cells; 5 of 12 cells revealed.
    np.testing.assert_allclose(x[ch("mines_left_density")], np.full((3, 4), 2 / 6), rtol=1e-6)
    np.testing.assert_allclose(x[ch("revealed_fraction")], np.full((3, 4), 5 / 12), rtol=1e-6)
    np.testing.assert_allclose(x[ch("mine_density")], np.full((3, 4), 3 / 12), rtol=1e-6)
    # Exactly one of covered / flagged / revealed_k per cell.
    np.testing.assert_array_equal(x[: ch("outside")].sum(axis=0), np.ones((3, 4)))


def test_encode_grid_without_flags_and_no_unknown():
    x = encode_grid(np.full((2, 2), -1), 4)
    np.testing.assert_allclose(x[ch("mines_left_density")], 1.0)
    assert not x[ch("revealed_fraction")].any()
    # Every covered cell flagged: no unknown cell, the density is 0 rather than 0/0.
    x = encode_grid([[2, -1], [2, -1]], 2, [[False, True], [False, True]])
    assert not x[ch("mines_left_density")].any()
    np.testing.assert_allclose(x[ch("revealed_fraction")], 0.5)


def test_encode_grids_equals_stacked_encode_grid(hand):
    boards = [midgame(s, 9, 9, 10, reveals=2) for s in range(4)]
    grids = np.stack([b[0] for b in boards])
    totals = np.array([b[1] for b in boards])
    flags = np.stack([b[2] for b in boards])
    assert flags.any()
    batch = encode_grids(grids, totals, flags)
    assert batch.dtype == np.float32 and batch.shape == (4, 15, 9, 9)
    stacked = [encode_grid(g, t, f) for g, t, f in zip(grids, totals, flags, strict=True)]
    np.testing.assert_array_equal(batch, np.stack(stacked))
    np.testing.assert_array_equal(encode_grids(grids, 10), np.stack([encode_grid(g, 10) for g in grids]))
    grid, total, fl = hand
    np.testing.assert_array_equal(encode_grids([grid], [total], [fl])[0], encode_grid(grid, total, fl))


def test_pad_encoded(hand):
    x = encode_grid(*hand)
    p = pad_encoded(x, 5, 6)
    assert p.shape == (15, 5, 6) and p.dtype == np.float32
    np.testing.assert_array_equal(p[:, :3, :4], x)
    pad = np.ones((5, 6), dtype=bool)
    pad[:3, :4] = False
    np.testing.assert_array_equal(p[ch("outside")], pad)
    others = np.delete(p, ch("outside"), axis=0)
    assert not others[:, pad].any()
    np.testing.assert_array_equal(pad_encoded(x, 3, 4), x)
    xb = np.stack([x, x])
    np.testing.assert_array_equal(pad_encoded(xb, 4, 4), np.stack([pad_encoded(x, 4, 4)] * 2))
    with pytest.raises(InvalidBoardError, match="rows must be at least 3; got 2"):
        pad_encoded(x, 2, 6)
    with pytest.raises(InvalidBoardError, match="cols must be at least 4; got 3"):
        pad_encoded(xb, 3, 3)
    with pytest.raises(InvalidBoardError, match="x must have shape"):
        pad_encoded(x[:5], 4, 4)


def test_encode_bad_input(hand):
    grid, total, flags = hand
    with pytest.raises(InvalidBoardError, match=r"got 9 at \(0, 0\)"):
        encode_grid([[9, -1]], 1)
    with pytest.raises(InvalidBoardError, match=r"got -2 at \(0, 1\)"):
        encode_grid([[0, -2]], 1)
    with pytest.raises(InvalidBoardError, match="flags must have the grid's shape"):
        encode_grid(grid, total, flags[:2])
    with pytest.raises(InvalidBoardError, match=r"flag on revealed \(0, 0\)"):
        encode_grid(grid, total, np.ones_like(flags))
    with pytest.raises(InconsistentBoardError,
                       match=r"1 flags exceed the 0 mines on the board \(total_mines=0\)"):
        encode_grid(grid, 0, flags)
    with pytest.raises(InconsistentBoardError, match="do not fit in 6"):
        encode_grid(grid, 8, flags)
    grids = np.stack([grid, grid])
    bad = grids.copy()
    bad[1, 2, 3] = 11
    with pytest.raises(InvalidBoardError, match=r"got 11 at \(2, 3\) of board 1"):
        encode_grids(bad, [3, 3])
    with pytest.raises(InvalidBoardError, match=r"flag on revealed \(0, 0\) of board 0"):
        encode_grids(grids, [3, 3], np.ones(grids.shape, dtype=bool))
    with pytest.raises(InvalidBoardError, match="flags must have the grids' shape"):
        encode_grids(grids, [3, 3], flags)
    with pytest.raises(InvalidBoardError, match=r"total_mines must have shape \(2,\)"):
        encode_grids(grids, [3, 3, 3])
    with pytest.raises(InvalidBoardError, match="total_mines must be at least 0; got -1 for board 1"):
        encode_grids(grids, [3, -1])
    with pytest.raises(InconsistentBoardError, match="board 1: 1 flags exceed"):
        encode_grids(grids, [3, 0], np.stack([flags, flags]))
    with pytest.raises(InvalidBoardError, match="same shape"):
        encode_grids([grid, grid[:2]], [3, 3])


# --------------------------------------------------------------------------- graph
def test_feature_names():
    assert GLOBAL_FEATURES == (
        "mines_left_density", "interior_fraction", "frontier_fraction", "revealed_fraction", "mine_density"
    )
    assert len(CELL_FEATURES) == 5 + len(GLOBAL_FEATURES)
    assert len(CONSTRAINT_FEATURES) == 4 + len(GLOBAL_FEATURES)
    assert CELL_FEATURES[5:] == CONSTRAINT_FEATURES[4:] == GLOBAL_FEATURES


def test_build_graph_by_hand(hand):
    grid, total, flags = hand
    d = build_graph(grid, total, flags)
    assert d["cell"].pos.tolist() == [[0, 3], [1, 2], [1, 3], [2, 0], [2, 2]]
    assert d["constraint"].pos.tolist() == [[0, 1], [0, 2], [1, 0], [1, 1]]
    assert d["cell"].pos.dtype == torch.int64
    assert d[IN].edge_index.tolist() == [[0, 1, 1, 1, 2, 3, 3, 4], [1, 0, 1, 3, 1, 2, 3, 3]]
    assert d[HAS].edge_index.tolist() == [[1, 0, 1, 3, 1, 2, 3, 3], [0, 1, 1, 1, 2, 3, 3, 4]]
    assert d[NEAR].edge_index.tolist() == [[0, 0, 1, 1, 1, 2, 2, 2, 4, 4], [1, 2, 0, 2, 4, 0, 1, 4, 1, 2]]
    for store in (d[IN], d[HAS], d[NEAR]):
        assert store.edge_index.dtype == torch.int64

    # 2 mines left over 6 unknown cells, 1 interior, 5 frontier; 5 of 12 revealed; 3 mines / 12.
    glob = [1 / 3, 1 / 6, 5 / 6, 5 / 12, 1 / 4]
    assert d.globals.dtype == torch.float32 and d.globals.shape == (1, 5)
    np.testing.assert_allclose(d.globals[0].numpy(), glob, rtol=1e-6)
    np.testing.assert_allclose(graph_globals(grid, total, flags), glob, rtol=1e-6)
    assert (d.mines_left.tolist(), d.n_interior.tolist(), d.rows.tolist(), d.cols.tolist()) == (
        [2], [1], [3], [4]
    )
    assert d.mines_left.dtype == torch.int64

    x = d["cell"].x
    assert x.dtype == torch.float32 and x.shape == (5, len(CELL_FEATURES))
    # (1, 2): constraints (0,1) (0,2) (1,1); unknown (0,3) (1,3) (2,2) (2,3); flag (2,1); 8 neighbours.
    # Of those unknown neighbours only (2,3) is interior.
    np.testing.assert_allclose(x[1].numpy(), [3 / 8, 4 / 8, 1 / 8, 1 / 8, 1] + glob, rtol=1e-6)
    # (2, 0): a corner with constraints (1,0) (1,1) and the flag (2,1).
    np.testing.assert_allclose(x[3].numpy(), [2 / 8, 0, 1 / 8, 0, 3 / 8] + glob, rtol=1e-6)
    # (0, 3): constraint (0,2), unknown (1,2) (1,3).
    np.testing.assert_allclose(x[0].numpy(), [1 / 8, 2 / 8, 0, 0, 3 / 8] + glob, rtol=1e-6)

    c = d["constraint"].x
    assert c.dtype == torch.float32 and c.shape == (4, len(CONSTRAINT_FEATURES))
    # The 1 at (0, 2): needs 1 among (0,3) (1,2) (1,3).
    np.testing.assert_allclose(c[1].numpy(), [1 / 8, 3 / 8, 1 / 3, 1 / 8] + glob, rtol=1e-6)
    # The 1 at (1, 1): its flag satisfies it; unknown (1,2) (2,0) (2,2).
    np.testing.assert_allclose(c[3].numpy(), [0, 3 / 8, 0, 1 / 8] + glob, rtol=1e-6)
    # The 0 at (0, 1): one unknown neighbour (1, 2).
    np.testing.assert_allclose(c[0].numpy(), [0, 1 / 8, 0, 0] + glob, rtol=1e-6)


def test_build_graph_without_cell_edges(hand):
    d = build_graph(*hand, cell_edges=False)
    assert NEAR not in d.edge_types
    assert set(d.edge_types) == {IN, HAS}
    full = build_graph(*hand)
    assert torch.equal(d[IN].edge_index, full[IN].edge_index)
    assert torch.equal(d["cell"].x, full["cell"].x)


def test_build_graph_targets(hand):
    grid, total, flags = hand
    probs = mine_probabilities(grid, total, flags)
    layout = np.zeros(grid.shape, dtype=bool)
    layout[[0, 2, 2], [3, 1, 3]] = True
    d = build_graph(grid, total, flags, probabilities=probs, mines=layout)
    # One mine between (0,3) and (1,3), so the interior cell (2,3) holds the other one.
    np.testing.assert_allclose(d["cell"].y_prob.numpy(), [0.5, 0, 0.5, 0, 0])
    assert d["cell"].y_prob.dtype == torch.float32
    assert d.interior_prob.tolist() == [1.0] and d.interior_prob.dtype == torch.float32
    assert d["cell"].y_mine.tolist() == [1, 0, 0, 0, 0] and d["cell"].y_mine.dtype == torch.float32
    assert d.interior_mines.tolist() == [1] and d.interior_mines.dtype == torch.int64
    plain = build_graph(grid, total, flags)
    assert "y_prob" not in plain["cell"] and "interior_prob" not in plain
    with pytest.raises(InvalidBoardError, match="probabilities must have the grid's shape"):
        build_graph(grid, total, flags, probabilities=probs[:2])
    with pytest.raises(InvalidBoardError, match="mines must be a boolean array"):
        build_graph(grid, total, flags, mines=layout * 2)


def assert_empty_stores(d, n_cell, n_con):
    assert d["cell"].x.shape == (n_cell, len(CELL_FEATURES)) and d["cell"].x.dtype == torch.float32
    assert d["cell"].pos.shape == (n_cell, 2) and d["cell"].pos.dtype == torch.int64
    assert d["constraint"].x.shape == (n_con, len(CONSTRAINT_FEATURES))
    assert d["constraint"].pos.shape == (n_con, 2)
    for et in (IN, HAS, NEAR):
        assert d[et].edge_index.shape == (2, 0) and d[et].edge_index.dtype == torch.int64


def test_no_frontier():
    # The numbers touch only flags; the right column is all interior.
    grid, flags = parse_board("2F.\n3F.\n2F.")
    probs = mine_probabilities(grid, 4, flags)
    d = build_graph(grid, 4, flags, probabilities=probs, mines=[[0, 1, 1], [0, 1, 0], [0, 1, 0]])
    assert_empty_stores(d, 0, 0)
    assert d["cell"].y_prob.shape == (0,) and d["cell"].y_mine.shape == (0,)
    np.testing.assert_allclose(d.interior_prob.numpy(), [1 / 3])
    assert d.interior_mines.tolist() == [1] and d.n_interior.tolist() == [3]
    np.testing.assert_allclose(d.globals[0].numpy(), [1 / 3, 1, 0, 1 / 3, 4 / 9], rtol=1e-6)


def test_no_unknown_cells():
    grid, flags = parse_board("2F\n2F")
    d = build_graph(grid, 2, flags, probabilities=mine_probabilities(grid, 2, flags))
    assert_empty_stores(d, 0, 0)
    assert torch.isnan(d.interior_prob).all()
    np.testing.assert_allclose(d.globals[0].numpy(), [0, 0, 0, 0.5, 0.5])
    assert d.mines_left.tolist() == [0] and d.n_interior.tolist() == [0]
    # A fully revealed board too.
    assert_empty_stores(build_graph([[0, 0], [0, 0]], 0), 0, 0)


def test_all_covered():
    grid = np.full((4, 5), -1)
    d = build_graph(grid, 6, probabilities=mine_probabilities(grid, 6))
    assert_empty_stores(d, 0, 0)
    np.testing.assert_allclose(d.interior_prob.numpy(), [0.3])
    np.testing.assert_allclose(d.globals[0].numpy(), [0.3, 1, 0, 0, 0.3], rtol=1e-6)


def test_graph_bad_input(hand):
    grid, total, flags = hand
    with pytest.raises(InvalidBoardError, match=r"got 9 at \(1, 1\)"):
        build_graph([[0, 0], [0, 9]], 0)
    with pytest.raises(InvalidBoardError, match=r"flag on revealed \(0, 0\)"):
        build_graph(grid, total, np.ones_like(flags))
    with pytest.raises(InconsistentBoardError, match="flags exceed"):
        graph_globals(grid, 0, flags)
    with pytest.raises(InvalidBoardError, match="board 1: grid values"):
        build_graphs([grid, [[10]]], [3, 0])
    with pytest.raises(InvalidBoardError, match=r"total_mines must have one entry per board \(2\); got 3"):
        build_graphs([grid, grid], [3, 3, 3])
    with pytest.raises(InvalidBoardError, match="at least one board"):
        build_graphs([], [])


def test_matches_engine_frontier():
    for seed in range(3):
        grid, total, flags, _ = midgame(seed)
        a = ns.analyze(grid, total, flags)
        d = build_graph(grid, total, flags)
        pos = d["cell"].pos.numpy()
        np.testing.assert_array_equal(pos, np.argwhere(a.frontier))
        assert d.n_interior.item() == int(a.unknown.sum() - a.frontier.sum())
        assert d.mines_left.item() == a.mines_left
        np.testing.assert_array_equal(d.globals[0].numpy(), graph_globals(grid, total, flags))
        # Consistent boards: every constraint needs between 0 and all of its unknown neighbours.
        need, free = d["constraint"].x[:, 0], d["constraint"].x[:, 1]
        assert (need >= 0).all() and (need <= free).all() and (free > 0).all()
        n_in = d[IN].edge_index.shape[1]
        assert n_in == int(np.round(d["constraint"].x[:, 1].sum().item() * 8))


def test_batch_of_mixed_boards(hand):
    grid, total, flags = hand
    g1, t1, f1, _ = midgame(0)
    g2, f2 = parse_board("2F.\n3F.\n2F.")
    boards = [(grid, total, flags), (g2, 4, f2), (np.full((4, 5), -1), 6, None), (g1, t1, f1)]
    graphs = [build_graph(g, t, f, probabilities=mine_probabilities(g, t, f)) for g, t, f in boards]
    batch = Batch.from_data_list(graphs)
    n_cells = [d["cell"].num_nodes for d in graphs]
    n_cons = [d["constraint"].num_nodes for d in graphs]
    assert batch["cell"].x.shape == (sum(n_cells), len(CELL_FEATURES))
    assert batch["constraint"].x.shape == (sum(n_cons), len(CONSTRAINT_FEATURES))
    assert batch.globals.shape == (4, len(GLOBAL_FEATURES))
    assert batch.rows.tolist() == [3, 3, 4, 16] and batch.cols.tolist() == [4, 3, 5, 30]
    assert batch["cell"].batch.tolist() == sum(([b] * n for b, n in enumerate(n_cells)), [])
    assert batch.interior_prob.shape == (4,)
    # Edges of the last graph are shifted by the nodes before it.
    last = graphs[-1][IN].edge_index
    shift = torch.tensor([[sum(n_cells[:-1])], [sum(n_cons[:-1])]])
    assert torch.equal(batch[IN].edge_index[:, -last.shape[1] :], last + shift)

    via = build_graphs(
        [b[0] for b in boards], [b[1] for b in boards], [b[2] for b in boards],
        probabilities=[mine_probabilities(*b) for b in boards],
    )
    assert torch.equal(via["cell"].x, batch["cell"].x)
    assert torch.equal(via[NEAR].edge_index, batch[NEAR].edge_index)
    assert torch.equal(via.globals, batch.globals)

    loader = DataLoader(graphs, batch_size=2, shuffle=False)
    parts = list(loader)
    assert len(parts) == 2
    assert parts[0].globals.shape == (2, len(GLOBAL_FEATURES))
    assert parts[1]["cell"].x.shape[0] == n_cells[2] + n_cells[3]
    assert parts[0]["cell"].x.shape[0] == n_cells[0] + n_cells[1]


@pytest.mark.parametrize("cell_edges", [True, False])
def test_vectorised_batch_equals_collated_graphs(hand, cell_edges):
    # Boards of one shape in every state: fresh, mid-game with flags, nearly solved.
    boards = [midgame(s, 9, 9, 10, reveals=r) for s, r in [(0, 0), (1, 3), (2, 12), (3, 40)]]
    boards += [(np.full((9, 9), -1), 10, None, None)]
    grids = np.stack([b[0] for b in boards])
    totals = [b[1] for b in boards]
    flags = np.stack([np.zeros((9, 9), bool) if b[2] is None else b[2] for b in boards])
    want = Batch.from_data_list([build_graph(g, t, f, cell_edges=cell_edges)
                                 for g, t, f in zip(grids, totals, flags, strict=True)])
    got = build_graph_batch(grids, totals, flags, cell_edges=cell_edges)
    for t in ("cell", "constraint"):
        for key in ("x", "pos", "batch", "ptr"):
            assert torch.equal(got[t][key], want[t][key]), (t, key)
    for et in want.edge_types:
        assert torch.equal(got[et].edge_index, want[et].edge_index), et
    assert set(got.edge_types) == set(want.edge_types)
    for key in ("globals", "mines_left", "n_interior", "rows", "cols"):
        assert torch.equal(got[key], want[key]), key

    # Scattered back: as graph_to_grid board by board.
    cell_values = np.arange(got["cell"].num_nodes) / 100.0
    inner = np.linspace(0.1, 0.5, len(boards))
    back = batch_to_grids(got, cell_values, inner, grids, flags)
    ptr = got["cell"].ptr.tolist()
    for b, (g, t, f) in enumerate(zip(grids, totals, flags, strict=True)):
        one = graph_to_grid(build_graph(g, t, f), cell_values[ptr[b] : ptr[b + 1]], inner[b], g, f)
        np.testing.assert_array_equal(back[b], one)
    with pytest.raises(InvalidBoardError, match=r"one interior value per board \(5\); got 4"):
        batch_to_grids(got, cell_values, inner[:4], grids, flags)


def test_vectorised_batch_refuses_bad_boards(hand):
    grid, total, flags = hand
    with pytest.raises(InvalidBoardError, match="same shape"):
        build_graph_batch([grid, np.full((2, 2), -1)], [3, 1])
    with pytest.raises(InconsistentBoardError, match="board 1: "):
        build_graph_batch([grid, grid], [3, 20], [flags, flags])


def test_graph_to_grid_round_trip(hand):
    grid, total, flags = hand
    g2, f2 = parse_board("2F\n2F")
    cases = [(grid, total, flags), midgame(1)[:3], (np.full((3, 3), -1), 2, None), (g2, 2, f2)]
    for g, t, f in cases:
        probs = mine_probabilities(g, t, f)
        d = build_graph(g, t, f, probabilities=probs)
        back = graph_to_grid(d, d["cell"].y_prob, d.interior_prob, g, f)
        assert back.dtype == np.float64 and back.shape == np.shape(g)
        np.testing.assert_allclose(back, probs, atol=1e-6)
    d = build_graph(grid, total, flags)
    out = graph_to_grid(d, np.arange(5), 0.25, grid, flags)
    np.testing.assert_array_equal(out, [[0, 0, 0, 0], [0, 0, 1, 2], [3, 1, 4, 0.25]])
    with pytest.raises(InvalidBoardError, match=r"one value per frontier cell \(5\); got 4"):
        graph_to_grid(d, np.zeros(4), 0.0, grid, flags)
    with pytest.raises(InvalidBoardError, match="3x4 board; got a grid of shape"):
        graph_to_grid(d, np.zeros(5), 0.0, np.full((4, 4), -1))
    with pytest.raises(InvalidBoardError, match="one graph; got a batch of 2"):
        graph_to_grid(Batch.from_data_list([d, d]), np.zeros(10), 0.0, grid, flags)


def _signature(d):
    """Everything about a graph that must not depend on how the board is laid out."""
    deg_in = torch.bincount(d[IN].edge_index[0], minlength=d["cell"].num_nodes)
    deg_has = torch.bincount(d[HAS].edge_index[0], minlength=d["constraint"].num_nodes)
    deg_near = torch.bincount(d[NEAR].edge_index[0], minlength=d["cell"].num_nodes)
    cell = torch.cat([d["cell"].x, deg_in[:, None].float(), deg_near[:, None].float()], dim=1)
    con = torch.cat([d["constraint"].x, deg_has[:, None].float()], dim=1)
    return (
        sorted(map(tuple, cell.tolist())),
        sorted(map(tuple, con.tolist())),
        d[IN].edge_index.shape[1],
        d[NEAR].edge_index.shape[1],
        d.globals.tolist(),
    )


def _edges_by_position(d, to_original):
    """Edge sets as pairs of original board positions."""
    cp = [to_original(*p) for p in d["cell"].pos.tolist()]
    kp = [to_original(*p) for p in d["constraint"].pos.tolist()]
    e_in = {(cp[a], kp[b]) for a, b in d[IN].edge_index.t().tolist()}
    e_near = {(cp[a], cp[b]) for a, b in d[NEAR].edge_index.t().tolist()}
    return e_in, e_near


@pytest.mark.parametrize("seed", [2, 3])
def test_node_order_independence(seed):
    grid, total, flags, _ = midgame(seed, 12, 17, 40, reveals=12)
    rows, cols = grid.shape
    d = build_graph(grid, total, flags)
    assert d["cell"].num_nodes > 10 and d["constraint"].num_nodes > 10
    sig = _signature(d)
    edges = _edges_by_position(d, lambda i, j: (i, j))
    views = [
        (grid.T, flags.T, lambda i, j: (j, i)),
        (grid[::-1], flags[::-1], lambda i, j: (rows - 1 - i, j)),
        (grid[:, ::-1], flags[:, ::-1], lambda i, j: (i, cols - 1 - j)),
        (grid[::-1, ::-1].T, flags[::-1, ::-1].T, lambda i, j: (rows - 1 - j, cols - 1 - i)),
    ]
    for g, f, back in views:
        dv = build_graph(g, total, f)
        assert _signature(dv) == sig
        assert _edges_by_position(dv, back) == edges
