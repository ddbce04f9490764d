"""Dataset files: byte-reproducible ``.npz`` shards and the JSON manifest.

A dataset folder holds ``manifest.json`` and ``shards/<split>/<configuration>-<k>.npz``.
Every shard holds the states of a fixed range of games of one configuration (one
board size) and split, as these arrays (``n`` states, ``r x c`` board):

==============  =========  ===========  ===============================================
name            dtype      shape        meaning
==============  =========  ===========  ===============================================
``grid``        int8       (n, r, c)    the visible board: -1 covered, 0..8 revealed
``flags``       bool       (n, r, c)    the cells the policy had flagged
``mines``       bool       (n, r, c)    truth: covered cells that hold a mine
``prob``        float64    (n, r, c)    exact P(mine) (0 revealed, 1 flagged)
``total_mines`` int16      (n,)         mines on the board
``game_seed``   int64      (n,)         the game's seed (``Game(rules, seed)``)
``game``        int32      (n,)         the game's index in its configuration's stream
``step``        int16      (n,)         the policy's decision number in the game
``guess``       bool       (n,)         the policy guessed at this state
``won``         bool       (n,)         the game was won in the end
==============  =========  ===========  ===============================================

Shards are ordinary ``.npz`` files (``numpy.load(..., allow_pickle=False)`` reads
them), written with fixed zip timestamps so that the same states give the same
bytes, and written atomically. The manifest records each shard's SHA-256;
:func:`read_shard` refuses a shard whose bytes differ.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from nnsweeper.errors import ChecksumError, DatasetError
from nnsweeper.fileio import file_sha256, reader_error, write_bytes_atomic
from nnsweeper.seeds import MANIFEST_NAME, read_manifest_json

__all__ = [
    "SHARD_FIELDS",
    "MANIFEST_NAME",
    "FORMAT",
    "FORMAT_VERSION",
    "write_shard",
    "read_shard",
    "check_shards",
    "file_sha256",
    "load_manifest",
    "empty_shard",
]

#: Shard arrays: name -> (dtype, whether it is per cell (n, r, c) or per state (n,)).
SHARD_FIELDS: dict[str, tuple[np.dtype, bool]] = {
    "grid": (np.dtype(np.int8), True),
    "flags": (np.dtype(bool), True),
    "mines": (np.dtype(bool), True),
    "prob": (np.dtype(np.float64), True),
    "total_mines": (np.dtype(np.int16), False),
    "game_seed": (np.dtype(np.int64), False),
    "game": (np.dtype(np.int32), False),
    "step": (np.dtype(np.int16), False),
    "guess": (np.dtype(bool), False),
    "won": (np.dtype(bool), False),
}
FORMAT = "nnsweeper-dataset"
FORMAT_VERSION = 1
# Zip entries carry a timestamp; a fixed one makes the bytes depend on the data only.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def empty_shard(rows: int, cols: int) -> dict[str, np.ndarray]:
    """A shard with no states (for a board of ``rows x cols``)."""
    return {
        name: np.zeros((0, rows, cols) if cell else (0,), dtype=dtype)
        for name, (dtype, cell) in SHARD_FIELDS.items()
    }


def _check_arrays(arrays: Mapping[str, np.ndarray], where: str,
                  fields: Mapping[str, tuple[np.dtype, bool]] = SHARD_FIELDS) -> tuple[int, int, int]:
    missing = [k for k in fields if k not in arrays]
    extra = [k for k in arrays if k not in fields]
    if missing or extra:
        raise DatasetError(f"{where}: shard arrays must be exactly {', '.join(fields)}; "
                           f"missing {missing}, unexpected {extra}")
    grid = arrays["grid"]
    if grid.ndim != 3:
        raise DatasetError(f"{where}: 'grid' must have shape (states, rows, cols); got {grid.shape}")
    n, r, c = grid.shape
    for name, (dtype, cell) in fields.items():
        a = arrays[name]
        shape = (n, r, c) if cell else (n,)
        if a.dtype != dtype or a.shape != shape:
            raise DatasetError(f"{where}: {name!r} must be {dtype} of shape {shape}; got {a.dtype} {a.shape}")
    return n, r, c


def write_shard(path: str | os.PathLike, arrays: Mapping[str, np.ndarray], *,
                fields: Mapping[str, tuple[np.dtype, bool]] = SHARD_FIELDS) -> str:
    """Write one shard atomically; returns the SHA-256 of its bytes.

    The same arrays always give the same bytes: entries are written in ``fields``
    order (:data:`SHARD_FIELDS`, or another table of the same form for another kind
    of dataset) with a fixed timestamp, deflate-compressed.
    """
    _check_arrays(arrays, os.fspath(path), fields)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in fields:
            body = io.BytesIO()
            np.lib.format.write_array(body, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, body.getbuffer(), compresslevel=6)  # a view: no copy of the array's bytes
    data = buf.getvalue()
    write_bytes_atomic(path, data)
    return hashlib.sha256(data).hexdigest()


def read_shard(path: str | os.PathLike, sha256: str | None = None, *,
               fields: Mapping[str, tuple[np.dtype, bool]] = SHARD_FIELDS) -> dict[str, np.ndarray]:
    """Load one shard, checking its checksum (when given) and its arrays (against ``fields``).

    Raises
    ------
    ChecksumError
        The file's SHA-256 differs from ``sha256`` (a truncated or edited shard).
    DatasetError
        The file is missing, or damaged: unreadable as ``.npz`` (whatever the zip reader
        raises) or with arrays of the wrong names, types or shapes.
    """
    where = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"shard {where!r} is missing") from None
    if sha256 is not None:
        _check_digest(where, hashlib.sha256(data).hexdigest(), sha256)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    # Any exception of the reader is damage: numpy, zipfile and zlib raise many kinds (one byte of
    # the zip's index changed gives NotImplementedError or RuntimeError, an array header that asks
    # for exabytes MemoryError), so no list of types is complete.
    except Exception as exc:
        why = f"it cannot be read as .npz: {reader_error(exc)}"
    else:
        try:
            _check_arrays(arrays, where, fields)
            return arrays
        except DatasetError as exc:
            why = str(exc).removeprefix(f"{where}: ")
    raise DatasetError(f"shard {where!r} is damaged ({why}); remove it and run the same generate command "
                       f"again to make it anew")


def _check_digest(where: str, digest: str, sha256: str) -> None:
    if digest != sha256:
        raise ChecksumError(
            f"shard {where!r} is damaged: its SHA-256 is {digest[:16]}..., the manifest "
            f"records {sha256[:16]}... (truncated or edited; generate it again)"
        )


def check_shards(root: str | os.PathLike, manifest: Mapping, splits, configs=None) -> int:
    """Check the bytes of every shard of ``splits`` (of the configurations ``configs``, or all)
    against the SHA-256 the manifest records, before any is decoded; returns how many.

    A run checks its shards this way before its first batch, so that a damaged shard of a
    split read late (validation, after a whole epoch; the test split, after minutes of
    scoring) is named at the start. Reading a shard checks it again (:func:`read_shard`).

    Raises
    ------
    ChecksumError
        A shard whose bytes differ from the manifest's record (naming it).
    DatasetError
        A shard that is missing.
    """
    folder = Path(root)
    folder = folder.parent if folder.is_file() else folder
    checked = 0
    for entry in manifest["shards"]:
        if entry.get("split") not in splits or (configs is not None and entry.get("config") not in configs):
            continue
        path = folder / entry["file"]
        try:
            digest = file_sha256(path)
        except FileNotFoundError:
            raise DatasetError(f"shard {os.fspath(path)!r} is missing") from None
        _check_digest(os.fspath(path), digest, entry["sha256"])
        checked += 1
    return checked


def load_manifest(folder: str | os.PathLike) -> dict:
    """Read and check a dataset's ``manifest.json`` (``folder`` or the file itself)."""
    path, m = read_manifest_json(folder)
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise DatasetError(f"{os.fspath(path)!r} is not an nnsweeper dataset manifest (format != {FORMAT!r})")
    if m.get("format_version") != FORMAT_VERSION:
        raise DatasetError(
            f"{os.fspath(path)!r} has format_version {m.get('format_version')!r}; this nnsweeper reads "
            f"version {FORMAT_VERSION}"
        )
    for key in ("arguments", "configurations", "shards", "seed_streams"):
        if key not in m:
            raise DatasetError(f"{os.fspath(path)!r} lacks the {key!r} entry")
    return m
