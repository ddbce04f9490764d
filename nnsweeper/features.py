"""Model inputs built from a visible board: a CNN grid encoding and a frontier graph.

Two views of the same board, both computed with whole-board numpy operations:

* :func:`encode_grid` / :func:`encode_grids` give a ``float32`` stack of per-cell
  channels (:data:`GRID_CHANNELS`) for convolutional models; :func:`pad_encoded`
  brings boards of different sizes to a common shape.
* :func:`build_graph` / :func:`build_graphs` give a torch-geometric ``HeteroData``
  with the frontier cells and the constraints (revealed numbers) as two node types,
  and :func:`graph_to_grid` scatters per-node predictions back onto the board.

Conventions
-----------
A board is an :class:`~nnsweeper.observation.Observation` (used as it is: it was
checked when it was made) or ``grid, total_mines, flags``, checked into one: ``grid``
is an int array (rows, cols) with -1 covered and 0..8 revealed; ``flags`` marks
covered cells known to be mines; ``total_mines`` counts every mine, flagged ones
included. A batch of boards of one shape is likewise an
:class:`~nnsweeper.observation.Observations` or ``grids, total_mines, flags``.
*Unknown* cells are covered and unflagged; the *frontier* is the unknown cells next
to a revealed cell (the definition used by :func:`nnsweeper.engine.analyze`);
*interior* cells are the other unknown cells; a *constraint* is a revealed cell with
at least one unknown neighbour.

The module is a little over 600 lines: the grid encoding and the graph share its
masks and conventions, and the models read both.

Every feature is scale-free (counts over 8, fractions of the board), so one model
can read boards of any size and mine density.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    from torch_geometric.data import Batch, HeteroData

from nnsweeper.errors import InconsistentBoardError, InvalidBoardError, check_int
from nnsweeper.grid import OFFSETS, dilate, neighbour_sum
from nnsweeper.observation import (
    Observation,
    Observations,
    as_observation,
    as_observations,
    check_alone,
    validate_board,
)

__all__ = [
    "GRID_CHANNELS",
    "CELL_FEATURES",
    "CONSTRAINT_FEATURES",
    "GLOBAL_FEATURES",
    "encode_grid",
    "encode_grids",
    "pad_encoded",
    "graph_globals",
    "batch_globals",
    "build_graph",
    "build_graphs",
    "build_graph_batch",
    "graph_to_grid",
    "batch_to_grids",
]

#: Channels of :func:`encode_grid`, in order.
GRID_CHANNELS: tuple[str, ...] = (
    "covered",
    "flagged",
    *(f"revealed_{k}" for k in range(9)),
    "outside",
    "mines_left_density",
    "revealed_fraction",
    "mine_density",
)

#: Graph-level features of :func:`graph_globals`, in order.
GLOBAL_FEATURES: tuple[str, ...] = (
    "mines_left_density",
    "interior_fraction",
    "frontier_fraction",
    "revealed_fraction",
    "mine_density",
)

#: Columns of ``data["cell"].x``: neighbour counts over 8, then the global features.
CELL_FEATURES: tuple[str, ...] = (
    "constraint_neighbours",
    "unknown_neighbours",
    "flagged_neighbours",
    "interior_neighbours",
    "board_neighbours",
    *GLOBAL_FEATURES,
)

#: Columns of ``data["constraint"].x``: the number's local figures, then the global features.
CONSTRAINT_FEATURES: tuple[str, ...] = (
    "mines_needed",
    "unknown_neighbours",
    "needed_density",
    "number",
    *GLOBAL_FEATURES,
)

_CH = {name: k for k, name in enumerate(GRID_CHANNELS)}
_DI = np.array([di for di, _ in OFFSETS], dtype=np.int64)
_DJ = np.array([dj for _, dj in OFFSETS], dtype=np.int64)
_EDGE_IN = ("cell", "in", "constraint")
_EDGE_HAS = ("constraint", "has", "cell")
_EDGE_NEAR = ("cell", "near", "cell")


# --------------------------------------------------------------------------- grid encoding
def _encode(g: np.ndarray, total: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Encode validated boards ``(B, r, c)`` as ``(B, C, r, c)`` float32."""
    n, r, c = g.shape
    out = np.zeros((n, len(GRID_CHANNELS), r, c), dtype=np.float32)
    unknown = (g == -1) & ~f
    out[:, _CH["covered"]] = unknown
    out[:, _CH["flagged"]] = f
    shown = np.arange(9, dtype=np.int8)[None, :, None, None]
    out[:, _CH["revealed_0"] : _CH["revealed_8"] + 1] = g[:, None] == shown
    cells = r * c
    mines_left = total - f.sum(axis=(1, 2))
    n_unknown = unknown.sum(axis=(1, 2))
    n_revealed = (g >= 0).sum(axis=(1, 2))
    out[:, _CH["mines_left_density"]] = (mines_left / np.maximum(n_unknown, 1))[:, None, None]
    out[:, _CH["revealed_fraction"]] = (n_revealed / cells)[:, None, None]
    out[:, _CH["mine_density"]] = (total / cells)[:, None, None]
    return out


