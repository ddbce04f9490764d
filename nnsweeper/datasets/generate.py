"""Play games with a behaviour policy and record labelled board states.

:func:`generate` plays the games of every configuration of a mixture, records the
positions a policy decides on, labels each with the truth (from the game's hidden
layout, read here and in the game only) and the exact mine probabilities
(:func:`nnsweeper.analyze`), and writes byte-reproducible shards plus a manifest
(:mod:`nnsweeper.datasets.storage`).

Determinism: every shard is a function of the arguments alone (its games' seeds come
from :mod:`nnsweeper.seeds`, its policy's randomness from each game's seed),
so any ``n_jobs`` or backend gives the same bytes, and a run started again after an
interruption skips the finished shards and ends as an uninterrupted run would.

One process writes a dataset folder at a time: :func:`generate` holds an exclusive
lock on ``OUT/.generate.lock`` for the whole run and refuses at once when another
process holds it. The lock is the operating system's (``flock``), so a killed run
releases it and can be resumed.

Limits, all checked in the calling process before any game is played or any worker
started: boards of at most :data:`MAX_DATASET_CELLS` cells, shards of at most
:data:`MAX_SHARD_CELLS` board cells (``shard_games x rows x cols``), at most
:data:`MAX_DATASET_GAMES` games, :data:`MAX_SHARDS` shards and :data:`MAX_PARTS`
configurations per dataset.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from nnsweeper.errors import DatasetError, InvalidRulesError, check_int
from nnsweeper.fileio import exclusive_lock, leftovers, write_text_atomic
from nnsweeper.game import FIRST_CLICK_CODES, FIRST_CLICK_RULES, PRESETS, Rules, parse_mine_counts
from nnsweeper.parallel import imap
from nnsweeper.seeds import MAX_DATASET_GAMES, SPLITS, seed_stream, stream_seeds
from nnsweeper.solvers.base import STARTS

from .card import add_stats, card_row, format_card, shard_statistics
from .policies import FLAG_CODES, FLAG_MODES, POLICIES, RECORD_CODES, RECORD_MODES, check_choices, record_game
from .storage import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST_NAME,
    SHARD_FIELDS,
    file_sha256,
    load_manifest,
    read_shard,
    write_shard,
)

__all__ = [
    "STARTS",
    "MIXES",
    "BROAD_BOARDS",
    "UNSEEN_BOARDS",
    "describe_mix",
    "MAX_DATASET_CELLS",
    "MAX_SHARD_CELLS",
    "MAX_DATASET_GAMES",
    "MAX_SHARDS",
    "MAX_PARTS",
    "LOCK_NAME",
    "Part",
    "parse_part",
    "resolve_parts",
    "generate",
]

def _every_kind(boards: Sequence[str]) -> tuple[str, ...]:
    # Every logic policy (the network policies play weights that change, and never flag).
    logic = [name for name, p in POLICIES.items() if p.model is None]
    return tuple(f"{b}::{p}:{f}" for b in boards for p in logic for f in FLAG_MODES)


#: Boards of the ``broad`` mixture: the 10x10 sweep's densities, the presets, and two
#: sizes of neither.
BROAD_BOARDS = ("10x10:5-30/5", "beginner", "intermediate", "expert", "12x12:20,30,40", "16x20:50,70")
#: Boards of the ``unseen`` mixture, kept out of ``broad`` to test on.
UNSEEN_BOARDS = ("8x8:20", "24x30:200")
# The mixtures that take every policy with every flag mode on their boards.
_EVERY_KIND = {"broad": BROAD_BOARDS, "unseen": UNSEEN_BOARDS}

#: Named mixtures: lists of part texts (games per configuration come from ``games``).
#: ``broad`` and ``unseen`` take every policy with every flag mode on each of their
#: boards (:data:`BROAD_BOARDS`, :data:`UNSEEN_BOARDS`).
MIXES: dict[str, tuple[str, ...]] = {
    "mixed": ("10x10:5-30", "beginner", "intermediate", "expert"),
    "10x10": ("10x10:5-30",),
    "classic": ("beginner", "intermediate", "expert"),
    **{name: _every_kind(boards) for name, boards in _EVERY_KIND.items()},
}


def describe_mix(name: str) -> str:
    """A mixture in a few words: its part texts, or its boards for ``broad`` and ``unseen``."""
    boards = _EVERY_KIND.get(name)
    if boards is not None:
        return f"every logic policy with every flag mode on {' + '.join(boards)}"
    return " + ".join(MIXES[name])


_PLAN_NAME = ".generate.json"
#: The file a running :func:`generate` holds an exclusive lock on, inside its folder.
LOCK_NAME = ".generate.lock"

#: Most cells (rows x cols) of a dataset board. A game keeps every state it records
#: (grid, flags, truth and float64 probabilities: 11 bytes a cell) until its shard
#: is written, and the states grow with the board: on 100x100 with 20% mines a csp
#: game records 300-420 states (35-45 MB) in about 10 s; 200x200 would be about
#: 16 times that per game.
MAX_DATASET_CELLS = 10_000
#: Most board cells per shard (``shard_games x rows x cols``): 10 games of 100x100,
#: 208 of expert, 1000 of 10x10. A worker holds a whole shard's states in memory,
#: and more while it joins and writes them: measured, one shard of 10 csp games on
#: 100x100 with 20% mines (2176 states, 240 MB of arrays) peaks at 0.73 GB in 30 s.
MAX_SHARD_CELLS = 100_000
#: Most shard files per dataset: each is a task, an entry kept in memory until the
#: manifest is written, and a line of the manifest.
MAX_SHARDS = 100_000
#: Most configurations (parts) per dataset: each has its own seed streams, shards
#: and card row.
MAX_PARTS = 10_000


# ------------------------------------------------------------------ the mixture
@dataclass(frozen=True)
class Part:
    """One configuration of a mixture: a board, a mine count, a rule, a policy, flags, games.

    ``flags`` is which of the policy's flags the recorded states keep (``all``,
    ``some`` or ``none``; see :func:`~nnsweeper.datasets.policies.recorded_flags`).
    ``record`` is the part's own record mode (``all`` or ``guess``; None: the
    dataset's), so that one dataset holds every decision of some games and only the
    guesses of others.
    """

    rows: int
    cols: int
    mines: int
    games: int
    first_click: str = "safe"
    policy: str = "csp"
    flags: str = "all"
    record: str | None = None

    def __post_init__(self):
        if self.policy not in POLICIES:
            raise DatasetError(f"unknown policy {self.policy!r}; choose one of {', '.join(POLICIES)}")
        if self.flags not in FLAG_MODES:
            raise DatasetError(f"unknown flags {self.flags!r}; choose one of {', '.join(FLAG_MODES)}")
        if self.record is not None and self.record not in RECORD_MODES:
            raise DatasetError(f"unknown record mode {self.record!r}; choose one of "
                               f"{', '.join(RECORD_MODES)}")
        check_int("games", self.games, 1, DatasetError, maximum=MAX_DATASET_GAMES)
        try:
            rules = Rules(self.rows, self.cols, self.mines, self.first_click)
        except InvalidRulesError as exc:
            raise DatasetError(f"impossible configuration {self.rows}x{self.cols} with {self.mines} mines: "
                               f"{exc}") from None
        if rules.cells > MAX_DATASET_CELLS:
            raise DatasetError(
                f"a dataset board has at most {MAX_DATASET_CELLS} cells (every recorded state keeps "
                f"11 bytes a cell); got {self.rows}x{self.cols} = {rules.cells}"
            )

    @property
    def rules(self) -> Rules:
        return Rules(self.rows, self.cols, self.mines, self.first_click)

    @property
    def key(self) -> str:
        """A file-name-safe name, unique within a dataset: ``10x10-m15-safe-csp``.

        Flags other than ``all`` add a word: ``10x10-m15-safe-reveal-noflags``,
        ``...-someflags``.
        """
        key = f"{self.rows}x{self.cols}-m{self.mines}-{self.first_click}-{self.policy}"
        key = key if self.flags == "all" else f"{key}-{'no' if self.flags == 'none' else 'some'}flags"
        return key if self.record is None else f"{key}-{self.record}"

    @property
    def stream_key(self) -> tuple[int, ...]:
        """What identifies this configuration's seed stream (the games are not in it)."""
        key = (self.rows, self.cols, self.mines, FIRST_CLICK_CODES[self.first_click],
               POLICIES[self.policy].code)
        if self.record is not None:  # seven codes: apart from the five or six of the others
            return (*key, FLAG_CODES[self.flags], RECORD_CODES[self.record])
        return key if self.flags == "all" else (*key, FLAG_CODES[self.flags])

    def to_dict(self) -> dict:
        out = asdict(self)
        if self.flags == "all":  # as manifests wrote a part before there were flag modes
            del out["flags"]
        if self.record is None:  # the dataset's mode, as manifests wrote a part before
            del out["record"]
        model = POLICIES[self.policy].model
        if model is not None:  # a network policy: its positions depend on the weights it plays
            from nnsweeper.models.digest import model_weights

            out["weights"] = model_weights(model)
        return out


