"""Evaluation harness: the seed notebook's game seeds, parallel runs, tables."""

import json
import math

import numpy as np
import pytest

from nnsweeper import InvalidRulesError, MinesweeperEnv
from nnsweeper.evaluation import EvalTable, eval_solver_over_mines, evaluate, game_seeds

Z95 = 1.959963984540054  # two-sided 95% normal quantile


# --- solvers written the way the seed notebook writes them: only env and rng ---
def first_click_index(env):
    return env._flat(env.r // 2, env.c // 2)


def random_clicker(env, rng):
    """Click the centre, then uniformly random covered cells until the game ends."""
    env.reset()
    obs, r, done, info = env.step(first_click_index(env))
    while not done:
        cov = [(i, j) for i in range(env.r) for j in range(env.c) if env.mask[i, j] == 1]
        x, y = cov[rng.integers(len(cov))]
        obs, r, done, info = env.step(env._flat(x, y))
    return info.get("result") == "win"


def wins_on_even_seed(env, rng):
    """Does not play: wins exactly when the game's seed is even."""
    return env.seed % 2 == 0


def seed_notebook_eval(solver_fn, mines_list, rows=10, cols=10, trials=200, base_seed=0):
    """The seed notebook's eval_solver_over_mines, verbatim."""
    rng_master = np.random.default_rng(base_seed)
    seeds = rng_master.integers(0, 2**31 - 1, size=trials, dtype=np.int64)
    wr = []
    for m in mines_list:
        wins = 0
        for sd in seeds:
            env = MinesweeperEnv(rows=rows, cols=cols, mines=int(m), seed=int(sd))
            rng = np.random.default_rng(sd)
            wins += 1 if solver_fn(env, rng) else 0
        wr.append(wins / trials)
    return np.array(wr, dtype=float)


def wilson(k, n, z=Z95):
    """The Wilson score interval, written out."""
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    return centre - half, centre + half


def strip_times(table):
    return [{k: v for k, v in r.items() if not k.endswith("seconds")} for r in table]


def same_rows(a, b):
    """Equal rows, NaN equal to NaN."""
    assert len(a) == len(b)
    for ra, rb in zip(a, b, strict=True):
        assert ra.keys() == rb.keys()
        for k in ra:
            va, vb = ra[k], rb[k]
            if isinstance(va, float) and math.isnan(va):
                assert isinstance(vb, float) and math.isnan(vb), k
            else:
                assert va == vb, k


# ---------------------------------------------------------------- seeds
def test_game_seeds_follow_the_seed_notebook():
    seeds = game_seeds(0, 5)
    assert seeds.dtype == np.int64
    expected = np.random.default_rng(0).integers(0, 2**31 - 1, size=5, dtype=np.int64)
    np.testing.assert_array_equal(seeds, expected)
    np.testing.assert_array_equal(seeds[:3], [1826701614, 1367864806, 1097657231])
    # More trials extend the list; the first games stay the same.
    np.testing.assert_array_equal(game_seeds(0, 50)[:5], seeds)
    assert not np.array_equal(game_seeds(1, 5), seeds)


def test_eval_matches_the_seed_notebook_loop():
    ours = eval_solver_over_mines(random_clicker, [1, 3, 5], rows=5, cols=5, trials=40,
                                  base_seed=3)
    theirs = seed_notebook_eval(random_clicker, [1, 3, 5], rows=5, cols=5, trials=40,
                                base_seed=3)
    np.testing.assert_array_equal(ours, theirs)
    assert ours.dtype == np.float64 and ours.shape == (3,)
    # Positional arguments in the seed's order, and a numpy array of mine counts.
    np.testing.assert_array_equal(
        eval_solver_over_mines(random_clicker, np.array([1, 3, 5]), 5, 5, 40, 3), theirs
    )


def test_eval_counts_wins_per_seed():
    seeds = game_seeds(7, 25)
    expected = np.mean(seeds % 2 == 0)
    rates = eval_solver_over_mines(wins_on_even_seed, [2, 4], rows=4, cols=4, trials=25,
                                   base_seed=7)
    np.testing.assert_array_equal(rates, [expected, expected])


def test_results_do_not_depend_on_n_jobs():
    one = evaluate(["single_point", "csp"], [3, 8], rows=6, cols=6, trials=12, base_seed=5)
    two = evaluate(["single_point", "csp"], [3, 8], rows=6, cols=6, trials=12, base_seed=5,
                   n_jobs=2)
    same_rows(strip_times(one), strip_times(two))
    np.testing.assert_array_equal(
        eval_solver_over_mines(random_clicker, [2, 6], rows=5, cols=5, trials=20, n_jobs=2),
        eval_solver_over_mines(random_clicker, [2, 6], rows=5, cols=5, trials=20, n_jobs=1),
    )


# ----------------------------------------------------------------- table
def test_wilson_interval_matches_hand_values():
    # 7 wins in 10 games: the Wilson interval (0.39678, 0.89221).
    assert wilson(7, 10) == pytest.approx((0.39678, 0.89221), abs=1e-5)
    seeds = game_seeds(0, 10)
    k = int(np.sum(seeds % 2 == 0))
    (row,) = evaluate({"even": wins_on_even_seed}, [2], rows=4, cols=4, trials=10).rows
    assert (row["games"], row["wins"], row["win_rate"]) == (10, k, k / 10)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson(k, 10), abs=1e-12)


