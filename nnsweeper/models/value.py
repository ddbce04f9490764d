"""A state-value network: the chance that the reference policy wins from a position.

:class:`ValueGNN` reads the frontier/constraint graph of a position
(:func:`nnsweeper.features.build_graph_batch`) with the exact engine's output added:
every frontier cell carries its exact P(mine) and whether it is proved safe, proven
mines count as flags, and the board-wide inputs add absolute sizes (a position's
value depends on how many guesses are left to make, not only on fractions). A few
rounds of message passing as in :class:`~nnsweeper.models.MineGNN`, then mean and max
pooling over the graph and a small MLP give one logit per position.

The value solvers (:mod:`nnsweeper.solvers.value`) use it one step ahead: the engine
gives the exact share of layouts in which a candidate guess is safe and shows each
number, and the network values each board that would follow.

:func:`value_inputs` builds the inputs from positions and their analyses.

Both networks are :class:`~nnsweeper.models.MineModel` subclasses registered as the
architectures ``value-gnn`` and ``value-cnn`` with ``target="value"``
(:data:`~nnsweeper.models.VALUE_ARCHITECTURES`), so that the one checkpoint module
(:func:`~nnsweeper.models.save_checkpoint`, :func:`~nnsweeper.models.load_checkpoint`)
writes and reads them; :func:`save_value_model` / :func:`load_value_model` are thin
wrappers kept for their callers. Checkpoints of the older value format
(``"nnsweeper-value-model"``, the bundled ``value-gnn.json``) are read by the
checkpoint module too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import torch
from torch import nn

from nnsweeper import features
from nnsweeper.grid import dilate
from nnsweeper.observation import Observations

from .base import MineModel
from .checkpoint import WEIGHTS_DIR, CheckpointError, load_checkpoint, save_checkpoint
from .cnn import ResidualBlock
from .config import LEGACY_ARCHS, ModelConfig, ModelError, ValueConfig
from .gnn import CELL_IN, CELL_NEAR, CONSTRAINT_HAS, make_conv

if TYPE_CHECKING:
    from torch_geometric.data import HeteroData

__all__ = ["VALUE_CELL_FEATURES", "VALUE_GRID_CHANNELS", "VALUE_GLOBAL_FEATURES", "LEGACY_ARCHS",
           "ValueConfig", "ValueNet", "ValueGNN", "ValueCNN", "make_value_net", "value_inputs",
           "value_grid_inputs",
           "predict_values", "position_value", "save_value_model", "load_value_model", "VALUE_FORMAT",
           "position_batches", "position_inputs", "predict_positions", "value_metrics"]

#: Columns of a value graph's cell features: the probability model's, then the engine's.
VALUE_CELL_FEATURES: tuple[str, ...] = (*features.CELL_FEATURES, "probability", "proved_safe")
#: Board-wide inputs: the probability model's fractions, then absolute figures.
VALUE_GLOBAL_FEATURES: tuple[str, ...] = (
    *features.GLOBAL_FEATURES,
    "unknown_cells_per_100",
    "mines_left_per_100",
    "frontier_cells_per_100",
    "proved_safe_cells_per_10",
    "interior_probability",
    "best_safety",
    "log_layouts_per_100",
)
#: The ``format`` of the value checkpoints written before the value networks joined the
#: architecture registry; :func:`~nnsweeper.models.load_checkpoint` still reads them.
VALUE_FORMAT = "nnsweeper-value-model"
_NODES = ("cell", "constraint")


def _position_arrays(grids, total_mines, flags, probabilities, log_layouts):
    """The shared part of both inputs: boards with proven mines flagged, and the globals' extra columns."""
    g = np.asarray(grids, dtype=np.int8)
    p = np.asarray(probabilities, dtype=np.float64)
    covered = g < 0
    mines = np.asarray(flags, dtype=bool) | (covered & (p == 1.0))
    totals = np.asarray(total_mines, dtype=np.int64)
    unknown = covered & ~mines
    frontier = unknown & dilate(g >= 0)
    n_unknown = unknown.sum(axis=(1, 2))
    interior = unknown & ~frontier
    n_interior = interior.sum(axis=(1, 2))
    inner = np.where(n_interior > 0, (p * interior).sum(axis=(1, 2)) / np.maximum(n_interior, 1), 0.0)
    safe = unknown & (p == 0.0)
    open_ = np.where(unknown, p, 2.0)
    best = np.where(n_unknown > 0, 1.0 - np.minimum(open_.min(axis=(1, 2)), 1.0), 1.0)
    extra = np.stack([
        n_unknown / 100, (totals - mines.sum(axis=(1, 2))) / 100, frontier.sum(axis=(1, 2)) / 100,
        safe.sum(axis=(1, 2)) / 10, inner, best, np.asarray(log_layouts, dtype=np.float64) / 100,
    ], axis=1).astype(np.float32)
    return g, p, mines, totals, safe, extra