_SIZE = re.compile(r"^(\d+)x(\d+)$")


def parse_part(text: str, *, games: int = 100, first_click: str = "safe", policy: str = "csp",
               flags: str = "all") -> list[Part]:
    """Parts from text: ``ROWSxCOLS:MINES[:GAMES[:POLICY[:FLAGS[:RECORD]]]]`` or
    ``PRESET[:GAMES[:POLICY[:FLAGS[:RECORD]]]]`` (``RECORD``: ``all`` or ``guess``, the part's
    own record mode; left out: the dataset's).

    ``MINES`` is a count (``15``), a range with every count (``5-30``), a range with a
    step (``5-30/5``) or a comma list (``5,10,15``); each mine count is one
    configuration with ``GAMES`` games (default ``games``), at most
    :data:`MAX_PARTS` of them. An empty field takes the default
    (``expert::reveal:none``).

    Examples
    --------
    >>> [p.mines for p in parse_part("10x10:5-30/5:200")]
    [5, 10, 15, 20, 25, 30]
    >>> parse_part("expert:50:explore")[0].key
    '16x30-m99-safe-explore'
    >>> parse_part("expert::reveal:none")[0].key
    '16x30-m99-safe-reveal-noflags'
    """
    if not isinstance(text, str) or not text.strip():
        raise DatasetError(f"a part must be text like '10x10:5-30:200' or 'expert:100'; got {text!r}")
    fields = [f.strip() for f in text.strip().split(":")]
    head = fields[0].lower()
    if head in PRESETS:
        rows, cols, mine_counts = *PRESETS[head][:2], [PRESETS[head][2]]
        rest = fields[1:]
    else:
        size = _SIZE.match(head)
        if size is None or len(fields) < 2:
            raise DatasetError(
                f"part {text!r}: expected ROWSxCOLS:MINES[:GAMES[:POLICY[:FLAGS[:RECORD]]]] or "
                f"PRESET[:GAMES[:POLICY[:FLAGS[:RECORD]]]] "
                f"(presets: {', '.join(PRESETS)})"
            )
        rows, cols = int(size.group(1)), int(size.group(2))
        mine_counts = _parse_mines(fields[1], text)
        rest = fields[2:]
    if len(rest) > 4:
        raise DatasetError(f"part {text!r} has too many ':' fields")
    if rest and rest[0]:
        if not rest[0].isdigit():
            raise DatasetError(f"part {text!r}: games must be a positive integer; got {rest[0]!r}")
        games = int(rest[0])
    if len(rest) >= 2 and rest[1]:
        policy = rest[1]
    if len(rest) >= 3 and rest[2]:
        flags = rest[2]
    record = rest[3] if len(rest) == 4 and rest[3] else None
    return [Part(rows, cols, m, games, first_click, policy, flags, record) for m in mine_counts]


