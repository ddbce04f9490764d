"""``docs/results.md``: the leaderboards of the record runs, beside the published marks of other solvers.

Reads the tables of the record runs (``eval/records.py``) in ``eval/results/``: for each
board and rule, every solver with its games, win rate and 95% interval, its paired gap
to ``csp`` and to ``search`` (same games, Newcombe's paired interval), and the verdict,
which ranks two solvers only where the paired interval of their gap excludes 0. Beside
each board, the figures other solvers published for the same rules, with the
difference from ours. Runs still under way are listed with the games recorded so far.
The README's headline block (between ``<!-- results: begin`` and ``<!-- results: end -->``)
is written from the same tables.

::

    python eval/results_page.py        # also run by make figures
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "results.md"
README = ROOT / "README.md"
BEGIN = "<!-- results: begin (written by make figures from docs/results.md's tables) -->"
END = "<!-- results: end -->"

sys.path.insert(0, str(ROOT / "eval"))
from records import RECORDS, Record  # noqa: E402
from reproduce import outside_program  # noqa: E402


@dataclass(frozen=True)
class Published:
    """A win rate another solver's authors published."""

    who: str
    board: str  # preset name
    rule: str  # first_click rule
    start: str  # where the first click goes, as our solvers' start option prints
    win_rate: float  # percent
    interval: tuple[float, float] | None  # percent, as published (None: not given)
    games: str
    note: str = ""


#: Published marks, as their authors give them (rules: the first-click rule and where the first click goes).
PUBLISHED = (
    Published("DavidNHill's Java solver (DavidNHill/Minesweeper)", "expert", "safe", "corner", 41.132,
              (41.102, 41.162), "10,000,000",
              "41.132% ± 0.03, settings SMALL_ANALYSIS, as stated in JSMinesweeper's issue 38; not "
              "JSMinesweeper, whose README calls itself slightly weaker"),
    Published("Tu et al., PSEQ-D256", "beginner", "safe", "corner", 91.695, None, "100,000,000"),
    Published("Tu et al., PSEQ-D256", "intermediate", "safe", "corner", 78.230, None, "100,000,000"),
    Published("Tu et al., PSEQ-D256", "expert", "safe", "corner", 40.043, None, "100,000,000"),
    Published("Tu et al., PSEQ-D256", "expert", "zero", "(3, 3)", 53.452, (53.425, 53.479), "not given",
              "53.452% ± 0.027; the first click opens an area at (3, 3)"),
    Published("minesolve", "expert", "safe", "corner", 40.80, (40.71, 40.90), "not given",
              "95% interval 40.71 to 40.90"),
)


def _pct(x: float, digits: int = 2) -> str:
    return f"{100 * x:.{digits}f}%"


def _pp(x: float) -> str:
    return f"{100 * x:+.2f}"


#: A solver description's ``start`` option.
_START = re.compile(r"start=(\(\d+, \d+\)|'[^']*'|[^,)]*)")


def _start(table) -> str:
    """Where the table's solvers click first (their ``start`` option), if they agree."""
    starts = {m.group(1) for d in table.metadata.get("solvers", {}).values() for m in [_START.search(d)] if m}
    return starts.pop().strip("'") if len(starts) == 1 else "mixed"


def _earlier(table) -> dict[str, str]:
    """The table's solvers whose rows an earlier version played, each with its recorded description.

    A solver's row is today's where the table's description of it (its options, with its
    ``start``) and the weights it recorded are what the solver of that name is now; rows
    kept under a name no solver has (``search-v1``) are what they say they are.
    """
    out = {}
    weights = table.metadata.get("weights") or {}
    for name, recorded in (table.metadata.get("solvers") or {}).items():
        today = _today(name)
        if today is None:  # no solver of that name today
            continue
        start = _START.search(recorded)
        now = today[0] if start is None else _START.sub(lambda _, s=start[0]: s, today[0], count=1)
        if now != recorded or (name in weights and weights[name] != today[1]):
            out[name] = recorded
    return out


@functools.cache
def _today(name: str) -> tuple[str, dict] | None:
    """The description and weights of the solver called ``name`` today (None: no such solver),
    made once per page (a neural solver loads its model and digests its checkpoint)."""
    from nnsweeper.solvers import get_solver

    try:
        solver = get_solver(name)
    except ValueError:
        return None
    return repr(solver), solver.weights()


