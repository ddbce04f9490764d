"""A fully convolutional mine predictor over the grid encoding.

:class:`MineCNN` reads :func:`nnsweeper.features.encode_grid` channels and gives one
logit per cell. Every layer keeps the board size (no pooling, "same" padding), so
one network runs on boards of any size. Dilated residual blocks let the receptive
field (:attr:`MineCNN.receptive_field`) grow fast enough to follow long chains of
constraints across the board. :meth:`MineCNN.predict_tensor` runs it on boards held
as tensors on the device, its input built there (:func:`encode_grids_tensor`).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import torch
from torch import nn

from nnsweeper import features
from nnsweeper.grid import apply_symmetry, board_symmetries, invert_symmetry

from .base import MineModel, board_batches, tensor_totals
from .config import CNNConfig, ModelError

__all__ = ["MineCNN", "CNNConfig", "ResidualBlock", "SymmetricConv2d", "encode_grids_tensor"]

_REQUIRED_KEYS = ("x", "prob", "mine", "unknown", "frontier")


def _norm(kind: str, channels: int) -> nn.Module:
    if kind == "group":
        # Per-board statistics only (no running averages): train and eval behave alike.
        return nn.GroupNorm(math.gcd(channels, 8), channels)
    return nn.Identity()


def kernel_orbits(kernel: int) -> np.ndarray:
    """The orbit of each position of a ``kernel`` x ``kernel`` kernel under the square's eight
    symmetries: (kernel, kernel) int64, orbits numbered by distance from the centre.

    Two positions share an orbit when one of the symmetries (rotations by quarter turns,
    mirror images) maps one onto the other: their offsets from the centre ``(a, b)`` have the
    same ``max(|a|, |b|)`` and ``min(|a|, |b|)``, the orbit's key, and orbits are numbered in
    the order of their keys. For 3x3: 0 the centre, 1 the four edge cells, 2 the four corners.
    """
    half = kernel // 2
    offsets = np.abs(np.arange(kernel) - half)
    a, b = np.meshgrid(offsets, offsets, indexing="ij")
    keys = np.maximum(a, b) * kernel + np.minimum(a, b)
    return np.unique(keys, return_inverse=True)[1].reshape(kernel, kernel).astype(np.int64)


class SymmetricConv2d(nn.Module):
    """A 2-d convolution whose every kernel is invariant under the square's eight symmetries.

    One weight per orbit of kernel positions (:func:`kernel_orbits`) and output-input
    channel pair, spread over the kernel at each call: for any symmetry ``s`` of the board
    (zero padding is symmetric too), ``conv(s(x)) == s(conv(x))`` up to float rounding, so a
    network of such convolutions, pointwise maps and board-wide means commutes with the
    board's symmetries by construction. Parameters ``(in, out, kernel, padding, dilation)``
    as :class:`torch.nn.Conv2d`'s; initialised as it is (uniform, bound ``1/sqrt(fan_in)``).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel: int, padding: int = 0, dilation: int = 1):
        super().__init__()
        orbits = kernel_orbits(kernel)
        self.register_buffer("orbits", torch.from_numpy(orbits), persistent=False)
        self.padding, self.dilation = padding, dilation
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, int(orbits.max()) + 1))
        self.bias = nn.Parameter(torch.empty(out_channels))
        bound = 1 / math.sqrt(in_channels * kernel * kernel)
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def kernel(self) -> torch.Tensor:
        """The full kernel (out, in, kernel, kernel): each position its orbit's weight."""
        return self.weight[:, :, self.orbits]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.conv2d(x, self.kernel(), self.bias, padding=self.padding, dilation=self.dilation)


def _conv(symmetric: bool, cin: int, cout: int, kernel: int, padding: int, dilation: int = 1) -> nn.Module:
    if symmetric:
        return SymmetricConv2d(cin, cout, kernel, padding=padding, dilation=dilation)
    return nn.Conv2d(cin, cout, kernel, padding=padding, dilation=dilation)


_COVERED = features.GRID_CHANNELS.index("covered")
_FLAGGED = features.GRID_CHANNELS.index("flagged")
_OUTSIDE = features.GRID_CHANNELS.index("outside")


