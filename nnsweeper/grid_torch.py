"""The neighbourhood operations of :mod:`nnsweeper.grid` on torch tensors of boards.

Boards are stacked as (n, rows, cols) tensors on any device: the games held as tensors
(:class:`nnsweeper.batched.BatchedGames`), the model inputs built on the device
(:meth:`MineGNN.predict_tensor <nnsweeper.models.gnn.MineGNN.predict_tensor>`) and the
batched player read them. Each function gives what its numpy namesake gives board by
board.

The module imports torch; ``import nnsweeper`` does not import it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from nnsweeper.grid import OFFSETS

__all__ = ["dilate", "neighbour_sum", "neighbour_product", "neighbour_ids"]

_DI = tuple(di for di, _ in OFFSETS)
_DJ = tuple(dj for _, dj in OFFSETS)


def dilate(mask: torch.Tensor) -> torch.Tensor:
    """Boolean 3x3 dilation of ``mask`` (n, rows, cols), as :func:`nnsweeper.grid.dilate`."""
    return F.max_pool2d(mask[:, None].to(torch.float32), 3, stride=1, padding=1)[:, 0] > 0


def neighbour_sum(a: torch.Tensor) -> torch.Tensor:
    """Sum of the eight neighbours of every cell of ``a`` (n, rows, cols), int32 (off-board cells 0),
    as :func:`nnsweeper.grid.neighbour_sum`."""
    p = F.pad(a.to(torch.int32), (1, 1, 1, 1))
    rows = p[:, :-2] + p[:, 1:-1] + p[:, 2:]
    return rows[:, :, :-2] + rows[:, :, 1:-1] + rows[:, :, 2:] - p[:, 1:-1, 1:-1]


def neighbour_product(a: torch.Tensor) -> torch.Tensor:
    """Product of the eight neighbours of every cell (off-board cells 1), in the order of
    :data:`~nnsweeper.grid.OFFSETS`, as :func:`nnsweeper.grid.neighbour_product`."""
    _, r, c = a.shape
    p = F.pad(a, (1, 1, 1, 1), value=1.0)
    out = torch.ones_like(a)
    for di, dj in OFFSETS:
        out = out * p[:, 1 + di : r + 1 + di, 1 + dj : c + 1 + dj]
    return out


def neighbour_ids(ids: torch.Tensor, b, i, j) -> torch.Tensor:
    """Ids (from a (n, r+2, c+2) tensor padded with -1) of the 8 neighbours of cells (b, i, j): (k, 8),
    in the order of :data:`~nnsweeper.grid.OFFSETS`."""
    di = torch.tensor(_DI, device=ids.device)
    dj = torch.tensor(_DJ, device=ids.device)
    return ids[b[:, None], i[:, None] + 1 + di, j[:, None] + 1 + dj]