def encode_grid(grid, total_mines=None, flags=None) -> np.ndarray:
    """Per-cell channels of one board for a convolutional model.

    Parameters
    ----------
    grid : Observation or array_like of int, shape (rows, cols)
        The board (then give neither ``total_mines`` nor ``flags``), or its grid:
        -1 covered, 0..8 revealed.
    total_mines : int
        With a grid: mines on the whole board, flagged ones included.
    flags : array_like of bool, shape (rows, cols), optional
        With a grid: covered cells known to be mines.

    Returns
    -------
    ndarray of float32, shape (len(GRID_CHANNELS), rows, cols)
        The channels of :data:`GRID_CHANNELS`: ``covered`` (covered and unflagged),
        ``flagged``, ``revealed_0`` .. ``revealed_8`` (one-hot of the number), so that
        every cell has exactly one of these set; ``outside`` (0 on the board, 1 only
        on padding added by :func:`pad_encoded`); and three board-wide values
        broadcast to every cell: ``mines_left_density`` = (total_mines - flags) /
        max(unknown cells, 1), ``revealed_fraction`` = revealed cells / cells and
        ``mine_density`` = total_mines / cells.

    Raises
    ------
    InvalidBoardError
        A malformed board (see :class:`~nnsweeper.observation.Observation`).
    InconsistentBoardError
        More flags than mines, or more mines left than covered unflagged cells.
    """
    obs = as_observation(grid, total_mines, flags)
    return _encode(obs.grid[None], np.array([obs.total_mines], dtype=np.int64), obs.flags[None])[0]


def encode_grids(grids, total_mines=None, flags=None) -> np.ndarray:
    """:func:`encode_grid` for a batch of boards of one size, vectorised over the batch.

    Parameters
    ----------
    grids : Observations, sequence of Observation, or array_like of int, shape (boards, rows, cols)
        The boards (then give neither ``total_mines`` nor ``flags``), or their grids:
        -1 covered, 0..8 revealed.
    total_mines : array_like of int, shape (boards,), or int
        With grids: mines on each board (an int applies to every board).
    flags : array_like of bool, shape (boards, rows, cols), optional
        With grids: their flags.

    Returns
    -------
    ndarray of float32, shape (boards, len(GRID_CHANNELS), rows, cols)
        The same as stacking :func:`encode_grid` of each board.

    Raises
    ------
    InvalidBoardError, InconsistentBoardError
        As :func:`encode_grid`; the message names the board.
    """
    batch = as_observations(grids, total_mines, flags)
    return _encode(batch.grids, batch.total_mines, batch.flags)


