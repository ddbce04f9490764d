"""Scores of mine-probability predictions, each next to the exact engine's score.

A model predicts P(mine) for covered cells. The exact probability engine
(:mod:`nnsweeper.engine`) gives the best probabilities any predictor can give
from the visible board, so every figure of a model is reported beside the same
figure of the exact probabilities on the same cells: the *yardstick*. The headline
is the log-loss ratio, model log-loss over exact log-loss (1 is perfect).

Predictions are rows held in a :class:`PredictionSet`: one row per cell, or per group
of cells that share one prediction (the interior cells of a board all have the same
exact probability). A row carries

``p_model``
    the model's probability of a mine;
``p_exact``
    the exact probability;
``mine``
    the truth in [0, 1]: 0 or 1 for a single cell, and for a group the fraction of
    its cells that are mines;
``weight``
    the number of cells the row stands for;
``frontier``
    whether the cells touch a revealed number (frontier) or not (interior).

A row with fractional truth ``t`` and weight ``w`` is the same as two rows with labels
1 and 0 and weights ``w * t`` and ``w * (1 - t)``; :meth:`PredictionSet.expanded`
splits rows that way for the scores that need binary labels. The split is exact for
log-loss, Brier score, ROC AUC and calibration, which all take sample weights.

The module is longer than most because every score, its yardstick and their report
share the row format above; splitting them would spread one definition over files.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Iterable, Mapping

import numpy as np

from nnsweeper.errors import NnsweeperError, check_unit
from nnsweeper.fileio import write_text_atomic

__all__ = [
    "PredictionError",
    "PredictionSet",
    "PredictionAccumulator",
    "metrics",
    "evaluate_predictions",
    "reliability_curve",
    "to_json",
    "format_metrics",
    "LOG_LOSS_EPS",
    "REGIONS",
]

#: Probabilities are clipped to ``[LOG_LOSS_EPS, 1 - LOG_LOSS_EPS]`` for log-loss.
LOG_LOSS_EPS = 1e-7

#: The regions :func:`evaluate_predictions` reports, in table order.
REGIONS = ("frontier", "interior", "all")

_FIELDS = ("p_model", "p_exact", "mine", "weight", "frontier")


class PredictionError(NnsweeperError):
    """Prediction rows or scoring options that cannot be used: bad shapes, ranges or weights."""


def _to_numpy(name: str, value) -> np.ndarray:
    """``value`` as a numpy array; torch tensors are detached and moved to the CPU first."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu()
        if value.is_floating_point():
            value = value.double()  # half and bfloat16 tensors have no numpy counterpart
        value = value.numpy()
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as e:
        raise PredictionError(f"{name} must be array-like; got {type(value).__name__}: {e}") from None


def _float_array(name: str, value) -> np.ndarray:
    arr = _to_numpy(name, value)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.number)):
        raise PredictionError(f"{name} must hold numbers; got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise PredictionError(f"{name} must hold real numbers; got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=True)


def _bool_array(name: str, value) -> np.ndarray:
    arr = _to_numpy(name, value)
    if arr.dtype == bool:
        return arr.copy()
    if not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise PredictionError(f"{name} must hold booleans (or 0/1); got dtype {arr.dtype}")
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        raise PredictionError(
            f"{name} must hold booleans (or 0/1); got {arr[bad].flat[0].item()!r} at index {_first(bad)}"
        )
    return arr == 1


def _first(mask: np.ndarray):
    """The index of the first True of ``mask``: an int for 1-D arrays, a tuple otherwise."""
    index = tuple(int(i[0]) for i in np.nonzero(mask))
    return index[0] if len(index) == 1 else index


def _check_range(name: str, arr: np.ndarray, low: float, high: float | None) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        raise PredictionError(f"{name} must be finite; got {arr[bad].flat[0]} at index {_first(bad)}")
    bad = arr < low if high is None else (arr < low) | (arr > high)
    if bad.any():
        rule = f"at least {low:g}" if high is None else f"in [{low:g}, {high:g}]"
        raise PredictionError(f"{name} must be {rule}; got {arr[bad].flat[0]} at index {_first(bad)}")


def _check_bins(bins) -> int:
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
        raise PredictionError(f"bins must be an integer of at least 1; got {bins!r}")
    return int(bins)


