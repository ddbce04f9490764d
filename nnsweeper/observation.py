"""What a player sees of a board: the visible grid, the flags and the mine count.

An :class:`Observation` is one visible board, checked once, when it is made
(:meth:`Observation.of`). Everything that reads a board (the exact engine
:func:`nnsweeper.analyze`, the model inputs of :mod:`nnsweeper.features`,
:meth:`nnsweeper.models.MineModel.predict_proba`, the board text of
:mod:`nnsweeper.boardtext`) accepts one in place of its ``grid, total_mines, flags``
arguments and trusts it: it is never checked again. :class:`Observations` is a
stack of boards of one shape, checked in whole-array steps.

Conventions
-----------
``grid`` holds -1 at covered cells and the number 0..8 at revealed ones; ``flags``
marks covered cells known to be mines (trusted: they are not checked against the
numbers); ``total_mines`` counts every mine of the board, flagged ones included.
*Unknown* cells are covered and unflagged; the *frontier* is the unknown cells next
to a revealed cell.

A board is refused with an :class:`~nnsweeper.errors.InvalidBoardError` when its
grid is not a non-empty 2-D array of integers in -1..8, its ``total_mines`` is not
an integer of at least 0, or its flags do not have the grid's shape, are not
boolean (or 0/1), or lie on a revealed cell; and with an
:class:`~nnsweeper.errors.InconsistentBoardError` when the flags outnumber the
mines or the mines left do not fit in the unknown cells. Every message names the
value and the rule it breaks (and, in a stack, the board).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from nnsweeper.errors import InconsistentBoardError, InvalidBoardError
from nnsweeper.grid import dilate

__all__ = [
    "Observation",
    "Observations",
    "as_observation",
    "as_observations",
    "check_alone",
    "check_grid_values",
    "check_flags",
    "validate_board",
]


# --------------------------------------------------------------------------- checks
def _where(index) -> str:
    """A cell's place in an error message: ``(i, j)``, or ``(i, j) of board b`` in a stack."""
    index = [int(v) for v in index]
    cell = f"({index[-2]}, {index[-1]})"
    return cell if len(index) == 2 else f"{cell} of board {index[0]}"


def check_grid_values(g: np.ndarray, name: str = "grid") -> np.ndarray:
    """``g`` (one board or a stack of boards) as a new int8 array, or an error naming the bad value.

    Raises
    ------
    InvalidBoardError
        Values that are not integers (integral floats pass), or outside -1..8.
    """
    if not np.issubdtype(g.dtype, np.integer):
        if not (np.issubdtype(g.dtype, np.floating) and np.all(np.mod(g, 1) == 0)):
            raise InvalidBoardError(
                f"{name} must hold integers (-1 covered, 0..8 revealed); got dtype {g.dtype}"
            )
    bad = (g < -1) | (g > 8)
    if bad.any():
        at = np.argwhere(bad)[0]
        raise InvalidBoardError(
            f"grid values must be -1 (covered) or 0..8; got {g[tuple(at)]} at {_where(at)}"
        )
    return g.astype(np.int8)


def check_flags(flags, g: np.ndarray, owner: str = "grid's") -> np.ndarray:
    """Flags for the board(s) ``g`` as bool (all False for None), or an error naming the rule.

    The result may share memory with ``flags`` (when it is a bool array already).

    Raises
    ------
    InvalidBoardError
        Flags of another shape than ``g``, not boolean (or 0/1), or on a revealed cell.
    """
    if flags is None:
        return np.zeros(g.shape, dtype=bool)
    f = np.asarray(flags)
    if f.shape != g.shape:
        raise InvalidBoardError(f"flags must have the {owner} shape {g.shape}; got {f.shape}")
    if f.dtype != bool:
        if not np.issubdtype(f.dtype, np.integer) or not np.isin(f, (0, 1)).all():
            raise InvalidBoardError(f"flags must be a boolean array (or 0/1); got dtype {f.dtype}")
        f = f.astype(bool)
    on_revealed = f & (g != -1)
    if on_revealed.any():
        raise InvalidBoardError(
            f"flags must be on covered cells; got a flag on revealed {_where(np.argwhere(on_revealed)[0])}"
        )
    return f


