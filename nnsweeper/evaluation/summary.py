"""The answer of a comparison in a few lines: per board, the best solver and each solver's gap.

:func:`summarize` groups an :class:`~nnsweeper.evaluation.EvalTable`'s rows by board
(size or preset and first-click rule; the mine counts of one size form one group) and
gives, per solver, its win rate over all the group's games, its gap to a reference
solver with a 95% interval (paired when both played the same games, see
:meth:`~nnsweeper.evaluation.EvalTable.difference`), its largest gap at one
configuration, and how many configurations lie within a few percentage points of the
reference. :func:`format_summary` prints it; ``nnsweeper eval`` and ``compare`` end
with it.

The pooled gap of a group is the difference of win rates over all its games. Its
paired interval is Newcombe's over the pooled pairs of games: the games of different
configurations are independent pairs, so pooling them is sound, and with the same
number of games per configuration the pooled gap is the mean of the configurations'
gaps.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .stats import newcombe_interval, newcombe_paired_interval, wilson_interval
from .table import SETUP_NOTE

__all__ = ["THRESHOLDS", "DENSITY_BANDS", "density_answer", "BoardSummary", "SolverSummary",
           "first_click_words", "format_summary", "pooled_difference", "summarize"]

#: Percentage-point distances from the reference that the summary counts configurations within.
THRESHOLDS = (1.0, 3.0, 5.0)


@dataclass(frozen=True)
class SolverSummary:
    """One solver on one board (all its configurations pooled).

    Attributes
    ----------
    solver : str
    configurations, games, wins : int
        Over the board's configurations that the solver played.
    win_rate : float
        ``wins / games``.
    gap, gap_low, gap_high : float or None
        Win rate minus the reference's over the configurations both played, with its
        95% interval; None for the reference itself or without one.
    paired : bool
        Whether every configuration's games were the reference's games.
    worst : dict or None
        The configuration with the largest gap below the reference (a row of
        :meth:`~nnsweeper.evaluation.EvalTable.difference`); None as for ``gap``.
    within : tuple of int
        Configurations whose gap is no more than each of :data:`THRESHOLDS` points below
        the reference.
    below, above : int
        Configurations whose interval lies wholly below (above) zero.
    learned : bool
        Whether the solver asked a trained model (its rows report model calls): one of
        the networks whose gap to the reference answers the project's question.
    """

    solver: str
    configurations: int
    games: int
    wins: int
    win_rate: float
    gap: float | None = None
    gap_low: float | None = None
    gap_high: float | None = None
    paired: bool = False
    worst: dict | None = None
    within: tuple[int, ...] = ()
    below: int = 0
    above: int = 0
    learned: bool = False
    #: Games one of the pair won and the other lost (paired gaps only; None otherwise).
    discordant: int | None = None


@dataclass(frozen=True)
class BoardSummary:
    """One board of a table: its solvers from the most wins down, and the verdict.

    Attributes
    ----------
    board : str
        ``RxC`` or a preset's name, with the first-click rule.
    configurations : list of str
        The board's configurations, in table order (``"20 mines"``, ``"expert 16x30/99"``).
    games : list of int
        The distinct numbers of games per configuration.
    reference : str or None
        The solver the gaps are measured from (None when it is not on this board).
    solvers : list of SolverSummary
        Highest pooled win rate first (ties in table order), gaps to ``reference``.
    against_best : list of SolverSummary
        The other solvers with their gaps to the best one (:attr:`best`), in the order
        of ``solvers``: what the verdict reads.
    first_click : str
        Where the solvers click first (:func:`first_click_words`: ``"in the corner"``,
        ``"at (3, 3)"``); empty when the table does not say.
    """

    board: str
    configurations: list[str]
    games: list[int]
    reference: str | None
    solvers: list[SolverSummary]
    against_best: list[SolverSummary] = dataclasses.field(default_factory=list)
    first_click: str = ""
    #: Per network (a solver that asks a trained model) on a board of several mine counts: its
    #: gap to the reference pooled over each band of density (:data:`DENSITY_BANDS`), as
    #: ``(band, SolverSummary)`` pairs, sparse first.
    by_density: dict = dataclasses.field(default_factory=dict)

    @property
    def best(self) -> SolverSummary:
        """The solver with the most wins over the board's games."""
        return self.solvers[0]

    def verdict(self) -> str:
        """One sentence: who wins most games, and whether the intervals tell the top apart.

        Solvers are ranked by point estimate only where the paired 95% interval of their
        gap to the leader excludes 0; those whose interval includes 0 are named as not
        distinguishable from it.
        """
        best = self.best
        d = _digits(best.games)
        if len(self.solvers) == 1:
            low, high = wilson_interval(best.wins, best.games)
            return (f"{best.solver} won {best.wins:,} of {best.games:,} games: {100 * best.win_rate:.{d}f}% "
                    f"(95% interval {100 * low:.{d}f} to {100 * high:.{d}f}).")
        level = [s for s in self.against_best if s.gap_high >= 0]
        same = [s for s in level if s.discordant == 0]
        if same and len(same) == len(level):
            # Every game won by one was won by the other: no number of games tells them apart.
            names = ", ".join(s.solver for s in same)
            return (f"{best.solver} and {names} won and lost the very same games "
                    f"({100 * best.win_rate:.{d}f}%): nothing to tell apart.")
        if level:
            others = ", ".join(f"{s.solver} ({_pp(s.gap, d)}, 95% interval {_ci(s, d)})" for s in level)
            return (f"not distinguishable at the top: {best.solver} won the most games "
                    f"({100 * best.win_rate:.1f}%); measured from it, {others}; more games would settle it.")
        closest = max(self.against_best, key=lambda s: s.gap)
        return (f"{best.solver} wins the most games; the closest, {closest.solver}, is "
                f"{-100 * closest.gap:.{d}f} points behind (95% interval {_ci(closest, d)}).")


