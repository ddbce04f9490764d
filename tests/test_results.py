"""Committed results reproduce game for game from their recorded solvers and seeds."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TABLES = sorted((ROOT / "eval" / "results").glob("*.json"))


def _reproduce():
    spec = importlib.util.spec_from_file_location("reproduce", ROOT / "eval" / "reproduce.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", TABLES, ids=[p.stem for p in TABLES])
def test_committed_table_replays(path):
    # One sampled game of every row (the script's default is 20): each must end as recorded.
    rows, played, mismatches, other = _reproduce().replay(path, games=1, sample_seed=1)
    assert mismatches == []
    assert rows >= 1 and played == rows
    # Rows a network played with weights bundled before are named, never replayed with today's, and
    # so are rows of a program outside nnsweeper (benchmarks/peers/: the Java solver on our boards).
    assert all(": played with weights " in line or "a program outside nnsweeper" in line for line in other)


def test_rows_of_other_weights_are_skipped_and_named(tmp_path, capsys):
    import json

    table = json.loads((ROOT / "eval" / "results" / "compare_classic.json").read_text())
    table["rows"] = [r for r in table["rows"] if r["solver"] in ("csp", "gnn") and r["board"] == "beginner"]
    solvers = table["metadata"]["solvers"]
    table["metadata"]["solvers"] = {k: v for k, v in solvers.items() if k in ("csp", "gnn")}
    table["metadata"]["weights"] = {"gnn": {"gnn": "ab" * 32}}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(table))
    mod = _reproduce()
    rows, played, mismatches, other = mod.replay(path, games=2, sample_seed=0)
    assert (rows, played, mismatches) == (1, 2, [])  # csp's row only
    assert len(other) == 1
    assert other[0].startswith("gnn beginner 10 mines: played with weights gnn abababababab, "
                               "bundled now gnn ")
    assert mod.main([str(path), "--games", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: 1 rows checked, 1 games replayed, 0 differ, "
                          "1 rows of other weights skipped\n"
                          "  skipped: gnn beginner 10 mines: played with weights gnn abababababab")


def test_rebuilt_solver_must_print_as_recorded():
    mod = _reproduce()
    solver = mod.recorded_solver("csp", "CSPSolver(start='corner', tie_break='prob_zero', tolerance=1e-09, "
                                        "lookahead=0, margin=0.05)")
    assert solver.start == "corner"
    with pytest.raises(ValueError, match="cannot be rebuilt: bad options for solver 'csp'.*colour"):
        mod.recorded_solver("csp", "CSPSolver(start='corner', colour='red')")
    # An option a solver prints only when it is set is rebuilt too.
    blend = "SearchSolver(start='corner', depth=1, candidates=8, margin=0.1, interior=2, endgame=1000, " \
            "node_limit=20000, forced=True, tie_break='prob_zero', next_value='blend')"
    assert mod.recorded_solver("search+blend", blend).next_value == "blend"
    with pytest.raises(ValueError, match="not in the registry"):
        mod.recorded_solver("nope", "Nope()")
