"""The record runs: million-game evaluations behind ``docs/results.md``.

Each run is one ``nnsweeper eval`` (or ``compare``) command whose store,
``eval/results/NAME.games``, keeps every finished chunk of games. Running this script
again (after a kill, another day, on another machine with the same nnsweeper code: a
store refuses games that other code or other weights played) continues every unfinished
run where it stopped and skips the finished ones (their tables are
committed, their stores are not). The games are those of base seed :data:`SEED`, which
no table before these used::

    python eval/records.py                          # every run, in order (all cores)
    python eval/records.py expert --jobs 16         # the runs whose name holds "expert"
    python eval/records.py --backend dask --scheduler tcp://host:8786
    python eval/records.py --status                 # games recorded so far, per run and replay
    python eval/records.py record_expert_models --replay gnn,hybrid-gnn   # new weights
    python eval/records.py compare --replay cnn,gnn,hybrid-cnn,hybrid-gnn  # the compare tables too
    python eval/records.py expert_corner --replay search --keep-as search-v1  # a changed solver

``--replay`` plays some solvers of a finished run again on its games (after new bundled
weights, say), in a store of its own (``eval/results/replay/NAME.games``, which continues
after a kill like the others), then puts their rows in place of the old ones in the run's
table (:meth:`~nnsweeper.evaluation.EvalTable.replace`), paired game by game with the
solvers that were not played again. With ``--keep-as NAME`` the old rows stay too, under
that name, so that the table pairs a changed solver with what it was.

``docs/results.md`` (``eval/results_page.py``, part of ``make figures``) reads the
tables these runs write, and the progress of the unfinished ones.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from nnsweeper.evaluation.store import held_games

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "eval" / "results"
#: Base seed of every record run's games.
SEED = 2026


@dataclass(frozen=True)
class Record:
    """One record run: its name (the files it writes), its command and its size."""

    name: str
    arguments: tuple[str, ...]  # the nnsweeper command and its options, less the common ones
    trials: int
    solvers: tuple[str, ...]
    configurations: int = 1
    seed: int = SEED

    def command(self, jobs: int | None = None, extra: tuple[str, ...] = ()) -> list[str]:
        """The full ``nnsweeper`` arguments of the run."""
        out = [*self.arguments, "--trials", str(self.trials)]
        if self.seed:
            out += ["--base-seed", str(self.seed)]
        if jobs is not None:
            out += ["--jobs", str(jobs)]
        return [*out, *extra, "--quiet", "--out", f"eval/results/{self.name}"]

    @property
    def games(self) -> int:
        """Games of the whole run: trials x solvers x configurations."""
        return self.trials * len(self.solvers) * self.configurations

    @property
    def table(self) -> Path:
        return RESULTS / f"{self.name}.json"

    @property
    def store(self) -> Path:
        return RESULTS / f"{self.name}.games"

    def recorded(self) -> int:
        """Games the run's store holds so far, of the trials asked for (0 without a store)."""
        return sum(games for _, games in held_games(self.store, self.trials).values())

    @property
    def replay_out(self) -> Path:
        """Where ``--replay`` writes (its ``--out``): the table of the solvers it plays again
        (``.json``) and their games (:attr:`replay_store`)."""
        return RESULTS / "replay" / self.name

    @property
    def replay_store(self) -> Path:
        """Where ``--replay`` keeps the games of the solvers it plays again."""
        return self.replay_out.with_suffix(".games")

    def replaying(self) -> dict[str, int]:
        """The games of each unfinished job (solver and board) of the run's replay store
        (``--replay``), by the job's folder name; empty when no replay is under way."""
        return {name: games for name, (_, games) in held_games(self.replay_store, self.trials).items()
                if games < self.trials}

    def replayed(self, solver: str) -> int:
        """Games of ``solver`` (on every board of the run) that its replay store holds."""
        held = held_games(self.replay_store, self.trials).values()
        return sum(games for name, games in held if name == solver)


def _eval(*args: str, trials: int, solvers: str) -> tuple[tuple[str, ...], int, tuple[str, ...]]:
    return ("eval", "--solvers", solvers, *args), trials, tuple(solvers.split(","))


RECORDS = (
    Record("record_beginner_corner",
           *_eval("--preset", "beginner", "--start", "corner", trials=1_000_000, solvers="csp,search")),
    Record("record_intermediate_corner",
           *_eval("--preset", "intermediate", "--start", "corner", trials=1_000_000, solvers="csp,search")),
    Record("record_expert_corner",
           *_eval("--preset", "expert", "--start", "corner", trials=1_000_000, solvers="csp,search")),
    Record("record_expert_models",
           *_eval("--preset", "expert", "--start", "corner", trials=100_000,
                  solvers="gnn,hybrid-gnn,value-gnn,search,csp")),
    Record("record_expert_zero",
           *_eval("--preset", "expert", "--first-click", "zero", "--start", "3,3", trials=1_000_000,
                  solvers="search")),
    Record("record_sweep_10x10", ("compare", "--mines", "5-30"), 10_000,
           ("single_point", "csp", "search", "cnn", "gnn", "hybrid-cnn", "hybrid-gnn"), configurations=26),
)


