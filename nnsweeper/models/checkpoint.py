"""Saving and loading models: a ``.pt`` state dict plus a ``.json`` description.

A checkpoint ``model.pt`` holds the state dict only (tensors, read back with
``torch.load(..., weights_only=True)``, so loading never runs pickled code). Next to
it, ``model.json`` records what is needed to rebuild and trust it: the architecture
and its complete config, the feature names the model was trained on, the nnsweeper
version, the parameter count, the SHA-256 of the ``.pt`` file and any ``extra``
information of the caller (training settings, metrics). Both files are written
atomically (:func:`nnsweeper.fileio.atomic_path`).

:func:`load_checkpoint` refuses, with a :class:`CheckpointError` naming the file,
anything that would give a model other than the one saved: missing or damaged
files, another architecture or config than expected, features that changed since,
or weights that do not fit.

It holds the models of both targets (:data:`~nnsweeper.models.registry.TARGETS`): the
mine predictors and the value networks (``value-gnn``, ``value-cnn``), whose feature
names are their own (a model class with a ``feature_names()`` says which it reads). The
value checkpoints of the older format ``"nnsweeper-value-model"`` (the bundled
``value-gnn.json`` among them) are read as the checkpoint they amount to
(:func:`_legacy_value_meta`): the same state dict, so the same predictions.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from nnsweeper import features
from nnsweeper.errors import NnsweeperError
from nnsweeper.fileio import file_sha256, write_bytes_atomic, write_text_atomic

from .base import MineModel, ModelError, resolve_device
from .registry import all_architectures

__all__ = ["CheckpointError", "save_checkpoint", "save_torch", "load_checkpoint", "load_model", "WEIGHTS_DIR"]

FORMAT = "nnsweeper-checkpoint"
FORMAT_VERSION = 1

#: Folder of the weights that ship with the package (``{arch}.pt`` and ``{arch}.json``).
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"

_META_KEYS = ("format", "format_version", "arch", "config", "features", "sha256")
_LISTED = 5  # keys named in a state-dict mismatch message


class CheckpointError(NnsweeperError):
    """A checkpoint that is missing, damaged, or does not fit the model asked for."""


def _feature_names(model_class: type | None = None) -> dict[str, list[str]]:
    """The input names a model of ``model_class`` reads: the mine predictors' unless the class
    says otherwise (``feature_names()``, as the value networks do)."""
    own = getattr(model_class, "feature_names", None)
    if callable(own):
        return own()
    return {
        "grid_channels": list(features.GRID_CHANNELS),
        "cell_features": list(features.CELL_FEATURES),
        "constraint_features": list(features.CONSTRAINT_FEATURES),
    }


# The value networks' checkpoints before they joined the registry: another "format", the
# config's "arch" without its target ("gnn"), the feature lists at the top level.
_LEGACY_VALUE_FORMAT = "nnsweeper-value-model"
_LEGACY_VALUE_ARCHS = {"gnn": "value-gnn", "cnn": "value-cnn"}


def _legacy_value_meta(meta: dict) -> dict:
    """The description of this format that a value checkpoint of the older format amounts to.

    The weights are the same state dict, so the rebuilt model predicts bit-identically.
    Its constraint features were not recorded (the older format did not check them):
    the current ones are assumed.
    """
    config = meta.get("config")
    if not isinstance(config, dict) or config.get("arch") not in _LEGACY_VALUE_ARCHS:
        return meta  # refused below as a description without the required keys
    arch = _LEGACY_VALUE_ARCHS[config["arch"]]
    return {
        **meta,
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "arch": arch,
        "config": {**config, "arch": arch},
        "features": {
            "cell_features": meta.get("cell_features"),
            "constraint_features": list(features.CONSTRAINT_FEATURES),
            "grid_channels": meta.get("grid_channels"),
            "global_features": meta.get("global_features"),
        },
        "legacy_format": _LEGACY_VALUE_FORMAT,
    }


def _version() -> str:
    from nnsweeper._version import __version__

    return __version__


def _paths(path) -> tuple[Path, Path]:
    """``(weights .pt, description .json)`` of a checkpoint named by either file."""
    if not isinstance(path, str | os.PathLike):
        raise CheckpointError(f"a checkpoint path must be a str or path; got {type(path).__name__}")
    p = Path(path)
    if p.suffix == ".json":
        p = p.with_suffix(".pt")
    if p.suffix != ".pt":
        raise CheckpointError(
            f"a checkpoint path must end in .pt (or name its .json); got {os.fspath(path)!r}"
        )
    return p, p.with_suffix(".json")


def _listed(keys: list[str]) -> str:
    more = f" and {len(keys) - _LISTED} more" if len(keys) > _LISTED else ""
    return ", ".join(repr(k) for k in keys[:_LISTED]) + more


def _jsonable(value) -> Any:
    return json.loads(json.dumps(value))


# --------------------------------------------------------------------------- save
def save_torch(path, obj) -> str:
    """``torch.save`` of ``obj`` written to ``path`` atomically; returns the SHA-256 of its bytes.

    The bytes are made in memory and written by :func:`~nnsweeper.fileio.write_bytes_atomic`, so
    a write that fails (a full disk, a file-size limit) is an ``OSError`` naming ``path``, as for
    every other file: torch's own file writer raises a ``RuntimeError`` of its C++ stream
    instead, with another raised while it handles the first.
    """
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    data = buffer.getbuffer()
    write_bytes_atomic(path, data)
    return hashlib.sha256(data).hexdigest()


def save_checkpoint(path, model: MineModel, *, extra: Mapping | None = None) -> Path:
    """Write ``model``'s weights to ``path`` and its description to ``path.with_suffix(".json")``.

    Parameters
    ----------
    path : str or os.PathLike
        The weights file; must end in ``.pt``. Parent folders are created, existing
        files replaced.
    model : MineModel
        The model to save (on any device; the weights are saved as CPU tensors).
    extra : dict, optional
        JSON-able information stored under ``"extra"`` in the description.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    CheckpointError
        A path not ending in ``.pt``, a model that is not a :class:`MineModel`, or an
        ``extra`` that is not a JSON-able dict.
    """
    pt, js = _paths(path)
    if not isinstance(model, MineModel):
        raise CheckpointError(f"save_checkpoint needs a MineModel; got {type(model).__name__}")
    if extra is not None and not isinstance(extra, Mapping):
        raise CheckpointError(f"extra must be a dict; got {type(extra).__name__}")
    try:
        extra_json = _jsonable(dict(extra or {}))
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"extra must be JSON-able ({exc})") from None

    state = {k: v.detach().to("cpu").clone() for k, v in model.state_dict().items()}
    sha = save_torch(pt, state)
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "arch": model.arch,
        "config": _jsonable(model.config),
        "features": _feature_names(type(model)),
        "nnsweeper_version": _version(),
        "torch_version": torch.__version__,
        "parameters": model.n_parameters,
        "weights": pt.name,
        "sha256": sha,
        "extra": extra_json,
    }
    write_text_atomic(js, _description_text(meta))
    return pt


def _description_text(meta: dict) -> str:
    """The description as JSON, indented, with each seed stream of ``extra`` on one line (a
    checkpoint trained over many datasets carries thousands of them)."""
    streams = (meta.get("extra") or {}).get("data_seed_streams")
    if not isinstance(streams, list) or not streams:
        return json.dumps(meta, indent=1) + "\n"
    marker = "\0seed streams\0"
    text = json.dumps({**meta, "extra": {**meta["extra"], "data_seed_streams": marker}}, indent=1)
    rows = ",\n   ".join(json.dumps(s, separators=(", ", ": ")) for s in streams)
    return text.replace(json.dumps(marker), "[\n   " + rows + "\n  ]", 1) + "\n"


# --------------------------------------------------------------------------- load
def _read_meta(pt: Path, js: Path) -> dict:
    if not js.is_file():
        raise CheckpointError(f"checkpoint description {os.fspath(js)!r} does not exist (it must sit next to "
                              f"the weights {pt.name!r})")
    try:
        meta = json.loads(js.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(
            f"checkpoint description {os.fspath(js)!r} is not readable JSON ({exc})"
        ) from None
    if isinstance(meta, dict) and meta.get("format") == _LEGACY_VALUE_FORMAT:
        meta = _legacy_value_meta(meta)
    if not isinstance(meta, dict) or any(k not in meta for k in _META_KEYS):
        raise CheckpointError(
            f"checkpoint description {os.fspath(js)!r} must be an object with the keys "
            f"{', '.join(_META_KEYS)}"
        )
    if meta["format"] != FORMAT or meta["format_version"] != FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint description {os.fspath(js)!r} has format {meta['format']!r} version "
            f"{meta['format_version']!r}; this nnsweeper reads {FORMAT!r} version {FORMAT_VERSION}"
        )
    if not isinstance(meta["config"], dict) or meta["config"].get("arch") != meta["arch"]:
        raise CheckpointError(
            f"checkpoint description {os.fspath(js)!r} has a config that does not match its arch "
            f"{meta['arch']!r}: {meta['config']!r}"
        )
    return meta


def _check_expected(meta: dict, expected, js: Path) -> None:
    if expected is None:
        return
    if not isinstance(expected, Mapping):
        raise CheckpointError(f"expected must be a dict of config keys; got {type(expected).__name__}")
    config = meta["config"]
    where = f"checkpoint {os.fspath(js)!r}"
    if "arch" in expected and expected["arch"] != meta["arch"]:
        raise CheckpointError(
            f"{where} holds a {meta['arch']!r} model; expected arch {expected['arch']!r}"
        )
    for key, want in expected.items():
        if key not in config:
            raise CheckpointError(
                f"expected key {key!r} is not a config key of the {meta['arch']!r} model in {where} "
                f"(keys: {', '.join(config)})"
            )
        try:
            want_json = _jsonable(list(want) if isinstance(want, tuple) else want)
        except (TypeError, ValueError):
            want_json = want
        if want_json != config[key]:
            raise CheckpointError(f"{where} has config[{key!r}] = {config[key]!r}; expected {want!r}")


def _check_features(meta: dict, js: Path) -> None:
    saved = meta["features"]
    if not isinstance(saved, dict):
        raise CheckpointError(f"checkpoint description {os.fspath(js)!r} has no feature lists")
    arch = all_architectures().get(meta["arch"])
    for name, current in _feature_names(arch.model_class() if arch is not None else None).items():
        if saved.get(name) != current:
            raise CheckpointError(
                f"checkpoint {os.fspath(js)!r} was trained on {name} {saved.get(name)!r}, but this nnsweeper "
                f"computes {current!r}; the model does not fit the current features"
            )


def _check_state(model: MineModel, state, pt: Path) -> None:
    where = f"checkpoint {os.fspath(pt)!r}"
    if not isinstance(state, Mapping) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(
            f"{where} must hold a state dict (names to tensors); got {type(state).__name__}"
        )
    own = model.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"missing keys {_listed(missing)}")
        if unexpected:
            parts.append(f"unexpected keys {_listed(unexpected)}")
        raise CheckpointError(
            f"{where} does not fit a {model.arch!r} model with its config: {'; '.join(parts)}"
        )
    wrong = [k for k in own if tuple(state[k].shape) != tuple(own[k].shape)]
    if wrong:
        detail = ", ".join(
            f"{k!r} {tuple(state[k].shape)} instead of {tuple(own[k].shape)}" for k in wrong[:_LISTED]
        )
        raise CheckpointError(f"{where} has tensors of the wrong shape for its config: {detail}")


def load_checkpoint(path, *, expected: Mapping | None = None, device="cpu") -> MineModel:
    """Rebuild the model saved by :func:`save_checkpoint`.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint's ``.pt`` file (or its ``.json``).
    expected : dict, optional
        Config keys the checkpoint must have with these values (e.g. ``{"arch":
        "gnn"}`` or the model part of a training config).
    device : {"cpu", "cuda", "cuda:N", "auto"} or torch.device, default "cpu"
        Where to put the model.

    Returns
    -------
    MineModel
        The model in eval mode, on ``device``; its description (the JSON) is in
        ``model.checkpoint_meta``.

    Raises
    ------
    CheckpointError
        Naming the file: it is missing; the JSON is unreadable or of another format;
        the ``.pt`` is truncated or altered (SHA-256 mismatch) or ``torch.load``
        fails; the architecture or a config value differs from ``expected``; the
        feature names differ from :mod:`nnsweeper.features`; the state dict's keys or
        shapes do not fit the config.
    ModelError
        An unusable ``device``.
    """
    pt, js = _paths(path)
    dev = resolve_device(device)
    if not pt.is_file():
        raise CheckpointError(f"checkpoint {os.fspath(pt)!r} does not exist")
    meta = _read_meta(pt, js)
    _check_expected(meta, expected, js)
    _check_features(meta, js)

    sha = file_sha256(pt)
    if sha != meta["sha256"]:
        raise CheckpointError(
            f"checkpoint {os.fspath(pt)!r} is damaged or was replaced: its sha256 {sha} differs from "
            f"{meta['sha256']} recorded in {js.name!r}"
        )
    try:
        model = MineModel.from_config(meta["config"])
    except ModelError as exc:
        raise CheckpointError(
            f"checkpoint description {os.fspath(js)!r} has an unusable config: {exc}"
        ) from None
    try:
        state = torch.load(pt, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for damaged files
        raise CheckpointError(
            f"checkpoint {os.fspath(pt)!r} cannot be read by torch.load ({type(exc).__name__}: {exc})"
        ) from None
    _check_state(model, state, pt)
    model.load_state_dict(state, strict=True)
    model.checkpoint_meta = meta
    return model.to(dev).eval()


def load_model(name_or_path, *, device="cpu", arch: str | None = None) -> MineModel:
    """A bundled model by name (``"cnn"``, ``"gnn"``, ``"value-gnn"``), or a checkpoint by path.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        The name of an architecture that ships weights (``bundled`` in
        :data:`~nnsweeper.models.ARCHITECTURES` or :data:`~nnsweeper.models.VALUE_ARCHITECTURES`)
        for ``nnsweeper/models/weights/{name}.pt``;
        anything else is the path of a checkpoint (see :func:`load_checkpoint`).
    device : str or torch.device, default "cpu"
        As for :func:`load_checkpoint`.
    arch : str, optional
        The architecture the caller needs; a checkpoint of another one is refused.

    Returns
    -------
    MineModel
        In eval mode, on ``device``.

    Raises
    ------
    CheckpointError
        No bundled weights for that name in this installation, a path that is no
        checkpoint, or any of the refusals of :func:`load_checkpoint`.
    """
    bundled = [a.name for a in all_architectures().values() if a.bundled]
    if isinstance(name_or_path, str) and name_or_path in bundled:
        weights = WEIGHTS_DIR / f"{name_or_path}.pt"
        if not weights.is_file() or not weights.with_suffix(".json").is_file():
            raise CheckpointError(
                f"no bundled weights for {name_or_path!r} in this installation (looked for "
                f"{os.fspath(weights)} and its .json); train a model and pass its checkpoint path instead"
            )
        if arch is not None and arch != name_or_path:
            raise CheckpointError(f"the bundled {name_or_path!r} model is not a {arch!r} model")
        return load_checkpoint(weights, expected={"arch": name_or_path}, device=device)
    if not isinstance(name_or_path, str | os.PathLike):
        raise CheckpointError(
            f"name_or_path must be a model name ({', '.join(bundled)}) or a checkpoint path; "
            f"got {name_or_path!r}"
        )
    pt = Path(name_or_path)
    if not pt.exists():
        raise CheckpointError(
            f"{os.fspath(name_or_path)!r} is neither a bundled model name ({', '.join(bundled)}) nor an "
            f"existing checkpoint file"
        )
    return load_checkpoint(pt, device=device, expected=None if arch is None else {"arch": arch})
