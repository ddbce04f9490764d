"""Evaluation harness: the seed notebook's game seeds, parallel runs, tables."""

import json
import math

import numpy as np
import pytest

from nnsweeper import InvalidRulesError, MinesweeperEnv
from nnsweeper.evaluation import (
    EvalTable,
    GameResults,
    config_key,
    eval_solver_over_mines,
    evaluate,
    game_seeds,
    newcombe_interval,
    newcombe_paired_interval,
    pack_outcomes,
    unpack_outcomes,
    wilson_interval,
)
from nnsweeper.solvers import CSPSolver, SinglePointSolver

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
    assert wilson_interval(10, 10)[1] == 1.0 and wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(0, 10)[1] == pytest.approx(Z95**2 / (10 + Z95**2), abs=1e-12)


def test_wilson_interval_agrees_with_scipy():
    from scipy.stats import binomtest

    cases = [(k, n) for n in range(1, 41) for k in range(n + 1)]
    cases += [(k, n) for n in (97, 200, 1000, 12_345, 10**6, 10**7)
              for k in (0, 1, 2, n // 3, n // 2, n - 2, n - 1, n)]
    for confidence in (0.01, 0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 0.999999):
        for k, n in cases:
            ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
            low, high = wilson_interval(k, n, confidence)
            # scipy takes the quantile of the double nearest (1 + confidence) / 2, this
            # module of the decimal as written: far in the tail that moves z by ~1e-11.
            tol = 1e-12 if confidence < 0.9999 else 1e-10
            assert abs(low - ci.low) <= tol and abs(high - ci.high) <= tol, (k, n, confidence)
            assert (low == 0.0) == (k == 0) and (high == 1.0) == (k == n), (k, n, confidence)
            assert 0.0 <= low <= k / n <= high <= 1.0


def test_normal_quantile_is_correctly_rounded():
    from nnsweeper.evaluation.stats import _z, normal_quantile

    # Phi^-1(0.975) = 1.95996398454005423552...: the nearest double is ...0543, one unit
    # above what scipy's ndtri and statistics.NormalDist give.
    assert normal_quantile(0.975) == 1.9599639845400543 == _z(0.95)
    assert normal_quantile(0.5) == 0.0
    # Against mpmath with 50 digits, rounded to the nearest double, far into the tails
    # too; p is read as written (0.999999999, not the double nearest it).
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    for p in (0.6, 0.8413447460685429, 0.9, 0.995, 0.9995, 0.999999999, 0.025, 1e-6, 0.3):
        exact = mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(repr(p)) - 1)
        assert normal_quantile(p) == float(exact), p
        assert normal_quantile(p) == normal_quantile(p, 130)
    assert normal_quantile(0.025) == -normal_quantile(0.975)


@pytest.mark.parametrize(("args", "message"), [
    ((3, 2), "wins must not exceed games \\(2\\); got 3"),
    ((0, 0), "games must be at least 1; got 0"),
    ((-1, 2), "wins must be at least 0; got -1"),
    ((1.0, 2), "wins must be an integer; got 1.0"),
    ((1, 2, 1.5), "confidence must be a number in \\(0, 1\\); got 1.5"),
    ((1, 2, True), "confidence must be a number in \\(0, 1\\); got True"),
])
def test_wilson_interval_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        wilson_interval(*args)


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
        assert row["max_seconds"] >= max(row["mean_seconds"], row["median_seconds"])
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


# ------------------------------------------------- per-game outcomes, differences
def wins_on_multiple_of_three(env, rng):
    """Does not play: wins exactly when the game's seed is a multiple of 3."""
    return env.seed % 3 == 0


def test_outcomes_pack_eight_games_per_byte_first_game_highest():
    won = [1, 0, 1, 1, 0, 0, 0, 0, 1]
    assert pack_outcomes(won) == "b080"  # 1011 0000 | 1000 0000 (zero padding)
    np.testing.assert_array_equal(unpack_outcomes("b080", 9), np.array(won, dtype=bool))
    assert pack_outcomes(np.zeros(0, dtype=bool)) == "" and unpack_outcomes("", 0).shape == (0,)
    with pytest.raises(ValueError, match="hex string of 4 digits for 9 games; got 'b0'"):
        unpack_outcomes("b0", 9)
    with pytest.raises(ValueError, match="padding bit after game 9 is set"):
        unpack_outcomes("b0c0", 9)
    with pytest.raises(ValueError, match="hex digits 0-9a-f only; got 'b0zz'"):
        unpack_outcomes("b0zz", 9)
    with pytest.raises(ValueError, match="1-D array of booleans"):
        pack_outcomes([0, 2])


def test_rows_keep_every_game_in_seed_order_in_json_only(tmp_path):
    table = evaluate({"even": wins_on_even_seed, "third": wins_on_multiple_of_three}, [2, 3],
                     rows=4, cols=4, trials=21, base_seed=7)
    seeds = game_seeds(7, 21)
    for row in table:
        assert row["base_seed"] == 7
        expected = seeds % (2 if row["solver"] == "even" else 3) == 0
        np.testing.assert_array_equal(unpack_outcomes(row["outcomes"], 21), expected)
        assert row["wins"] == int(expected.sum())
    np.testing.assert_array_equal(table.outcomes("even", mines=3)[0], seeds % 2 == 0)

    table.to_json(tmp_path / "t.json")
    table.to_csv(tmp_path / "t.csv")
    back = EvalTable.from_json(tmp_path / "t.json")
    assert [r["outcomes"] for r in back] == [r["outcomes"] for r in table]
    assert [r["base_seed"] for r in back] == [7, 7, 7, 7]
    doc = json.loads((tmp_path / "t.json").read_text())
    assert len(doc["rows"][0]["outcomes"]) == 6  # 21 games in 3 bytes
    assert "outcomes" not in (tmp_path / "t.csv").read_text().splitlines()[0]
    assert "outcomes" not in doc["columns"]
    assert not any(r["outcomes"] in str(table) for r in table)  # not printed either


def test_tables_written_without_outcomes_still_load(tmp_path):
    table = evaluate({"even": wins_on_even_seed, "third": wins_on_multiple_of_three}, [2],
                     rows=4, cols=4, trials=12)
    table.to_json(tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text())
    for r in doc["rows"]:  # a table from before the fields existed
        del r["outcomes"], r["base_seed"], r["model_calls"], r["model_safe_rate"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = EvalTable.from_json(tmp_path / "old.json")
    assert [(r["outcomes"], r["base_seed"]) for r in old] == [(None, None), (None, None)]
    assert old.outcomes("even") == [None]
    (d,) = old.difference("even", "third")
    assert not d["paired"] and d["method"] == "newcombe-hybrid"


# Newcombe (1998a), "Interval estimation for the difference between independent
# proportions: comparison of eleven methods", Statistics in Medicine 17:873-890,
# Table II, method 10 (the hybrid score interval), 95% limits to 4 decimals.
@pytest.mark.parametrize(("counts", "published"), [
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((0, 10, 0, 10), (-0.2775, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0000)),
    ((10, 10, 0, 10), (0.6075, 1.0000)),
])
def test_unpaired_interval_matches_newcombe_table_ii(counts, published):
    assert newcombe_interval(*counts) == pytest.approx(published, abs=5e-5)


# Newcombe (1998b), "Improved confidence intervals for the difference between binomial
# proportions based on paired data", Statistics in Medicine 17:2635-2650, Table III,
# method 10 (score interval with the corrected phi); cells (both, first only, second
# only, neither), 95% limits to 4 decimals.
@pytest.mark.parametrize(("cells", "published"), [
    ((36, 12, 2, 0), (0.0569, 0.3404)),
    ((20, 12, 2, 16), (0.0562, 0.3292)),
    ((18, 12, 2, 18), (0.0562, 0.3290)),
    ((36, 14, 0, 0), (0.1528, 0.4167)),
    ((35, 14, 0, 1), (0.1461, 0.4175)),
    ((18, 14, 0, 18), (0.1441, 0.3963)),
    ((2, 97, 1, 0), (0.8721, 0.9854)),
])
def test_paired_interval_matches_newcombe_table_iii(cells, published):
    assert newcombe_paired_interval(*cells) == pytest.approx(published, abs=5e-5)


def test_paired_interval_by_hand():
    # 20 pairs: 8 both, 6 first only, 2 second only, 4 neither. p1 = 0.7, p2 = 0.5.
    z = 1.959963984540054
    l1, u1 = wilson(14, 20, z)
    l2, u2 = wilson(10, 20, z)
    phi = (8 * 4 - 6 * 2 - 20 / 2) / math.sqrt(14 * 6 * 10 * 10)  # ad - bc = 20 > n/2
    low = 0.2 - math.sqrt((0.7 - l1) ** 2 - 2 * phi * (0.7 - l1) * (u2 - 0.5) + (u2 - 0.5) ** 2)
    high = 0.2 + math.sqrt((u1 - 0.7) ** 2 - 2 * phi * (u1 - 0.7) * (0.5 - l2) + (0.5 - l2) ** 2)
    assert newcombe_paired_interval(8, 6, 2, 4) == pytest.approx((low, high), abs=1e-12)
    # Positive correlation narrows the interval below the independent-samples one.
    unpaired = newcombe_interval(14, 20, 10, 20)
    assert unpaired[0] < low and high < unpaired[1]
    # With an empty margin phi is 0 and the paired interval is the unpaired one.
    assert newcombe_paired_interval(36, 14, 0, 0) == pytest.approx(newcombe_interval(50, 50, 36, 50))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: newcombe_interval(3, 2, 1, 2), "wins1 must not exceed games1 \\(2\\); got 3"),
    (lambda: newcombe_interval(0, 0, 1, 2), "games1 must be at least 1; got 0"),
    (lambda: newcombe_interval(1, 2, 1, 2, confidence=95),
     "confidence must be a number in \\(0, 1\\); got 95"),
    (lambda: newcombe_paired_interval(0, 0, 0, 0), "at least one pair"),
    (lambda: newcombe_paired_interval(1, -1, 0, 0), "first_only must be at least 0; got -1"),
])
def test_interval_bad_counts(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_difference_is_paired_when_rows_hold_the_same_games():
    table = evaluate({"even": wins_on_even_seed, "third": wins_on_multiple_of_three}, [2, 3],
                     rows=4, cols=4, trials=40, base_seed=1)
    seeds = game_seeds(1, 40)
    x, y = seeds % 2 == 0, seeds % 3 == 0
    cells = [int(np.sum(x & y)), int(np.sum(x & ~y)), int(np.sum(~x & y)), int(np.sum(~x & ~y))]
    diffs = table.difference("even", reference="third")
    assert [d["mines"] for d in diffs] == [2, 3]
    for d in diffs:
        assert d["paired"] and d["method"] == "newcombe-paired"
        assert (d["solver_only"], d["reference_only"]) == (cells[1], cells[2])
        assert d["difference"] == pytest.approx((x.sum() - y.sum()) / 40)
        assert (d["ci_low"], d["ci_high"]) == pytest.approx(newcombe_paired_interval(*cells), abs=1e-12)
        assert (d["games"], d["reference_games"], d["solver"], d["reference"]) == (40, 40, "even", "third")
    assert len(table.difference("even", "third", mines=3)) == 1


def test_difference_is_unpaired_when_the_games_differ():
    table = evaluate({"even": wins_on_even_seed, "third": wins_on_multiple_of_three}, [2],
                     rows=4, cols=4, trials=40, base_seed=1)
    other = evaluate({"third": wins_on_multiple_of_three}, [2], rows=4, cols=4, trials=40,
                     base_seed=2)
    k1 = table.rows[0]["wins"]
    for rows in ([table.rows[0], other.rows[0]],  # other seeds
                 [table.rows[0], {**table.rows[1], "outcomes": None}]):  # no outcomes
        (d,) = EvalTable(rows).difference("even", "third")
        assert not d["paired"] and d["solver_only"] is None
        k2 = rows[1]["wins"]
        assert (d["ci_low"], d["ci_high"]) == pytest.approx(newcombe_interval(k1, 40, k2, 40), abs=1e-12)


def test_difference_bad_input():
    table = evaluate({"even": wins_on_even_seed, "third": wins_on_multiple_of_three}, [2, 3],
                     rows=4, cols=4, trials=4)
    with pytest.raises(ValueError, match="reference must be one of even, third; got 'csp'"):
        table.difference("even")
    with pytest.raises(ValueError, match="solver and reference must differ; got 'even' for both"):
        table.difference("even", "even")
    with pytest.raises(ValueError, match="no configuration with {'mines': 9} was played by both"):
        table.difference("even", "third", mines=9)
    lone = EvalTable([table.rows[0], table.rows[3]])  # even at 2 mines, third at 3
    with pytest.raises(ValueError, match="no configuration was played by both 'even' and 'third'"):
        lone.difference("even", "third")
    with pytest.raises(ValueError, match="solver 'even' has more than one row for board 4x4"):
        EvalTable([table.rows[0], table.rows[0], table.rows[2]]).difference("even", "third")


def test_table_refuses_outcomes_that_disagree_with_the_counts(tmp_path):
    (row,) = evaluate({"even": wins_on_even_seed}, [2], rows=4, cols=4, trials=10).rows
    won = unpack_outcomes(row["outcomes"], 10)
    won[0] = not won[0]
    flipped = pack_outcomes(won)
    with pytest.raises(ValueError, match=f"row 0 of the table: outcomes hold {int(won.sum())} won "
                       f"games but wins is {row['wins']}"):
        EvalTable([{**row, "outcomes": flipped}])
    with pytest.raises(ValueError, match="row 0 of the table: outcomes must be a hex string of 4 digits"):
        EvalTable([{**row, "outcomes": "ff"}])
    with pytest.raises(ValueError, match="base_seed must be None or a non-negative integer; got -1"):
        EvalTable([{**row, "base_seed": -1}])
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"rows": [{**row, "games": None}]}))
    with pytest.raises(ValueError, match=r"is not an evaluation table \(JSON written by eval or compare\): "
                       "row 0 has games = None"):
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
         "first_click must be one of safe, zero, none, no-guess, no-guess-fast; got 'lucky'"),
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