def value_inputs(grids: np.ndarray, total_mines: np.ndarray, flags: np.ndarray, probabilities: np.ndarray,
                 log_layouts: np.ndarray) -> HeteroData:
    """The batched value graph of positions of one shape.

    Parameters
    ----------
    grids : ndarray of int, (B, rows, cols)
        Visible boards.
    total_mines : ndarray of int, (B,)
    flags : ndarray of bool, (B, rows, cols)
        Known mines (flags); the engine's proven mines are added to them.
    probabilities : ndarray of float, (B, rows, cols)
        The exact P(mine) of each board (:func:`nnsweeper.analyze`) with those flags.
    log_layouts : ndarray of float, (B,)
        Natural log of each board's number of layouts.
    """
    g, p, mines, totals, _, extra = _position_arrays(grids, total_mines, flags, probabilities, log_layouts)
    obs = Observations.from_checked(g, totals, mines)
    data = features.build_graph_batch(obs)
    b = data["cell"].batch.numpy()
    i, j = data["cell"].pos.numpy().T
    pc = p[b, i, j].astype(np.float32)
    data["cell"].x = torch.cat([data["cell"].x, torch.from_numpy(np.stack([pc, pc == 0], axis=1)
                                                                 .astype(np.float32))], dim=1)
    data.globals = torch.cat([data.globals, torch.from_numpy(extra)], dim=1)
    return data


class ValueNet(MineModel):
    """Base of the value networks: a :class:`~nnsweeper.models.MineModel` whose target is P(win)
    per position, with :meth:`build_inputs` for a batch of positions.

    Its config is :class:`ValueConfig`; an ``"arch"`` of the older value configs (``"gnn"``,
    ``"cnn"``) is read as the registered name it means (:data:`LEGACY_ARCHS`). It predicts no
    P(mine): :meth:`predict_proba` refuses, :func:`predict_values` is its prediction.
    """

    Config: ClassVar[type[ModelConfig]] = ValueConfig
    #: The kind of input it reads: value positions (no loader of mine-probability batches reads them).
    inputs: ClassVar[str] = "value"
    #: What it predicts (the ``target`` of its registry entry).
    target: ClassVar[str] = "value"

    @classmethod
    def make_settings(cls, config):
        if isinstance(config, Mapping) and config.get("arch") in LEGACY_ARCHS:
            config = {**config, "arch": LEGACY_ARCHS[config["arch"]]}
        return super().make_settings(config)

    @staticmethod
    def feature_names() -> dict[str, list[str]]:
        """The input names a checkpoint records and checks (see :mod:`nnsweeper.models.checkpoint`)."""
        return {"cell_features": list(VALUE_CELL_FEATURES),
                "constraint_features": list(features.CONSTRAINT_FEATURES),
                "grid_channels": list(VALUE_GRID_CHANNELS),
                "global_features": list(VALUE_GLOBAL_FEATURES)}

    @staticmethod
    def build_inputs(grids, total_mines, flags, probabilities, log_layouts):
        """The network's input for positions of one shape (the arguments of :func:`value_inputs`)."""
        raise NotImplementedError

    def predict_observations(self, observations: list, batch_size: int) -> list[np.ndarray]:
        raise ModelError(f"a {self.arch!r} model predicts a position's chance to win, not P(mine); "
                         f"use nnsweeper.models.value.predict_values")

    def outputs(self, batch, *, symmetric: bool = False) -> dict[str, torch.Tensor]:
        """What the training loop reads of a batch of prepared positions (a dict of their arrays,
        :class:`~nnsweeper.datasets.values.PositionBatches`): ``logit`` (one per position) and
        ``value``, the label (float32, on the model's device)."""
        if symmetric:
            raise ModelError(f"a {self.arch!r} model has no symmetric outputs")
        if not isinstance(batch, Mapping) or "value" not in batch:
            raise ModelError(f"a {self.arch!r} model is trained on prepared value positions (a dict with "
                             f"'value'), not on mine-probability batches; got {type(batch).__name__}")
        logit = self(position_inputs(self, batch, slice(None)))
        return {"logit": logit, "value": torch.as_tensor(np.asarray(batch["value"]), dtype=torch.float32,
                                                         device=logit.device)}