def _parse_mines(field: str, text: str) -> list[int]:
    try:
        return parse_mine_counts(field, limit=MAX_PARTS)
    except ValueError as e:
        raise DatasetError(f"part {text!r}: {e}") from None


def resolve_parts(items, *, games: int = 100, first_click: str = "safe", policy: str = "csp",
                  flags: str = "all") -> list[Part]:
    """Parts from a mix of :class:`Part` objects, part texts and mixture names (:data:`MIXES`).

    Raises
    ------
    DatasetError
        An unparseable item, an impossible configuration, a board of more than
        :data:`MAX_DATASET_CELLS` cells, more than :data:`MAX_PARTS` parts or
        :data:`MAX_DATASET_GAMES` games, or two parts with the same configuration
        (board, mines, rule, policy and flags).
    """
    if first_click not in FIRST_CLICK_RULES:
        raise DatasetError(f"first_click must be one of {', '.join(FIRST_CLICK_RULES)}; got {first_click!r}")
    defaults = dict(games=games, first_click=first_click, policy=policy, flags=flags)
    if isinstance(items, str | Part):
        items = [items]
    parts: list[Part] = []
    for item in items:
        if isinstance(item, Part):
            parts.append(item)
        elif isinstance(item, str) and item in MIXES:
            for text in MIXES[item]:
                parts.extend(parse_part(text, **defaults))
        else:
            parts.extend(parse_part(item, **defaults))
        if len(parts) > MAX_PARTS:
            raise DatasetError(f"a dataset has at most {MAX_PARTS} configurations; got more than that")
    if not parts:
        raise DatasetError("no parts: give at least one configuration such as '10x10:10:100' or a mixture")
    seen: dict[str, Part] = {}
    for p in parts:
        if p.key in seen:
            raise DatasetError(f"configuration {p.key} appears twice; give each board, mine count, "
                               f"policy, flags and record mode once (with the total number of games)")
        seen[p.key] = p
    total = sum(p.games for p in parts)
    if total > MAX_DATASET_GAMES:
        raise DatasetError(f"a dataset has at most {MAX_DATASET_GAMES} games; its {len(parts)} "
                           f"configurations ask for {total}")
    return parts