# ------------------------------------------------------------------ limits
def test_limits_are_refused_before_any_seed_or_game():
    from nnsweeper.evaluation import MAX_GAMES, MAX_TABLE_ROWS, MAX_TRIALS

    assert (MAX_TRIALS, MAX_GAMES, MAX_TABLE_ROWS) == (10_000_000, 100_000_000, 10_000)
    # A billion seeds would be 8 GB: refused before the master generator draws any.
    with pytest.raises(ValueError, match="^trials must be at most 10000000; got 1000000000$"):
        game_seeds(0, 10**9)
    calls = []

    def counting(env, rng):
        calls.append(1)
        return True

    for run in (eval_solver_over_mines, lambda f, m, **kw: evaluate({"f": f}, m, **kw)):
        with pytest.raises(ValueError, match="trials must be at most 10000000; got 10000001"):
            run(counting, [5], trials=MAX_TRIALS + 1)
        # 26 mine counts x 10 million games: 2.6e8 games, over the cap of 1e8.
        with pytest.raises(ValueError,
                           match=r"at most 100000000 games .*; got 10000000 x 26 x 1 = 260000000"):
            run(counting, range(5, 31), trials=MAX_TRIALS)
        # A mine list is read no further than the cap (this one is a trillion long).
        with pytest.raises(ValueError,
                           match=r"mines_list must hold at most 10000 entries .*; got 999999999999"):
            run(counting, range(1, 10**12), trials=1)
        with pytest.raises(InvalidRulesError, match="rows must be at most 1000; got 100000"):
            run(counting, [5], rows=100_000, cols=100_000, trials=1)
        with pytest.raises(ValueError,
                           match=r"n_jobs must be a non-zero integer from -\d+ to \d+ .*; got 100000"):
            run(counting, [5], trials=1, n_jobs=100_000)
    with pytest.raises(ValueError, match=r"at most 10000 rows \(solvers x configurations\); got 2 x 5001"):
        evaluate({"a": counting, "b": counting}, boards=[(100, 100, 5)] * 5001, trials=1)
    assert calls == []


