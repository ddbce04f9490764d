"""The architectures' typed configs, without torch: checking a config, or listing its keys
(``nnsweeper train --help``), imports no model.

:class:`ModelConfig` is the base of every architecture's config (a frozen dataclass of
:class:`~nnsweeper.configs.Settings`: each field with its default and a ``#:`` comment);
:class:`CNNConfig`, :class:`GNNConfig` and :class:`ValueConfig` are the bundled
architectures' (each model class names its own as ``Config``).
:func:`check_model_config` completes and checks a model config by its ``arch``, as
:meth:`MineModel.complete_config <nnsweeper.models.MineModel.complete_config>` does,
without importing the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from nnsweeper.configs import Settings
from nnsweeper.errors import NnsweeperError, check_int

__all__ = ["CONVS", "LEGACY_ARCHS", "NORMS", "CNNConfig", "GNNConfig", "ModelConfig", "ModelError",
           "ValueConfig",
           "check_model_config", "make_settings"]

#: The ``arch`` of the older value configs and of a value training config's ``[model]``
#: (the value command implies the target), by the registered name it means.
LEGACY_ARCHS = {"gnn": "value-gnn", "cnn": "value-cnn"}
#: Normalisations that ``config["norm"]`` of a CNN can name.
NORMS: tuple[str, ...] = ("group", "none")
#: Message-passing layers that ``config["conv"]`` can name.
CONVS: tuple[str, ...] = ("sage", "graph", "gatv2", "transformer")


class ModelError(NnsweeperError):
    """A model configuration, device or model input that does not fit the model."""


@dataclass(frozen=True)
class ModelConfig(Settings):
    """Base of the architectures' typed configs (:attr:`MineModel.Config`).

    An architecture's config is a frozen dataclass derived from this one: each field
    with its default and a ``#:`` comment, its ``__post_init__`` checking the values
    (messages name the key as ``config['key']`` and raise :class:`ModelError`).
    Sequences are held as tuples; :meth:`~nnsweeper.configs.Settings.to_dict` writes
    them as lists.
    """

    _error: ClassVar[type[ValueError]] = ModelError

    @classmethod
    def _what(cls) -> str:
        return "model config"

    @classmethod
    def _label(cls, key: str) -> str:
        return f"config[{key!r}]"


def make_settings(config_class: type[ModelConfig], arch: str, config) -> ModelConfig:
    """The typed config of ``config`` (a dict, possibly partial, or a ``config_class``) for
    architecture ``arch``: unknown keys and bad values are a :class:`ModelError` naming them."""
    if isinstance(config, config_class):
        return config
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise ModelError(f"a model config must be a dict; got {type(config).__name__}")
    given = config.get("arch", arch)
    if given != arch:
        raise ModelError(f"config['arch'] must be {arch!r} for {config_class.__name__}; got {given!r}")
    keys = config_class.keys()
    unknown = [k for k in config if k != "arch" and k not in keys]
    if unknown:
        raise ModelError(f"unknown config key {unknown[0]!r} for a {arch!r} model; "
                         f"the keys are {', '.join(keys)}")
    settings = config_class(**{k: v for k, v in config.items() if k != "arch"})
    settings.to_dict()  # refuses values that JSON cannot hold
    return settings


def check_model_config(config: Mapping) -> dict[str, Any]:
    """The complete, checked config of the architecture ``config["arch"]``: a JSON-able dict,
    ``"arch"`` first; the model's module is not imported (nor torch)."""
    from nnsweeper.models.registry import all_architectures

    if not isinstance(config, Mapping):
        raise ModelError(f"a model config must be a dict; got {type(config).__name__}")
    archs = all_architectures()
    if "arch" not in config:
        raise ModelError(f"a model config needs an 'arch' key ({', '.join(archs)}); got keys {list(config)}")
    arch = config["arch"]
    if not isinstance(arch, str) or arch not in archs:
        raise ModelError(f"config['arch'] must be one of {', '.join(map(repr, archs))}; got {arch!r}")
    return {"arch": arch, **make_settings(archs[arch].config_class(), arch, config).to_dict()}