class PredictionSet:
    """Prediction rows: model and exact probability, truth, weight and region per row.

    Parameters
    ----------
    p_model : array-like of float, shape (n,)
        The model's probability of a mine, in [0, 1].
    p_exact : array-like of float, shape (n,)
        The exact probability of a mine, in [0, 1].
    mine : array-like of float, shape (n,)
        The truth in [0, 1]: 0 or 1 for a single cell; for a row standing for several
        cells, the fraction of them that are mines.
    weight : array-like of float, shape (n,), optional
        The number of cells each row stands for, at least 0 (need not be whole).
        Ones when omitted.
    frontier : array-like of bool, shape (n,), or bool, default=True
        Whether each row's cells are frontier cells (next to a revealed number) or
        interior cells. A single bool applies to every row.

    Torch tensors are accepted anywhere an array is (detached and copied to the CPU).
    Arrays are copied and made read-only.

    Raises
    ------
    PredictionError
        When the arrays are not 1-D, differ in length, hold non-finite values,
        probabilities or truths outside [0, 1], or negative weights.
    """

    __slots__ = _FIELDS

    def __init__(self, p_model, p_exact, mine, weight=None, frontier=True):
        p_model = _float_array("p_model", p_model)
        p_exact = _float_array("p_exact", p_exact)
        mine = _float_array("mine", mine)
        weight = np.ones(np.shape(p_model)) if weight is None else _float_array("weight", weight)
        frontier = _bool_array("frontier", frontier)
        if frontier.ndim == 0:
            frontier = np.full(np.shape(p_model), bool(frontier))
        arrays = {"p_model": p_model, "p_exact": p_exact, "mine": mine, "weight": weight,
                  "frontier": frontier}
        for name, arr in arrays.items():
            if arr.ndim != 1:
                raise PredictionError(f"{name} must be one-dimensional; got shape {arr.shape}")
        lengths = {name: len(arr) for name, arr in arrays.items()}
        if len(set(lengths.values())) > 1:
            listed = ", ".join(f"{name} {n}" for name, n in lengths.items())
            raise PredictionError(f"prediction arrays must have equal lengths; got {listed}")
        _check_range("p_model", p_model, 0.0, 1.0)
        _check_range("p_exact", p_exact, 0.0, 1.0)
        _check_range("mine", mine, 0.0, 1.0)
        _check_range("weight", weight, 0.0, None)
        for name, arr in arrays.items():
            arr.flags.writeable = False
            setattr(self, name, arr)

    def __len__(self) -> int:
        return len(self.p_model)

    def __repr__(self) -> str:
        return (f"PredictionSet(rows={len(self)}, cells={self.cells:g}, "
                f"frontier_rows={int(self.frontier.sum())})")

    @property
    def cells(self) -> float:
        """The number of cells the rows stand for: the sum of the weights."""
        return float(self.weight.sum())

    @classmethod
    def empty(cls) -> PredictionSet:
        """A set with no rows."""
        return cls(np.empty(0), np.empty(0), np.empty(0), np.empty(0), np.empty(0, dtype=bool))

    @classmethod
    def concat(cls, sets: Iterable[PredictionSet]) -> PredictionSet:
        """The rows of several sets, one after the other.

        Parameters
        ----------
        sets : iterable of PredictionSet
            May be empty (giving an empty set).

        Returns
        -------
        PredictionSet
        """
        sets = list(sets)
        for i, s in enumerate(sets):
            if not isinstance(s, PredictionSet):
                raise PredictionError(f"sets[{i}] must be a PredictionSet; got {type(s).__name__}")
        if not sets:
            return cls.empty()
        return cls(*(np.concatenate([getattr(s, f) for s in sets]) for f in _FIELDS))

    def subset(self, mask) -> PredictionSet:
        """The rows where ``mask`` is True (a boolean array with one entry per row)."""
        mask = _bool_array("mask", mask)
        if mask.shape != (len(self),):
            raise PredictionError(f"mask must have shape ({len(self)},) like the rows; got {mask.shape}")
        return PredictionSet(*(getattr(self, f)[mask] for f in _FIELDS))

    def take(self, rows) -> PredictionSet:
        """The rows at the integer positions ``rows``, in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        return PredictionSet(*(getattr(self, f)[rows] for f in _FIELDS))

    def select(self, frontier: bool | None = None) -> PredictionSet:
        """The frontier rows (``True``), the interior rows (``False``) or all rows (``None``)."""
        if frontier is None:
            return self
        if not isinstance(frontier, bool | np.bool_):
            raise PredictionError(f"frontier must be True, False or None; got {frontier!r}")
        return self.subset(self.frontier == bool(frontier))

    def expanded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The rows with binary labels: each fractional row split in two.

        A row with truth ``t`` strictly between 0 and 1 and weight ``w`` becomes a row
        labelled 1 with weight ``w * t`` followed by a row labelled 0 with weight
        ``w * (1 - t)``, both with the row's probabilities. Rows with truth 0 or 1 are
        kept as they are, in their order.

        Returns
        -------
        p_model, p_exact : ndarray of float64
        y : ndarray of int64
            Labels, 0 or 1.
        w : ndarray of float64
            Weights.
        """
        t = self.mine
        split = (t > 0) & (t < 1)
        repeat = np.where(split, 2, 1)
        p_model = np.repeat(self.p_model, repeat)
        p_exact = np.repeat(self.p_exact, repeat)
        # The first copy of a split row is its mine part, the second its safe part.
        starts = np.cumsum(repeat) - repeat
        second = np.zeros(len(p_model), dtype=bool)
        second[starts[split] + 1] = True
        t_rep = np.repeat(t, repeat)
        w_rep = np.repeat(self.weight, repeat)
        y = np.where(second, 0, np.where(np.repeat(split, repeat), 1, t_rep)).astype(np.int64)
        w = np.where(second, w_rep * (1 - t_rep), np.where(np.repeat(split, repeat), w_rep * t_rep, w_rep))
        return p_model, p_exact, y, w


