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
found is skipped (a cell that splits ``S`` as one tried before finds its parts in the
memo). The search counts the positions it expands and gives up past ``node_limit``
(deterministically: a count, not a clock). It runs in compiled loops on an explicit
stack (:func:`nnsweeper.engine.kernels.endgame_win`); the tests hold it to the plain
recursion, position for position.
"""

from __future__ import annotations

import numpy as np

from nnsweeper.grid import neighbour_sum

__all__ = ["Endgame", "SearchBudgetExceeded"]


class SearchBudgetExceeded(Exception):
    """The exact search needed more positions than its ``node_limit``."""


class Endgame:
    """The game tree over an explicit set of layouts.

    A set of layouts is a row of 64-bit words used as a bit set (bit ``k``: layout
    ``k``), so splitting a set by a cell's number is one ``&`` per word and number, and
    the memo is keyed by the words. The search runs in compiled loops
    (:func:`nnsweeper.engine.kernels.endgame_win`); the memo is kept between calls.

    Parameters
    ----------
    layouts : ndarray of bool, shape (n, rows, cols)
        Every layout consistent with the board (see
        :func:`nnsweeper.engine.enumerate_layouts`), each once.
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
        # Per cell (its row): the set of layouts in which it holds a mine, and per number
        # it can show, ascending, the set of layouts in which it shows it.
        n_cells = self.cells.size
        self._mine = _words(values == -1)
        self._shows = np.zeros((n_cells, 9, self._mine.shape[1]), dtype=np.uint64)
        self._n_shows = np.zeros(n_cells, dtype=np.int64)
        for v in range(9):
            shows = values == v
            has = shows.any(axis=0)
            if has.any():
                at = np.flatnonzero(has)
                self._shows[at, self._n_shows[at]] = _words(shows[:, at])
                self._n_shows[at] += 1
        self.shape = (rows, cols)
        self.node_limit = node_limit
        self.nodes = 0
        self._values = values
        # The memo: an open-addressing table of sets (see the kernel), grown by it.
        self._keys = np.zeros((1024, self._mine.shape[1]), dtype=np.uint64)
        self._vals = np.zeros((1024, 2), dtype=np.int64)
        self._used = np.zeros(1024, dtype=bool)
        self._n_memo = 0

    def consistent(self, grid: np.ndarray) -> np.ndarray:
        """The set of layouts that agree with every number revealed on ``grid`` since."""
        shown = grid.ravel()[self.cells]
        ok = np.ones(self._values.shape[0], dtype=bool)
        for k in np.flatnonzero(shown >= 0):
            ok &= self._values[:, k] == shown[k]
        return _words(ok[:, None])[0]

    def best_move(self, grid: np.ndarray) -> tuple[tuple[int, int], int, int] | None:
        """The guess that wins most often from ``grid``, with its win count and the layouts left.

        Returns ``((row, col), wins, layouts)``, so that ``wins / layouts`` is the exact
        probability of winning with best play, or None when no guess is needed (one
        layout left, or a cell safe in all of them whose number tells them apart).
        Raises :class:`SearchBudgetExceeded` past ``node_limit`` expanded positions.
        """
        s = self.consistent(grid)
        wins, cell = self._value(s)
        if cell is None:
            return None
        return cell, wins, sum(w.bit_count() for w in s.tolist())

    def value(self, grid: np.ndarray) -> tuple[int, tuple[int, int] | None]:
        """The layouts (of those consistent with ``grid``) in which best play wins, and the best
        guess there (None when no guess is needed); raises as :meth:`best_move` does."""
        return self._value(self.consistent(grid))

    def _value(self, s: np.ndarray) -> tuple[int, tuple[int, int] | None]:
        """:meth:`value` of the layouts ``s`` (a bit set), the node count started again."""
        self.nodes = 0
        wins, col = self._win(s)
        return wins, None if col < 0 else divmod(int(self.cells[col]), self.shape[1])

    def win_counts(self, grid: np.ndarray, cells) -> dict[tuple[int, int], int]:
        """Per cell of ``cells``: the layouts in which guessing it, then playing best, wins."""
        s = self.consistent(grid)
        self.nodes = 0
        where = {int(x): k for k, x in enumerate(self.cells)}
        out = {}
        for i, j in cells:
            col = where.get(i * self.shape[1] + j)
            out[(i, j)] = 0 if col is None else sum(
                self._win(s & x)[0] for x in self._shows[col, :self._n_shows[col]])
        return out

    def _win(self, s: np.ndarray) -> tuple[int, int]:
        """``w(s)`` and the best guess there (-1: none needed), counting the positions expanded."""
        from nnsweeper.engine.kernels import OVER_BUDGET, endgame_win  # compiled; loaded on first use

        status, wins, col, self.nodes, self._keys, self._vals, self._used, self._n_memo = endgame_win(
            s, self._mine, self._shows, self._n_shows, self._keys, self._vals, self._used, self._n_memo,
            self.node_limit, self.nodes)
        if status == OVER_BUDGET:
            raise SearchBudgetExceeded(f"more than {self.node_limit} positions")
        return int(wins), int(col)


def _words(columns: np.ndarray) -> np.ndarray:
    """Boolean columns (shape (n, k)) as ``k`` bit sets of ``ceil(n / 64)`` uint64 words each:
    bit ``b`` of word ``w`` of set ``j`` is ``columns[64 w + b, j]``."""
    n, k = columns.shape
    packed = np.packbits(columns, axis=0, bitorder="little")  # (ceil(n / 8), k) bytes
    n_words = max(1, -(-n // 64))
    padded = np.zeros((8 * n_words, k), dtype=np.uint8)
    padded[: packed.shape[0]] = packed
    return np.ascontiguousarray(padded.T).view("<u8").astype(np.uint64)
