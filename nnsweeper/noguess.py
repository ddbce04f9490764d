"""Boards that never need a guess, certified by the exact engine with the mine count.

A layout is *no-guess* from a first click when a player who reveals only cells proved
safe wins it: from the first click to the end, every position has a cell that no
layout consistent with what is shown (the numbers and the total mine count) makes a
mine. :func:`certify` decides it with :func:`~nnsweeper.engine.analyze`, which counts
every layout exactly, so the global mine count proves what a local solver cannot (and
no pattern catalogue stands in for a proof). Revealing proved-safe cells in any order
reaches the same end (a cell proved safe stays proved safe as more is shown), so the
certificate reveals every such cell of a position at once.

:func:`no_guess_board` draws such layouts, seeded, in two modes:

``"uniform"``
    Rejection: layouts are drawn as :class:`~nnsweeper.game.Game` draws them (uniformly
    among those that honour the first-click rule) until one is certified. Every no-guess
    layout of the rules is equally likely. It slows down sharply with density (about 1
    expert layout in 20 needs no guess; see ``benchmarks/bench_noguess.py``).
``"fast"``
    Repair: one drawn layout is certified; where it stalls, the mines among the covered
    neighbours of one number that still has some (chosen at random) are moved to covered
    cells away from everything shown (or, when there is no room there, mines from far
    away fill those neighbours), and the layout is certified again from the first click.
    Bias: the moves push mines off the region the first clicks open, so compared with
    ``uniform`` its layouts hold fewer mines next to the first click's region and more in
    the cells revealed last, and more of its numbers are "all covered neighbours safe" or
    "all mines".

Both stop at ``max_tries`` certifications (and at ``time_limit`` seconds, if given) with
:class:`NoGuessBudgetError`, never with a layout that needs a guess. The layout returned
is a function of the arguments (the seed's draws, then the certifications in order):
with a ``time_limit`` only whether one is found in time depends on the machine.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from nnsweeper.errors import EngineLimitError, InvalidRulesError, NnsweeperError
from nnsweeper.grid import dilate, neighbour_sum, open_cells, openings

__all__ = ["MODES", "Certificate", "NoGuessBudgetError", "certify", "format_layouts", "no_guess_board",
           "parse_layouts"]

#: The generators' modes (see the module).
MODES = ("uniform", "fast")
#: Certifications :func:`no_guess_board` tries by default before it gives up.
MAX_TRIES = 100_000
#: Bytes of the boards found that a process keeps (bit-packed), so that the solvers of one
#: evaluation, which play the same games one after the other, certify each board once.
CACHE_BYTES = 32 << 20
_CACHE: OrderedDict = OrderedDict()
_CACHE_LOCK = threading.Lock()
_cached_bytes = [0]


class NoGuessBudgetError(NnsweeperError, RuntimeError):
    """:func:`no_guess_board` spent its budget without a certified layout."""


@dataclass(frozen=True)
class Certificate:
    """What :func:`certify` found.

    Attributes
    ----------
    no_guess : bool
        Proved-safe cells alone win the game from the first click.
    steps : int
        Positions looked at (each revealed every cell proved safe in it).
    revealed : ndarray of bool
        The cells revealed when the certificate ended (every safe cell when ``no_guess``).
    known_mines : ndarray of bool
        The mines proved by then.
    """

    no_guess: bool
    steps: int
    revealed: np.ndarray
    known_mines: np.ndarray


def _check_layout(mine) -> np.ndarray:
    mine = np.asarray(mine)
    if mine.ndim != 2 or mine.dtype != bool or 0 in mine.shape:
        raise InvalidRulesError(
            f"a layout must be a 2-D array of bool; got {mine.dtype} of shape {mine.shape}")
    return mine


def _check_cell(cell, shape) -> tuple[int, int]:
    rows, cols = shape
    try:
        i, j = cell
    except (TypeError, ValueError):
        raise InvalidRulesError(f"first_click must be a (row, col) cell; got {cell!r}") from None
    for name, v, hi in (("row", i, rows), ("col", j, cols)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or not 0 <= v < hi:
            raise InvalidRulesError(
                f"first_click {name} must be an integer in [0, {hi}) for a {rows}x{cols} board; got {v!r}")
    return int(i), int(j)


def certify(mine, first_click) -> Certificate:
    """Whether ``mine`` (bool layout) is won from ``first_click`` by revealing proved-safe cells only.

    The proof uses the exact engine with the layout's mine count; a position whose
    frontier is past the engine's bounds (:class:`~nnsweeper.errors.EngineLimitError`)
    counts as one that needs a guess, so a certificate is never given on less than a proof.

    Raises
    ------
    InvalidRulesError
        A malformed layout, a first click off the board or on a mine.
    """
    from nnsweeper.engine import analyze
    from nnsweeper.observation import Observation

    mine = _check_layout(mine)
    i, j = _check_cell(first_click, mine.shape)
    if mine[i, j]:
        raise InvalidRulesError(f"first_click ({i}, {j}) holds a mine in this layout")
    counts, labels = openings(mine)
    total = int(mine.sum())
    safe_cells = mine.size - total
    revealed = np.zeros(mine.shape, dtype=bool)
    known = np.zeros(mine.shape, dtype=bool)
    start = np.zeros(mine.shape, dtype=bool)
    start[i, j] = True
    open_cells(revealed, start, labels)
    steps = 0
    while int(revealed.sum()) < safe_cells:
        steps += 1
        grid = np.where(revealed, counts, -1).astype(np.int8)
        try:
            a = analyze(Observation.from_checked(grid, total, known.copy()))
        except EngineLimitError:
            return Certificate(False, steps, revealed, known)
        known |= a.mines
        safe = a.safe
        if not safe.any():
            return Certificate(False, steps, revealed, known)
        open_cells(revealed, safe, labels)
    return Certificate(True, steps, revealed, known)


def _rng(seed: int) -> np.random.Generator:
    """The generator of a board's draws and moves: a stream of the seed of its own."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))


