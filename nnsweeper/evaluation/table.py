"""Evaluation tables: rows per solver and configuration, their files and differences.

:class:`EvalTable` holds what :func:`~nnsweeper.evaluation.evaluate` returns, prints
it aligned, writes it as CSV and JSON and reads the JSON back. Each row can carry
every game's result in seed order, packed by :func:`pack_outcomes`; two rows that
played the same games (:func:`config_key`, ``base_seed`` and the number of games)
are then compared game by game in :meth:`EvalTable.difference`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
from pathlib import Path

import numpy as np

from nnsweeper.errors import NnsweeperError, check_int
from nnsweeper.fileio import write_text_atomic

from .stats import newcombe_interval, newcombe_paired_interval

__all__ = ["EvalTable", "config_key", "pack_outcomes", "unpack_outcomes"]


# ------------------------------------------------------------------ outcomes
def pack_outcomes(won) -> str:
    """Per-game results as a compact hex string (the ``outcomes`` field of a row).

    Parameters
    ----------
    won : array_like of bool, shape (games,)
        Whether each game was won, in seed order.

    Returns
    -------
    str
        ``numpy.packbits(won).tobytes().hex()``: each byte holds eight games, the first
        game in its highest bit, and the last byte is padded with zero bits. Each hex
        digit therefore covers four consecutive games (``"c"`` = won, won, lost, lost).
        Reading it back needs the number of games (:func:`unpack_outcomes`).
    """
    a = np.asarray(won)
    if a.ndim != 1 or (a.dtype != bool and not np.isin(a, (0, 1)).all()):
        raise ValueError(f"won must be a 1-D array of booleans (or 0/1); got {a!r}")
    return np.packbits(a.astype(bool)).tobytes().hex()


def unpack_outcomes(text: str, games: int) -> np.ndarray:
    """The per-game results packed by :func:`pack_outcomes`.

    Parameters
    ----------
    text : str
        The hex string.
    games : int
        Number of games it holds.

    Returns
    -------
    ndarray of bool, shape (games,)
        Whether each game was won, in seed order.

    Raises
    ------
    ValueError
        ``text`` not a hex string of ``2 * ceil(games / 8)`` digits, or with a set
        padding bit.
    """
    games = check_int("games", games, 0)
    digits = 2 * ((games + 7) // 8)
    if not isinstance(text, str) or len(text) != digits:
        raise ValueError(
            f"outcomes must be a hex string of {digits} digits for {games} games; got {text!r:.60}"
        )
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"outcomes must hold hex digits 0-9a-f only; got {text!r:.60}") from None
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8))
    if bits[games:].any():
        raise ValueError(
            f"outcomes holds more than {games} games: a padding bit after game {games} is set"
        )
    return bits[:games].astype(bool)


# --------------------------------------------------------------------- table
#: What the model load printed under a table and in the summary holds.
SETUP_NOTE = "summed over the processes that played; torch's import counted with each process's first model"
_TEXT = ("solver", "board", "first_click")
_INT = ("rows", "cols", "mines", "games", "wins")


class EvalTable:
    """Results of :func:`~nnsweeper.evaluation.evaluate`: one row (a dict) per solver and configuration.

    Parameters
    ----------
    rows : list of dict
        Each with the keys of :attr:`COLUMNS`. NaN marks a figure the solver does not
        report (guesses for plain callables, the share cleared when no game was lost).
    metadata : dict, optional
        The arguments, the package version, the solvers and (from the command line)
        the command; saved by :meth:`to_json`.

    Attributes
    ----------
    COLUMNS : tuple of str
        ``solver``, ``board`` (preset name or ``RxC``), ``rows``, ``cols``, ``mines``,
        ``density``, ``first_click``, ``games``, ``wins``, ``win_rate``, ``ci_low`` and
        ``ci_high`` (95% Wilson interval of the win rate), ``mean_guesses`` (guesses per
        game, first click excluded), ``mean_cleared_lost`` (mean share of safe cells
        revealed in lost games), ``mean_seconds``, ``median_seconds`` and
        ``max_seconds`` per game (for solvers that play in lockstep, the per-game time
        of lockstep play: own work plus a share of each batched model call),
        ``setup_seconds`` (one-time set-up, in none of the games' times: seconds
        spent loading models, imports included, by the processes that played the
        row, summed over them; each
        process loads a model once, before its games' clocks start, and reports it
        with the first row it plays with that model, so the other rows show 0),
        ``model_calls`` (times per game a neural model was asked) and
        ``model_safe_rate`` (share of the cells opened on the model's say-so that
        were safe); the last two are NaN for solvers without a model.
        ``max_seconds``, ``setup_seconds``, ``model_calls`` and ``model_safe_rate`` are
        NaN in tables written before they existed.
    EXTRAS : tuple of str
        Row fields kept in the JSON file but not in the CSV file or the printed
        table: ``base_seed`` (int, the seed of the games' seeds, :func:`~nnsweeper.evaluation.game_seeds`)
        and ``outcomes`` (every game's result in seed order, packed by
        :func:`pack_outcomes`). Both are None in rows without them, such as rows of
        tables written before they existed. Rows with the same ``base_seed``, board,
        first-click rule and number of games played the same games.
    """

    COLUMNS = (
        "solver", "board", "rows", "cols", "mines", "density", "first_click", "games",
        "wins", "win_rate", "ci_low", "ci_high", "mean_guesses", "mean_cleared_lost",
        "mean_seconds", "median_seconds", "max_seconds", "setup_seconds", "model_calls",
        "model_safe_rate",
    )
    EXTRAS = ("base_seed", "outcomes")
    #: Columns that tables written before they existed lack (read as NaN).
    _LATER = ("max_seconds", "setup_seconds", "model_calls", "model_safe_rate")

    def __init__(self, rows, metadata=None):
        self.rows = [{**dict.fromkeys(self._LATER, math.nan), **dict.fromkeys(self.EXTRAS), **dict(r)}
                     for r in rows]
        for i, r in enumerate(self.rows):
            missing = [c for c in self.COLUMNS if c not in r]
            if missing:
                raise ValueError(f"row {i} of the table lacks column(s) {', '.join(missing)}")
            _check_extras(i, r)
        self.metadata = dict(metadata or {})

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __repr__(self) -> str:
        return f"EvalTable({len(self.rows)} rows, solvers={self.solvers})"

    # ------------------------------------------------------------- queries
    @property
    def solvers(self) -> list[str]:
        """Solver names in table order."""
        return list(dict.fromkeys(r["solver"] for r in self.rows))

    @property
    def boards(self) -> list[str]:
        """Board names in table order."""
        return list(dict.fromkeys(r["board"] for r in self.rows))

    def select(self, **criteria) -> list[dict]:
        """Rows whose columns equal the given values, e.g. ``select(solver="csp")``."""
        bad = [c for c in criteria if c not in self.COLUMNS]
        if bad:
            raise ValueError(
                f"unknown column {bad[0]!r}; columns are {', '.join(self.COLUMNS)}"
            )
        return [r for r in self.rows if all(r[c] == v for c, v in criteria.items())]

    def column(self, name: str, **criteria) -> np.ndarray:
        """One column as an array, over the rows that match ``criteria``."""
        if name not in self.COLUMNS:
            raise ValueError(f"unknown column {name!r}; columns are {', '.join(self.COLUMNS)}")
        values = [r[name] for r in self.select(**criteria)]
        return np.array(values, dtype=object if name in _TEXT else float)

    def win_rates(self, solver: str, **criteria) -> np.ndarray:
        """Win rates of one solver (float array), in table order.

        Extra keyword arguments filter further, e.g. ``board="10x10"``.
        """
        self._check_solver("solver", solver)
        return self.column("win_rate", solver=solver, **criteria)

    def outcomes(self, solver: str, **criteria) -> list[np.ndarray | None]:
        """Per-game results (bool arrays in seed order) of one solver's rows, in table order.

        None for a row without them. Extra keyword arguments filter further.
        """
        self._check_solver("solver", solver)
        return [None if r["outcomes"] is None else unpack_outcomes(r["outcomes"], r["games"])
                for r in self.select(solver=solver, **criteria)]

    def difference(self, solver: str, reference: str = "csp", **criteria) -> list[dict]:
        """Win rate of ``solver`` minus that of ``reference``, per configuration, with a 95% interval.

        Parameters
        ----------
        solver, reference : str
            Two solvers of the table.
        **criteria
            Column values the configurations must have, e.g. ``board="10x10"``.

        Returns
        -------
        list of dict
            One dict per configuration (board, size, mine count and first-click rule)
            that both solvers played, in the order of ``solver``'s rows, with the keys
            ``board``, ``rows``, ``cols``, ``mines``, ``density``, ``first_click``,
            ``solver``, ``reference``, ``games`` and ``reference_games``, ``wins`` and
            ``reference_wins``, ``win_rate`` and ``reference_win_rate``, ``difference``
            (solver minus reference, a proportion), ``ci_low`` and ``ci_high`` (its 95% interval), ``paired``
            (bool), ``method`` and, for paired rows, ``solver_only`` and
            ``reference_only`` (games only one of them won; None otherwise).

            The interval is paired (``method="newcombe-paired"``,
            :func:`newcombe_paired_interval`) when both rows hold the outcomes of the
            same games: both have ``outcomes``, the same ``base_seed`` and the same
            number of games. Otherwise it treats the rows as independent samples
            (``method="newcombe-hybrid"``, :func:`newcombe_interval`), which is wider
            when the solvers tend to win the same games.

        Raises
        ------
        ValueError
            An unknown solver or column; ``solver`` equal to ``reference``; a
            ``solver`` criterion; a configuration with more than one row of a solver;
            no configuration played by both.
        """
        self._check_solver("solver", solver)
        self._check_solver("reference", reference)
        if solver == reference:
            raise ValueError(f"solver and reference must differ; got {solver!r} for both")
        if "solver" in criteria:
            raise ValueError("criteria must not name the solver; give it as solver= and reference=")
        ours = self._by_config(solver, criteria)
        theirs = self._by_config(reference, criteria)
        out = [_difference_row(r, theirs[key], solver, reference)
               for key, r in ours.items() if key in theirs]
        if not out:
            where = f" with {criteria}" if criteria else ""
            raise ValueError(
                f"no configuration{where} was played by both {solver!r} and {reference!r}"
            )
        return out

    def _check_solver(self, name: str, solver) -> None:
        if solver not in self.solvers:
            raise ValueError(f"{name} must be one of {', '.join(self.solvers)}; got {solver!r}")

    def _by_config(self, solver: str, criteria: dict) -> dict[tuple, dict]:
        out: dict[tuple, dict] = {}
        for r in self.select(solver=solver, **criteria):
            key = config_key(r)
            if key in out:
                raise ValueError(
                    f"solver {solver!r} has more than one row for board {r['board']} "
                    f"({r['rows']}x{r['cols']}, {r['mines']} mines, {r['first_click']} first click)"
                )
            out[key] = r
        return out

    # ------------------------------------------------------------------ text
    def setup_by_solver(self) -> dict[str, float]:
        """Set-up time per solver: its rows' ``setup_seconds`` summed, for solvers that had any.

        Returns
        -------
        dict of str to float
            Seconds the processes that played spent setting each solver up (loading
            its model), summed over them, in table order; solvers with none (or
            with rows from tables written before the column existed) are left out.
            A model that several solvers play is loaded once per process and counted
            for the solver that used it first.
        """
        out: dict[str, float] = {}
        for r in self.rows:
            s = r["setup_seconds"]
            if s is not None and not _is_nan(s) and s > 0:
                out[r["solver"]] = out.get(r["solver"], 0.0) + float(s)
        return out

    def __str__(self) -> str:
        headers = ("solver", "board", "mines", "density", "games", "wins", "win rate",
                   "95% CI", "guesses", "cleared|lost", "ms mean", "ms median", "model calls",
                   "model safe")

        def num(v, fmt):
            return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)

        body = [
            (
                r["solver"], r["board"], str(r["mines"]), num(r["density"], ".3f"),
                str(r["games"]), str(r["wins"]), num(r["win_rate"], ".3f"),
                f"{num(r['ci_low'], '.3f')}-{num(r['ci_high'], '.3f')}",
                num(r["mean_guesses"], ".2f"), num(r["mean_cleared_lost"], ".3f"),
                num(1000 * r["mean_seconds"], ".1f"), num(1000 * r["median_seconds"], ".1f"),
                num(r["model_calls"], ".2f"), num(r["model_safe_rate"], ".3f"),
            )
            for r in self.rows
        ]
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(headers)]
        left = {0, 1}

        def line(cells):
            parts = [c.ljust(w) if i in left else c.rjust(w)
                     for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
            return "  ".join(parts).rstrip()

        lines = [line(headers), *(line(b) for b in body)]
        setup = self.setup_by_solver()
        if setup:
            # Set-up is not in any game's time: said once, per solver, under the table.
            lines.append(f"model load, not in ms per game ({SETUP_NOTE}): "
                         + ", ".join(f"{name} {s:.1f} s" for name, s in setup.items()))
        return "\n".join(lines)

    def merge(self, other: EvalTable) -> EvalTable:
        """This table with the solvers of ``other`` added, played on the same games.

        Every row of ``other`` must be of a solver this table lacks and of a
        configuration (:func:`config_key`) this table has, with as many games and the
        same ``base_seed``: the merged rows are then paired game by game, as if one
        run had played them all. The recorded arguments must agree (the number of
        worker processes aside, which changes no result). The metadata keeps this
        table's, with the solvers of both and, under ``"added"``, each added run's
        command, date, solvers and runs (where and how long it played).

        Raises
        ------
        ValueError
            A solver in both tables, a configuration this table lacks or played on
            other games, or arguments that differ.
        """
        if not isinstance(other, EvalTable):
            raise ValueError(f"can only merge another EvalTable; got {type(other).__name__}")
        both = [name for name in other.solvers if name in self.solvers]
        if both:
            raise ValueError(f"solver {both[0]!r} is in both tables; merge adds solvers, it does not "
                             "replace them")
        games = {config_key(r): (r["games"], r["base_seed"]) for r in self.rows}
        for r in other.rows:
            key = config_key(r)
            if key not in games:
                raise ValueError(f"the added table has {r['solver']} on {r['board']} with {r['mines']} mines "
                                 f"({r['first_click']} first click), which this table lacks")
            if games[key] != (r["games"], r["base_seed"]):
                raise ValueError(
                    f"{r['solver']} on {r['board']} with {r['mines']} mines played {r['games']} games from "
                    f"base_seed {r['base_seed']}; this table's rows there played {games[key][0]} from "
                    f"base_seed {games[key][1]}: not the same games"
                )
        ours, theirs = (dict(t.metadata.get("arguments") or {}) for t in (self, other))
        for args in (ours, theirs):
            for free in ("n_jobs", "held_out_from"):
                args.pop(free, None)
        differ = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
        if differ:
            k = differ[0]
            raise ValueError(f"the tables were made with different {k}: {ours.get(k)!r} and "
                             f"{theirs.get(k)!r}")
        meta = dict(self.metadata)
        meta["solvers"] = {**(self.metadata.get("solvers") or {}), **(other.metadata.get("solvers") or {})}
        meta["added"] = [*(self.metadata.get("added") or []), _provenance(other, other.solvers)]
        return EvalTable([*self.rows, *other.rows], meta)

    def renamed(self, old: str, new: str) -> EvalTable:
        """This table with solver ``old`` called ``new`` (its rows, description and weights).

        Keeps a solver's rows beside those of the same name played again (see
        :meth:`replace`): the rows stay paired game by game with the others.

        Raises
        ------
        ValueError
            ``old`` not in the table, or ``new`` already in it or empty.
        """
        self._check_solver("old", old)
        if not isinstance(new, str) or not new or new in self.solvers:
            why = "is already a solver of this table" if new in self.solvers else "is not a solver name"
            raise ValueError(f"cannot rename {old!r} to {new!r}: {new!r} {why}")
        rows = [{**r, "solver": new} if r["solver"] == old else r for r in self.rows]
        meta = dict(self.metadata)
        for key in ("solvers", "weights"):
            if old in (self.metadata.get(key) or {}):
                meta[key] = {(new if k == old else k): v for k, v in self.metadata[key].items()}
        return EvalTable(rows, meta)

    def replace(self, other: EvalTable, *, keep_as: str | None = None) -> EvalTable:
        """This table with the rows of ``other``'s solvers in place of its own rows of them.

        The table of a solver played again (new weights, say) on the same games: every
        solver of ``other`` must be in this table, with rows for exactly the
        configurations it has here, as many games and the same ``base_seed``, so that
        the new rows pair game by game with the others as the old ones did. The rows keep
        their places; the metadata keeps this table's, with the solvers' descriptions and
        weights of ``other`` and, under ``"replaced"``, each replacing run's command, date,
        solvers and runs.

        With ``keep_as`` (``other`` playing one solver), the old rows stay too, under that
        name (:meth:`renamed`), and the new ones are added after them (:meth:`merge`):
        the table then pairs a changed solver with what it was, game by game, and the
        ``"added"`` entry of the run says which rows were kept as what (``"kept_as"``).

        Raises
        ------
        ValueError
            A solver this table lacks, other configurations or other games, or
            arguments that differ (as for :meth:`merge`); with ``keep_as``, ``other``
            playing more than one solver, or ``keep_as`` a solver this table has.
        """
        if not isinstance(other, EvalTable):
            raise ValueError(f"can only replace rows by another EvalTable's; got {type(other).__name__}")
        new = other.solvers
        absent = [name for name in new if name not in self.solvers]
        if absent:
            raise ValueError(f"solver {absent[0]!r} is not in this table; replace plays a solver again "
                             "(merge adds one)")
        for name in new:
            old = {config_key(r): (r["games"], r["base_seed"]) for r in self.select(solver=name)}
            got = {config_key(r): (r["games"], r["base_seed"]) for r in other.select(solver=name)}
            if old.keys() != got.keys():
                raise ValueError(f"{name} was played on {len(got)} configuration(s), this table has it on "
                                 f"{len(old)}: replacing rows needs the same configurations")
            for key, (games, seed) in got.items():
                if old[key] != (games, seed):
                    raise ValueError(f"{name} played {games} games from base_seed {seed} on {key}; this "
                                     f"table's row there played {old[key][0]} from base_seed {old[key][1]}: "
                                     "not the same games")
        if keep_as is not None:
            if len(new) != 1:
                raise ValueError(f"keep_as names the earlier rows of one solver; the new table plays "
                                 f"{len(new)}: {', '.join(new)}")
            merged = self.renamed(new[0], keep_as).merge(other)
            merged.metadata["added"][-1]["kept_as"] = {new[0]: keep_as}
            return merged
        kept = [r for r in self.rows if r["solver"] not in new]
        if kept:  # the arguments must agree, as for merge (the rows were checked above)
            EvalTable(kept, self.metadata).merge(other)
        by_key = {(r["solver"], config_key(r)): r for r in other.rows}
        rows = [by_key.get((r["solver"], config_key(r)), r) for r in self.rows]
        meta = dict(self.metadata)
        meta["solvers"] = {**(self.metadata.get("solvers") or {}), **(other.metadata.get("solvers") or {})}
        if self.metadata.get("weights") or other.metadata.get("weights"):
            weights = {k: v for k, v in (self.metadata.get("weights") or {}).items() if k not in new}
            meta["weights"] = {**weights, **(other.metadata.get("weights") or {})}
        meta["replaced"] = [*(self.metadata.get("replaced") or []), _provenance(other, new)]
        return EvalTable(rows, meta)

    # ----------------------------------------------------------------- files
    def to_csv(self, path) -> Path:
        """Write the rows as CSV (header row; empty cells for NaN), atomically."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.COLUMNS)
        for r in self.rows:
            writer.writerow(["" if _is_nan(r[c]) else r[c] for c in self.COLUMNS])
        return write_text_atomic(path, buf.getvalue())

    def to_json(self, path) -> Path:
        """Write the metadata and the rows as JSON (null for NaN), atomically.

        Rows hold the :attr:`COLUMNS` and the :attr:`EXTRAS` (null when absent).
        """
        fields = (*self.COLUMNS, *self.EXTRAS)
        doc = {
            "metadata": self.metadata,
            "columns": list(self.COLUMNS),
            "rows": [{c: None if _is_nan(r[c]) else r[c] for c in fields} for r in self.rows],
        }
        return write_text_atomic(path, json.dumps(doc, indent=2, allow_nan=False) + "\n")

    @classmethod
    def from_json(cls, path) -> EvalTable:
        """Read a table written by :meth:`to_json`.

        Raises
        ------
        NnsweeperError
            A file that is not such a table (binary, empty, not JSON, JSON of another
            shape), naming the file and what it holds instead.
        """
        def refuse(why: str):
            return NnsweeperError(f"cannot read table {str(path)!r}: it is not an evaluation table "
                                  f"(JSON written by eval or compare): {why}")

        with open(path, "rb") as f:
            data = f.read()
        if not data.strip():
            raise refuse("the file is empty")
        if data.startswith(b"PK\x03\x04"):  # what numpy's .npz (a game store's chunk) is
            raise refuse("it is a zip archive (such as a chunk of a game store, .npz)")
        try:
            doc = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise refuse(f"it is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
        except json.JSONDecodeError as e:
            raise refuse(f"it is not valid JSON ({e})") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            raise refuse("it has no list of rows")
        rows = []
        for i, r in enumerate(doc["rows"]):
            if not isinstance(r, dict):
                raise refuse(f"row {i} is not an object")
            try:
                rows.append({c: _from_json_value(c, v) for c, v in r.items()})
            except (TypeError, ValueError):
                bad = next(c for c, v in r.items() if not _converts(c, v))
                raise refuse(f"row {i} has {bad} = {r[bad]!r}") from None
        metadata = doc.get("metadata")
        try:
            return cls(rows, metadata if isinstance(metadata, dict) else None)
        except ValueError as e:
            raise refuse(str(e)) from None


def _provenance(other: EvalTable, solvers: list[str]) -> dict:
    """What a table keeps of a run whose rows it took in (:meth:`EvalTable.merge`,
    :meth:`EvalTable.replace`): its command, date, solvers and runs."""
    return {"command": other.metadata.get("command"), "created": other.metadata.get("created"),
            "solvers": list(solvers), "runs": list(other.metadata.get("runs") or [])}


def _is_nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _check_extras(i: int, r: dict) -> None:
    """Check a row's ``base_seed`` and ``outcomes`` (None, or consistent with its counts)."""
    seed, packed = r["base_seed"], r["outcomes"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
                             or seed < 0):
        raise ValueError(f"row {i} of the table: base_seed must be None or a non-negative integer; "
                         f"got {seed!r}")
    if packed is None:
        return
    try:
        won = unpack_outcomes(packed, r["games"])
    except ValueError as e:
        raise ValueError(f"row {i} of the table: {e}") from None
    if int(won.sum()) != r["wins"]:
        raise ValueError(
            f"row {i} of the table: outcomes hold {int(won.sum())} won games but wins is {r['wins']}"
        )


def config_key(row) -> tuple:
    """What identifies a row's configuration: ``(board, rows, cols, mines, first_click)``.

    Two rows with the same key (of different solvers) played the same kind of games;
    :meth:`EvalTable.difference` pairs rows by it.

    Parameters
    ----------
    row : mapping
        A table row, with at least those five columns.

    Returns
    -------
    tuple
    """
    return (row["board"], row["rows"], row["cols"], row["mines"], row["first_click"])


def _difference_row(r: dict, ref: dict, solver: str, reference: str) -> dict:
    """One configuration of :meth:`EvalTable.difference`."""
    same_games = (r["outcomes"] is not None and ref["outcomes"] is not None
                  and r["base_seed"] is not None and r["base_seed"] == ref["base_seed"]
                  and r["games"] == ref["games"])
    solver_only = reference_only = None
    if same_games:
        x = unpack_outcomes(r["outcomes"], r["games"])
        y = unpack_outcomes(ref["outcomes"], ref["games"])
        solver_only, reference_only = int(np.sum(x & ~y)), int(np.sum(~x & y))
        low, high = newcombe_paired_interval(int(np.sum(x & y)), solver_only, reference_only,
                                             int(np.sum(~x & ~y)))
    else:
        low, high = newcombe_interval(r["wins"], r["games"], ref["wins"], ref["games"])
    return {
        "board": r["board"], "rows": r["rows"], "cols": r["cols"], "mines": r["mines"],
        "density": r["density"], "first_click": r["first_click"],
        "solver": solver, "reference": reference,
        "games": r["games"], "reference_games": ref["games"],
        "wins": r["wins"], "reference_wins": ref["wins"],
        "win_rate": r["wins"] / r["games"], "reference_win_rate": ref["wins"] / ref["games"],
        "difference": r["wins"] / r["games"] - ref["wins"] / ref["games"],
        "ci_low": low, "ci_high": high,
        "paired": same_games,
        "method": "newcombe-paired" if same_games else "newcombe-hybrid",
        "solver_only": solver_only, "reference_only": reference_only,
    }


def _converts(column: str, v) -> bool:
    try:
        _from_json_value(column, v)
    except (TypeError, ValueError):
        return False
    return True


def _from_json_value(column: str, v):
    if column in _TEXT or column not in EvalTable.COLUMNS:
        return v
    if column in _INT:
        return int(v)
    return math.nan if v is None else float(v)
