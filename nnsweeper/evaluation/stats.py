"""Intervals for win rates and their differences, in closed form.

:func:`wilson_interval` is the Wilson score interval of one proportion;
:func:`newcombe_interval` (independent samples) and :func:`newcombe_paired_interval`
(the same games played by two solvers) build on it for the difference of two. The
normal quantile is computed here to the nearest double (:func:`normal_quantile`), so
nothing needs scipy and every interval is the same on every machine.
"""

from __future__ import annotations

import decimal
import functools
import math
import numbers
from statistics import NormalDist

from nnsweeper.errors import check_int

__all__ = ["wilson_interval", "newcombe_interval", "newcombe_paired_interval", "normal_quantile"]

_NORMAL = NormalDist()
# Digits carried while refining a quantile: the series for erf loses about
# z**2 / (2 ln 10) of them to cancellation (15 at z = 8.3, the quantile of 1 - 1e-16).
_DIGITS = 60
_PI = decimal.Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899863")


def _check_confidence(confidence) -> float:
    if (isinstance(confidence, bool) or not isinstance(confidence, numbers.Real)
            or not 0 < confidence < 1):
        raise ValueError(f"confidence must be a number in (0, 1); got {confidence!r}")
    return float(confidence)


def _check_counts(**counts) -> dict[str, int]:
    return {name: check_int(name, value, 0) for name, value in counts.items()}


def _erf(x: decimal.Decimal) -> decimal.Decimal:
    """erf(x) by its Taylor series, in the current decimal context."""
    total, term, n = decimal.Decimal(0), x, 0
    tiny = decimal.Decimal(10) ** -(decimal.getcontext().prec + 2)
    while abs(term) > tiny * abs(total) or n < 2:
        total += term / (2 * n + 1)
        n += 1
        term = -term * x * x / n
    return 2 * total / _PI.sqrt()


@functools.lru_cache(maxsize=64)
def normal_quantile(p: float, digits: int = _DIGITS) -> float:
    """The standard normal quantile of ``p`` in (0, 1), correctly rounded to a double.

    ``p`` is read as written (the decimal of its shortest repr: 0.975 is 0.975, not
    the double nearest it). The result starts from
    :meth:`statistics.NormalDist.inv_cdf` and is refined by Newton steps in decimal
    arithmetic with ``digits`` digits, so it does not depend on the platform's
    ``libm``: 1.959963984540054 for 0.975.
    """
    p = _check_confidence(p)
    with decimal.localcontext() as ctx:
        ctx.prec = digits
        target, z = decimal.Decimal(repr(p)), decimal.Decimal(_NORMAL.inv_cdf(p))
        return _refine(target, z)


def _refine(target: decimal.Decimal, z: decimal.Decimal) -> float:
    """Newton steps on Phi(z) = target from a double-precision start, in the current context."""
    root2 = decimal.Decimal(2).sqrt()
    density = 1 / (2 * _PI).sqrt()
    for _ in range(4):  # quadratic convergence from about 15 correct digits
        cdf = (1 + _erf(z / root2)) / 2
        z -= (cdf - target) / (density * (-z * z / 2).exp())
    return float(z)


@functools.lru_cache(maxsize=64)
def _z(confidence: float) -> float:
    """The two-sided normal quantile of ``confidence`` (1.959963984540054 for 0.95)."""
    with decimal.localcontext() as ctx:
        ctx.prec = _DIGITS
        target = (1 + decimal.Decimal(repr(confidence))) / 2
        return _refine(target, decimal.Decimal(_NORMAL.inv_cdf(float(target))))


def _wilson(wins: int, games: int, z: float) -> tuple[float, float]:
    """The Wilson interval of checked counts, written as Newcombe (1998) writes it.

    The ends are exactly 0 with no win and exactly 1 with no loss.
    """
    p = wins / games
    denom = 2 * (games + z**2)
    centre = (2 * games * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * games * p * (1 - p) + z**2)
    low = 0.0 if wins == 0 else centre - delta
    high = 1.0 if wins == games else centre + delta
    return low, high


