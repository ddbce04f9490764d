"""Beyond the marginals: layouts drawn exactly uniformly, and what a cell would show.

:func:`outcome_distribution` gives, for a covered cell, the exact probability that it
is safe and shows each number 0..8: the layouts consistent with the board in which
the cell shows ``v`` are exactly those of the board with the cell revealed as ``v``,
so each probability is a ratio of two of the engine's exact layout counts.

:func:`sample_layouts` draws from the same exact count as the probability engine
(:mod:`nnsweeper.engine.probability`): the cells the single-point rules settle are fixed;
the mines left are split between the frontier components and the interior with
probability proportional to the number of layouts of each split (exact integers);
each component's layout is drawn box by box backwards through the engine's dynamic
program (each transition weighted by the layouts that reach it); and the mines of a
box, and of the interior, go to a uniformly drawn subset of its cells. Every layout
consistent with the board is therefore equally likely, up to the uniformity of the
generator's bits: integer draws are exact for any size (no floating point), so the
samples for a seed are the same on every machine.
"""

from __future__ import annotations

import itertools
import numbers
from fractions import Fraction

import numpy as np

from nnsweeper.engine.counting import count_small, interior_weights, pick
from nnsweeper.engine.frontier import components, make_plan, reduce_board
from nnsweeper.engine.probability import MAX_STATES, analyze
from nnsweeper.errors import EngineLimitError, InconsistentBoardError, InvalidBoardError, check_int, check_rng
from nnsweeper.grid import dilate, neighbours
from nnsweeper.observation import Observation, as_observation

__all__ = ["MAX_SAMPLE_CELLS", "each_outcome", "enumerate_layouts", "isolated_areas", "outcome_distribution",
           "sample_layouts"]

#: Most booleans one call returns (``n * rows * cols``): 128 MiB.
MAX_SAMPLE_CELLS = 1 << 27


def sample_layouts(grid, total_mines=None, n: int = 1, rng=None, flags=None, *,
                   max_states: int = MAX_STATES) -> np.ndarray:
    """``n`` mine layouts drawn exactly uniformly among those consistent with the board.

    Parameters
    ----------
    grid : Observation or array_like of int, shape (rows, cols)
        What the player sees: -1 covered, 0..8 revealed (an Observation carries its
        own mine count and flags).
    total_mines : int
        Mines on the board, flagged ones included (omitted for an Observation).
    n : int, default 1
        Layouts to draw.
    rng : numpy.random.Generator or int
        The randomness (a seed is turned into ``np.random.default_rng(seed)``);
        required, so that a caller's seed decides every draw.
    flags : array_like of bool, optional
        Covered cells known to be mines (trusted, as by the engine).
    max_states : int, default :data:`~nnsweeper.engine.probability.MAX_STATES`
        Most partial solutions one frontier component may hold while it is counted.

    Returns
    -------
    ndarray of bool, shape (n, rows, cols)
        True at the mines of each layout. Flagged cells are mines in every layout,
        revealed cells in none.

    Raises
    ------
    InvalidBoardError, InconsistentBoardError
        A malformed board, or one no layout fits.
    EngineLimitError
        A frontier component with more than ``max_states`` partial solutions.
    ValueError
        ``n`` not a positive integer, more than :data:`MAX_SAMPLE_CELLS` cells in
        all, or ``rng`` neither a Generator nor a seed.

    Examples
    --------
    >>> import numpy as np
    >>> grid = np.array([[1, -1], [-1, -1]])
    >>> layouts = sample_layouts(grid, 1, 4, np.random.default_rng(0))
    >>> layouts.shape, bool(layouts[:, 0, 0].any()), layouts.sum(axis=(1, 2)).tolist()
    ((4, 2, 2), False, [1, 1, 1, 1])
    """
    obs = as_observation(grid, total_mines, flags)
    max_states = check_int("max_states", max_states, 1, InvalidBoardError)
    n = _check_n(n, obs.grid.size)
    below = _below(check_rng(rng))
    board, interior, solved = _counted(obs, max_states, "sample_layouts")
    mines_left = board.mines_left

    # Layouts per split: prefix[c] counts the first c components' layouts per total
    # (index from the sum of their fewest mines); times the interior's ways per total.
    lo = sum(s.m_lo for s in solved)
    hi = lo + sum(s.layouts.size - 1 for s in solved)
    weights, _ = interior_weights(interior.size, mines_left, lo, hi)
    prefix = [np.ones(1, dtype=object)]
    for s in solved:
        prefix.append(np.convolve(prefix[-1], s.layouts))
    by_total = (prefix[-1] * weights).tolist()
    if not any(by_total):
        raise InconsistentBoardError(
            f"no layout of the frontier leaves a number of interior mines between 0 and "
            f"{interior.size} out of the {mines_left} mines left"
        )
    layouts = [s.layouts.tolist() for s in solved]
    prefixes = [p.tolist() for p in prefix]

    out = np.zeros((n, obs.grid.size), dtype=bool)
    out[:, board.mine.ravel()] = True
    for k in range(n):
        rest = pick(by_total, below)  # the frontier's mines, less lo
        row = out[k]
        row[interior[_subset(interior.size, mines_left - lo - rest, below)]] = True
        for c in range(len(solved) - 1, -1, -1):
            before, mine = prefixes[c], layouts[c]
            # Mines of component c (index i) with the first c components holding rest - i.
            options = [i for i in range(len(mine)) if 0 <= rest - i < len(before)]
            i = options[pick([mine[i] * before[rest - i] for i in options], below)]
            rest -= i
            sol = solved[c]
            for cells, j in zip(sol.comp.cells, sol.sample(sol.m_lo + i, below), strict=True):
                if j:
                    row[cells[_subset(cells.size, j, below)]] = True
    return out.reshape(n, *obs.grid.shape)


