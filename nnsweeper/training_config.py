"""Training configs: the four tables of a ``train/*.toml`` file, typed, checked and described.

A run of :func:`nnsweeper.training.train` is described by a TOML config with four
tables, each a frozen dataclass here whose fields carry their defaults and, in a
``#:`` comment, what they are (``nnsweeper train --help`` lists them all,
:func:`config_help`):

``[data]`` (:class:`DataSection`)
    the dataset folder and what it must be (its manifest's SHA-256, configurations
    it must hold), the splits to train and validate on;
``[model]``
    ``arch`` (a name of :data:`nnsweeper.models.ARCHITECTURES`) and that
    architecture's keys (its ``Config``: :class:`nnsweeper.models.cnn.CNNConfig`,
    :class:`nnsweeper.models.gnn.GNNConfig`), kept as the model's complete config dict;
``[train]`` (:class:`TrainSection`)
    epochs, batch size, AdamW's learning rate and weight decay, the schedule (linear
    warm-up, then cosine decay), the target (``exact``: the exact probabilities, the
    default; ``truth``: the hard labels), device, seed, loader settings;
``[output]`` (:class:`OutputSection`)
    ``dir``: the run folder.

Every value can be overridden on the command line as ``section.key=value`` (TOML
syntax for the value: ``train.epochs=2``, ``model.dilations=[1,2]``). A checked
config is a :class:`TrainingConfig`; :meth:`TrainingConfig.to_dict` is the JSON form
that run folders (``config.json``) and checkpoints record. This module imports no
torch (checking ``[model]`` imports the model class).
"""

from __future__ import annotations

import copy
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from nnsweeper.configs import Settings, describe_keys, format_value, read_toml
from nnsweeper.errors import NnsweeperError

__all__ = [
    "TrainingError", "TrainingConfig", "DataSection", "TrainSection", "OutputSection", "SECTIONS",
    "load_config", "apply_overrides", "check_config", "config_help",
    "VALUE_TRAIN_DEFAULTS", "load_value_config", "is_value_config",
]


class TrainingError(NnsweeperError):
    """A training config, dataset or run folder that cannot be used, or a run that diverged."""


#: What a model can learn: the exact probabilities or the truth (the mines).
_TARGETS = ("exact", "truth")
#: The kinds of train.decision_loss (nnsweeper.training.objectives.decision_loss).
DECISION_LOSSES = ("risk", "listwise")


@dataclass(frozen=True)
class _Section(Settings):
    """A table of a training config: its messages name keys as ``section.key``."""

    _error: ClassVar[type[ValueError]] = TrainingError
    #: The table's name in the TOML file.
    section: ClassVar[str] = ""

    @classmethod
    def _what(cls) -> str:
        return f"[{cls.section}] table"

    @classmethod
    def _label(cls, key: str) -> str:
        return f"{cls.section}.{key}"

    def _text(self, key: str, *, optional: bool = False) -> str | None:
        """The field ``key``, which must be a string (or None when ``optional``); a path becomes a string."""
        value = getattr(self, key)
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
            self._set(key, value)
        if not isinstance(value, str) and not (optional and value is None):
            raise TrainingError(f"{self._label(key)} must be a string; got {value!r}")
        return value


@dataclass(frozen=True)
class DataSection(_Section):
    """``[data]``: the dataset to train on, and what it must be."""

    section: ClassVar[str] = "data"

    #: The dataset folder (from nnsweeper generate); required.
    path: str | None = None
    #: The SHA-256 of the dataset's manifest.json; a dataset with another is refused.
    manifest_sha256: str | None = None
    #: Configuration keys (such as "10x10-m20-safe-csp") the dataset must hold; when given,
    #: only they are trained and validated on.
    configurations: tuple[str, ...] | None = None
    #: The split to train on.
    train_split: str = "train"
    #: The split to validate on after each epoch.
    val_split: str = "val"

    def __post_init__(self):
        if not self.path:
            raise TrainingError("[data] path is required: the dataset folder to train on")
        self._text("path")
        self._text("manifest_sha256", optional=True)
        keys = self.configurations
        if keys is not None:
            if not isinstance(keys, list | tuple) or not all(isinstance(k, str) for k in keys):
                raise TrainingError(f"data.configurations must be a list of configuration keys; got {keys!r}")
            self._set("configurations", tuple(keys))
        self._text("train_split")
        self._text("val_split")


