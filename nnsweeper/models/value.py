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

:func:`value_inputs` builds the inputs from positions and their analyses;
:func:`save_value_model` / :func:`load_value_model` keep a model as a state dict and a
JSON description (read with ``weights_only=True``).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch_geometric.data import HeteroData
from torch_geometric.nn import HeteroConv
from torch_geometric.utils import scatter

from nnsweeper import features
from nnsweeper.errors import check_int
from nnsweeper.fileio import atomic_path, file_sha256, write_text_atomic
from nnsweeper.grid import dilate
from nnsweeper.observation import Observations

from .checkpoint import WEIGHTS_DIR, CheckpointError
from .gnn import _HAS, _IN, _NEAR, _conv

__all__ = ["VALUE_CELL_FEATURES", "VALUE_GRID_CHANNELS", "VALUE_GLOBAL_FEATURES", "ValueConfig", "ValueNet",
           "ValueGNN", "ValueCNN", "make_value_net", "value_inputs", "value_grid_inputs",
           "predict_values", "position_value", "save_value_model", "load_value_model", "VALUE_FORMAT"]

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
VALUE_FORMAT = "nnsweeper-value-model"
_NODES = ("cell", "constraint")


@dataclass(frozen=True)
class ValueConfig:
    """Settings of a value network (``[model]`` of a value training config)."""

    #: "gnn" (:class:`ValueGNN`) or "cnn" (:class:`ValueCNN`).
    arch: str = "gnn"
    #: Width of the node states (GNN) or channels (CNN).
    hidden: int = 64
    #: Rounds of message passing (GNN) or residual blocks (CNN).
    layers: int = 6
    #: The GNN's torch-geometric layer (as for :class:`~nnsweeper.models.GNNConfig`).
    conv: str = "sage"

    def __post_init__(self):
        if self.arch not in ("gnn", "cnn"):
            raise ValueError(f"arch must be 'gnn' or 'cnn'; got {self.arch!r}")
        check_int("hidden", self.hidden, 1, maximum=4096)
        check_int("layers", self.layers, 0, maximum=64)
        if self.conv not in ("sage", "graph", "gatv2", "transformer"):
            raise ValueError(f"conv must be one of sage, graph, gatv2, transformer; got {self.conv!r}")


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
    obs = Observations._trusted(g, totals, mines)
    data = features.build_graph_batch(obs)
    b = data["cell"].batch.numpy()
    i, j = data["cell"].pos.numpy().T
    pc = p[b, i, j].astype(np.float32)
    data["cell"].x = torch.cat([data["cell"].x, torch.from_numpy(np.stack([pc, pc == 0], axis=1)
                                                                 .astype(np.float32))], dim=1)
    data.globals = torch.cat([data.globals, torch.from_numpy(extra)], dim=1)
    return data


class ValueNet(nn.Module):
    """Base of the value networks: settings, size, and :meth:`inputs` for a batch of positions."""

    arch = ""

    def __init__(self, config: dict | ValueConfig | None = None):
        super().__init__()
        if not isinstance(config, ValueConfig):
            config = ValueConfig(**{"arch": self.arch, **(config or {})})
        if config.arch != self.arch:
            raise ValueError(f"a {type(self).__name__} needs arch={self.arch!r}; got {config.arch!r}")
        self.settings = config

    @property
    def config(self) -> dict:
        return asdict(self.settings)

    @property
    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    @staticmethod
    def inputs(grids, total_mines, flags, probabilities, log_layouts):
        """The network's input for positions of one shape (the arguments of :func:`value_inputs`)."""
        raise NotImplementedError