def enumerate_layouts(grid, total_mines=None, flags=None, *, limit: int = 100_000,
                      max_states: int = MAX_STATES) -> np.ndarray:
    """Every mine layout consistent with the board, each once, in a fixed order.

    The layouts are those the engine counts (:attr:`BoardAnalysis.layouts
    <nnsweeper.engine.probability.BoardAnalysis.layouts>`): built from each frontier
    component's dynamic program (every path through it, every placement of a box's
    mines among its cells) and every placement of the remaining mines in the interior.

    Parameters
    ----------
    grid, total_mines, flags
        The board, as for :func:`sample_layouts`.
    limit : int, default 100000
        Most layouts to return; a board with more is refused before any is built.
    max_states : int
        As for :func:`~nnsweeper.engine.probability.analyze`.

    Returns
    -------
    ndarray of bool, shape (layouts, rows, cols)

    Raises
    ------
    ValueError
        More than ``limit`` layouts, or more than :data:`MAX_SAMPLE_CELLS` booleans.

    Examples
    --------
    >>> import numpy as np
    >>> enumerate_layouts(np.array([[1, -1], [-1, -1]]), 1).sum(axis=0).tolist()
    [[0, 1], [1, 1]]
    """
    obs = as_observation(grid, total_mines, flags)
    limit = check_int("limit", limit, 1)
    # Counted by the engine first: its whole-array counting stays within max_states on
    # any board, so a board past limit is refused before the plain-integer pass below.
    count = analyze(obs, max_states=max_states).layouts
    if count > limit:
        raise ValueError(f"the board has {count:,} consistent layouts, more than limit={limit:,}; "
                         f"raise limit or draw a sample with sample_layouts")
    _check_n(count, obs.grid.size)
    board, interior, solved = _counted(obs, max_states, "enumerate_layouts")
    mines_left = board.mines_left
    # Per component and mine count: the flat indices of the mines of each of its layouts.
    options = []
    for sol in solved:
        options.append({sol.m_lo + i: _component_layouts(sol, sol.m_lo + i) for i in range(sol.layouts.size)})
    out = []
    base = np.zeros(obs.grid.size, dtype=bool)
    base[board.mine.ravel()] = True

    def place(c: int, left: int, chosen: list) -> None:
        if c == len(options):
            if left <= interior.size:
                for spots in itertools.combinations(interior.tolist(), left):
                    row = base.copy()
                    for cells in chosen:
                        row[cells] = True
                    row[list(spots)] = True
                    out.append(row)
            return
        for m, layouts in sorted(options[c].items()):
            if m <= left:
                for cells in layouts:
                    place(c + 1, left - m, [*chosen, cells])

    place(0, mines_left, [])
    return np.array(out, dtype=bool).reshape(len(out), *obs.grid.shape)


