"""Many games of one board size in lockstep as torch tensors, and pure neural play on them.

:class:`BatchedGames` holds N games of one :class:`~nnsweeper.game.Rules` as tensors of
shape (N, rows, cols) on any torch device, with the layouts of :class:`~nnsweeper.game.Game`
for the same seeds and first clicks (:func:`~nnsweeper.game.draw_layout`, the draw
``Game`` makes). Only the layouts are drawn on the host (numpy,
once per game, at its first reveal); every move after that (reveals, flood fills,
wins, losses, flags) is a whole-batch tensor operation.

The model inputs are built from those tensors on the device as well:
:func:`encode_grids_tensor` gives the CNN's channels (those of
:func:`nnsweeper.features.encode_grids`), :func:`graph_batch_tensor` the GNN's graph
batch (that of :func:`nnsweeper.features.build_graph_batch`), and
:func:`predict_tensor` a model's P(mine) maps as
:meth:`~nnsweeper.models.MineModel.predict_proba` gives them. :func:`play_batched`
plays a pure :class:`~nnsweeper.solvers.NeuralSolver`'s policy on them, with no
Python step per game.

The module imports torch; ``import nnsweeper`` does not import it.
"""

from __future__ import annotations

import copy
import numbers
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from nnsweeper.errors import InvalidActionError, InvalidRulesError, check_int
from nnsweeper.game import Rules, draw_layout
from nnsweeper.grid import OFFSETS

__all__ = [
    "BatchedGames",
    "BatchedResults",
    "encode_grids_tensor",
    "graph_batch_tensor",
    "predict_tensor",
    "play_batched",
    "tie_hash",
]

_DI = tuple(di for di, _ in OFFSETS)
_DJ = tuple(dj for _, dj in OFFSETS)


# --------------------------------------------------------------------------- grid primitives
def _dilate(mask: torch.Tensor) -> torch.Tensor:
    """Boolean 3x3 dilation of ``mask`` (n, rows, cols)."""
    return F.max_pool2d(mask[:, None].to(torch.float32), 3, stride=1, padding=1)[:, 0] > 0


def _neighbour_sum(a: torch.Tensor) -> torch.Tensor:
    """Sum of the eight neighbours of every cell of ``a`` (n, rows, cols), int32 (off-board cells 0)."""
    p = F.pad(a.to(torch.int32), (1, 1, 1, 1))
    rows = p[:, :-2] + p[:, 1:-1] + p[:, 2:]
    return rows[:, :, :-2] + rows[:, :, 1:-1] + rows[:, :, 2:] - p[:, 1:-1, 1:-1]


def _neighbour_product(a: torch.Tensor) -> torch.Tensor:
    """Product of the eight neighbours of every cell (off-board cells 1), in the order of
    :data:`~nnsweeper.grid.OFFSETS`, as :func:`nnsweeper.grid.neighbour_product`."""
    _, r, c = a.shape
    p = F.pad(a, (1, 1, 1, 1), value=1.0)
    out = torch.ones_like(a)
    for di, dj in OFFSETS:
        out = out * p[:, 1 + di : r + 1 + di, 1 + dj : c + 1 + dj]
    return out


def _zero_labels(zero: torch.Tensor) -> torch.Tensor:
    """Labels of the 8-connected regions of ``zero`` (n, rows, cols): each region's cells get
    its largest flat index plus one, every other cell 0 (int64).

    Flood fill of every region at once by iterated 3x3 max pooling, until nothing
    changes (at most rows * cols rounds; the board is compared every few rounds, which
    keeps the host from waiting on the device after every round).
    """
    n, r, c = zero.shape
    ids = torch.arange(1, r * c + 1, device=zero.device, dtype=torch.float32).view(1, r, c)
    lab = torch.where(zero, ids, 0.0)
    rounds = 0
    while rounds < r * c:
        before = lab
        for _ in range(4):
            lab = torch.where(zero, F.max_pool2d(lab[:, None], 3, stride=1, padding=1)[:, 0], 0.0)
        rounds += 4
        if torch.equal(lab, before):
            break
    return lab.to(torch.int64)


# --------------------------------------------------------------------------- the games
def _check_seeds(seeds) -> np.ndarray:
    values = list(seeds) if not isinstance(seeds, np.ndarray) else seeds.reshape(-1).tolist()
    if not values:
        raise InvalidRulesError("seeds must hold at least one game seed; got none")
    for s in values:
        if isinstance(s, bool | np.bool_) or not isinstance(s, numbers.Integral) or s < 0 or s >= 2**63:
            raise InvalidRulesError(f"seeds must be non-negative integers below 2**63; got {s!r}")
    return np.array([int(s) for s in values], dtype=np.int64)


def _device(device) -> torch.device:
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