def pad_encoded(x, rows, cols) -> np.ndarray:
    """Pad encoded boards at the bottom and right to ``(rows, cols)``.

    Parameters
    ----------
    x : array_like, shape (C, r, c) or (B, C, r, c)
        Output of :func:`encode_grid` or :func:`encode_grids` (``C`` = len(GRID_CHANNELS)).
    rows, cols : int
        The padded size, at least ``r`` and ``c``.

    Returns
    -------
    ndarray of x's dtype, shape (C, rows, cols) or (B, C, rows, cols)
        ``x`` in the top-left corner; padding cells have ``outside`` = 1 and every
        other channel 0.

    Raises
    ------
    InvalidBoardError
        ``x`` of the wrong shape, or ``rows``/``cols`` smaller than ``x``'s.
    """
    x = np.asarray(x)
    n_ch = len(GRID_CHANNELS)
    if x.ndim not in (3, 4) or x.shape[-3] != n_ch:
        raise InvalidBoardError(
            f"x must have shape ({n_ch}, rows, cols) or (boards, {n_ch}, rows, cols); got {x.shape}"
        )
    r, c = x.shape[-2:]
    rows = check_int("rows", rows, r, InvalidBoardError)
    cols = check_int("cols", cols, c, InvalidBoardError)
    out = np.zeros((*x.shape[:-2], rows, cols), dtype=x.dtype)
    out[..., _CH["outside"], :, :] = 1
    out[..., :r, :c] = x
    return out


# --------------------------------------------------------------------------- graph
def _masks(g: np.ndarray, f: np.ndarray):
    """``(revealed, unknown, frontier)`` of a validated board or stack of boards."""
    revealed = g >= 0
    unknown = (g == -1) & ~f
    frontier = unknown & dilate(revealed)
    return revealed, unknown, frontier


def _globals(total, f, revealed, unknown, frontier) -> np.ndarray:
    """:data:`GLOBAL_FEATURES` of validated boards ``(B, r, c)`` (``total`` of shape (B,)): (B, G) float32."""
    cells = revealed.shape[-2] * revealed.shape[-1]
    n_unknown = unknown.sum(axis=(-2, -1))
    n_frontier = frontier.sum(axis=(-2, -1))
    mines_left = total - f.sum(axis=(-2, -1))
    per_unknown = np.where(n_unknown > 0, 1.0 / np.maximum(n_unknown, 1), 0.0)
    return np.stack(
        [
            mines_left * per_unknown,
            (n_unknown - n_frontier) * per_unknown,
            n_frontier * per_unknown,
            revealed.sum(axis=(-2, -1)) / cells,
            total / cells,
        ],
        axis=-1,
    ).astype(np.float32)


def graph_globals(grid, total_mines=None, flags=None) -> np.ndarray:
    """The board-wide features of :data:`GLOBAL_FEATURES`.

    Parameters
    ----------
    grid, total_mines, flags
        A visible board (an Observation, or a grid with its mines and flags), as for
        :func:`encode_grid`.

    Returns
    -------
    ndarray of float32, shape (len(GLOBAL_FEATURES),)
        Mines left / unknown cells, interior / unknown, frontier / unknown (each 0
        when no cell is unknown), revealed cells / cells, total_mines / cells.
    """
    obs = as_observation(grid, total_mines, flags)
    g, f = obs.grid, obs.flags
    return _globals(np.array([obs.total_mines]), f[None], *_masks(g[None], f[None]))[0]


def batch_globals(grids, total_mines=None, flags=None) -> np.ndarray:
    """:func:`graph_globals` of a stack of boards of one shape (an :class:`~nnsweeper.Observations`,
    or grids with their mines and flags): float32, shape (B, len(GLOBAL_FEATURES))."""
    obs = as_observations(grids, total_mines, flags)
    return _globals(obs.total_mines, obs.flags, *_masks(obs.grids, obs.flags))


def _neighbour_ids(ids: np.ndarray, pb: np.ndarray, pi: np.ndarray, pj: np.ndarray) -> np.ndarray:
    """Ids (from a (B, r+2, c+2) array padded with -1) of the 8 neighbours of each cell: (n, 8)."""
    return ids[pb[:, None], pi[:, None] + 1 + _DI[None, :], pj[:, None] + 1 + _DJ[None, :]]


