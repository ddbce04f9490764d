"""Objectives aimed at the decision, added to the probability loss (``[train]`` keys).

The probability loss (:func:`~nnsweeper.training.scoring.bce_loss`) is a mean over
cells: a model can reach a log-loss near the exact engine's while ranking the few
cells that decide a guess in the wrong order. These terms act on what a solver does
with the probabilities, position by position (``out["graph"]``: the rows of one
position share it; a graph's pooled interior row is one candidate):

:func:`decision_loss`
    ``train.decision_weight`` times, per position, either the exact risk of a soft
    choice (``train.decision_loss = "risk"``: the softmax of minus the model's
    probabilities over ``train.decision_temperature``, weighed by each candidate's exact
    probability less the least exact probability of the position, so 0 at a perfect
    choice) or the cross-entropy of that soft choice toward the exact lowest-risk set
    (``"listwise"``: minus the log of the soft choice's mass on the candidates of least
    exact probability); the mean over positions.
:func:`calibration_penalty`
    ``train.calibration_margin`` times the squared distance by which the logit of a
    cell the engine does not prove (exact probability neither 0 nor 1) lies outside
    ``[0.01, 0.99]`` widened to take in its exact probability: an unproven cell rated
    0.001 is opened by the pure solver as if it were proven (:data:`~nnsweeper.decisions.OPEN_BELOW`).

The temperature is in probability units: at 0.02 the soft choice is spread over the
candidates within a few hundredths of the model's safest, the scale at which the best
and second-best guesses of a position differ.
"""

from __future__ import annotations

import math

import torch

from nnsweeper.decisions import TIE as _TIE
from nnsweeper.training_config import DECISION_LOSSES

__all__ = ["DECISION_LOSSES", "CALIBRATION_BAND", "decision_loss", "calibration_penalty"]

#: The band an unproven cell's probability is kept inside by :func:`calibration_penalty` (widened
#: to take in the exact probability where that lies outside it).
CALIBRATION_BAND = (0.01, 0.99)


def _soft_choice(out: dict, temperature: float) -> tuple[torch.Tensor, torch.Tensor, int]:
    """The soft choice per position (a softmax over each position's rows), the rows' positions, and
    how many positions there are."""
    index = out["graph"]
    n = int(index.max()) + 1 if index.numel() else 0
    scores = -torch.sigmoid(out["logit"].float()) / temperature
    top = torch.full((n,), -math.inf, device=scores.device).scatter_reduce(0, index, scores.detach(), "amax",
                                                                            include_self=True)
    e = torch.exp(scores - top[index])
    total = torch.zeros(n, device=scores.device, dtype=e.dtype).index_add(0, index, e)
    return e / total[index], index, n


def decision_loss(out: dict, kind: str = "risk", temperature: float = 0.02) -> torch.Tensor:
    """The decision term of a batch (see the module), averaged over its positions.

    Parameters
    ----------
    out : dict
        A model's ``outputs()``: ``logit``, ``prob`` (the exact probabilities) and
        ``graph`` (each row's position).
    kind : {"risk", "listwise"}
    temperature : float
        Of the soft choice, in probability units (above 0).
    """
    if kind not in DECISION_LOSSES:
        raise ValueError(f"kind must be one of {', '.join(DECISION_LOSSES)}; got {kind!r}")
    if not temperature > 0:
        raise ValueError(f"temperature must be above 0; got {temperature!r}")
    if out["logit"].numel() == 0:
        return out["logit"].sum()
    q, index, n = _soft_choice(out, temperature)
    p = out["prob"].float()
    least = torch.full((n,), math.inf, device=p.device).scatter_reduce(0, index, p, "amin", include_self=True)
    present = torch.isfinite(least)
    if kind == "risk":
        per = torch.zeros(n, device=p.device).index_add(0, index, q * (p - least[index]))
    else:
        best = (p <= least[index] + _TIE).to(q.dtype)
        mass = torch.zeros(n, device=p.device).index_add(0, index, q * best)
        per = -torch.log(mass.clamp_min(1e-12))
    return per[present].mean()


def calibration_penalty(out: dict) -> torch.Tensor:
    """The calibration term of a batch (see the module): the weighted mean over every row."""
    logit, p, w = out["logit"].float(), out["prob"].float(), out["weight"].float()
    low, high = CALIBRATION_BAND
    lo = torch.logit(torch.clamp(torch.minimum(p, torch.full_like(p, low)), 1e-6, 1 - 1e-6))
    hi = torch.logit(torch.clamp(torch.maximum(p, torch.full_like(p, high)), 1e-6, 1 - 1e-6))
    unproven = (p > _TIE) & (p < 1 - _TIE)
    beyond = torch.where(unproven, torch.relu(lo - logit) + torch.relu(logit - hi), torch.zeros_like(logit))
    return (beyond.square() * w).sum() / w.sum().clamp_min(1.0)
