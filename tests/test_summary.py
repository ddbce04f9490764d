"""The summary per board: pooled paired gaps, counts within thresholds, the verdict."""

import numpy as np
import pytest

from nnsweeper.evaluation import EvalTable, newcombe_interval, newcombe_paired_interval, pack_outcomes
from nnsweeper.evaluation.summary import format_summary, summarize


def _row(solver, mines, won, *, board="10x10", rows=10, cols=10, base_seed=0):
    won = np.asarray(won, dtype=bool)
    n, w = len(won), int(won.sum())
    return {"solver": solver, "board": board, "rows": rows, "cols": cols, "mines": mines,
            "density": mines / (rows * cols), "first_click": "safe", "games": n, "wins": w,
            "win_rate": w / n, "ci_low": 0.0, "ci_high": 1.0, "mean_guesses": 1.0,
            "mean_cleared_lost": 0.5, "mean_seconds": 0.002, "median_seconds": 0.001,
            "model_calls": float("nan"), "model_safe_rate": float("nan"),
            "base_seed": base_seed, "outcomes": pack_outcomes(won)}


def _table(rows):
    # ci_low/ci_high of the difference come from the outcomes, not from these rows.
    return EvalTable(rows)


A10 = [1] * 8 + [0] * 2   # 8 of 10
B10 = [1] * 6 + [0] * 4   # 6 of 10, a subset of A10's wins
A20 = [1] * 5 + [0] * 5   # 5 of 10
B20 = [0] * 5 + [1] * 5   # 5 of 10, none shared


def test_pooled_gap_is_the_paired_interval_over_all_games():
    table = _table([_row("csp", 10, A10), _row("csp", 20, A20), _row("x", 10, B10), _row("x", 20, B20)])
    (board,) = summarize(table)
    assert board.board == "10x10, safe first click" and board.configurations == ["10 mines", "20 mines"]
    assert [s.solver for s in board.solvers] == ["csp", "x"]  # 13/20 before 11/20
    x = board.solvers[1]
    assert (x.games, x.wins, x.win_rate) == (20, 11, 0.55)
    assert x.gap == pytest.approx(11 / 20 - 13 / 20) and x.paired
    # Pooled pairs: both won 6 + 0, only x 0 + 5, only csp 2 + 5, neither 2 + 0.
    assert (x.gap_low, x.gap_high) == newcombe_paired_interval(6, 5, 7, 2)
    assert x.worst["mines"] == 10 and x.worst["difference"] == pytest.approx(-0.2)
    # Gaps of -20 and 0 points: within 1, 3 and 5 points once each.
    assert x.within == (1, 1, 1)
    assert board.solvers[0].gap is None  # the reference


def test_unpaired_rows_use_the_unpaired_interval():
    table = _table([_row("csp", 10, A10, base_seed=0), _row("x", 10, B10, base_seed=1)])
    x = summarize(table)[0].solvers[1]
    assert not x.paired and (x.gap_low, x.gap_high) == newcombe_interval(6, 10, 8, 10)


def test_boards_are_summarised_apart_and_without_a_reference():
    table = _table([_row("csp", 10, A10, board="beginner", rows=9, cols=9),
                    _row("x", 10, B10, board="beginner", rows=9, cols=9),
                    _row("x", 99, B20, board="expert", rows=16, cols=30)])
    beginner, expert = summarize(table)
    assert beginner.reference == "csp" and expert.reference is None  # x alone on expert
    # Wilson's interval for 5 of 10: 0.2366 to 0.7634.
    assert expert.verdict() == "x won 5 of 10 games: 50.0% (95% interval 23.7 to 76.3)."
    text = format_summary(table)
    assert text.startswith("beginner 9x9/10, safe first click, 10 games")
    assert "expert 16x30/99, safe first click, 10 games" in text
    assert text.splitlines()[-1] == "ms per game: csp 2.0, x 2.0"


def test_the_heading_says_where_the_first_click_goes():
    rows = [_row("csp", 99, B20, board="expert", rows=16, cols=30), _row("x", 99, A20, board="expert",
                                                                          rows=16, cols=30)]
    described = {"csp": "CSPSolver(start='corner', tie_break='prob_zero')", "x": "XSolver(start='corner')"}
    text = format_summary(EvalTable(rows, {"solvers": described}))
    assert text.startswith("expert 16x30/99, safe first click in the corner, 10 games")
    assert summarize(EvalTable(rows, {"solvers": described}))[0].first_click == "in the corner"
    zero = {"csp": "CSPSolver(start=(3, 3), tie_break='prob_zero')", "x": "XSolver(start=(3, 3))"}
    assert format_summary(EvalTable(rows, {"solvers": zero})).startswith(
        "expert 16x30/99, safe first click at (3, 3), 10 games")
    both = {"csp": "CSPSolver(start='center')", "x": "XSolver(start='corner')"}
    assert format_summary(EvalTable(rows, {"solvers": both})).startswith(
        "expert 16x30/99, safe first click at each solver's start (center, corner), 10 games")
    # A plain function says nothing of its first click: neither does the heading.
    plain = {"csp": "CSPSolver(start='corner')", "x": "notebook.solve"}
    assert format_summary(EvalTable(rows, {"solvers": plain})).startswith(
        "expert 16x30/99, safe first click, 10 games")
    assert format_summary(EvalTable(rows, {"solvers": ["csp", "x"]})).startswith(  # names only
        "expert 16x30/99, safe first click, 10 games")