def _component_layouts(sol, m: int) -> list[np.ndarray]:
    """The layouts of a counted component with ``m`` mines: per layout, the flat indices of its mines."""
    comp = sol.comp
    return [
        np.concatenate([np.zeros(0, np.int64)] + list(chosen))
        for mines in sol.each(m)
        for chosen in itertools.product(*(
            [cells[list(c)] for c in itertools.combinations(range(cells.size), j)]
            for cells, j in zip(comp.cells, mines, strict=True)))
    ]


def isolated_areas(obs: Observation, *, limit: int = 1000,
                   max_states: int = MAX_STATES) -> list[tuple[np.ndarray, np.ndarray]]:
    """The board's isolated areas: frontier components that can be played as games of their own.

    An area is a frontier component (its cells linked through the numbers they share)
    that holds the same number of mines in every layout and none of whose cells has a
    covered neighbour outside it that is not a known mine. Nothing revealed elsewhere can
    then tell anything about it, nor it about the rest: its layouts are equally likely
    whatever the rest holds, and the chance to clear it with best play is its own.

    Returns ``(cells, layouts)`` per area with at most ``limit`` layouts, the smallest
    area first (then by its first cell): ``cells`` the area's flat cell indices
    (ascending), ``layouts`` a bool array (layouts, cells) of every layout of the area,
    each once. Empty where a component is past ``max_states`` (nothing is isolated then).
    """
    try:
        board, _, solved = _counted(obs, max_states, "isolated_areas")
    except EngineLimitError:
        return []
    rows, cols = obs.grid.shape
    covered = ((obs.grid < 0) & ~board.mine).ravel()
    out = []
    for sol in solved:
        totals = [k for k, n in enumerate(sol.layouts) if n]
        if len(totals) != 1 or sol.layouts[totals[0]] > limit:
            continue
        cells = np.sort(np.concatenate(sol.comp.cells))
        inside = np.zeros(rows * cols, dtype=bool)
        inside[cells] = True
        if (dilate(inside.reshape(rows, cols)).ravel() & covered & ~inside).any():  # it touches another
            continue
        index = np.full(rows * cols, -1, dtype=np.int64)
        index[cells] = np.arange(cells.size)
        found = _component_layouts(sol, sol.m_lo + totals[0])
        layouts = np.zeros((len(found), cells.size), dtype=bool)
        for k, mines in enumerate(found):
            layouts[k, index[mines]] = True
        out.append((cells, layouts))
    out.sort(key=lambda x: (x[0].size, int(x[0][0])))
    return out


def _counted(obs, max_states: int, caller: str):
    """The board after the single-point rules, its interior cells (flat) and every frontier
    component counted in plain integers (whose solutions can be walked backwards)."""
    board = reduce_board(obs)
    front = board.front
    interior = np.flatnonzero((board.free & ~front).ravel())
    solved = []
    for comp in components(board.is_con, board.need, front) if front.any() else []:
        sol = count_small(comp, make_plan(comp), board.mines_left, max_states)
        if sol is None:
            raise EngineLimitError(
                f"a frontier component needs more than max_states={max_states} partial solutions at one "
                f"box; {caller} counts it exactly or not at all (raise max_states to allow more)"
            )
        solved.append(sol)
    return board, interior, solved


def each_outcome(obs: Observation, cell, *, max_states: int = MAX_STATES):
    """The board after revealing a covered cell, for every number it could show.

    Yields ``(v, board, analysis)`` in increasing ``v``: ``obs`` with ``cell`` revealed
    as ``v`` (an Observation) and the engine's analysis of it, for every ``v`` from its
    flagged neighbours to those plus its covered unflagged ones that some layout
    allows. ``analysis.layouts`` is the number of layouts of ``obs`` in which the cell
    is safe and shows ``v``.

    Parameters
    ----------
    obs : Observation
        The position (checked already; the boards derived from it are not checked again).
    cell : (int, int)
        A covered, unflagged cell of it.
    max_states : int
        As for :func:`~nnsweeper.engine.probability.analyze`.
    """
    i, j = cell
    g, flags = obs.grid, obs.flags
    nb = neighbours(i, j, *g.shape)
    known = sum(bool(flags[x, y]) for x, y in nb)
    free = sum(bool(g[x, y] < 0 and not flags[x, y]) for x, y in nb)
    for v in range(known, known + free + 1):
        shown = np.array(g)  # a new array each time: an Observation freezes its grid
        shown[i, j] = v
        board = Observation.from_checked(shown, obs.total_mines, flags)
        try:
            after = analyze(board, max_states=max_states)
        except InconsistentBoardError:
            continue  # no layout shows v there
        yield v, board, after