def test_wilson_interval_at_the_ends():
    (row,) = evaluate({"always": lambda env, rng: True}, [2], rows=4, cols=4, trials=10).rows
    assert row["win_rate"] == 1.0
    assert row["ci_low"] == pytest.approx(10 / (10 + Z95**2), abs=1e-12)  # 0.72246
    assert row["ci_high"] == pytest.approx(1.0)
    assert math.isnan(row["mean_cleared_lost"])  # no game was lost


def test_plain_callable_reports_wins_time_and_share_cleared():
    table = evaluate({"random": random_clicker}, [1, 4], rows=5, cols=5, trials=30)
    np.testing.assert_array_equal(
        table.win_rates("random"),
        eval_solver_over_mines(random_clicker, [1, 4], rows=5, cols=5, trials=30),
    )
    for row in table:
        assert math.isnan(row["mean_guesses"])  # a plain callable has no move record
        assert 0.0 <= row["mean_cleared_lost"] < 1.0
        assert row["mean_seconds"] > 0 and row["median_seconds"] > 0
        assert row["board"] == "5x5" and row["first_click"] == "safe"
    assert table.column("density").tolist() == [1 / 25, 4 / 25]


def test_solvers_with_play_report_guesses_and_agree_with_the_harness():
    from nnsweeper.solvers import get_solver

    csp = get_solver("csp")
    table = evaluate({"csp": csp}, [4, 9], rows=6, cols=6, trials=15, base_seed=2)
    np.testing.assert_array_equal(
        table.win_rates("csp"),
        eval_solver_over_mines(csp, [4, 9], rows=6, cols=6, trials=15, base_seed=2),
    )
    assert all(r["mean_guesses"] >= 0 for r in table)


def test_boards_mix_presets_and_triples():
    table = evaluate({"even": wins_on_even_seed}, boards=["beginner", (5, 6, 4)], trials=8,
                     first_click="zero")
    assert table.boards == ["beginner", "5x6"]
    assert [(r["rows"], r["cols"], r["mines"]) for r in table] == [(9, 9, 10), (5, 6, 4)]
    assert {r["first_click"] for r in table} == {"zero"}
    assert table.metadata["arguments"]["boards"] == [["beginner", 9, 9, 10], ["5x6", 5, 6, 4]]


def test_table_files_round_trip(tmp_path):
    table = evaluate({"random": random_clicker, "even": wins_on_even_seed}, [1, 3], rows=4,
                     cols=4, trials=6)
    table.metadata["command"] = "nnsweeper eval --trials 6"
    table.to_json(tmp_path / "out" / "t.json")
    table.to_csv(tmp_path / "out" / "t.csv")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["t.csv", "t.json"]

    back = EvalTable.from_json(tmp_path / "out" / "t.json")
    same_rows(back.rows, table.rows)
    assert back.metadata["command"] == "nnsweeper eval --trials 6"
    assert back.metadata["arguments"]["mines_list"] == [1, 3]
    assert back.metadata["nnsweeper_version"]
    doc = json.loads((tmp_path / "out" / "t.json").read_text())
    assert doc["rows"][0]["mean_guesses"] is None  # NaN is written as null

    lines = (tmp_path / "out" / "t.csv").read_text().splitlines()
    assert lines[0].split(",") == list(EvalTable.COLUMNS)
    assert len(lines) == 1 + 4
    assert lines[1].startswith("random,4x4,4,4,1,0.0625,safe,6,")