def test_n_jobs_limit_follows_the_cpus():
    from joblib import cpu_count

    from nnsweeper.parallel import JOBS_PER_CPU, check_n_jobs, max_jobs

    assert max_jobs() == JOBS_PER_CPU * cpu_count()
    assert check_n_jobs(max_jobs()) == max_jobs()
    assert check_n_jobs(-cpu_count()) == -cpu_count()
    assert check_n_jobs(None, allow_none=True) is None
    for bad in (0, max_jobs() + 1, -cpu_count() - 1, None, 2.0, True):
        with pytest.raises(ValueError, match="n_jobs must be a non-zero integer"):
            check_n_jobs(bad)


def test_start_outside_a_board_is_refused_before_any_game():
    from nnsweeper.solvers import get_solver

    with pytest.raises(ValueError, match=r"start row must be an integer in \[0, 5\) for a 5x5 board; got 7"):
        evaluate({"csp": get_solver("csp", start=(7, 0))}, [3], rows=5, cols=5, trials=2)
    with pytest.raises(ValueError, match=r"start col must be an integer in \[0, 9\)"):
        evaluate({"sp": get_solver("single_point", start=(0, 9))}, boards=[(10, 10, 5), "beginner"], trials=2)


def test_game_results_hold_one_array_per_field():
    from nnsweeper.evaluation.games import Board, play_games

    seeds = game_seeds(3, 10)
    board = Board("5x5", 5, 5, 3)
    whole = play_games(random_clicker, board, "safe", seeds, False)
    parts = [play_games(random_clicker, board, "safe", seeds[a:b], False)
             for a, b in ((0, 4), (4, 4), (4, 10))]
    joined = GameResults.concatenate(parts)
    filled = GameResults.empty(10)
    for a, part in zip((0, 4, 4), parts, strict=True):
        filled.put(a, part)
    for name, dtype in GameResults.FIELDS:
        assert getattr(whole, name).dtype == dtype and getattr(whole, name).shape == (10,)
        if name != "seconds":
            np.testing.assert_array_equal(getattr(joined, name), getattr(whole, name))
        np.testing.assert_array_equal(getattr(filled, name), getattr(joined, name))
    np.testing.assert_array_equal(
        whole.won,
        [random_clicker(MinesweeperEnv(rows=5, cols=5, mines=3, seed=int(s)), np.random.default_rng(s))
         for s in seeds],
    )
    assert len(GameResults.concatenate([])) == 0 and repr(whole).startswith("GameResults(10 games")
    with pytest.raises(ValueError, match="a part of 10 games from game 1 must end within the 10 games"):
        filled.put(1, whole)
    with pytest.raises(ValueError, match="won holds 10, guesses holds 9"):
        GameResults(whole.won, whole.guesses[:9], *(getattr(whole, n) for n, _ in GameResults.FIELDS[2:]))
    with pytest.raises(ValueError,
                       match="model_calls must be a 1-D numpy array of int32; got an array of int64"):
        GameResults(*(getattr(whole, n) for n, _ in GameResults.FIELDS[:4]),
                    whole.model_calls.astype(np.int64), whole.model_picks, whole.model_safe)
    with pytest.raises(TypeError, match="parts must be GameResults; got list"):
        GameResults.concatenate([whole, [1]])