def _pairs(nb: np.ndarray) -> np.ndarray:
    """Edge index (2, E) from neighbour ids (n, 8), sorted by source then target."""
    src, k = np.nonzero(nb >= 0)
    return np.stack([src, nb[src, k]]).astype(np.int64)


def _grid_target(name: str, value, shape: tuple[int, int], kind: str) -> np.ndarray:
    a = np.asarray(value)
    if a.shape != shape:
        raise InvalidBoardError(f"{name} must have the grid's shape {shape}; got {a.shape}")
    if kind == "prob":
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)) or a.dtype == bool:
            raise InvalidBoardError(f"{name} must be a float array of P(mine); got dtype {a.dtype}")
        return a.astype(np.float64)
    if a.dtype != bool:
        if not np.issubdtype(a.dtype, np.integer) or not np.isin(a, (0, 1)).all():
            raise InvalidBoardError(f"{name} must be a boolean array (or 0/1); got dtype {a.dtype}")
        a = a.astype(bool)
    return a


def build_graph(
    grid, total_mines=None, flags=None, *, cell_edges: bool = True, probabilities=None, mines=None
) -> HeteroData:
    """The frontier/constraint graph of one board.

    Parameters
    ----------
    grid, total_mines, flags
        A visible board (an Observation, or a grid with its mines and flags), as for
        :func:`encode_grid`.
    cell_edges : bool, default True
        Add ``("cell", "near", "cell")`` edges between 8-adjacent frontier cells.
    probabilities : array_like of float, shape (rows, cols), optional
        P(mine) per cell (e.g. :func:`nnsweeper.mine_probabilities`), attached as targets.
    mines : array_like of bool, shape (rows, cols), optional
        The true mine layout, attached as targets.

    Returns
    -------
    HeteroData
        Node types (row-major order within each):

        * ``"cell"``: the frontier cells. ``x`` float32 (n_cell, len(CELL_FEATURES)),
          ``pos`` int64 (n_cell, 2) = (row, col).
        * ``"constraint"``: revealed cells with an unknown neighbour. ``x`` float32
          (n_con, len(CONSTRAINT_FEATURES)), ``pos`` int64 (n_con, 2).

        Edge types (``edge_index`` int64 (2, E), sorted by source then target):
        ``("cell", "in", "constraint")`` for every 8-adjacent (frontier cell,
        constraint) pair, ``("constraint", "has", "cell")`` its reverse and, with
        ``cell_edges``, ``("cell", "near", "cell")`` in both directions. Every store
        exists even when empty, so graphs of any board batch together.

        Graph-level: ``globals`` float32 (1, len(GLOBAL_FEATURES)) and int64
        1-element tensors ``mines_left``, ``n_interior``, ``rows``, ``cols``.

        Targets, when given: ``data["cell"].y_prob`` float32 (n_cell,) and
        ``data.interior_prob`` float32 (1,) (mean probability over interior cells,
        NaN without interior cells); ``data["cell"].y_mine`` float32 (n_cell,) and
        ``data.interior_mines`` int64 (1,) (mines among the interior cells).

    Raises
    ------
    InvalidBoardError, InconsistentBoardError
        As :func:`encode_grid`, or targets of the wrong shape or type.
    """
    obs = as_observation(grid, total_mines, flags)
    g, f = obs.grid, obs.flags
    arrays = _graph_arrays(g[None], np.array([obs.total_mines], dtype=np.int64), f[None], cell_edges)
    data = _graph_data(arrays, batched=False)
    _, fi, fj = arrays["cell_at"]
    if probabilities is not None or mines is not None:
        _, unknown, frontier = _masks(g, f)
        interior = unknown & ~frontier
    if probabilities is not None:
        p = _grid_target("probabilities", probabilities, g.shape, "prob")
        data["cell"].y_prob = torch.from_numpy(p[fi, fj].astype(np.float32))
        inner = p[interior]
        mean = float(inner.mean()) if inner.size else float("nan")
        data.interior_prob = torch.tensor([mean], dtype=torch.float32)
    if mines is not None:
        m = _grid_target("mines", mines, g.shape, "bool")
        data["cell"].y_mine = torch.from_numpy(m[fi, fj].astype(np.float32))
        data.interior_mines = torch.tensor([int((m & interior).sum())], dtype=torch.int64)
    return data


