"""Boards typed as text, and mine probabilities printed as a grid.

The text format has one board row per line: ``.`` a covered cell, ``F`` (or ``f``)
a flag, a digit ``0``-``8`` a revealed number. Spaces between cells are allowed, so
``1.F`` and ``1 . F`` are the same row. Blank lines before and after the board and
whitespace around each line are ignored::

    1 1 .
    . F .
    . . .

A board has at most :data:`~nnsweeper.game.MAX_ROWS` rows and
:data:`~nnsweeper.game.MAX_COLS` cells per row, and its text at most
:data:`MAX_TEXT_CHARS` characters.
"""

from __future__ import annotations

import math

import numpy as np

from nnsweeper.errors import BoardParseError, InvalidBoardError
from nnsweeper.game import MAX_COLS, MAX_ROWS
from nnsweeper.observation import Observation, check_alone, check_flags, check_grid_values

__all__ = ["MAX_TEXT_CHARS", "format_board", "format_probabilities", "parse_board", "parse_observation"]

#: Most characters of a board's text (16 Mi). The largest board, 1000x1000 with a
#: space between cells, takes 2 million; the rest leaves room for generous padding.
#: Readers (``nnsweeper analyze``) stop reading a file or stdin past this size, so
#: a huge or endless input is refused instead of being read into memory.
MAX_TEXT_CHARS = 16 * 2**20

_COVERED = "."
_FLAGS = "Ff"