class PredictionAccumulator:
    """Collects prediction rows batch by batch, for a training or evaluation loop.

    Examples
    --------
    >>> acc = PredictionAccumulator()
    >>> for batch in loader:                                    # doctest: +SKIP
    ...     prob = torch.sigmoid(model(batch.x))
    ...     acc.add(prob, batch.p_exact, batch.mine, frontier=batch.frontier, mask=batch.covered)
    >>> result = evaluate_predictions(acc.to_set())              # doctest: +SKIP
    """

    def __init__(self):
        self._sets: list[PredictionSet] = []
        self._rows = 0

    def __len__(self) -> int:
        return self._rows

    def add(self, p_model, p_exact, mine, *, weight=None, frontier=True, mask=None) -> None:
        """Add one batch of rows.

        Parameters
        ----------
        p_model, p_exact, mine : array-like or torch.Tensor
            Of one shape (any number of dimensions; flattened in C order). ``p_model``
            must be probabilities, not logits.
        weight : array-like or torch.Tensor, optional
            Cells per row, same shape; ones when omitted.
        frontier : array-like of bool, torch.Tensor or bool, default=True
            Same shape, or one bool for the whole batch.
        mask : array-like of bool or torch.Tensor, optional
            Same shape: only the entries where it is True are added (for instance the
            covered cells of a batch of boards).
        """
        arrays = {"p_model": _to_numpy("p_model", p_model), "p_exact": _to_numpy("p_exact", p_exact),
                  "mine": _to_numpy("mine", mine)}
        shape = arrays["p_model"].shape
        if weight is not None:
            arrays["weight"] = _to_numpy("weight", weight)
        frontier = _bool_array("frontier", frontier)
        if frontier.ndim == 0:
            frontier = np.full(shape, bool(frontier))
        arrays["frontier"] = frontier
        if mask is not None:
            arrays["mask"] = _bool_array("mask", mask)
        for name, arr in arrays.items():
            if arr.shape != shape:
                raise PredictionError(
                    f"{name} must have the shape of p_model {shape}; got {arr.shape}"
                )
        keep = arrays.pop("mask", None)
        flat = {name: (arr[keep] if keep is not None else arr).reshape(-1) for name, arr in arrays.items()}
        batch = PredictionSet(**flat)
        self._sets.append(batch)
        self._rows += len(batch)

    def add_set(self, preds: PredictionSet) -> None:
        """Add the rows of a :class:`PredictionSet`."""
        if not isinstance(preds, PredictionSet):
            raise PredictionError(f"preds must be a PredictionSet; got {type(preds).__name__}")
        self._sets.append(preds)
        self._rows += len(preds)

    def to_set(self) -> PredictionSet:
        """All rows added so far, in order, as one :class:`PredictionSet`."""
        merged = PredictionSet.concat(self._sets)
        self._sets = [merged]  # later calls need not concatenate again
        return merged

    def clear(self) -> None:
        """Forget every row."""
        self._sets = []
        self._rows = 0


