"""sample_layouts draws every consistent layout equally often: checked against brute force."""

import itertools

import numpy as np
import pytest
from scipy.stats import chisquare

import nnsweeper as ns
from nnsweeper.engine.sampling import MAX_SAMPLE_CELLS, _below
from nnsweeper.errors import EngineLimitError, InconsistentBoardError
from nnsweeper.grid import neighbour_sum


def consistent_layouts(grid, total_mines, flags=None):
    """Every layout (a frozenset of flat mine cells) that fits the board: brute force."""
    grid = np.asarray(grid)
    flags = np.zeros(grid.shape, dtype=bool) if flags is None else np.asarray(flags)
    covered = np.flatnonzero(((grid == -1) & ~flags).ravel())
    fixed = set(np.flatnonzero(flags.ravel()).tolist())
    revealed = grid >= 0
    out = []
    for mines in itertools.combinations(covered.tolist(), total_mines - len(fixed)):
        layout = np.zeros(grid.size, dtype=bool)
        layout[list(mines) + list(fixed)] = True
        layout = layout.reshape(grid.shape)
        if np.array_equal(neighbour_sum(layout)[revealed], grid[revealed]):
            out.append(frozenset(np.flatnonzero(layout.ravel()).tolist()))
    return out


def _grid(text):
    return np.array([[-1 if ch == "." else int(ch) for ch in row] for row in text.split()])


def _game_board(seed, flag_one=False):
    """A 5x5 board with 5 mines after a click in the centre (and one more safe cell when the
    first leaves over 20 cells covered), from a seeded game; optionally with one proven mine
    flagged."""
    env = ns.MinesweeperEnv(5, 5, 5, seed=seed)
    grid = env.reveal(2, 2)[0]
    if (grid < 0).sum() > 20:
        grid = env.reveal(*np.argwhere((env.mask == 1) & (env.board >= 0))[0])[0]
    flags = None
    if flag_one:
        flags = np.zeros(grid.shape, dtype=bool)
        flags[tuple(np.argwhere(ns.analyze(grid, 5).mines)[0])] = True
    return grid, 5, flags


BOARDS = {
    # Nothing revealed: every 2-subset of 9 cells.
    "empty": lambda: (_grid("... ... ..."), 2, None),
    # A corner 1 with an interior beyond it.
    "corner one": lambda: (_grid("1... .... ...."), 3, None),
    # From games: one component and interior cells (255 layouts); two components and
    # interior cells; a proven mine flagged.
    "game 2": lambda: _game_board(2),
    "game 27, two components": lambda: _game_board(27),
    "game 38, a flag": lambda: _game_board(38, flag_one=True),
}


@pytest.mark.parametrize("name", list(BOARDS))
def test_layouts_are_uniform_over_the_consistent_ones(name):
    # 300 draws per consistent layout on average, compared with the brute-force list.
    grid, mines, flags = BOARDS[name]()
    truth = consistent_layouts(grid, mines, flags)
    assert len(truth) >= 3 and len(truth) == ns.analyze(grid, mines, flags).layouts
    if "two components" in name:
        assert ns.analyze(grid, mines, flags).n_components == 2
    draws = 300 * len(truth)
    samples = ns.sample_layouts(grid, mines, draws, np.random.default_rng(7), flags=flags)
    assert samples.shape == (draws, *grid.shape)
    seen = [frozenset(np.flatnonzero(s.ravel()).tolist()) for s in samples]
    index = {layout: k for k, layout in enumerate(truth)}
    assert set(seen) <= set(index)  # every sample fits the board
    counts = np.bincount([index[s] for s in seen], minlength=len(truth))
    assert counts.min() > 0  # and every consistent layout is drawn
    # Uniform: a chi-square test at the 0.1% level (the seed is fixed, so it is one fixed check).
    assert chisquare(counts).pvalue > 1e-3
    if flags is not None:
        assert samples[:, flags].all()


