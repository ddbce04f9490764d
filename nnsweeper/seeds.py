"""Game seeds of datasets: disjoint streams per split, never an evaluation seed.

This module sits low in the package (numpy and the errors only), so that evaluation
can check its seeds against a dataset's without importing dataset generation.

A dataset's games for one configuration and split take their seeds from the stream
``SeedSequence(seed, spawn_key=(DATA_KEY, split, *configuration))``. Each 64-bit
draw is cut to :data:`SPLIT_BITS` bits and placed in the split's own range::

    game seed = 2**62 + split_index * 2**58 + (draw >> 6)

so the three splits occupy disjoint ranges of integers by construction, and none of
them meets the range ``[0, 2**31 - 1)`` from which :func:`nnsweeper.game_seeds`
(and so :func:`nnsweeper.eval_solver_over_mines`) draws evaluation seeds, whatever
the base seed. A manifest records each stream (entropy, spawn key, number of games)
rather than every seed; :func:`stream_seeds` regenerates them, and
:func:`check_seed_overlap` compares them with any other set of seeds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from nnsweeper.errors import DatasetError, SeedOverlapError

__all__ = [
    "MANIFEST_NAME",
    "SPLITS",
    "SPLIT_CODES",
    "DATA_KEY",
    "SEED_OFFSET",
    "SPLIT_BITS",
    "MAX_DATASET_GAMES",
    "split_range",
    "seed_stream",
    "stream_seeds",
    "manifest_seeds",
    "check_seed_overlap",
]

#: Each dataset split's code: the second word of its streams' spawn keys and the index
#: of its seed range. Part of every dataset's seeds: no code ever changes.
SPLIT_CODES: dict[str, int] = {"train": 0, "val": 1, "test": 2}
#: The dataset splits, in the order of their seed ranges.
SPLITS: tuple[str, ...] = tuple(SPLIT_CODES)
#: The file name of a dataset's manifest inside its folder.
MANIFEST_NAME = "manifest.json"
#: First word of every dataset stream's spawn key ("nnsw" in ASCII).
DATA_KEY = 0x6E6E7377
#: Lowest dataset game seed; evaluation seeds are below 2**31.
SEED_OFFSET = 2**62
#: Most games per dataset (every configuration and split), and so per seed stream.
#: Days of work on a small machine for boards of any size, and each game costs a
#: little bookkeeping in the calling process; a damaged manifest cannot ask for
#: gigabytes of seeds.
MAX_DATASET_GAMES = 1_000_000
#: Each split's seeds lie in a range of 2**SPLIT_BITS integers.
SPLIT_BITS = 58


def split_range(split: str) -> tuple[int, int]:
    """The half-open range ``[lo, hi)`` of the game seeds of one split."""
    if split not in SPLITS:
        raise DatasetError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")
    lo = SEED_OFFSET + SPLIT_CODES[split] * 2**SPLIT_BITS
    return lo, lo + 2**SPLIT_BITS


def seed_stream(seed: int, split: str, key: Iterable[int], games: int) -> dict:
    """The manifest entry of one stream: enough to regenerate its ``games`` seeds."""
    split_range(split)
    return {
        "split": split,
        "entropy": int(seed),
        "spawn_key": [DATA_KEY, SPLIT_CODES[split], *(int(k) for k in key)],
        "games": int(games),
    }


def stream_seeds(entry: Mapping) -> np.ndarray:
    """The game seeds of one manifest stream entry, as int64.

    An entry either describes a generated stream (``entropy``, ``spawn_key``,
    ``games``, as written by :func:`seed_stream`; at most :data:`MAX_DATASET_GAMES`
    games) or lists its seeds outright under
    ``seeds`` (datasets made by other tools).
    """
    if "seeds" in entry:
        seeds = np.asarray(entry["seeds"])
        if seeds.ndim != 1 or (seeds.size and not np.issubdtype(seeds.dtype, np.integer)):
            raise DatasetError(f"a stream's 'seeds' must be a list of integers; got {entry['seeds']!r:.80}")
        return seeds.astype(np.int64)
    try:
        entropy, key, games = int(entry["entropy"]), [int(k) for k in entry["spawn_key"]], int(entry["games"])
    except (KeyError, TypeError, ValueError) as exc:
        raise DatasetError(
            f"a seed stream needs 'entropy', 'spawn_key' and 'games'; got {dict(entry)!r}"
        ) from exc
    if len(key) < 2 or key[0] != DATA_KEY or not 0 <= key[1] < len(SPLITS):
        raise DatasetError(f"spawn_key {key} is not a dataset stream (it must start with {DATA_KEY}, split)")
    if not 0 <= games <= MAX_DATASET_GAMES:
        raise DatasetError(f"a seed stream's games must be from 0 to {MAX_DATASET_GAMES}; got {games}")
    if games == 0:
        return np.zeros(0, dtype=np.int64)
    draws = np.random.SeedSequence(entropy, spawn_key=tuple(key)).generate_state(games, dtype=np.uint64)
    lo = SEED_OFFSET + key[1] * 2**SPLIT_BITS
    return (draws >> np.uint64(64 - SPLIT_BITS)).astype(np.int64) + lo


def read_manifest_json(folder: str | os.PathLike) -> tuple[Path, object]:
    """The path of a dataset's ``manifest.json`` (``folder`` or the file itself) and its JSON value."""
    path = Path(folder)
    if path.is_dir():
        path = path / MANIFEST_NAME
    try:
        return path, json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"no dataset manifest at {os.fspath(path)!r}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{os.fspath(path)!r} is not a valid manifest: {exc}") from None