def replay(chosen: list[Record], solvers: str, jobs: int | None, extra: tuple[str, ...],
           keep_as: str | None = None) -> int:
    """Play ``solvers`` of each chosen finished run again on its games and replace their rows in
    its table (json, csv and figure); 2 where a run is unfinished or lacks a solver.

    ``keep_as`` (one solver only): keep the old rows too, under this name, paired with the
    new ones (the gap a changed solver made, game by game)."""
    from nnsweeper.cli import main as nnsweeper
    from nnsweeper.evaluation import EvalTable

    names = [s for s in solvers.split(",") if s]
    if keep_as is not None and len(names) != 1:
        print(f"--keep-as names the old rows of one solver; got {len(names)} solvers to replay",
              file=sys.stderr)
        return 2
    for r in chosen:
        absent = [s for s in names if s not in r.solvers]
        if not r.table.exists() or absent:
            why = "it is not finished" if not r.table.exists() else f"it has no solver {absent[0]!r}"
            print(f"cannot replay {r.name}: {why}", file=sys.stderr)
            return 2
        if keep_as is not None and keep_as in EvalTable.from_json(r.table).solvers:
            print(f"cannot keep {names[0]}'s rows of {r.name} as {keep_as!r}: the table has that solver "
                  "already", file=sys.stderr)
            return 2
    for r in chosen:
        out = r.replay_out
        command = list(r.command(jobs, extra))
        command[command.index("--out") + 1] = os.path.relpath(out)
        if command[0] == "eval":
            command[command.index("--solvers") + 1] = ",".join(names)
        else:  # compare: its solvers are every registered one unless named
            command[1:1] = ["--solvers", ",".join(names)]
        print(f"== {r.name}, again: nnsweeper {shlex.join(command)}", file=sys.stderr, flush=True)
        code = nnsweeper(command)
        if code:
            return code
        table, again = EvalTable.from_json(r.table), EvalTable.from_json(out.with_suffix(".json"))
        table = table.replace(again, keep_as=keep_as)
        table.to_json(r.table)
        table.to_csv(r.table.with_suffix(".csv"))
        code = nnsweeper(["plot", os.path.relpath(r.table)])
        if code:
            return code
        kept = f", the old ones kept as {keep_as}" if keep_as else ""
        print(f"{r.name}: rows of {', '.join(names)} replaced{kept} ({os.path.relpath(r.table)})",
              file=sys.stderr)
    return 0


_ALL = ("single_point", "csp", "search", "cnn", "gnn", "hybrid-cnn", "hybrid-gnn")
#: Other committed tables whose solvers ``--replay`` plays again (never run whole here): the
#: default comparisons, on the default seeds.
TABLES = (
    Record("compare_10x10", ("compare",), 2000, _ALL, configurations=26, seed=0),
    Record("compare_classic", ("compare", "--preset", "classic", "--start", "corner"), 2000, _ALL,
           configurations=3, seed=0),
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="?", default="", help="run only the records whose name holds this")
    parser.add_argument("--jobs", type=int, default=-1, help="worker processes (default: -1, all cores)")
    parser.add_argument("--backend", default=None, help="dask or ray: run on a cluster (see docs/cluster.md)")
    parser.add_argument("--scheduler", default=None, help="with --backend dask: the scheduler's address")
    parser.add_argument("--status", action="store_true",
                        help="print the games recorded per run (and per unfinished replay); play none")
    parser.add_argument("--again", action="store_true",
                        help="run the finished records too (their tables are written again from their "
                        "stores, or their games played again where no store is kept)")
    parser.add_argument("--replay", default=None, metavar="SOLVERS",
                        help="play these solvers (comma-separated) of the finished runs again and put "
                        "their rows in place of the old ones in the runs' tables")
    parser.add_argument("--keep-as", default=None, metavar="NAME",
                        help="with --replay of one solver: keep its old rows under this name, paired "
                        "with the new ones")
    args = parser.parse_args(argv)
    if args.keep_as is not None and args.replay is None:
        parser.error("--keep-as goes with --replay")
    chosen = [r for r in RECORDS if args.only in r.name]
    if not chosen and not (args.replay and any(args.only in t.name for t in TABLES)):
        names = ", ".join(r.name for r in RECORDS)
        parser.error(f"no record run's name holds {args.only!r}; the runs: {names}")
    if args.status:
        for r in chosen:
            state = "finished" if r.table.exists() else f"{r.recorded():,} of {r.games:,} games recorded"
            state += "".join(f"; replay under way: {job} {games:,} of {r.trials:,} games"
                             for job, games in r.replaying().items())
            print(f"{r.name}: {state}")
        return 0
    from nnsweeper.cli import main as nnsweeper

    extra = tuple(x for k, v in (("--backend", args.backend), ("--scheduler", args.scheduler)) if v
                  for x in (k, v))
    if args.replay is not None:
        chosen += [t for t in TABLES if args.only in t.name] if args.only else []
        return replay(chosen, args.replay, None if args.backend else args.jobs, extra, args.keep_as)
    for r in chosen:
        if r.table.exists() and not args.again:
            print(f"== {r.name}: finished ({r.table.relative_to(ROOT)}); --again runs it again",
                  file=sys.stderr)
            continue
        command = r.command(None if args.backend else args.jobs, extra)
        print(f"== {r.name}: nnsweeper {shlex.join(command)}", file=sys.stderr, flush=True)
        code = nnsweeper(command)
        if code:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