def parse_board(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Read a board from text.

    Parameters
    ----------
    text : str
        The board, one row per line (see the module docstring).

    Returns
    -------
    grid : ndarray of int8, shape (rows, cols)
        -1 covered (flagged or not), 0..8 revealed.
    flags : ndarray of bool, shape (rows, cols)
        True at flags. With the board's mine count, ``Observation.of(grid,
        total_mines, flags)`` is the board (see :func:`parse_observation`).

    Raises
    ------
    BoardParseError
        An unknown character, a blank line inside the board, rows of unequal length,
        or no board at all; the message names the line and column (both from 1, as
        in the text) and the character. Also a text of more than
        :data:`MAX_TEXT_CHARS` characters, or a board of more than
        :data:`~nnsweeper.game.MAX_ROWS` rows or :data:`~nnsweeper.game.MAX_COLS`
        columns.
    """
    if not isinstance(text, str):
        raise BoardParseError(f"board text must be a string; got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise BoardParseError(f"board text must be at most {MAX_TEXT_CHARS} characters; got {len(text)}")
    lines = text.splitlines()
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]
    if not numbered:
        raise BoardParseError("the board is empty: expected rows of '.', 'F' and digits 0-8")
    first, last = numbered[0][0], numbered[-1][0]
    if last - first + 1 > MAX_ROWS:
        raise BoardParseError(f"a board has at most {MAX_ROWS} rows; got {last - first + 1} "
                              f"(lines {first} to {last})")

    rows: list[list[int]] = []
    flag_rows: list[list[bool]] = []
    width = None
    width_line = None
    for n in range(first, last + 1):
        line = lines[n - 1]
        if not line.strip():
            raise BoardParseError(f"line {n}: blank line inside the board")
        cells: list[int] = []
        flags: list[bool] = []
        for col, ch in enumerate(line, start=1):
            if ch.isspace():
                continue
            if ch == _COVERED:
                cells.append(-1)
                flags.append(False)
            elif ch in _FLAGS:
                cells.append(-1)
                flags.append(True)
            elif ch in "012345678":
                cells.append(int(ch))
                flags.append(False)
            else:
                raise BoardParseError(
                    f"line {n}, column {col}: unexpected character {ch!r}; "
                    "expected '.' (covered), 'F' (flag) or a digit 0-8"
                )
            if len(cells) > MAX_COLS:
                raise BoardParseError(
                    f"line {n}: a board row has at most {MAX_COLS} cells; got more than that"
                )
        if width is None:
            width, width_line = len(cells), n
        elif len(cells) != width:
            raise BoardParseError(
                f"line {n}: row has {len(cells)} cells but line {width_line} has {width}; "
                "all rows must have the same length"
            )
        rows.append(cells)
        flag_rows.append(flags)
    return np.array(rows, dtype=np.int8), np.array(flag_rows, dtype=bool)


def parse_observation(text: str, total_mines: int) -> Observation:
    """Read a board from text, with its mine count, as an :class:`~nnsweeper.observation.Observation`.

    Parameters
    ----------
    text : str
        The board, as for :func:`parse_board`.
    total_mines : int
        Mines on the whole board, flagged ones included.

    Raises
    ------
    BoardParseError
        As :func:`parse_board`.
    InvalidBoardError, InconsistentBoardError
        A bad mine count, more flags than mines, or more mines left than covered
        unflagged cells (see :class:`~nnsweeper.observation.Observation`).
    """
    grid, flags = parse_board(text)
    return Observation.of(grid, total_mines, flags)


def format_board(grid, flags=None) -> str:
    """Write a board in the text format of :func:`parse_board` (cells separated by spaces).

    Parameters
    ----------
    grid : Observation or array_like of int, shape (rows, cols)
        The board (then ``flags`` is None), or its grid: -1 covered, 0..8 revealed.
    flags : array_like of bool, shape (rows, cols), optional
        Flags, shown as ``F`` (on covered cells only).

    Raises
    ------
    InvalidBoardError
        A grid that is not a non-empty 2-D array of -1..8, or flags of another
        shape, not boolean or on a revealed cell.
    """
    g, f = _check_grid(grid, flags)
    out = []
    for i in range(g.shape[0]):
        out.append(" ".join(
            "F" if f[i, j] else (_COVERED if g[i, j] < 0 else str(int(g[i, j])))
            for j in range(g.shape[1])
        ))
    return "\n".join(out)


def _percent(p: float) -> str:
    """A probability as a percentage that never rounds a possibility into a certainty."""
    if p <= 0.0:
        return "0.0"
    if p >= 1.0:
        return "100.0"
    if p < 0.0005:
        return "<0.1"
    if p > 0.9995:
        return ">99.9"
    return f"{100 * p:.1f}"


def format_probabilities(grid, flags=None, probs=None, *, interior_probability=None) -> str:
    """A grid of mine probabilities in percent, one board row per line.

    Covered cells show their probability (``12.5``; ``0.0`` and ``100.0`` only when
    certain, ``<0.1`` and ``>99.9`` for near-certainties), revealed cells their number
    and flags ``F``. Rows and columns are numbered from 0, as ``(row, col)`` elsewhere.

    Parameters
    ----------
    grid : Observation or array_like of int, shape (rows, cols)
        The board, or its grid: -1 covered, 0..8 revealed. With an Observation the
        probabilities may come second: ``format_probabilities(observation, probs)``.
    flags : array_like of bool, shape (rows, cols), or None
        With a grid: its flags.
    probs : array_like of float, shape (rows, cols)
        P(mine) per cell, e.g. from :func:`nnsweeper.mine_probabilities`.
    interior_probability : float, optional
        P(mine) of every covered cell away from the numbers; added to the footer.

    Returns
    -------
    str
        The grid followed by a footer: how many covered cells are certain mines,
        certainly safe, and the interior probability when given.

    Raises
    ------
    InvalidBoardError
        A malformed grid or flags (as for :func:`format_board`), or no ``probs``.
    ValueError
        ``probs`` of another shape than the grid.
    """
    if isinstance(grid, Observation) and probs is None:
        flags, probs = None, flags
    if probs is None:
        raise InvalidBoardError("probs must be given: the P(mine) of every cell of the grid; got None")
    g, f = _check_grid(grid, flags)
    p = np.asarray(probs, dtype=float)
    if p.shape != g.shape:
        raise ValueError(f"probs must have the grid's shape {g.shape}; got {p.shape}")
    rows, cols = g.shape
    cells = [
        [
            "F" if f[i, j] else (str(int(g[i, j])) if g[i, j] >= 0 else _percent(p[i, j]))
            for j in range(cols)
        ]
        for i in range(rows)
    ]
    width = max(len(str(cols - 1)), *(len(c) for row in cells for c in row))
    label = len(str(rows - 1))
    lines = [" " * label + "  " + "  ".join(str(j).rjust(width) for j in range(cols))]
    for i, row in enumerate(cells):
        lines.append(str(i).rjust(label) + "  " + "  ".join(c.rjust(width) for c in row))

    unknown = (g < 0) & ~f
    mines = int(np.sum(unknown & (p >= 1.0)))
    safe = int(np.sum(unknown & (p <= 0.0)))
    footer = [f"P(mine) in percent; {int(unknown.sum())} covered unflagged cells: "
              f"{safe} certainly safe, {mines} certainly mines"]
    if interior_probability is not None and not math.isnan(interior_probability):
        footer.append(
            f"cells away from the numbers (interior): {_percent(interior_probability)}% each"
        )
    return "\n".join(lines + [""] + footer)


def _check_grid(grid, flags) -> tuple[np.ndarray, np.ndarray]:
    """The grid (int8) and flags (bool) of a board to print: an Observation's as they
    are, a raw grid's and flags checked as for an Observation (the mine count aside)."""
    if isinstance(grid, Observation):
        check_alone("Observation", flags=flags)
        return grid.grid, grid.flags
    g = np.asarray(grid)
    if g.ndim != 2 or g.size == 0:
        raise InvalidBoardError(f"grid must be a non-empty 2-D array; got shape {g.shape}")
    g = check_grid_values(g, "grid")
    return g, check_flags(flags, g, "grid's")