def _graph_arrays(g: np.ndarray, total: np.ndarray, f: np.ndarray, cell_edges: bool) -> dict:
    """The graphs of validated boards ``(B, r, c)`` of one shape, as numpy arrays.

    Nodes are numbered across the boards (board by board, row-major within a board),
    so the arrays are those of ``Batch.from_data_list`` of the boards' graphs: node
    features, ``(board, row, col)`` of every node, edge indices sorted by source then
    target, and the graph-level values, one row per board.
    """
    n, rows, cols = g.shape
    revealed, unknown, frontier = _masks(g, f)
    glob = _globals(total, f, revealed, unknown, frontier)

    unk_nb = neighbour_sum(unknown)
    flag_nb = neighbour_sum(f)
    constraint = revealed & (unk_nb > 0)
    fb, fi, fj = np.nonzero(frontier)
    cb, ci, cj = np.nonzero(constraint)
    n_cell, n_con = fi.size, ci.size

    # Cell features: how the cell sits between constraints, other unknown cells (and
    # how many of those are interior), flags and the board's edge.
    board_nb = neighbour_sum(np.ones((rows, cols), dtype=bool))
    cell_counts = np.stack(
        [
            neighbour_sum(constraint)[fb, fi, fj],
            unk_nb[fb, fi, fj],
            flag_nb[fb, fi, fj],
            neighbour_sum(unknown & ~frontier)[fb, fi, fj],
            board_nb[fi, fj],
        ],
        axis=1,
    ).astype(np.float32) / 8
    cell_x = np.concatenate([cell_counts, glob[fb]], axis=1)

    number = g[cb, ci, cj].astype(np.float32)
    need = number - flag_nb[cb, ci, cj]
    free = unk_nb[cb, ci, cj].astype(np.float32)
    con_x = np.concatenate(
        [np.stack([need / 8, free / 8, need / np.maximum(free, 1), number / 8], axis=1), glob[cb]],
        axis=1,
    ).astype(np.float32)

    # Node ids on boards padded with -1, then neighbour ids by shifted gathers.
    cell_id = np.full((n, rows + 2, cols + 2), -1, dtype=np.int64)
    cell_id[fb, fi + 1, fj + 1] = np.arange(n_cell)
    con_id = np.full((n, rows + 2, cols + 2), -1, dtype=np.int64)
    con_id[cb, ci + 1, cj + 1] = np.arange(n_con)
    e_in = _pairs(_neighbour_ids(con_id, fb, fi, fj))
    return {
        "cell_x": np.ascontiguousarray(cell_x, dtype=np.float32),
        "cell_at": (fb, fi, fj),
        "con_x": con_x,
        "con_at": (cb, ci, cj),
        "e_in": e_in,
        "e_near": _pairs(_neighbour_ids(cell_id, fb, fi, fj)) if cell_edges else None,
        "globals": glob,
        "mines_left": (total - f.sum(axis=(1, 2))).astype(np.int64),
        "n_interior": (unknown & ~frontier).sum(axis=(1, 2)).astype(np.int64),
        "shape": (n, rows, cols),
    }


