"""Exact endgame search: the move that maximises the probability of winning the whole game.

When few mine layouts fit the board (a few thousand at most), the game that is left
is a finite tree that can be searched exactly. The layouts consistent with what the
player has seen form a set ``S``; revealing a covered cell ``c`` that is not a mine
splits ``S`` by the number ``c`` would show. With ``w(S)`` the number of layouts of
``S`` in which best play wins (so ``P(win) = w(S) / |S|``):

- ``w(S) = 1`` when ``|S| = 1``: every cell is known;
- when some covered cell is safe in every layout of ``S`` and its number differs
  between them, revealing it costs nothing: all such cells are revealed together and
  ``w(S)`` is the sum of ``w`` over the parts of ``S`` their numbers split it into;
- otherwise a guess is needed: ``w(S) = max_c sum_v w(S_{c,v})`` over the cells that
  are a mine in some layouts of ``S`` but not all.

Every ``w`` is an integer, so the search is exact and its choice the same on every
machine. ``w(S)`` depends on ``S`` alone (a revealed cell is the same in every layout
of ``S``), so results are memoised on ``S`` and kept between the moves of a game.
Candidates are tried safest first and a cell whose safe layouts cannot beat the best
found is skipped; cells that split ``S`` identically are tried once. The search
counts the positions it expands and gives up past ``node_limit`` (deterministically:
a count, not a clock).
"""

from __future__ import annotations

import numpy as np

from nnsweeper.grid import neighbour_sum

__all__ = ["Endgame", "SearchBudgetExceeded"]


class SearchBudgetExceeded(Exception):
    """The exact search needed more positions than its ``node_limit``."""


class Endgame:
    """The game tree over an explicit set of layouts.

    A set of layouts is a Python integer used as a bit set (bit ``k``: layout ``k``),
    so splitting a set by a cell's number is one ``&`` per number and the memo is keyed
    by the set itself.

    Parameters
    ----------
    layouts : ndarray of bool, shape (n, rows, cols)
        Every layout consistent with the board (see
        :func:`nnsweeper.sampling.enumerate_layouts`), each once.
    grid : ndarray of int, shape (rows, cols)
        The visible board they were enumerated for (-1 covered).
    node_limit : int
        Most positions one call of :meth:`best_move` may expand.
    """

    def __init__(self, layouts: np.ndarray, grid: np.ndarray, node_limit: int):
        n, rows, cols = layouts.shape
        flat = layouts.reshape(n, -1)
        covered = np.flatnonzero((grid < 0).ravel())
        always = flat[:, covered].all(axis=0)
        #: Flat indices of the covered cells that are not a mine in every layout.
        self.cells = covered[~always]
        counts = neighbour_sum(layouts).reshape(n, -1)[:, self.cells]
        values = np.where(flat[:, self.cells], -1, counts)
        # Per cell (its column): the set of layouts in which it holds a mine, and per
        # number it can show, the set of layouts in which it shows it.
        self._shows: list[list[int]] = []
        self._cells_sets: list[tuple[int, int, list[int]]] = []  # (column, mine set, number sets)
        for c, col in enumerate(values.T):
            sets = {int(v): _bits(col == v) for v in np.unique(col)}
            mine = sets.pop(-1, 0)
            self._shows.append(list(sets.values()))
            self._cells_sets.append((c, mine, self._shows[-1]))
        self.shape = (rows, cols)
        self.node_limit = node_limit
        self.nodes = 0
        self._values = values
        self._memo: dict[int, tuple[int, int]] = {}

    def consistent(self, grid: np.ndarray) -> int:
        """The set of layouts that agree with every number revealed on ``grid`` since."""
        shown = grid.ravel()[self.cells]
        ok = np.ones(self._values.shape[0], dtype=bool)
        for k in np.flatnonzero(shown >= 0):
            ok &= self._values[:, k] == shown[k]
        return _bits(ok)

    def best_move(self, grid: np.ndarray) -> tuple[tuple[int, int], int, int] | None:
        """The guess that wins most often from ``grid``, with its win count and the layouts left.

        Returns ``((row, col), wins, layouts)``, so that ``wins / layouts`` is the exact
        probability of winning with best play, or None when no guess is needed (one
        layout left, or a cell safe in all of them whose number tells them apart).
        Raises :class:`SearchBudgetExceeded` past ``node_limit`` expanded positions.
        """
        s = self.consistent(grid)
        self.nodes = 0
        wins = self._win(s)
        col = self._memo.get(s, (wins, -1))[1]
        if col < 0:
            return None
        return divmod(int(self.cells[col]), self.shape[1]), wins, s.bit_count()

    def win_counts(self, grid: np.ndarray, cells) -> dict[tuple[int, int], int]:
        """Per cell of ``cells``: the layouts in which guessing it, then playing best, wins."""
        s = self.consistent(grid)
        self.nodes = 0
        where = {int(x): k for k, x in enumerate(self.cells)}
        out = {}
        for i, j in cells:
            col = where.get(i * self.shape[1] + j)
            out[(i, j)] = 0 if col is None else sum(self._win(s & x) for x in self._shows[col])
        return out

    def _win(self, s: int) -> int:
        n = s.bit_count()
        if n <= 1:
            return n
        hit = self._memo.get(s)
        if hit is not None:
            return hit[0]
        self.nodes += 1
        if self.nodes > self.node_limit:
            raise SearchBudgetExceeded(f"more than {self.node_limit} positions")
        parts, guesses = [s], []
        for c, mine, shows in self._cells_sets:
            m = (s & mine).bit_count()
            if m == 0:  # safe in every layout left: revealing it is free
                if len(shows) > 1:  # (a cell showing one number everywhere splits nothing)
                    parts = [q for p in parts for x in shows if (q := p & x)]
            elif m < n:
                guesses.append((m, c))
        win = self._win
        if len(parts) > 1:
            best, col = 0, -1
            for p in parts:
                best += win(p)
        else:
            best, col = -1, -1
            guesses.sort()  # safest first, then by cell
            seen = set()
            shows_of = self._shows
            for m, c in guesses:
                if n - m <= best:
                    break  # no cell from here on can win more often
                split = tuple([q for x in shows_of[c] if (q := s & x)])
                if split in seen:
                    continue
                seen.add(split)
                w = 0
                for q in split:
                    w += win(q)
                if w > best:
                    best, col = w, c
        self._memo[s] = (best, col)
        return best


def _bits(mask: np.ndarray) -> int:
    """A boolean vector as a bit set: bit ``k`` set where ``mask[k]``."""
    return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")