def test_one_solver_verdict_reads_a_million_games():
    won = np.zeros(1_000_000, dtype=bool)
    won[:541_558] = True
    (board,) = summarize(_table([_row("search", 99, won, board="expert", rows=16, cols=30)]))
    # Two decimals from 100,000 games on; Wilson's interval 0.540581 to 0.542534.
    assert board.verdict() == "search won 541,558 of 1,000,000 games: 54.16% (95% interval 54.06 to 54.25)."


@pytest.mark.parametrize(
    ("x_won", "verdict"),
    [
        # every game, against 40 of them
        ([1] * 100, "x wins the most games; the closest, csp, is 60.0 points behind"),
        # Few wins in common with csp's: the paired interval is wide.
        ([0] * 40 + [1] * 45 + [0] * 15, "not distinguishable at the top: x won the most games (45.0%); "
                                         "measured from it, csp (-5.0, 95% "),
        ([0] * 40 + [1] * 35 + [0] * 25, "not distinguishable at the top: csp won the most games (40.0%); "
                                         "measured from it, x (-5.0, 95% "),
        # The same games won: nothing that more games could settle.
        ([1] * 40 + [0] * 60, "csp and x won and lost the very same games (40.0%): nothing to tell apart."),
        ([0] * 100, "csp wins the most games; the closest, x, is 40.0 points behind"),
    ],
)
def test_the_verdict_follows_the_interval(x_won, verdict):
    csp = [1] * 40 + [0] * 60
    table = _table([_row("csp", 10, csp), _row("x", 10, x_won)])
    assert summarize(table)[0].verdict().startswith(verdict)


def test_an_interval_wholly_above_zero_never_prints_as_touching_it():
    from nnsweeper.evaluation.summary import SolverSummary, _ci

    s = SolverSummary("x", 1, 100, 50, 0.5, gap=0.010, gap_low=0.0004, gap_high=0.019)
    assert _ci(s) == "+0.04 to +1.90"
    s = SolverSummary("x", 1, 100, 50, 0.5, gap=0.010, gap_low=0.0, gap_high=0.019)
    assert _ci(s) == "+0.0 to +1.9"


def test_an_empty_table_is_refused():
    with pytest.raises(ValueError, match="no rows"):
        summarize(EvalTable([]))


def test_each_solver_stands_better_worse_or_not_distinguishable_from_the_reference():
    csp = [1] * 40 + [0] * 60
    table = _table([_row("csp", 10, csp), _row("up", 10, [1] * 100), _row("down", 10, [0] * 100),
                    _row("level", 10, [0] * 40 + [1] * 35 + [0] * 25)])
    lines = format_summary(table).splitlines()
    standing = {line.split()[0]: line for line in lines[2:6]}
    assert standing["up"].endswith("better") and standing["down"].endswith("worse")
    assert standing["level"].endswith("not distinguishable") and standing["csp"].endswith("reference")
    assert lines[1].split()[-2:] == ["vs", "csp"]


def test_the_summary_answers_for_the_networks_and_explains_its_columns():
    csp = [1] * 40 + [0] * 60
    rows = [_row("csp", 10, csp), _row("net", 10, [0] * 100), _row("hybrid-net", 10, csp)]
    for r in rows[1:]:
        r["model_calls"] = 3.0  # asked a trained model
    text = format_summary(_table(rows))
    answer = "  The networks against csp: hybrid-net +0.0 (-2.1 to +2.1), not distinguishable; net -40.0"
    assert answer in text
    assert text.count("The networks") == 1 and ", worse." in text
    assert "Columns: gap to csp = win rate minus csp's on the same games" in text
    # Without a model no answer is claimed for networks.
    plain = format_summary(_table([_row("csp", 10, csp), _row("x", 10, [0] * 100)]))
    assert "networks" not in plain and "Columns:" in plain


def test_the_networks_answer_by_density_pools_each_band_of_mine_counts():
    csp = [1] * 40 + [0] * 60
    rows = []
    for mines in range(5, 11):  # six counts: bands 5-6, 7-8, 9-10
        net = [1] * 100 if mines <= 6 else csp if mines <= 8 else [0] * 100
        rows += [_row("csp", mines, csp), {**_row("gnn", mines, net), "model_calls": 10.0}]
    (board,) = summarize(_table(rows))
    bands = board.by_density["gnn"]
    assert [band for band, _ in bands] == ["5-6", "7-8", "9-10"]
    assert [round(100 * s.gap, 1) for _, s in bands] == [60.0, 0.0, -40.0]
    text = format_summary(_table(rows))
    assert ("By density, against csp: gnn +60.0 at 5-6 mines (better), +0.0 at 7-8 mines (not "
            "distinguishable), -40.0 at 9-10 mines (worse).") in " ".join(text.split())
    # A logic solver gets no such line, nor does a board of too few counts.
    assert "By density" not in format_summary(_table([_row("csp", 5, csp), _row("x", 5, csp)]))