def _split_games(games: int, fractions: dict[str, float]) -> dict[str, int]:
    """Games per split: floors of the shares, the remainder to the largest fractional parts."""
    raw = {s: games * f for s, f in fractions.items()}
    out = {s: math.floor(v) for s, v in raw.items()}
    left = games - sum(out.values())
    for s in sorted(raw, key=lambda s: (out[s] - raw[s], SPLITS.index(s)))[:left]:
        out[s] += 1
    return out


def check_splits(splits) -> dict[str, float]:
    if isinstance(splits, dict):
        fractions = dict(splits)
    else:
        try:
            values = [float(v) for v in splits]
        except (TypeError, ValueError):
            raise DatasetError(f"splits must be three fractions (train, val, test); got {splits!r}") from None
        if len(values) != len(SPLITS):
            raise DatasetError(f"splits must be three fractions (train, val, test); got {splits!r}")
        fractions = dict(zip(SPLITS, values, strict=True))
    unknown = set(fractions) - set(SPLITS)
    if unknown:
        raise DatasetError(f"unknown split(s) {sorted(unknown)}; splits are {', '.join(SPLITS)}")
    fractions = {s: float(fractions.get(s, 0.0)) for s in SPLITS}
    if any(not 0 <= v <= 1 for v in fractions.values()) or abs(sum(fractions.values()) - 1) > 1e-9:
        raise DatasetError(f"split fractions must lie in [0, 1] and sum to 1; got {fractions}")
    return fractions


# ------------------------------------------------------------------ shards
def _make_shard(path: str, part: Part, seeds: np.ndarray, first_game: int, record: str, epsilon: float,
                start: str) -> tuple[str, str, dict]:
    """Write one shard (or read it back when a previous run finished it); returns its entry."""
    target = Path(path)
    if target.exists():
        arrays = read_shard(target)
        digest = file_sha256(target)
    else:
        rules = part.rules
        pieces = []
        for g, sd in enumerate(seeds):
            arrays, _ = record_game(rules, int(sd), part.policy, record=part.record or record,
                                    epsilon=epsilon, start=start, flags=part.flags)
            arrays["game"] = np.full(len(arrays["grid"]), first_game + g, dtype=np.int32)
            pieces.append(arrays)
        # Each field's pieces are dropped once joined, so the shard is not held twice.
        arrays = {k: np.concatenate([a.pop(k) for a in pieces]) for k in SHARD_FIELDS}
        del pieces
        digest = write_shard(target, arrays)
    return path, digest, shard_statistics(arrays)


def _arguments(parts, fractions, seed, record, epsilon, start, shard_games) -> dict:
    return {
        "parts": [p.to_dict() for p in parts],
        "splits": fractions,
        "seed": seed,
        "record": record,
        "epsilon": epsilon,
        "start": start,
        "shard_games": shard_games,
    }