def wilson_interval(wins, games, confidence=0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``wins / games``.

    With ``p = wins / games`` and ``z`` the two-sided normal quantile of
    ``confidence``, the interval is ``c -+ z / (2 (n + z**2)) * sqrt(4 n p (1 - p) + z**2)``
    where ``c = (2 n p + z**2) / (2 (n + z**2))`` and ``n = games``; its lower end is
    0 when ``wins == 0`` and its upper end 1 when ``wins == games``. This is
    ``scipy.stats.binomtest(wins, games).proportion_ci(confidence, method="wilson")``.

    Parameters
    ----------
    wins : int
        Successes, from 0 to ``games``.
    games : int
        Trials, at least 1.
    confidence : float, default=0.95
        Confidence level in (0, 1).

    Returns
    -------
    (low, high) : tuple of float
        Within [0, 1].
    """
    c = _check_counts(wins=wins, games=games)
    if c["games"] < 1:
        raise ValueError(f"games must be at least 1; got {c['games']}")
    if c["wins"] > c["games"]:
        raise ValueError(f"wins must not exceed games ({c['games']}); got {c['wins']}")
    return _wilson(c["wins"], c["games"], _z(_check_confidence(confidence)))


def newcombe_interval(wins1, games1, wins2, games2, *, confidence=0.95) -> tuple[float, float]:
    """Interval for ``wins1/games1 - wins2/games2`` from two independent samples.

    Newcombe's hybrid score interval (method 10 of Newcombe 1998, "Interval estimation
    for the difference between independent proportions: comparison of eleven
    methods", Statistics in Medicine 17:873-890), built from the two Wilson intervals
    ``(l1, u1)`` and ``(l2, u2)``: with ``D = p1 - p2`` it runs from
    ``D - sqrt((p1 - l1)**2 + (u2 - p2)**2)`` to ``D + sqrt((u1 - p1)**2 + (p2 - l2)**2)``.

    Parameters
    ----------
    wins1, games1 : int
        Successes and trials of the first sample (``0 <= wins1 <= games1``, ``games1 >= 1``).
    wins2, games2 : int
        The same for the second sample.
    confidence : float, default=0.95
        Confidence level in (0, 1).

    Returns
    -------
    (low, high) : tuple of float
        Within [-1, 1].
    """
    c = _check_counts(wins1=wins1, games1=games1, wins2=wins2, games2=games2)
    for k, n in (("wins1", "games1"), ("wins2", "games2")):
        if c[n] < 1:
            raise ValueError(f"{n} must be at least 1; got {c[n]}")
        if c[k] > c[n]:
            raise ValueError(f"{k} must not exceed {n} ({c[n]}); got {c[k]}")
    z = _z(_check_confidence(confidence))
    p1, p2 = c["wins1"] / c["games1"], c["wins2"] / c["games2"]
    l1, u1 = _wilson(c["wins1"], c["games1"], z)
    l2, u2 = _wilson(c["wins2"], c["games2"], z)
    return _newcombe(p1, (l1, u1), p2, (l2, u2), 0.0)


def newcombe_paired_interval(both, first_only, second_only, neither, *,
                             confidence=0.95) -> tuple[float, float]:
    """Interval for the difference of two proportions measured on the same units.

    Newcombe's score interval for paired data (method 10 of Newcombe 1998, "Improved
    confidence intervals for the difference between binomial proportions based on
    paired data", Statistics in Medicine 17:2635-2650). With ``n`` pairs,
    ``p1 = (both + first_only) / n``, ``p2 = (both + second_only) / n`` and their Wilson
    intervals ``(l1, u1)`` and ``(l2, u2)``, the interval for ``D = p1 - p2`` runs from
    ``D - sqrt((p1 - l1)**2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)**2)`` to
    ``D + sqrt((u1 - p1)**2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)**2)``, where ``phi``
    is the correlation of the two outcomes with Newcombe's correction: with
    ``B = both * neither - first_only * second_only``, ``phi = max(B - n/2, 0) / sqrt(M)``
    for ``B > 0`` and ``B / sqrt(M)`` otherwise, ``M`` being the product of the four
    margins (``phi = 0`` when a margin is empty). Positively correlated outcomes (two
    solvers that win and lose mostly the same games) give a narrower interval than
    :func:`newcombe_interval` on the same rates.

    Parameters
    ----------
    both : int
        Pairs where both succeeded (games both solvers won).
    first_only, second_only : int
        Pairs where only the first, or only the second, succeeded.
    neither : int
        Pairs where neither did.
    confidence : float, default=0.95
        Confidence level in (0, 1).

    Returns
    -------
    (low, high) : tuple of float
        Within [-1, 1].
    """
    c = _check_counts(both=both, first_only=first_only, second_only=second_only, neither=neither)
    a, b, cc, d = c["both"], c["first_only"], c["second_only"], c["neither"]
    n = a + b + cc + d
    if n < 1:
        raise ValueError("the paired table must hold at least one pair; got 0 in all four cells")
    z = _z(_check_confidence(confidence))
    p1, p2 = (a + b) / n, (a + cc) / n
    l1, u1 = _wilson(a + b, n, z)
    l2, u2 = _wilson(a + cc, n, z)
    margins = (a + b) * (cc + d) * (a + cc) * (b + d)
    if margins == 0:
        phi = 0.0
    else:
        assoc = a * d - b * cc
        corrected = max(assoc - n / 2, 0.0) if assoc > 0 else float(assoc)
        phi = corrected / math.sqrt(margins)
    return _newcombe(p1, (l1, u1), p2, (l2, u2), phi)


def _newcombe(p1: float, ci1: tuple[float, float], p2: float, ci2: tuple[float, float],
              phi: float) -> tuple[float, float]:
    """Newcombe's interval for ``p1 - p2`` from each rate's Wilson interval and their
    correlation ``phi`` (0 for independent samples), clipped to [-1, 1]."""
    (l1, u1), (l2, u2) = ci1, ci2
    diff = p1 - p2
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    low = diff - math.sqrt(max(below, 0.0))
    high = diff + math.sqrt(max(above, 0.0))
    return max(low, -1.0), min(high, 1.0)