def _graph_parts(arrays: dict, *, batched: bool) -> tuple[dict, dict, dict]:
    """The tensors of the graph of :func:`_graph_arrays` in plain dicts: per node type its ``x``
    and ``pos`` (with ``batched``, ``batch`` and ``ptr`` as in a ``Batch``), per edge type its
    edge index, and the graph-level tensors. What :func:`_graph_data` puts in a ``HeteroData``,
    and what a GNN of plain torch layers reads without torch-geometric."""
    n, rows, cols = arrays["shape"]
    nodes = {}
    for t, x_key, at_key in (("cell", "cell_x", "cell_at"), ("constraint", "con_x", "con_at")):
        b, i, j = arrays[at_key]
        store = {"x": torch.from_numpy(arrays[x_key]),
                 "pos": torch.from_numpy(np.stack([i, j], axis=1).astype(np.int64))}
        if batched:
            store["batch"] = torch.from_numpy(b.astype(np.int64))
            store["ptr"] = torch.from_numpy(np.searchsorted(b, np.arange(n + 1)).astype(np.int64))
        nodes[t] = store
    e_in = arrays["e_in"]
    edges = {_EDGE_IN: torch.from_numpy(e_in), _EDGE_HAS: torch.from_numpy(np.ascontiguousarray(e_in[::-1]))}
    if arrays["e_near"] is not None:
        edges[_EDGE_NEAR] = torch.from_numpy(arrays["e_near"])
    extra = {key: torch.from_numpy(arrays[key]) for key in ("globals", "mines_left", "n_interior")}
    extra["rows"] = torch.full((n,), rows, dtype=torch.int64)
    extra["cols"] = torch.full((n,), cols, dtype=torch.int64)
    return nodes, edges, extra


def hetero_data(nodes: dict, edges: dict, extra: dict) -> HeteroData:
    """A ``HeteroData`` of a graph's tensors given in plain dicts (as :func:`_graph_parts` gives them):
    per node type its tensors by name, per edge type its ``edge_index``, and graph-level tensors."""
    from torch_geometric.data import HeteroData  # (here: the grid encoders, and the CNN, do without it)

    data = HeteroData()
    for t, store in nodes.items():
        for key, value in store.items():
            setattr(data[t], key, value)
    for et, adj in edges.items():
        data[et].edge_index = adj
    for key, value in extra.items():
        setattr(data, key, value)
    return data


def _graph_data(arrays: dict, *, batched: bool) -> HeteroData:
    """A ``HeteroData`` from :func:`_graph_arrays`; with ``batched``, node stores carry
    ``batch`` and ``ptr`` as in a ``Batch``."""
    return hetero_data(*_graph_parts(arrays, batched=batched))


def _per_board(name: str, value, n: int) -> list:
    if value is None:
        return [None] * n
    if (isinstance(value, np.ndarray) and value.ndim >= 1) or isinstance(value, Sequence):
        if len(value) != n:
            raise InvalidBoardError(f"{name} must have one entry per board ({n}); got {len(value)}")
        return list(value)
    raise InvalidBoardError(f"{name} must be a sequence with one entry per board; got {type(value).__name__}")