def _check_grid(grid) -> np.ndarray:
    """One board's grid as a new int8 array, or an error naming its shape or bad value."""
    g = np.asarray(grid)
    if g.ndim != 2 or g.size == 0:
        raise InvalidBoardError(f"grid must be a non-empty 2-D array; got shape {g.shape}")
    return check_grid_values(g, "grid")


def _check_total(total_mines) -> int:
    """One board's mine count as an int, or an error naming it."""
    if isinstance(total_mines, bool | np.bool_) or not isinstance(total_mines, numbers.Integral):
        raise InvalidBoardError(f"total_mines must be an integer; got {total_mines!r}")
    total_mines = int(total_mines)
    if total_mines < 0:
        raise InvalidBoardError(f"total_mines must be at least 0; got {total_mines}")
    return total_mines


def _check_counts(total_mines: int, n_flags: int, n_unknown: int, where: str = "") -> None:
    """The flags must not outnumber the mines, and the mines left must fit in the unknown cells."""
    if n_flags > total_mines:
        raise InconsistentBoardError(
            f"{where}{n_flags} flags exceed the {total_mines} mines on the board "
            f"(total_mines={total_mines}); flags must not outnumber the mines"
        )
    mines_left = total_mines - n_flags
    if mines_left > n_unknown:
        raise InconsistentBoardError(
            f"{where}{mines_left} mines left (total_mines={total_mines} minus flags) do not fit in "
            f"{n_unknown} covered unflagged cells"
        )


def validate_board(grid, total_mines, flags=None) -> tuple[np.ndarray, int, np.ndarray]:
    """Check a board's form and return it as ``(grid int8, total_mines int, flags bool)``.

    The form only: unlike :meth:`Observation.of`, the mine count is not checked
    against the flags and the covered cells.

    Raises
    ------
    InvalidBoardError
        Wrong shape, values outside -1..8, flags on revealed cells, a negative or
        non-integer mine count.
    """
    g = _check_grid(grid)
    total_mines = _check_total(total_mines)
    return g, total_mines, check_flags(flags, g, "grid's")


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# --------------------------------------------------------------------------- one board
class _Masks:
    """What a board or a stack of boards shows, from ``_cells`` (its grid or grids)."""

    @cached_property
    def covered(self) -> np.ndarray:
        """Covered cells, flagged or not (bool, the grid's shape, read-only)."""
        return _read_only(self._cells == -1)

    @cached_property
    def revealed(self) -> np.ndarray:
        """Revealed cells (bool, the grid's shape, read-only)."""
        return _read_only(self._cells >= 0)

    @cached_property
    def unknown(self) -> np.ndarray:
        """Covered, unflagged cells (bool, the grid's shape, read-only)."""
        return _read_only(self.covered & ~self.flags)

    @cached_property
    def frontier(self) -> np.ndarray:
        """Unknown cells next to a revealed cell (bool, the grid's shape, read-only)."""
        return _read_only(self.unknown & dilate(self.revealed))


