"""N games of one board size in lockstep, as torch tensors on one device.

:class:`BatchedGames` holds N games of one :class:`~nnsweeper.game.Rules` as tensors of
shape (N, rows, cols) on any torch device, with the layouts of :class:`~nnsweeper.game.Game`
for the same seeds and first clicks (:func:`~nnsweeper.game.draw_layout`, the draw
``Game`` makes). Only the layouts are drawn on the host (numpy,
once per game, at its first reveal); every move after that (reveals, flood fills,
wins, losses, flags) is a whole-batch tensor operation.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from nnsweeper.errors import InvalidActionError, InvalidRulesError
from nnsweeper.game import Rules, draw_layout
from nnsweeper.grid_torch import neighbour_sum
from nnsweeper.models.base import resolve_device

__all__ = ["BatchedGames", "check_seeds"]


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
def check_seeds(seeds) -> np.ndarray:
    """``seeds`` as an int64 array of game seeds, or an InvalidRulesError."""
    values = list(seeds) if not isinstance(seeds, np.ndarray) else seeds.reshape(-1).tolist()
    if not values:
        raise InvalidRulesError("seeds must hold at least one game seed; got none")
    for s in values:
        if isinstance(s, bool | np.bool_) or not isinstance(s, numbers.Integral) or s < 0 or s >= 2**63:
            raise InvalidRulesError(f"seeds must be non-negative integers below 2**63; got {s!r}")
    return np.array([int(s) for s in values], dtype=np.int64)



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
        self.seeds = check_seeds(seeds)
        dev = resolve_device(device)
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
        dev = resolve_device(device)
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
        counts = neighbour_sum(mine)
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