def _check_n(n, cells: int) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer (the layouts to draw); got {n!r}")
    if int(n) * cells > MAX_SAMPLE_CELLS:
        raise ValueError(
            f"n={n} layouts of {cells} cells make {int(n) * cells} booleans, more than MAX_SAMPLE_CELLS="
            f"{MAX_SAMPLE_CELLS}; draw them in batches of at most {MAX_SAMPLE_CELLS // cells}"
        )
    return int(n)


_CHUNK = 62  # bits per draw of the generator, kept below int64's 63


def _below(rng: np.random.Generator):
    """``below(m)``: an integer drawn uniformly from ``[0, m)``, exactly, for any Python int ``m``."""

    def below(m: int) -> int:
        if m <= 1 << _CHUNK:
            return int(rng.integers(m))
        bits = m.bit_length()
        chunks = -(-bits // _CHUNK)
        while True:  # rejection: each try succeeds with probability above 1/2
            r = 0
            for _ in range(chunks):
                r = (r << _CHUNK) | int(rng.integers(1 << _CHUNK))
            r >>= chunks * _CHUNK - bits
            if r < m:
                return r

    return below


def _subset(size: int, k: int, below) -> np.ndarray:
    """``k`` distinct positions of ``range(size)``, each subset equally likely (a partial shuffle)."""
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    perm = list(range(size))
    for t in range(k):
        u = t + below(size - t)
        perm[t], perm[u] = perm[u], perm[t]
    return np.asarray(perm[:k], dtype=np.int64)


def outcome_distribution(grid, total_mines=None, cell=None, flags=None, *, exact: bool = False,
                         max_states: int = MAX_STATES):
    """P(the cell is safe and shows v) for v = 0..8, exactly.

    Parameters
    ----------
    grid : Observation or array_like of int, shape (rows, cols)
        What the player sees (-1 covered, 0..8 revealed).
    total_mines : int
        Mines on the board, flagged ones included (omitted for an Observation).
    cell : (int, int)
        A covered, unflagged cell.
    flags : array_like of bool, optional
        Covered cells known to be mines.
    exact : bool, default False
        Return :class:`fractions.Fraction` values instead of floats.
    max_states : int
        As for :func:`~nnsweeper.engine.probability.analyze`.

    Returns
    -------
    ndarray of float64, shape (9,), or list of Fraction
        Entry ``v``: the share of the consistent layouts in which ``cell`` is safe and
        has ``v`` mines among its neighbours. They sum to ``1 - P(mine at cell)``;
        floats are each ratio rounded once, the same on every machine.

    Raises
    ------
    ValueError
        ``cell`` not a covered, unflagged cell of the board.

    Examples
    --------
    >>> import numpy as np
    >>> grid = np.array([[1, -1], [-1, -1]])   # one mine among the three covered cells
    >>> outcome_distribution(grid, 1, (1, 1), exact=True)[:3]
    [Fraction(0, 1), Fraction(2, 3), Fraction(0, 1)]
    """
    obs = as_observation(grid, total_mines, flags)
    rows, cols = obs.shape
    try:
        i, j = (int(v) for v in cell)
    except (TypeError, ValueError):
        raise ValueError(f"cell must be a (row, col) pair; got {cell!r}") from None
    if not (0 <= i < rows and 0 <= j < cols) or obs.grid[i, j] != -1 or obs.flags[i, j]:
        raise ValueError(
            f"cell must be a covered, unflagged cell of the {rows}x{cols} board; got {cell!r}"
        )
    total = analyze(obs, max_states=max_states).layouts
    counts = [0] * 9  # 0 where no layout shows v there
    for v, _, shown in each_outcome(obs, (i, j), max_states=max_states):
        counts[v] = shown.layouts
    shares = [Fraction(count, total) for count in counts]
    if exact:
        return shares
    return np.array([float(f) for f in shares])