def test_mean_of_the_samples_is_the_engine_probability_on_a_real_board():
    env = ns.MinesweeperEnv(16, 30, 99, seed=5)
    grid = env.reveal(8, 15)[0]
    n = 4000
    samples = ns.sample_layouts(grid, 99, n, np.random.default_rng(3))
    p = ns.analyze(grid, 99).probabilities
    assert (samples.sum(axis=(1, 2)) == 99).all() and not samples[:, grid >= 0].any()
    # Each cell's frequency within 5 standard errors of its exact probability.
    se = np.sqrt(p * (1 - p) / n)
    assert (np.abs(samples.mean(axis=0) - p) <= 5 * se + 1e-12).all()


def test_counts_beyond_64_bits_are_drawn_exactly():
    # 30x30 with 300 mines: C(899, 300) layouts, far beyond 2**64.
    grid = np.full((30, 30), -1)
    env = ns.MinesweeperEnv(30, 30, 300, seed=1)
    grid = env.reveal(15, 15)[0]
    assert ns.analyze(grid, 300).layouts > 2**200
    samples = ns.sample_layouts(grid, 300, 50, 11)
    assert (samples.sum(axis=(1, 2)) == 300).all()
    again = ns.sample_layouts(grid, 300, 50, np.random.default_rng(11))
    assert np.array_equal(samples, again)  # a seed is its generator


def test_below_is_exact_and_in_range():
    below = _below(np.random.default_rng(0))
    big = 3 * 2**100 + 1
    draws = [below(big) for _ in range(2000)]
    assert all(0 <= d < big for d in draws)
    # The top bits are uniform: each third of the range gets about a third.
    thirds = np.bincount([d * 3 // big for d in draws], minlength=3)
    assert chisquare(thirds).pvalue > 1e-3
    assert sorted({below(3) for _ in range(200)}) == [0, 1, 2]


def test_bad_arguments_are_refused_by_name():
    grid = _grid("1.. ... ...")
    with pytest.raises(ValueError, match="n must be a positive integer"):
        ns.sample_layouts(grid, 2, 0, 0)
    with pytest.raises(ValueError, match="rng must be a numpy Generator or a seed"):
        ns.sample_layouts(grid, 2, 1, None)
    with pytest.raises(ValueError, match="MAX_SAMPLE_CELLS"):
        ns.sample_layouts(grid, 2, MAX_SAMPLE_CELLS, 0)
    with pytest.raises(InconsistentBoardError):
        ns.sample_layouts(_grid("1.. ... ..."), 9, 1, 0)
    with pytest.raises(EngineLimitError, match="max_states=1"):
        ns.sample_layouts(_grid("1.1 ... ..."), 2, 1, 0, max_states=1)


@pytest.mark.parametrize("name", list(BOARDS))
def test_outcome_distribution_equals_brute_force(name):
    from fractions import Fraction

    grid, mines, flags = BOARDS[name]()
    truth = consistent_layouts(grid, mines, flags)
    fl = np.zeros(grid.shape, dtype=bool) if flags is None else flags
    p = ns.analyze(grid, mines, flags).probabilities
    rows, cols = grid.shape
    for i, j in np.argwhere((grid == -1) & ~fl):
        want = [0] * 9
        for layout in truth:
            if i * cols + j in layout:
                continue
            shown = sum((a * cols + b) in layout for a in range(max(i - 1, 0), min(i + 2, rows))
                        for b in range(max(j - 1, 0), min(j + 2, cols)))
            want[shown] += 1
        got = ns.outcome_distribution(grid, mines, (i, j), flags, exact=True)
        assert got == [Fraction(w, len(truth)) for w in want]
        # The floats are the fractions rounded once, and they leave P(mine) exactly.
        assert ns.outcome_distribution(grid, mines, (i, j), flags).tolist() == [float(f) for f in got]
        assert float(1 - sum(got)) == p[i, j]


def test_outcome_distribution_refuses_cells_that_show_nothing():
    grid = _grid("1.. ... ...")
    for cell, words in (((0, 0), "covered, unflagged"), ((5, 0), "covered, unflagged"), ("a", "pair")):
        with pytest.raises(ValueError, match=words):
            ns.outcome_distribution(grid, 2, cell)