class BatchedGames:
    """N games of one board size played in lockstep, as tensors on one torch device.

    Parameters
    ----------
    rules : Rules
        The board and the first-click rule, shared by every game.
    seeds : sequence of int
        One seed per game: game ``k`` has the layout of ``Game(rules, seeds[k])`` for
        the same first click.
    device : str or torch.device, default "cpu"
        Where the state lives ("cpu", "cuda", "cuda:N", "auto").

    Attributes
    ----------
    mine : Tensor of bool, (N, rows, cols)
        The hidden layouts (all False until a game's first reveal, except under
        ``first_click="none"``, whose layouts are drawn here). For tests and labels.
    counts : Tensor of int8, (N, rows, cols)
        Mines among each cell's eight neighbours.
    covered, flags : Tensor of bool, (N, rows, cols)
        Covered cells (a mine that was revealed stays covered, as in
        :class:`~nnsweeper.game.Game`) and flags.
    done, won, lost : Tensor of bool, (N,)
    moves : Tensor of int64, (N,)
        Cells clicked so far, as ``Game.moves`` counts them (one per
        :meth:`Game.open_cell <nnsweeper.game.Game.open_cell>` call).
    revealed : Tensor of int64, (N,)
        Safe cells revealed so far (``Game.revealed_safe``).

    Notes
    -----
    Flood fill is iterated dilation: when a game's layout is drawn, 3x3 max pooling
    through its zero cells, repeated until nothing changes, labels every zero region
    of the board at once (each with its largest cell index); a move then opens the
    regions of the zero cells it clicks and, by one more dilation, their numbered
    border, in one step whatever the regions' size.

    A move is refused with :class:`~nnsweeper.errors.InvalidActionError` (naming the
    game and the cell) when it selects a revealed or flagged cell of a game in play,
    as ``Game`` refuses it; that check waits for the device once per move
    (``check=False`` skips it). Games that are over take no more moves: their
    entries of a move are ignored.
    """

    _STATE = ("mine", "counts", "covered", "flags", "_labels", "placed", "done", "won", "lost", "moves",
              "revealed")

    def __init__(self, rules: Rules, seeds: Sequence[int], device="cpu"):
        if not isinstance(rules, Rules):
            raise InvalidRulesError(f"rules must be a Rules instance; got {type(rules).__name__}")
        self.rules = rules
        self.seeds = _check_seeds(seeds)
        dev = _device(device)
        n, r, c = len(self.seeds), rules.rows, rules.cols
        self.mine = torch.zeros((n, r, c), dtype=torch.bool, device=dev)
        self.counts = torch.zeros((n, r, c), dtype=torch.int8, device=dev)
        self.covered = torch.ones((n, r, c), dtype=torch.bool, device=dev)
        self.flags = torch.zeros((n, r, c), dtype=torch.bool, device=dev)
        # Per cell: its zero region's label (see _zero_labels), 0 off the zero cells.
        self._labels = torch.zeros((n, r, c), dtype=torch.int64, device=dev)
        self.placed = torch.zeros(n, dtype=torch.bool, device=dev)
        self.done = torch.zeros(n, dtype=torch.bool, device=dev)
        self.won = torch.zeros(n, dtype=torch.bool, device=dev)
        self.lost = torch.zeros(n, dtype=torch.bool, device=dev)
        self.moves = torch.zeros(n, dtype=torch.int64, device=dev)
        self.revealed = torch.zeros(n, dtype=torch.int64, device=dev)
        if rules.first_click == "none":
            self._place(np.arange(n), np.zeros(n, dtype=np.int64))

    # ------------------------------------------------------------------ basics
    def __len__(self) -> int:
        return len(self.seeds)

    def __repr__(self) -> str:
        r = self.rules
        return (f"{type(self).__name__}({len(self)} games of {r.rows}x{r.cols} with {r.mines} mines, "
                f"first_click={r.first_click!r}, device={str(self.device)!r})")

    @property
    def device(self) -> torch.device:
        return self.covered.device

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rules.rows, self.rules.cols)

    @property
    def safe_cells(self) -> int:
        return self.rules.cells - self.rules.mines

    def to(self, device) -> BatchedGames:
        """Move every tensor of the state to ``device``, in place; returns ``self`` (as
        ``torch.nn.Module.to`` does)."""
        dev = _device(device)
        for name in self._STATE:
            setattr(self, name, getattr(self, name).to(dev))
        return self

    def take(self, index) -> BatchedGames:
        """A new batch of the games at ``index`` (a sequence of ints or an int64 tensor), their
        state copied."""
        index = torch.as_tensor(index, dtype=torch.int64, device=self.device).reshape(-1)
        out = object.__new__(BatchedGames)
        out.rules = self.rules
        out.seeds = self.seeds[index.cpu().numpy()]
        for name in self._STATE:
            setattr(out, name, getattr(self, name).index_select(0, index))
        return out

    @staticmethod
    def cat(batches: Sequence[BatchedGames]) -> BatchedGames:
        """One batch of the games of ``batches`` (same rules and device), in order."""
        batches = list(batches)
        if not batches:
            raise ValueError("cat needs at least one batch")
        first = batches[0]
        if any(b.rules != first.rules or b.device != first.device for b in batches):
            raise ValueError("cat joins batches of the same rules on the same device only")
        out = object.__new__(BatchedGames)
        out.rules = first.rules
        out.seeds = np.concatenate([b.seeds for b in batches])
        for name in BatchedGames._STATE:
            setattr(out, name, torch.cat([getattr(b, name) for b in batches]))
        return out

    # ------------------------------------------------------------------ layouts
    def _place(self, games: np.ndarray, first: np.ndarray) -> None:
        """Draw the layouts of ``games`` (indices) whose first click is flat cell ``first`` (host)."""
        c = self.rules.cols
        layouts = np.stack([draw_layout(self.rules, int(self.seeds[k]), divmod(int(cell), c))
                            for k, cell in zip(games, first, strict=True)])
        idx = torch.as_tensor(games, dtype=torch.int64, device=self.device)
        mine = torch.from_numpy(layouts).to(self.device)
        counts = _neighbour_sum(mine)
        self.mine[idx] = mine
        self.counts[idx] = counts.to(torch.int8)
        self._labels[idx] = _zero_labels((counts == 0) & ~mine)
        self.placed[idx] = True

    def mine_layout(self) -> torch.Tensor:
        """The hidden layouts (a copy). For labels and tests, never for solvers."""
        return self.mine.clone()

    # ------------------------------------------------------------------ observation
    def observe(self) -> torch.Tensor:
        """The visible grids: int8 (N, rows, cols), -1 covered, 0..8 revealed (``Game.observe``)."""
        return torch.where(self.covered, torch.tensor(-1, dtype=torch.int8, device=self.device), self.counts)

    # ------------------------------------------------------------------ moves
    def reveal(self, cells, *, check: bool = True) -> torch.Tensor:
        """Reveal one cell per game, as ``Game.open_cell``.

        Parameters
        ----------
        cells : LongTensor or array_like of int, shape (N,)
            A flat cell index ``row * cols + col`` per game; -1 makes no move in that
            game. Entries of games that are over are ignored.
        check : bool, default True
            Refuse a revealed or flagged cell (one wait for the device per call).

        Returns
        -------
        Tensor of int64, shape (N,)
            Safe cells each game revealed (0 where it made no move or hit a mine).

        Raises
        ------
        InvalidActionError
            A cell out of range, or (with ``check``) a revealed or flagged cell of a
            game in play.
        """
        n, rc = len(self), self.rules.cells
        cells = torch.as_tensor(cells, device=self.device)
        if cells.shape != (n,) or cells.dtype.is_floating_point or cells.dtype == torch.bool:
            raise InvalidActionError(f"cells must be one integer cell index per game, shape ({n},); "
                                     f"got {cells.dtype} of shape {tuple(cells.shape)}")
        cells = cells.to(torch.int64)
        if check and bool(((cells < -1) | (cells >= rc)).any()):
            k = int(torch.nonzero((cells < -1) | (cells >= rc))[0, 0])
            raise InvalidActionError(f"game {k}: cell must be -1 (no move) or a flat index in [0, {rc}); "
                                     f"got {int(cells[k])}")
        move = (cells >= 0) & ~self.done
        sel = torch.zeros((n, rc), dtype=torch.bool, device=self.device)
        sel.scatter_(1, cells.clamp(0, rc - 1)[:, None], move[:, None])
        return self._open(sel, check)

    def reveal_many(self, cells_mask, *, check: bool = True) -> torch.Tensor:
        """Open a set of cells per game in one move.

        The same as calling ``Game.open_cell`` on each selected cell in row-major
        order and stopping when the game ends: cells already opened by an earlier
        flood fill of the same move are skipped, and cells after the first selected
        mine stay covered (unless the cells before it won the game).

        Parameters
        ----------
        cells_mask : Tensor or array_like of bool, shape (N, rows, cols)
            The cells to open; games that are over are ignored.
        check : bool, default True
            Refuse revealed or flagged cells, as :meth:`reveal`.

        Returns
        -------
        Tensor of int64, shape (N,)
            Safe cells each game revealed.
        """
        n, (r, c) = len(self), self.shape
        sel = torch.as_tensor(cells_mask, device=self.device)
        if sel.shape != (n, r, c):
            raise InvalidActionError(f"cells_mask must have shape ({n}, {r}, {c}); got {tuple(sel.shape)}")
        sel = (sel != 0) & ~self.done[:, None, None]
        return self._open(sel.reshape(n, r * c), check)

    def _open(self, sel: torch.Tensor, check: bool) -> torch.Tensor:
        """Open the selected cells ``sel`` (N, cells) of games in play; see :meth:`reveal_many`."""
        n, (r, c) = len(self), self.shape
        rc = r * c
        covered, flags = self.covered.view(n, rc), self.flags.view(n, rc)
        if check:
            bad = sel & (~covered | flags)
            if bool(bad.any()):
                k, a = (int(v) for v in torch.nonzero(bad)[0])
                what = ("is already revealed" if not bool(covered[k, a])
                        else "is flagged; unflag it before revealing")
                games = torch.nonzero(bad.any(1))[:, 0].tolist()
                raise InvalidActionError(
                    f"game {k}: cell ({a // c}, {a % c}) {what} (games refused: {games[:10]}"
                    f"{', ...' if len(games) > 10 else ''})"
                )
        ar = torch.arange(rc, device=self.device)
        first_sel = torch.where(sel, ar, rc).amin(1)
        unplaced = (first_sel < rc) & ~self.placed
        if bool(unplaced.any()):
            games = torch.nonzero(unplaced)[:, 0]
            self._place(games.cpu().numpy(), first_sel[games].cpu().numpy())
        mine = self.mine.view(n, rc)
        labels = self._labels.view(n, rc)
        # Cells after the first selected mine (row-major) are never reached.
        first_mine = torch.where(sel & mine, ar, rc).amin(1)
        safe_sel = sel & (ar < first_mine[:, None])
        # Every zero region holding a selected cell opens with its border; the region's
        # first selected cell is the one clicked, later cells of it were opened before
        # their turn. A border cell is clicked only if no region around it was opened
        # by an earlier cell.
        zero_sel = safe_sel & (labels > 0)
        first_in_region = torch.full((n, rc + 1), rc, dtype=torch.int64, device=self.device)
        first_in_region.scatter_reduce_(1, torch.where(zero_sel, labels, 0), torch.where(zero_sel, ar, rc),
                                        "amin")
        region_first = torch.where(labels > 0, first_in_region.gather(1, labels), rc)
        near_first = -F.max_pool2d(-region_first.view(n, 1, r, c).to(torch.float32), 3, stride=1, padding=1)
        near_first = near_first.view(n, rc)
        opened = ((near_first < rc) | safe_sel) & covered
        clicked = safe_sel & (near_first >= ar)
        new = opened.sum(1)
        revealed = self.revealed + new
        won = revealed == self.safe_cells
        hit = (first_mine < rc) & ~won
        self.revealed = revealed
        self.moves = self.moves + clicked.sum(1) + hit
        self.covered = (covered & ~opened).view(n, r, c)
        self.flags = (flags & ~opened).view(n, r, c)  # a flag on a cell that flood fill opens goes away
        self.won = self.won | won
        self.lost = self.lost | hit
        self.done = self.done | won | hit
        return new

    def set_flags(self, flags, *, check: bool = True) -> None:
        """Make ``flags`` (bool (N, rows, cols)) the flags of the games in play (those of
        games that are over stay as they are).

        Raises
        ------
        InvalidActionError
            With ``check``: a flag on a revealed cell of a game in play.
        """
        n, (r, c) = len(self), self.shape
        flags = torch.as_tensor(flags, device=self.device)
        if flags.shape != (n, r, c):
            raise InvalidActionError(f"flags must have shape ({n}, {r}, {c}); got {tuple(flags.shape)}")
        flags = flags != 0
        play = ~self.done[:, None, None]
        if check:
            bad = flags & ~self.covered & play
            if bool(bad.any()):
                k, i, j = (int(v) for v in torch.nonzero(bad)[0])
                raise InvalidActionError(f"game {k}: cell ({i}, {j}) is revealed and cannot be flagged")
        self.flags = torch.where(play, flags, self.flags)


