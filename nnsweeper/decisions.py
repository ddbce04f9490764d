"""Scores of a model's decisions: does its safest cell carry the least exact risk?

A model's average error (:mod:`nnsweeper.metrics`) can be near the exact engine's
while its choices are not: a solver opens the cell the model rates safest, so what
costs games is the gap between the exact risk of that cell and the least exact risk
on the board. This module scores that, position by position, from the same rows as
:mod:`nnsweeper.metrics` plus the position each row belongs to.

A position's *candidates* are its frontier cells, one by one, and its interior cells
pooled into one (their exact probabilities are equal, and the neural solvers give
them the mean of the model's probabilities; :func:`nnsweeper.solvers.neural.pool_interior`).
A *guess position* is one with no proven-safe cell (no exact probability of 0): there
the solver must guess, and these figures are taken over guess positions only:

``lowest_risk``
    the share of guess positions where the model's safest candidate (its lowest
    probability) is a lowest-risk candidate (exact probability within
    :data:`TIE` of the least);
``regret_mean``, ``regret_p90``
    the mean and 90th percentile of the regret: the exact probability of the model's
    pick minus the least exact probability (0 where the pick is a lowest-risk cell);
``overconfident``
    the share of guess positions with an unproven candidate (exact probability
    neither 0 nor 1) rated below :data:`OPEN_BELOW` or above :data:`FLAG_ABOVE`, the
    thresholds at which the pure neural solver opens or flags a cell without proof;
``safest5_mae``, ``safest5_bias``
    the mean absolute error and the mean signed error (model minus exact) on the five
    candidates of least exact probability (fewer where a position has fewer), averaged
    per position, then over positions.

Each is reported for all guess positions and by phase (:data:`PHASES`: the covered
cells of the position).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["DecisionAccumulator", "decision_metrics", "format_decisions", "OPEN_BELOW", "FLAG_ABOVE",
           "PHASES", "TIE", "SAFEST"]

#: The pure neural solver's ``open_below`` and ``flag_above`` defaults (defined here,
#: :class:`~nnsweeper.solvers.NeuralSolver` takes them): an unproven cell rated beyond them
#: is opened or flagged as if it were proven.
OPEN_BELOW = 0.002
FLAG_ABOVE = 0.995
#: Exact probabilities closer than this are the same risk (the rows carry them as float32).
TIE = 1e-6
#: How many of a position's safest candidates (by exact probability) the error and bias are taken on.
SAFEST = 5
#: The phases of a game, by covered cells: (name, more than, at most).
PHASES = ((">400", 400, math.inf), ("120-400", 120, 400), ("<=120", 0, 120))

_RECORD = ("covered", "regret", "lowest", "overconfident", "safest_err", "safest_bias")


def _numpy(value, dtype) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().float().cpu().numpy() if dtype is np.float64 else value.detach().cpu().numpy()
    return np.asarray(value).reshape(-1).astype(dtype, copy=False)


def _positions(p_model, p_exact, weight, frontier, position) -> dict[str, np.ndarray]:
    """Per position of one batch: the candidates pooled, then each figure (see the module)."""
    pm, pe = _numpy(p_model, np.float64), _numpy(p_exact, np.float64)
    w, fr = _numpy(weight, np.float64), _numpy(frontier, bool)
    g = _numpy(position, np.int64)
    if not (len(pm) == len(pe) == len(w) == len(fr) == len(g)):
        raise ValueError("p_model, p_exact, weight, frontier and position must hold one entry per row; got "
                         f"{len(pm)}, {len(pe)}, {len(w)}, {len(fr)} and {len(g)}")
    if not len(pm):
        return {k: np.zeros(0) for k in _RECORD}
    ids, g = np.unique(g, return_inverse=True)
    n = len(ids)
    # Interior rows pooled per position: weighted means, their weights summed.
    inner = ~fr
    w_in = np.bincount(g[inner], weights=w[inner], minlength=n)
    has_in = w_in > 0
    safe_w = np.where(has_in, w_in, 1.0)
    pm_in = np.bincount(g[inner], weights=(pm * w)[inner], minlength=n) / safe_w
    pe_in = np.bincount(g[inner], weights=(pe * w)[inner], minlength=n) / safe_w
    cg = np.concatenate([g[fr], np.nonzero(has_in)[0]])
    cm = np.concatenate([pm[fr], pm_in[has_in]])
    ce = np.concatenate([pe[fr], pe_in[has_in]])
    covered = np.bincount(g, weights=w, minlength=n)
    least = np.full(n, np.inf)
    np.minimum.at(least, cg, ce)
    # The model's pick: its lowest probability; equal probabilities go to the first candidate.
    order = np.lexsort((np.arange(len(cm)), cm, cg))
    first = np.ones(len(order), dtype=bool)
    first[1:] = cg[order][1:] != cg[order][:-1]
    pick = np.empty(n, dtype=np.int64)
    pick[cg[order][first]] = order[first]
    regret = np.maximum(ce[pick] - least, 0.0)
    unproven = (ce > TIE) & (ce < 1 - TIE)
    bold = unproven & ((cm < OPEN_BELOW) | (cm > FLAG_ABOVE))
    overconfident = np.bincount(cg, weights=bold, minlength=n) > 0
    # The SAFEST candidates of least exact probability (mines excluded), per position.
    by_risk = np.lexsort((np.arange(len(ce)), ce, cg))
    sg = cg[by_risk]
    starts = np.searchsorted(sg, sg, side="left")
    rank = np.arange(len(sg)) - starts
    keep = by_risk[(rank < SAFEST) & (ce[by_risk] < 1 - TIE)]
    count = np.bincount(cg[keep], minlength=n)
    err = np.bincount(cg[keep], weights=np.abs(cm - ce)[keep], minlength=n) / np.maximum(count, 1)
    bias = np.bincount(cg[keep], weights=(cm - ce)[keep], minlength=n) / np.maximum(count, 1)
    guess = least > TIE
    return {"covered": covered[guess], "regret": np.where(regret[guess] <= TIE, 0.0, regret[guess]),
            "lowest": regret[guess] <= TIE, "overconfident": overconfident[guess],
            "safest_err": err[guess], "safest_bias": bias[guess]}


class DecisionAccumulator:
    """Collects the decision figures of positions batch by batch (a training or evaluation loop).

    Examples
    --------
    >>> acc = DecisionAccumulator()
    >>> out = model.outputs(batch)                                  # doctest: +SKIP
    >>> acc.add(torch.sigmoid(out["logit"]), out["prob"], out["weight"], out["frontier"],
    ...         out["graph"])                                       # doctest: +SKIP
    >>> decision_metrics(acc)                                       # doctest: +SKIP
    """

    def __init__(self):
        self._parts: list[dict[str, np.ndarray]] = []
        self.positions = 0  # every position added, guess positions or not

    def add(self, p_model, p_exact, weight, frontier, position) -> None:
        """Add one batch of rows: probabilities, exact probabilities, cells per row, frontier
        flags and each row's position in the batch (rows of one position share it)."""
        self.positions += len(np.unique(_numpy(position, np.int64)))
        self._parts.append(_positions(p_model, p_exact, weight, frontier, position))

    def records(self) -> dict[str, np.ndarray]:
        """Every guess position's figures so far, in the order added."""
        return {k: np.concatenate([p[k] for p in self._parts]) if self._parts else np.zeros(0)
                for k in _RECORD}


