"""Typed configs: frozen dataclasses that hold their defaults, rules and descriptions.

A config here is a frozen dataclass derived from :class:`Settings`: each field has
its default and, on the line above it, a ``#:`` comment saying what it is (read by
:meth:`Settings.describe`, so that help texts list every key with its default and
comment), and the class's ``__post_init__`` checks (and normalises) every value
with the helpers of :class:`Settings`, raising the class's :attr:`Settings._error`
with a message that names the key, the rule and the value. :meth:`Settings.to_dict`
gives the JSON form that files record.

The model configs (:class:`nnsweeper.models.base.ModelConfig`) and the sections of
a training config (:mod:`nnsweeper.training`) are such classes. This module needs
no torch.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import numbers
import os
import re
import textwrap
import tomllib
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from nnsweeper.errors import check_int

__all__ = ["Settings", "field_comments", "format_value", "describe_keys", "read_toml"]


def read_toml(path, what: str, error: type[Exception]) -> dict:
    """The tables of a TOML file; ``error`` naming the file when it is missing or malformed."""
    path = Path(path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"no {what} at {os.fspath(path)!r}") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{os.fspath(path)!r} is not valid TOML: {exc}") from None

_FIELD_LINE = re.compile(r"^([A-Za-z_]\w*)\s*:")


@dataclasses.dataclass(frozen=True)
class Settings:
    """Base of the typed configs (a frozen dataclass with no fields of its own).

    Subclasses are frozen dataclasses; their ``__post_init__`` checks the values with
    :meth:`_int`, :meth:`_number`, :meth:`_bool` and :meth:`_choice`, which store the
    normalised value back (an ``int`` for an integer, a ``float`` for a number).
    """

    #: The error the checks raise (a subclass of ValueError).
    _error: ClassVar[type[ValueError]] = ValueError

    # ----------------------------------------------------------------- reading
    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The field names, in order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every key with its default (``dataclasses.MISSING`` where there is none)."""
        out = {}
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
            else:
                out[f.name] = dataclasses.MISSING
        return out

    @classmethod
    def describe(cls, prefix: str = "") -> list[tuple[str, str, str]]:
        """``(prefix + key, default as TOML, comment)`` for every field, in order."""
        comments = field_comments(cls)
        return [(prefix + key, format_value(value), comments.get(key, ""))
                for key, value in cls.defaults().items()]

    def to_dict(self) -> dict[str, Any]:
        """The values as a fresh JSON-able dict (tuples as lists), in field order.

        Raises
        ------
        ValueError
            (:attr:`_error`) A value that JSON cannot hold.
        """
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        try:
            return json.loads(json.dumps(values, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise self._error(f"a {self._what()} must be JSON-able ({exc}); got {values!r}") from None

    # ----------------------------------------------------------------- checks
    @classmethod
    def _what(cls) -> str:
        """What the config is, for messages."""
        return "config"

    @classmethod
    def _label(cls, key: str) -> str:
        """How messages name ``key``."""
        return key

    def _set(self, key: str, value) -> None:
        object.__setattr__(self, key, value)  # the instance is frozen once built

    def _int(self, key: str, minimum: int, maximum: int | None = None) -> int:
        """The field ``key`` as an int in ``[minimum, maximum]``."""
        value = check_int(self._label(key), getattr(self, key), minimum, self._error, maximum=maximum)
        self._set(key, value)
        return value

    def _number(self, key: str, low: float = 0, high: float = math.inf, *, above_low: bool = False) -> float:
        """The field ``key`` as a float in ``[low, high]`` (strictly above ``low`` with ``above_low``)."""
        value = getattr(self, key)
        number = isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
        if not number or not low <= value <= high or (above_low and value == low):
            above = f" above {low}" if above_low else ""
            raise self._error(f"{self._label(key)} must be a number in [{low}, {high}]{above}; got {value!r}")
        self._set(key, float(value))
        return float(value)

    def _bool(self, key: str) -> bool:
        """The field ``key``, which must be true or false."""
        value = getattr(self, key)
        if not isinstance(value, bool | np.bool_):
            raise self._error(f"{self._label(key)} must be true or false; got {value!r}")
        self._set(key, bool(value))
        return bool(value)

    def _choice(self, key: str, choices, *, quoted: bool = True) -> str:
        """The field ``key``, which must be one of ``choices`` (listed with quotes when ``quoted``)."""
        value = getattr(self, key)
        if not isinstance(value, str) or value not in choices:
            listed = ", ".join(map(repr, choices)) if quoted else ", ".join(choices)
            raise self._error(f"{self._label(key)} must be one of {listed}; got {value!r}")
        return value


def field_comments(cls) -> dict[str, str]:
    """The ``#:`` comment above each field of the dataclass ``cls`` (its bases' too).

    Returns
    -------
    dict
        Field name to its comment (the lines joined by spaces); a class whose
        source cannot be read (defined in an interactive session) gives no comments.
    """
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            lines = inspect.getsource(klass).splitlines()
        except (OSError, TypeError):
            continue
        pending: list[str] = []
        for line in lines:
            text = line.strip()
            if text.startswith("#:"):
                pending.append(text[2:].strip())
                continue
            match = _FIELD_LINE.match(text)
            if match and pending:
                found[match.group(1)] = " ".join(pending)
            pending = []
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in found.items() if k in names}


def format_value(value) -> str:
    """``value`` as a TOML config would write it (``none`` for None: the key is left out)."""
    if value is None or value is dataclasses.MISSING:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return repr(value)


def describe_keys(rows, *, width: int = 78) -> str:
    """Help text of ``rows`` of :meth:`Settings.describe`: ``key = default`` and the comment below."""
    lines = []
    for key, default, comment in rows:
        lines.append(f"  {key} = {default}")
        if comment:
            lines += textwrap.wrap(comment, width, initial_indent=" " * 6, subsequent_indent=" " * 6)
    return "\n".join(lines)