# --------------------------------------------------------------------------- model inputs
def _as_totals(total_mines, n: int, device) -> torch.Tensor:
    t = torch.as_tensor(total_mines, dtype=torch.int64, device=device)
    return t.expand(n) if t.dim() == 0 else t.reshape(n)


def encode_grids_tensor(grids: torch.Tensor, total_mines, flags: torch.Tensor) -> torch.Tensor:
    """:func:`nnsweeper.features.encode_grids` computed with torch on the grids' device.

    Parameters
    ----------
    grids : Tensor of int, (B, rows, cols)
        -1 covered, 0..8 revealed (not checked: a :class:`BatchedGames` observation).
    total_mines : int or Tensor of int, (B,)
    flags : Tensor of bool, (B, rows, cols)

    Returns
    -------
    Tensor of float32, (B, len(GRID_CHANNELS), rows, cols)
        The same values as ``encode_grids``.
    """
    from nnsweeper.features import GRID_CHANNELS

    ch = {name: k for k, name in enumerate(GRID_CHANNELS)}
    n, r, c = grids.shape
    total = _as_totals(total_mines, n, grids.device)
    unknown = (grids == -1) & ~flags
    out = torch.zeros((n, len(GRID_CHANNELS), r, c), dtype=torch.float32, device=grids.device)
    out[:, ch["covered"]] = unknown.to(torch.float32)
    out[:, ch["flagged"]] = flags.to(torch.float32)
    shown = torch.arange(9, device=grids.device, dtype=grids.dtype)[None, :, None, None]
    out[:, ch["revealed_0"] : ch["revealed_8"] + 1] = (grids[:, None] == shown).to(torch.float32)
    mines_left = total - flags.sum((1, 2))
    n_unknown = unknown.sum((1, 2))
    n_revealed = (grids >= 0).sum((1, 2))
    # Float64 quotients rounded to float32, as numpy computes and stores them.
    density = mines_left.double() / n_unknown.clamp(min=1).double()
    out[:, ch["mines_left_density"]] = density.float()[:, None, None]
    out[:, ch["revealed_fraction"]] = (n_revealed.double() / (r * c)).float()[:, None, None]
    out[:, ch["mine_density"]] = (total.double() / (r * c)).float()[:, None, None]
    return out