def test_config_key_names_the_configuration():
    table = evaluate({"even": wins_on_even_seed}, boards=["beginner", (5, 6, 4)], trials=4,
                     first_click="zero")
    assert [config_key(r) for r in table] == [("beginner", 9, 9, 10, "zero"), ("5x6", 5, 6, 4, "zero")]


# ------------------------------------------------------------- set-up apart from games
class NeedsSetUp:
    """A solver (wins on even seeds) whose set-up, reported as 2.5 s, is done once per instance."""

    def __init__(self):
        self.prepared = 0

    def prepare(self):
        self.prepared += 1
        return 2.5 if self.prepared == 1 else 0.0

    def __call__(self, env, rng):
        assert self.prepared, "played before its set-up"
        return env.seed % 2 == 0

    def __repr__(self):
        return "NeedsSetUp()"


def test_set_up_is_done_before_the_games_and_reported_apart():
    from nnsweeper.evaluation.games import Board, play_games, prepare_solver

    solver = NeedsSetUp()
    seeds = game_seeds(0, 6)
    first = play_games(solver, Board("4x4", 4, 4, 2), "safe", seeds, False)
    again = play_games(solver, Board("4x4", 4, 4, 2), "safe", seeds, False)
    assert (first.setup_seconds, again.setup_seconds) == (2.5, 0.0)
    np.testing.assert_array_equal(first.won, seeds % 2 == 0)
    assert GameResults.concatenate([first, again, first]).setup_seconds == 5.0
    assert prepare_solver(random_clicker) == 0.0  # nothing to set up
    assert prepare_solver(type("Quiet", (), {"prepare": lambda self: None})()) >= 0.0  # timed when not said
    with pytest.raises(ValueError, match="setup_seconds must be a non-negative number; got -1"):
        GameResults(*(getattr(first, n) for n, _ in GameResults.FIELDS), setup_seconds=-1)

    table = evaluate({"even": NeedsSetUp(), "random": random_clicker}, [2, 3], rows=4, cols=4, trials=6)
    assert table.column("setup_seconds").tolist() == [2.5, 0.0, 0.0, 0.0]
    assert table.setup_by_solver() == {"even": 2.5}
    assert str(table).splitlines()[-1] == (
        "model load, not in ms per game (summed over the processes that played; torch's import counted "
        "with each process's first model): even 2.5 s")