def summarize(table, reference: str = "csp") -> list[BoardSummary]:
    """Each board's solvers and their gaps to ``reference``.

    Parameters
    ----------
    table : EvalTable
    reference : str, default="csp"
        The solver the others are measured from; a board without it gets win rates
        only.

    Returns
    -------
    list of BoardSummary
        One per board, in table order.
    """
    if len(table) == 0:
        raise ValueError("the table has no rows to summarise")
    groups: dict[tuple, list[dict]] = {}
    for r in table:
        groups.setdefault((_board_name(r), r["first_click"]), []).append(r)
    out = []
    for (board, rule), rows in groups.items():
        solvers = list(dict.fromkeys(r["solver"] for r in rows))
        ref = reference if reference in solvers and len(solvers) > 1 else None
        configs = list(dict.fromkeys(_config_name(r) for r in rows))
        per_solver = [_solver_summary(table, s, ref, rows) for s in solvers]
        per_solver.sort(key=lambda s: -s.win_rate)  # stable: ties keep table order
        top = per_solver[0].solver
        against = [_solver_summary(table, s.solver, top, rows) for s in per_solver[1:]]
        by_density = {}
        counts = sorted({r["mines"] for r in rows})
        if ref is not None and len(counts) >= DENSITY_BANDS:
            bands = [list(b) for b in np.array_split(counts, DENSITY_BANDS)]
            for s in per_solver:
                if s.learned and s.gap is not None:
                    by_density[s.solver] = [
                        (f"{b[0]}-{b[-1]}" if len(b) > 1 else f"{b[0]}",
                         _solver_summary(table, s.solver, ref, [r for r in rows if r["mines"] in b]))
                        for b in bands]
        out.append(BoardSummary(
            board=f"{board}, {rule} first click", configurations=configs,
            games=sorted({r["games"] for r in rows}), reference=ref, solvers=per_solver,
            against_best=against, first_click=first_click_words(table, solvers), by_density=by_density,
        ))
    return out


#: Bands of mine counts (equal numbers of counts, sparse to dense) of the networks' answer by density.
DENSITY_BANDS = 3


def format_summary(table, reference: str = "csp") -> str:
    """The summary of :func:`summarize` as text: a block per board, what the columns mean, time per game.

    A board whose solvers include trained models (rows with model calls) and the
    reference ends with the answer to the project's question: each network's gap to
    the reference, and where its interval lies.
    """
    boards = summarize(table, reference)
    blocks = [_format_board(b) for b in boards]
    legend = _legend(boards)
    timing = _timing_line(table)
    return "\n\n".join(blocks) + (f"\n\n{legend}" if legend else "") + (f"\n\n{timing}" if timing else "")


#: A solver description's ``start`` option, the first of its options (``Solver.__repr__``).
_START = re.compile(r"\w+\(start=(\(\d+, \d+\)|'\w+')")
_START_WORDS = {"corner": "in the corner", "center": "at the center", "random": "on a random cell"}


def first_click_words(table, solvers=None) -> str:
    """Where ``solvers`` (default: all the table's) click first, in words, from the descriptions
    the metadata of ``table`` (an :class:`~nnsweeper.evaluation.EvalTable`) records:
    ``"in the corner"``, ``"at the center"``, ``"at (3, 3)"``, ``"on a random cell"``, or
    ``"at each solver's start (center, corner)"`` when they differ.

    Empty when a solver's description gives no ``start`` (a plain function, a table without
    metadata): the table does not say.
    """
    described = (getattr(table, "metadata", None) or {}).get("solvers")
    described = described if isinstance(described, dict) else {}  # a list names them only
    names = list(dict.fromkeys(r["solver"] for r in table)) if solvers is None else solvers
    found = [_START.match(described.get(name, "")) for name in names]
    if not found or not all(found):
        return ""
    starts = list(dict.fromkeys(m.group(1).strip("'") for m in found))
    if len(starts) > 1:
        return f"at each solver's start ({', '.join(starts)})"
    return _START_WORDS.get(starts[0], f"at {starts[0]}")