def no_guess_board(rows: int, cols: int, mines: int, first_click=(0, 0), seed: int = 0, *,
                   mode: str = "uniform", rule: str = "zero", max_tries: int = MAX_TRIES,
                   time_limit: float | None = None) -> np.ndarray:
    """A mine layout won from ``first_click`` without a guess, certified by :func:`certify`.

    Parameters
    ----------
    rows, cols, mines : int
        The board, checked as :class:`~nnsweeper.game.Rules` checks it under ``rule``.
    first_click : (int, int), default=(0, 0)
        The first cell revealed.
    seed : int, default=0
        Non-negative; the same arguments give the same layout.
    mode : {"uniform", "fast"}, default="uniform"
        Rejection (every no-guess layout equally likely) or repair (much faster on dense
        boards, with the bias the module describes).
    rule : {"zero", "safe"}, default="zero"
        The first click's rule: an opening (no mine in its 3x3 block) or only the cell safe.
    max_tries : int, default=100_000
        Most certifications (layouts drawn, or repairs) before giving up.
    time_limit : float or None, default=None
        Also give up after this many seconds (a budget in time: whether a layout is found
        then depends on the machine, never which one).

    Returns
    -------
    ndarray of bool, shape (rows, cols)
        True where a mine is.

    Raises
    ------
    InvalidRulesError
        Bad sizes, counts, cell, seed, mode or budget.
    NoGuessBudgetError
        No certified layout within the budget (say which and how far it got).
    """
    from nnsweeper.errors import check_int
    from nnsweeper.game import Game, Rules

    if rule not in ("zero", "safe"):
        raise InvalidRulesError(f"rule must be 'zero' or 'safe' for a no-guess board; got {rule!r}")
    if mode not in MODES:
        raise InvalidRulesError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    rules = Rules(rows, cols, mines, rule)
    cell = _check_cell(first_click, (rules.rows, rules.cols))
    max_tries = check_int("max_tries", max_tries, 1, InvalidRulesError)
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, int | float)
                                   or not time_limit > 0):
        raise InvalidRulesError(
            f"time_limit must be a positive number of seconds or None; got {time_limit!r}")
    seed = Game._check_seed(seed)
    key = (rules.rows, rules.cols, rules.mines, cell, seed, mode, rule)
    with _CACHE_LOCK:
        packed = _CACHE.get(key)
    if packed is not None:  # found before: the same board whatever the budget
        shape = (rules.rows, rules.cols)
        return np.unpackbits(packed, count=shape[0] * shape[1]).astype(bool).reshape(shape)
    layout = _find(rules, cell, seed, mode, max_tries, time_limit)
    packed = np.packbits(layout.ravel())
    with _CACHE_LOCK:
        _CACHE[key] = packed
        _cached_bytes[0] += packed.nbytes
        while _cached_bytes[0] > CACHE_BYTES:
            _cached_bytes[0] -= _CACHE.popitem(last=False)[1].nbytes
    return layout