def _summary(r: dict[str, np.ndarray]) -> dict:
    n = len(r["covered"])
    if not n:
        return {"positions": 0, **dict.fromkeys(("lowest_risk", "regret_mean", "regret_p90", "overconfident",
                                                 "safest5_mae", "safest5_bias"), math.nan)}
    return {"positions": n, "lowest_risk": float(r["lowest"].mean()),
            "regret_mean": float(r["regret"].mean()), "regret_p90": float(np.quantile(r["regret"], 0.9)),
            "overconfident": float(r["overconfident"].mean()),
            "safest5_mae": float(r["safest_err"].mean()), "safest5_bias": float(r["safest_bias"].mean())}


def decision_metrics(acc: DecisionAccumulator) -> dict:
    """The decision figures (see the module) over every guess position of ``acc``, and by phase.

    Returns
    -------
    dict
        ``positions`` (guess positions), ``all_positions`` (every position added),
        the figures of the module, and ``phases``: the same per :data:`PHASES` name.
    """
    r = acc.records()
    out = {**_summary(r), "all_positions": acc.positions}
    out["phases"] = {}
    for name, low, high in PHASES:
        inside = (r["covered"] > low) & (r["covered"] <= high)
        out["phases"][name] = _summary({k: v[inside] for k, v in r.items()})
    return out


def format_decisions(result: dict) -> str:
    """The decision figures as a small table: all guess positions, then each phase."""
    head = (f"decisions on {result['positions']:,} guess positions (of {result['all_positions']:,}; "
            f"no proven-safe cell):")
    lines = [head, f"  {'covered cells':<14}{'positions':>10}{'lowest-risk':>13}{'regret mean':>13}"
                   f"{'regret p90':>12}{'overconf.':>11}{'safest-5 MAE':>14}{'bias':>9}"]

    def row(name: str, s: dict) -> str:
        if not s["positions"]:
            return f"  {name:<14}{0:>10}"
        return (f"  {name:<14}{s['positions']:>10,}{s['lowest_risk']:>13.2%}{s['regret_mean']:>13.4f}"
                f"{s['regret_p90']:>12.4f}{s['overconfident']:>11.2%}{s['safest5_mae']:>14.4f}"
                f"{s['safest5_bias']:>+9.4f}")

    lines.append(row("all", result))
    lines.extend(row(name, result["phases"][name]) for name, _, _ in PHASES)
    return "\n".join(lines)
