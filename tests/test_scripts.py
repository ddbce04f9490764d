"""The repository scripts that turn results into committed tables."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module(relative: str):
    spec = importlib.util.spec_from_file_location(Path(relative).stem, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def _region(ratio, mae, safe, cells=100.0, safe_cells=10.0, mine=0.99, mine_cells=5.0):
    return {"log_loss_ratio": ratio, "mae_exact": mae, "safe_below_threshold": safe,
            "cells": cells, "safe_cells": safe_cells, "mine_above_threshold": mine, "mine_cells": mine_cells}


def _result(scale):
    by = {
        "16x30-m99-safe-csp": {"frontier": _region(1.2 * scale, 0.05, 0.9)},
        "10x10-m12-safe-csp": {"frontier": _region(1.1 * scale, 0.02, 0.995, safe_cells=0.0)},
        "10x10-m5-safe-csp": {"frontier": _region(1.0 * scale, 0.01, 1.0)},
    }
    return {"frontier": _region(1.05 * scale, 0.03, 0.95, cells=1234.0), "by": by}


def test_model_table_orders_boards_and_writes_markdown(tmp_path):
    mod = _module("eval/model_table.py")
    text = mod.table({"GNN": _result(1.0), "CNN": _result(1.01)})
    lines = text.splitlines()
    assert lines[0].startswith("| board | frontier cells | safe cells | GNN LL ratio |")
    assert lines[2] == ("| **all** | 1,234 | 10 | 1.050 | 0.0300 | 95.0% | 99.0% | 1.060 | 0.0300 | 95.0% "
                        "| 99.0% |")
    # Smaller boards first, then by mine count; no safe cells gives a dash.
    assert [row.split(" | ")[0] for row in lines[3:]] == ["| 10x10, 5 mines", "| 10x10, 12 mines",
                                                          "| 16x30, 99 mines"]
    assert lines[4].endswith("| 1.100 | 0.0200 | - | 99.0% | 1.111 | 0.0200 | - | 99.0% |")
    # Kinds: one table per field, labels as scored (boards sorted).
    result = _result(1.0)
    result["kinds"] = {"policy": {"reveal": {"frontier": _region(1.02, 0.01, 0.999, mine_cells=0.0)},
                                  "csp": {"frontier": _region(1.01, 0.01, 1.0)}}}
    lines = mod.table({"GNN": result}, "policy", "policy").splitlines()
    assert lines[0].startswith("| policy | frontier cells |")
    assert lines[3:] == ["| reveal | 100 | 10 | 1.020 | 0.0100 | 99.9% | - |",
                         "| csp | 100 | 10 | 1.010 | 0.0100 | 100.0% | 99.0% |"]
    assert mod._sections({"GNN": result}) == [mod.table({"GNN": result}, "policy", "policy")]
    assert mod._sections({"GNN": _result(1.0)}) == [mod.table({"GNN": _result(1.0)})]


def test_model_table_refuses_different_splits(tmp_path, monkeypatch, capsys):
    mod = _module("eval/model_table.py")
    other = _result(1.0)
    del other["by"]["10x10-m5-safe-csp"]
    for name, result in (("gnn", _result(1.0)), ("cnn", other)):
        (tmp_path / f"{name}_test_metrics.json").write_text(json.dumps(result))
    monkeypatch.setattr(mod, "WEIGHTS", tmp_path)
    assert mod.main(["--out", str(tmp_path / "t.md")]) == 2
    assert "different configurations of the test split" in capsys.readouterr().err
    assert not (tmp_path / "t.md").exists()
    (tmp_path / "cnn_test_metrics.json").write_text(json.dumps(_result(1.0)))
    assert mod.main(["--out", str(tmp_path / "t.md")]) == 0
    assert "| 10x10, 5 mines |" in (tmp_path / "t.md").read_text()
    # Held-out datasets get a section each; one scored for some models only says so.
    (tmp_path / "gnn_heldout_metrics.json").write_text(json.dumps({"unseen": _result(1.0)}))
    assert mod.main(["--out", str(tmp_path / "t.md")]) == 0
    text = (tmp_path / "t.md").read_text()
    assert "## The held-out dataset `unseen` (GNN only: the others were not scored on it)" in text
    assert "| GNN LL ratio | GNN MAE | GNN safe<0.02 | GNN mine>0.98 |\n" in text
    (tmp_path / "cnn_heldout_metrics.json").write_text(json.dumps({"unseen": _result(1.1)}))
    assert mod.main(["--out", str(tmp_path / "t.md")]) == 0
    assert "## The held-out dataset `unseen`\n" in (tmp_path / "t.md").read_text()
    # A model with held-out datasets only (no test split of its own) is left out of that section.
    (tmp_path / "gnn_test_metrics.json").unlink()
    assert mod.main(["--out", str(tmp_path / "t.md")]) == 0
    text = (tmp_path / "t.md").read_text()
    assert "## The test split of the training dataset (CNN only: the others were not scored on it)" in text
    (tmp_path / "gnn_heldout_metrics.json").unlink()
    assert mod.main(["--out", str(tmp_path / "t.md")]) == 2
    assert "no test metrics for 'gnn'" in capsys.readouterr().err


def test_gap_table_writes_rates_gaps_and_summary(tmp_path, capsys):
    import nnsweeper as ns

    mod = _module("eval/gap_table.py")
    table = ns.evaluate(["single_point", "csp"], [3, 8], rows=6, cols=6, trials=40, n_jobs=1,
                        progress=False)
    path = table.to_json(tmp_path / "t.json")
    assert mod.main([str(path)]) == 0
    text = (tmp_path / "t.md").read_text()
    lines = text.splitlines()
    header = lines.index("| configuration | csp | single_point |")
    rows = lines[header + 2 : header + 4]
    for line, mines in zip(rows, (3, 8), strict=True):
        csp = table.select(solver="csp", mines=mines)[0]
        sp = table.select(solver="single_point", mines=mines)[0]
        d = table.difference("single_point", "csp", mines=mines)[0]
        assert d["paired"]
        assert line == (f"| 6x6/{mines} | {100 * csp['wins'] / 40:.1f} | {100 * sp['wins'] / 40:.1f} "
                        f"({100 * (sp['wins'] - csp['wins']) / 40:+.1f}; {100 * d['ci_low']:+.1f} to "
                        f"{100 * d['ci_high']:+.1f}) |")
    assert "paired: the same games" in text
    gaps = [(table.select(solver="single_point", mines=m)[0]["wins"]
             - table.select(solver="csp", mines=m)[0]["wins"]) / 40 for m in (3, 8)]
    within = [sum(-100 * g <= t for g in gaps) for t in (1, 3, 5)]
    worst = (3, 8)[gaps.index(min(gaps))]
    wins = {s: sum(r["wins"] for r in table.select(solver=s)) for s in ("single_point", "csp")}
    pooled = (wins["single_point"] - wins["csp"]) / 80
    below = sum(d["ci_high"] < 0 for d in table.difference("single_point"))
    rate = 100 * wins["single_point"] / 80
    assert lines[-1].startswith(f"| single_point | {rate:.1f} | ")
    # The pooled gap, rounded to 0.1 (a value at a half may round either way in float).
    assert abs(float(lines[-1].split(" | ")[2].split()[0]) - 100 * pooled) <= 0.05 + 1e-9
    assert lines[-1].endswith(f"| {100 * min(gaps):+.1f} | 6x6/{worst} | "
                              + " | ".join(f"{w} of 2" for w in within) + f" | {below} of 2 |")
    assert mod.main([str(path), "--reference", "cnn"]) == 2
    assert "reference must be a solver of the table" in capsys.readouterr().err


def _records_and_page(monkeypatch, tmp_path):
    """eval/records.py and eval/results_page.py, their tables and stores read from ``tmp_path``."""
    import sys

    monkeypatch.syspath_prepend(str(ROOT / "eval"))
    monkeypatch.delitem(sys.modules, "records", raising=False)
    monkeypatch.delitem(sys.modules, "results_page", raising=False)
    import records
    import results_page

    monkeypatch.setattr(records, "RESULTS", tmp_path)
    return records, results_page


def test_records_count_the_games_their_stores_hold(monkeypatch, tmp_path, capsys):
    records, _ = _records_and_page(monkeypatch, tmp_path)
    args = ("eval", "--solvers", "csp,search", "--preset", "beginner")
    rec = records.Record("r", args, 100, ("csp", "search"))
    assert rec.games == 200 and rec.recorded() == 0
    assert rec.command(jobs=2) == [*args, "--trials", "100", "--base-seed", "2026", "--jobs", "2", "--quiet",
                                   "--out", "eval/results/r"]
    for job, chunks in (("csp-9x9x10", ((0, 60), (60, 150))), ("search-9x9x10", ((0, 30),))):
        (tmp_path / "r.games" / job).mkdir(parents=True)
        for a, b in chunks:
            (tmp_path / "r.games" / job / f"{a:012d}-{b:012d}.npz").write_bytes(b"")
    (tmp_path / "r.games" / "csp-9x9x10" / ".000000000150-000000000200.npz").write_bytes(b"")  # unfinished
    assert rec.recorded() == 130  # games past --trials (100-149) do not count
    monkeypatch.setattr(records, "RECORDS", (rec,))
    assert records.main(["--status"]) == 0
    assert capsys.readouterr().out == "r: 130 of 200 games recorded\n"
    # A replay under way (--replay search) is said beside the run's state; a finished job is not.
    for job, b in (("search-9x9x10", 40), ("csp-9x9x10", 100)):
        (tmp_path / "replay" / "r.games" / job).mkdir(parents=True)
        (tmp_path / "replay" / "r.games" / job / f"{0:012d}-{b:012d}.npz").write_bytes(b"")
    assert rec.replaying() == {"search-9x9x10": 40}
    assert records.main(["--status"]) == 0
    said = "r: 130 of 200 games recorded; replay under way: search-9x9x10 40 of 100 games\n"
    assert capsys.readouterr().out == said


def test_records_replay_puts_solvers_played_again_in_the_finished_table(monkeypatch, tmp_path, capsys):
    from nnsweeper.evaluation import EvalTable

    records, _ = _records_and_page(monkeypatch, tmp_path)
    results = tmp_path / "eval" / "results"  # where a record's command writes, from the project's root
    results.mkdir(parents=True)
    monkeypatch.setattr(records, "RESULTS", results)
    monkeypatch.chdir(tmp_path)
    args = ("eval", "--solvers", "csp,single_point", "--rows", "5", "--cols", "5", "--mines", "3,6")
    rec = records.Record("r", args, 30, ("csp", "single_point"))
    monkeypatch.setattr(records, "RECORDS", (rec,))
    assert records.main(["--replay", "single_point"]) == 2  # not finished yet
    assert "cannot replay r: it is not finished" in capsys.readouterr().err
    assert records.main(["--jobs", "1"]) == 0
    before = EvalTable.from_json(results / "r.json")
    assert records.main(["--replay", "search"]) == 2
    assert "it has no solver 'search'" in capsys.readouterr().err
    assert records.main(["--replay", "single_point", "--jobs", "1"]) == 0
    after = EvalTable.from_json(results / "r.json")
    # The same code on the same games: the same outcomes, now recorded as played again.
    assert [(r["solver"], r["mines"], r["outcomes"]) for r in after] == \
        [(r["solver"], r["mines"], r["outcomes"]) for r in before]
    assert [x["solvers"] for x in after.metadata["replaced"]] == [["single_point"]]
    assert "--solvers single_point" in after.metadata["replaced"][0]["command"]
    assert (results / "replay" / "r.games").is_dir() and (results / "r.png").is_file()
    assert all(g["paired"] for g in after.difference("single_point"))
    # --keep-as: the old rows stay beside the new ones, under another name, paired with them.
    assert records.main(["--replay", "csp,single_point", "--keep-as", "old"]) == 2
    assert "--keep-as names the old rows of one solver; got 2" in capsys.readouterr().err
    assert records.main(["--replay", "single_point", "--keep-as", "csp"]) == 2
    assert "the table has that solver already" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        records.main(["--keep-as", "old"])
    assert records.main(["--replay", "single_point", "--keep-as", "single_point-old", "--jobs", "1"]) == 0
    kept = EvalTable.from_json(results / "r.json")
    assert kept.solvers == ["csp", "single_point-old", "single_point"]
    assert [r["outcomes"] for r in kept.select(solver="single_point-old")] == \
        [r["outcomes"] for r in before.select(solver="single_point")]
    assert kept.metadata["solvers"]["single_point-old"] == before.metadata["solvers"]["single_point"]
    gaps = kept.difference("single_point", "single_point-old")
    assert all(g["paired"] and g["difference"] == 0 for g in gaps)
    # The table says which run made the new rows, where it ran, and what the old rows are called now.
    added = kept.metadata["added"][-1]
    assert added["solvers"] == ["single_point"] and added["kept_as"] == {"single_point": "single_point-old"}
    assert "--solvers single_point" in added["command"] and added["runs"][-1]["workers"] == 1
    assert kept.metadata["replaced"][-1]["runs"][-1]["games"] == 60  # 30 trials on 2 boards


def test_results_page_ranks_by_paired_intervals_and_quotes_the_peers(monkeypatch, tmp_path):
    from nnsweeper.evaluation import evaluate
    from nnsweeper.solvers import get_solver

    records, page = _records_and_page(monkeypatch, tmp_path)
    done = records.Record("done", ("eval",), 60, ("csp", "search"))
    todo = records.Record("todo", ("eval", "--preset", "expert"), 1000, ("csp",))
    solvers = {"search": get_solver("search", start="corner"), "csp": get_solver("csp", start="corner")}
    table = evaluate(solvers, boards=["beginner"], trials=60, base_seed=3, store=tmp_path / "done.games")
    table.metadata["command"] = "nnsweeper eval ..."
    table.to_json(done.table)
    monkeypatch.setattr(page, "RECORDS", (done, todo))
    text, heads = page.page()
    assert "### beginner 9x9/10, safe first click, first click at corner: 60 games per solver" in text
    rows = {line.split(" | ")[0]: line for line in text.splitlines()
            if line.startswith(("| csp", "| search"))}
    csp, search = (table.select(solver=s)[0] for s in ("csp", "search"))
    assert rows["| csp"].startswith(f"| csp | 60 | {csp['wins']} | {100 * csp['win_rate']:.2f}% | ")
    assert rows["| csp"].split(" | ")[5] == "reference" and rows["| search"].endswith("| reference |")
    assert "Verdict: " in text and "Tu et al., PSEQ-D256 | 91.695%" in text
    # 60 games cannot tell csp from search: the peers are set against the most wins, not "our best".
    assert "not distinguishable at the top" in text and "against our best" not in text
    assert "Published for the same rules, against the solver with the most wins here (" in text
    assert "Made by `nnsweeper eval ...` (1 run, " in text and " 1 worker on " in text  # one, not "1 workers"
    assert "- `todo`: 0 of 1,000 games recorded" in text
    assert sorted(h["solver"] for h in heads) == ["csp", "search"] and {h["games"] for h in heads} == {60}
    # A first click at a cell (the zero rule's record) names the cell whole, as the peers do.
    from types import SimpleNamespace

    at = SimpleNamespace(metadata={"solvers": {"search": "SearchSolver(start=(3, 3), depth=1)"}})
    assert page._start(at) == "(3, 3)" and page._start(table) == "corner"
    assert [p.who for p in page.PUBLISHED if p.start == "(3, 3)"] == ["Tu et al., PSEQ-D256"]
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{page.BEGIN}\nold\n{page.END}\n\nrest\n")
    monkeypatch.setattr(page, "PAGE", tmp_path / "results.md")
    assert page.write(readme) == [tmp_path / "results.md", readme]
    block = readme.read_text().split(page.BEGIN)[1].split(page.END)[0]
    assert "old" not in block and "| beginner 9x9/10, safe first click at corner | " in block
    assert readme.read_text().endswith("\n\nrest\n")


def test_results_page_never_takes_an_outside_program_for_ours(monkeypatch, tmp_path):
    from nnsweeper.evaluation import EvalTable, evaluate, pack_outcomes, wilson_interval
    from nnsweeper.solvers import get_solver

    records, page = _records_and_page(monkeypatch, tmp_path)
    done = records.Record("done", ("eval",), 60, ("csp", "search"))
    solvers = {"search": get_solver("search", start="corner"), "csp": get_solver("csp", start="corner")}
    table = evaluate(solvers, boards=["beginner"], trials=60, base_seed=3)
    # A program outside nnsweeper (benchmarks/peers/) that won every game: the most wins, never "ours".
    low, high = wilson_interval(60, 60)
    peer = {**table.select(solver="search")[0], "solver": "java-dnh", "wins": 60, "win_rate": 1.0,
            "ci_low": low, "ci_high": high, "outcomes": pack_outcomes(np.ones(60, dtype=bool))}
    meta = {**table.metadata, "command": "nnsweeper eval ...",
            "solvers": {**table.metadata["solvers"], "java-dnh": "Peer(start='corner', program='X/Y')"}}
    EvalTable([*table.rows, peer], meta).to_json(done.table)
    monkeypatch.setattr(page, "RECORDS", (done,))
    text, heads = page.page()
    wins = {s: table.select(solver=s)[0]["wins"] for s in ("csp", "search")}
    best = {s for s, w in wins.items() if w == max(wins.values())}  # ours with the most wins (a tie: either)
    assert "| java-dnh | 60 | 60 | 100.00% |" in text
    said = "Published for the same rules, against our solver with the most wins here ("
    assert text.count(said) == 1 and text.split(said)[1].split(",")[0] in best
    assert [h["solver"] for h in heads if "peers" in h] == [text.split(said)[1].split(",")[0]]
    assert [h["solver"] for h in heads if h["outside"]] == ["java-dnh"]
    assert "| java-dnh (not ours: a program outside nnsweeper) | 100.00% (" in page.readme_block(heads)


def test_results_page_says_how_the_runs_ran_and_groups_the_headline(monkeypatch, tmp_path):
    from types import SimpleNamespace

    _, page = _records_and_page(monkeypatch, tmp_path)

    def run(workers, games, seconds, machine="AMD EPYC"):
        return {"workers": workers, "cpus": workers, "machine": machine, "games": games,
                "wall_seconds": seconds}

    # Runs on two machines: each with its games and time, and the command's --jobs is the last run's.
    assert page._runs([run(16, 1_410_000, 180, "Xeon"), run(2, 590_000, 540)], 2) == (
        "2 runs, 0.20 h wall time in all; 1 run on 16 workers on 16 cores (Xeon): 1,410,000 games in 0.05 h; "
        "1 run on 2 workers on 2 cores (AMD EPYC): 590,000 games in 0.15 h; the command, with its --jobs 2, "
        "is the last run's: the runs on 16 workers were started with another --jobs, which the results do "
        "not depend on")
    assert page._runs([run(2, 10, 3600), run(2, 10, 3600)], 2) == (
        "2 runs, 2.00 h wall time in all, on 2 workers on 2 cores (AMD EPYC)")
    assert page._runs([]) == "where the games were played is not recorded"

    # Rows taken in later (a solver played again beside its earlier rows; one replaced), oldest first.
    day = "2026-11-2{}T10:00:00+00:00".format
    later = SimpleNamespace(metadata={
        "added": [{"command": "nnsweeper eval --solvers search --out x", "created": day(7),
                   "solvers": ["search"],
                   "runs": [run(2, 1_000_000, 3600)], "kept_as": {"search": "search-v1"}},
                  {"command": "eval --solvers gnn", "created": day(0), "solvers": ["gnn"]}],
        "replaced": [{"command": "nnsweeper eval --solvers csp", "created": day(5), "solvers": ["csp"],
                      "runs": []}]})
    assert page._later_runs(later) == [
        "The rows of gnn were added, played on the same games on 2026-11-20 by "
        "`nnsweeper eval --solvers gnn`.",
        "The rows of csp were played again on the same games on 2026-11-25 by "
        "`nnsweeper eval --solvers csp`.",
        "The rows of search were played again on the same games on 2026-11-27 by `nnsweeper eval --solvers "
        "search --out x` (1 run, 1.00 h wall time in all, on 2 workers on 2 cores (AMD EPYC)); the earlier "
        "rows of search are kept as search-v1."]
    assert page._later_runs(SimpleNamespace(metadata={})) == []

    def head(solver, games, rate, board="expert 16x30/99", rule="safe", start="corner", peers=None):
        h = {"solver": solver, "board": board, "rule": rule, "start": start, "games": games, "rate": rate,
             "low": rate - 0.001, "high": rate + 0.001, "base_seed": 2026}
        return h if peers is None else {**h, "peers": peers}

    heads = [head("search", 1_000_000, 0.4071, peers=[
                 {"who": "DavidNHill, JSMinesweeper", "theirs": 41.132, "standing": "below"},
                 {"who": "minesolve", "theirs": 40.8, "standing": "not distinguishable"}]),
             head("csp", 1_000_000, 0.378),
             head("value-gnn", 100_000, 0.407, peers=[
                 {"who": "DavidNHill, JSMinesweeper", "theirs": 41.132, "standing": "below"}]),
             head("search", 100_000, 0.4069)]
    block = page.readme_block(heads)
    # One table per number of games, the larger first, each row once.
    first, second = block.index("**1,000,000 games per solver and board**"), block.index("**100,000 games")
    assert first < second and block.count("| expert 16x30/99, safe first click at corner | search |") == 2
    assert "(expert 16x30/99: the first 100,000 of the 1,000,000 games above)" in block
    assert "`value-gnn`, search with a value network" in block
    # Against the peers: the largest run's figures only, each peer by its standing.
    assert ("Against every published mark (our solver with the most wins on each board's 1,000,000 games; "
            "above or below where the 95% interval of the difference excludes 0): below JSMinesweeper "
            "(DavidNHill) on expert (search 40.71% against 41.132%); not distinguishable from minesolve on "
            "expert (search 40.71% against 40.800%).") in block
    assert "value-gnn 40.70% against" not in block


def test_scaling_projects_where_a_curve_meets_its_target():
    mod = _module("train/scaling.py")
    # excess = 0.1 * (x / 1e5) ** -0.5 meets 0.025 at 1e5 * 4 ** 2 states.
    x = [1e5, 2e5, 4e5, 8e5]
    slope, reach = mod.project(x, [0.1 * (v / 1e5) ** -0.5 for v in x], 0.025)
    assert slope == pytest.approx(-0.5) and reach == pytest.approx(1.6e6)
    assert mod.project(x, [0.1, 0.1, 0.2, 0.2], 0.05)[1] is None  # a curve going up meets nothing
    rows = [{"run": "gnn-x", "parent": "", "examples": v, "worst_kind_ratio": 1 + 0.1 * (v / 1e5) ** -0.5,
             "safe_below": 1 - 0.04 * (v / 1e5) ** -1.0} for v in x]
    (line,) = [t for t in mod.projection_lines(rows) if t.startswith("| gnn-x")]
    # The ratio's excess meets 0.02 at 1e5 * 25 states; the missed share meets 0.005 at 8e5 (1x the last).
    assert line == ("| gnn-x | 4 | worst-kind ratio: slope -0.50, target at 2,500,000 states (3.1x its "
                    "last); proven safe < 0.02: slope -1.00, target at 800,000 states (1.0x its last) |")
    assert mod.projection_lines(rows[:2]) == []  # two checkpoints: no line drawn through them
    # A chain: gnn-x's first two epochs go on in gnn-x-ft (from epoch 2), whose two epochs go on in
    # gnn-x-ft-2 (from epoch 1). The fitted curve is the chain's: 2 + 1 + 1 checkpoints on one law.
    law = {v: rows[i] for i, v in enumerate(x)}
    chain = [dict(law[1e5], epoch=1), dict(law[2e5], epoch=2),
             dict(law[4e5], run="gnn-x-ft", parent="gnn-x epoch 2", epoch=1),
             {**law[4e5], "run": "gnn-x-ft", "parent": "gnn-x epoch 2", "epoch": 2, "examples": 6e5,
              "worst_kind_ratio": 1.5, "safe_below": 0.5},  # not on the chain: ft-2 starts from epoch 1
             dict(law[8e5], run="gnn-x-ft-2", parent="gnn-x-ft epoch 1", epoch=1)]
    assert [(r["run"], r["epoch"]) for r in mod.lineage("gnn-x-ft-2", chain)] == [
        ("gnn-x", 1), ("gnn-x", 2), ("gnn-x-ft", 1), ("gnn-x-ft-2", 1)]
    assert mod.projection_lines(chain)[-1] == line.replace("| gnn-x |", "| gnn-x > gnn-x-ft > gnn-x-ft-2 |")


def test_scaling_epochs_of_a_chain_of_fine_tunings_and_an_interrupted_training(monkeypatch, capsys):
    from nnsweeper.training import TrainingInterrupted

    mod = _module("train/scaling.py")
    rows = [{"run": "gnn-m", "epoch": 8, "parent": ""},
            {"run": "gnn-m-lr", "epoch": 2, "parent": "gnn-m epoch 8"},
            {"run": "gnn-m-b256", "epoch": 3, "parent": "gnn-m-lr epoch 2"}]
    assert [mod._epoch(r, rows) for r in rows] == ["8", "8+2", "10+3"]
    machines = ("AMD EPYC, 1 torch thread(s)", "AMD EPYC", "NVIDIA H100 80GB HBM3")
    for r, seconds, hardware in zip(rows, (5400.0, 6000.0, 6300.0), machines, strict=True):
        r.update(train_seconds=seconds, hardware=hardware)
    assert [mod._training(r, rows) for r in rows] == ["90.0 min", "100.0 min", "100.0 min + 5.0 min on H100"]

    def stop(*args, **kwargs):
        raise TrainingInterrupted("interrupted in epoch 2 of 4 (batch 7 of 9); resume.pt holds the end of "
                                  "epoch 1")

    monkeypatch.setattr(mod, "train_runs", stop)
    assert mod.main(["train", "gnn-l", "--epochs", "6"]) == 130
    err = capsys.readouterr().err
    assert err == ("interrupted in epoch 2 of 4 (batch 7 of 9); resume.pt holds the end of epoch 1 (this "
                   "script resumes by itself: python train/scaling.py train gnn-l --epochs 6)\n")


def test_scaling_trains_scores_every_kept_checkpoint_and_tabulates(monkeypatch, tmp_path, capsys):
    import csv

    mod = _module("train/scaling.py")
    fixture = ROOT / "data" / "fixtures" / "tiny"
    base = tmp_path / "base.toml"
    base.write_text(f'[data]\npath = "{fixture.as_posix()}"\n[model]\narch = "gnn"\nhidden = 8\nlayers = 1\n'
                    f'[train]\nbatch_size = 32\nseed = 0\n[output]\ndir = "unused"\n')
    monkeypatch.setattr(mod, "RUNS", (mod.Run("gnn-t", str(base), {"hidden": 8}, 2),))
    monkeypatch.setattr(mod, "RUNS_DIR", tmp_path / "runs")
    monkeypatch.setattr(mod, "SCORES", tmp_path / "scores")
    monkeypatch.setattr(mod, "TABLE", tmp_path / "scaling")
    monkeypatch.setattr(mod, "TESTS", {"broad_test": str(fixture), "unseen_test": str(fixture)})
    # Scoring goes coarse to fine: stopped part-way, it still spans the curve.
    assert mod.coarse_first(list(range(1, 9))) == [8, 4, 6, 2, 7, 5, 3, 1]
    assert mod.coarse_first([1, 2, 3]) == [3, 2, 1] and mod.coarse_first([]) == []
    # --minutes: an epoch is the training split at the probe's speed plus its validation
    # (29.2 s less 19,200 states at 1,000 a second); nine tenths of the time is planned.
    probe = {"examples": 19_200, "examples_per_second": 1000.0, "seconds": 29.2}
    assert mod.plan_epochs(probe, 159_323, 600.0) == (3, pytest.approx(169.323))
    assert mod.plan_epochs(probe, 159_323, 10.0)[0] == 1  # at least one
    monkeypatch.setattr(mod, "PROBE_STATES", 64)  # two batches of 32
    assert mod.main(["train", "--minutes", "0.001"]) == 0  # one epoch: less time than an epoch
    assert json.loads((tmp_path / "runs" / "gnn-t" / "config.json").read_text())["train"]["epochs"] == 1
    assert "gnn-t: " in capsys.readouterr().out
    # Started already: it goes on for the epochs that fit (one), after the one it has done.
    assert mod.main(["train", "--minutes", "0.001"]) == 0
    assert ", after the 1 it has done" in capsys.readouterr().out
    assert json.loads((tmp_path / "runs" / "gnn-t" / "config.json").read_text())["train"]["epochs"] == 2
    assert mod.main(["train"]) == 0  # the run's own epochs, 2: finished, it trains nothing
    # A fine-tuning run starts from gnn-t's epoch-1 weights; its compute counts from theirs.
    tuned = mod.Run("gnn-t-ft", str(base), {"hidden": 8}, 1, {"lr": 1e-4}, parent=("gnn-t", 1))
    monkeypatch.setattr(mod, "RUNS", (*mod.RUNS, tuned))
    assert mod.main(["train", "gnn-t-ft"]) == 0
    assert "train.init=" in capsys.readouterr().out
    # A run whose files came back from another machine without resume.pt: finished, left alone.
    (tmp_path / "runs" / "gnn-t-ft" / "resume.pt").unlink()
    assert mod.main(["train"]) == 0
    assert "== gnn-t-ft: " in (out := capsys.readouterr().out) and "without resume.pt (finished)" in out
    assert mod.main(["score", "--games", "30"]) == 0
    assert mod.main(["score", "--games", "30"]) == 0  # nothing left to score: plays nothing
    rows = [json.loads(p.read_text()) for p in sorted((tmp_path / "scores" / "gnn-t").glob("*.json"))]
    assert [r["epoch"] for r in rows] == [1, 2]
    per_epoch = 124 + 55 + 47  # the fixture's training states
    assert [r["examples"] for r in rows] == [per_epoch, 2 * per_epoch]
    ft = json.loads((tmp_path / "scores" / "gnn-t-ft" / "epoch-0001.json").read_text())
    assert ft["parent"] == {"run": "gnn-t", "epoch": 1} and ft["examples"] == 2 * per_epoch
    assert ft["steps"] == rows[0]["steps"] + 8  # 4 + 2 + 2 batches of 32 (per shard), after the parent's
    assert rows[0]["broad_test"] == rows[0]["unseen_test"]  # the same test set twice here
    worst = rows[1]["broad_test"]
    kinds = [v for labels in worst["kinds"].values() for v in labels.values() if v is not None]
    assert worst["worst_kind_ratio"] == max(kinds)
    play = rows[1]["play"]
    assert play["games"] == 30 and play["paired"] and play["gap_low"] <= play["gap"] <= play["gap_high"]
    assert play["gap"] == play["win_rate"] - play["csp_win_rate"]
    assert rows[0]["play"]["csp_win_rate"] == play["csp_win_rate"]  # the same games for every checkpoint
    assert mod.main(["table"]) == 0
    with (tmp_path / "scaling.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert [(t["run"], t["epoch"], t["parent"]) for t in table] == [
        ("gnn-t", "1", ""), ("gnn-t", "2", ""), ("gnn-t-ft", "1", "gnn-t epoch 1")]
    assert float(table[1]["worst_kind_ratio"]) == worst["worst_kind_ratio"]
    assert (tmp_path / "scaling.png").stat().st_size > 10_000
    assert "| gnn-t |" in (tmp_path / "scaling.md").read_text()
    assert f"| gnn-t-ft | {rows[0]['parameters']:,} | 1+1 | {2 * per_epoch:,} |" in (
        tmp_path / "scaling.md").read_text()
    # A GPU run's training time says where it ran; the CPU is the default.
    assert mod._where("NVIDIA H100 80GB HBM3") == " on H100"
    assert mod._where("AMD EPYC, 1 torch thread(s)") == ""
    capsys.readouterr()
    assert mod.main(["status"]) == 0
    assert "gnn-t: " in (out := capsys.readouterr().out)
    assert "2 of 2 epochs (finished); 2 checkpoint(s) scored" in out.splitlines()[0]


def test_the_decision_runs_are_valid_configs_and_the_table_reads_their_scores(tmp_path, monkeypatch):
    from nnsweeper.training_config import apply_overrides, check_config, load_config

    mod = _module("train/decisions.py")
    for run in mod.RUNS:
        raw = apply_overrides(load_config(ROOT / run.config), run.overrides())
        config = check_config(raw)
        assert config.data.path == run.data and run.arch == config.model["arch"]
        # Fine-tunings start from the bundled model, or from a run of the table (its last or best
        # checkpoint); size runs from scratch.
        parents = {f"runs/decisions/{r.name}/{f}.pt" for r in mod.RUNS for f in ("last", "best")}
        assert config.train.init == run.arch or config.train.init in parents or (
            config.train.init is None and run.model)
        assert config.output.dir == f"runs/decisions/{run.name}" and config.train.tensorboard is False
        for key, value in run.train.items():
            assert getattr(config.train, key) == value
    # Equal compute: the same start, epochs, learning rate and batches (one epoch of data/guess_train
    # is 2,296 batches of 64; the runs on other data stop there).
    assert len({(r.train["init"], r.train["lr"]) for r in mod.RUNS if r.arch == "gnn"}) == 1
    same = [r for r in mod.RUNS if not r.model]  # the runs of the bundled sizes
    assert {r.train.get("max_batches", 0) for r in same if r.data != "data/guess_train"} == {2296}
    longer = {r.name: r.train["epochs"] for r in same if r.train["epochs"] != 1}
    assert longer == {"gnn-guess-risk-3": 3, "gnn-guess-listwise-3": 3, "gnn-guess-risk-8": 8,
                      "gnn-guess-listwise-8": 8, "cnn-guess-risk-3": 3}
    # The size and hardware runs: cnn-l's model on a GPU, the command that ships them says so.
    gpu = {r.name: r for r in mod.RUNS if r.model}
    assert set(gpu) == {"cnn-l-gpu", "cnn-l-gpu-guess"}
    assert gpu["cnn-l-gpu-guess"].train_command == ("python train/decisions.py train cnn-l-gpu-guess "
                                                    "--device cuda --workers 14")
    assert mod.run_named("gnn-guess").train_command == "python train/decisions.py train gnn-guess"

    def row(name, lowest, gap):
        d = {"positions": 10, "lowest_risk": lowest, "regret_mean": 0.01, "regret_p90": 0.03,
             "overconfident": 0.002, "safest5_mae": 0.02, "safest5_bias": 0.01}
        side = {"gap": gap, "gap_low": gap - 0.01, "gap_high": gap + 0.01}
        return {"name": name, "decision": d, "frontier_log_loss_ratio": 1.02, "train_seconds": 390.0,
                "examples": 146798, "play": {"pure": side, "hybrid": side}}

    monkeypatch.setattr(mod, "SCORES", tmp_path)
    for r in (row("gnn-guess-risk", 0.9, -0.004), row("gnn", 0.8, -0.02)):
        (tmp_path / f"{r['name']}.json").write_text(json.dumps(r))
    text = mod.table()
    lines = [line for line in text.splitlines() if line.startswith("| gnn")]
    assert lines[0].startswith("| gnn | as shipped | — | 80.00% | 0.0100 |")
    assert lines[1].startswith("| gnn-guess-risk | + 0.1 x exact risk of the soft choice (T 0.02) | "
                               "146,798 states, 6.5 min | 90.00% |")
    assert lines[1].endswith("| -0.40 (-1.40 to +0.60) | -0.40 (-1.40 to +0.60) | — | — |")
    # After a run is shipped: the bundled row says which, the old one follows it as "before".
    before = row("gnn-before", 0.8, -0.02)
    shipped = {**row("gnn", 0.9, -0.004), "shipped_from": "gnn-guess-risk"}
    for r in (before, shipped):
        (tmp_path / f"{r['name']}.json").write_text(json.dumps(r))
    lines = [line for line in mod.table().splitlines() if line.startswith("| gnn")]
    assert lines[0].startswith("| gnn | as shipped (gnn-guess-risk) | — | 90.00% |")
    assert lines[1].startswith("| gnn-before | as shipped before | — | 80.00% |")
    assert lines[2].startswith("| gnn-guess-risk | ")


def test_the_decision_section_of_a_model_card_is_replaced_not_repeated(tmp_path, monkeypatch):
    from nnsweeper.decisions import PHASES

    mod = _module("train/decisions.py")
    weights = tmp_path / "nnsweeper" / "models" / "weights"
    weights.mkdir(parents=True)
    scores = tmp_path / "scores"
    scores.mkdir()
    side = {"gap": -0.01, "gap_low": -0.02, "gap_high": 0.0}
    for name in mod.BUNDLED:
        (weights / f"{name}.md").write_text(f"# Bundled {name}\n\nfigures\n")
        decision = {"positions": 7, "all_positions": 9, "lowest_risk": 0.5, "regret_mean": 0.02,
                    "regret_p90": 0.05, "overconfident": 0.0, "safest5_mae": 0.01, "safest5_bias": -0.01,
                    "phases": {p: {"positions": 0} for p, _, _ in PHASES}}
        row = {"name": name, "decision": decision,
               "play": {"games": 10, "base_seed": 4242, "pure": side, "hybrid": side}}
        (scores / f"{name}.json").write_text(json.dumps(row))
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    monkeypatch.setattr(mod, "SCORES", scores)
    mod.write_cards()
    mod.write_cards()
    text = (weights / "gnn.md").read_text()
    assert text.startswith("# Bundled gnn\n\nfigures\n\n" + mod.CARD_BEGIN)
    assert text.count(mod.CARD_BEGIN) == 1 and text.endswith(mod.CARD_END + "\n")
    assert "decisions on 7 guess positions (of 9; no proven-safe cell):" in text
    assert "pure -1.00 (-2.00 to +0.00) points, hybrid -1.00 (-2.00 to +0.00)." in text


def test_bundle_ships_a_fine_tuned_run_with_its_lineage(monkeypatch, tmp_path, capsys):
    from nnsweeper.models import load_checkpoint
    from nnsweeper.training import check_config, train

    fixture = ROOT / "data" / "fixtures" / "tiny"

    def config(out, **kw):
        return {"data": {"path": str(fixture)}, "model": {"arch": "gnn", "hidden": 8, "layers": 2},
                "train": {"epochs": 1, "batch_size": 16, "max_batches": 2, "seed": 0, "threads": 1,
                          "device": "cpu", "tensorboard": False, **kw}, "output": {"dir": str(out)}}

    parent = train(check_config(config(tmp_path / "parent")), progress=False)
    train(check_config(config(tmp_path / "child", init=str(parent.last), lr=1e-4)), progress=False)
    # The parent learned from other games too (a stream its child's checkpoint does not list).
    meta_path = parent.last.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    foreign = {**meta["extra"]["data_seed_streams"][0], "entropy": 7, "split": "train"}
    meta["extra"]["data_seed_streams"].append(foreign)
    meta_path.write_text(json.dumps(meta))
    bundle = _module("train/bundle.py")
    monkeypatch.setattr(bundle, "WEIGHTS", tmp_path / "weights")
    (tmp_path / "weights").mkdir()
    argv = ["tiny", str(tmp_path / "child"), "--checkpoint", "last.pt", "--config", "tiny.toml",
            "--data-command", "nnsweeper generate tiny ...", "--scored-on", str(fixture), "make the fixture",
            "--train-command", "nnsweeper train --config tiny.toml train.init=parent"]
    assert bundle.main(argv) == 0
    capsys.readouterr()
    card = (tmp_path / "weights" / "tiny.md").read_text()
    sha = load_checkpoint(parent.last).checkpoint_meta["sha256"]
    assert f"- Training: `nnsweeper train --config tiny.toml train.init=parent` from the weights of " \
           f"`{parent.last}` (sha256 {sha[:12]}; its own training: 1 epoch, 32 states, 2 steps" in card
    title = f"## Test split of `{fixture}`, the data its initial weights were trained on (held-out games)"
    assert title in card
    assert "made by `make the fixture`" in card and "lowest-risk" in card
    shipped = load_checkpoint(tmp_path / "weights" / "tiny.pt")
    assert shipped.checkpoint_meta["extra"]["init"]["sha256"] == sha
    assert shipped.checkpoint_meta["extra"]["data_seed_streams"][-1] == foreign
    # Weights are bundled under that name now: others replace them only through the gate.
    with pytest.raises(SystemExit, match="weights are bundled under 'tiny': new ones ship only through"):
        bundle.main(argv)
    # Other weights where the parent was: its seeds cannot be vouched for.
    import shutil

    child = tmp_path / "child" / "last.pt"
    shutil.copy(child, parent.last)
    shutil.copy(child.with_suffix(".json"), meta_path)
    with pytest.raises(SystemExit, match="are no longer there"):
        bundle.main(["tiny-again", *argv[1:]])
    assert (tmp_path / "weights" / "tiny_test_metrics.json").is_file()
    # Gone altogether (a plan keeps only its latest weights): training merged the parent's streams
    # into the child's (its record says so), and those ship.
    child_meta = load_checkpoint(child).checkpoint_meta
    assert child_meta["extra"]["init"]["streams_merged"] is True
    parent.last.unlink()
    meta_path.unlink()
    assert bundle.main(["tiny-gone", *argv[1:]]) == 0
    gone = load_checkpoint(tmp_path / "weights" / "tiny-gone.pt").checkpoint_meta["extra"]
    assert gone["data_seed_streams"] == child_meta["extra"]["data_seed_streams"]
    # A record without the mark still needs its parent.
    unmarked = json.loads(child.with_suffix(".json").read_text())
    del unmarked["extra"]["init"]["streams_merged"]
    child.with_suffix(".json").write_text(json.dumps(unmarked))
    with pytest.raises(Exception, match="nor an existing checkpoint file"):
        bundle.main(["tiny-unmarked", *argv[1:]])


def test_search_ablation_pairs_each_option_with_search(monkeypatch, tmp_path, capsys):
    from nnsweeper.evaluation import EvalTable

    mod = _module("eval/search_ablation.py")
    monkeypatch.setattr(mod, "STORE", tmp_path / "ablation.games")
    monkeypatch.setattr(mod, "TABLE", tmp_path / "ablation.json")
    assert mod.main(["blend", "search", "--trials", "6", "--board", "intermediate"]) == 0
    table = EvalTable.from_json(tmp_path / "ablation.json")
    assert table.solvers == ["search-v1", "search-v1+blend", "search"] and table.boards == ["intermediate"]
    assert all(r["base_seed"] == mod.SEED and r["games"] == 6 for r in table)
    # The reference plays as the first version did, the shipped one with today's defaults.
    assert "candidates=8, margin=0.1, interior=2, endgame=1000, node_limit=20000, forced=True, " \
           "tie_break='prob_zero')" in table.metadata["solvers"]["search-v1"]
    assert "next_value='blend', spread=True" in table.metadata["solvers"]["search"]
    text = (tmp_path / "ablation.md").read_text()
    assert "| v1 | the first version's |" in text and "| blend | next_value='blend' |" in text
    shipped = "| search | as it ships: candidates=None, endgame=2000, node_limit=100000, next_value='blend'"
    assert shipped in text
    d = table.difference("search-v1+blend", "search-v1")[0]
    assert f"{100 * d['difference']:+.2f} ({100 * d['ci_low']:+.2f} to" in text
    # Played again: every game comes from the store.
    assert mod.main(["blend", "search", "--trials", "6", "--board", "intermediate"]) == 0
    again = EvalTable.from_json(tmp_path / "ablation.json")
    assert [r["outcomes"] for r in again] == [r["outcomes"] for r in table]
    capsys.readouterr()
    assert mod.main(["--status"]) == 0
    status = capsys.readouterr().out
    assert "search-v1+blend-16x16x40: 6 games" in status
    assert "store.json" not in status and "LOCK" not in status  # the store's files are no jobs
    with pytest.raises(SystemExit):
        mod.main(["nosuch"])


def test_search_next_pairs_each_variant_with_search_as_it_ships(monkeypatch, tmp_path, capsys):
    from nnsweeper.evaluation import EvalTable

    mod = _module("eval/search_next.py")
    monkeypatch.setattr(mod, "STORE", tmp_path / "next.games")
    monkeypatch.setattr(mod, "TABLE", tmp_path / "next.json")
    assert mod.main(["first_influence", "--trials", "4", "--board", "intermediate"]) == 0
    table = EvalTable.from_json(tmp_path / "next.json")
    assert table.solvers == ["search", "search+first_influence"] and table.boards == ["intermediate"]
    assert f"influence_covered={mod.FIRST_SHARE}" in table.metadata["solvers"]["search+first_influence"]
    assert "influence" not in table.metadata["solvers"]["search"]
    text = (tmp_path / "next.md").read_text()
    d = table.difference("search+first_influence", "search")[0]
    assert f"| first_influence | influence=True, influence_covered={mod.FIRST_SHARE} |" in text
    assert f"{100 * d['difference']:+.2f} ({100 * d['ci_low']:+.2f} to" in text
    # The single-step lesson's variants: corners first among equal-risk cells, inside a band of the
    # look-ahead's best score; with --replace-changed the store plays again only what other code
    # recorded (nothing here: the reference's games come from the store).
    assert mod.main(["corner_band", "--trials", "4", "--board", "intermediate", "--replace-changed",
                     "--out", "ties"]) == 0
    banded = EvalTable.from_json(tmp_path / "ties.json")  # a table of its own, beside the first
    assert (tmp_path / "ties.md").exists()
    assert EvalTable.from_json(tmp_path / "next.json").solvers == table.solvers
    assert banded.solvers == ["search", "search+corner_band"]
    assert "tie_band=0.01" in banded.metadata["solvers"]["search+corner_band"]
    assert "tie_break='fewest_covered_neighbours'" in banded.metadata["solvers"]["search+corner_band"]
    assert banded.select(solver="search")[0]["outcomes"] == table.select(solver="search")[0]["outcomes"]
    capsys.readouterr()
    assert mod.main(["--status"]) == 0
    assert "search+first_influence-16x16x40: 4 games" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        mod.main(["nosuch"])
    with pytest.raises(SystemExit):
        mod.main(["--out", "../elsewhere"])


def test_search_next_record_pairs_a_variant_with_the_records_rows(monkeypatch, tmp_path, capsys):
    """--record: a variant on a record table's games, paired with its search and csp rows."""
    import nnsweeper as ns
    from nnsweeper.evaluation import EvalTable

    mod = _module("eval/search_next.py")
    record = ns.evaluate({"search": ns.get_solver("search", start="corner"),
                          "csp": ns.get_solver("csp", start="corner"),
                          "single_point": ns.get_solver("single_point", start="corner")},
                         boards=["beginner"], trials=6, base_seed=2026, first_click="safe", progress=False)
    record.to_json(tmp_path / "record.json")
    monkeypatch.setattr(mod, "RECORD_TABLE", tmp_path / "record.json")
    monkeypatch.setattr(mod, "RECORD_STORE", tmp_path / "record.games")
    monkeypatch.setattr(mod, "RECORD_OUT", tmp_path / "out.json")
    assert mod.main(["--record", "corner_ties"]) == 0
    table = EvalTable.from_json(tmp_path / "out.json")
    # The record's rows of the peers it has (no java-dnh here; single_point is not one), the variant's added.
    assert table.solvers == ["search", "csp", "search+corner_ties"]
    assert table.select(solver="search")[0]["outcomes"] == record.select(solver="search")[0]["outcomes"]
    mine = ns.evaluate({"v": mod.solver("corner_ties")}, boards=["beginner"], trials=6, base_seed=2026,
                       first_click="safe", progress=False)
    assert table.select(solver="search+corner_ties")[0]["outcomes"] == mine.rows[0]["outcomes"]
    text = (tmp_path / "out.md").read_text()
    for peer in ("search", "csp"):
        d = table.difference("search+corner_ties", peer)[0]
        assert d["paired"]
        assert f"{100 * d['difference']:+.2f} ({100 * d['ci_low']:+.2f} to" in text
    assert "| search+corner_ties | tie_break='fewest_covered_neighbours' |" in text
    with pytest.raises(SystemExit):
        mod.main(["--record", "search"])  # the record has search's own rows
    assert "not a variant to play on the record" in capsys.readouterr().err


