"""A heterogeneous graph network over frontier cells and constraints.

:class:`MineGNN` reads the graphs of :func:`nnsweeper.features.build_graph`: frontier
cells and constraints (revealed numbers) exchange messages round after round, much
as belief propagation passes beliefs between variables and factors, and the
board-wide figures (``data.globals``) are added to every node in every round. It
gives a logit per frontier cell and, from a pooled readout of the whole graph, one
logit shared by all interior cells of the board. :meth:`MineGNN.predict_tensor` runs it
on boards held as tensors on the device, its graphs built there (:func:`graph_batch_tensor`).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import torch
from torch import nn

from nnsweeper import features
from nnsweeper.grid_torch import dilate, neighbour_ids, neighbour_sum

from .base import MineModel, board_batches, tensor_totals
from .config import CONVS, GNNConfig, ModelError

# torch-geometric is imported where a GNN is built or run, not with this module: a config check
# or the CNN does without it (and without the torch._dynamo it imports).
if TYPE_CHECKING:
    from torch_geometric.data import HeteroData

__all__ = ["MineGNN", "GNNConfig", "CONVS", "CELL_IN", "CONSTRAINT_HAS", "CELL_NEAR", "make_conv",
           "graph_batch_tensor"]


# The edge types of the graphs of :func:`nnsweeper.features.build_graph_batch`; public because the
# value network (:mod:`nnsweeper.models.value`) passes messages over the same graphs.
#: Cell to constraint edges.
CELL_IN = ("cell", "in", "constraint")
#: Constraint to cell edges.
CONSTRAINT_HAS = ("constraint", "has", "cell")
#: Cell to neighbouring cell edges.
CELL_NEAR = ("cell", "near", "cell")
_NODES = ("cell", "constraint")


def _edge_key(edge_type: tuple[str, str, str]) -> str:
    """The name torch-geometric's ``HeteroConv`` gives an edge type's layer (its state dict's keys)."""
    return "<" + "___".join(edge_type) + ">"


def scatter_mean(src: torch.Tensor, index: torch.Tensor, dim_size: int) -> torch.Tensor:
    """The mean of the rows of ``src`` by ``index`` (``dim_size`` rows; 0 where none): the operations of
    torch-geometric's ``scatter(..., reduce="mean")`` in the same order, so the same numbers."""
    count = src.new_zeros(dim_size)
    count.scatter_add_(0, index, src.new_ones(src.size(0)))
    count = count.clamp(min=1)
    out = src.new_zeros((dim_size, *src.shape[1:])).scatter_add_(0, index.view(-1, 1).expand_as(src), src)
    return out / count.view(-1, 1).expand_as(out)


class SageLayer(nn.Module):
    """torch-geometric's ``SAGEConv`` as the GNN uses it (mean of the sources' states, plus the target's
    own: ``lin_l(mean) + lin_r(x_target)``) in plain torch.

    The same parameters under the same names, and the same operations: with a sparse CSR
    adjacency (rows: the targets) one ``torch.sparse.mm(adj, x, "mean")`` (on a GPU, which has
    no such reduction, the sum over the degree), with an edge index a gather and
    :func:`scatter_mean`, as torch-geometric computes them; so a model plays
    without importing torch-geometric (and the ``torch._dynamo`` it imports: seconds a process).
    """

    def __init__(self, hidden: int):
        super().__init__()
        self.lin_l = nn.Linear(hidden, hidden)
        self.lin_r = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x, edge_index: torch.Tensor) -> torch.Tensor:
        x_src, x_dst = x if isinstance(x, tuple) else (x, x)
        if edge_index.layout == torch.sparse_csr and not edge_index.is_cuda:
            mean = torch.sparse.mm(edge_index, x_src, "mean")
        elif edge_index.layout == torch.sparse_csr:  # no reductions on the GPU: a sum over the degree
            ptr = edge_index.crow_indices()
            mean = torch.sparse.mm(edge_index, x_src) / (ptr[1:] - ptr[:-1]).view(-1, 1).clamp_(min=1)
        else:
            mean = scatter_mean(x_src.index_select(0, edge_index[0]), edge_index[1], x_dst.shape[0])
        return self.lin_l(mean) + self.lin_r(x_dst)