def _neighbour_ids(ids: torch.Tensor, b, i, j) -> torch.Tensor:
    """Ids (from a (B, r+2, c+2) tensor padded with -1) of the 8 neighbours of cells (b, i, j): (n, 8)."""
    di = torch.tensor(_DI, device=ids.device)
    dj = torch.tensor(_DJ, device=ids.device)
    return ids[b[:, None], i[:, None] + 1 + di, j[:, None] + 1 + dj]


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
                       sparse: bool = False):
    """:func:`nnsweeper.features.build_graph_batch` computed with torch on the grids' device.

    Parameters
    ----------
    grids, total_mines, flags
        As for :func:`encode_grids_tensor`.
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
    from torch_geometric.data import HeteroData

    dev = grids.device
    n, r, c = grids.shape
    total = _as_totals(total_mines, n, dev)
    revealed = grids >= 0
    unknown = (grids == -1) & ~flags
    frontier = unknown & _dilate(revealed)
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

    unk_nb = _neighbour_sum(unknown)
    flag_nb = _neighbour_sum(flags)
    constraint = revealed & (unk_nb > 0)
    fb, fi, fj = torch.nonzero(frontier, as_tuple=True)
    cb, ci, cj = torch.nonzero(constraint, as_tuple=True)
    n_cell, n_con = fi.shape[0], ci.shape[0]

    board_nb = _neighbour_sum(torch.ones((1, r, c), dtype=torch.bool, device=dev))[0]
    cell_counts = torch.stack([
        _neighbour_sum(constraint)[fb, fi, fj],
        unk_nb[fb, fi, fj],
        flag_nb[fb, fi, fj],
        _neighbour_sum(interior)[fb, fi, fj],
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
    cell_to_con = _neighbour_ids(con_id, fb, fi, fj)
    cell_to_cell = _neighbour_ids(cell_id, fb, fi, fj) if cell_edges else None

    data = HeteroData()
    for t, x, b, i, j in (("cell", cell_x, fb, fi, fj), ("constraint", con_x, cb, ci, cj)):
        data[t].x = x
        data[t].pos = torch.stack([i, j], dim=1)
        data[t].batch = b
        data[t].ptr = torch.searchsorted(b, torch.arange(n + 1, device=dev))
    if sparse:
        # Transposed adjacencies: rows are the targets of the messages.
        data["cell", "in", "constraint"].edge_index = _csr(_neighbour_ids(cell_id, cb, ci, cj), n_cell)
        data["constraint", "has", "cell"].edge_index = _csr(cell_to_con, n_con)
        if cell_edges:
            data["cell", "near", "cell"].edge_index = _csr(cell_to_cell, n_cell)
    else:
        e_in = _pairs(cell_to_con)
        data["cell", "in", "constraint"].edge_index = e_in
        data["constraint", "has", "cell"].edge_index = e_in.flip(0)
        if cell_edges:
            data["cell", "near", "cell"].edge_index = _pairs(cell_to_cell)
    data.globals = glob
    data.mines_left = mines_left
    data.n_interior = interior.sum((1, 2))
    data.rows = torch.full((n,), r, dtype=torch.int64, device=dev)
    data.cols = torch.full((n,), c, dtype=torch.int64, device=dev)
    return data


#: The architectures whose forward :func:`predict_tensor` runs on the device: (name, module, class).
_TORCH_MODELS = (("cnn", "nnsweeper.models.cnn", "MineCNN"), ("gnn", "nnsweeper.models.gnn", "MineGNN"))


def _architecture(model) -> str | None:
    """"cnn" or "gnn" when ``model`` is a MineCNN or a MineGNN (a subclass included), else None.

    Looked up among the loaded modules: a model of either class has imported its own.
    """
    for name, module, cls_name in _TORCH_MODELS:
        cls = getattr(sys.modules.get(module), cls_name, None)
        if cls is not None and isinstance(model, cls):
            return name
    return None


def predict_tensor(model, grids: torch.Tensor, total_mines, flags: torch.Tensor, *,
                   sparse: bool | None = None) -> torch.Tensor:
    """P(mine) maps of boards given as tensors, as ``model.predict_proba`` gives them.

    The model's forward runs on its inputs built on the device (:func:`encode_grids_tensor`,
    :func:`graph_batch_tensor`), then the logits are mapped back to the boards as
    ``predict_proba`` does: the sigmoid (in float64) at covered unflagged cells (for
    the GNN, its frontier cells' values and the board's interior value elsewhere),
    exactly 0 at revealed cells and 1 at flags. The caller sets eval mode and
    ``torch.inference_mode()``; the boards are not checked.

    Parameters
    ----------
    model : MineCNN or MineGNN, or any model with ``predict_proba``
        Another model is asked through its ``predict_proba`` on the host.
    grids, total_mines, flags
        As for :func:`encode_grids_tensor`, on the model's device.
    sparse : bool, optional
        For the GNN: pass sparse adjacencies (:func:`graph_batch_tensor`); by
        default on the CPU only.

    Returns
    -------
    Tensor of float64, (B, rows, cols), on the grids' device
    """
    arch = _architecture(model)
    unknown = (grids == -1) & ~flags
    if arch == "cnn":
        p = torch.sigmoid(model(encode_grids_tensor(grids, total_mines, flags)).double())
        p = torch.where(unknown, p, 0.0)
    elif arch == "gnn":
        if sparse is None:
            sparse = grids.device.type == "cpu"
        data = graph_batch_tensor(grids, total_mines, flags, cell_edges=model.settings.cell_edges,
                                  sparse=sparse)
        cell_logits, interior_logits = model(data)
        p = torch.where(unknown, torch.sigmoid(interior_logits.double())[:, None, None], 0.0)
        pos = data["cell"].pos
        p[data["cell"].batch, pos[:, 0], pos[:, 1]] = torch.sigmoid(cell_logits.double())
    else:
        totals = _as_totals(total_mines, grids.shape[0], grids.device).cpu().numpy()
        out = model.predict_proba(grids.cpu().numpy(), totals, flags=flags.cpu().numpy(),
                                  batch_size=max(grids.shape[0], 1))
        return torch.as_tensor(np.asarray(out, dtype=np.float64), device=grids.device)
    return torch.where(flags, 1.0, p)


# --------------------------------------------------------------------------- tie-break hash
_MASK32 = 0xFFFFFFFF


def _mul32(x: torch.Tensor, m: int) -> torch.Tensor:
    """``x * m`` modulo 2**32 for ``x`` in [0, 2**32) (int64, in halves: no overflow)."""
    hi = ((x >> 16) * m) & 0xFFFF
    return ((hi << 16) + (x & 0xFFFF) * m) & _MASK32


def _mix32(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash (the "lowbias32" mixer) of int64 values in [0, 2**32)."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def tie_hash(seeds: torch.Tensor, moves: torch.Tensor, cells: int) -> torch.Tensor:
    """A deterministic pseudo-random int64 in [0, 2**32) per (game seed, move number, cell).

    Parameters
    ----------
    seeds, moves : Tensor of int64, (N,)
        The games' seeds (below 2**63) and move counts.
    cells : int
        Cells per board.

    Returns
    -------
    Tensor of int64, (N, cells)
    """
    dev = seeds.device
    key = _mix32(_mix32(_mix32(seeds & _MASK32) ^ (seeds >> 32)) ^ (moves & _MASK32))
    cell = _mix32(torch.arange(1, cells + 1, device=dev, dtype=torch.int64) ^ 0x5BD1E995)
    return _mix32(key[:, None] ^ cell[None, :])


# --------------------------------------------------------------------------- pure neural play
@dataclass
class BatchedResults:
    """Per-game results of :func:`play_batched`, in the order of its seeds (numpy arrays).

    Attributes
    ----------
    seeds : int64
    won, lost : bool
        How each game ended. A game that is neither was stopped with nothing left to
        open (which a game in play never reaches: its solver's flags never outnumber
        the mines).
    revealed_safe : int64
        Safe cells revealed when the game ended.
    moves : int64
        Cells clicked, the first click included (``len(GameRecord.moves)``).
    guesses : int64
        Moves that were guesses (``GameRecord.guesses``).
    flags : int64
        Flags on the board at the end.
    model_calls : int64
        Boards the model was asked about (``GameRecord.model_calls``).
    """

    seeds: np.ndarray
    won: np.ndarray
    lost: np.ndarray
    revealed_safe: np.ndarray
    moves: np.ndarray
    guesses: np.ndarray
    flags: np.ndarray
    model_calls: np.ndarray

    def __len__(self) -> int:
        return len(self.seeds)

    @property
    def win_rate(self) -> float:
        return float(self.won.mean()) if len(self) else float("nan")


_COUNTERS = ("guesses", "model_calls")


def _ranked_first(p: torch.Tensor, unknown: torch.Tensor, grid: torch.Tensor, tie_break: str,
                  tolerance: float, seeds: torch.Tensor, moves: torch.Tensor) -> torch.Tensor:
    """The flat index of each board's first cell in :func:`~nnsweeper.solvers.ranking.rank_cells`
    order (with ``coarse_ties``), exact ties broken by :func:`tie_hash`."""
    from nnsweeper.solvers.ranking import check_tie_break

    check_tie_break(tie_break)
    n, r, c = p.shape
    level = torch.floor(p / tolerance) if tolerance > 0 else p
    keys = [level]
    if tie_break == "prob_zero":
        safe = 1.0 - torch.where(grid < 0, p, 0.0)
        zero = safe * _neighbour_product(safe)
        keys.append(-torch.floor(zero / tolerance) if tolerance > 0 else -zero)
    elif tie_break == "fewest_covered_neighbours":
        keys.append(_neighbour_sum(grid < 0).double())
    keys.append(tie_hash(seeds, moves, r * c).view(n, r, c).double())  # exact below 2**53
    best = unknown
    for key in keys:
        low = torch.where(best, key, torch.inf).amin((1, 2), keepdim=True)
        best = best & (key == low)
    return torch.where(best.view(n, -1), torch.arange(r * c, device=p.device), r * c).amin(1)


def _pool_interior(p: torch.Tensor, grid: torch.Tensor, flags: torch.Tensor) -> torch.Tensor:
    """:func:`nnsweeper.solvers.neural.pool_interior` of boards (B, rows, cols)."""
    interior = (grid < 0) & ~flags & ~_dilate(grid >= 0)
    count = interior.sum((1, 2), keepdim=True)
    mean = torch.where(interior, p, 0.0).sum((1, 2), keepdim=True) / count.clamp(min=1)
    return torch.where(interior, mean, p)


def _solver_model(solver, device):
    """The solver's model on ``device`` (a copy when it lives elsewhere) and that device."""
    model = solver.model
    params = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
    here = params[0].device if params else torch.device("cpu")
    dev = here if device is None else _device(device)
    if params and dev != here:
        model = copy.deepcopy(model).to(dev)
    return model, dev