def _runs(runs: list[dict], jobs=None) -> str:
    """Where and how long ``runs`` (a table's recorded runs) played, each machine and worker count
    with its games.

    The recorded command is the last run's (each run records its own); where an earlier
    run had another number of workers than its ``--jobs`` (``jobs``), that is said too.
    """
    if not runs:
        return "where the games were played is not recorded"
    wall = sum(r["wall_seconds"] for r in runs)
    places: dict[str, list] = {}
    for r in runs:
        where = (f"{r['workers']} worker{'s' * (r['workers'] != 1)} on {r['cpus']} "
                 f"core{'s' * (r['cpus'] != 1)} ({r['machine']})")
        place = places.setdefault(where, [0, 0, 0.0])
        place[0] += 1
        place[1] += r["games"]
        place[2] += r["wall_seconds"]
    text = f"{len(runs)} run{'s' * (len(runs) > 1)}, {wall / 3600:.2f} h wall time in all"
    if len(places) == 1:
        text += f", on {next(iter(places))}"
    else:  # each machine with the games it played
        text += "; " + "; ".join(
            f"{n} run{'s' * (n > 1)} on {where}: {games:,} games in {seconds / 3600:.2f} h"
            for where, (n, games, seconds) in places.items())
    other = sorted({r["workers"] for r in runs if r["workers"] != jobs})
    if len(runs) > 1 and isinstance(jobs, int) and jobs > 0 and other:
        text += (f"; the command, with its --jobs {jobs}, is the last run's: the runs on "
                 f"{' or '.join(map(str, other))} workers were started with another --jobs, which the "
                 "results do not depend on")
    return text


def _later_runs(table) -> list[str]:
    """A sentence for each run whose rows the table took in after it was made, oldest first:
    solvers played again on the same games (:meth:`~nnsweeper.evaluation.EvalTable.replace`,
    or :meth:`~nnsweeper.evaluation.EvalTable.merge` beside their earlier rows, renamed) or
    added (merged)."""
    entries = sorted(((e.get("created") or "", how, e) for how in ("replaced", "added")
                      for e in table.metadata.get(how) or []), key=lambda t: t[0])
    out = []
    for created, how, entry in entries:
        kept = entry.get("kept_as") or {}
        verb = "were played again" if how == "replaced" or kept else "were added, played"
        command = entry.get("command") or ""
        if not command.startswith("python "):  # a script's command, not nnsweeper's
            command = "nnsweeper " + command.removeprefix("nnsweeper ")
        text = (f"The rows of {', '.join(entry.get('solvers') or [])} {verb} on the same games on "
                f"{created[:10]} by `{command}`")
        if entry.get("runs"):
            text += f" ({_runs(entry['runs'])})"
        text += "".join(f"; the earlier rows of {a} are kept as {b}" for a, b in kept.items())
        out.append(text + ".")
    return out


def _gap_cell(s) -> str:
    if s is None or s.gap is None:
        return "—"
    return f"{_pp(s.gap)} ({_pp(s.gap_low)} to {_pp(s.gap_high)})"


def _outside(table) -> set[str]:
    """The table's solvers that are programs outside nnsweeper (recorded as ``Peer(...)`` by
    ``benchmarks/peers/``, :func:`reproduce.outside_program`): set beside ours, never taken for ours."""
    return {name for name, text in (table.metadata.get("solvers") or {}).items()
            if outside_program(text) is not None}