@dataclass(frozen=True)
class TrainSection(_Section):
    """``[train]``: the optimisation, the loader and the machine."""

    section: ClassVar[str] = "train"

    #: Passes over the training split.
    epochs: int = 10
    #: States per batch (fewer on big boards: a batch holds a bounded number of cells).
    batch_size: int = 128
    #: The peak learning rate of AdamW.
    lr: float = 2e-3
    #: AdamW's weight decay.
    weight_decay: float = 1e-4
    #: Share (0 to 1) of the steps spent warming the learning rate up linearly.
    warmup: float = 0.05
    #: The learning rate at the end of the cosine decay, as a share (0 to 1) of lr.
    min_lr: float = 0.02
    #: What the model learns: "exact" (the exact probabilities) or "truth" (the mines).
    target: str = "exact"
    #: Largest gradient norm (0: no clipping).
    grad_clip: float = 1.0
    #: Seed of the initial weights and of the batch order.
    seed: int = 0
    #: Where to train: "auto" (a GPU when there is one), "cpu", "cuda" or "cuda:N".
    device: str = "auto"
    #: Loader worker processes (0: load in the training process).
    num_workers: int = 0
    #: Torch threads (0: torch's default).
    threads: int = 0
    #: At most this many batches per epoch (0: all).
    max_batches: int = 0
    #: At most this many batches per validation (0: all).
    val_max_batches: int = 0
    #: Also write resume.pt every this many steps within an epoch (0: at the end of each epoch only).
    save_every: int = 0
    #: Keep the weights of every this many epochs as checkpoints/epoch-NNNN.pt (0: none): the points of
    #: a training curve (train/scaling.py scores them).
    keep_every: int = 0
    #: Shards of one board size whose states are shuffled together.
    pool: int = 4
    #: Decoded shards each loader process keeps in memory.
    cache_shards: int = 8
    #: Keep every loaded state (and built graph) in memory: later epochs skip decoding them.
    in_memory: bool = False
    #: Weight of cells the engine proves safe or mined (probability 0 or 1), against 1 for the others.
    certain_weight: float = 1.0
    #: Weight of a squared penalty on proven cells' logits beyond P = 0.01 (safe) or 0.99 (mine)
    #: (0: none; see :func:`nnsweeper.training.scoring.bce_loss`).
    certain_margin: float = 0.0
    #: Weight of the decision term (0: none): per position, the exact risk of a soft choice over the
    #: model's probabilities, or its cross-entropy toward the lowest-risk cells
    #: (:mod:`nnsweeper.training.objectives`).
    decision_weight: float = 0.0
    #: The decision term: "risk" (exact risk of the soft choice less the least) or "listwise"
    #: (cross-entropy toward the exact lowest-risk set).
    decision_loss: str = "risk"
    #: Temperature of the soft choice, in probability units.
    decision_temperature: float = 0.02
    #: Weight of a squared penalty on the logits of unproven cells beyond P = 0.01 / 0.99 (widened to
    #: their exact probability) (0: none).
    calibration_margin: float = 0.0
    #: Show each training state under a symmetry of its board drawn per epoch (grid models only).
    augment: bool = False
    #: Write TensorBoard logs into output.dir/tensorboard (needs the tensorboard package).
    tensorboard: bool = True
    #: Start from these weights instead of fresh ones (fine-tuning): a checkpoint's path or a bundled
    #: model's name ("gnn", "cnn"); its model config must be ``[model]``'s. The optimiser and the
    #: schedule start afresh.
    init: str | None = None

    def __post_init__(self):
        # Loader processes and torch threads are bounded like every other n_jobs.
        from nnsweeper.parallel import max_jobs

        for key in ("epochs", "batch_size"):
            self._int(key, 1)
        for key in ("max_batches", "val_max_batches", "save_every", "keep_every", "seed"):
            self._int(key, 0)
        for key in ("num_workers", "threads"):
            self._int(key, 0, max_jobs())
        self._int("pool", 1)
        self._int("cache_shards", 1)
        self._number("lr", above_low=True)
        self._number("weight_decay")
        self._number("warmup", 0, 1)
        self._number("min_lr", 0, 1)
        self._number("grad_clip")
        self._number("certain_weight", above_low=True)
        self._number("certain_margin")
        self._number("decision_weight")
        self._number("decision_temperature", 0, 1, above_low=True)
        self._number("calibration_margin")
        self._choice("decision_loss", DECISION_LOSSES)
        self._bool("in_memory")
        self._bool("augment")
        self._bool("tensorboard")
        self._text("init", optional=True)
        self._choice("target", _TARGETS, quoted=False)
        device = self.device
        if device not in ("auto", "cpu", "cuda") and not str(device).startswith("cuda:"):
            raise TrainingError(f"train.device must be auto, cpu or cuda; got {device!r}")

    def loader_options(self) -> dict[str, Any]:
        """The options of :func:`nnsweeper.datasets.make_loader` that this section sets."""
        return dict(batch_size=self.batch_size, seed=self.seed, num_workers=self.num_workers, pool=self.pool,
                    cache_shards=self.cache_shards, in_memory=self.in_memory, augment=self.augment)