def _legend(boards: list[BoardSummary]) -> str:
    """What the columns of the boards' tables mean, once for all of them."""
    ref = next((b.reference for b in boards if b.reference is not None), None)
    if ref is None:
        return ""
    text = (f"Columns: gap to {ref} = win rate minus {ref}'s on the same games, in percentage points, "
            f"with its 95% interval (paired when both played the same games); vs {ref} = where that "
            f"interval lies: better (above 0), worse (below 0) or not distinguishable (it holds 0).")
    if any(len(b.configurations) > 1 for b in boards):
        text += (f" Over a board's configurations: worst gap = the configuration where the solver "
                 f"trails {ref} most; within 1/3/5 pp = configurations no more than 1, 3 and 5 points "
                 f"below {ref}; CI below 0 = configurations whose interval lies wholly below 0 "
                 f"({ref} shown to win more there).")
    return textwrap.fill(text, width=100)


def _timing_line(table) -> str:
    """Mean time per game of each solver over all its games, and its model load apart."""
    parts = []
    for name in table.solvers:
        rows = [r for r in table.select(solver=name) if r["mean_seconds"] == r["mean_seconds"]]  # not NaN
        games = sum(r["games"] for r in rows)
        if games:
            parts.append(f"{name} {1000 * sum(r['mean_seconds'] * r['games'] for r in rows) / games:.1f}")
    if not parts:
        return ""
    line = "ms per game: " + ", ".join(parts)
    setup = table.setup_by_solver()
    if setup:
        loads = ", ".join(f"{n} {s:.1f} s" for n, s in setup.items())
        line += f"; model load, not in them ({SETUP_NOTE}): {loads}"
    return line


# ------------------------------------------------------------------ internals
def _board_name(r: dict) -> str:
    size = f"{r['rows']}x{r['cols']}"
    return size if r["board"] == size else f"{r['board']} {size}"


def _config_name(r: dict) -> str:
    size = f"{r['rows']}x{r['cols']}"
    return f"{r['mines']} mines" if r["board"] == size else f"{r['board']} {size}/{r['mines']}"


def _solver_summary(table, solver: str, reference: str | None, rows: list[dict]) -> SolverSummary:
    mine = [r for r in rows if r["solver"] == solver]
    games, wins = sum(r["games"] for r in mine), sum(r["wins"] for r in mine)
    learned = any(r.get("model_calls") == r.get("model_calls") and r.get("model_calls") is not None
                  for r in mine)  # NaN: no model
    base = dict(solver=solver, configurations=len(mine), games=games, wins=wins, win_rate=wins / games,
                learned=learned)
    if reference is None or solver == reference:
        return SolverSummary(**base)
    keys = {(r["board"], r["rows"], r["cols"], r["mines"], r["first_click"]) for r in mine}
    diffs = [d for d in table.difference(solver, reference)
             if (d["board"], d["rows"], d["cols"], d["mines"], d["first_click"]) in keys]
    gap, low, high, paired = pooled_difference(diffs)
    discordant = sum(d["solver_only"] + d["reference_only"] for d in diffs) if paired else None
    return SolverSummary(
        **base, gap=gap, gap_low=low, gap_high=high, paired=paired, discordant=discordant,
        worst=min(diffs, key=lambda d: d["difference"]),
        within=tuple(sum(_behind(d) <= Fraction(t) / 100 for d in diffs) for t in THRESHOLDS),
        below=sum(d["ci_high"] < 0 for d in diffs), above=sum(d["ci_low"] > 0 for d in diffs),
    )


def pooled_difference(diffs: list[dict]) -> tuple[float, float, float, bool]:
    """The pooled gap of rows of :meth:`~nnsweeper.evaluation.EvalTable.difference` (the
    difference of win rates over all their games) with its 95% interval: Newcombe's paired
    interval over the pooled pairs of games when every row is paired, the independent one
    otherwise.

    Returns
    -------
    gap, low, high : float
        As fractions (not percentage points).
    paired : bool
    """
    if not diffs:
        raise ValueError("pooled_difference needs at least one row of differences")
    paired = all(d["paired"] for d in diffs)
    n1 = sum(d["games"] for d in diffs)
    n2 = sum(d["reference_games"] for d in diffs)
    w1 = sum(d["wins"] for d in diffs)
    w2 = sum(d["reference_wins"] for d in diffs)
    if paired:
        first, second = sum(d["solver_only"] for d in diffs), sum(d["reference_only"] for d in diffs)
        both = w1 - first
        low, high = newcombe_paired_interval(both, first, second, n1 - both - first - second)
    else:
        low, high = newcombe_interval(w1, n1, w2, n2)
    return w1 / n1 - w2 / n2, low, high, paired