class ResidualBlock(nn.Module):
    """Residual block: conv-norm-act, conv-norm, add the input, act; one dilation for both convs.

    With ``global_pool``, the block's first conv also gets ``Linear(mean of x over the
    board)`` added at every cell: the mean is over the board's own cells (``inside``),
    so padding does not change it. Public because the value CNN
    (:class:`~nnsweeper.models.value.ValueCNN`) is built of the same blocks.
    """

    def __init__(self, channels: int, kernel: int, dilation: int, norm: str, global_pool: bool = False,
                 symmetric: bool = False):
        super().__init__()
        self.pool = nn.Linear(channels, channels) if global_pool else None
        pad = dilation * (kernel - 1) // 2
        self.conv1 = _conv(symmetric, channels, channels, kernel, pad, dilation)
        self.norm1 = _norm(norm, channels)
        self.conv2 = _conv(symmetric, channels, channels, kernel, pad, dilation)
        self.norm2 = _norm(norm, channels)
        self.act = nn.ReLU()
        # Start as the identity: the residual branch's last scale (or conv) is zero.
        if isinstance(self.norm2, nn.GroupNorm):
            nn.init.zeros_(self.norm2.weight)
        else:
            nn.init.zeros_(self.conv2.weight)
            nn.init.zeros_(self.conv2.bias)

    def forward(self, x: torch.Tensor, inside: torch.Tensor) -> torch.Tensor:
        h = self.conv1(x)
        if self.pool is not None:
            mean = (x * inside).sum(dim=(2, 3)) / inside.sum(dim=(2, 3)).clamp_min(1.0)
            h = h + self.pool(mean)[:, :, None, None]
        h = self.act(self.norm1(h))
        h = self.norm2(self.conv2(h))
        return self.act(x + h)


