"""Decision figures of a model: lowest-risk picks, regret, overconfidence, error on the safest cells."""

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnsweeper.decisions import (
    FLAG_ABOVE,
    OPEN_BELOW,
    DecisionAccumulator,
    decision_metrics,
    format_decisions,
)


def rows():
    """Three positions: a guess position with grid-like interior rows, one with a proven-safe
    cell, and a guess position with a graph-like pooled interior row."""
    # position 0: frontier x3, interior x2; 1: proven safe; 2: frontier x2, interior (10 cells)
    p_model = [0.25, 0.15, 0.12, 0.5, 0.3, 0.4, 0.2, 0.001, 0.9, 0.3]
    p_exact = [0.3, 0.1, 0.2, 0.4, 0.4, 0.0, 0.5, 0.5, 1.0, 0.25]
    weight = [1, 1, 1, 1, 1, 1, 1, 1, 1, 10]
    frontier = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0]
    position = [0, 0, 0, 0, 0, 1, 1, 2, 2, 2]
    return p_model, p_exact, weight, frontier, position


def test_decision_figures_against_hand_computed_values():
    acc = DecisionAccumulator()
    acc.add(*rows())
    r = decision_metrics(acc)
    assert r["all_positions"] == 3 and r["positions"] == 2
    # Position 0 picks the cell rated 0.12 (exact 0.2; least 0.1): regret 0.1. Position 2 picks the
    # cell rated 0.001 (exact 0.5; least 0.25, the pooled interior): regret 0.25, and that cell is
    # overconfident (below OPEN_BELOW, unproven).
    assert r["lowest_risk"] == 0.0
    assert r["regret_mean"] == pytest.approx(0.175)
    assert r["regret_p90"] == pytest.approx(0.1 + 0.9 * 0.15)
    assert r["overconfident"] == 0.5
    # The safest candidates (mines left out): position 0: 0.1, 0.2, 0.3 and the interior 0.4 (model
    # 0.4, the mean of 0.5 and 0.3): errors 0.05, 0.08, 0.05, 0; position 2: 0.25 and 0.5.
    mae0, bias0 = (0.05 + 0.08 + 0.05 + 0) / 4, (0.05 - 0.08 - 0.05 + 0) / 4
    mae2, bias2 = (0.05 + 0.499) / 2, (0.05 - 0.499) / 2
    assert r["safest5_mae"] == pytest.approx((mae0 + mae2) / 2)
    assert r["safest5_bias"] == pytest.approx((bias0 + bias2) / 2)
    assert r["phases"]["<=120"]["positions"] == 2 and r["phases"][">400"]["positions"] == 0
    assert math.isnan(r["phases"][">400"]["lowest_risk"])
    text = format_decisions(r)
    assert "decisions on 2 guess positions (of 3" in text and "0.00%" in text


def test_positions_split_over_batches_add_up():
    one = DecisionAccumulator()
    one.add(*rows())
    two = DecisionAccumulator()
    pm, pe, w, fr, g = (np.array(a) for a in rows())
    for keep in (g == 0, g != 0):
        two.add(pm[keep], pe[keep], w[keep], fr[keep], g[keep])
    a, b = decision_metrics(one), decision_metrics(two)
    for key in ("positions", "lowest_risk", "regret_mean", "overconfident", "safest5_mae", "safest5_bias"):
        assert a[key] == pytest.approx(b[key])


def test_the_thresholds_are_the_pure_solvers_defaults():
    from nnsweeper.solvers import NeuralSolver

    defaults = inspect.signature(NeuralSolver.__init__).parameters
    assert (OPEN_BELOW, FLAG_ABOVE) == (defaults["open_below"].default, defaults["flag_above"].default)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(0.01, 0.99), min_size=1, max_size=12), min_size=1, max_size=6),
       st.integers(0, 2**31 - 1))
def test_the_exact_probabilities_as_a_model_make_no_wrong_decision(positions, seed):
    rng = np.random.default_rng(seed)
    pe = np.concatenate([np.round(p, 3) for p in positions])
    g = np.repeat(np.arange(len(positions)), [len(p) for p in positions])
    fr = rng.random(len(pe)) < 0.8
    # Interior rows of a position share one exact probability.
    for k in range(len(positions)):
        inner = (g == k) & ~fr
        pe[inner] = pe[inner][0] if inner.any() else 0
    acc = DecisionAccumulator()
    acc.add(pe, pe, np.ones(len(pe)), fr, g)
    r = decision_metrics(acc)
    assert r["positions"] == len(positions)
    assert r["lowest_risk"] == 1.0 and r["regret_mean"] == 0.0 and r["overconfident"] == 0.0
    assert r["safest5_mae"] == pytest.approx(0.0, abs=1e-12)
    # A model that rates every cell one level off in the same order also picks right, with bias.
    acc = DecisionAccumulator()
    acc.add(pe * 0.5, pe, np.ones(len(pe)), fr, g)
    assert decision_metrics(acc)["lowest_risk"] == 1.0
    assert decision_metrics(acc)["safest5_bias"] < 0


def test_rows_of_other_lengths_are_refused():
    with pytest.raises(ValueError, match="one entry per row; got 2, 1, 2, 2 and 2"):
        DecisionAccumulator().add([0.1, 0.2], [0.1], [1, 1], [1, 1], [0, 0])