class ValueGNN(ValueNet):
    """Message passing over a position's value graph, pooled into one logit (P(win)).

    Parameters
    ----------
    config : dict or ValueConfig, optional
    """

    arch = "value-gnn"
    build_inputs = staticmethod(value_inputs)

    def __init__(self, config: dict | ValueConfig | None = None):
        super().__init__(config)
        config = self.settings
        h, n_glob = config.hidden, len(VALUE_GLOBAL_FEATURES)
        self.edge_types = (CELL_IN, CONSTRAINT_HAS, CELL_NEAR)
        self.encode = nn.ModuleDict({"cell": nn.Linear(len(VALUE_CELL_FEATURES), h),
                                     "constraint": nn.Linear(len(features.CONSTRAINT_FEATURES), h)})
        from torch_geometric.nn import HeteroConv  # (imported with the network, not the module: see gnn)

        self.convs = nn.ModuleList(
            HeteroConv({et: make_conv(config.conv, h) for et in self.edge_types}, aggr="sum")
            for _ in range(config.layers)
        )
        self.inject = nn.ModuleList(nn.ModuleDict({t: nn.Linear(n_glob + 2 * h, h) for t in _NODES})
                                    for _ in range(config.layers))
        self.norms = nn.ModuleList(nn.ModuleDict({t: nn.LayerNorm(h) for t in _NODES})
                                   for _ in range(config.layers))
        self.act = nn.ReLU()
        self.head = _head(4 * h + n_glob, h)

    def forward(self, data) -> torch.Tensor:
        """One logit of P(win) per graph of the batch ``data`` (from :func:`value_inputs`)."""
        dev = next(self.parameters()).device
        glob = data.globals.to(dev, torch.float32)
        n = glob.shape[0]
        batch = {t: data[t].batch.to(dev) for t in _NODES}
        h = {t: self.encode[t](data[t].x.to(dev, torch.float32)) for t in _NODES}
        edges = {et: data[et].edge_index.to(dev) for et in self.edge_types}

        from torch_geometric.utils import scatter

        def pool(reduce="mean"):
            return [scatter(h[t], batch[t], dim=0, dim_size=n, reduce=reduce) for t in _NODES]

        for conv, inject, norms in zip(self.convs, self.inject, self.norms, strict=True):
            context = torch.cat([glob, *pool()], dim=1)
            msg = conv(h, edges)
            h = {t: norms[t](h[t] + self.act(msg.get(t, 0.0) + inject[t](context)[batch[t]])) for t in _NODES}
        return self.head(torch.cat([*pool(), *pool("max"), glob], dim=1)).squeeze(1)


def _head(n_in: int, h: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, 2 * h), nn.ReLU(), nn.Linear(2 * h, h), nn.ReLU(), nn.Linear(h, 1))


#: Channels of a value CNN's input: the probability CNN's, then the engine's per cell.
VALUE_GRID_CHANNELS: tuple[str, ...] = (*features.GRID_CHANNELS, "probability", "proved_safe")


def value_grid_inputs(grids, total_mines, flags, probabilities, log_layouts) -> dict[str, torch.Tensor]:
    """The CNN's input for positions of one shape.

    ``x`` (B, len(VALUE_GRID_CHANNELS), rows, cols): the grid encoding with proven mines
    counted as flags, P(mine) at covered cells, proved-safe cells; ``globals`` (B,
    len(VALUE_GLOBAL_FEATURES)).
    """
    g, p, mines, totals, safe, extra = _position_arrays(grids, total_mines, flags, probabilities, log_layouts)
    obs = Observations.from_checked(g, totals, mines)
    grid = features.encode_grids(obs)
    prob = np.where(g < 0, p, 0.0).astype(np.float32)[:, None]
    x = np.concatenate([grid, prob, safe[:, None].astype(np.float32)], axis=1)
    glob = np.concatenate([features.batch_globals(obs), extra], axis=1)
    return {"x": torch.from_numpy(x), "globals": torch.from_numpy(glob.astype(np.float32))}