class HeteroSage(nn.Module):
    """torch-geometric's ``HeteroConv`` of :class:`SageLayer` layers with ``aggr="sum"``, in plain torch:
    per edge type its layer, the messages that end in one node type summed (stacked, then summed,
    in the order of ``edge_types``), under the same state dict keys."""

    def __init__(self, edge_types, hidden: int):
        super().__init__()
        self.edge_types = tuple(edge_types)
        self.convs = nn.ModuleDict({_edge_key(et): SageLayer(hidden) for et in self.edge_types})

    def forward(self, h: dict, edges: dict) -> dict:
        out: dict[str, list] = {}
        for et in self.edge_types:
            if et not in edges:
                continue
            src, _, dst = et
            x = h[src] if src == dst else (h[src], h[dst])
            out.setdefault(dst, []).append(self.convs[_edge_key(et)](x, edges[et]))
        return {t: xs[0] if len(xs) == 1 else torch.stack(xs, dim=0).sum(dim=0) for t, xs in out.items()}


def make_conv(kind: str, hidden: int) -> nn.Module:
    """The message-passing layer that ``kind`` (one of :data:`CONVS`) names, ``hidden`` wide on both sides."""
    from torch_geometric.nn import GATv2Conv, GraphConv, SAGEConv, TransformerConv

    dims = (hidden, hidden)
    if kind == "sage":
        return SAGEConv(dims, hidden)
    if kind == "graph":
        return GraphConv(dims, hidden)
    if kind == "transformer":
        # Heads of hidden // heads each, concatenated; root_weight keeps the target's own state.
        heads = 4 if hidden % 4 == 0 else 1
        return TransformerConv(dims, hidden // heads, heads=heads)
    # Bipartite edge types have no self loops to add; a node's own state is kept by the residual.
    return GATv2Conv(dims, hidden, add_self_loops=False)


def _mlp(n_in: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, 1))