class ValueGNN(ValueNet):
    """Message passing over a position's value graph, pooled into one logit (P(win)).

    Parameters
    ----------
    config : dict or ValueConfig, optional
    """

    arch = "gnn"
    inputs = staticmethod(value_inputs)

    def __init__(self, config: dict | ValueConfig | None = None):
        super().__init__(config)
        config = self.settings
        h, n_glob = config.hidden, len(VALUE_GLOBAL_FEATURES)
        self.edge_types = (_IN, _HAS, _NEAR)
        self.encode = nn.ModuleDict({"cell": nn.Linear(len(VALUE_CELL_FEATURES), h),
                                     "constraint": nn.Linear(len(features.CONSTRAINT_FEATURES), h)})
        self.convs = nn.ModuleList(
            HeteroConv({et: _conv(config.conv, h) for et in self.edge_types}, aggr="sum")
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
    obs = Observations._trusted(g, totals, mines)
    grid = features.encode_grids(obs)
    prob = np.where(g < 0, p, 0.0).astype(np.float32)[:, None]
    x = np.concatenate([grid, prob, safe[:, None].astype(np.float32)], axis=1)
    glob = np.concatenate([features._globals(totals, mines, *features._masks(g, mines)), extra], axis=1)
    return {"x": torch.from_numpy(x), "globals": torch.from_numpy(glob.astype(np.float32))}


class ValueCNN(ValueNet):
    """Residual convolutions over the whole board (every covered pocket, not only the frontier),
    then mean and max pooling and an MLP: one logit of P(win) per position."""

    arch = "cnn"
    inputs = staticmethod(value_grid_inputs)

    def __init__(self, config: dict | ValueConfig | None = None):
        super().__init__(config)
        from .cnn import _Block

        h, n_glob = self.settings.hidden, len(VALUE_GLOBAL_FEATURES)
        self.stem = nn.Sequential(nn.Conv2d(len(VALUE_GRID_CHANNELS), h, 3, padding=1), nn.ReLU())
        self.blocks = nn.ModuleList(_Block(h, 3, (1, 2, 4)[b % 3], "none", True)
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
    """The value network that ``config`` describes (``arch`` "gnn" or "cnn")."""
    arch = config.arch if isinstance(config, ValueConfig) else dict(config or {}).get("arch", "gnn")
    return (ValueCNN if arch == "cnn" else ValueGNN)(config)


# --------------------------------------------------------------------------- files
def save_value_model(path, model: ValueNet, *, extra: dict | None = None) -> Path:
    """Write ``model``'s weights to ``path`` (``.pt``) and its description beside it (``.json``)."""
    pt = Path(path)
    if pt.suffix != ".pt":
        raise CheckpointError(f"a value model's weights file must end in .pt; got {os.fspath(pt)!r}")
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    with atomic_path(pt) as tmp:
        torch.save(state, tmp)
        sha = file_sha256(tmp)
    meta = {"format": VALUE_FORMAT, "config": model.config, "cell_features": list(VALUE_CELL_FEATURES),
            "grid_channels": list(VALUE_GRID_CHANNELS), "global_features": list(VALUE_GLOBAL_FEATURES),
            "parameters": model.n_parameters,
            "sha256": sha, "extra": extra or {}}
    write_text_atomic(pt.with_suffix(".json"), json.dumps(meta, indent=1, allow_nan=False) + "\n")
    return pt


def load_value_model(name_or_path="value-gnn") -> ValueNet:
    """A value model: the bundled one by name (``"value-gnn"``) or a ``.pt`` file written by
    :func:`save_value_model`; in eval mode on the CPU."""
    pt = WEIGHTS_DIR / "value-gnn.pt" if name_or_path == "value-gnn" else Path(name_or_path)
    js = pt.with_suffix(".json")
    if not pt.is_file() or not js.is_file():
        raise CheckpointError(f"no value model at {os.fspath(pt)!r} (it needs its .json beside it)")
    try:
        meta = json.loads(js.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{os.fspath(js)!r} is not a value model description: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != VALUE_FORMAT:
        raise CheckpointError(f"{os.fspath(js)!r} is not a value model description "
                              f"(format != {VALUE_FORMAT!r})")
    if (meta.get("cell_features") != list(VALUE_CELL_FEATURES)
            or meta.get("grid_channels") != list(VALUE_GRID_CHANNELS)
            or meta.get("global_features") != list(VALUE_GLOBAL_FEATURES)):
        raise CheckpointError(f"{os.fspath(js)!r} was trained on other inputs than this nnsweeper builds")
    if file_sha256(pt) != meta.get("sha256"):
        raise CheckpointError(f"value model {os.fspath(pt)!r} is damaged or was replaced (SHA-256 mismatch)")
    try:
        model = make_value_net(meta.get("config") or {})
        model.load_state_dict(torch.load(pt, map_location="cpu", weights_only=True), strict=True)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"value model {os.fspath(pt)!r} does not load: {exc}") from None
    model.checkpoint_meta = meta
    return model.eval()


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
        data = model.inputs(np.stack([o.grid for o in obs]), np.array([o.total_mines for o in obs]),
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
