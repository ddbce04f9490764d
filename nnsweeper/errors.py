"""Exceptions raised by nnsweeper.

Every exception is a ``ValueError`` subclass so that callers who only care about
"bad input" can catch one type; the command line turns any of them into a single
line on stderr and exit code 2.
"""

from __future__ import annotations

import numbers

__all__ = [
    "NnsweeperError",
    "InvalidRulesError",
    "InvalidActionError",
    "InconsistentBoardError",
    "EngineLimitError",
    "InvalidBoardError",
    "BoardParseError",
    "DatasetError",
    "ChecksumError",
    "SeedOverlapError",
    "check_int",
    "check_rng",
]


class NnsweeperError(ValueError):
    """Base class of every error nnsweeper raises for bad input."""


class InvalidRulesError(NnsweeperError):
    """Board size, mine count or first-click rule that no game can have."""


class InvalidActionError(NnsweeperError):
    """An action the game cannot take: out of range, on a revealed cell, after the end."""


class InvalidBoardError(NnsweeperError):
    """A visible board that is malformed: wrong shape, values outside -1..8, bad flags."""


class InconsistentBoardError(NnsweeperError):
    """A visible board (with its mine count and flags) that no mine layout fits."""


class EngineLimitError(NnsweeperError):
    """A position whose exact analysis would need more work or memory than the engine's bound."""


class BoardParseError(NnsweeperError):
    """Board text that does not follow the ``.``/``F``/digit format."""


class DatasetError(NnsweeperError):
    """A dataset specification, folder or manifest that cannot be used as asked."""


class ChecksumError(DatasetError):
    """A dataset shard whose bytes differ from the checksum its manifest records."""


class SeedOverlapError(NnsweeperError):
    """Game seeds that were meant to be held out appear in another set (training, evaluation)."""


def check_int(name: str, value, minimum: int, error: type[ValueError] = ValueError, *,
              maximum: int | None = None) -> int:
    """``value`` as an int, or ``error`` naming it when it is not an integer in
    ``[minimum, maximum]`` (no upper end when ``maximum`` is None)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise error(f"{name} must be an integer; got {value!r}")
    if value < minimum:
        raise error(f"{name} must be at least {minimum}; got {value}")
    if maximum is not None and value > maximum:
        raise error(f"{name} must be at most {maximum}; got {value}")
    return int(value)


def check_unit(name: str, value, *, open_low: bool = False, open_high: bool = False,
               error: type[ValueError] = ValueError) -> float:
    """``value`` as a float in [0, 1] (each end open when asked), or ``error`` naming it."""
    number = not isinstance(value, bool) and isinstance(value, numbers.Real)
    if not (number and (0 < value if open_low else 0 <= value) and (value < 1 if open_high else value <= 1)):
        interval = ("(" if open_low else "[") + "0, 1" + (")" if open_high else "]")
        raise error(f"{name} must be a number in {interval}; got {value!r}")
    return float(value)


def check_rng(rng, *, default_seed: int | None = None):
    """``rng`` as a numpy Generator: a Generator as it is, a seed (an integer of at least
    0) through ``np.random.default_rng``, and None through ``default_seed`` when one is
    given; anything else is a ValueError naming what is accepted."""
    import numpy as np

    if rng is None and default_seed is not None:
        return np.random.default_rng(default_seed)
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    if default_seed is not None:
        accepted = "a numpy Generator, a seed (an integer of at least 0) or None"
    else:
        accepted = "a numpy Generator or a seed (an integer of at least 0), such as np.random.default_rng(0)"
    raise ValueError(f"rng must be {accepted}; got {rng!r}")