def _load_manifest(manifest) -> dict:
    # Any JSON with seed streams will do: datasets made by other tools list their seeds.
    if isinstance(manifest, Mapping):
        return dict(manifest)
    path, m = read_manifest_json(manifest)
    if not isinstance(m, dict):
        raise DatasetError(f"{os.fspath(path)!r} is not a dataset manifest (a JSON object)")
    return m


def manifest_seeds(manifest, splits: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """Every game seed a dataset used, per split (regenerated from its streams).

    Parameters
    ----------
    manifest : dict, or path to a dataset folder or its ``manifest.json``
    splits : iterable of str, optional
        Only these splits (default: all that the manifest has).
    """
    m = _load_manifest(manifest)
    streams = m.get("seed_streams")
    if not isinstance(streams, list):
        raise DatasetError("the manifest has no 'seed_streams' list; it is not an nnsweeper dataset manifest")
    wanted = set(SPLITS if splits is None else splits)
    out: dict[str, list[np.ndarray]] = {}
    for entry in streams:
        split = entry.get("split")
        if split in wanted:
            out.setdefault(split, []).append(stream_seeds(entry))
    return {s: np.concatenate(v) for s, v in out.items()}


def check_seed_overlap(
    manifest, seeds, *, what: str = "evaluation", splits: Iterable[str] | None = None
) -> None:
    """Refuse ``seeds`` that a dataset also used.

    Parameters
    ----------
    manifest : dict, or path to a dataset folder or its ``manifest.json``
    seeds : array_like of int
        The seeds that must be new to the dataset (for example an evaluation's).
    what : str
        What ``seeds`` are, for the message.
    splits : iterable of str, optional
        The dataset splits to compare with (default: all).

    Raises
    ------
    SeedOverlapError
        Naming the first shared seed, its split, and how many are shared.
    """
    seeds = np.asarray(seeds, dtype=np.int64).ravel()
    for split, used in sorted(manifest_seeds(manifest, splits).items()):
        shared = np.intersect1d(used, seeds)
        if shared.size:
            raise SeedOverlapError(
                f"{shared.size} {what} game seed(s) are also in the dataset's {split!r} split "
                f"(first: {int(shared[0])}); {what} must use held-out seeds"
            )
