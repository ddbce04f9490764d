"""Value datasets: positions labelled with a reference policy's chance to win from them.

The label of a position is the probability that the reference policy (``search`` by
default) wins the game from it. A game's outcome is a noisy label (one bit); this
module records a far less noisy one that has the same expectation, by **survival
play**: the game is played by the policy on a :class:`SurvivalGame`, which, when the
policy reveals a mine, draws a new hidden layout exactly from the posterior of the
position conditioned on the revealed cell being safe
(:func:`~nnsweeper.engine.sample_layouts`, rejection on that cell) and goes on. A
game therefore always ends cleared, and the label of the position before decision
``t`` is

    value_t = prod over the policy's guesses k >= t of P(guess k is safe)

with each P the exact engine's, as the policy computed it. Why it is unbiased: at
every position the hidden layout is an exact draw from the layouts consistent with
what is seen (true after the first click, and kept true by every redraw, which is
uniform over the layouts consistent with the position and a safe guess), so
``P(win from s) = P(safe guess) x E[P(win from the next position) | safe]``, and the
survival game samples exactly the next position given a safe guess. The record also
keeps ``survived``: no redraw happened at or after the position, a one-bit label of
the same expectation (the outcome the game would have had), for calibration.

Shards are ``.npz`` files written as the probability datasets' are
(:func:`~nnsweeper.datasets.storage.write_shard`), with the arrays of
:data:`VALUE_FIELDS`; the folder's ``manifest.json`` (format ``nnsweeper-values``)
records the arguments, the seed streams, every shard's SHA-256 and a card. Game
seeds come from the dataset seed streams (:mod:`nnsweeper.seeds`) under a key of
their own (:data:`VALUE_KEY` first), so they never meet an evaluation seed and
differ from the probability datasets' games.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from nnsweeper.engine import analyze, sample_layouts
from nnsweeper.errors import DatasetError, EngineLimitError, InconsistentBoardError, check_int
from nnsweeper.fileio import write_text_atomic
from nnsweeper.game import Game, Rules
from nnsweeper.parallel import imap
from nnsweeper.seeds import (
    MANIFEST_NAME,
    MAX_DATASET_GAMES,
    SPLITS,
    read_manifest_json,
)
from nnsweeper.solvers.base import GUESS_KINDS, STARTS, Decision

from .generate import MAX_SHARD_CELLS, Part, check_splits, plan_shards, resolve_parts, writer_lock
from .policies import policy_solver
from .storage import file_sha256, read_shard, write_shard

__all__ = ["VALUE_FIELDS", "VALUE_FORMAT", "VALUE_KEY", "VALUE_MIXES", "SurvivalGame", "record_value_game",
           "generate_values", "load_value_manifest", "read_value_split", "prepare_positions",
           "PositionBatches"]

#: Value shard arrays: name -> (dtype, per cell (n, r, c) or per state (n,)).
VALUE_FIELDS: dict[str, tuple[np.dtype, bool]] = {
    "grid": (np.dtype(np.int8), True),
    "flags": (np.dtype(bool), True),
    "total_mines": (np.dtype(np.int16), False),
    "game_seed": (np.dtype(np.int64), False),
    "game": (np.dtype(np.int32), False),
    "step": (np.dtype(np.int16), False),
    "guess": (np.dtype(bool), False),
    "outcome": (np.dtype(bool), False),
    "value": (np.dtype(np.float64), False),
    "survived": (np.dtype(bool), False),
}
VALUE_FORMAT = "nnsweeper-values"
VALUE_FORMAT_VERSION = 1
#: First word of a value dataset's configuration keys in its seed streams ("val" in ASCII).
VALUE_KEY = 0x76616C
#: Named mixtures of value datasets: the boards the value solvers are measured on.
VALUE_MIXES: dict[str, tuple[str, ...]] = {
    "classic": ("beginner", "intermediate", "expert"),
    "value": ("10x10:5-30/5", "beginner", "intermediate", "expert"),
}
#: Spawn key of a survival game's redraw stream (the layout's is 0).
_REDRAW_STREAM = 1
#: Layouts drawn at a time when a redraw rejects those with a mine on the guessed cell.
_REDRAW_BATCH = 16
#: Most layouts one redraw may reject: the policies guess cells with P(safe) well
#: above 1 / 4096, so this bounds a redraw that could not end.
_REDRAW_LIMIT = 4096


class SurvivalGame(Game):
    """A :class:`~nnsweeper.game.Game` in which revealing a mine redraws the layout instead.

    When the player reveals a cell that holds a mine, the hidden layout is replaced by
    one drawn exactly from the layouts consistent with the current position in which
    that cell is safe, and the reveal goes on with it. The draws come from a stream of
    the game's seed of their own, so a game is a function of its seed and the moves.

    Attributes
    ----------
    redraws : list of int
        For each layout replaced so far, the number of reveals made before the one
        that caused it (empty: the game is the ordinary game of its seed).
    """

    def reset(self, seed: int | None = None) -> np.ndarray:
        obs = super().reset(seed)
        stream = np.random.SeedSequence(self.seed, spawn_key=(_REDRAW_STREAM,))
        self._redraw_rng = np.random.default_rng(stream)
        self.redraws: list[int] = []
        return obs

    def open_cell(self, i: int, j: int):
        i, j = self._check_cell(i, j)
        hidden = self.mask[i, j] == 1 and not self.flags[i, j]
        if self.placed and not self.done and hidden and self._mine[i, j]:
            self._redraw(i, j)
        return super().open_cell(i, j)

    def _redraw(self, i: int, j: int) -> None:
        grid = self.observe()
        drawn = 0
        while drawn < _REDRAW_LIMIT:
            layouts = sample_layouts(grid, self.mines, _REDRAW_BATCH, self._redraw_rng)
            drawn += _REDRAW_BATCH
            safe = np.flatnonzero(~layouts[:, i, j])
            if safe.size:
                self._set_layout(layouts[safe[0]].copy())
                self.redraws.append(self.moves)
                return
        raise InconsistentBoardError(
            f"no layout with cell ({i}, {j}) safe among {drawn} drawn: the cell is a mine in (almost) every "
            f"layout consistent with the position"
        )


def record_value_game(rules: Rules, seed: int, policy: str = "search", *, start: str = "random",
                      record: str = "guess") -> dict[str, np.ndarray] | None:
    """Play one survival game with a policy and return its labelled positions.

    ``record="all"`` keeps the position before every decision after the first click;
    ``"guess"`` keeps the positions where the policy guesses and, for each guess, its
    *outcome board*: the position with the guessed cell showing its number and nothing
    else opened yet, the board a one-step look-ahead values
    (:func:`~nnsweeper.engine.each_outcome`). Positions keep the policy's flags;
    ``value`` and ``survived`` as the module describes (an outcome board's are those of
    the position after the guess). The policy's randomness comes from
    ``np.random.default_rng(seed)``.

    Returns
    -------
    dict of ndarray or None
        The arrays of :data:`VALUE_FIELDS` except ``game`` (none when the policy never
        guessed); None when a redraw was beyond the engine (a frontier too large to
        sample), which drops the game.
    """
    env = SurvivalGame(rules, seed=seed)
    kept: list[Decision] = []
    try:
        policy_solver(policy, start, 0.0).play(env, np.random.default_rng(seed), on_decision=kept.append)
    except EngineLimitError:
        return None
    n = len(kept)
    # Per decision: the product of P(safe) over its guesses; the value is the product
    # from the decision on (1 once the game is over).
    safety = np.array([np.prod([1.0 - m.probability for m in d.moves if m.kind in GUESS_KINDS])
                       for d in kept], dtype=np.float64)
    value = np.append(np.cumprod(safety[::-1])[::-1], 1.0)
    # Reveals made before each position (the first click is one), against the reveals
    # that caused a redraw: survived means none at or after the position.
    before = 1 + np.concatenate([[0], np.cumsum([len(d.moves) for d in kept])])
    survived = before > max(env.redraws, default=-1)
    guess = np.array([d.guessed for d in kept], dtype=bool)
    if record == "all":
        rows = [(t, kept[t].grid, False) for t in range(n)]
    else:
        shown = env.observe()  # a revealed cell shows the same number in every later layout
        rows = []
        for t in np.flatnonzero(guess):
            rows.append((t, kept[t].grid, False))
            i, j = next(m.cell for m in kept[t].moves if m.kind in GUESS_KINDS)
            board = kept[t].grid.copy()
            board[i, j] = shown[i, j]
            rows.append((t, board, True))
    if not rows:
        return _empty(rules.rows, rules.cols)
    at = np.array([t + out for t, _, out in rows])  # whose value: the position's, or the next one's
    return {
        "grid": np.stack([g for _, g, _ in rows]).astype(np.int8),
        "flags": np.stack([kept[t].flags for t, _, _ in rows]),
        "total_mines": np.full(len(rows), env.mines, dtype=np.int16),
        "game_seed": np.full(len(rows), seed, dtype=np.int64),
        "step": np.array([kept[t].step for t, _, _ in rows], dtype=np.int16),
        "guess": np.array([guess[t] and not out for t, _, out in rows], dtype=bool),
        "outcome": np.array([out for _, _, out in rows], dtype=bool),
        "value": value[at],
        "survived": survived[at],
    }


def _empty(rows: int, cols: int) -> dict[str, np.ndarray]:
    return {k: np.zeros((0, rows, cols) if cell else (0,), dtype=dt)
            for k, (dt, cell) in VALUE_FIELDS.items() if k != "game"}


def _make_value_shard(path: str, part: Part, seeds: np.ndarray, first_game: int, start: str, record: str):
    target = Path(path)
    if target.exists():
        arrays = read_shard(target, fields=VALUE_FIELDS)
        return path, file_sha256(target), len(arrays["value"]), 0
    pieces, dropped = [], 0
    for g, sd in enumerate(seeds):
        arrays = record_value_game(part.rules, int(sd), part.policy, start=start, record=record)
        if arrays is None:
            dropped += 1
            continue
        arrays["game"] = np.full(len(arrays["value"]), first_game + g, dtype=np.int32)
        pieces.append(arrays)
    if not pieces:
        pieces.append({**_empty(part.rows, part.cols), "game": np.zeros(0, dtype=np.int32)})
    arrays = {k: np.concatenate([a[k] for a in pieces]) for k in VALUE_FIELDS}
    return path, write_shard(target, arrays, fields=VALUE_FIELDS), len(arrays["value"]), dropped


def generate_values(out, parts="value", *, games: int = 100, splits=(0.8, 0.1, 0.1), seed: int = 0,
                    policy: str = "search", start: str = "corner", first_click: str = "safe",
                    record: str = "guess", shard_games: int = 20, n_jobs: int | None = 1,
                    progress: bool = False) -> dict:
    """Generate a value dataset (survival games of a policy) into the folder ``out``.

    Parameters
    ----------
    out : str or os.PathLike
        A new folder, or that of an interrupted run with the same arguments (its
        finished shards are kept), or of a finished one (returned as it is).
    parts : str or sequence
        Part texts (as for :func:`~nnsweeper.datasets.generate`) or a name of
        :data:`VALUE_MIXES`.
    games : int
        Games per configuration where a part does not say.
    splits : three fractions
        Shares of train, val and test games (disjoint seed streams).
    seed : int
        Entropy of the seed streams.
    policy : str
        The reference policy (a dataset policy name; ``search`` by default).
    start : {"corner", "center", "random"}
        The first click (the evaluations' default is the corner).
    record : {"guess", "all"}
        Which positions are kept (:func:`record_value_game`).
    first_click, shard_games, n_jobs, progress
        As for :func:`~nnsweeper.datasets.generate`.

    Returns
    -------
    dict
        The manifest (also in ``out/manifest.json``).
    """
    from nnsweeper._version import __version__
    from nnsweeper.parallel import check_n_jobs

    seed = check_int("seed", seed, 0, DatasetError)
    games = check_int("games", games, 1, DatasetError, maximum=MAX_DATASET_GAMES)
    shard_games = check_int("shard_games", shard_games, 1, DatasetError, maximum=MAX_DATASET_GAMES)
    n_jobs = check_n_jobs(n_jobs, allow_none=True, error=DatasetError)
    items = []
    for item in [parts] if isinstance(parts, str | Part) else parts:
        items += list(VALUE_MIXES[item]) if isinstance(item, str) and item in VALUE_MIXES else [item]
    parts = items
    parts = resolve_parts(parts, games=games, first_click=first_click, policy=policy)
    fractions = check_splits(splits)
    if record not in ("guess", "all"):
        raise DatasetError(f"record must be 'guess' or 'all'; got {record!r}")
    if start not in STARTS:
        raise DatasetError(f"start must be one of {', '.join(STARTS)}; got {start!r}")
    for p in parts:
        if min(shard_games, p.games) * p.rows * p.cols > MAX_SHARD_CELLS:
            raise DatasetError(f"shard_games={shard_games} is too many for {p.rows}x{p.cols} boards: a shard "
                               f"holds at most {MAX_SHARD_CELLS} board cells (games x rows x cols)")
    arguments = {"parts": [p.to_dict() for p in parts], "splits": fractions, "seed": seed, "start": start,
                 "record": record, "shard_games": shard_games}
    out = Path(out)
    with writer_lock(out):
        manifest_path = out / MANIFEST_NAME
        if manifest_path.exists():
            m = load_value_manifest(out)
            if m["arguments"] != arguments:
                raise DatasetError(f"output folder {os.fspath(out)!r} holds a different value dataset; "
                                   f"choose a new folder or give the same arguments")
            return m
        streams, entries, shards = plan_shards(out, parts, fractions, seed, shard_games, (VALUE_KEY,))
        tasks = [(path, part, seeds, first, start, record) for path, part, seeds, first in shards]
        from tqdm.auto import tqdm

        by_path = {t[0]: e for t, e in zip(tasks, entries, strict=True)}
        with tqdm(total=len(tasks), disable=not progress, unit="shard", desc="value shards") as bar:
            for path, digest, states, dropped in imap(_make_value_shard, tasks, n_jobs, ordered=False):
                by_path[path].update(states=states, dropped=dropped, sha256=digest)
                bar.update(1)
        manifest = {
            "format": VALUE_FORMAT,
            "format_version": VALUE_FORMAT_VERSION,
            "nnsweeper_version": __version__,
            "arguments": arguments,
            "splits": {s: {"games": sum(e["games"][1] - e["games"][0] for e in entries if e["split"] == s),
                           "states": sum(e["states"] for e in entries if e["split"] == s)} for s in SPLITS},
            "dropped_games": sum(e["dropped"] for e in entries),
            "seed_streams": streams,
            "shards": entries,
        }
        write_text_atomic(manifest_path, json.dumps(manifest, indent=1, allow_nan=False) + "\n")
        return manifest


def load_value_manifest(folder) -> dict:
    """Read a value dataset's manifest, refusing anything else."""
    path, m = read_manifest_json(folder)
    if not isinstance(m, dict) or m.get("format") != VALUE_FORMAT:
        raise DatasetError(f"{os.fspath(path)!r} is not an nnsweeper value dataset "
                           f"(format != {VALUE_FORMAT!r})")
    if m.get("format_version") != VALUE_FORMAT_VERSION:
        raise DatasetError(f"{os.fspath(path)!r} has format_version {m.get('format_version')!r}; this "
                           f"nnsweeper reads version {VALUE_FORMAT_VERSION}")
    return m


def read_value_split(folder, split: str) -> list[dict[str, np.ndarray]]:
    """Every shard of one split of a value dataset (checked against the manifest), in manifest order."""
    if split not in SPLITS:
        raise DatasetError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")
    m = load_value_manifest(folder)
    root = Path(folder)
    root = root.parent if root.name == MANIFEST_NAME else root
    return [read_shard(root / e["file"], e["sha256"], fields=VALUE_FIELDS)
            for e in m["shards"] if e["split"] == split and e["states"]]


# --------------------------------------------------------------------------- the loader of value training
def _analyse_shard(arrays: dict) -> dict:
    # One thread per worker: the shards are analysed in parallel already.
    import torch

    torch.set_num_threads(1)
    probs, logs = [], []
    for g, t, f in zip(arrays["grid"], arrays["total_mines"], arrays["flags"], strict=True):
        a = analyze(g, int(t), f)
        probs.append(a.probabilities.astype(np.float32))
        logs.append(a.log_layouts)
    return {**arrays, "prob": np.stack(probs), "log_layouts": np.array(logs, dtype=np.float64)}


def prepare_positions(folder, split: str, n_jobs: int = 1) -> dict[tuple[int, int], dict[str, np.ndarray]]:
    """Every position of a split with its exact analysis, grouped by board shape.

    The value networks read each position with the engine's output
    (:func:`nnsweeper.models.value.value_inputs`), which is computed here once, in
    parallel over the shards, rather than in every epoch.

    Returns
    -------
    dict
        ``{(rows, cols): arrays}``: the shard arrays (:data:`VALUE_FIELDS`) of that shape
        concatenated, plus ``prob`` (float32 P(mine), (n, rows, cols)) and
        ``log_layouts`` (float64, (n,)).
    """
    shards = read_value_split(folder, split)
    by_shape: dict[tuple[int, int], list[dict]] = {}
    for arrays in imap(_analyse_shard, [(s,) for s in shards], n_jobs):
        by_shape.setdefault(arrays["grid"].shape[1:], []).append(arrays)
    return {shape: {k: np.concatenate([a[k] for a in parts]) for k in parts[0]}
            for shape, parts in sorted(by_shape.items())}


class PositionBatches:
    """The training batches of a value network: one split's prepared positions, batch by batch.

    The loader of the models whose ``inputs`` are ``"value"`` (the value networks; see
    :data:`~nnsweeper.datasets.LOADERS`). The split is read and analysed once
    (:func:`prepare_positions`, ``num_workers`` processes); each batch holds positions
    of one board shape, a dict of their arrays (``grid``, ``total_mines``, ``flags``,
    ``prob``, ``log_layouts``, ``value``, ``survived``), which the value network's
    :meth:`~nnsweeper.models.value.ValueNet.outputs` reads. With ``shuffle``, epoch ``e``
    draws its order from ``(seed, e)`` (:meth:`set_epoch`); with several ranks each takes
    every ``world_size``-th batch, all ranks the same number.

    Raises
    ------
    DatasetError
        A folder that is not a value dataset, a split without positions, or an option
        that only the probability datasets have (``configs``, ``augment``).
    """

    def __init__(self, root, split: str, *, batch_size: int = 128, shuffle: bool = False, seed: int = 0,
                 num_workers: int = 0, rank: int = 0, world_size: int = 1, drop_last: bool = False,
                 configs=None, augment: bool = False, **_shard_options):
        # _shard_options: pool, cache_shards, in_memory of the shard loaders; the positions are
        # always in memory here.
        if configs:
            raise DatasetError(f"a value dataset has no configurations to choose from; got {configs!r} "
                               f"(leave data.configurations out)")
        if augment:
            raise DatasetError("value positions are not augmented: set train.augment = false")
        check_int("batch_size", batch_size, 1, DatasetError)
        self.root, self.split = root, split
        self.positions = prepare_positions(root, split, max(1, num_workers))
        if not self.positions:
            raise DatasetError(f"value dataset {os.fspath(root)!r} has no positions in its {split!r} split")
        self.batch_size, self.shuffle, self.seed = batch_size, shuffle, seed
        self.rank, self.world_size, self.drop_last = rank, world_size, drop_last
        self.epoch = 0
        self.start = 0

    def set_epoch(self, epoch: int, start: int = 0) -> None:
        """The epoch whose order the next pass draws (with ``shuffle``), from its batch
        ``start`` on (``len`` still counts the whole epoch's batches)."""
        self.epoch = epoch
        self.start = start

    def batches(self) -> list[tuple[tuple[int, int], np.ndarray]]:
        """This rank's ``(shape, rows)`` batches of the current epoch, in order."""
        from nnsweeper.models.value import position_batches

        rng = np.random.default_rng([self.seed, self.epoch]) if self.shuffle else None
        out = position_batches(self.positions, self.batch_size, rng)
        if self.drop_last:
            out = [b for b in out if len(b[1]) == self.batch_size]
        if self.world_size > 1:
            out = out[self.rank::self.world_size][:len(out) // self.world_size]
        return out

    def __len__(self) -> int:
        return len(self.batches())

    def __iter__(self):
        for shape, rows in self.batches()[self.start:]:
            arrays = self.positions[shape]
            yield {k: v[rows] for k, v in arrays.items()}
