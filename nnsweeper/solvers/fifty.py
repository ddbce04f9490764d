"""Unavoidable 50/50s: pairs and 2x2 boxes of covered cells that no number can ever tell apart.

A *pattern* is two sets of covered cells, ``A`` and ``B`` (a pair: one cell each, side
by side; a 2x2 box: its two diagonals), such that every cell outside them that sees
more of one set than of the other is off the board, a known mine, or covered; the
covered ones (its *missing* cells) would have to be mines for the pattern to be
closed. In a layout where the missing cells are mines and ``A`` holds the mines
(``B`` none), no number that can ever be revealed sees a difference between that
layout and the one with ``A`` and ``B`` swapped, so whoever meets it must guess at
even odds sooner or later. The number of such layouts, :attr:`Pattern.count`, is the
same for either arrangement (the swap maps one onto the other).

Two uses, as the strongest published solver makes them (its source is public):

- *Pseudo 50/50* (:func:`pseudo_fifty_fifty`): a cell of a pattern that is a mine only
  in the pattern's layouts (its count of mine layouts equals the pattern's count)
  costs nothing to guess now that it would not cost later: it is played at once.
- *Influence* (:func:`influence`): the layouts in which a candidate guess is the mine
  of a pattern would be lost half the time anyway; the look-ahead lowers such a
  guess's risk by that share (``SearchSolver(fifty=True)``).

Every count is an exact layout count of the engine (flags added for the cells that
must be mines, inclusion-exclusion for the cells that must be safe), so the
decisions are the same on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from nnsweeper.engine import BoardAnalysis, analyze
from nnsweeper.errors import InconsistentBoardError
from nnsweeper.observation import Observation

__all__ = ["Pattern", "influence", "layouts_with_mines", "pattern_at", "patterns_of", "pseudo_fifty_fifty"]

Cell = tuple[int, int]

#: Patterns whose share of the layouts is above this add their count to the influence of
#: each of their missing cells (a mine there closes them).
ENABLER_SHARE = (1, 40)
#: At most this many missing cells for a pattern of the per-candidate influence, and for
#: the board's sweep (pseudo 50/50s and enablers).
MISSING_INFLUENCE = 3
MISSING_SWEEP = 1


@dataclass(frozen=True)
class Pattern:
    """A pair or a 2x2 box of covered cells that no number can tell apart once closed.

    Attributes
    ----------
    a, b : tuple of (int, int)
        The two arrangements' mine cells: a pair's two cells, a box's two diagonals.
    missing : tuple of (int, int)
        Covered cells that must be mines for the pattern to be closed.
    count : int
        Layouts with the ``missing`` cells mines, ``a`` mines and ``b`` safe (as many as
        with ``a`` and ``b`` swapped).
    """

    a: tuple[Cell, ...]
    b: tuple[Cell, ...]
    missing: tuple[Cell, ...]
    count: int

    @property
    def cells(self) -> tuple[Cell, ...]:
        return (*self.a, *self.b)


def layouts_with_mines(obs: Observation, known: np.ndarray, cells) -> int:
    """Layouts of ``obs`` in which ``cells`` (and the ``known`` mines) are mines, exactly (0 when none)."""
    flags = known.copy()
    for i, j in cells:
        flags[i, j] = True
    try:
        return analyze(Observation.from_checked(obs.grid, obs.total_mines, flags)).layouts
    except InconsistentBoardError:
        return 0


def _sides(shape, a, b) -> list[Cell] | None:
    """The cells off the pattern that see more of ``a`` than of ``b`` or the other way round."""
    rows, cols = shape
    pattern = set(a) | set(b)
    seen: dict[Cell, int] = {}
    for sign, group in ((1, a), (-1, b)):
        for i, j in group:
            for x in range(max(i - 1, 0), min(i + 2, rows)):
                for y in range(max(j - 1, 0), min(j + 2, cols)):
                    if (x, y) not in pattern:
                        seen[(x, y)] = seen.get((x, y), 0) + sign
    return [c for c, d in sorted(seen.items()) if d]


def pattern_at(obs: Observation, known: np.ndarray, a, b, *, max_missing: int,
               mines_left: int) -> Pattern | None:
    """The pattern of arrangements ``a`` / ``b`` (cells of ``obs``), or None where it cannot close.

    None when a cell of it is revealed or a known mine, when a cell that tells its
    arrangements apart is revealed, when more than ``max_missing`` cells would have to
    be mines, or more mines than are left, or when no layout closes it.
    ``known`` are the cells known to be mines (flags and proved mines).
    """
    grid = obs.grid
    for i, j in (*a, *b):
        if grid[i, j] >= 0 or known[i, j]:
            return None
    missing = []
    for i, j in _sides(grid.shape, a, b):
        if grid[i, j] >= 0:
            return None
        if not known[i, j]:
            missing.append((i, j))
    if len(missing) > max_missing or len(missing) + len(a) > mines_left:
        return None
    forced = [*missing, *a]
    count = 0
    for k in range(len(b) + 1):  # inclusion-exclusion: the cells of b safe
        for extra in combinations(b, k):
            count += (-1) ** k * layouts_with_mines(obs, known, [*forced, *extra])
    return Pattern(tuple(a), tuple(b), tuple(missing), count) if count > 0 else None


def _pairs_and_boxes(cell: Cell, shape) -> list[tuple[tuple[Cell, ...], tuple[Cell, ...]]]:
    """The horizontal pairs, vertical pairs and 2x2 boxes that hold ``cell``, as (a, b) with
    ``cell`` in ``a``: its arrangement with ``cell`` a mine first."""
    rows, cols = shape
    i, j = cell
    out = []
    for di, dj in ((0, -1), (0, 1), (-1, 0), (1, 0)):
        x, y = i + di, j + dj
        if 0 <= x < rows and 0 <= y < cols:
            out.append((((i, j),), ((x, y),)))
    for ti in (i - 1, i):
        for tj in (j - 1, j):
            if 0 <= ti and ti + 1 < rows and 0 <= tj and tj + 1 < cols:
                main = ((ti, tj), (ti + 1, tj + 1))
                anti = ((ti, tj + 1), (ti + 1, tj))
                out.append((main, anti) if cell in main else (anti, main))
    return out


def influence(obs: Observation, a: BoardAnalysis, cell: Cell, known: np.ndarray) -> int:
    """Layouts in which ``cell`` is the mine of a 50/50 pattern, as the look-ahead counts them.

    The largest count of its horizontal pairs, plus that of its vertical pairs, plus
    that of its 2x2 boxes (each with at most :data:`MISSING_INFLUENCE` cells that must be
    mines); not capped (:class:`~nnsweeper.solvers.SearchSolver` caps it by the cell's
    mine and safe layouts).
    """
    best = {"h": 0, "v": 0, "box": 0}
    for pa, pb in _pairs_and_boxes(cell, obs.grid.shape):
        kind = "box" if len(pa) == 2 else ("h" if pa[0][0] == pb[0][0] else "v")
        found = pattern_at(obs, known, pa, pb, max_missing=MISSING_INFLUENCE, mines_left=a.mines_left)
        if found is not None:
            best[kind] = max(best[kind], found.count)
    return best["h"] + best["v"] + best["box"]


def patterns_of(obs: Observation, a: BoardAnalysis, known: np.ndarray, *, boxes: bool):
    """Every closable pair (``boxes=False``: horizontal ones first, then vertical) or 2x2 box of
    the board with at most :data:`MISSING_SWEEP` missing cells, in reading order."""
    rows, cols = obs.grid.shape
    hidden = (obs.grid < 0) & ~known
    # Padded by two cells of "off the board" (neither revealed nor hidden) on every side.
    rev = np.zeros((rows + 4, cols + 4), dtype=np.int64)
    hid = np.zeros((rows + 4, cols + 4), dtype=np.int64)
    rev[2:-2, 2:-2] = obs.grid >= 0
    hid[2:-2, 2:-2] = hidden
    shapes = []
    if boxes:
        # A 2x2 box's sides are its four diagonal corners.
        ii, jj = np.nonzero(hidden[:-1, :-1] & hidden[:-1, 1:] & hidden[1:, :-1] & hidden[1:, 1:])
        for i, j in zip(ii.tolist(), jj.tolist(), strict=True):
            corners = [(i - 1, j - 1), (i - 1, j + 2), (i + 2, j - 1), (i + 2, j + 2)]
            if (not any(rev[x + 2, y + 2] for x, y in corners)
                    and sum(hid[x + 2, y + 2] for x, y in corners) <= MISSING_SWEEP):
                shapes.append((((i, j), (i + 1, j + 1)), ((i, j + 1), (i + 1, j))))
    else:
        # A pair's sides are the three cells beyond each end; count the revealed and the hidden ones.
        for di, dj in ((0, 1), (1, 0)):
            both = hidden[: rows - di, : cols - dj] & hidden[di:, dj:]
            ii, jj = np.nonzero(both)
            for i, j in zip(ii.tolist(), jj.tolist(), strict=True):
                sides = _pair_sides(i, j, di, dj)
                if (not any(rev[x + 2, y + 2] for x, y in sides)
                        and sum(hid[x + 2, y + 2] for x, y in sides) <= MISSING_SWEEP):
                    shapes.append((((i, j),), ((i + di, j + dj),)))
    for pa, pb in shapes:
        found = pattern_at(obs, known, pa, pb, max_missing=MISSING_SWEEP, mines_left=a.mines_left)
        if found is not None:
            yield found


def _pair_sides(i: int, j: int, di: int, dj: int) -> list[Cell]:
    """The six cells that see one cell of the pair ``(i, j)``, ``(i + di, j + dj)`` and not the other
    (some may lie off the board)."""
    if dj:  # side by side: the columns before and after
        return [(i + k, j - 1) for k in (-1, 0, 1)] + [(i + k, j + 2) for k in (-1, 0, 1)]
    return [(i - 1, j + k) for k in (-1, 0, 1)] + [(i + 2, j + k) for k in (-1, 0, 1)]


def pseudo_fifty_fifty(obs: Observation, a: BoardAnalysis, known: np.ndarray,
                       living: np.ndarray) -> tuple[list[Cell], dict[Cell, int]]:
    """The cells to guess at once, and the enablers' counts (cell -> layouts), from one sweep.

    Pairs are swept first, then (when no pair gave one) 2x2 boxes. A living cell of a
    pattern whose mine layouts are exactly the pattern's (:func:`layouts_with_mines`
    equal to its count) is a *pseudo 50/50*: every layout in which guessing it loses is
    one in which the board asks for an even guess anyway. The first pattern with such
    cells gives them. Patterns met on the way with more than :data:`ENABLER_SHARE` of
    the layouts add their count to each of their missing cells (a mine there would close
    them), for :func:`influence`'s users.
    """
    total = a.layouts
    num, den = ENABLER_SHARE
    enablers: dict[Cell, int] = {}
    mine_layouts: dict[Cell, int] = {}
    for boxes in (False, True):
        for pattern in patterns_of(obs, a, known, boxes=boxes):
            cells = [c for c in pattern.cells if living[c]]
            found = []
            for c in cells:
                if c not in mine_layouts:
                    mine_layouts[c] = layouts_with_mines(obs, known, [c])
                if mine_layouts[c] == pattern.count:
                    found.append(c)
            if found:
                return found, enablers
            if pattern.count * den > num * total:
                for c in pattern.missing:
                    enablers[c] = enablers.get(c, 0) + pattern.count
    return [], enablers