def _pure_turn(solver, model, state: dict, rules: Rules, batch_size: int) -> None:
    """One turn of the pure policy in every game of ``state["games"]`` (none is over), the model
    reading ``batch_size`` boards per forward pass."""
    games = state["games"]
    r, c, rc = rules.rows, rules.cols, rules.cells
    dev = games.device
    grid = games.observe()
    flags = games.flags
    unknown = games.covered & ~flags
    stuck = ~unknown.any((1, 2))
    p = torch.cat([predict_tensor(model, grid[k : k + batch_size], rules.mines, flags[k : k + batch_size])
                   for k in range(0, len(games), batch_size)])
    if solver.pool_interior:
        p = _pool_interior(p, grid, flags)
    state["model_calls"] += ~stuck
    # Cells the model rates almost surely mines are flagged, while flags do not outnumber the mines.
    sure = unknown & (p > solver.flag_above)
    n_sure = sure.sum((1, 2))
    sure &= ((n_sure > 0) & (flags.sum((1, 2)) + n_sure <= rules.mines))[:, None, None]
    flags = flags | sure
    unknown = unknown & ~sure
    # Every cell it rates almost surely safe is opened; without one, its safest cell.
    low = unknown & (p < solver.open_below)
    has_low = low.any((1, 2))
    guessing = ~has_low & ~stuck
    guess = _ranked_first(p, unknown, grid, solver.tie_break, solver.tolerance, state["seed"], games.moves)
    pick = torch.zeros((len(games), rc), dtype=torch.bool, device=dev)
    pick.scatter_(1, guess.clamp(max=rc - 1)[:, None], guessing[:, None])
    games.set_flags(flags, check=False)
    games.reveal_many(torch.where(has_low[:, None, None], low, pick.view(-1, r, c)), check=False)
    state["guesses"] += guessing
    state["stopped"] |= stuck