class MineCNN(MineModel):
    """Dilated residual CNN: a logit of P(mine) for every cell of a board of any size.

    Parameters
    ----------
    config : dict or CNNConfig, optional
        The keys of :class:`CNNConfig` (``channels``, ``blocks``, ``dilations``,
        ``kernel``, ``norm``, ``global_pool``, ``symmetric``); missing keys take its defaults.

    Notes
    -----
    Input ``x`` (B, len(GRID_CHANNELS), rows, cols) float32; output (B, rows, cols)
    logits. GroupNorm takes its statistics over the whole (padded) board, so a board
    padded to a larger size by :func:`nnsweeper.datasets.collate_grids` gets slightly
    different logits than alone; :meth:`predict_proba` never pads (boards are grouped
    by size), and :class:`nnsweeper.datasets.ShardBatchSampler` batches one size at a
    time.
    """

    arch: ClassVar[str] = "cnn"
    Config: ClassVar[type[CNNConfig]] = CNNConfig
    inputs: ClassVar[str] = "grid"
    #: Run inference on a CPU in channels-last memory order (training keeps the default
    #: order): oneDNN's convolutions take 0.6-0.75x the time there
    #: (``benchmarks/bench_cnn_layout.py``), and the logits agree to float32 rounding.
    channels_last: ClassVar[bool] = True

    def __init__(self, config: dict | CNNConfig | None = None):
        super().__init__(config)
        c = self.settings
        ch, k = c.channels, c.kernel
        self.stem = nn.Sequential(
            _conv(c.symmetric, len(features.GRID_CHANNELS), ch, k, k // 2),
            _norm(c.norm, ch),
            nn.ReLU(),
        )
        self.blocks = nn.ModuleList(
            ResidualBlock(ch, k, self.dilation(b), c.norm, c.global_pool, c.symmetric)
            for b in range(c.blocks)
        )
        self.head = nn.Conv2d(ch, 1, 1)

    def dilation(self, block: int) -> int:
        """The dilation of residual block ``block``."""
        dil = self.settings.dilations
        return dil[block % len(dil)]

    @property
    def receptive_field(self) -> int:
        """Side of the square of input cells that one output cell depends on.

        The stem adds ``kernel - 1``, each block ``2 * (kernel - 1) * dilation`` and
        the 1x1 head nothing: ``kernel + 2 * (kernel - 1) * sum of block dilations``
        (75 for the defaults).
        """
        k = self.settings.kernel
        return k + sum(2 * (k - 1) * self.dilation(b) for b in range(self.settings.blocks))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (B, rows, cols) of encoded boards ``x`` (B, C, rows, cols)."""
        n_ch = len(features.GRID_CHANNELS)
        if x.dim() != 4 or x.shape[1] != n_ch:
            raise ModelError(f"x must have shape (boards, {n_ch}, rows, cols); got {tuple(x.shape)}")
        if self.channels_last and x.device.type == "cpu" and not torch.is_grad_enabled():
            x = x.contiguous(memory_format=torch.channels_last)
        inside = 1.0 - x[:, _OUTSIDE : _OUTSIDE + 1]
        h = self.stem(x)
        for block in self.blocks:
            h = block(h, inside)
        return self.head(h).squeeze(1)

    def forward_symmetric(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of the mean P(mine) over the symmetries of the boards ``x`` (B, C, rows, cols).

        The model reads each transformed batch; each answer is mapped back and every
        cell gets the mean of its probabilities, summed in sorted order (as
        :meth:`predict_proba` with ``symmetric=True``).
        """
        probs = torch.stack([
            invert_symmetry(torch.sigmoid(self(apply_symmetry(x, s).contiguous()).double()), s)
            for s in board_symmetries(*x.shape[-2:])
        ])
        return torch.logit(probs.sort(dim=0).values.mean(dim=0)).float()

    def outputs(self, batch, *, symmetric: bool = False) -> dict[str, torch.Tensor]:
        """One row per unknown cell of a :func:`~nnsweeper.datasets.collate_grids` batch.

        Rows follow the batch order, each board's cells in row-major order; see
        :meth:`MineModel.outputs` for the keys. Every row is one cell (weight 1),
        ``"frontier"`` is the batch's frontier mask. ``symmetric`` averages over the
        board's symmetries (:meth:`forward_symmetric`).

        Raises
        ------
        ModelError
            A batch that is not a dict with ``"x"``, ``"prob"``, ``"mine"``,
            ``"unknown"`` and ``"frontier"``.
        """
        if not isinstance(batch, dict):
            raise ModelError(f"a CNN batch must be a dict from collate_grids; got {type(batch).__name__}")
        missing = [k for k in _REQUIRED_KEYS if k not in batch]
        if missing:
            raise ModelError(
                f"a CNN batch needs the keys {', '.join(_REQUIRED_KEYS)}; missing {', '.join(missing)}"
            )
        dev = self.device
        x = batch["x"].to(dev, torch.float32)
        logits = self.forward_symmetric(x) if symmetric else self(x)
        unknown = batch["unknown"].to(dev, torch.bool)
        if unknown.shape != logits.shape:
            raise ModelError(
                f"batch['unknown'] must have the board shape {tuple(logits.shape)}; "
                f"got {tuple(unknown.shape)}"
            )
        graph = torch.arange(logits.shape[0], device=dev)[:, None, None].expand_as(logits)
        n = int(unknown.sum())
        return {
            "logit": logits[unknown],
            "prob": batch["prob"].to(dev, torch.float32)[unknown],
            "mine": batch["mine"].to(dev, torch.float32)[unknown],
            "weight": torch.ones(n, dtype=torch.float32, device=dev),
            "frontier": batch["frontier"].to(dev, torch.bool)[unknown],
            "graph": graph[unknown].to(torch.int64),
        }

    def predict_observations(self, observations: list, batch_size: int) -> list[np.ndarray]:
        out: list[np.ndarray] = [np.empty(0)] * len(observations)
        for chunk, _, _, x in board_batches(observations, batch_size, features.encode_grids):
            probs = torch.sigmoid(self(torch.from_numpy(x).to(self.device)).double()).cpu().numpy()
            # The encoding's own masks: exact 0 at revealed cells, 1 at flags.
            p = np.where(x[:, _COVERED] > 0, probs, 0.0)
            p[x[:, _FLAGGED] > 0] = 1.0
            for k, b in enumerate(chunk):
                out[b] = p[k]
        return out

    def predict_tensor(self, grids: torch.Tensor, total_mines, flags: torch.Tensor, *,
                       sparse: bool | None = None) -> torch.Tensor:
        """P(mine) maps of boards held as tensors, as :meth:`predict_proba` gives them.

        The input is built on the grids' device (:func:`encode_grids_tensor`); the
        caller sets eval mode and ``torch.inference_mode()``, and the boards are not
        checked.

        Parameters
        ----------
        grids : Tensor of int, (B, rows, cols)
            -1 covered, 0..8 revealed, on the model's device.
        total_mines : int or Tensor of int, (B,)
        flags : Tensor of bool, (B, rows, cols)
        sparse : bool, optional
            Ignored (the graph models' option; a grid has no sparse form).

        Returns
        -------
        Tensor of float64, (B, rows, cols)
            The sigmoid of the logits at covered unflagged cells, exactly 0 at revealed
            cells and 1 at flags.
        """
        unknown = (grids == -1) & ~flags
        p = torch.sigmoid(self(encode_grids_tensor(grids, total_mines, flags)).double())
        p = torch.where(unknown, p, 0.0)
        return torch.where(flags, 1.0, p)


def encode_grids_tensor(grids: torch.Tensor, total_mines, flags: torch.Tensor) -> torch.Tensor:
    """:func:`nnsweeper.features.encode_grids` computed with torch on the grids' device.

    Parameters
    ----------
    grids : Tensor of int, (B, rows, cols)
        -1 covered, 0..8 revealed (not checked: a
        :class:`~nnsweeper.batched.BatchedGames` observation).
    total_mines : int or Tensor of int, (B,)
    flags : Tensor of bool, (B, rows, cols)

    Returns
    -------
    Tensor of float32, (B, len(GRID_CHANNELS), rows, cols)
        The same values as ``encode_grids``.
    """
    ch = {name: k for k, name in enumerate(features.GRID_CHANNELS)}
    n, r, c = grids.shape
    total = tensor_totals(total_mines, n, grids.device)
    unknown = (grids == -1) & ~flags
    out = torch.zeros((n, len(features.GRID_CHANNELS), r, c), dtype=torch.float32, device=grids.device)
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