def test_worker_set_up_is_kept_for_the_first_games_and_errors_left_to_them():
    from nnsweeper.evaluation import games

    class Broken(NeedsSetUp):
        def prepare(self):
            raise RuntimeError("no model here")

    setup = games.SolverSetup([random_clicker, NeedsSetUp(), Broken()])
    assert len(setup.solvers) == 2 and setup  # the plain function needs none
    assert setup == games.SolverSetup([NeedsSetUp(), Broken()]) != games.SolverSetup([NeedsSetUp()])
    assert not games.SolverSetup([random_clicker])
    try:
        setup()  # as a worker does when it starts: Broken's error is not raised here
        assert games._SET_UP_AT_START == {games._setup_key(setup.solvers[0]): 2.5}
        # Another copy of the solver (as a task brings it) reports the worker's set-up once.
        assert games.prepare_solver(NeedsSetUp()) == 2.5 + 2.5
        assert games.prepare_solver(NeedsSetUp()) == 2.5 and not games._SET_UP_AT_START
    finally:
        games._SET_UP_AT_START.clear()
    with pytest.raises(RuntimeError, match="no model here"):
        games.play_games(Broken(), games.Board("4x4", 4, 4, 2), "safe", game_seeds(0, 2), False)


def test_tables_without_set_up_times_still_load_and_print(tmp_path):
    table = evaluate({"even": wins_on_even_seed}, [2], rows=4, cols=4, trials=4)
    assert table.column("setup_seconds").tolist() == [0.0] and table.setup_by_solver() == {}
    assert len(str(table).splitlines()) == 2  # no set-up line when nothing was set up
    table.to_json(tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text())
    del doc["rows"][0]["setup_seconds"]
    doc["columns"].remove("setup_seconds")
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = EvalTable.from_json(tmp_path / "old.json")
    assert math.isnan(old.rows[0]["setup_seconds"]) and old.setup_by_solver() == {}
    assert len(str(old).splitlines()) == 2
    old.to_csv(tmp_path / "old.csv")
    header, row = (tmp_path / "old.csv").read_text().splitlines()
    i = header.split(",").index("setup_seconds")
    assert row.split(",")[i] == ""  # NaN: not recorded


