"""Digests of the weights a solver plays with: the bytes of a checkpoint, or a model's state in memory.

A game store (:mod:`nnsweeper.evaluation.store`) records them with every chunk of
games, so that a checkpoint saved again under the same path is known for another
experiment. Nothing here imports torch: a model in memory brings its own tensors.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from nnsweeper.fileio import file_sha256

__all__ = ["model_description", "model_weights", "weights_digest"]

#: ``(FORMAT, FORMAT_VERSION)`` of :mod:`nnsweeper.models.checkpoint` (which imports torch).
CHECKPOINT_FORMAT = ("nnsweeper-checkpoint", 1)
#: Folder of the weights that ship with the package (as :data:`nnsweeper.models.WEIGHTS_DIR`).
_WEIGHTS = Path(__file__).resolve().parent / "weights"


#: Digests already computed, by file identity (path, size, modification time of both files):
#: a worker reports the weights of every chunk it plays, and hashes each file once.
_DIGESTS: dict[tuple, str] = {}


def _stat_key(path: Path) -> tuple:
    try:
        st = os.stat(path)
    except OSError:
        return (os.fspath(path), None)
    return (os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def weights_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a checkpoint: its ``.pt`` file and, where there is one, the ``.json`` beside it."""
    path = Path(path)
    config = path.with_suffix(".json")
    key = (_stat_key(path), _stat_key(config))
    digest = _DIGESTS.get(key)
    if digest is None:
        h = hashlib.sha256(file_sha256(path).encode())
        if config.is_file():
            h.update(file_sha256(config).encode())
        digest = _DIGESTS[key] = h.hexdigest()
    return digest


def _state_digest(model) -> str:
    """SHA-256 of a model in memory: its architecture, then each tensor of its state (name, shape, bytes)."""
    h = hashlib.sha256(repr(getattr(model, "arch", type(model).__qualname__)).encode())
    state = model.state_dict() if callable(getattr(model, "state_dict", None)) else {}
    for key, tensor in sorted(state.items()):
        array = tensor.detach().cpu().contiguous().numpy()
        h.update(f"{key}\0{array.dtype.str}\0{array.shape}\0".encode())
        h.update(array.tobytes())
    return h.hexdigest()


def model_weights(source) -> dict[str, str]:
    """``{name: digest}`` of the weights a solver plays with, given as its ``model`` option.

    A bundled name (``"gnn"``) stands for the checkpoint that ships in
    ``nnsweeper/models/weights``; any other string or path for the checkpoint there
    (a file that is not there gives ``"absent"``: the solver refuses it when it
    loads); a model object for its state in memory.
    """
    if isinstance(source, str | os.PathLike):
        name = os.fspath(source)
        path = _checkpoint_path(name)
        return {name: weights_digest(path) if path.is_file() else "absent"}
    return {f"<{type(source).__name__}>": _state_digest(source)}


def _checkpoint_path(name: str) -> Path:
    """The weights file a model option names: a bundled name's, else the path itself."""
    from nnsweeper.models.registry import all_architectures

    bundled = {a.name for a in all_architectures().values() if a.bundled}
    return _WEIGHTS / f"{name}.pt" if name in bundled else Path(name)


def model_description(source, arch: str | None = None) -> dict | None:
    """The description (the checkpoint's JSON) of the weights a ``model`` option names, read without
    torch, where the checkpoint's cheap checks hold: its weights are there with the digest it
    records, and it is of architecture ``arch`` (when given). None for a model object, or where it
    cannot be read as such a current checkpoint's: then loading the model says why."""
    if not isinstance(source, str | os.PathLike):
        return None
    path = _checkpoint_path(os.fspath(source))
    if path.suffix not in (".pt", ".json"):
        return None
    path = path.with_suffix(".pt")
    try:
        meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        current = (isinstance(meta, dict)
                   and (meta.get("format"), meta.get("format_version")) == CHECKPOINT_FORMAT)
        if (not current or (arch is not None and meta.get("arch") != arch) or not path.is_file()
                or file_sha256(path) != meta.get("sha256")):
            return None
    except (OSError, ValueError):
        return None
    return meta