class MineGNN(MineModel):
    """Message passing between frontier cells and constraints, plus an interior readout.

    Parameters
    ----------
    config : dict or GNNConfig, optional
        The keys of :class:`GNNConfig` (``hidden``, ``layers``, ``conv``,
        ``cell_edges``, ``global_pool``, ``shared``); missing keys take its defaults.

    Notes
    -----
    A round computes, for each node type, the sum over the edge types that end in
    it of the layer's messages ``m``, adds ``g = Linear(context)`` of the node's
    graph, where the context is the globals (and, with ``global_pool``, the graph's
    mean cell and constraint states before the round), and updates
    ``h <- LayerNorm(h + relu(m + g))``. The readout per graph is the
    mean of its cell states, the mean of its constraint states (zeros when it has
    none) and its globals, through a two-layer MLP. Nothing depends on the order of
    the nodes or edges.
    """

    arch: ClassVar[str] = "gnn"
    Config: ClassVar[type[GNNConfig]] = GNNConfig
    inputs: ClassVar[str] = "graph"
    # A batch without interior cells leaves the interior readout (and what only feeds it)
    # without a gradient.
    find_unused_parameters: ClassVar[bool] = True

    def __init__(self, config: dict | GNNConfig | None = None):
        super().__init__(config)
        c = self.settings
        h, n_glob = c.hidden, len(features.GLOBAL_FEATURES)
        self.edge_types = (CELL_IN, CONSTRAINT_HAS, CELL_NEAR) if c.cell_edges else (CELL_IN, CONSTRAINT_HAS)
        self.encode = nn.ModuleDict(
            {
                "cell": nn.Linear(len(features.CELL_FEATURES), h),
                "constraint": nn.Linear(len(features.CONSTRAINT_FEATURES), h),
            }
        )
        n_sets = min(c.layers, 1) if c.shared else c.layers
        if c.conv == "sage":  # plain torch, the same parameters and numbers (see SageLayer)
            self.convs = nn.ModuleList(HeteroSage(self.edge_types, h) for _ in range(n_sets))
        else:
            from torch_geometric.nn import HeteroConv

            self.convs = nn.ModuleList(
                HeteroConv({et: make_conv(c.conv, h) for et in self.edge_types}, aggr="sum")
                for _ in range(n_sets)
            )
        n_context = n_glob + (2 * h if c.global_pool else 0)
        self.inject = nn.ModuleList(
            nn.ModuleDict({t: nn.Linear(n_context, h) for t in _NODES}) for _ in range(n_sets)
        )
        self.norms = nn.ModuleList(
            nn.ModuleDict({t: nn.LayerNorm(h) for t in _NODES}) for _ in range(n_sets)
        )
        self.act = nn.ReLU()
        self.cell_head = _mlp(h, h)
        self.interior_head = _mlp(2 * h + n_glob, h)

    # ----------------------------------------------------------------- forward
    def _check_graph(self, data) -> None:
        from torch_geometric.data import HeteroData

        if not isinstance(data, HeteroData):
            raise ModelError(f"a GNN input must be a HeteroData graph or batch; got {type(data).__name__}")
        for t, names in (("cell", features.CELL_FEATURES), ("constraint", features.CONSTRAINT_FEATURES)):
            if t not in data.node_types or "x" not in data[t]:
                raise ModelError(f"a GNN input needs {t!r} nodes with features 'x' (from build_graph)")
            x = data[t].x
            if x.dim() != 2 or x.shape[1] != len(names):
                raise ModelError(
                    f"data[{t!r}].x must have shape (nodes, {len(names)}); got {tuple(x.shape)}"
                )
        for et in self.edge_types:
            if et not in data.edge_types:
                hint = " (build the graphs with cell_edges=True)" if et == CELL_NEAR else ""
                raise ModelError(f"this model passes messages along {et} edges, which the graph lacks{hint}")
        if "globals" not in data:
            raise ModelError("a GNN input needs graph-level 'globals' (from build_graph)")

    @staticmethod
    def _batch_vector(data, t: str, dev: torch.device) -> torch.Tensor:
        store = data[t]
        if "batch" in store:
            return store.batch.to(dev)
        return torch.zeros(store.num_nodes, dtype=torch.int64, device=dev)

    def forward(self, data) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits of a graph or a batch of graphs.

        Parameters
        ----------
        data : HeteroData or Batch
            From :func:`nnsweeper.features.build_graph` (or a batch of them).

        Returns
        -------
        cell_logits : Tensor, shape (cell nodes,)
            One logit per frontier cell, in node order.
        interior_logits : Tensor, shape (graphs,)
            One logit per graph for its interior cells (computed for every graph,
            meaningful where it has interior cells).
        """
        self._check_graph(data)
        dev = self.device
        return self._logits({t: data[t].x.to(dev, torch.float32) for t in _NODES},
                            {t: self._batch_vector(data, t, dev) for t in _NODES},
                            {et: data[et].edge_index.to(dev) for et in self.edge_types},
                            data.globals.to(dev, torch.float32))

    def _logits(self, x: dict, batch: dict, edges: dict, glob: torch.Tensor):
        """:meth:`forward` on the graph's tensors: node features and graph ids per node type,
        adjacencies per edge type (edge indices or transposed CSR matrices), globals."""
        glob = glob.reshape(-1, len(features.GLOBAL_FEATURES))
        n_graphs = glob.shape[0]
        h = {t: self.encode[t](x[t]) for t in _NODES}

        def pool():
            return [scatter_mean(h[t], batch[t], n_graphs) for t in _NODES]

        for r in range(self.settings.layers):
            k = 0 if self.settings.shared else r
            conv, inject, norms = self.convs[k], self.inject[k], self.norms[k]
            context = torch.cat([glob, *pool()], dim=1) if self.settings.global_pool else glob
            msg = conv(h, edges)
            h = {
                t: norms[t](h[t] + self.act(msg.get(t, 0.0) + inject[t](context)[batch[t]]))
                for t in _NODES
            }
        pooled = pool()
        interior = self.interior_head(torch.cat([*pooled, glob], dim=1)).squeeze(1)
        return self.cell_head(h["cell"]).squeeze(1), interior

    def _plain(self) -> bool:
        """Whether every layer is plain torch (:class:`HeteroSage`): then it predicts from the graph's
        tensors (:meth:`_parts_logits`), without torch-geometric."""
        return all(isinstance(conv, HeteroSage) for conv in self.convs)

    def _parts_logits(self, nodes: dict, edges: dict, extra: dict):
        """:meth:`forward` on a batch's tensors in plain dicts (as ``features.build_graph_batch_parts``
        and :func:`_graph_parts` give them), the same numbers."""
        dev = self.device
        return self._logits({t: nodes[t]["x"].to(dev, torch.float32) for t in _NODES},
                            {t: nodes[t]["batch"].to(dev) for t in _NODES},
                            {et: edges[et].to(dev) for et in self.edge_types},
                            extra["globals"].to(dev, torch.float32))

    # ----------------------------------------------------------------- training interface
    def outputs(self, batch, *, symmetric: bool = False) -> dict[str, torch.Tensor]:
        """One row per frontier cell and one per graph with interior cells.

        ``symmetric`` changes nothing: a symmetry of the board only renumbers the
        graph's nodes (its features are counts), and the model does not depend on
        the order of the nodes.

        Rows are grouped by graph in batch order: a graph's frontier cells (node
        order), then its interior row, if it has interior cells. An interior row has
        ``"prob"`` = ``interior_prob`` (the mean P(mine) over the interior cells),
        ``"mine"`` = ``interior_mines / n_interior`` and ``"weight"`` = ``n_interior``;
        see :meth:`MineModel.outputs` for the keys.

        Raises
        ------
        ModelError
            A batch without the targets of :class:`~nnsweeper.datasets.GraphDataset`.
        """
        self._check_graph(batch)
        needed = [("cell", "y_prob"), ("cell", "y_mine")]
        missing = [f"data[{t!r}].{k}" for t, k in needed if k not in batch[t]]
        missing += [f"data.{k}" for k in ("interior_prob", "interior_mines", "n_interior") if k not in batch]
        if missing:
            raise ModelError(
                f"outputs() needs graphs with targets (build_graph with probabilities and mines); "
                f"missing {', '.join(missing)}"
            )
        dev = self.device
        cell_logits, interior_logits = self(batch)
        cell_graph = self._batch_vector(batch, "cell", dev)
        n_int = batch.n_interior.to(dev).reshape(-1)
        has = torch.nonzero(n_int > 0).reshape(-1)
        n_cell = cell_logits.shape[0]
        w_int = n_int[has].to(torch.float32)

        graph = torch.cat([cell_graph, has])
        # Stable sort by graph, a graph's cells before its interior row.
        order = torch.argsort(graph * 2 + (torch.arange(graph.shape[0], device=dev) >= n_cell), stable=True)
        rows = {
            "logit": torch.cat([cell_logits, interior_logits[has]]),
            "prob": torch.cat(
                [batch["cell"].y_prob.to(dev, torch.float32), batch.interior_prob.to(dev, torch.float32)[has]]
            ),
            "mine": torch.cat(
                [
                    batch["cell"].y_mine.to(dev, torch.float32),
                    batch.interior_mines.to(dev).reshape(-1)[has].to(torch.float32) / w_int,
                ]
            ),
            "weight": torch.cat([torch.ones(n_cell, dtype=torch.float32, device=dev), w_int]),
            "frontier": torch.cat(
                [torch.ones(n_cell, dtype=torch.bool, device=dev), torch.zeros_like(has, dtype=torch.bool)]
            ),
            "graph": graph.to(torch.int64),
        }
        return {k: v[order] for k, v in rows.items()}

    def input_options(self) -> dict:
        """Its graphs have the ``("cell", "near", "cell")`` edges when its config passes messages
        along them: ``{"cell_edges": ...}`` for the graph loader."""
        return {"cell_edges": self.settings.cell_edges}

    # ----------------------------------------------------------------- prediction
    def predict_observations(self, observations: list, batch_size: int) -> list[np.ndarray]:
        edges = {"cell_edges": self.settings.cell_edges}
        out: list[np.ndarray] = [np.empty(0)] * len(observations)
        plain = self._plain()
        build = features.build_graph_batch_parts if plain else features.build_graph_batch
        for chunk, g, f, batch in board_batches(observations, batch_size,
                                                lambda boards: build(boards, **edges)):
            if plain:
                cell_logits, interior_logits = self._parts_logits(*batch)
                batch = batch[0]  # the node stores (batch_to_grids reads the cells')
            else:
                cell_logits, interior_logits = self(batch)
            cell_p = torch.sigmoid(cell_logits.double()).cpu().numpy()
            int_p = torch.sigmoid(interior_logits.double()).cpu().numpy()
            for b, p in zip(chunk, features.batch_to_grids(batch, cell_p, int_p, g, f), strict=True):
                out[b] = p
        return out

    def predict_tensor(self, grids: torch.Tensor, total_mines, flags: torch.Tensor, *,
                       sparse: bool | None = None) -> torch.Tensor:
        """P(mine) maps of boards held as tensors, as :meth:`predict_proba` gives them.

        The graphs are built on the grids' device (:func:`graph_batch_tensor`), the
        frontier cells get their own values and every other covered unflagged cell the
        board's interior value. The caller sets eval mode and ``torch.inference_mode()``,
        and the boards are not checked.

        Parameters
        ----------
        grids : Tensor of int, (B, rows, cols)
            -1 covered, 0..8 revealed, on the model's device.
        total_mines : int or Tensor of int, (B,)
        flags : Tensor of bool, (B, rows, cols)
        sparse : bool, optional
            Pass the adjacencies as sparse matrices (:func:`graph_batch_tensor`); by
            default on the CPU only.

        Returns
        -------
        Tensor of float64, (B, rows, cols)
            Exactly 0 at revealed cells and 1 at flags.
        """
        if sparse is None:
            sparse = grids.device.type == "cpu"
        unknown = (grids == -1) & ~flags
        nodes, edges, extra = _graph_parts(grids, total_mines, flags, cell_edges=self.settings.cell_edges,
                                           sparse=sparse)
        if self._plain():
            cell_logits, interior_logits = self._parts_logits(nodes, edges, extra)
        else:
            cell_logits, interior_logits = self(features.hetero_data(nodes, edges, extra))
        p = torch.where(unknown, torch.sigmoid(interior_logits.double())[:, None, None], 0.0)
        pos = nodes["cell"]["pos"]
        p[nodes["cell"]["batch"], pos[:, 0], pos[:, 1]] = torch.sigmoid(cell_logits.double())
        return torch.where(flags, 1.0, p)


# --------------------------------------------------------------------------- graphs on the device
def _pairs(nb: torch.Tensor) -> torch.Tensor:
    """Edge index (2, E) from neighbour ids (n, 8), sorted by source then target."""
    src, k = torch.nonzero(nb >= 0, as_tuple=True)
    return torch.stack([src, nb[src, k]])


def _csr(nb: torch.Tensor, n_src: int) -> torch.Tensor:
    """The sparse CSR matrix (n rows, n_src columns, ones) whose row ``a`` holds the ids ``nb[a]``."""
    row, k = torch.nonzero(nb >= 0, as_tuple=True)
    col = nb[row, k]
    crow = torch.zeros(nb.shape[0] + 1, dtype=torch.int64, device=nb.device)
    crow[1:] = torch.cumsum(torch.bincount(row, minlength=nb.shape[0]), 0)
    values = torch.ones(col.shape[0], dtype=torch.float32, device=nb.device)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta", UserWarning)
        return torch.sparse_csr_tensor(crow, col, values, size=(nb.shape[0], n_src), check_invariants=False)


def graph_batch_tensor(grids: torch.Tensor, total_mines, flags: torch.Tensor, *, cell_edges: bool = True,
                       sparse: bool = False) -> HeteroData:
    """:func:`nnsweeper.features.build_graph_batch` computed with torch on the grids' device.

    Parameters
    ----------
    grids : Tensor of int, (B, rows, cols)
        -1 covered, 0..8 revealed (not checked).
    total_mines : int or Tensor of int, (B,)
    flags : Tensor of bool, (B, rows, cols)
    cell_edges : bool, default True
        Add the ``("cell", "near", "cell")`` edges.
    sparse : bool, default False
        Give each edge type as its transposed adjacency (a sparse CSR matrix of
        (target, source) nodes) instead of an edge index: the same messages for the
        model's mean aggregation, computed by one sparse product instead of a gather
        and a scatter (faster on the CPU).

    Returns
    -------
    HeteroData
        With ``sparse=False``, the same tensors as ``build_graph_batch`` (node
        features, positions, ``batch`` and ``ptr``, edge indices, globals,
        ``mines_left``, ``n_interior``, ``rows``, ``cols``), on the grids' device.
    """
    return features.hetero_data(*_graph_parts(grids, total_mines, flags, cell_edges=cell_edges,
                                              sparse=sparse))


def _graph_parts(grids: torch.Tensor, total_mines, flags: torch.Tensor, *, cell_edges: bool,
                 sparse: bool) -> tuple[dict, dict, dict]:
    """What :func:`graph_batch_tensor` puts in its graph, in plain dicts: per node type its ``x``,
    ``pos``, ``batch`` and ``ptr``; per edge type its adjacency; the graph-level tensors."""
    dev = grids.device
    n, r, c = grids.shape
    total = tensor_totals(total_mines, n, dev)
    revealed = grids >= 0
    unknown = (grids == -1) & ~flags
    frontier = unknown & dilate(revealed)
    interior = unknown & ~frontier
    n_unknown = unknown.sum((1, 2))
    n_frontier = frontier.sum((1, 2))
    mines_left = total - flags.sum((1, 2))
    per_unknown = torch.where(n_unknown > 0, 1.0 / n_unknown.clamp(min=1).double(), 0.0)
    glob = torch.stack([
        mines_left * per_unknown,
        (n_unknown - n_frontier) * per_unknown,
        n_frontier * per_unknown,
        revealed.sum((1, 2)).double() / (r * c),
        total.double() / (r * c),
    ], dim=1).float()

    unk_nb = neighbour_sum(unknown)
    flag_nb = neighbour_sum(flags)
    constraint = revealed & (unk_nb > 0)
    fb, fi, fj = torch.nonzero(frontier, as_tuple=True)
    cb, ci, cj = torch.nonzero(constraint, as_tuple=True)
    n_cell, n_con = fi.shape[0], ci.shape[0]

    board_nb = neighbour_sum(torch.ones((1, r, c), dtype=torch.bool, device=dev))[0]
    cell_counts = torch.stack([
        neighbour_sum(constraint)[fb, fi, fj],
        unk_nb[fb, fi, fj],
        flag_nb[fb, fi, fj],
        neighbour_sum(interior)[fb, fi, fj],
        board_nb[fi, fj],
    ], dim=1).to(torch.float32) / 8
    cell_x = torch.cat([cell_counts, glob[fb]], dim=1)

    number = grids[cb, ci, cj].double()
    need = number - flag_nb[cb, ci, cj].double()
    free = unk_nb[cb, ci, cj].double()
    con_x = torch.cat([
        torch.stack([need / 8, free / 8, need / free.clamp(min=1), number / 8], dim=1),
        glob[cb].double(),
    ], dim=1).float()

    cell_id = torch.full((n, r + 2, c + 2), -1, dtype=torch.int64, device=dev)
    cell_id[fb, fi + 1, fj + 1] = torch.arange(n_cell, device=dev)
    con_id = torch.full((n, r + 2, c + 2), -1, dtype=torch.int64, device=dev)
    con_id[cb, ci + 1, cj + 1] = torch.arange(n_con, device=dev)
    cell_to_con = neighbour_ids(con_id, fb, fi, fj)
    cell_to_cell = neighbour_ids(cell_id, fb, fi, fj) if cell_edges else None

    nodes = {t: {"x": x, "pos": torch.stack([i, j], dim=1), "batch": b,
                 "ptr": torch.searchsorted(b, torch.arange(n + 1, device=dev))}
             for t, x, b, i, j in (("cell", cell_x, fb, fi, fj), ("constraint", con_x, cb, ci, cj))}
    if sparse:
        # Transposed adjacencies: rows are the targets of the messages.
        edges = {CELL_IN: _csr(neighbour_ids(cell_id, cb, ci, cj), n_cell),
                 CONSTRAINT_HAS: _csr(cell_to_con, n_con)}
        if cell_edges:
            edges[CELL_NEAR] = _csr(cell_to_cell, n_cell)
    else:
        e_in = _pairs(cell_to_con)
        edges = {CELL_IN: e_in, CONSTRAINT_HAS: e_in.flip(0)}
        if cell_edges:
            edges[CELL_NEAR] = _pairs(cell_to_cell)
    extra = {"globals": glob, "mines_left": mines_left, "n_interior": interior.sum((1, 2)),
             "rows": torch.full((n,), r, dtype=torch.int64, device=dev),
             "cols": torch.full((n,), c, dtype=torch.int64, device=dev)}
    return nodes, edges, extra