def test_merge_adds_solvers_played_on_the_same_games():
    together = evaluate(["csp", "single_point"], [3, 6], rows=5, cols=5, trials=20)
    one = evaluate(["csp"], [3, 6], rows=5, cols=5, trials=20)
    other = evaluate(["single_point"], [3, 6], rows=5, cols=5, trials=20)
    merged = one.merge(other)
    assert merged.solvers == ["csp", "single_point"]
    assert set(merged.metadata["solvers"]) == {"csp", "single_point"}
    assert merged.metadata["added"][0]["solvers"] == ["single_point"]
    for a, b in zip(merged.rows, together.rows, strict=True):
        assert (a["solver"], a["mines"], a["wins"], a["outcomes"]) == (b["solver"], b["mines"], b["wins"],
                                                                        b["outcomes"])
    def gaps(t):
        return [(r["mines"], r["difference"]) for r in t.difference("single_point", reference="csp")]

    assert gaps(merged) == gaps(together)
    with pytest.raises(ValueError, match="solver 'csp' is in both tables"):
        one.merge(one)
    with pytest.raises(ValueError, match="not the same games"):
        one.merge(evaluate(["single_point"], [3, 6], rows=5, cols=5, trials=20, base_seed=1))
    with pytest.raises(ValueError, match="which this table lacks"):
        one.merge(evaluate(["single_point"], [4], rows=5, cols=5, trials=20))