def board_section(record: Record, table) -> tuple[list[str], list[dict]]:
    """The Markdown of one record table, and its headline rows (solver, board, rule, rate, interval)."""
    from nnsweeper.evaluation import summarize, wilson_interval

    out, heads = [], []
    solvers = table.solvers
    by_ref = {ref: summarize(table, ref) for ref in ("csp", "search") if ref in solvers}
    base = summarize(table, solvers[0])
    start = _start(table)
    earlier = _earlier(table)
    outside = _outside(table)
    for k, b in enumerate(base):
        rule = table.rows[0]["first_click"]
        games = "/".join(f"{g:,}" for g in b.games)
        single = len(b.configurations) == 1
        where = b.configurations[0] if single else b.board.rsplit(", ", 1)[0]
        out.append(f"### {where}, {rule} first click, first click at {start}: {games} games "
                   f"{'each' if len(b.configurations) > 1 else 'per solver'}")
        out.append("")
        if len(b.configurations) > 1:
            out.append(f"Configurations: {', '.join(b.configurations)} (pooled below).")
            out.append("")
        refs = list(by_ref)
        out.append("| solver | games | wins | win rate | 95% interval | "
                   + " | ".join(f"gap to {r}, points (paired 95% interval)" for r in refs) + " |")
        out.append("|" + " --- |" * 3 + " ---: |" * (2 + len(refs)))
        for s in b.solvers:
            low, high = wilson_interval(s.wins, s.games)
            gaps = []
            for r in refs:
                match = next(x for x in by_ref[r][k].solvers if x.solver == s.solver)
                gaps.append(_gap_cell(match) if match.solver != r else "reference")
            out.append(f"| {s.solver} | {s.games:,} | {s.wins:,} | {_pct(s.win_rate)} | "
                       f"{_pct(low)} to {_pct(high)} | " + " | ".join(gaps) + " |")
            if single:  # the README's headline holds the classic boards
                heads.append({"solver": s.solver, "earlier": s.solver in earlier,
                              "outside": s.solver in outside,
                              "board": where, "rule": rule, "start": start,
                              "games": s.games, "rate": s.win_rate, "low": low, "high": high,
                              "base_seed": table.metadata.get("arguments", {}).get("base_seed")})
        out.append("")
        out.append(f"Verdict: {b.verdict()}")
        out.append("")
        preset = table.rows[0]["board"]
        peers = [p for p in PUBLISHED if (p.board, p.rule, p.start) == (preset, rule, start)]
        if peers and len(b.configurations) == 1:
            ours = next(s for s in b.solvers if s.solver not in outside)
            low, high = wilson_interval(ours.wins, ours.games)
            level = [s.solver for s in b.against_best if s.gap_high >= 0 and s.solver not in outside]
            figure = f"{ours.solver}, {_pct(ours.win_rate)}, {_pct(low)} to {_pct(high)}"
            if b.solvers[0].solver != ours.solver:  # an outside program has more wins
                out.append(f"Published for the same rules, against our solver with the most wins here "
                           f"({figure}):")
            elif level:  # the verdict does not rank it first: it is the most wins, not "our best"
                out.append(f"Published for the same rules, against the solver with the most wins here "
                           f"({figure}), which these games cannot tell apart from {' and '.join(level)} "
                           "(see the verdict):")
            else:
                out.append(f"Published for the same rules, against our best ({figure}):")
            out.append("")
            out.append("| solver | win rate | as published | games | ours minus theirs, points |")
            out.append("| --- | ---: | --- | ---: | --- |")
            standings = []
            for p in peers:
                theirs = p.win_rate / 100
                t_low, t_high = (p.interval[0] / 100, p.interval[1] / 100) if p.interval else (theirs, theirs)
                d_low, d_high = low - t_high, high - t_low
                standing = ("above" if d_low > 0 else "below" if d_high < 0 else "not distinguishable")
                out.append(f"| {p.who} | {p.win_rate:.3f}% | {p.note or '—'} | {p.games} | "
                           f"{_pp(ours.win_rate - theirs)} ({_pp(d_low)} to {_pp(d_high)}): {standing} |")
                standings.append({"who": p.who, "theirs": p.win_rate, "standing": standing})
            mine = [h for h in heads[-len(b.solvers):] if h["solver"] == ours.solver]
            if mine:
                mine[0]["peers"] = standings
            out.append("")
        runs = _runs(table.metadata.get("runs"), (table.metadata.get("arguments") or {}).get("n_jobs"))
        out.append(f"Made by `{table.metadata.get('command', '')}` ({runs})."
                   + "".join(f" {line}" for line in _later_runs(table)))
        out.append("")
        for name, recorded in earlier.items():
            out += [_earlier_line(record, name, recorded), ""]
    return out, heads


def _earlier_line(record: Record, name: str, recorded: str) -> str:
    """What the page says under a record whose rows of ``name`` an earlier version played
    (``recorded``, its description): the command that plays today's, and how far it got."""
    text = (f"**The rows of {name} were played by an earlier version of it** (`{recorded}`, not today's "
            f"options or weights): `python eval/records.py {record.name} --replay {name}` plays today's on "
            "the same games")
    played, games = record.replayed(name), record.trials * record.configurations
    if 0 < played < games:
        text += (f"; it is under way: {played:,} of the {games:,} games are played "
                 "(`python eval/records.py --status`)")
    return text + "."