def test_table_text_is_aligned():
    table = evaluate({"random": random_clicker, "even_seed_wins": wins_on_even_seed}, [1, 3],
                     rows=4, cols=4, trials=6)
    lines = str(table).splitlines()
    assert len(lines) == 5
    assert lines[0].split()[:3] == ["solver", "board", "mines"]
    start = lines[0].index("board")
    assert all(line[start:].startswith("4x4") for line in lines[1:])
    assert lines[1].split()[0] == "random" and lines[3].split()[0] == "even_seed_wins"


def test_table_queries():
    table = evaluate({"a": wins_on_even_seed, "b": lambda env, rng: False}, [1, 2], rows=3,
                     cols=3, trials=4)
    assert table.solvers == ["a", "b"]
    assert table.win_rates("b").tolist() == [0.0, 0.0]
    assert len(table.select(solver="a", mines=2)) == 1
    with pytest.raises(ValueError, match="solver must be one of a, b; got 'c'"):
        table.win_rates("c")
    with pytest.raises(ValueError, match="unknown column 'speed'"):
        table.select(speed=1)


def test_from_json_rejects_other_files(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"a": 1}')
    with pytest.raises(ValueError, match="not an evaluation table"):
        EvalTable.from_json(path)


# ------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"mines_list": []}, ValueError, "at least one mine count"),
        ({"mines_list": 10}, ValueError, "sequence of mine counts; got 10"),
        ({"mines_list": [10.5]}, ValueError, "whole number; got 10.5"),
        ({"mines_list": [99]}, InvalidRulesError,
         "mines must be between 1 and 98 for a 10x10 board with a safe first click; got 99"),
        ({"mines_list": [5], "trials": 0}, ValueError, "trials must be at least 1; got 0"),
        ({"mines_list": [5], "base_seed": -1}, ValueError, "base_seed must be at least 0"),
        ({"mines_list": [5], "n_jobs": 0}, ValueError, "n_jobs must be a non-zero integer"),
        ({"mines_list": [5], "rows": 0}, ValueError, "rows must be at least 1; got 0"),
        ({"mines_list": [5], "first_click": "lucky"}, InvalidRulesError,
         "first_click must be one of safe, zero, none; got 'lucky'"),
    ],
)
def test_bad_arguments_name_the_value_and_rule(kwargs, error, message):
    with pytest.raises(error, match=message):
        eval_solver_over_mines(random_clicker, **kwargs)
    with pytest.raises(error, match=message):
        evaluate({"r": random_clicker}, **kwargs)


def test_bad_solvers_and_boards():
    with pytest.raises(TypeError, match="solver_fn must be callable"):
        eval_solver_over_mines("csp", [5])
    with pytest.raises(ValueError, match="unknown solver 'nope'; choose one of"):
        evaluate(["nope"], [5])
    with pytest.raises(ValueError, match="solver names must be unique; got csp"):
        evaluate(["csp", "csp"], [5])
    with pytest.raises(TypeError, match="solver 'x' must be callable"):
        evaluate({"x": 3}, [5])
    with pytest.raises(ValueError, match="at least one solver"):
        evaluate({}, [5])
    with pytest.raises(ValueError, match="either mines_list .* or boards, not both"):
        evaluate({"r": random_clicker}, [5], boards=["beginner"])
    with pytest.raises(ValueError, match="got neither"):
        evaluate({"r": random_clicker})
    with pytest.raises(ValueError, match="preset must be one of beginner, intermediate, "
                       "expert; got 'huge'"):
        evaluate({"r": random_clicker}, boards=["huge"])
    with pytest.raises(ValueError, match=r"\(rows, cols, mines\) triple; got \(9, 9\)"):
        evaluate({"r": random_clicker}, boards=[(9, 9)])