@dataclass(frozen=True, eq=False, repr=False)
class Observation(_Masks):
    """One visible board, checked once: the grid, the total mine count and the flags.

    Make one with :meth:`of` (or the constructor, which is the same); it holds
    read-only copies of its arrays, so it can be handed on and kept without being
    checked again.

    Parameters
    ----------
    grid : array_like of int, shape (rows, cols)
        -1 covered, 0..8 revealed (integral floats are accepted).
    total_mines : int
        Mines on the whole board, flagged ones included.
    flags : array_like of bool, shape (rows, cols), optional
        Covered cells known to be mines (0/1 accepted); none when omitted.

    Attributes
    ----------
    grid : ndarray of int8, shape (rows, cols), read-only
    total_mines : int
    flags : ndarray of bool, shape (rows, cols), read-only

    Raises
    ------
    InvalidBoardError
        A grid that is not a non-empty 2-D array of integers in -1..8, a
        ``total_mines`` that is not an integer of at least 0, flags of another shape,
        not boolean, or on a revealed cell.
    InconsistentBoardError
        More flags than mines, or more mines left than covered unflagged cells.
    """

    grid: np.ndarray
    total_mines: int
    flags: np.ndarray | None = None

    def __post_init__(self):
        g = _check_grid(self.grid)
        total = _check_total(self.total_mines)
        f = check_flags(self.flags, g, "grid's")
        if self.flags is not None:
            f = f.copy()  # never share memory with the caller's flags
        _check_counts(total, int(f.sum()), int(((g == -1) & ~f).sum()))
        object.__setattr__(self, "grid", _read_only(g))
        object.__setattr__(self, "total_mines", total)
        object.__setattr__(self, "flags", _read_only(f))

    @classmethod
    def of(cls, grid, total_mines, flags=None) -> Observation:
        """The checked board of ``grid``, ``total_mines`` and ``flags`` (see the class)."""
        return cls(grid, total_mines, flags)

    @classmethod
    def from_checked(cls, grid: np.ndarray, total_mines: int, flags: np.ndarray) -> Observation:
        """An Observation of arrays that are checked already (int8 grid, bool flags), unchecked.

        The arrays become read-only: give arrays the Observation may own (or
        read-only views).
        """
        obs = object.__new__(cls)
        object.__setattr__(obs, "grid", _read_only(grid))
        object.__setattr__(obs, "total_mines", int(total_mines))
        object.__setattr__(obs, "flags", _read_only(flags))
        return obs

    def __reduce__(self):
        return _observation, (self.grid, self.total_mines, self.flags)

    def __repr__(self) -> str:
        rows, cols = self.shape
        return (f"Observation({rows}x{cols}, total_mines={self.total_mines}, flags={self.n_flags}, "
                f"covered={int(self.covered.sum())})")

    def __eq__(self, other) -> bool:
        if not isinstance(other, Observation):
            return NotImplemented
        return (self.total_mines == other.total_mines and self.shape == other.shape
                and np.array_equal(self.grid, other.grid) and np.array_equal(self.flags, other.flags))

    def __hash__(self) -> int:
        return hash((self.total_mines, self.shape, self.grid.tobytes(), self.flags.tobytes()))

    # ----------------------------------------------------------------- what it shows
    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, cols)``."""
        return self.grid.shape

    @property
    def _cells(self) -> np.ndarray:
        return self.grid

    @property
    def n_flags(self) -> int:
        """Flags on the board."""
        return int(self.flags.sum())

    @property
    def mines_left(self) -> int:
        """Mines not accounted for by flags: ``total_mines`` minus the flags."""
        return self.total_mines - self.n_flags


def _observation(grid, total_mines, flags) -> Observation:
    """Unpickle an Observation (its arrays were checked when it was made)."""
    return Observation.from_checked(np.array(grid), total_mines, np.array(flags))


# --------------------------------------------------------------------------- a stack
@dataclass(frozen=True, eq=False, repr=False)
class Observations(_Masks):
    """Visible boards of one shape, stacked and checked in whole-array steps.

    Make one from arrays with :meth:`of` (or the constructor) or from
    :class:`Observation` objects with :meth:`stack`; ``observations[b]`` is board
    ``b`` as an :class:`Observation` (a slice gives an ``Observations``), and
    iterating gives every board.

    Parameters
    ----------
    grids : array_like of int, shape (boards, rows, cols)
        -1 covered, 0..8 revealed.
    total_mines : int or array_like of int, shape (boards,)
        Mines on each board (an int applies to every board).
    flags : array_like of bool, shape (boards, rows, cols), optional
        Per-board flags; none when omitted.

    Attributes
    ----------
    grids : ndarray of int8, shape (boards, rows, cols), read-only
    total_mines : ndarray of int64, shape (boards,), read-only
    flags : ndarray of bool, shape (boards, rows, cols), read-only

    Raises
    ------
    InvalidBoardError, InconsistentBoardError
        As :class:`Observation`, or grids of several shapes; the message names the
        board (``... at (2, 3) of board 1``, ``... for board 1``, ``board 1: ...``).
    """

    grids: np.ndarray
    total_mines: np.ndarray
    flags: np.ndarray | None = None

    def __post_init__(self):
        try:
            g = np.asarray(self.grids)
        except ValueError as exc:
            raise InvalidBoardError(
                f"grids must all have the same shape to be encoded together ({exc})"
            ) from None
        if g.ndim != 3 or g.size == 0:
            raise InvalidBoardError(
                f"grids must be a non-empty 3-D array (boards, rows, cols); got shape {g.shape}"
            )
        g = check_grid_values(g, "grids")
        n = g.shape[0]

        t = np.asarray(self.total_mines)
        if t.dtype == bool or not np.issubdtype(t.dtype, np.integer):
            raise InvalidBoardError(f"total_mines must be integers; got {self.total_mines!r}")
        if t.ndim == 0:
            t = np.full(n, int(t), dtype=np.int64)
        if t.shape != (n,):
            raise InvalidBoardError(f"total_mines must have shape ({n},), one per board; got shape {t.shape}")
        t = t.astype(np.int64)  # a copy
        if (t < 0).any():
            b = int(np.argmax(t < 0))
            raise InvalidBoardError(f"total_mines must be at least 0; got {t[b]} for board {b}")

        f = check_flags(self.flags, g, "grids'")
        if self.flags is not None:
            f = f.copy()
        n_flags = f.sum(axis=(1, 2))
        n_unknown = ((g == -1) & ~f).sum(axis=(1, 2))
        bad = (n_flags > t) | (t - n_flags > n_unknown)
        if bad.any():
            b = int(np.argmax(bad))
            _check_counts(int(t[b]), int(n_flags[b]), int(n_unknown[b]), where=f"board {b}: ")
        object.__setattr__(self, "grids", _read_only(g))
        object.__setattr__(self, "total_mines", _read_only(t))
        object.__setattr__(self, "flags", _read_only(f))

    @classmethod
    def of(cls, grids, total_mines, flags=None) -> Observations:
        """The checked stack of ``grids``, ``total_mines`` and ``flags`` (see the class)."""
        return cls(grids, total_mines, flags)

    @classmethod
    def stack(cls, observations: Sequence[Observation]) -> Observations:
        """Stack boards that are checked already (no check of their contents).

        Parameters
        ----------
        observations : sequence of Observation
            At least one, all of one shape.

        Raises
        ------
        InvalidBoardError
            An empty sequence, an item that is not an :class:`Observation`, or boards
            of several shapes (the message names the first board of another shape).
        """
        if isinstance(observations, Observations):
            return observations
        if not isinstance(observations, Sequence) or isinstance(observations, str | bytes):
            raise InvalidBoardError(
                f"observations must be a sequence of Observation; got {type(observations).__name__}"
            )
        if not observations:
            raise InvalidBoardError("observations must hold at least one board; got none")
        for b, obs in enumerate(observations):
            if not isinstance(obs, Observation):
                raise InvalidBoardError(f"board {b}: expected an Observation; got {type(obs).__name__}")
            if obs.shape != observations[0].shape:
                raise InvalidBoardError(
                    f"board {b}: boards must all have one shape to be stacked; got {obs.shape}, "
                    f"board 0 is {observations[0].shape}"
                )
        return cls.from_checked(
            np.stack([o.grid for o in observations]),
            np.array([o.total_mines for o in observations], dtype=np.int64),
            np.stack([o.flags for o in observations]),
        )

    @classmethod
    def from_checked(cls, grids: np.ndarray, total_mines: np.ndarray, flags: np.ndarray) -> Observations:
        """A stack of checked arrays (int8, int64, bool) that it may own, unchecked."""
        obs = object.__new__(cls)
        object.__setattr__(obs, "grids", _read_only(grids))
        object.__setattr__(obs, "total_mines", _read_only(total_mines))
        object.__setattr__(obs, "flags", _read_only(flags))
        return obs

    def __reduce__(self):
        return _observations, (self.grids, self.total_mines, self.flags)

    def __len__(self) -> int:
        return self.grids.shape[0]

    def __getitem__(self, index) -> Observation | Observations:
        if isinstance(index, slice):
            return Observations.from_checked(self.grids[index], self.total_mines[index], self.flags[index])
        if isinstance(index, bool | np.bool_) or not isinstance(index, numbers.Integral):
            raise TypeError(f"boards are indexed by an integer or a slice; got {type(index).__name__}")
        return Observation.from_checked(self.grids[index], self.total_mines[index], self.flags[index])

    def __iter__(self) -> Iterator[Observation]:
        for b in range(len(self)):
            yield self[b]

    def __repr__(self) -> str:
        n, rows, cols = self.shape
        return f"Observations({n} boards of {rows}x{cols})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Observations):
            return NotImplemented
        return (self.shape == other.shape and np.array_equal(self.total_mines, other.total_mines)
                and np.array_equal(self.grids, other.grids) and np.array_equal(self.flags, other.flags))

    __hash__ = None  # type: ignore[assignment]

    # ----------------------------------------------------------------- what they show
    @property
    def shape(self) -> tuple[int, int, int]:
        """``(boards, rows, cols)``."""
        return self.grids.shape

    @property
    def _cells(self) -> np.ndarray:
        return self.grids

    @property
    def mines_left(self) -> np.ndarray:
        """Per board, ``total_mines`` minus the flags (int64 (boards,))."""
        return self.total_mines - self.flags.sum(axis=(1, 2))


def _observations(grids, total_mines, flags) -> Observations:
    """Unpickle an Observations (its arrays were checked when it was made)."""
    return Observations.from_checked(np.array(grids), np.array(total_mines), np.array(flags))


# --------------------------------------------------------------------------- either form
def check_alone(kind: str, **arguments) -> None:
    """Refuse arguments given beside a board that carries its own (none may be other than None).

    ``check_alone("Observation", total_mines=t, flags=f)`` is what a function taking
    ``grid, total_mines, flags`` calls when ``grid`` is an Observation.
    """
    given = [name for name, value in arguments.items() if value is not None]
    if given:
        carried = " and ".join(arguments)
        refuse = "neither" if len(arguments) > 1 else f"no {carried}"
        raise InvalidBoardError(
            f"an {kind} carries its own {carried}: give {refuse} with it; got {' and '.join(given)}"
        )


def as_observation(grid, total_mines=None, flags=None) -> Observation:
    """The board of the arguments of a function that takes ``grid, total_mines, flags``.

    Parameters
    ----------
    grid : Observation or array_like of int, shape (rows, cols)
        A checked board (then ``total_mines`` and ``flags`` must be None), or a raw grid.
    total_mines : int, optional
        With a raw grid: mines on the board, flagged ones included (required).
    flags : array_like of bool, shape (rows, cols), optional
        With a raw grid: its flags.

    Returns
    -------
    Observation
        ``grid`` itself when it is one (not checked again), else ``Observation.of(grid,
        total_mines, flags)``.

    Raises
    ------
    InvalidBoardError, InconsistentBoardError
        As :class:`Observation`; or ``total_mines`` or ``flags`` given with an Observation.
    """
    if isinstance(grid, Observation):
        check_alone("Observation", total_mines=total_mines, flags=flags)
        return grid
    return Observation(grid, total_mines, flags)


def as_observations(grids, total_mines=None, flags=None) -> Observations:
    """The boards of the arguments of a function that takes ``grids, total_mines, flags``.

    Parameters
    ----------
    grids : Observations, sequence of Observation, or array_like of int, shape (boards, rows, cols)
        Checked boards (then ``total_mines`` and ``flags`` must be None), or raw grids.
    total_mines : int or array_like of int, shape (boards,), optional
        With raw grids: mines on each board (required).
    flags : array_like of bool, shape (boards, rows, cols), optional
        With raw grids: their flags.

    Returns
    -------
    Observations
        Checked boards as they are (not checked again), raw ones checked.

    Raises
    ------
    InvalidBoardError, InconsistentBoardError
        As :class:`Observations`; or ``total_mines`` or ``flags`` given with checked boards.
    """
    if isinstance(grids, Observations):
        check_alone("Observations", total_mines=total_mines, flags=flags)
        return grids
    if isinstance(grids, Sequence) and grids and all(isinstance(o, Observation) for o in grids):
        check_alone("Observation", total_mines=total_mines, flags=flags)
        return Observations.stack(grids)
    return Observations(grids, total_mines, flags)