def page() -> tuple[str, list[dict]]:
    """The Markdown of ``docs/results.md`` and the headline rows of every finished record."""
    from nnsweeper.evaluation import EvalTable

    lines = [
        "# Results: the record runs",
        "",
        "Win rates of nnsweeper's solvers on 10^5 to 10^6 games per solver and board, every solver on",
        "the same games (base seed 2026, which no earlier table used), with 95% intervals (Wilson) and",
        "each solver's gap to `csp` and to `search` on those same games (Newcombe's paired interval).",
        "A solver is ranked above another only where the paired interval of their gap excludes 0;",
        "otherwise the verdict says they are not distinguishable. Beside each board, the win rates",
        "other solvers' authors published for the same rules, and the difference from the solver",
        "with the most wins there (our best where the verdict ranks it first; its interval combines",
        "ours with theirs, or with their point figure where they give none).",
        "",
        "Every table is in `eval/results/` (`NAME.json` holds every game's outcome) and was made by",
        "`python eval/records.py`, which continues unfinished runs; this page is made by",
        "`python eval/results_page.py` (part of `make figures`). The project's earlier, smaller runs",
        "are in [experiments.md](experiments.md).",
        "",
    ]
    heads, pending = [], []
    for record in RECORDS:
        if not record.table.exists():
            pending.append(record)
            continue
        table = EvalTable.from_json(record.table)
        section, rows = board_section(record, table)
        lines += section
        heads += rows
    lines += scaling_section()
    lines += decisions_section()
    if pending:
        lines += ["## Under way", "",
                  "These runs have not finished; their stores (`eval/results/NAME.games`) hold the games "
                  "played so far, and `python eval/records.py` continues them.", ""]
        for r in pending:
            lines.append(f"- `{r.name}`: {r.recorded():,} of {r.games:,} games recorded "
                         f"(`nnsweeper {' '.join(r.command())}`)")
        lines.append("")
    return "\n".join(lines), heads


def scaling_section() -> list[str]:
    """The scaling curves (``train/scaling.py``): their figure and table, when they exist."""
    table = ROOT / "eval" / "results" / "scaling.md"
    if not table.exists():
        return []
    return ["## How far the networks get, by training compute", "",
            "Each network at three sizes, every epoch's weights scored on held-out positions (frontier",
            "log-loss against the exact engine's, for the worst kind of position: board, behaviour policy,",
            "flag mode) and played alone against `csp` on the same expert games. A run with a suffix goes",
            "on from another run's kept weights (epoch `P+N`: N epochs after the P behind its starting",
            "weights; its states and time count theirs): `-ft` and `-lr` from gnn-m's last epoch at a",
            "tenth of its learning rate, on the CPU; `-b256` (batches of 256; `c10`: proven cells weighed",
            "10 times) from gnn-m-lr, and `cnn-l-ft` from cnn-l, on an H100 (`-2`, `-3`: once more, from",
            "the last epoch of the one before); `-more` (states of other seeds, `data/broad_more`) against",
            "`-same` (data/broad once more), then `-more-2` and `-margin` (a penalty on proven cells",
            "predicted beyond P = 0.01 / 0.99, `train.certain_margin`), and `cnn-m-ft`, `-2` from cnn-m's",
            "H100 epoch, on the CPU. The first two panels",
            "show the distance to the limit on log scales, where the fitted power laws below are lines.",
            "Made by `python train/scaling.py train`, `score` and `table`; the runs continue where they",
            "stopped.",
            "",
            "![scaling curves](../eval/results/scaling.png)", "",
            table.read_text(encoding="utf-8").rstrip("\n"), ""]


def decisions_section() -> list[str]:
    """What buys better decisions (``train/decisions.py``): its table, when it exists."""
    table = ROOT / "eval" / "results" / "decisions.md"
    if not table.exists():
        return []
    return ["## What buys the networks better decisions", "",
            "On positions with no proven-safe cell, how often a network's safest cell is a lowest-risk cell,",
            "its regret (exact risk of its pick less the least), how often it rates an unproven cell below",
            "0.002 or above 0.995, and its error and bias on the five safest cells (`nnsweeper.decisions`),",
            "for the bundled models and fine-tunings of the bundled GNN that each change one thing: guess",
            "positions instead of every decision, and the decision objectives of",
            "`nnsweeper.training.objectives`, at the same compute (states seen), then three times it.",
            "Chosen by play on selection games kept apart from the record's.", "",
            table.read_text(encoding="utf-8").rstrip("\n"), ""]


#: What each solver of the headline is, in a few words (docs/solvers.md has the whole of it).
SOLVER_NOTES = {
    "csp": "exact logic, then the cell of lowest exact P(mine)",
    "search": "csp's certain moves, then guesses scored by a look-ahead and an exact endgame search",
    "search-v1": "search's first version, on the same games (the next board worth its best safety, at "
                 "most 8 candidates, an endgame of 1000 layouts: `SearchSolver(**V1)`)",
    "value-gnn": "search with a value network (a GNN's estimate of search's chance to win from the "
                 "position after each candidate guess) scoring its look-ahead guesses",
    "value-gnn-v1": "value-gnn on the same games before search's defaults changed (search's first "
                    "version's options, `V1`, around the same value network)",
    "hybrid-gnn": "csp's certain moves, the bundled GNN's safest cell for each guess",
    "gnn": "the bundled GNN's probabilities alone",
    "java-dnh": "DavidNHill's Java solver (SMALL_ANALYSIS, not ours) on the same games, through "
                "`benchmarks/peers/java_dnh.py` ([docs/peers.md](docs/peers.md))",
}