class ValueCNN(ValueNet):
    """Residual convolutions over the whole board (every covered pocket, not only the frontier),
    then mean and max pooling and an MLP: one logit of P(win) per position."""

    arch = "value-cnn"
    build_inputs = staticmethod(value_grid_inputs)

    def __init__(self, config: dict | ValueConfig | None = None):
        super().__init__(config)
        h, n_glob = self.settings.hidden, len(VALUE_GLOBAL_FEATURES)
        self.stem = nn.Sequential(nn.Conv2d(len(VALUE_GRID_CHANNELS), h, 3, padding=1), nn.ReLU())
        self.blocks = nn.ModuleList(ResidualBlock(h, 3, (1, 2, 4)[b % 3], "none", True)
                                    for b in range(self.settings.layers))
        self.head = _head(2 * h + n_glob, h)

    def forward(self, data) -> torch.Tensor:
        dev = next(self.parameters()).device
        x = data["x"].to(dev, torch.float32)
        inside = torch.ones_like(x[:, :1])
        h = self.stem(x)
        for block in self.blocks:
            h = block(h, inside)
        glob = data["globals"].to(dev, torch.float32)
        pooled = torch.cat([h.mean(dim=(2, 3)), h.amax(dim=(2, 3)), glob], dim=1)
        return self.head(pooled).squeeze(1)


def make_value_net(config: dict | ValueConfig | None = None) -> ValueNet:
    """The value network that ``config`` describes: ``arch`` "value-gnn" (default) or "value-cnn"
    (or the older "gnn", "cnn"); a :class:`ValueConfig` builds a :class:`ValueGNN`."""
    if isinstance(config, ValueConfig):
        return ValueGNN(config)
    config = dict(config or {})
    arch = config.get("arch", "value-gnn")
    arch = LEGACY_ARCHS.get(arch, arch)
    if arch not in ("value-gnn", "value-cnn"):
        raise ModelError(f"config['arch'] of a value network must be 'value-gnn' or 'value-cnn'; "
                         f"got {arch!r}")
    return MineModel.from_config({**config, "arch": arch})


# --------------------------------------------------------------------------- files
def save_value_model(path, model: ValueNet, *, extra: dict | None = None) -> Path:
    """Write ``model``'s weights to ``path`` (``.pt``) and its description beside it (``.json``):
    :func:`~nnsweeper.models.save_checkpoint`, kept under this name for its callers."""
    return save_checkpoint(path, model, extra=extra)


def load_value_model(name_or_path="value-gnn") -> ValueNet:
    """A value model: the bundled one by name (``"value-gnn"``) or a ``.pt`` file written by
    :func:`save_value_model` (or in the older value format); in eval mode on the CPU.

    Raises
    ------
    CheckpointError
        No checkpoint there, any refusal of :func:`~nnsweeper.models.load_checkpoint`,
        or a checkpoint of a probability model.
    """
    pt = WEIGHTS_DIR / "value-gnn.pt" if name_or_path == "value-gnn" else Path(name_or_path)
    if not pt.is_file() or not pt.with_suffix(".json").is_file():
        raise CheckpointError(f"no value model at {os.fspath(pt)!r} (it needs its .json beside it)")
    model = load_checkpoint(pt)
    if not isinstance(model, ValueNet):
        raise CheckpointError(f"{os.fspath(pt)!r} holds a {model.arch!r} model, not a value model")
    return model


def predict_values(model: ValueNet, boards) -> np.ndarray:
    """P(win) of each position (float64): 1 where nothing is left to reveal, else the network's.

    Parameters
    ----------
    model : ValueGNN
    boards : sequence of (Observation, BoardAnalysis)
        Positions of one shape with their exact analyses
        (:func:`nnsweeper.analyze`).
    """
    out = np.ones(len(boards), dtype=np.float64)
    todo = [k for k, (_, a) in enumerate(boards) if (a.unknown & ~a.mines).any()]
    if todo:
        obs = [boards[k][0] for k in todo]
        an = [boards[k][1] for k in todo]
        data = model.build_inputs(np.stack([o.grid for o in obs]), np.array([o.total_mines for o in obs]),
                            np.stack([o.flags for o in obs]), np.stack([a.probabilities for a in an]),
                            np.array([a.log_layouts for a in an], dtype=np.float64))
        with torch.no_grad():
            out[todo] = torch.sigmoid(model(data).double()).numpy()
    return out