def _find(rules, cell, seed, mode: str, max_tries: int, time_limit) -> np.ndarray:
    """The search of :func:`no_guess_board`, its arguments checked."""
    from nnsweeper.game import choose_mines, mine_cells

    rows, cols, mines = rules.rows, rules.cols, rules.mines
    rng = _rng(seed)
    allowed = mine_cells(rules, cell)
    deadline = None if time_limit is None else time.monotonic() + time_limit
    layout = choose_mines(rng, allowed, rules.mines)
    for tries in range(1, max_tries + 1):
        found = certify(layout, cell)
        if found.no_guess:
            return layout
        if deadline is not None and time.monotonic() > deadline:
            raise NoGuessBudgetError(
                f"no no-guess layout of {rows}x{cols} with {mines} mines ({mode}) within time_limit="
                f"{time_limit} s ({tries:,} certifications); raise it or lower the mine count")
        if mode == "uniform":
            layout = choose_mines(rng, allowed, rules.mines)
        else:
            layout = _repair(layout, found, allowed, rng)
    raise NoGuessBudgetError(
        f"no no-guess layout of {rows}x{cols} with {mines} mines ({mode}) within max_tries={max_tries:,} "
        "certifications; raise max_tries, " + ("use mode='fast' or " if mode == "uniform" else "")
        + "lower the mine count")


def _repair(layout: np.ndarray, found: Certificate, allowed: np.ndarray,
            rng: np.random.Generator) -> np.ndarray:
    """``layout`` with the mines around one stalled number moved (see the module's ``"fast"``)."""
    revealed, known = found.revealed, found.known_mines
    covered = ~revealed
    open_ = covered & ~known  # covered cells not proved mines
    numbers = revealed & (neighbour_sum(open_) > 0)
    layout = layout.copy()
    # Far: covered cells next to nothing shown (moving mines there changes no number in sight).
    far = covered & ~dilate(revealed) & allowed
    stalled = np.argwhere(numbers)
    if not len(stalled):  # walled in by proved mines: move one of the wall's mines far away
        wall = np.flatnonzero((known & dilate(revealed) & allowed).ravel())
        room = np.flatnonzero((far & ~layout).ravel())
        if wall.size and room.size:
            layout.ravel()[rng.choice(wall)] = False
            layout.ravel()[rng.choice(room)] = True
            return layout
        return _swap(layout, allowed, rng)
    i, j = stalled[rng.integers(len(stalled))]
    around = np.zeros(layout.shape, dtype=bool)
    around[max(i - 1, 0): i + 2, max(j - 1, 0): j + 2] = True
    around &= open_ & allowed
    far &= ~around
    moving = np.flatnonzero((around & layout).ravel())
    room = np.flatnonzero((far & ~layout).ravel())
    if moving.size and room.size >= moving.size:  # clear the number's covered neighbours
        layout.ravel()[moving] = False
        layout.ravel()[rng.choice(room, size=moving.size, replace=False)] = True
        return layout
    gaps = np.flatnonzero((around & ~layout).ravel())  # else fill them with mines from far away
    donors = np.flatnonzero((far & layout).ravel())
    if gaps.size and donors.size >= gaps.size:
        layout.ravel()[gaps] = True
        layout.ravel()[rng.choice(donors, size=gaps.size, replace=False)] = False
        return layout
    return _swap(layout, allowed, rng)