def _where(h: dict) -> str:
    return f"{h['board']}, {h['rule']} first click at {h['start']}"


def _shown(h: dict) -> str:
    """A headline row's solver, said to be an earlier version (:func:`_earlier`) or a program outside
    nnsweeper (:func:`_outside`) where it is."""
    return h["solver"] + (" (an earlier version)" if h.get("earlier") else "") + (
        " (not ours: a program outside nnsweeper)" if h.get("outside") else "")


def readme_block(heads: list[dict]) -> str:
    """The README's headline: the records' rows grouped by games, and how they stand against the peers."""
    if not heads:
        return "The record runs are under way: see [docs/results.md](docs/results.md)."
    out = []
    groups: dict[int, list[dict]] = {}
    for h in heads:
        groups.setdefault(h["games"], []).append(h)
    for games in sorted(groups, reverse=True):
        rows = groups[games]
        boards = list(dict.fromkeys(_where(h) for h in rows))
        caption = f"**{games:,} games per solver and board**"
        seen = {(_where(r), r["base_seed"]) for r in rows}
        larger = [g for g in groups
                  if g > games and any((_where(h), h["base_seed"]) in seen for h in groups[g])]
        if larger:  # the first k games of a base seed do not depend on how many are played
            caption += (f" ({' and '.join(b.split(',')[0] for b in boards)}: the first {games:,} of the "
                        f"{max(larger):,} games above)")
        caption += ", every solver of a board on the same games:"
        out += [caption, "", "| board, rule | solver | win rate (95% interval) |", "| --- | --- | --- |"]
        for h in rows:
            out.append(f"| {_where(h)} | {_shown(h)} | "
                       f"{_pct(h['rate'])} ({_pct(h['low'])} to {_pct(h['high'])}) |")
        out.append("")
    named = [n for n in SOLVER_NOTES if any(h["solver"] == n for h in heads)]
    out += ["The solvers: " + "; ".join(f"`{n}`, {SOLVER_NOTES[n]}" for n in named) + ".", ""]
    peers = _peer_line(heads)
    if peers:
        out += [peers, ""]
    return "\n".join(out) + "\nPaired gaps, verdicts and the published marks of other solvers: " \
        "[docs/results.md](docs/results.md)."


def _peer_line(heads: list[dict]) -> str:
    """How the solver with the most wins stands against every published mark, on each board's largest run."""
    largest: dict[str, dict] = {}
    for h in heads:
        if "peers" in h and h["games"] > largest.get(_where(h), {"games": -1})["games"]:
            largest[_where(h)] = h
    if not largest:
        return ""
    parts: dict[str, dict[str, list[str]]] = {"above": {}, "below": {}, "not distinguishable": {}}
    for h in largest.values():
        board = h["board"].split(" ")[0]
        if (h["rule"], h["start"]) != ("safe", "corner"):
            board += f" with a {h['rule']} first click at {h['start']}"
        for p in h["peers"]:
            org, _, name = p["who"].rpartition(", ")  # "Tu et al., PSEQ-D256": PSEQ-D256 (Tu et al.)
            parts[p["standing"]].setdefault(f"{name} ({org})" if org else name, []).append(
                f"on {board} ({_shown(h)} {_pct(h['rate'])} against {p['theirs']:.3f}%)")
    games = sorted({h["games"] for h in largest.values()})
    count = " and ".join(f"{g:,}" for g in games)

    def joined(items: list[str], last: str = " and ") -> str:
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + last + items[-1]

    said = [f"{'not distinguishable from' if k == 'not distinguishable' else k} "
            + joined([f"{who} {joined(where)}" for who, where in by.items()])
            for k, by in parts.items() if by]
    return (f"Against every published mark (our solver with the most wins on each board's {count} games; "
            "above or below where the 95% interval of the difference excludes 0): " + "; ".join(said) + ".")


def write(readme: Path = README) -> list[Path]:
    """Write ``docs/results.md`` and the README's headline block; returns what was written."""
    from nnsweeper.fileio import write_text_atomic

    text, heads = page()
    write_text_atomic(PAGE, text)
    written = [PAGE]
    doc = readme.read_text(encoding="utf-8")
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        write_text_atomic(readme, f"{head}{BEGIN}\n{readme_block(heads)}\n{END}{tail}")
        written.append(readme)
    return written


if __name__ == "__main__":
    for path in write():
        print(f"wrote {path.relative_to(ROOT)}")
