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

from nnsweeper.engine import BoardAnalysis, analyze, count_layouts
from nnsweeper.errors import InconsistentBoardError
from nnsweeper.observation import Observation

__all__ = ["Pattern", "Patterns", "influence", "layouts_with_mines", "pattern_at", "pseudo_fifty_fifty"]

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
        return count_layouts(Observation.from_checked(obs.grid, obs.total_mines, flags))
    except InconsistentBoardError:
        return 0


def _sides(shape, a, b) -> list[Cell]:
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


class Patterns:
    """The 50/50 patterns of one position, their layout counts computed once each.

    Parameters
    ----------
    obs : Observation
    a : BoardAnalysis
        Its analysis.
    known : ndarray of bool
        The cells known to be mines (flags and proved mines).
    """

    def __init__(self, obs: Observation, a: BoardAnalysis, known: np.ndarray):
        self.obs, self.a, self.known = obs, a, known
        grid = obs.grid
        self.hidden = (grid < 0) & ~known
        # A pattern's cells and its missing cells must be able to be mines.
        self.can_be_mine = self.hidden & (a.probabilities > 0)
        # Cells next to no revealed number: any m of them are mines in the same number of layouts.
        self.interior = a.unknown & ~a.frontier
        self._counts: dict[frozenset, int] = {}
        self._sweep: tuple[list[Cell], dict[Cell, int]] | None = None
        #: After :meth:`sweep`: per cell, the counts of the swept patterns it is a cell of plus its
        #: enablers' counts (the cells a candidate list may add for their 50/50 influence).
        self.swept: dict[Cell, int] = {}

    def layouts_with(self, cells) -> int:
        """:func:`layouts_with_mines` of ``cells``, each set of cells counted once (one cell, or
        interior cells only: read off the analysis, :meth:`~nnsweeper.engine.BoardAnalysis.mine_layouts`
        and :meth:`~nnsweeper.engine.BoardAnalysis.interior_mine_layouts`)."""
        key = frozenset(cells)
        if key not in self._counts:
            if len(key) == 1:  # the known mines are mines in every layout: the analysis's count
                self._counts[key] = self.a.mine_layouts(next(iter(key)))
            elif all(self.interior[c] for c in key):
                self._counts[key] = self.a.interior_mine_layouts(len(key))
            else:
                self._counts[key] = layouts_with_mines(self.obs, self.known, key)
        return self._counts[key]

    def mine_layouts(self, cell: Cell) -> int:
        """Layouts in which ``cell`` is a mine."""
        return self.layouts_with([cell])

    def pattern(self, a, b, *, max_missing: int) -> Pattern | None:
        """The pattern of arrangements ``a`` / ``b``, or None where it cannot close.

        None when a cell of it is revealed, a known mine or proved safe, when a cell that
        tells its arrangements apart is revealed, when more than ``max_missing`` cells
        would have to be mines (or one of them is proved safe), or more mines than are
        left, or when no layout closes it.
        """
        grid = self.obs.grid
        if not all(self.can_be_mine[c] for c in (*a, *b)):
            return None
        missing = []
        for c in _sides(grid.shape, a, b):
            if grid[c] >= 0:
                return None
            if not self.known[c]:
                if not self.can_be_mine[c] or len(missing) == max_missing:
                    return None
                missing.append(c)
        if len(missing) + len(a) > self.a.mines_left:
            return None
        forced = [*missing, *a]
        count = 0
        for k in range(len(b) + 1):  # inclusion-exclusion: the cells of b safe
            for extra in combinations(b, k):
                count += (-1) ** k * self.layouts_with([*forced, *extra])
        return Pattern(tuple(a), tuple(b), tuple(missing), count) if count > 0 else None

    def influence(self, cell: Cell) -> int:
        """See :func:`influence`."""
        best = {"h": 0, "v": 0, "box": 0}
        for pa, pb in _pairs_and_boxes(cell, self.obs.grid.shape):
            kind = "box" if len(pa) == 2 else ("h" if pa[0][0] == pb[0][0] else "v")
            found = self.pattern(pa, pb, max_missing=MISSING_INFLUENCE)
            if found is not None:
                best[kind] = max(best[kind], found.count)
        return best["h"] + best["v"] + best["box"]

    def candidates(self, *, boxes: bool) -> list[tuple[tuple[Cell, ...], tuple[Cell, ...]]]:
        """The pairs (horizontal first, then vertical) or 2x2 boxes whose cells can all be mines and
        whose sides hold no revealed cell and at most :data:`MISSING_SWEEP` cells that are not known
        mines, in reading order: the shapes :meth:`sweep` counts."""
        rows, cols = self.obs.grid.shape
        ok = self.can_be_mine
        # Padded by two cells of "off the board" (neither revealed nor open) on every side.
        rev = np.zeros((rows + 4, cols + 4), dtype=np.int64)
        opn = np.zeros((rows + 4, cols + 4), dtype=np.int64)
        rev[2:-2, 2:-2] = self.obs.grid >= 0
        opn[2:-2, 2:-2] = self.hidden

        def at(arr, di, dj, h, w):  # arr at (i + di, j + dj) for i < h, j < w
            return arr[2 + di: 2 + di + h, 2 + dj: 2 + dj + w]

        out = []
        if boxes:
            h, w = rows - 1, cols - 1
            corners = ((-1, -1), (-1, 2), (2, -1), (2, 2))
            fit = ok[:-1, :-1] & ok[:-1, 1:] & ok[1:, :-1] & ok[1:, 1:]
            fit &= sum(at(rev, di, dj, h, w) for di, dj in corners) == 0
            fit &= sum(at(opn, di, dj, h, w) for di, dj in corners) <= MISSING_SWEEP
            for i, j in zip(*np.nonzero(fit), strict=True):
                i, j = int(i), int(j)
                out.append((((i, j), (i + 1, j + 1)), ((i, j + 1), (i + 1, j))))
            return out
        for di, dj in ((0, 1), (1, 0)):
            h, w = rows - di, cols - dj
            sides = ([(k, -1) for k in (-1, 0, 1)] + [(k, 2) for k in (-1, 0, 1)] if dj else
                     [(-1, k) for k in (-1, 0, 1)] + [(2, k) for k in (-1, 0, 1)])
            fit = ok[:h, :w] & ok[di:, dj:]
            fit &= sum(at(rev, x, y, h, w) for x, y in sides) == 0
            fit &= sum(at(opn, x, y, h, w) for x, y in sides) <= MISSING_SWEEP
            for i, j in zip(*np.nonzero(fit), strict=True):
                i, j = int(i), int(j)
                out.append((((i, j),), ((i + di, j + dj),)))
        return out

    def sweep(self, living: np.ndarray) -> tuple[list[Cell], dict[Cell, int]]:
        """See :func:`pseudo_fifty_fifty` (swept once per position)."""
        if self._sweep is not None:
            return self._sweep
        total = self.a.layouts
        num, den = ENABLER_SHARE
        enablers: dict[Cell, int] = {}
        self._sweep = ([], enablers)
        for boxes in (False, True):
            for pa, pb in self.candidates(boxes=boxes):
                pattern = self.pattern(pa, pb, max_missing=MISSING_SWEEP)
                if pattern is None:
                    continue
                found = [c for c in pattern.cells if living[c] and self.mine_layouts(c) == pattern.count]
                if found:
                    self._sweep = (found, enablers)
                    return self._sweep
                for c in pattern.cells:
                    self.swept[c] = self.swept.get(c, 0) + pattern.count
                if pattern.count * den > num * total:
                    for c in pattern.missing:
                        enablers[c] = enablers.get(c, 0) + pattern.count
                        self.swept[c] = self.swept.get(c, 0) + pattern.count
        return self._sweep

    def swept_counts(self, living: np.ndarray) -> dict[Cell, int]:
        """:attr:`swept` after the board's :meth:`sweep` (run first if it has not been)."""
        self.sweep(living)
        return self.swept