def play_batched(solver, rules: Rules, seeds: Sequence[int], *, device=None, batch_size: int | None = None,
                 in_play: int | None = None) -> BatchedResults:
    """Play a pure :class:`~nnsweeper.solvers.NeuralSolver`'s policy on :class:`BatchedGames`.

    Every decision of the solver's pure turn, for all games at once on the device:
    cells the model rates above ``flag_above`` are flagged (when flags and new ones
    do not outnumber the mines), every unknown cell it rates below ``open_below`` is
    opened in one move (:meth:`BatchedGames.reveal_many`), and otherwise the unknown
    cell first in :func:`~nnsweeper.solvers.ranking.rank_cells` order (lowest
    probability level ``floor(p / tolerance)``, then the solver's ``tie_break`` in
    levels of ``tolerance``) is opened; ``pool_interior`` as the solver does. Games
    that end leave the batch and new ones take their places, so that up to
    ``in_play`` games play every turn.

    Exact ties (cells equal in both levels) are broken by :func:`tie_hash` of the
    game's seed, its move count and the cell, computed on the device, where
    :meth:`~nnsweeper.solvers.NeuralSolver.play_many` draws them from the game's
    numpy generator: a game reaching such a tie can go another way than there
    (and float noise between batches of different sizes can move a probability
    across a level's edge now and then), so single games may differ while win
    rates agree within their intervals (``benchmarks/bench_batched.py --engine
    torch`` compares them).

    Parameters
    ----------
    solver : NeuralSolver
        A pure solver (``hybrid=False``); its model (MineCNN or MineGNN run on the
        device; another model is asked through its ``predict_proba`` on the host).
    rules : Rules
    seeds : sequence of int
        One game per seed: the layout of ``Game(rules, seed)``.
    device : str or torch.device, optional
        Where the games and the model run (default: the model's device; a model on
        another device is copied there).
    batch_size : int, optional
        Boards per forward pass (default: the solver's ``batch_size``). On a CPU,
        a few hundred boards per pass run faster per board than thousands (their
        activations stay in the caches).
    in_play : int, optional
        Games played in lockstep (default: ``max(batch_size, 1024)``); each turn
        of theirs is one tensor operation per step of the policy, and their boards
        go to the model ``batch_size`` at a time.

    Returns
    -------
    BatchedResults

    Raises
    ------
    ValueError
        A hybrid solver, or a bad ``batch_size`` or ``in_play``.
    """
    from nnsweeper.solvers.base import first_click_cell

    if getattr(solver, "hybrid", True):
        raise ValueError("play_batched plays the pure policy; give a NeuralSolver with hybrid=False")
    if not isinstance(rules, Rules):
        raise InvalidRulesError(f"rules must be a Rules instance; got {type(rules).__name__}")
    seeds = _check_seeds(seeds)
    batch_size = check_int("batch_size", solver.batch_size if batch_size is None else batch_size, 1)
    in_play = check_int("in_play", max(batch_size, 1024) if in_play is None else in_play, 1)
    model, dev = _solver_model(solver, device)
    r, c = rules.rows, rules.cols
    total = len(seeds)
    if solver.start == "random":
        # The solver's first draw from default_rng(seed), the game rng of the harness.
        cells = [first_click_cell("random", r, c, np.random.default_rng(int(s))) for s in seeds]
    else:
        cells = [first_click_cell(solver.start, r, c)] * total
    starts = np.array([i * c + j for i, j in cells], dtype=np.int64)
    out = {name: np.zeros(total, dtype=np.int64) for name in ("revealed_safe", "moves", "guesses", "flags",
                                                              "model_calls")}
    won = np.zeros(total, dtype=bool)
    lost = np.zeros(total, dtype=bool)

    state: dict = {"games": None, "slot": None, "seed": None, "stopped": None,
                   **{k: None for k in _COUNTERS}}
    per_game = ("slot", "seed", "stopped", *_COUNTERS)

    def collect() -> None:
        """Write down the games that ended (or have nothing left to open) and drop them."""
        games = state["games"]
        over = games.done | state["stopped"]
        if not bool(over.any()):
            return
        idx = torch.nonzero(over)[:, 0]
        at = state["slot"][idx].cpu().numpy()
        won[at] = games.won[idx].cpu().numpy()
        lost[at] = games.lost[idx].cpu().numpy()
        out["revealed_safe"][at] = games.revealed[idx].cpu().numpy()
        out["moves"][at] = games.moves[idx].cpu().numpy()
        out["flags"][at] = games.flags[idx].sum((1, 2)).cpu().numpy()
        for k in _COUNTERS:
            out[k][at] = state[k][idx].cpu().numpy()
        keep = torch.nonzero(~over)[:, 0]
        state["games"] = games.take(keep)
        for k in per_game:
            state[k] = state[k][keep]

    def fill(queued: int) -> int:
        """Start new games (their first click made) in the free places; returns the games started."""
        games = state["games"]
        active = 0 if games is None else len(games)
        room = min(in_play - active, total - queued)
        # New games join in groups, not one by one, unless the batch runs dry.
        if room <= 0 or (room < max(1, in_play // 16) and queued + room < total and active > 0):
            return queued
        new = BatchedGames(rules, seeds[queued : queued + room], dev)
        new.reveal(torch.as_tensor(starts[queued : queued + room], device=dev), check=False)
        added = {
            "slot": torch.arange(queued, queued + room, device=dev),
            "seed": torch.as_tensor(new.seeds, device=dev),
            "stopped": torch.zeros(room, dtype=torch.bool, device=dev),
            **{k: torch.zeros(room, dtype=torch.int64, device=dev) for k in _COUNTERS},
        }
        if games is None:
            state["games"] = new
            state.update(added)
        else:
            state["games"] = BatchedGames.cat([games, new])
            for k in per_game:
                state[k] = torch.cat([state[k], added[k]])
        return queued + room

    modes = [(m, m.training) for m in model.modules()] if isinstance(model, torch.nn.Module) else []
    try:
        if modes:
            model.eval()
        with torch.inference_mode():
            queued = 0
            while True:
                queued = fill(queued)
                collect()
                if len(state["games"]) == 0:
                    if queued == total:
                        break
                    continue
                _pure_turn(solver, model, state, rules, batch_size)
                collect()
    finally:
        for m, mode in modes:
            m.training = mode
    return BatchedResults(seeds=seeds, won=won, lost=lost, **out)