def test_tie_breaks_pair_each_order_with_prob_zero_and_pool_the_sweep(monkeypatch, tmp_path, capsys):
    from nnsweeper.evaluation import EvalTable
    from nnsweeper.evaluation.summary import pooled_difference

    mod = _module("eval/tie_breaks.py")
    monkeypatch.setattr(mod, "STORE", tmp_path / "ties.games")
    monkeypatch.setattr(mod, "TABLE", tmp_path / "ties.json")
    monkeypatch.setattr(mod, "SWEEP_TABLE", tmp_path / "ties_10x10.json")
    monkeypatch.setattr(mod, "SWEEP", (8, 12))
    assert mod.main(["fewest_covered_near", "--trials", "6", "--board", "10x10",
                     "--board", "intermediate"]) == 0
    table = EvalTable.from_json(tmp_path / "ties_10x10.json")
    classic = EvalTable.from_json(tmp_path / "ties.json")
    assert table.solvers == classic.solvers == ["csp", "csp+fewest_covered_near"]
    # The sweep's games split evenly over its counts, the first click at the centre; the
    # classic board from the corner, in a table of its own (each describes its solvers once).
    assert sorted((r["mines"], r["games"]) for r in table if r["solver"] == "csp") == [(8, 3), (12, 3)]
    assert [(r["board"], r["games"]) for r in classic if r["solver"] == "csp"] == [("intermediate", 6)]
    assert "start='center'" in table.metadata["solvers"]["csp"]
    assert "start='corner'" in classic.metadata["solvers"]["csp"]
    text = (tmp_path / "ties.md").read_text()
    assert "### intermediate (6 games per order)" in text
    diffs = [d for d in table.difference("csp+fewest_covered_near", "csp") if d["board"] == "10x10"]
    g, low, high, _ = pooled_difference(diffs)
    assert "### 10x10 sweep (6 games per order)" in text
    assert "| fewest_covered_near | tie_break='fewest_covered_neighbours', tolerance=0.001 |" in text
    assert f"{100 * g:+.2f} ({100 * low:+.2f} to {100 * high:+.2f})" in text
    with pytest.raises(SystemExit):
        mod.main(["nosuch"])