@dataclass(frozen=True)
class OutputSection(_Section):
    """``[output]``: where the run's files go."""

    section: ClassVar[str] = "output"

    #: The run folder (new or empty; --resume continues the run in it); required.
    dir: str | None = None

    def __post_init__(self):
        if not self.dir:
            raise TrainingError("[output] dir is required: the run folder")
        self._text("dir")


#: The tables of a training config and their classes (``[model]`` is the model's own config).
SECTIONS: dict[str, type[_Section] | None] = {
    "data": DataSection, "model": None, "train": TrainSection, "output": OutputSection,
}


@dataclass(frozen=True)
class TrainingConfig:
    """A complete, checked training config (:func:`check_config`, :func:`load_config`).

    Attributes
    ----------
    data : DataSection
    model : dict
        The model's complete config, ``"arch"`` first
        (:meth:`nnsweeper.models.MineModel.complete_config`).
    train : TrainSection
    output : OutputSection
    """

    data: DataSection
    model: dict[str, Any]
    train: TrainSection
    output: OutputSection

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """The config as a fresh JSON-able dict of tables (what runs and checkpoints record)."""
        return {"data": self.data.to_dict(), "model": copy.deepcopy(self.model),
                "train": self.train.to_dict(), "output": self.output.to_dict()}

    def to_json(self, **kwargs) -> str:
        """:meth:`to_dict` as JSON (``kwargs`` go to :func:`json.dumps`)."""
        return json.dumps(self.to_dict(), **kwargs)


def _parse_value(text: str):
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text  # a bare word: a string


def apply_overrides(config: Mapping | TrainingConfig, overrides) -> dict:
    """A copy of ``config`` (as a dict of tables) with ``section.key=value`` overrides applied.

    Values are in TOML syntax (``train.epochs=2``, ``model.dilations=[1,2]``); a bare
    word is a string.

    Raises
    ------
    TrainingError
        An override that is not ``section.key=value``, an unknown section, or a
        section that is not a table.
    """
    out = config.to_dict() if isinstance(config, TrainingConfig) else copy.deepcopy(dict(config))
    for item in overrides or ():
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise TrainingError(f"an override must look like section.key=value; got {item!r}")
        dotted, text = item.split("=", 1)
        section, key = dotted.strip().split(".", 1)
        if section not in SECTIONS:
            raise TrainingError(
                f"unknown config section {section!r} in {item!r}; sections: {', '.join(SECTIONS)}"
            )
        table = out.setdefault(section, {})
        if not isinstance(table, dict):
            raise TrainingError(f"[{section}] must be a table of keys; got {table!r}")
        table[key.strip()] = _parse_value(text.strip())
    return out


