"""Replay a sample of the games behind committed results and check every outcome.

A table written by ``nnsweeper eval`` / ``nnsweeper compare`` records its arguments,
each solver with its options (``metadata["solvers"]``) and, per row, every game's
result in seed order (``outcomes``). This script rebuilds each solver from the
registry with the recorded options, draws a sample of each row's games, plays them
again on the same seeds and compares win or loss game for game::

    python eval/reproduce.py eval/results/*.json                 # 20 games per row
    python eval/reproduce.py eval/results/csp_expert_corner.json --games 200 --sample-seed 7

Rows written before tables kept per-game outcomes hold only their win count: with
``--full`` their games are all played again and the counts compared; without it
they are skipped (and counted as such). A row a network played with weights other than
the ones bundled now (the table records each solver's weights by digest) cannot be played
again here: it is skipped and named, as the results page names it an earlier version. So is a
row of a program outside nnsweeper (recorded as ``Peer(...)``, such as the Java solver that
``benchmarks/peers/java_dnh.py`` adds to a table), which cannot be rebuilt from the registry.
It prints one line per file and exits with 1 when any game or count differs, 2 on
unusable input.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import numpy as np

from nnsweeper import MinesweeperEnv, get_solver
from nnsweeper.evaluation import EvalTable, game_seeds, unpack_outcomes
from nnsweeper.solvers import SOLVERS

#: How a table records a program outside nnsweeper (``benchmarks/peers/``): ``Peer(start=...,
#: program=..., commit=..., ...)``. Its rows cannot be played again here; they are skipped and named.
OUTSIDE = "Peer"


def outside_program(description: str) -> str | None:
    """The program a solver's recorded description names when it is one outside nnsweeper
    (``"DavidNHill/Minesweeper 0806bb800421"``: its ``program`` and commit), else None."""
    try:
        call = ast.parse(description, mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == OUTSIDE):
        return None
    said = {}
    for kw in call.keywords:
        try:
            said[kw.arg] = ast.literal_eval(kw.value)
        except ValueError:
            continue
    commit = said.get("commit")
    return " ".join(str(x) for x in (said.get("program", "unnamed"), commit and str(commit)[:12]) if x)


def recorded_solver(name: str, description: str):
    """The registry solver ``name`` with the options of its recorded ``repr``.

    The recorded text is ``ClassName(option=value, ...)``; options equal to the
    solver's defaults are left to it, the others are passed (options a solver prints
    only when they are set, too; an option absent from the record that the solver prints
    only when it differs from its ``UNSET`` value is given that value). The rebuilt solver must
    print as recorded, so an option that changed meaning is caught here.
    """
    try:
        call = ast.parse(description, mode="eval").body
        if not isinstance(call, ast.Call) or call.args or not isinstance(call.func, ast.Name):
            raise ValueError
        recorded = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    except (SyntaxError, ValueError):
        raise ValueError(f"solver {name!r} is recorded as {description!r}, not as Class(option=value, ...)"
                         ) from None
    if name not in SOLVERS:  # a named checkpoint (--model NAME=ARCH:PATH): the registry entry of its class
        name = next((n for n, cls in SOLVERS.items() if cls.__name__ == call.func.id), name)
    if name not in SOLVERS:
        raise ValueError(f"solver {name!r} of the table is not in the registry ({', '.join(SOLVERS)})")
    plain = get_solver(name)
    default = plain.options()  # an option a solver shows only when set is absent here
    given = {k: v for k, v in recorded.items() if k not in default or default[k] != v}
    # An option a solver prints only when it differs from its value before it was an option
    # (the class's UNSET): absent from the record, it had that value.
    unset = getattr(type(plain), "UNSET", {})
    given.update({k: v for k, v in unset.items() if k not in recorded})
    try:
        solver = get_solver(name, **given)
    except ValueError as e:
        raise ValueError(f"solver {name!r} recorded as {description} cannot be rebuilt: {e}") from None
    if repr(solver) != description:
        raise ValueError(f"solver {name!r} rebuilt as {solver!r}, recorded as {description}")
    return solver


def replay(path, games: int = 20, sample_seed: int = 0, full: bool = False
           ) -> tuple[int, int, list[str], list[str]]:
    """Replay ``games`` sampled games of every row of the table at ``path``.

    Rows without per-game outcomes are replayed in full (their win count compared)
    when ``full``, and skipped otherwise. Rows of a solver whose recorded weights
    (``metadata["weights"]``, by digest) are not the ones it loads now are skipped, and so
    are rows of a program outside nnsweeper (:func:`outside_program`).

    Returns
    -------
    (rows, played, mismatches, skipped)
        Rows checked, games replayed, one line per game (or count) that differs, and one
        line per row skipped: for its weights (``...: played with weights ...``) or as an
        outside program's (``...: played by ..., a program outside nnsweeper``).
    """
    table = EvalTable.from_json(path)
    meta = table.metadata
    outside = {name: program for name, text in meta["solvers"].items()
               if (program := outside_program(text)) is not None}
    solvers = {name: recorded_solver(name, text) for name, text in meta["solvers"].items()
               if name not in outside}
    stale = {}  # solver: (its recorded weights, the weights it loads now), where they differ
    for name, then in (meta.get("weights") or {}).items():
        solver = solvers.get(name)
        now = solver.weights() if callable(getattr(solver, "weights", None)) else then
        if now != then:
            stale[name] = (then, now)
    sampler = np.random.default_rng(sample_seed)
    base_seed = meta["arguments"]["base_seed"]
    checked, played, mismatches, other = 0, 0, [], []
    for r in table.rows:
        where = f"{r['solver']} {r['board']} {r['mines']} mines"
        if r["solver"] in outside:
            other.append(f"{where}: played by {outside[r['solver']]}, a program outside nnsweeper")
            continue
        if r["solver"] in stale:
            then, now = stale[r["solver"]]
            other.append(f"{where}: played with weights {_digests(then)}, bundled now {_digests(now)}")
            continue
        seeds = game_seeds(base_seed if r["base_seed"] is None else r["base_seed"], r["games"])
        if r["outcomes"] is None:
            if not full:
                continue
            picks, won = np.arange(r["games"]), None
        else:
            won = unpack_outcomes(r["outcomes"], r["games"])
            picks = np.sort(sampler.choice(r["games"], size=min(games, r["games"]), replace=False))
        solver = solvers[r["solver"]]
        wins = 0
        for k in picks:
            sd = int(seeds[k])
            env = MinesweeperEnv(rows=r["rows"], cols=r["cols"], mines=r["mines"], seed=sd,
                                 first_click=r["first_click"])
            result = bool(solver(env, np.random.default_rng(sd)))
            wins += result
            if won is not None and result != bool(won[k]):
                mismatches.append(f"{where}, game {k} (seed {sd}): recorded {'won' if won[k] else 'lost'}, "
                                  f"replayed {'won' if result else 'lost'}")
        if won is None and wins != r["wins"]:
            mismatches.append(f"{where}: recorded {r['wins']} wins in {r['games']} games, replayed {wins}")
        checked += 1
        played += len(picks)
    return checked, played, mismatches, other


def _digests(weights: dict[str, str]) -> str:
    """``{'gnn': 'ab12...'}`` as ``gnn ab12cd34ef56``."""
    return ", ".join(f"{name} {digest[:12]}" for name, digest in sorted(weights.items()))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", type=Path, help="evaluation tables (.json)")
    parser.add_argument("--games", type=int, default=20, help="games replayed per row (default 20)")
    parser.add_argument("--sample-seed", type=int, default=0, help="seed of the sample (default 0)")
    parser.add_argument("--full", action="store_true",
                        help="replay every game of the rows that hold only a win count")
    args = parser.parse_args(argv)
    bad = 0
    for path in args.tables:
        try:
            rows, played, mismatches, other = replay(path, args.games, args.sample_seed, args.full)
        except (OSError, ValueError) as exc:
            print(f"reproduce: {exc}", file=sys.stderr)
            return 2
        weights = sum(": played with weights " in line for line in other)
        skipped = (f", {weights} rows of other weights skipped" if weights else "") + (
            f", {len(other) - weights} rows of outside programs skipped" if len(other) > weights else "")
        print(f"{path}: {rows} rows checked, {played} games replayed, {len(mismatches)} differ{skipped}")
        for line in other:
            print(f"  skipped: {line}")
        for line in mismatches:
            print(f"  {line}")
        bad += len(mismatches)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