def generating_code() -> str:
    """SHA-256 of the source that makes a dataset's shards (:func:`~nnsweeper.sourcecode.source_digest`).

    A partial dataset records it, and a run that continues one refuses shards that
    other code made (the package version stays the same across many changes).
    """
    from nnsweeper.sourcecode import source_digest

    return source_digest(("nnsweeper.datasets.generate",))


def _prepare_folder(out: Path, arguments: dict, version: str) -> dict | None:
    """Check that ``out`` is new, a run of these arguments, or their finished dataset.

    Returns the manifest when the dataset is already complete.
    """
    if out.exists() and not out.is_dir():
        raise DatasetError(f"output {os.fspath(out)!r} exists and is not a folder")
    manifest_path, plan_path = out / MANIFEST_NAME, out / _PLAN_NAME
    if manifest_path.exists():
        m = load_manifest(out)
        if m["arguments"] != arguments:
            raise DatasetError(_different(out, m["arguments"], arguments))
        return m
    if plan_path.exists():
        try:
            plan = json.loads(plan_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise DatasetError(
                f"{os.fspath(plan_path)!r} is damaged; remove the folder to start over"
            ) from None
        if plan.get("arguments") != arguments:
            raise DatasetError(_different(out, plan.get("arguments", {}), arguments))
        code = generating_code()
        if plan.get("code") != code:
            made_by = plan.get("code")
            made_by = made_by[:12] if isinstance(made_by, str) else "not recorded"
            raise DatasetError(
                f"{os.fspath(out)!r} holds a partial dataset made by other nnsweeper code (generating code "
                f"{made_by}, this run's {code[:12]}), whose shards may differ: remove the folder to start "
                f"over, or generate into another folder"
            )
        return None
    left = leftovers(out)  # what a killed first write left (atomic_path's temporary files)
    if out.exists() and any(p.name != LOCK_NAME and p not in left for p in out.iterdir()):
        raise DatasetError(f"output folder {os.fspath(out)!r} is not empty and holds no nnsweeper dataset; "
                           f"choose a new folder")
    for p in left:
        p.unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(plan_path, json.dumps({"nnsweeper_version": version, "code": generating_code(),
                                             "arguments": arguments}, indent=1))
    return None


def _different(out: Path, old: dict, new: dict) -> str:
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return (f"output folder {os.fspath(out)!r} holds a different dataset (its {', '.join(keys)} differ from "
            f"these arguments); choose a new folder or give the same arguments to resume it")


def _check_size(parts: Sequence[Part], fractions: dict[str, float], shard_games: int) -> None:
    """Refuse shards too large for a worker's memory, or too many shards, before any game."""
    for p in parts:
        cells = p.rows * p.cols
        if min(shard_games, p.games) * cells > MAX_SHARD_CELLS:
            most = max(1, MAX_SHARD_CELLS // cells)
            raise DatasetError(
                f"shard_games={shard_games} is too many for {p.rows}x{p.cols} boards: a shard holds at "
                f"most {MAX_SHARD_CELLS} board cells (games x rows x cols), so at most {most} games of "
                f"{p.rows}x{p.cols}"
            )
    shards = sum(-(-n // shard_games) for p in parts for n in _split_games(p.games, fractions).values())
    if shards > MAX_SHARDS:
        raise DatasetError(
            f"a dataset has at most {MAX_SHARDS} shards; these parts with shard_games={shard_games} "
            f"make {shards} (raise shard_games)"
        )


def writer_lock(out: Path):
    """Hold the exclusive lock of dataset folder ``out`` (created if new), or refuse at once."""
    if out.exists() and not out.is_dir():
        raise DatasetError(f"output {os.fspath(out)!r} exists and is not a folder")
    return exclusive_lock(out / LOCK_NAME, what=f"dataset {os.fspath(out)!r}", error=DatasetError)


def _remove_stale_temporaries(out: Path) -> None:
    # A killed run may leave the temporary file of a shard behind (nnsweeper.fileio.atomic_path).
    shards = out / "shards"
    for split in (sorted(p for p in shards.iterdir() if p.is_dir()) if shards.is_dir() else []):
        for tmp in leftovers(split):
            tmp.unlink(missing_ok=True)


def generate(
    out,
    parts,
    *,
    games: int = 100,
    splits=(0.8, 0.1, 0.1),
    seed: int = 0,
    policy: str = "csp",
    flags: str = "all",
    record: str = "all",
    epsilon: float = 0.1,
    start: str = "random",
    first_click: str = "safe",
    shard_games: int = 50,
    n_jobs: int | None = 1,
    progress: bool = False,
) -> dict:
    """Generate a labelled dataset of board states into the folder ``out``.

    Parameters
    ----------
    out : str or os.PathLike
        A new or empty folder, or the folder of an interrupted run with the same
        arguments (it is resumed), or of a finished one (checked and returned).
    parts : str, Part, or a sequence of them
        Configurations: part texts (:func:`parse_part`), :class:`Part` objects, or
        mixture names (:data:`MIXES`).
    games : int, default=100
        Games per configuration where a part does not say.
    splits : three fractions or dict, default=(0.8, 0.1, 0.1)
        Share of each configuration's games in train, val and test; each split's
        game seeds come from its own stream (:mod:`nnsweeper.seeds`).
    seed : int, default=0
        Entropy of every game-seed stream.
    policy : {"csp", "single_point", "explore", "reveal", "search", "gnn", "cnn"}, default="csp"
        Behaviour policy where a part does not say (``gnn``, ``cnn``: the bundled networks'
        pure play, without flags).
    flags : {"all", "some", "none"}, default="all"
        Which of the policy's flags the recorded states keep, where a part does not say.
    record : {"all", "guess"}, default="all"
        Record every decision, or only those where the policy guessed.
    epsilon : float, default=0.1
        For ``explore``: the chance per decision of a random non-certain reveal.
    start : {"random", "center", "corner"}, default="random"
        Where the first click goes.
    first_click : {"safe", "zero", "none", "no-guess", "no-guess-fast"}, default="safe"
        First-click rule where a part does not say.
    shard_games : int, default=50
        Games per shard (a shard never mixes configurations or splits); with the
        board's cells at most :data:`MAX_SHARD_CELLS`.
    n_jobs : int or None, default=1
        Worker processes (joblib; -1 all cores; None: the active
        ``joblib.parallel_config``; at most :func:`nnsweeper.parallel.max_jobs`).
        The output does not depend on it.
    progress : bool, default=False
        Show a progress bar.

    Returns
    -------
    dict
        The manifest, also written to ``out/manifest.json``; ``manifest["card_text"]``
        is the dataset card.

    Raises
    ------
    DatasetError
        Bad arguments or a limit exceeded (see the module docstring), a folder that
        holds something else, or another process writing the same folder.
    """
    from nnsweeper.parallel import check_n_jobs

    seed = check_int("seed", seed, 0, DatasetError)
    check_choices(policy, record, start, flags)
    if not 0 <= float(epsilon) <= 1:
        raise DatasetError(f"epsilon must be in [0, 1]; got {epsilon!r}")
    shard_games = check_int("shard_games", shard_games, 1, DatasetError, maximum=MAX_DATASET_GAMES)
    games = check_int("games", games, 1, DatasetError, maximum=MAX_DATASET_GAMES)
    n_jobs = check_n_jobs(n_jobs, allow_none=True, error=DatasetError)
    parts = resolve_parts(parts, games=int(games), first_click=first_click, policy=policy, flags=flags)
    fractions = check_splits(splits)
    _check_size(parts, fractions, shard_games)
    arguments = _arguments(parts, fractions, int(seed), record, float(epsilon), start, int(shard_games))
    out = Path(out)
    with writer_lock(out):
        return _generate(out, parts, fractions, arguments, n_jobs, progress)


def plan_shards(out: Path, parts: Sequence[Part], fractions: dict, seed: int, shard_games: int,
                stream_prefix: tuple[int, ...] = ()) -> tuple[list, list, list]:
    """The seed streams of every part's splits and the shards that hold their games.

    Returns ``(streams, entries, shards)``: the manifest's stream entries, one manifest
    entry per shard (file, split, configuration, board, game range), and per shard
    ``(path, part, its game seeds, index of its first game)``. ``stream_prefix`` starts
    every stream's key (datasets of another kind draw from seed streams of their own).
    """
    streams, entries, shards = [], [], []
    for part in parts:
        for split, n in _split_games(part.games, fractions).items():
            key = (*stream_prefix, *part.stream_key)
            streams.append({**seed_stream(seed, split, key, n), "configuration": part.key})
            seeds = stream_seeds(streams[-1])
            for k, a in enumerate(range(0, n, shard_games)):
                b = min(n, a + shard_games)
                rel = f"shards/{split}/{part.key}-{k:05d}.npz"
                entries.append({"file": rel, "split": split, "config": part.key, "rows": part.rows,
                                "cols": part.cols, "mines": part.mines, "games": [a, b]})
                shards.append((os.fspath(out / rel), part, seeds[a:b], a))
    return streams, entries, shards


def _generate(out: Path, parts: list[Part], fractions: dict, arguments: dict, n_jobs: int | None,
              progress: bool) -> dict:
    """The body of :func:`generate`, run while holding the folder's lock."""
    from nnsweeper._version import __version__

    seed, record, epsilon, start, shard_games = (arguments[k] for k in
                                                 ("seed", "record", "epsilon", "start", "shard_games"))
    done = _prepare_folder(out, arguments, __version__)
    if done is not None:
        _verify_shards(out, done)
        return done
    _remove_stale_temporaries(out)

    streams, entries, shards = plan_shards(out, parts, fractions, seed, shard_games)
    tasks = [(path, part, seeds, first, record, float(epsilon), start) for path, part, seeds, first in shards]

    from tqdm.auto import tqdm

    by_path = {t[0]: e for t, e in zip(tasks, entries, strict=True)}
    with tqdm(total=sum(e["games"][1] - e["games"][0] for e in entries), disable=not progress,
              unit="game", desc="games") as bar:
        for path, digest, stats in imap(_make_shard, tasks, n_jobs, ordered=False):
            entry = by_path[path]
            entry.update(states=stats["states"], sha256=digest, statistics=stats)
            bar.update(entry["games"][1] - entry["games"][0])
    manifest = _manifest(arguments, parts, streams, entries, __version__)
    write_text_atomic(out / MANIFEST_NAME, json.dumps(manifest, indent=1, allow_nan=False) + "\n")
    (out / _PLAN_NAME).unlink(missing_ok=True)
    return manifest


def _manifest(arguments: dict, parts: Sequence[Part], streams: list, entries: list, version: str) -> dict:
    configurations, card = [], []
    totals = None
    for part in parts:
        mine = [e for e in entries if e["config"] == part.key]
        per_split = {s: None for s in SPLITS}
        for e in mine:
            per_split[e["split"]] = add_stats(per_split[e["split"]], e["statistics"])
        games = {s: sum(e["games"][1] - e["games"][0] for e in mine if e["split"] == s) for s in SPLITS}
        states = {s: (per_split[s] or {"states": 0})["states"] for s in SPLITS}
        both = None
        for s in SPLITS:
            if per_split[s] is not None:
                both = add_stats(both, per_split[s])
        configurations.append({**part.to_dict(), "key": part.key, "games_per_split": games,
                               "states_per_split": states, "statistics": both})
        card.append(card_row(part.key, part.games, both))
        totals = add_stats(totals, both)
    card.append(card_row("all", sum(p.games for p in parts), totals))
    shards = [{k: v for k, v in e.items() if k != "statistics"} for e in entries]
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "nnsweeper_version": version,
        "arguments": arguments,
        "splits": {s: {"games": sum(c["games_per_split"][s] for c in configurations),
                       "states": sum(c["states_per_split"][s] for c in configurations)} for s in SPLITS},
        "configurations": configurations,
        "statistics": totals,
        "card": card,
        "card_text": format_card(card),
        "seed_streams": streams,
        "seed_note": ("game seeds of split s lie in [2**62 + s * 2**58, 2**62 + (s + 1) * 2**58) "
                      "(s = 0 train, 1 val, 2 test); evaluation seeds lie below 2**31"),
        "shards": shards,
    }


def _verify_shards(out: Path, manifest: dict) -> None:
    for e in manifest["shards"]:
        read_shard(out / e["file"], e["sha256"])