def test_replace_puts_a_solver_played_again_in_place_of_its_rows():
    table = evaluate(["csp", "single_point"], [3, 6], rows=5, cols=5, trials=20)
    # single_point played again on the same games (starting in the corner: other moves, other outcomes).
    again = evaluate({"single_point": SinglePointSolver(start="corner")}, [3, 6], rows=5, cols=5, trials=20)
    assert again.solvers == ["single_point"]
    replaced = table.replace(again)
    assert [(r["solver"], r["mines"]) for r in replaced] == [(r["solver"], r["mines"]) for r in table]
    for r, new in zip(replaced.select(solver="single_point"), again, strict=True):
        assert r is new or r == new
    assert replaced.select(solver="csp") == table.select(solver="csp")
    assert replaced.metadata["solvers"]["single_point"] == again.metadata["solvers"]["single_point"]
    assert replaced.metadata["replaced"][0]["solvers"] == ["single_point"]
    # Paired with csp as if one run had played both.
    both = {"csp": CSPSolver(), "single_point": SinglePointSolver(start="corner")}
    together = evaluate(both, [3, 6], rows=5, cols=5, trials=20)
    def gaps(t):
        return [(r["mines"], r["difference"], r["ci_low"], r["paired"]) for r in t.difference("single_point")]

    assert gaps(replaced) == gaps(together) and all(g[3] for g in gaps(replaced))
    with pytest.raises(ValueError, match="solver 'search' is not in this table"):
        table.replace(evaluate(["search"], [3, 6], rows=5, cols=5, trials=20))
    with pytest.raises(ValueError, match="not the same games"):
        table.replace(evaluate(["single_point"], [3, 6], rows=5, cols=5, trials=20, base_seed=1))
    for mines, rules in (([3], {}), ([3, 6], {"first_click": "zero"})):
        with pytest.raises(ValueError, match="needs the same configurations"):
            table.replace(evaluate(["single_point"], mines, rows=5, cols=5, trials=20, **rules))


