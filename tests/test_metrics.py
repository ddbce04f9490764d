"""Scores of mine-probability predictions against the truth and the exact yardstick."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score

from nnsweeper.errors import NnsweeperError
from nnsweeper.metrics import (
    LOG_LOSS_EPS,
    PredictionAccumulator,
    PredictionError,
    PredictionSet,
    evaluate_predictions,
    format_metrics,
    metrics,
    reliability_curve,
    to_json,
)

ln = math.log
CLIPPED = -ln(1 - LOG_LOSS_EPS)  # log-loss of a right prediction of exactly 0 or 1

# Five frontier rows; the last one stands for three cells.
#            p_model p_exact mine weight
TINY = [(0.10, 0.0, 0, 1),
        (0.80, 1.0, 1, 1),
        (0.30, 0.2, 0, 2),
        (0.26, 0.5, 1, 1),
        (0.01, 0.0, 0, 3)]


def tiny():
    p_model, p_exact, mine, weight = (np.array(c, dtype=float) for c in zip(*TINY, strict=True))
    return PredictionSet(p_model, p_exact, mine, weight, frontier=True)


def same(a, b):
    """Equal dicts of scores, NaN equal to NaN."""
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], float) and math.isnan(a[key]):
            assert isinstance(b[key], float) and math.isnan(b[key]), key
        else:
            assert a[key] == pytest.approx(b[key], rel=1e-12, abs=1e-15), key


def test_tiny_set_by_hand():
    m = metrics(tiny(), bins=4)
    assert m["cells"] == 8 and m["rows"] == 5
    ll = -(ln(0.9) + ln(0.8) + 2 * ln(0.7) + ln(0.26) + 3 * ln(0.99)) / 8
    ll_exact = (CLIPPED + CLIPPED + 2 * -ln(0.8) + -ln(0.5) + 3 * CLIPPED) / 8
    assert m["log_loss"] == pytest.approx(ll)
    assert m["log_loss_exact"] == pytest.approx(ll_exact)
    assert m["log_loss_ratio"] == pytest.approx(ll / ll_exact)
    assert m["mae_exact"] == pytest.approx((0.1 + 0.2 + 2 * 0.1 + 0.24 + 3 * 0.01) / 8)
    assert m["brier"] == pytest.approx((0.01 + 0.04 + 2 * 0.09 + 0.74**2 + 3 * 0.0001) / 8)
    assert m["brier_exact"] == pytest.approx((0 + 0 + 2 * 0.04 + 0.25 + 0) / 8)
    # Mines 0.8 (w1) and 0.26 (w1) against safe 0.1 (w1), 0.3 (w2), 0.01 (w3):
    # 0.8 outranks all 6 safe cells, 0.26 outranks 4 of them.
    assert m["roc_auc"] == pytest.approx((6 + 4) / (2 * 6))
    assert m["roc_auc_exact"] == 1.0
    # Bins of width 1/4. Model: bin 0 holds 0.1 and 3 x 0.01 (mean 0.0325, no mine),
    # bin 1 holds 2 x 0.3 and 0.26 (mean 0.86/3, one mine in 3), bin 3 holds 0.8 (a mine).
    assert m["ece"] == pytest.approx((4 * 0.0325 + 3 * abs(0.86 / 3 - 1 / 3) + 1 * 0.2) / 8)
    # Exact: bin 0 holds 0, 2 x 0.2, 3 x 0 (no mine), bin 2 holds 0.5 (a mine), bin 3 holds 1.
    assert m["ece_exact"] == pytest.approx((6 * (0.4 / 6) + 1 * 0.5 + 0) / 8)
    # Proven safe: 0.1 (w1) and 0.01 (w3), so 3 of 4 cells below 0.02; proven mine: 0.8.
    assert m["safe_cells"] == 4 and m["safe_below_threshold"] == 0.75
    assert m["mine_cells"] == 1 and m["mine_above_threshold"] == 0.0
    assert metrics(tiny(), safe_threshold=0.2)["safe_below_threshold"] == 1.0
    assert metrics(tiny(), safe_threshold=0.25)["mine_above_threshold"] == 1.0
    assert (m["safe_threshold"], m["bins"]) == (0.02, 4)
    assert all(type(v) in (int, float) for v in m.values())


def test_fractional_row_equals_binary_rows():
    # A group of 4 interior cells at 0.3 with one mine, next to two single cells.
    grouped = PredictionSet([0.3, 0.7, 0.1], [0.25, 0.9, 0.0], [0.25, 1, 0], [4, 1, 2])
    binary = PredictionSet([0.3] * 4 + [0.7, 0.1], [0.25] * 4 + [0.9, 0.0], [1, 0, 0, 0, 1, 0],
                           [1, 1, 1, 1, 1, 2])
    a, b = metrics(grouped), metrics(binary)
    for key in ("cells", "log_loss", "log_loss_exact", "log_loss_ratio", "mae_exact", "roc_auc",
                "roc_auc_exact", "brier", "brier_exact", "ece", "ece_exact"):
        assert a[key] == pytest.approx(b[key], rel=1e-12), key
    assert a["rows"] == 3 and b["rows"] == 6

    p_model, p_exact, y, w = grouped.expanded()
    np.testing.assert_array_equal(p_model, [0.3, 0.3, 0.7, 0.1])
    np.testing.assert_array_equal(p_exact, [0.25, 0.25, 0.9, 0.0])
    np.testing.assert_array_equal(y, [1, 0, 1, 0])
    np.testing.assert_array_equal(w, [1, 3, 1, 2])

    curve_a, curve_b = reliability_curve(grouped, bins=5), reliability_curve(binary, bins=5)
    for key in curve_a:
        np.testing.assert_allclose(curve_a[key], curve_b[key], equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 400), st.sampled_from([3, 11, 0]))
def test_agrees_with_sklearn_with_ties_fractions_zero_weights_and_extremes(seed, n, levels):
    # Probabilities from a few levels (ties), 0 and 1 among them (clipped for the log-loss),
    # fractional truths (each split into a mine and a safe row), some zero weights.
    rng = np.random.default_rng(seed)
    if levels:
        p_model = rng.choice(np.linspace(0, 1, levels), n)
    else:
        p_model = rng.uniform(0, 1, n)
    p_exact = rng.choice([0.0, 0.25, 0.5, 1.0, rng.uniform()], n)
    truth = np.where(rng.uniform(size=n) < 0.3, rng.uniform(size=n), rng.integers(0, 2, n))
    w = rng.choice([0.0, 1.0, 2.5, 7.0], n)
    preds = PredictionSet(p_model, p_exact, truth, w)
    m = metrics(preds)
    pm, pe, y, ww = preds.expanded()
    if ww.sum() <= 0:
        assert math.isnan(m["log_loss"]) and math.isnan(m["brier"])
        return

    def clip(p):
        return np.clip(p, LOG_LOSS_EPS, 1 - LOG_LOSS_EPS)

    assert m["log_loss"] == pytest.approx(log_loss(y, clip(pm), sample_weight=ww, labels=[0, 1]), rel=1e-12)
    assert m["log_loss_exact"] == pytest.approx(log_loss(y, clip(pe), sample_weight=ww, labels=[0, 1]),
                                                rel=1e-12)
    assert m["brier"] == pytest.approx(brier_score_loss(y, pm, sample_weight=ww), rel=1e-12, abs=1e-15)
    if ww[y == 1].sum() > 0 and ww[y == 0].sum() > 0:
        assert m["roc_auc"] == pytest.approx(roc_auc_score(y, pm, sample_weight=ww), rel=1e-12)
        assert m["roc_auc_exact"] == pytest.approx(roc_auc_score(y, pe, sample_weight=ww), rel=1e-12)
    else:
        assert math.isnan(m["roc_auc"])


def test_agrees_with_sklearn_on_random_binary_data():
    rng = np.random.default_rng(7)
    n = 300
    p_model = rng.uniform(0.01, 0.99, n)
    p_exact = rng.uniform(0.01, 0.99, n)
    y = (rng.uniform(size=n) < p_exact).astype(float)
    w = rng.integers(1, 6, n).astype(float)
    m = metrics(PredictionSet(p_model, p_exact, y, w))
    assert m["log_loss"] == pytest.approx(log_loss(y, p_model, sample_weight=w))
    assert m["log_loss_exact"] == pytest.approx(log_loss(y, p_exact, sample_weight=w))
    assert m["brier"] == pytest.approx(brier_score_loss(y, p_model, sample_weight=w))
    assert m["brier_exact"] == pytest.approx(brier_score_loss(y, p_exact, sample_weight=w))
    assert m["roc_auc"] == pytest.approx(roc_auc_score(y, p_model, sample_weight=w))
    assert m["roc_auc_exact"] == pytest.approx(roc_auc_score(y, p_exact, sample_weight=w))
    assert m["mae_exact"] == pytest.approx(np.average(np.abs(p_model - p_exact), weights=w))
    # ECE by the textbook loop.
    ece = 0.0
    for k in range(15):
        inside = (p_model >= k / 15) & ((p_model < (k + 1) / 15) if k < 14 else (p_model <= 1))
        if inside.any():
            mean_p = np.average(p_model[inside], weights=w[inside])
            gap = abs(mean_p - np.average(y[inside], weights=w[inside]))
            ece += w[inside].sum() * gap
    assert m["ece"] == pytest.approx(ece / w.sum())


def test_exact_as_model_is_the_yardstick():
    p = np.array([0.0, 1.0, 0.2, 0.5, 0.0])
    m = metrics(PredictionSet(p, p, [0, 1, 0, 1, 0], [1, 2, 3, 1, 1]))
    assert m["log_loss_ratio"] == 1.0
    assert m["mae_exact"] == 0.0
    assert m["brier"] == m["brier_exact"] and m["ece"] == m["ece_exact"]
    assert m["safe_below_threshold"] == 1.0 and m["mine_above_threshold"] == 1.0


def test_undefined_scores_are_nan():
    m = metrics(PredictionSet.empty())
    assert m["cells"] == 0 and m["rows"] == 0
    for key in ("log_loss", "log_loss_ratio", "mae_exact", "roc_auc", "brier", "ece",
                "safe_below_threshold", "mine_above_threshold"):
        assert math.isnan(m[key]), key
    one_class = metrics(PredictionSet([0.2, 0.4], [0.1, 0.3], [0, 0]))
    assert math.isnan(one_class["roc_auc"]) and math.isnan(one_class["roc_auc_exact"])
    assert one_class["log_loss"] == pytest.approx(-(ln(0.8) + ln(0.6)) / 2)
    assert one_class["brier"] == pytest.approx((0.04 + 0.16) / 2)


def mixed():
    #                     frontier ...........  interior ........
    return PredictionSet([0.1, 0.9, 0.2, 0.6, 0.15, 0.15, 0.3],
                         [0.0, 1.0, 0.1, 0.7, 0.2, 0.2, 0.25],
                         [0, 1, 0, 1, 0.25, 0.5, 0.0],
                         [1, 1, 1, 1, 8, 4, 10],
                         [True, True, True, True, False, False, False])


def test_evaluate_splits_regions_and_groups():
    preds = mixed()
    by = np.array(["9x9-m10", "16x16-m40", "9x9-m10", "16x16-m40", "9x9-m10", "16x16-m40", "9x9-m10"])
    result = evaluate_predictions(preds, by=by)
    assert list(result) == ["frontier", "interior", "all", "by"]
    assert (result["frontier"]["rows"], result["frontier"]["cells"]) == (4, 4)
    assert (result["interior"]["rows"], result["interior"]["cells"]) == (3, 22)
    assert (result["all"]["rows"], result["all"]["cells"]) == (7, 26)
    same(result["frontier"], metrics(preds.select(True)))
    same(result["interior"], metrics(preds.select(False)))
    same(result["all"], metrics(preds))

    assert list(result["by"]) == ["9x9-m10", "16x16-m40"]  # order of first appearance
    small = result["by"]["9x9-m10"]
    assert (small["frontier"]["cells"], small["interior"]["cells"], small["all"]["cells"]) == (2, 18, 20)
    same(small["all"], metrics(preds.subset(by == "9x9-m10")))
    same(result["by"]["16x16-m40"]["interior"], metrics(preds.subset(by == "16x16-m40").select(False)))
    assert math.isnan(result["interior"]["safe_below_threshold"])  # no proven-safe interior cell

    no_groups = evaluate_predictions(preds)
    assert "by" not in no_groups
    groups_alone = evaluate_predictions(preds, by=by, overall=False)
    assert list(groups_alone) == ["by"] and groups_alone["by"].keys() == result["by"].keys()
    same(groups_alone["by"]["9x9-m10"]["all"], small["all"])
    with pytest.raises(PredictionError, match="overall=False scores the groups alone: give by"):
        evaluate_predictions(preds, overall=False)
    with pytest.raises(PredictionError, match=r"one label per row, shape \(7,\); got shape \(2,\)"):
        evaluate_predictions(preds, by=["a", "b"])


def test_json_round_trip(tmp_path):
    result = evaluate_predictions(mixed(), by=np.array([1, 2, 1, 2, 1, 2, 1]))
    text = to_json(result, tmp_path / "out" / "metrics.json")
    assert (tmp_path / "out" / "metrics.json").read_text(encoding="utf-8") == text + "\n"
    assert "NaN" not in text
    back = json.loads(text)
    assert back["interior"]["safe_below_threshold"] is None
    assert back["all"]["log_loss_ratio"] == result["all"]["log_loss_ratio"]
    assert list(back["by"]) == ["1", "2"]  # JSON keys are strings
    assert back["by"]["2"]["all"]["cells"] == result["by"][2]["all"]["cells"]
    curve = json.loads(to_json(reliability_curve(mixed(), bins=3)))
    assert curve["weight"] == [24.0, 1.0, 1.0] and len(curve["edges"]) == 4
    assert format_metrics(back) == format_metrics(result)


def test_format_metrics_shows_the_numbers():
    result = evaluate_predictions(mixed(), by=["a", "a", "b", "b", "a", "b", "a"])
    text = format_metrics(result)
    lines = text.splitlines()
    assert lines[0].split() == ["region", "cells", "LL", "model", "LL", "exact", "LL", "ratio", "MAE",
                                "AUC", "model", "AUC", "exact", "Brier", "ECE", "safe<0.02", "mine>0.98"]
    for region, line in zip(("frontier", "interior", "all"), lines[1:4], strict=True):
        m = result[region]
        assert line.split()[0] == region
        assert f"{m['cells']:.0f}" in line.split()
        assert f"{m['log_loss']:.4f}" in line and f"{m['log_loss_ratio']:.3f}" in line
        assert f"{m['mae_exact']:.4f}" in line and f"{m['brier']:.4f}" in line
    assert lines[2].split()[-2] == "-"  # interior: no proven-safe cells
    for region, line in zip(("frontier", "interior", "all"), lines[1:4], strict=True):
        share = result[region]["mine_above_threshold"]
        assert line.split()[-1] == ("-" if share != share else f"{share:.3f}")
    assert "a:" in lines and "b:" in lines
    assert len({len(line) for line in lines[:4]}) == 1  # fixed width
    with pytest.raises(PredictionError, match="result must be a dict with frontier/interior/all"):
        format_metrics({"cells": 3})
    # Kinds: one line per label, the frontier figures of each.
    result["kinds"] = {"size": result["by"], "a_long_field_name": {"x": result["by"]["a"]}}
    kinds = format_metrics(result).split("frontier cells by kind:\n")[1].splitlines()
    assert [line.split()[0] for line in kinds] == ["size", "a", "b", "a_long_field_name", "x"]
    assert kinds[1].split()[1:] == lines[lines.index("a:") + 2].split()[1:]  # a's frontier line
    assert len({len(line) for line in kinds}) == 1


def test_reliability_curve_by_hand():
    curve = reliability_curve(tiny(), bins=4)
    np.testing.assert_allclose(curve["edges"], [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_allclose(curve["weight"], [4, 3, 0, 1])
    np.testing.assert_allclose(curve["mean_predicted"], [0.0325, 0.86 / 3, np.nan, 0.8], equal_nan=True)
    np.testing.assert_allclose(curve["observed"], [0, 1 / 3, np.nan, 1], equal_nan=True)
    np.testing.assert_allclose(curve["weight_exact"], [6, 0, 1, 1])
    np.testing.assert_allclose(curve["mean_predicted_exact"], [0.4 / 6, np.nan, 0.5, 1], equal_nan=True)
    np.testing.assert_allclose(curve["observed_exact"], [0, np.nan, 1, 1], equal_nan=True)


def test_concat_and_select():
    a, b = tiny(), mixed()
    both = PredictionSet.concat([a, b])
    assert len(both) == 12 and both.cells == a.cells + b.cells
    np.testing.assert_array_equal(both.p_model[5:], b.p_model)
    assert len(both.select(False)) == 3 and len(both.select(True)) == 9 and both.select(None) is both
    assert len(PredictionSet.concat([])) == 0
    with pytest.raises(ValueError):
        both.p_model[0] = 0.5  # read-only
    with pytest.raises(PredictionError, match="frontier must be True, False or None; got 'yes'"):
        both.select("yes")
    with pytest.raises(PredictionError, match=r"sets\[1\] must be a PredictionSet; got list"):
        PredictionSet.concat([a, [1, 2]])


def test_accumulator_takes_torch_batches():
    torch = pytest.importorskip("torch")
    acc = PredictionAccumulator()
    logits = torch.tensor([[0.0, 2.0], [-3.0, 1.0]], requires_grad=True)
    prob = torch.sigmoid(logits)  # carries a graph: must be detached
    exact = torch.tensor([[0.5, 1.0], [0.0, 0.75]])
    mine = torch.tensor([[0, 1], [0, 1]], dtype=torch.uint8)
    covered = torch.tensor([[True, True], [True, False]])
    frontier = torch.tensor([[True, False], [True, True]])
    acc.add(prob, exact, mine, frontier=frontier, mask=covered)
    acc.add(torch.tensor([0.25], dtype=torch.bfloat16), np.array([0.3]), [0.5], weight=[6], frontier=False)
    assert len(acc) == 4
    preds = acc.to_set()
    np.testing.assert_allclose(preds.p_model, [0.5, 1 / (1 + math.exp(-2)), 1 / (1 + math.exp(3)), 0.25],
                               rtol=1e-6)
    np.testing.assert_array_equal(preds.p_exact, [0.5, 1.0, 0.0, 0.3])
    np.testing.assert_array_equal(preds.mine, [0, 1, 0, 0.5])
    np.testing.assert_array_equal(preds.weight, [1, 1, 1, 6])
    np.testing.assert_array_equal(preds.frontier, [True, False, True, False])
    assert preds.p_model.dtype == np.float64
    acc.clear()
    assert len(acc) == 0 and len(acc.to_set()) == 0
    with pytest.raises(PredictionError, match=r"mask must have the shape of p_model \(2, 2\); got \(4,\)"):
        acc.add(prob, exact, mine, mask=torch.ones(4, dtype=torch.bool))


def test_bad_input_names_the_problem():
    with pytest.raises(PredictionError, match="equal lengths; got p_model 3, p_exact 2, mine 3"):
        PredictionSet([0.1, 0.2, 0.3], [0.1, 0.2], [0, 1, 0])
    with pytest.raises(PredictionError, match=r"p_model must be in \[0, 1\]; got 1\.3 at index 1"):
        PredictionSet([0.1, 1.3], [0.1, 0.2], [0, 1])
    with pytest.raises(PredictionError, match=r"p_exact must be in \[0, 1\]; got -0\.1 at index 0"):
        PredictionSet([0.1, 0.3], [-0.1, 0.2], [0, 1])
    with pytest.raises(PredictionError, match=r"mine must be in \[0, 1\]; got 2\.0 at index 1"):
        PredictionSet([0.1, 0.3], [0.1, 0.2], [0, 2])
    with pytest.raises(PredictionError, match=r"weight must be at least 0; got -1\.0 at index 0"):
        PredictionSet([0.1, 0.3], [0.1, 0.2], [0, 1], [-1, 1])
    with pytest.raises(PredictionError, match="p_model must be finite; got nan at index 0"):
        PredictionSet([np.nan], [0.1], [0])
    with pytest.raises(PredictionError, match=r"p_model must be one-dimensional; got shape \(1, 2\)"):
        PredictionSet([[0.1, 0.2]], [0.1, 0.2], [0, 1])
    with pytest.raises(PredictionError, match=r"frontier must hold booleans \(or 0/1\); got 2 at index 0"):
        PredictionSet([0.1], [0.1], [0], frontier=[2])
    with pytest.raises(PredictionError, match="mine must hold numbers; got dtype <U1"):
        PredictionSet([0.1], [0.1], ["x"])
    with pytest.raises(PredictionError, match=r"safe_threshold must be a number in \(0, 1\); got 0"):
        metrics(tiny(), safe_threshold=0)
    with pytest.raises(PredictionError, match="bins must be an integer of at least 1; got 0"):
        metrics(tiny(), bins=0)
    with pytest.raises(PredictionError, match="preds must be a PredictionSet; got list"):
        metrics([0.1, 0.2])
    assert issubclass(PredictionError, NnsweeperError) and issubclass(PredictionError, ValueError)