def build_graphs(
    grids, total_mines=None, flags=None, *, cell_edges: bool = True, probabilities=None, mines=None
) -> Batch:
    """:func:`build_graph` for many boards, batched.

    Parameters
    ----------
    grids : Observations, sequence of (Observation or array_like), or array_like of shape (boards, rows, cols)
        The boards; a list may mix sizes. An Observation carries its own mine count
        and flags (its entries of ``total_mines`` and ``flags`` must be None).
    total_mines : sequence of (int or None), or int, optional
        Mines on each board given as a grid (an int applies to every board).
    flags : sequence of (array_like or None), optional
        Per-board flags of the boards given as grids.
    cell_edges : bool, default True
        As for :func:`build_graph`.
    probabilities, mines : sequence of array_like, optional
        Per-board targets, as for :func:`build_graph`.

    Returns
    -------
    torch_geometric.data.Batch
        ``Batch.from_data_list`` of the graphs: graph-level tensors are stacked
        (``globals`` (B, G), ``mines_left`` (B,), ...) and node stores carry ``batch``.
    """
    if isinstance(grids, Observations):
        boards = list(grids)
    elif isinstance(grids, np.ndarray):
        if grids.ndim != 3:
            raise InvalidBoardError(f"grids must be a list of boards or a 3-D array; got shape {grids.shape}")
        boards = list(grids)
    elif isinstance(grids, Sequence):
        boards = list(grids)
    else:
        raise InvalidBoardError(f"grids must be a list of boards or a 3-D array; got {type(grids).__name__}")
    n = len(boards)
    if n == 0:
        raise InvalidBoardError("grids must hold at least one board; got none")
    if isinstance(total_mines, numbers.Integral) and not isinstance(total_mines, bool | np.bool_):
        totals = [total_mines] * n
    else:
        totals = _per_board("total_mines", total_mines, n)
    fl = _per_board("flags", flags, n)
    probs = _per_board("probabilities", probabilities, n)
    truth = _per_board("mines", mines, n)
    graphs = []
    for b in range(n):
        try:
            graphs.append(
                build_graph(
                    boards[b], totals[b], fl[b], cell_edges=cell_edges, probabilities=probs[b], mines=truth[b]
                )
            )
        except (InvalidBoardError, InconsistentBoardError) as exc:
            raise type(exc)(f"board {b}: {exc}") from None
    from torch_geometric.data import Batch

    return Batch.from_data_list(graphs)


def build_graph_batch(grids, total_mines=None, flags=None, *, cell_edges: bool = True) -> HeteroData:
    """The graphs of many boards of one shape, batched, in one vectorised pass.

    The same tensors as ``build_graphs(grids, total_mines, flags)`` (node features,
    positions, edges, graph-level values, and ``batch`` and ``ptr`` on both node
    stores), without building a ``HeteroData`` per board: the fast input of
    :meth:`nnsweeper.models.MineGNN.predict_proba`. Targets are not attached.

    Parameters
    ----------
    grids : Observations, sequence of Observation, or array_like of int, shape (boards, rows, cols)
        The boards, all of one shape (then give neither ``total_mines`` nor
        ``flags``), or their grids.
    total_mines : int or array_like of int, shape (boards,)
        With grids: mines on each board.
    flags : array_like of bool, shape (boards, rows, cols), optional
        With grids: per-board flags.
    cell_edges : bool, default True
        As for :func:`build_graph`.

    Returns
    -------
    HeteroData
        A batch of ``boards`` graphs (``globals`` (boards, G), ``mines_left``
        (boards,), ...).

    Raises
    ------
    InvalidBoardError, InconsistentBoardError
        As :func:`encode_grids` (boards of several shapes included).
    """
    batch = as_observations(grids, total_mines, flags)
    return _graph_data(_graph_arrays(batch.grids, batch.total_mines, batch.flags, cell_edges), batched=True)


def build_graph_batch_parts(grids, total_mines=None, flags=None, *,
                            cell_edges: bool = True) -> tuple[dict, dict, dict]:
    """:func:`build_graph_batch`'s tensors in plain dicts, without torch-geometric: per node type
    (``x``, ``pos``, ``batch``, ``ptr``), per edge type (its edge index) and per graph (``globals``,
    ``mines_left``, ``n_interior``, ``rows``, ``cols``). Arguments and checks as there."""
    batch = as_observations(grids, total_mines, flags)
    return _graph_parts(_graph_arrays(batch.grids, batch.total_mines, batch.flags, cell_edges), batched=True)


