"""Boards typed as text, and mine probabilities printed as a grid.

The text format has one board row per line: ``.`` a covered cell, ``F`` (or ``f``)
a flag, a digit ``0``-``8`` a revealed number. Spaces between cells are allowed, so
``1.F`` and ``1 . F`` are the same row. Blank lines before and after the board and
whitespace around each line are ignored::

    1 1 .
    . F .
    . . .

The text format of the MineSweeperProb solver is read too: a first line
``WIDTHxHEIGHTxMINES`` (columns, rows, mines on the board), then one row per line
with ``H`` (or ``h``) a covered cell, ``M`` a flagged mine, ``m`` a covered cell
(a mine the file's author knew of; a player does not see it) and the digits::

    3x3x2
    11H
    HMH
    HHH

Such a text carries its mine count (:func:`parse_position`).

A board has at most :data:`~nnsweeper.game.MAX_ROWS` rows and
:data:`~nnsweeper.game.MAX_COLS` cells per row, and its text at most
:data:`MAX_TEXT_CHARS` characters.

:func:`format_analysis` prints what the exact engine found about a board (the grid
of ``nnsweeper analyze``): every cell marked by what it is, so that a revealed number
never reads as a probability::

          0     1     2
    0   [1]  33.3  20.0
    1  33.3  33.3  20.0
    2  20.0  20.0  20.0

``[n]`` a revealed number, ``F`` a flag, ``safe`` and ``mine`` a covered cell the
engine proves safe (P(mine) = 0 exactly) or a mine (P(mine) = 1), and a bare number
the P(mine) of any other covered cell, in percent (see :data:`LEGEND`).
"""

from __future__ import annotations

import math
import re

import numpy as np

from nnsweeper.errors import BoardParseError, InvalidBoardError
from nnsweeper.game import MAX_COLS, MAX_ROWS
from nnsweeper.observation import Observation, check_alone, check_flags, check_grid_values

__all__ = [
    "LEGEND",
    "MAX_TEXT_CHARS",
    "format_analysis",
    "format_board",
    "format_count",
    "format_probabilities",
    "parse_board",
    "parse_observation",
    "parse_position",
]

#: Most characters of a board's text (16 Mi). The largest board, 1000x1000 with a
#: space between cells, takes 2 million; the rest leaves room for generous padding.
#: Readers (``nnsweeper analyze``) stop reading a file or stdin past this size, so
#: a huge or endless input is refused instead of being read into memory.
MAX_TEXT_CHARS = 16 * 2**20

_COVERED = "."
_FLAGS = "Ff"

#: The legend printed under :func:`format_analysis`'s grid.
LEGEND = ("legend: [n] revealed number | F flag | safe, mine: proven by the engine (P(mine) = 0, 1) "
          "| 12.5: P(mine) in % | rows, cols from 0")

# Marks of format_analysis and their ANSI colours (used only when asked for).
_SAFE, _MINE = "safe", "mine"
_STYLES = {"number": "1", "flag": "33", "safe": "32", "mine": "31"}
# Layout counts with at most this many digits are printed in full.
_EXACT_DIGITS = 15


#: The first line of a MineSweeperProb board text: WIDTHxHEIGHTxMINES.
_HEADER = re.compile(r"\s*(\d{1,7})\s*x\s*(\d{1,7})\s*x\s*(\d{1,13})\s*")
#: Cells of each format: character -> (grid value, flag); digits are added below.
_ALPHABETS = {
    "nnsweeper": ({_COVERED: (-1, False), **{f: (-1, True) for f in _FLAGS}},
                  "'.' (covered), 'F' (flag) or a digit 0-8"),
    "MineSweeperProb": ({"H": (-1, False), "h": (-1, False), "m": (-1, False), "M": (-1, True)},
                        "'H' (covered), 'M' (flagged mine), 'm' (covered) or a digit 0-8"),
}