@dataclass(frozen=True)
class CNNConfig(ModelConfig):
    """The settings of a :class:`MineCNN` (``[model]`` keys of a training config with ``arch = "cnn"``)."""

    #: Width (channels) of the stem and of every residual block.
    channels: int = 32
    #: Residual blocks (0: the stem and the head only).
    blocks: int = 6
    #: Dilations of the blocks, in turn: block b has dilations[b % len(dilations)].
    dilations: tuple[int, ...] = (1, 2, 4, 8)
    #: Kernel size of the stem and of the blocks; odd, so that padding keeps the board size.
    kernel: int = 3
    #: Normalisation after each convolution: "group" (GroupNorm with gcd(channels, 8) groups) or "none".
    norm: str = "group"
    #: Each block also adds a linear map of its input's mean over the board to every cell
    #: (global context: the mines left weigh on every cell, not only those in reach).
    global_pool: bool = False
    #: Every kernel invariant under the square's eight symmetries (one weight per orbit of
    #: kernel positions: for 3x3 the centre, the four edge cells, the four corners): the
    #: network then commutes with rotations and mirror images by construction, a rotated
    #: board getting the rotated probabilities (to float rounding), on any board shape.
    symmetric: bool = False

    def __post_init__(self):
        self._int("channels", 1)
        self._int("blocks", 0)
        kernel = self._int("kernel", 1)
        if kernel % 2 == 0:
            raise ModelError(
                f"config['kernel'] must be odd so that padding keeps the board size; got {kernel}"
            )
        dil = self.dilations
        if not isinstance(dil, list | tuple) or not dil:
            raise ModelError(f"config['dilations'] must be a non-empty list of integers >= 1; got {dil!r}")
        self._set("dilations", tuple(check_int("config['dilations']", d, 1, ModelError) for d in dil))
        self._choice("norm", NORMS)
        self._bool("global_pool")
        self._bool("symmetric")


@dataclass(frozen=True)
class GNNConfig(ModelConfig):
    """The settings of a :class:`MineGNN` (``[model]`` keys of a training config with ``arch = "gnn"``)."""

    #: Width of the node states.
    hidden: int = 64
    #: Rounds of message passing (0 allowed).
    layers: int = 6
    #: The torch-geometric layer on each edge type: "sage" (SAGEConv), "graph" (GraphConv),
    #: "gatv2" (GATv2Conv) or "transformer" (TransformerConv, 4 heads).
    conv: str = "sage"
    #: Also pass messages along the (cell, near, cell) edges; the graphs are then built with them.
    cell_edges: bool = True
    #: Each round also gives every node the mean cell and constraint states of its graph
    #: (a virtual node), so that board-wide counts can be weighed against the frontier.
    global_pool: bool = True
    #: One set of round weights used in every round (a recurrent update: more rounds, same
    #: parameters), instead of weights of its own per round.
    shared: bool = False

    def __post_init__(self):
        self._int("hidden", 1)
        self._int("layers", 0)
        self._choice("conv", CONVS)
        self._bool("cell_edges")
        self._bool("global_pool")
        self._bool("shared")


@dataclass(frozen=True)
class ValueConfig(ModelConfig):
    """Settings of a value network (``[model]`` keys with ``arch = "value-gnn"`` or ``"value-cnn"``)."""

    #: Width of the node states (GNN) or channels (CNN).
    hidden: int = 64
    #: Rounds of message passing (GNN) or residual blocks (CNN).
    layers: int = 6
    #: The GNN's torch-geometric layer (as for :class:`~nnsweeper.models.GNNConfig`; the CNN keeps
    #: it unread, so that both networks share one config).
    conv: str = "sage"

    def __post_init__(self):
        self._int("hidden", 1)
        self._int("layers", 0)
        if self.hidden > 4096 or self.layers > 64:
            raise ModelError(f"config['hidden'] must be at most 4096 and config['layers'] at most 64; "
                             f"got {self.hidden} and {self.layers}")
        self._choice("conv", CONVS)