def load_config(path, overrides=()) -> TrainingConfig:
    """Read a TOML training config, apply overrides, fill defaults and check it.

    Raises
    ------
    TrainingError
        A missing or malformed file, unknown sections or keys, bad values.
    """
    return check_config(apply_overrides(read_toml(path, "training config", TrainingError), overrides))


def check_config(raw: Mapping | TrainingConfig) -> TrainingConfig:
    """``raw`` (a dict of tables, or a config to check again) completed with the defaults and checked.

    Model keys are checked by the model class that ``[model] arch`` names.

    Raises
    ------
    TrainingError
        Unknown sections or keys, a missing ``[data] path`` or ``[output] dir``, bad values.
    """
    if isinstance(raw, TrainingConfig):
        raw = raw.to_dict()
    if not isinstance(raw, Mapping):
        raise TrainingError(f"a training config must be a dict of tables; got {type(raw).__name__}")
    unknown = set(raw) - set(SECTIONS)
    if unknown:
        raise TrainingError(f"unknown config section(s) {sorted(unknown)}; sections: {', '.join(SECTIONS)}")
    if is_value_config(raw):
        raw = _value_tables(raw)
    given = {}
    for section, cls in SECTIONS.items():
        table = raw.get(section, {})
        if not isinstance(table, Mapping):
            raise TrainingError(f"[{section}] must be a table of keys; got {table!r}")
        if cls is not None:
            bad = set(table) - set(cls.keys())
            if bad:
                raise TrainingError(
                    f"unknown key(s) {sorted(bad)} in [{section}]; keys: {', '.join(cls.keys())}"
                )
        given[section] = dict(table)
    data = DataSection(**given["data"])
    output = OutputSection(**given["output"])
    train = TrainSection(**given["train"])
    try:  # the model's keys are checked by its config class (no torch)
        from nnsweeper.models.config import check_model_config

        model = check_model_config(given["model"])
    except ValueError as exc:
        raise TrainingError(f"[model]: {exc}") from None
    return TrainingConfig(data=data, model=model, train=train, output=output)


def config_help(*, value: bool = False) -> str:
    """Every config key, ``section.key = default``, with what it is (the help of ``nnsweeper train``,
    or with ``value`` of ``nnsweeper train-value``: its architectures and the defaults
    :func:`load_value_config` fills in)."""
    from nnsweeper.models import ARCHITECTURES

    archs = _value_archs() if value else ARCHITECTURES
    # What load_value_config fills in for a key left out is that key's default for train-value.
    filled = {f"train.{key}": format_value(v) for key, v in VALUE_TRAIN_DEFAULTS.items()}
    filled = {**filled, "output.dir": format_value(VALUE_OUTPUT_DIR)} if value else {}
    parts = ["config keys (section.key = default; none: not set):"]
    for section, cls in SECTIONS.items():
        if cls is not None:
            rows = cls.describe(f"{section}.")
            # A key filled in is not required: its comment loses the word.
            rows = [(key, filled[key], comment.replace("; required.", ".")) if key in filled
                    else (key, default, comment) for key, default, comment in rows]
            parts.append(describe_keys(rows))
            continue
        if value:
            from nnsweeper.models.config import LEGACY_ARCHS

            legacy = ", ".join(f"{old} means {new}" for old, new in LEGACY_ARCHS.items())
            rows = [("model.arch", format_value(VALUE_ARCH),
                     f"The architecture: {', '.join(archs)} ({legacy}).")]
        else:
            rows = [("model.arch", "none", f"The architecture, required: {', '.join(archs)}.")]
        parts.append(describe_keys(rows))
        for name, arch in archs.items():
            parts.append(f"  with arch = {json.dumps(name)}:")
            parts.append(describe_keys(arch.config_class().describe("model.")))
    return "\n".join(parts)