def _check_preds(preds) -> PredictionSet:
    if not isinstance(preds, PredictionSet):
        raise PredictionError(f"preds must be a PredictionSet; got {type(preds).__name__}")
    return preds


def _weighted_mean(values: np.ndarray, w: np.ndarray) -> float:
    total = w.sum()
    return float(np.dot(values, w) / total) if total > 0 else math.nan


# log-loss, Brier score and ROC AUC are sklearn's definitions (the tests check them
# against sklearn.metrics) written for what they get here: binary labels with weights, a
# few million rows per call and dozens of calls per evaluation, where sklearn's
# validation and one-hot encoding cost several times the sums themselves.
def _log_loss(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    """Weighted mean negative log-likelihood of labels ``y`` (0/1) under ``p``, clipped to
    [LOG_LOSS_EPS, 1 - LOG_LOSS_EPS] (``sklearn.metrics.log_loss`` with ``labels=[0, 1]``)."""
    total = w.sum()
    if total <= 0:
        return math.nan
    p = np.clip(p, LOG_LOSS_EPS, 1 - LOG_LOSS_EPS)
    loss = -np.log(np.where(y == 1, p, 1 - p))
    return float(np.dot(loss, w) / total)


def _brier(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    """Weighted mean squared error of ``p`` against labels ``y`` (``brier_score_loss``)."""
    total = w.sum()
    if total <= 0:
        return math.nan
    return float(np.dot((y - p) ** 2, w) / total)


def _roc_auc(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    """Weighted ROC AUC (``roc_auc_score``): the chance that a mine's ``p`` exceeds a safe
    cell's, ties counting one half, each pair weighted by the product of its weights."""
    pos = np.where(y == 1, w, 0.0)
    neg = np.where(y == 0, w, 0.0)
    w_pos, w_neg = pos.sum(), neg.sum()
    if w_pos <= 0 or w_neg <= 0:
        return math.nan
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    group = np.cumsum(np.concatenate([[True], ranked[1:] != ranked[:-1]])) - 1  # equal p, one group
    g_pos = np.bincount(group, weights=pos[order])
    g_neg = np.bincount(group, weights=neg[order])
    below = np.cumsum(g_neg) - g_neg  # safe weight strictly below each group's p
    return float(np.dot(g_pos, below + 0.5 * g_neg) / (w_pos * w_neg))


def _bin_index(p: np.ndarray, bins: int) -> np.ndarray:
    # Equal-width bins [k/bins, (k+1)/bins), the last one closed at 1.
    return np.minimum((p * bins).astype(np.int64), bins - 1)


def _binned(p: np.ndarray, y: np.ndarray, w: np.ndarray, bins: int):
    """Per bin: total weight, weighted mean prediction, weighted observed frequency."""
    idx = _bin_index(p, bins)
    weight = np.bincount(idx, weights=w, minlength=bins)
    sum_p = np.bincount(idx, weights=w * p, minlength=bins)
    sum_y = np.bincount(idx, weights=w * y, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.where(weight > 0, sum_p / weight, np.nan)
        observed = np.where(weight > 0, sum_y / weight, np.nan)
    return weight, mean_p, observed


def _ece(p: np.ndarray, y: np.ndarray, w: np.ndarray, bins: int) -> float:
    weight, mean_p, observed = _binned(p, y, w, bins)
    total = weight.sum()
    if total <= 0:
        return math.nan
    used = weight > 0
    return float(np.sum(weight[used] * np.abs(mean_p[used] - observed[used])) / total)


def metrics(preds: PredictionSet, *, safe_threshold: float = 0.02, bins: int = 15) -> dict:
    """Scores of the model and of the exact probabilities on one set of rows.

    Parameters
    ----------
    preds : PredictionSet
        The rows of one region (see :meth:`PredictionSet.select`).
    safe_threshold : float, default=0.02
        A model "calls" a cell safe below this probability and a mine above
        ``1 - safe_threshold``; in (0, 1).
    bins : int, default=15
        Equal-width probability bins for the expected calibration error.

    Returns
    -------
    dict
        Every value a Python int or float; a score that is undefined (no rows, no
        weight, one class only) is NaN.

        ``cells``, ``rows``
            Sum of the weights; number of rows.
        ``log_loss``, ``log_loss_exact``, ``log_loss_ratio``
            Weighted mean log-loss (natural log) of the model and of the exact
            probabilities against the truth, and their ratio model / exact (1 is as
            good as possible). Probabilities are clipped to ``[1e-7, 1 - 1e-7]``
            (:data:`LOG_LOSS_EPS`) first, so a confident mistake costs at most about
            16.1 and the exact engine's certain 0/1 cells (always right) add about
            1e-7 each rather than exactly 0.
        ``mae_exact``
            Weighted mean of ``|p_model - p_exact|``.
        ``roc_auc``, ``roc_auc_exact``
            Weighted ROC AUC; NaN unless both mines and safe cells have weight.
        ``brier``, ``brier_exact``
            Weighted mean squared error against the truth.
        ``ece``, ``ece_exact``
            Expected calibration error: over ``bins`` equal-width bins of the
            predicted probability, the weight share of each bin times the gap between
            its mean prediction and its observed mine frequency, summed.
        ``safe_cells``, ``safe_below_threshold``
            Weight of the cells the engine proves safe (``p_exact == 0``), and the
            weight share of them that the model puts below ``safe_threshold``.
        ``mine_cells``, ``mine_above_threshold``
            Likewise for proven mines (``p_exact == 1``) and ``p_model > 1 - safe_threshold``.
        ``safe_threshold``, ``bins``
            The options used, for the record.
    """
    preds = _check_preds(preds)
    safe_threshold = check_unit("safe_threshold", safe_threshold, open_low=True, open_high=True,
                                error=PredictionError)
    bins = _check_bins(bins)

    p_model, p_exact, y, w = preds.expanded()
    w_row = preds.weight
    ll_model = _log_loss(y, p_model, w)
    ll_exact = _log_loss(y, p_exact, w)
    ratio = ll_model / ll_exact if ll_exact > 0 else math.nan  # NaN when ll_exact is NaN too

    safe = preds.p_exact == 0
    mine = preds.p_exact == 1
    return {
        "cells": preds.cells,
        "rows": len(preds),
        "log_loss": ll_model,
        "log_loss_exact": ll_exact,
        "log_loss_ratio": ratio,
        "mae_exact": _weighted_mean(np.abs(preds.p_model - preds.p_exact), w_row),
        "roc_auc": _roc_auc(y, p_model, w),
        "roc_auc_exact": _roc_auc(y, p_exact, w),
        "brier": _brier(y, p_model, w),
        "brier_exact": _brier(y, p_exact, w),
        "ece": _ece(p_model, y, w, bins),
        "ece_exact": _ece(p_exact, y, w, bins),
        "safe_cells": float(w_row[safe].sum()),
        "safe_below_threshold": _weighted_mean((preds.p_model[safe] < safe_threshold).astype(float),
                                               w_row[safe]),
        "mine_cells": float(w_row[mine].sum()),
        "mine_above_threshold": _weighted_mean((preds.p_model[mine] > 1 - safe_threshold).astype(float),
                                               w_row[mine]),
        "safe_threshold": safe_threshold,
        "bins": bins,
    }


def _regions(preds: PredictionSet, safe_threshold: float, bins: int) -> dict:
    return {
        "frontier": metrics(preds.select(True), safe_threshold=safe_threshold, bins=bins),
        "interior": metrics(preds.select(False), safe_threshold=safe_threshold, bins=bins),
        "all": metrics(preds, safe_threshold=safe_threshold, bins=bins),
    }


def _label(value):
    """A group label as a plain Python value (numpy scalars become int, float, str...)."""
    return value.item() if isinstance(value, np.generic) else value


def evaluate_predictions(preds: PredictionSet, *, by=None, safe_threshold: float = 0.02,
                         bins: int = 15, overall: bool = True) -> dict:
    """Scores per region (frontier, interior, all), overall and optionally per group.

    Parameters
    ----------
    preds : PredictionSet
    by : array-like, shape (n,), optional
        A group label per row (for instance the board configuration ``"10x10-m15"``).
        Each group is scored on its own as well, groups in order of first appearance.
    safe_threshold, bins
        As for :func:`metrics`.
    overall : bool, default=True
        ``False``: the groups' scores alone (``by`` required), for a caller that has
        the overall ones already.

    Returns
    -------
    dict
        ``{"frontier": metrics, "interior": metrics, "all": metrics}`` (see
        :func:`metrics`; not with ``overall=False``), plus ``"by": {label:
        {"frontier": ..., "interior": ..., "all": ...}}`` when ``by`` is given.
        Labels are plain Python values; JSON turns non-string labels into strings.
        Serialise with :func:`to_json`, which writes NaN as null.
    """
    preds = _check_preds(preds)
    safe_threshold = check_unit("safe_threshold", safe_threshold, open_low=True, open_high=True,
                                error=PredictionError)
    bins = _check_bins(bins)
    if not overall and by is None:
        raise PredictionError("overall=False scores the groups alone: give by, a label per row")
    result = _regions(preds, safe_threshold, bins) if overall else {}
    if by is not None:
        labels = _to_numpy("by", by)
        if labels.shape != (len(preds),):
            raise PredictionError(
                f"by must hold one label per row, shape ({len(preds)},); got shape {labels.shape}"
            )
        # Group by integer codes, not by comparing every label with every row: the rows
        # of each group in their order, one stable sort for all of them.
        values, first, codes = np.unique(labels, return_index=True, return_inverse=True)
        codes = codes.reshape(-1)
        order = np.argsort(codes, kind="stable")
        counts = np.bincount(codes, minlength=len(values))
        ends = np.cumsum(counts)
        starts = ends - counts
        groups = {}
        for g in np.argsort(first, kind="stable"):  # in order of first appearance
            groups[_label(values[g])] = _regions(preds.take(order[starts[g]:ends[g]]), safe_threshold, bins)
        result["by"] = groups
    return result


def reliability_curve(preds: PredictionSet, bins: int = 15) -> dict:
    """Calibration per probability bin, for the model and for the exact probabilities.

    Rows are binned by predicted probability into ``bins`` equal-width bins
    ``[k / bins, (k + 1) / bins)`` (the last one includes 1); fractional truths count
    with their weight, as in :meth:`PredictionSet.expanded`.

    Parameters
    ----------
    preds : PredictionSet
    bins : int, default=15

    Returns
    -------
    dict of ndarray
        ``edges`` (``bins + 1`` bin edges), and for the model ``mean_predicted``,
        ``observed`` (weighted mine frequency) and ``weight`` (cells) per bin, with
        the same three for the exact probabilities under ``mean_predicted_exact``,
        ``observed_exact`` and ``weight_exact``. Empty bins have weight 0 and NaN
        means.
    """
    preds = _check_preds(preds)
    bins = _check_bins(bins)
    curve = {"edges": np.linspace(0.0, 1.0, bins + 1)}
    for suffix, p in (("", preds.p_model), ("_exact", preds.p_exact)):
        weight, mean_p, observed = _binned(p, preds.mine, preds.weight, bins)
        curve["mean_predicted" + suffix] = mean_p
        curve["observed" + suffix] = observed
        curve["weight" + suffix] = weight
    return curve


def _plain(value):
    """``value`` with NaN as None and numpy values as Python ones, recursively."""
    if isinstance(value, Mapping):
        return {(_label(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def to_json(result, path: str | os.PathLike | None = None, *, indent: int | None = 2) -> str:
    """Strict JSON text of a result: NaN (and infinities) written as ``null``.

    Parameters
    ----------
    result : dict
        Output of :func:`evaluate_predictions`, :func:`metrics` or
        :func:`reliability_curve` (numpy arrays become lists), or any nesting of
        dicts, lists and numbers.
    path : str or os.PathLike, optional
        Also write the text (with a final newline) to this file, atomically.
    indent : int or None, default=2

    Returns
    -------
    str
    """
    text = json.dumps(_plain(result), indent=indent, allow_nan=False)
    if path is not None:
        write_text_atomic(path, text + "\n")
    return text


_COLUMNS = (
    # (header, key, width, format)
    ("cells", "cells", 10, "{:.0f}"),
    ("LL model", "log_loss", 9, "{:.4f}"),
    ("LL exact", "log_loss_exact", 9, "{:.4f}"),
    ("LL ratio", "log_loss_ratio", 9, "{:.3f}"),
    ("MAE", "mae_exact", 7, "{:.4f}"),
    ("AUC model", "roc_auc", 9, "{:.4f}"),
    ("AUC exact", "roc_auc_exact", 9, "{:.4f}"),
    ("Brier", "brier", 7, "{:.4f}"),
    ("ECE", "ece", 7, "{:.4f}"),
    ("safe<{t:g}", "safe_below_threshold", 9, "{:.3f}"),
    ("mine>{u:g}", "mine_above_threshold", 9, "{:.3f}"),
)


def _cell(value, fmt: str) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if fmt != "{:.0f}" and value != 0 and not 1e-3 <= abs(value) < 1e5:
        return f"{value:.2e}"  # e.g. the exact log-loss of a region of certain cells
    return fmt.format(value)


def _table(regions: Mapping, indent: str = "", names=REGIONS, width: int = 8,
           title: str = "region") -> list[str]:
    """One line per name of ``names`` found in ``regions`` (a mapping of name to metrics)."""
    threshold = next((regions[r].get("safe_threshold") for r in names if r in regions), None)
    threshold = threshold if threshold is not None else 0.02
    headers = [h.format(t=threshold, u=1 - threshold) for h, *_ in _COLUMNS]
    widths = [max(w, len(h)) for h, (_, _, w, _) in zip(headers, _COLUMNS, strict=True)]
    head = f"{title:<{width + 1}}"
    lines = [indent + head + "".join(f" {h:>{w}}" for h, w in zip(headers, widths, strict=True))]
    for region in names:
        if region not in regions:
            continue
        row = regions[region]
        cells = [_cell(row.get(key), fmt) for (_, key, _, fmt) in _COLUMNS]
        padded = "".join(f" {c:>{w}}" for c, w in zip(cells, widths, strict=True))
        lines.append(indent + f"{region:<{width + 1}}" + padded)
    return lines


def format_metrics(result: Mapping) -> str:
    """A fixed-width table of a result of :func:`evaluate_predictions`.

    One line per region (frontier, interior, all) with the cells, log-loss of the model
    and of the exact probabilities and their ratio, mean absolute difference from the
    exact probabilities, ROC AUC of both, Brier score and ECE of the model, and the shares
    of proven-safe cells the model puts below the safe threshold and of proven mines it
    puts above one minus it. Undefined values
    show as ``-``. Per-group tables follow when the result has ``"by"``, and a table of
    frontier cells per kind when it has ``"kinds"`` (``{field: {label: regions}}``, as
    :func:`nnsweeper.training.evaluate_model` gives: one line per label of each field).
    Also accepts a result read back from :func:`to_json` (nulls for NaN).

    Parameters
    ----------
    result : dict

    Returns
    -------
    str
    """
    if not isinstance(result, Mapping) or not any(r in result for r in REGIONS):
        raise PredictionError(
            "result must be a dict with frontier/interior/all entries, as evaluate_predictions "
            f"returns; got {type(result).__name__}"
        )
    lines = _table(result)
    for label, regions in (result.get("by") or {}).items():
        lines.append("")
        lines.append(f"{label}:")
        lines.extend(_table(regions, indent="  "))
    kinds = result.get("kinds") or {}
    if kinds:
        lines += ["", "frontier cells by kind:"]
        width = max(len(str(label)) for groups in kinds.values() for label in groups)
        width = max(width, max(len(field) for field in kinds))
        for field, groups in kinds.items():
            lines += _table({str(label): regions["frontier"] for label, regions in groups.items()},
                            indent="  ", names=list(map(str, groups)), width=width, title=field)
    return "\n".join(lines)