def _swap(layout: np.ndarray, allowed: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``layout`` (a copy the caller owns) with one random mine and one random safe cell the rule
    allows swapped."""
    mines_at = np.flatnonzero((layout & allowed).ravel())
    free_at = np.flatnonzero((~layout & allowed).ravel())
    layout.ravel()[rng.choice(mines_at)] = False
    layout.ravel()[rng.choice(free_at)] = True
    return layout


# ------------------------------------------------------------------ text format
#: A layout's cells in :func:`format_layouts`' text: a mine, a safe cell.
MINE, SAFE = "*", "."


def format_layouts(layouts, headings=()) -> str:
    """Mine layouts as text: each a block of rows (``*`` a mine, ``.`` a safe cell) after its
    ``#`` heading lines, blocks apart by a blank line (what ``nnsweeper boards`` writes, and
    :func:`parse_layouts` reads)."""
    headings = list(headings)
    blocks = []
    for k, mine in enumerate(layouts):
        mine = _check_layout(mine)
        lines = [f"# {h}" for h in (headings[k].splitlines() if k < len(headings) else ())]
        lines += ["".join(MINE if x else SAFE for x in row) for row in mine]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def parse_layouts(text: str) -> list[np.ndarray]:
    """The layouts of :func:`format_layouts`' text (``#`` lines skipped), each a bool array.

    Raises
    ------
    InvalidRulesError
        A character other than ``*`` and ``.`` in a row, rows of unequal length, no layout, or
        ``text`` that is no str.
    """
    from nnsweeper.game import MAX_COLS, MAX_ROWS

    if not isinstance(text, str):
        raise InvalidRulesError(f"parse_layouts reads the text of layouts (a str); got {type(text).__name__}")
    out, rows = [], []
    for n, line in enumerate([*text.splitlines(), ""], 1):
        line = line.strip()
        if line.startswith("#"):
            continue
        if not line:
            if rows:
                if len({len(r) for r in rows}) > 1 or len(rows) > MAX_ROWS or len(rows[0]) > MAX_COLS:
                    raise InvalidRulesError(f"the layout ending at line {n - 1} is not a rectangle of at "
                                            f"most {MAX_ROWS}x{MAX_COLS} cells")
                out.append(np.array([[c == MINE for c in r] for r in rows], dtype=bool))
                rows = []
            continue
        bad = set(line) - {MINE, SAFE}
        if bad:
            raise InvalidRulesError(f"line {n}: a layout row holds only {MINE!r} (a mine) and {SAFE!r} "
                                    f"(safe); got {sorted(bad)[0]!r}")
        rows.append(line)
    if not out:
        raise InvalidRulesError("no layout in the text (rows of '*' and '.')")
    return out


def _game_layout(rules, seed: int, first_cell) -> np.ndarray:
    """The layout a game of a no-guess rule places at its first click (``game.draw_layout``)."""
    from nnsweeper.game import NO_GUESS_RULES, NO_GUESS_SECONDS, NO_GUESS_TRIES

    return no_guess_board(rules.rows, rules.cols, rules.mines, first_cell, seed,
                          mode=NO_GUESS_RULES[rules.first_click], max_tries=NO_GUESS_TRIES,
                          time_limit=NO_GUESS_SECONDS)


def _register() -> None:
    from nnsweeper.game import set_no_guess_maker

    set_no_guess_maker(_game_layout)


_register()