def test_renamed_keeps_a_solvers_rows_under_another_name_to_pair_with_it_played_again():
    table = evaluate(["csp", "single_point"], [3, 6], rows=5, cols=5, trials=20)
    kept = table.renamed("single_point", "single_point-1")
    assert kept.solvers == ["csp", "single_point-1"] and table.solvers == ["csp", "single_point"]
    assert [r["outcomes"] for r in kept.select(solver="single_point-1")] == \
        [r["outcomes"] for r in table.select(solver="single_point")]
    assert kept.metadata["solvers"]["single_point-1"] == table.metadata["solvers"]["single_point"]
    assert "single_point" not in kept.metadata["solvers"]
    again = evaluate({"single_point": SinglePointSolver(start="corner")}, [3, 6], rows=5, cols=5, trials=20)
    both = kept.merge(again)
    gaps = both.difference("single_point", "single_point-1")
    direct = evaluate({"old": SinglePointSolver(), "single_point": SinglePointSolver(start="corner")},
                      [3, 6], rows=5, cols=5, trials=20).difference("single_point", "old")
    assert [(g["difference"], g["ci_low"], g["paired"]) for g in gaps] == \
        [(g["difference"], g["ci_low"], g["paired"]) for g in direct]
    with pytest.raises(ValueError, match="old must be one of csp, single_point; got 'search'"):
        table.renamed("search", "search-1")
    with pytest.raises(ValueError, match="'csp' is already a solver of this table"):
        table.renamed("single_point", "csp")
    with pytest.raises(ValueError, match="'' is not a solver name"):
        table.renamed("single_point", "")


def test_replace_keeping_the_earlier_rows_pairs_a_changed_solver_with_what_it_was():
    table = evaluate(["csp", "single_point"], [3, 6], rows=5, cols=5, trials=20)
    again = evaluate({"single_point": SinglePointSolver(start="corner")}, [3, 6], rows=5, cols=5, trials=20)
    both = table.replace(again, keep_as="single_point-1")
    assert both.solvers == ["csp", "single_point-1", "single_point"]
    assert [r["outcomes"] for r in both.select(solver="single_point-1")] == \
        [r["outcomes"] for r in table.select(solver="single_point")]
    assert [r["outcomes"] for r in both.select(solver="single_point")] == [r["outcomes"] for r in again]
    assert both.metadata["added"][-1]["kept_as"] == {"single_point": "single_point-1"}
    assert "replaced" not in both.metadata and "added" not in table.metadata
    direct = evaluate({"old": SinglePointSolver(), "single_point": SinglePointSolver(start="corner")},
                      [3, 6], rows=5, cols=5, trials=20).difference("single_point", "old")
    def gaps(rows):
        return [(g["difference"], g["ci_low"], g["paired"]) for g in rows]

    assert gaps(both.difference("single_point", "single_point-1")) == gaps(direct)
    with pytest.raises(ValueError, match="'csp' is already a solver of this table"):
        table.replace(again, keep_as="csp")
    two = evaluate(["csp", "single_point"], [3, 6], rows=5, cols=5, trials=20, base_seed=0)
    with pytest.raises(ValueError, match="earlier rows of one solver; the new table plays 2"):
        table.replace(two, keep_as="old")
    with pytest.raises(ValueError, match="not the same games"):
        table.replace(evaluate(["single_point"], [3, 6], rows=5, cols=5, trials=20, base_seed=1), keep_as="x")


def test_the_progress_says_what_its_rates_are_and_paces_from_the_first_results():
    from nnsweeper.evaluation.runner import Tally, _time_left

    tally = Tally()
    assert str(tally) == ""
    tally.add("csp", 45, 50)
    assert str(tally).startswith("won so far, on the boards played yet: csp 90.00% [")
    # No pace before results have come in for a while (start-up excluded), then games left x pace.
    assert _time_left(1000, 0.0, 0) == "time left: measured once the first results are in"
    assert _time_left(1000, 10.0, 100) == "about 1 min 40 s left"
    assert _time_left(100_000, 10.0, 100) == "about 2 h 46 min left"
    assert _time_left(3, 10.0, 100) == "about 0 s left"