def test_results_page_says_which_rows_an_earlier_version_played(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from nnsweeper.solvers import get_solver
    from nnsweeper.solvers.search import V1

    _, page = _records_and_page(monkeypatch, tmp_path)
    today = repr(get_solver("search", start=(3, 3)))
    before = repr(get_solver("search", start=(3, 3), **V1))
    assert today != before
    csp = repr(get_solver("csp", start="corner"))
    table = SimpleNamespace(metadata={"solvers": {"search": before, "csp": csp, "search-v1": before}})
    assert page._earlier(table) == {"search": before}  # search-v1 is no solver's name today
    table.metadata["solvers"]["search"] = today
    assert page._earlier(table) == {}
    # The same options with other weights are an earlier version too.
    gnn = get_solver("gnn", start="corner")
    table = SimpleNamespace(metadata={"solvers": {"gnn": repr(gnn)}, "weights": {"gnn": gnn.weights()}})
    assert page._earlier(table) == {}
    table.metadata["weights"]["gnn"] = {"gnn": "0" * 64}
    assert page._earlier(table) == {"gnn": repr(gnn)}
    assert page._shown({"solver": "search", "earlier": True}) == "search (an earlier version)"
    assert page._shown({"solver": "search"}) == "search"
    # Under such rows, the command that plays today's, and how far a replay of it got.
    rec = page.Record("r", ("eval", "--solvers", "csp,search"), 100, ("csp", "search"), configurations=2)
    assert page._earlier_line(rec, "search", before) == (
        f"**The rows of search were played by an earlier version of it** (`{before}`, not today's options or "
        "weights): `python eval/records.py r --replay search` plays today's on the same games.")
    # A job's solver is the one its job.json names: a name the store must make safe for a file
    # system (a crc suffix on the folder) counts too, and a folder without job.json not at all.
    from nnsweeper.evaluation.games import Board
    from nnsweeper.evaluation.store import _job_folder_name

    small, mid = Board("9x9", 9, 9, 10), Board("16x16", 16, 16, 40)
    for name, board, b in (("search", small, 100), ("search", mid, 30), ("value-search", small, 50),
                           ("odd/name", small, 70), (None, mid, 40)):
        job = tmp_path / "replay" / "r.games" / _job_folder_name(name or "search", board)
        if name is None:
            job = job.with_name(job.name + "-half-open")
        job.mkdir(parents=True)
        if name is not None:
            (job / "job.json").write_text(json.dumps({"solver": name, "rows": board.rows}))
        (job / f"{0:012d}-{b:012d}.npz").write_bytes(b"")
    assert rec.replayed("search") == 130 and rec.replayed("value-search") == 50
    assert rec.replayed("odd/name") == 70 and rec.replayed("odd") == 0
    assert page._earlier_line(rec, "search", before).endswith(
        "on the same games; it is under way: 130 of the 200 games are played "
        "(`python eval/records.py --status`).")


def test_the_recipe_data_covers_every_density_and_kind_of_position():
    import shlex

    from nnsweeper.cli import build_parser
    from nnsweeper.datasets.generate import resolve_parts

    mod = _module("train/recipe.py")
    argv = shlex.split(mod.DATA)
    assert argv[:3] == ["nnsweeper", "generate", "data/recipe"]
    args = build_parser().parse_args(argv[1:])  # the command as the command line reads it
    parts = resolve_parts([*args.mix, *args.parts], games=args.games)
    tenby = {p.mines for p in parts if (p.rows, p.cols) == (10, 10)}
    assert tenby == set(range(5, 31))  # every count of the sweep
    kinds = {(p.policy, p.flags, p.record) for p in parts}
    wanted = {("gnn", "all", None), ("cnn", "all", None), ("csp", "none", None), ("search", "all", "guess")}
    assert wanted <= kinds
    assert {(p.rows, p.cols) for p in parts} >= {(9, 9), (16, 16), (16, 30), (12, 12), (16, 20)}
    # No board of the held-out kinds (8x8/20, 24x30/200) and a seed of its own.
    assert not {(p.rows, p.cols, p.mines) for p in parts} & {(8, 8, 20), (24, 30, 200)}
    assert argv[argv.index("--seed") + 1] == "21"


def test_bundled_weights_are_replaced_only_through_a_gate_that_measured_them(tmp_path, monkeypatch):
    from nnsweeper.gate import GateCell, GateReport
    from nnsweeper.models.digest import weights_digest

    bundle = _module("train/bundle.py")
    monkeypatch.setattr(bundle, "WEIGHTS", tmp_path)
    (tmp_path / "gnn.pt").write_bytes(b"bundled")
    candidate = tmp_path / "run" / "best.pt"
    candidate.parent.mkdir()
    candidate.write_bytes(b"candidate")
    assert bundle.check_gate("cnn", candidate, None) == ""  # nothing bundled under that name
    refusal = (r"weights are bundled under 'gnn': new ones ship only through the gate "
               r"\(python train/gate.py gnn .*best.pt --out PREFIX, then --gate PREFIX\)")
    with pytest.raises(SystemExit, match=refusal):
        bundle.check_gate("gnn", candidate, None)
    weights = {"candidate": {str(candidate): weights_digest(candidate)},
               "bundled": {"gnn": weights_digest(tmp_path / "gnn.pt")}}
    better = GateCell("decisions", "expert none", 0.001, 0.002, -0.001, -0.0015, -0.0005, True, False)
    (tmp_path / "g.json").write_text(GateReport("gnn", "c", "b", [better], {}, weights).to_json())
    card = bundle.check_gate("gnn", candidate, str(tmp_path / "g"))
    assert card.startswith("## The gate\n") and "gate: c against b (gnn): PASSED" in card
    worse = GateCell("decisions", "expert none", 0.004, 0.002, 0.002, 0.0015, 0.0025, True, False)
    (tmp_path / "g.json").write_text(GateReport("gnn", "c", "b", [worse], {}, weights).to_json())
    with pytest.raises(SystemExit, match=r"g.json: the gate failed: 1 cells worse \(decisions expert none\)"):
        bundle.check_gate("gnn", candidate, str(tmp_path / "g"))
    candidate.write_bytes(b"trained again")  # other weights than the gate measured
    with pytest.raises(SystemExit, match="the gate measured other candidate weights"):
        bundle.check_gate("gnn", candidate, str(tmp_path / "g"))
    with pytest.raises(SystemExit, match="missing.json: .*No such file"):
        bundle.check_gate("gnn", candidate, str(tmp_path / "missing"))


def test_opening_book_moves_a_mine_off_the_guess_to_a_uniform_layout():
    """Layouts with the guessed cell safe come out equally likely (chi-square over every layout of a
    3x4 board with 3 mines, the corner safe, 150 draws each), and the corner's number never changes."""
    from itertools import combinations

    from scipy.stats import chisquare

    mod = _module("eval/opening_book.py")
    cell = (2, 3)
    block = mod.corner_block((3, 4))
    counts: dict[int, dict[bytes, int]] = {}
    cells = [k for k in range(12) if k != 0]
    for mines in combinations(cells, 3):
        layout = np.zeros((3, 4), dtype=bool)
        layout.ravel()[list(mines)] = True
        for seed in range(150):
            out = mod.moved_layout(layout, cell, seed)
            assert not out[cell] and out.sum() == 3 and (out[block] == layout[block]).all()
            n = int(layout[block].sum())
            counts.setdefault(n, {}).setdefault(out.tobytes(), 0)
            counts[n][out.tobytes()] += 1
    for n, seen in counts.items():
        # every layout with the cell safe and n mines next to the corner, each equally often
        expected = sum(1 for mines in combinations(cells, 3) if cell[0] * 4 + cell[1] not in mines
                       and sum(block.ravel()[list(mines)]) == n)
        assert len(seen) == expected
        if expected > 1:
            assert chisquare(list(seen.values())).pvalue > 1e-3
    same = np.zeros((3, 4), dtype=bool)
    same[0, 1] = same[1, 2] = same[2, 2] = True
    assert mod.moved_layout(same, cell, 0) is same  # a safe cell: the layout as drawn


def test_opening_book_plays_every_first_guess_on_the_same_games(monkeypatch, tmp_path, capsys):
    from nnsweeper.evaluation.harness import game_seeds
    from nnsweeper.game import Game, draw_layout
    from nnsweeper.solvers.base import GUESS_KINDS

    mod = _module("eval/opening_book.py")
    monkeypatch.setattr(mod, "OUT", tmp_path / "book")
    monkeypatch.setattr(mod, "ARCHIVE", tmp_path / "book.json.gz")
    monkeypatch.setattr(mod, "TABLE", tmp_path / "book.md")
    monkeypatch.setattr(mod, "BOARD", "beginner")
    monkeypatch.setattr(mod, "CHUNK", 12)
    monkeypatch.setattr(mod, "OPTIONS", {"search": None, "corner (8, 8)": (8, 8), "edge (0, 2)": (0, 2)})
    assert mod.main(["play", "--chunks", "0:2", "--worker", "1/2"]) == 0  # chunk 1 only
    assert [p.name for p in (tmp_path / "book").iterdir()] == ["chunk00001.json"]
    data = json.loads((tmp_path / "book" / "chunk00001.json").read_text())
    assert data["board"] == "beginner" and data["options"] == ["search", "corner (8, 8)", "edge (0, 2)"]
    rules = mod.rules()
    shown = [int(draw_layout(rules, s, (0, 0))[:2, :2].sum()) for s in game_seeds(mod.SEED, 24)[12:].tolist()]
    assert data["n"] == [n for n in shown if n] and data["seeds"]  # the games with a number in the corner
    # The forced option opens its cell as the first guess, on the layout with that cell safe.
    sd = data["seeds"][0]
    layout = mod.moved_layout(draw_layout(rules, sd, (0, 0)), (8, 8), sd)
    game = Game(rules, 0)
    game.reset()
    game._set_layout(layout)
    solver = mod.first_guess_solver((8, 8))
    rec = solver.play(game, np.random.default_rng(sd))
    guesses = [m.cell for m in rec.moves if m.kind in GUESS_KINDS]
    assert guesses[0] == (8, 8)
    assert rec.won == data["wins"][0][1]
    capsys.readouterr()
    assert mod.main(["table", "--write"]) == 0
    text = capsys.readouterr().out
    assert f"{len(data['n'])} games (those of 1 chunks of 12 game seeds" in text
    w = np.array(data["wins"], dtype=bool)
    it, other = int((w[:, 1] & ~w[:, 0]).sum()), int((~w[:, 1] & w[:, 0]).sum())
    assert f"| corner (8, 8) | {100 * w[:, 1].mean():.2f}% |" in text
    assert f"{100 * (it - other) / len(w):+.2f} (" in text and f"| {it} / {other} |" in text
    assert (tmp_path / "book.md").read_text() == text
    # The archive alone gives the same table once the chunks are gone.
    for p in (tmp_path / "book").iterdir():
        p.unlink()
    assert mod.main(["table"]) == 0
    assert capsys.readouterr().out == text
    # Played on from the archive alone: its chunk is not played again, the new one joins it.
    assert mod.main(["play", "--chunks", "0:2"]) == 0
    assert [p.name for p in (tmp_path / "book").iterdir()] == ["chunk00000.json"]
    capsys.readouterr()
    assert mod.main(["table", "--write"]) == 0
    both = capsys.readouterr().out
    first = json.loads((tmp_path / "book" / "chunk00000.json").read_text())
    assert f"{len(first['n']) + len(data['n'])} games (those of 2 chunks of 12 game seeds" in both
    for p in (tmp_path / "book").iterdir():
        p.unlink()
    assert mod.main(["table"]) == 0
    assert capsys.readouterr().out == both  # the archive now holds both
    monkeypatch.setattr(mod, "SEED", 1)
    with pytest.raises(SystemExit, match="another board, seed or options"):
        mod.main(["table"])


def test_bench_solvers_times_each_solver_on_each_group_of_boards(capsys):
    # The benchmark behind `make bench`: every solver on a sweep (centre start) and on a preset
    # (corner start), with the same games for each; no timing is asserted, only what it plays.
    bench = _module("benchmarks/bench_solvers.py")
    assert bench.main(["--games", "2", "--solvers", "single_point,csp", "--boards", "6x6:3-4,beginner"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out[1:5]]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("single_point", "6x6:3-4", "(center)", "4"), ("csp", "6x6:3-4", "(center)", "4"),
        ("single_point", "beginner", "(corner)", "2"), ("csp", "beginner", "(corner)", "2")]
    with pytest.raises(SystemExit):
        bench.main(["--games", "0"])
    # An option for the solvers named, one at a time: csp's tie-break, the same games played.
    assert bench.main(["--games", "3", "--solvers", "csp", "--boards", "beginner",
                       "--option", "tie_break=prob_zero"]) == 0
    out = capsys.readouterr().out
    assert "one process; tie_break='prob_zero';" in out and out.splitlines()[1].split()[:4] == [
        "csp", "beginner", "(corner)", "3"]
    with pytest.raises(SystemExit):
        bench.main(["--option", "no equals sign"])
    with pytest.raises(SystemExit):
        bench.main(["--threads", "0"])