# --------------------------------------------------------------------------- value training configs
#: The ``[train]`` defaults of a value network's config (a model of target "value") that differ
#: from a probability model's: fewer epochs and a longer warm-up.
VALUE_TRAIN_DEFAULTS = {"epochs": 8, "warmup": 0.1}
#: The architecture and the run folder of a value network's config that names none.
VALUE_ARCH, VALUE_OUTPUT_DIR = "value-gnn", "runs/value_gnn"


def _value_archs() -> dict:
    from nnsweeper.models.registry import VALUE_ARCHITECTURES

    return VALUE_ARCHITECTURES


def is_value_config(config) -> bool:
    """Whether a training config (checked, a TOML path or a dict of tables) trains a value
    network: its ``[model] arch`` is an architecture of target "value"
    (:data:`~nnsweeper.models.VALUE_ARCHITECTURES`)."""
    if isinstance(config, TrainingConfig):
        return config.model.get("arch") in _value_archs()
    if not isinstance(config, Mapping):
        config = read_toml(config, "training config", TrainingError)
    model = config.get("model")
    return isinstance(model, Mapping) and model.get("arch") in _value_archs()


def _value_tables(raw: Mapping) -> dict:
    """``raw`` with a value network's ``[train]`` defaults, and the key ``n_jobs`` of the configs
    written before the value networks joined the one loop read as ``num_workers``."""
    train = raw.get("train", {})
    if not isinstance(train, Mapping):
        return dict(raw)  # check_config names the table that is not one
    train = dict(train)
    if "n_jobs" in train:
        train.setdefault("num_workers", train.pop("n_jobs"))
    return {**raw, "train": {**VALUE_TRAIN_DEFAULTS, **train}}


def load_value_config(config, overrides=()) -> TrainingConfig:
    """A value network's training config from a TOML path or a dict of tables, checked (as
    :func:`load_config`, with the value defaults: ``nnsweeper train-value``).

    The tables are those of every training config (:class:`TrainingConfig`)::

        [data]    path = "data/values"                        # a value dataset (generate-values)
        [model]   arch = "value-gnn", hidden = 64, layers = 6, conv = "sage"   # ValueConfig
        [train]   epochs = 8, batch_size, lr, warmup = 0.1, seed, threads, num_workers, ...
        [output]  dir = "runs/value_gnn"

    ``[model] arch`` defaults to ``"value-gnn"``, and the older ``"gnn"`` and ``"cnn"`` of
    ``nnsweeper train-value`` configs name ``"value-gnn"`` and ``"value-cnn"``; their
    ``[train] n_jobs`` (processes that analyse the positions) is ``num_workers``. The
    probability target's ``[train]`` keys ``target``, ``certain_weight``, ``certain_margin``,
    ``decision_weight``, ``decision_loss``, ``decision_temperature``, ``calibration_margin``,
    ``augment``, ``pool``, ``cache_shards`` and ``in_memory`` are not read.

    Raises
    ------
    TrainingError
        A missing or malformed file, unknown sections or keys, an ``arch`` that is not a
        value architecture, bad values.
    """
    from nnsweeper.models.config import LEGACY_ARCHS

    if isinstance(config, TrainingConfig):
        config = config.to_dict()
    if not isinstance(config, Mapping):
        config = read_toml(config, "value training config", TrainingError)
    raw = apply_overrides(config, overrides)
    model = raw.get("model", {})
    if not isinstance(model, Mapping):
        raise TrainingError(f"[model] must be a table of keys; got {model!r}")
    arch = model.get("arch", VALUE_ARCH)
    arch = LEGACY_ARCHS.get(arch, arch) if isinstance(arch, str) else arch
    if arch not in _value_archs():
        raise TrainingError(f"model.arch of a value network must be one of "
                            f"{', '.join(map(repr, _value_archs()))}; got {model.get('arch')!r}")
    raw["model"] = {**model, "arch": arch}
    output = raw.get("output", {})
    if isinstance(output, Mapping):
        raw["output"] = {"dir": VALUE_OUTPUT_DIR, **output}
    return check_config(raw)