def position_value(position, model="value-gnn") -> float:
    """The value network's estimate of the search solver's chance to win from ``position``.

    ``position`` is an Observation or ``(grid, total_mines[, flags])``; ``model`` a
    :class:`ValueGNN`, the bundled model's name or a ``.pt`` path.
    """
    from nnsweeper.engine import analyze
    from nnsweeper.observation import as_observation

    obs = as_observation(position) if not isinstance(position, tuple) else as_observation(*position)
    net = model if isinstance(model, ValueNet) else load_value_model(model)
    return float(predict_values(net, [(obs, analyze(obs))])[0])


# --------------------------------------------------------------------------- prepared positions
# Positions prepared by nnsweeper.datasets.values.prepare_positions: {(rows, cols): arrays}.
def position_batches(positions: dict, batch_size: int, rng: np.random.Generator | None) -> list:
    """``(shape, rows)`` batches of prepared positions, each of one board shape; with ``rng``
    shuffled within each shape and then across, else in order."""
    out = []
    for shape, arrays in positions.items():
        n = len(arrays["value"])
        order = rng.permutation(n) if rng is not None else np.arange(n)
        out += [(shape, order[k:k + batch_size]) for k in range(0, n, batch_size)]
    if rng is not None:
        out = [out[k] for k in rng.permutation(len(out))]
    return out


def position_inputs(model: ValueNet, arrays: dict, rows: np.ndarray):
    """``model``'s input for the prepared positions ``rows`` of one shape's ``arrays``."""
    return model.build_inputs(arrays["grid"][rows], arrays["total_mines"][rows], arrays["flags"][rows],
                              arrays["prob"][rows], arrays["log_layouts"][rows])


@torch.no_grad()
def predict_positions(model: ValueNet, positions: dict, batch_size: int = 256) -> dict:
    """The model's P(win) (float64) of every prepared position, per board shape, in their order."""
    model.eval()
    def run(arrays, rows):
        return torch.sigmoid(model(position_inputs(model, arrays, rows)).double()).cpu().numpy()

    return {shape: np.concatenate([run(arrays, rows)
                                   for _, rows in position_batches({shape: arrays}, batch_size, None)])
            for shape, arrays in positions.items()}


def value_metrics(model: ValueNet, positions: dict, batch_size: int = 256, *,
                  predictions: dict | None = None) -> dict:
    """Loss and errors of ``model`` on prepared positions, overall and per board size.

    ``bce``: cross-entropy against the value labels; ``mse``: squared error against
    them; ``mse_mean``: the squared error of predicting each board size's mean value
    (what the model must beat); ``brier``: squared error against the one-bit
    ``survived`` labels. ``predictions`` (from :func:`predict_positions`) spares
    running the model again.
    """
    if predictions is None:
        predictions = predict_positions(model, positions, batch_size)
    rows = {}
    for shape, arrays in positions.items():
        p = predictions[shape]
        v = arrays["value"]
        eps = 1e-7
        q = np.clip(p, eps, 1 - eps)
        rows[f"{shape[0]}x{shape[1]}"] = {
            "positions": int(v.size),
            "bce": float(-np.mean(v * np.log(q) + (1 - v) * np.log(1 - q))),
            "mse": float(np.mean((p - v) ** 2)),
            "mse_mean": float(np.var(v)),
            "brier": float(np.mean((p - arrays["survived"]) ** 2)),
            "mean_value": float(v.mean()),
            "mean_prediction": float(p.mean()),
        }
    n = sum(r["positions"] for r in rows.values())
    total = {k: sum(r[k] * r["positions"] for r in rows.values()) / n
             for k in ("bce", "mse", "mse_mean", "brier", "mean_value", "mean_prediction")}
    return {"positions": n, **total, "boards": rows}
