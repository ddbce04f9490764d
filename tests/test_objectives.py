"""Objectives aimed at the decision: hand-computed values, directions of the gradient, config checks."""

import math

import pytest
import torch

from nnsweeper.training.objectives import calibration_penalty, decision_loss
from nnsweeper.training_config import TrainingError, check_config


def logit(p):
    return math.log(p / (1 - p))


def outputs(p_model, p_exact, graph, weight=None):
    z = torch.tensor([logit(p) for p in p_model], dtype=torch.float32, requires_grad=True)
    return {"logit": z, "prob": torch.tensor(p_exact), "graph": torch.tensor(graph),
            "weight": torch.tensor(weight or [1.0] * len(p_model))}


def soft(ps, t):
    e = [math.exp(-p / t) for p in ps]
    return [x / sum(e) for x in e]


def test_the_risk_of_a_soft_choice_against_hand_computed_values():
    # Position 0: the model rates 0.10 and 0.12 (exact 0.2 and 0.1); position 1: one cell.
    out = outputs([0.10, 0.12, 0.3], [0.2, 0.1, 0.3], [0, 0, 1])
    q = soft([0.10, 0.12], 0.02)
    expected = (q[0] * (0.2 - 0.1) + q[1] * 0.0 + 0.0) / 2
    assert float(decision_loss(out, "risk", 0.02).detach()) == pytest.approx(expected, rel=1e-5)
    listwise = (-math.log(q[1]) + 0.0) / 2
    assert float(decision_loss(out, "listwise", 0.02).detach()) == pytest.approx(listwise, rel=1e-5)
    # Its gradient raises the risky cell's logit and lowers the safer one's.
    decision_loss(out, "risk", 0.02).backward()
    assert out["logit"].grad[0] < 0 < out["logit"].grad[1] and out["logit"].grad[2] == 0


def test_a_right_choice_costs_nothing_at_a_low_temperature():
    out = outputs([0.05, 0.30, 0.5], [0.04, 0.2, 0.6], [0, 0, 0])
    assert float(decision_loss(out, "risk", 0.001).detach()) == pytest.approx(0.0, abs=1e-9)
    assert float(decision_loss(out, "listwise", 0.001).detach()) == pytest.approx(0.0, abs=1e-6)


def test_the_calibration_penalty_against_hand_computed_values():
    # Unproven 0.05 rated 0.001: below the band by logit(0.01) - logit(0.001); unproven 0.005 rated
    # 0.004: below the band widened to 0.005 by logit(0.005) - logit(0.004); proven cells and cells
    # inside the band: nothing. The weights (1, 1, 1, 1, 2) sum to 6.
    out = outputs([0.001, 0.004, 0.0001, 0.5, 0.999], [0.05, 0.005, 0.0, 0.5, 1.0], [0, 0, 0, 0, 0],
                  weight=[1.0, 1.0, 1.0, 1.0, 2.0])
    a = logit(0.01) - logit(0.001)
    b = logit(0.005) - logit(0.004)
    assert float(calibration_penalty(out).detach()) == pytest.approx((a * a + b * b) / 6, rel=1e-4)


def test_bad_kinds_and_temperatures_are_refused():
    out = outputs([0.1], [0.1], [0])
    with pytest.raises(ValueError, match="kind must be one of risk, listwise; got 'top1'"):
        decision_loss(out, "top1")
    with pytest.raises(ValueError, match="temperature must be above 0; got 0"):
        decision_loss(out, "risk", 0)


@pytest.mark.parametrize(("key", "value", "message"), [
    ("decision_weight", -1, r"train.decision_weight must be a number in \[0, inf\]; got -1"),
    ("decision_temperature", 0, r"train.decision_temperature must be a number in \[0, 1\] above 0; got 0"),
    ("decision_loss", "top1", "train.decision_loss must be one of 'risk', 'listwise'; got 'top1'"),
    ("calibration_margin", "x", r"train.calibration_margin must be a number"),
])
def test_the_config_refuses_bad_decision_options(key, value, message):
    raw = {"data": {"path": "data/x"}, "model": {"arch": "gnn"}, "train": {key: value},
           "output": {"dir": "runs/x"}}
    with pytest.raises(TrainingError, match=message):
        check_config(raw)