def parse_position(text: str) -> tuple[np.ndarray, np.ndarray, int | None]:
    """Read a board from text in either format; ``(grid, flags, mines)``.

    ``mines`` is the count a MineSweeperProb header gives (``WIDTHxHEIGHTxMINES``),
    None for nnsweeper's own format, which does not carry one. Raises as
    :func:`parse_board`, and when the rows differ from the header's size.
    """
    if not isinstance(text, str):
        raise BoardParseError(f"board text must be a string; got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise BoardParseError(f"board text must be at most {MAX_TEXT_CHARS} characters; got {len(text)}")
    lines = text.splitlines()
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    header = _HEADER.fullmatch(lines[first]) if first is not None else None
    if header is None:
        grid, flags = _parse_rows(lines, "nnsweeper", 0)
        return grid, flags, None
    width, height, mines = (int(v) for v in header.groups())
    grid, flags = _parse_rows(lines[first + 1:], "MineSweeperProb", first + 1)
    if grid.shape != (height, width):
        raise BoardParseError(f"line {first + 1}: the header says {width} columns and {height} rows "
                              f"({lines[first].strip()}); the board has {grid.shape[1]} and {grid.shape[0]}")
    return grid, flags, mines


def parse_board(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Read a board from text (either format; see :func:`parse_position` for its mine count).

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
    grid, flags, _ = parse_position(text)
    return grid, flags


def _parse_rows(lines: list[str], fmt: str, skipped: int) -> tuple[np.ndarray, np.ndarray]:
    """The grid and flags of a board's rows in format ``fmt``; ``skipped`` lines came before them."""
    alphabet, expected = _ALPHABETS[fmt]
    numbered = [(n, line) for n, line in enumerate(lines, start=skipped + 1) if line.strip()]
    if not numbered:
        raise BoardParseError(f"the board is empty: expected rows of {expected.replace(' or ', ', ')}")
    first, last = numbered[0][0], numbered[-1][0]
    if last - first + 1 > MAX_ROWS:
        raise BoardParseError(f"a board has at most {MAX_ROWS} rows; got {last - first + 1} "
                              f"(lines {first} to {last})")

    rows: list[list[int]] = []
    flag_rows: list[list[bool]] = []
    width = None
    width_line = None
    for n in range(first, last + 1):
        line = lines[n - 1 - skipped]
        if not line.strip():
            raise BoardParseError(f"line {n}: blank line inside the board")
        cells: list[int] = []
        flags: list[bool] = []
        for col, ch in enumerate(line, start=1):
            if ch.isspace():
                continue
            if ch in alphabet:
                value, flag = alphabet[ch]
                cells.append(value)
                flags.append(flag)
            elif ch in "012345678":
                cells.append(int(ch))
                flags.append(False)
            else:
                raise BoardParseError(
                    f"line {n}, column {col}: unexpected character {ch!r}; expected {expected}")
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


def parse_observation(text: str, total_mines: int | None = None) -> Observation:
    """Read a board from text, with its mine count, as an :class:`~nnsweeper.observation.Observation`.

    Parameters
    ----------
    text : str
        The board, as for :func:`parse_board`.
    total_mines : int, optional
        Mines on the whole board, flagged ones included; may be left out when the
        text carries the count (a MineSweeperProb header), and must agree with it.

    Raises
    ------
    BoardParseError
        As :func:`parse_board`; no mine count at all, or one that differs from the header's.
    InvalidBoardError, InconsistentBoardError
        A bad mine count, more flags than mines, or more mines left than covered
        unflagged cells (see :class:`~nnsweeper.observation.Observation`).
    """
    grid, flags, carried = parse_position(text)
    if total_mines is None and carried is None:
        raise BoardParseError("the board text does not say how many mines the board has: give the count "
                              "(--mines)")
    if total_mines is not None and carried is not None and total_mines != carried:
        raise BoardParseError(
            f"the board text's header says {carried} mines; the count given is {total_mines}")
    return Observation.of(grid, carried if total_mines is None else total_mines, flags)


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
    lines = _table(cells)

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


def format_analysis(board: Observation, analysis=None, *, color: bool = False) -> str:
    """What the exact engine found about a board: a marked grid, a legend and the counts.

    Every cell is marked by what it is: ``[n]`` a revealed number, ``F`` a flag,
    ``safe`` a covered cell that no consistent layout mines (P(mine) = 0 exactly),
    ``mine`` an unflagged cell that every layout mines (P(mine) = 1), and any other
    covered cell its P(mine) in percent (``<0.1`` and ``>99.9`` for near-certainties,
    never rounded into a certainty). Rows and columns are numbered from 0, as
    ``(row, col)`` elsewhere. Under the grid: the :data:`LEGEND`, the mines left, the
    covered cells (frontier and interior, proven safe and proven mines), the interior
    probability and the number of consistent layouts (:func:`format_count`).

    Parameters
    ----------
    board : Observation
        The board (e.g. from :func:`parse_observation`).
    analysis : BoardAnalysis, optional
        The engine's analysis of ``board`` (:func:`nnsweeper.analyze`); computed when
        omitted.
    color : bool, default False
        Colour the marks with ANSI escapes (numbers bold, flags yellow, ``safe`` green,
        ``mine`` red). The plain text says the same without them.

    Returns
    -------
    str
        The text, without a final newline.

    Raises
    ------
    InvalidBoardError
        ``board`` is not an Observation, or ``analysis`` is of a board of another shape.
    InconsistentBoardError, EngineLimitError
        As :func:`nnsweeper.analyze`, when ``analysis`` is omitted.
    """
    if not isinstance(board, Observation):
        raise InvalidBoardError(
            f"board must be an Observation (e.g. parse_observation(text, total_mines)); "
            f"got {type(board).__name__}"
        )
    if analysis is None:
        from nnsweeper.engine import analyze

        analysis = analyze(board)
    p = np.asarray(analysis.probabilities, dtype=float)
    if p.shape != board.shape:
        raise InvalidBoardError(f"analysis must be of a board of shape {board.shape}; got shape {p.shape}")
    g, f = board.grid, board.flags
    unknown = (g < 0) & ~f
    cells = []
    for i in range(g.shape[0]):
        row = []
        for j in range(g.shape[1]):
            if f[i, j]:
                row.append(("F", "flag"))
            elif g[i, j] >= 0:
                row.append((f"[{int(g[i, j])}]", "number"))
            elif p[i, j] == 0.0:
                row.append((_SAFE, "safe"))
            elif p[i, j] == 1.0:
                row.append((_MINE, "mine"))
            else:
                row.append((_percent(p[i, j]), None))
        cells.append(row)
    lines = _table(cells, color=color)

    n_unknown = int(unknown.sum())
    n_frontier = int((unknown & analysis.frontier).sum())
    n_safe = int((unknown & (p == 0.0)).sum())
    n_mines = int((unknown & (p == 1.0)).sum())
    interior = n_unknown - n_frontier
    facts = [
        f"mines left: {analysis.mines_left} ({board.total_mines} on the board, {board.n_flags} flagged)",
        f"covered unflagged cells: {n_unknown} ({n_frontier} next to a number, {interior} interior); "
        f"proven: {n_safe} safe, {n_mines} {'mine' if n_mines == 1 else 'mines'}",
    ]
    ip = analysis.interior_probability
    if ip is None or math.isnan(ip):
        facts.append("interior P(mine): none (no covered unflagged cell away from the numbers)")
    else:
        facts.append(f"interior P(mine): {ip:.4g} ({_percent(ip)}%) for each of the {interior} cells "
                     "away from the numbers")
    facts.append(f"consistent layouts: {format_count(analysis.layouts)}")
    return "\n".join([*lines, LEGEND, "", *facts])


def format_count(n: int) -> str:
    """A count of layouts: in full up to 15 digits, else in scientific notation with its log.

    Parameters
    ----------
    n : int
        At least 0; any size (a Python int may have more digits than ``str`` prints).

    Returns
    -------
    str
        ``"36 (exactly)"``, or ``"about 1.235e+45 (ln = 104.22)"``: three decimals of
        the mantissa and the natural log.

    Raises
    ------
    ValueError
        ``n`` is not an integer of at least 0.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"a count of layouts must be an integer of at least 0; got {n!r}")
    n = int(n)
    if n < 10**_EXACT_DIGITS:
        return f"{n} (exactly)"
    log10 = math.log10(n)  # accurate for ints of any size; str(n) may refuse a huge one
    exponent = math.floor(log10)
    mantissa = round(10 ** (log10 - exponent), 3)
    if mantissa >= 10:
        mantissa, exponent = 1.0, exponent + 1
    return f"about {mantissa:.3f}e+{exponent} (ln = {math.log(n):.2f})"


def _table(cells, *, color: bool = False) -> list[str]:
    """Grid lines of cell texts, columns right-aligned, with row and column numbers.

    ``cells`` holds strings, or ``(text, style)`` pairs whose style (a key of
    :data:`_STYLES`, or None) colours the text when ``color`` is set.
    """
    cells = [[c if isinstance(c, tuple) else (c, None) for c in row] for row in cells]
    rows, cols = len(cells), len(cells[0])
    width = max(len(str(cols - 1)), *(len(text) for row in cells for text, _ in row))
    label = len(str(rows - 1))

    def show(text: str, style) -> str:
        padded = text.rjust(width)
        if color and style is not None:
            return f"\x1b[{_STYLES[style]}m{padded}\x1b[0m"
        return padded

    lines = [" " * label + "  " + "  ".join(str(j).rjust(width) for j in range(cols))]
    for i, row in enumerate(cells):
        lines.append(str(i).rjust(label) + "  " + "  ".join(show(t, s) for t, s in row))
    return lines


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