def _behind(d: dict) -> Fraction:
    # Exactly, from the counts: how far the solver's win rate lies below the reference's.
    return Fraction(d["reference_wins"], d["reference_games"]) - Fraction(d["wins"], d["games"])


def _standing(s: SolverSummary) -> str:
    """Better, worse, or not distinguishable from the reference: where the paired interval lies."""
    return "better" if s.gap_low > 0 else "worse" if s.gap_high < 0 else "not distinguishable"


def _digits(games: int) -> int:
    """Decimals of percentage points worth printing: a second one from 100,000 games on (intervals of
    about +-0.3 points and less)."""
    return 2 if games >= 100_000 else 1


def _pp(x: float, digits: int = 1) -> str:
    return f"{100 * x:+.{digits}f}"


def _ci(s, digits: int = 1) -> str:
    """The interval, with a decimal more where an end that is not 0 would print as 0 (an interval
    wholly above 0 never reads "+0.0 to ...")."""
    while digits < 4 and any(x != 0 and round(100 * x, digits) == 0 for x in (s.gap_low, s.gap_high)):
        digits += 1
    return f"{_pp(s.gap_low, digits)} to {_pp(s.gap_high, digits)}"


def density_answer(b: BoardSummary) -> str:
    """One sentence: where each network stands against the reference, sparse to dense boards."""
    parts = []
    for name, bands in b.by_density.items():
        said = ", ".join(f"{_pp(s.gap, _digits(s.games))} at {band} mines ({_standing(s)})"
                         for band, s in bands)
        parts.append(f"{name} {said}")
    return f"By density, against {b.reference}: " + "; ".join(parts) + "."


def _format_board(b: BoardSummary) -> str:
    n = len(b.configurations)
    games = "/".join(map(str, b.games))
    board, rule = b.board.rsplit(", ", 1)
    start = f" {b.first_click}" if b.first_click else ""
    if n == 1:
        config = b.configurations[0]
        where = config if " " in board else f"{board}/{config.removesuffix(' mines')}"
        head = f"{where}, {rule}{start}, {games} games"
    else:
        first, last = b.configurations[0], b.configurations[-1]
        if first.endswith(" mines") and last.endswith(" mines"):
            span = f"{first.removesuffix(' mines')} to {last} ({n} counts)"
        else:
            span = f"{n} configurations ({first} to {last})"
        head = f"{board}, {rule}{start}, {span}, {games} games each"
    many = n > 1
    ref = b.reference
    headers = ["solver", "win rate"]
    if ref is not None:
        headers += [f"gap to {ref} (95% CI)", f"vs {ref}"]
        if many:
            headers += ["worst gap", "within " + "/".join(f"{t:g}" for t in THRESHOLDS) + " pp",
                        "CI below 0"]
    rows = []
    for s in b.solvers:
        cells = [s.solver, f"{100 * s.win_rate:.1f}%"]
        if ref is not None:
            if s.gap is None:
                cells += ["reference", ""] + (["", "", ""] if many else [])
            else:
                d = _digits(s.games)
                cells += [f"{_pp(s.gap, d)} ({_ci(s, d)})", _standing(s)]
                if many:
                    w = s.worst
                    cells += [f"{100 * w['difference']:+.1f} at {_config_name(w)}",
                              "/".join(map(str, s.within)) + f" of {s.configurations}",
                              f"{s.below} of {s.configurations}"]
        rows.append(cells)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    paired = ref is not None and all(s.paired for s in b.solvers if s.gap is not None)
    note = (" (gaps in percentage points; paired intervals: the same games)" if paired
            else " (gaps in percentage points; unpaired intervals)" if ref is not None else "")
    out = [head + note, "  " + line(headers), *("  " + line(r) for r in rows), "  " + b.verdict()]
    nets = [s for s in b.solvers if s.learned and s.gap is not None]
    if nets:
        said = "; ".join(f"{s.solver} {_pp(s.gap, _digits(s.games))} ({_ci(s, _digits(s.games))}), "
                         f"{_standing(s)}" for s in nets)
        out.append(textwrap.fill(f"The networks against {ref}: {said}.", width=100, initial_indent="  ",
                                 subsequent_indent="    "))
    if b.by_density:
        out.append(textwrap.fill(density_answer(b), width=100, initial_indent="  ", subsequent_indent="    "))
    return "\n".join(out)