def batch_to_grids(data, cell_values, interior_values, grids, flags=None) -> np.ndarray:
    """Scatter per-node values of :func:`build_graph_batch`'s batch back onto its boards.

    The batch version of :func:`graph_to_grid`: ``cell_values`` has one value per
    cell node of the batch and ``interior_values`` one per board. Returns float64
    ``(boards, rows, cols)``: the cell values at frontier cells, the board's interior
    value at its other covered unflagged cells, 0 at revealed cells and 1 at flags.
    ``grids`` may be the batch's :class:`~nnsweeper.observation.Observations` (then
    ``flags`` is None).
    """
    if isinstance(grids, Observations):
        check_alone("Observations", flags=flags)
        g, f = grids.grids, grids.flags
    else:
        g = np.asarray(grids)
        f = np.zeros(g.shape, dtype=bool) if flags is None else np.asarray(flags, dtype=bool)
    cells = data["cell"]  # a node store, or a dict of its tensors (build_graph_batch_parts)
    batch = _as_numpy(cells["batch"]).astype(np.int64)
    pos = _as_numpy(cells["pos"]).astype(np.int64).reshape(-1, 2)
    values = _as_numpy(cell_values).astype(np.float64).reshape(-1)
    inner = _as_numpy(interior_values).astype(np.float64).reshape(-1)
    if values.size != batch.size or inner.size != g.shape[0]:
        raise InvalidBoardError(
            f"need one value per cell node ({batch.size}) and one interior value per board "
            f"({g.shape[0]}); got {values.size} and {inner.size}"
        )
    unknown = (g == -1) & ~f
    out = np.where(unknown, inner[:, None, None], 0.0)
    out[f] = 1.0
    out[batch, pos[:, 0], pos[:, 1]] = values
    return out


def _as_numpy(value) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def graph_to_grid(data, cell_values, interior_value, grid, flags=None) -> np.ndarray:
    """Scatter per-node values of one graph back onto its board.

    Parameters
    ----------
    data : HeteroData
        One graph from :func:`build_graph` (not a batch of several).
    cell_values : array_like or Tensor, shape (n_cell,)
        One value per frontier cell, in the order of ``data["cell"].pos``.
    interior_value : float or 1-element array_like or Tensor
        The value for every interior cell (unused when there is none).
    grid, flags
        The board the graph was built from: its grid and flags, or its
        :class:`~nnsweeper.observation.Observation` (then ``flags`` is None).

    Returns
    -------
    ndarray of float64, shape (rows, cols)
        ``cell_values`` at the frontier cells, ``interior_value`` at the other
        covered unflagged cells, 0 at revealed cells and 1 at flags.

    Raises
    ------
    InvalidBoardError
        Values of the wrong length, or a graph that does not belong to the board.
    """
    if isinstance(grid, Observation):
        check_alone("Observation", flags=flags)
        g, f = grid.grid, grid.flags
    else:
        g, _, f = validate_board(grid, 0, flags)
    pos = _as_numpy(data["cell"].pos).astype(np.int64).reshape(-1, 2)
    rows = _as_numpy(data.rows).reshape(-1)
    cols = _as_numpy(data.cols).reshape(-1)
    if rows.size != 1:
        raise InvalidBoardError(f"data must be one graph; got a batch of {rows.size}")
    if (int(rows[0]), int(cols[0])) != g.shape:
        raise InvalidBoardError(
            f"the graph was built from a {int(rows[0])}x{int(cols[0])} board; got a grid of shape {g.shape}"
        )
    values = _as_numpy(cell_values).astype(np.float64).reshape(-1)
    if values.size != pos.shape[0]:
        raise InvalidBoardError(
            f"cell_values must hold one value per frontier cell ({pos.shape[0]}); got {values.size}"
        )
    unknown = (g == -1) & ~f
    if not unknown[pos[:, 0], pos[:, 1]].all():
        k = int(np.argmin(unknown[pos[:, 0], pos[:, 1]]))
        raise InvalidBoardError(
            f"graph cell ({pos[k, 0]}, {pos[k, 1]}) is not a covered unflagged cell of the grid"
        )
    out = np.zeros(g.shape, dtype=np.float64)
    out[f] = 1.0
    interior = unknown.copy()
    interior[pos[:, 0], pos[:, 1]] = False
    if interior.any():
        iv = _as_numpy(interior_value).astype(np.float64).reshape(-1)
        if iv.size != 1:
            raise InvalidBoardError(f"interior_value must be a single number; got {iv.size} values")
        out[interior] = iv[0]
    out[pos[:, 0], pos[:, 1]] = values
    return out
