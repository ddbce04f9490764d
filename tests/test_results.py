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
    rows, played, mismatches = _reproduce().replay(path, games=1, sample_seed=1)
    assert mismatches == []
    assert rows >= 1 and played == rows


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