def pattern_at(obs: Observation, known: np.ndarray, a, b, *, max_missing: int) -> Pattern | None:
    """The pattern of arrangements ``a`` / ``b`` (cells of ``obs``), or None where it cannot close.

    None when a cell of it is revealed, a known mine or proved safe, when a cell that
    tells its arrangements apart is revealed, when more than ``max_missing`` cells would
    have to be mines (or one of them is proved safe), or more mines than are left, or
    when no layout closes it. ``known`` are the cells known to be mines (flags and proved
    mines).
    """
    return Patterns(obs, analyze(obs), known).pattern(a, b, max_missing=max_missing)


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
    return Patterns(obs, a, known).influence(cell)


def pseudo_fifty_fifty(obs: Observation, a: BoardAnalysis, known: np.ndarray,
                       living: np.ndarray) -> tuple[list[Cell], dict[Cell, int]]:
    """The cells to guess at once, and the enablers' counts (cell -> layouts), from one sweep.

    Pairs are swept first (horizontal, then vertical, in reading order), then (when no
    pair gave one) 2x2 boxes, each with at most :data:`MISSING_SWEEP` missing cells. A
    living cell of a pattern whose mine layouts are exactly the pattern's
    (:func:`layouts_with_mines` equal to its count) is a *pseudo 50/50*: every layout in
    which guessing it loses is one in which the board asks for an even guess anyway. The
    first pattern with such cells gives them. Patterns met on the way with more than
    :data:`ENABLER_SHARE` of the layouts add their count to each of their missing cells (a
    mine there would close them), for :func:`influence`'s users.
    """
    return Patterns(obs, a, known).sweep(living)
