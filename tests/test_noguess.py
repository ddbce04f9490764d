"""No-guess boards: the certificate against brute force, the generators against an independent judge."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import nnsweeper as ns
from nnsweeper import noguess
from nnsweeper.errors import InvalidRulesError
from nnsweeper.game import Rules, draw_layout, mine_cells
from nnsweeper.grid import neighbour_sum
from nnsweeper.noguess import (
    NoGuessBudgetError,
    certify,
    format_layouts,
    no_guess_board,
    parse_layouts,
)


def _brute_no_guess(mine: np.ndarray, first) -> bool:
    """Deduction by listing every layout: reveal every cell safe in all layouts that fit what is shown."""
    rows, cols = mine.shape
    counts = neighbour_sum(mine)
    total = int(mine.sum())
    cells = [(i, j) for i in range(rows) for j in range(cols)]
    every = []
    for chosen in itertools.combinations(range(len(cells)), total):
        lay = np.zeros(mine.shape, dtype=bool)
        lay.ravel()[list(chosen)] = True
        every.append((lay, neighbour_sum(lay)))
    shown = np.zeros(mine.shape, dtype=bool)

    def reveal(i, j):
        stack = [(i, j)]
        while stack:
            a, b = stack.pop()
            if shown[a, b]:
                continue
            shown[a, b] = True
            if counts[a, b] == 0:
                stack += [(x, y) for x in range(max(a - 1, 0), min(a + 2, rows))
                          for y in range(max(b - 1, 0), min(b + 2, cols)) if not shown[x, y]]

    reveal(*first)
    while shown.sum() < mine.size - total:
        fits = [lay for lay, c in every if not lay[shown].any() and np.array_equal(c[shown], counts[shown])]
        safe = [(i, j) for i, j in cells if not shown[i, j] and not any(lay[i, j] for lay in fits)]
        if not safe:
            return False
        for i, j in safe:
            reveal(i, j)
    return True


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 4), st.integers(2, 5), st.data())
def test_the_certificate_is_deduction_over_every_layout(rows, cols, data):
    cells = rows * cols
    mines = data.draw(st.integers(1, min(6, cells - 1)))
    first = data.draw(st.integers(0, cells - 1))
    others = [k for k in range(cells) if k != first]
    chosen = data.draw(st.lists(st.sampled_from(others), min_size=mines, max_size=mines, unique=True))
    mine = np.zeros((rows, cols), dtype=bool)
    mine.ravel()[chosen] = True
    cell = divmod(first, cols)
    found = certify(mine, cell)
    assert found.no_guess == _brute_no_guess(mine, cell)
    if found.no_guess:
        assert np.array_equal(found.revealed, ~mine) and not (found.known_mines & ~mine).any()


def test_a_board_that_needs_a_guess_is_refused_and_one_that_does_not_is_certified():
    # 1x4, a mine at one end: from the other end the numbers walk to it.
    assert certify(np.array([[False, False, False, True]]), (0, 0)).no_guess
    # 2x2 box around a forced 50/50: the click at (0, 0) shows 1 with three covered neighbours.
    mine = np.zeros((2, 2), dtype=bool)
    mine[1, 1] = True
    found = certify(mine, (0, 0))
    assert not found.no_guess and found.steps == 1 and found.revealed.sum() == 1
    # The mine count proves what no number does: 3x3, 8 mines around a safe centre... and one
    # safe corner: after the click shows 8 nothing else fits, so the board is won at once.
    mine = np.ones((3, 3), dtype=bool)
    mine[1, 1] = False
    assert certify(mine, (1, 1)).no_guess


@pytest.mark.parametrize("mode, rows, cols, mines, first", [
    ("uniform", 9, 9, 10, (4, 4)), ("uniform", 16, 16, 40, (0, 0)), ("uniform", 8, 30, 40, (7, 29)),
    ("fast", 9, 9, 10, (4, 4)), ("fast", 16, 16, 40, (0, 0)), ("fast", 9, 9, 28, (0, 0)),
    ("fast", 8, 30, 60, (7, 29)),  # dense: rejection would take minutes
])
def test_no_guess_boards_are_won_by_csp_without_a_guess(mode, rows, cols, mines, first):
    """The independent judge: csp (local rules, then the engine) plays the board the game places and
    never guesses, on every seed."""
    rule = "no-guess" if mode == "uniform" else "no-guess-fast"
    csp = ns.get_solver("csp", start=first)
    for seed in range(12):
        layout = no_guess_board(rows, cols, mines, first, seed, mode=mode)
        assert layout.sum() == mines and not layout[max(first[0] - 1, 0): first[0] + 2,
                                                     max(first[1] - 1, 0): first[1] + 2].any()
        game = ns.Game(Rules(rows, cols, mines, rule), seed=seed)
        rec = csp.play(game, np.random.default_rng(seed))
        assert rec.won and rec.guesses == 0, (seed, rec.guesses)
        assert np.array_equal(game.mine_layout(), layout)  # the game places the generator's layout


def test_boards_are_a_function_of_the_arguments(monkeypatch):
    monkeypatch.setattr(noguess, "CACHE_BYTES", 0)  # each board searched again
    a = no_guess_board(16, 16, 40, (0, 0), 5)
    assert np.array_equal(a, no_guess_board(16, 16, 40, (0, 0), 5))
    assert not np.array_equal(a, no_guess_board(16, 16, 40, (0, 0), 6))
    assert np.array_equal(a, draw_layout(Rules(16, 16, 40, "no-guess"), 5, (0, 0)))
    # A larger budget finds the same board, never another.
    assert np.array_equal(a, no_guess_board(16, 16, 40, (0, 0), 5, max_tries=10**6, time_limit=60))
    assert np.array_equal(no_guess_board(9, 9, 30, (4, 4), 3, mode="fast"),
                          no_guess_board(9, 9, 30, (4, 4), 3, mode="fast"))


def test_uniform_mode_draws_every_no_guess_layout_equally_often():
    """3x5, 4 mines, the first click opening the corner: list the 330 layouts the rule allows,
    certify each (112 need no guess), and compare 3,000 seeded boards with the uniform distribution
    over the certified ones."""
    rules = Rules(3, 5, 4, "zero")
    allowed = np.flatnonzero(mine_cells(rules, (0, 0)).ravel())
    every = list(itertools.combinations(allowed.tolist(), 4))
    good = []
    for cells in every:
        mine = np.zeros((3, 5), dtype=bool)
        mine.ravel()[list(cells)] = True
        if certify(mine, (0, 0)).no_guess:
            good.append(cells)
    assert (len(good), len(every)) == (112, 330)
    seen = dict.fromkeys(good, 0)
    for seed in range(3000):
        seen[tuple(np.flatnonzero(no_guess_board(3, 5, 4, (0, 0), seed).ravel()).tolist())] += 1
    assert stats.chisquare(list(seen.values())).pvalue > 0.001


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(mode="magic"), InvalidRulesError, "mode must be one of uniform, fast; got 'magic'"),
    (dict(rule="none"), InvalidRulesError, "rule must be 'zero' or 'safe' for a no-guess board; got 'none'"),
    (dict(first_click=(9, 0)), InvalidRulesError, r"first_click row must be an integer in \[0, 9\)"),
    (dict(first_click="corner"), InvalidRulesError, "first_click must be a"),
    (dict(seed=-1), InvalidRulesError, "seed must be a non-negative integer; got -1"),
    (dict(max_tries=0), InvalidRulesError, "max_tries must be at least 1; got 0"),
    (dict(time_limit=0), InvalidRulesError, "time_limit must be a positive number"),
    (dict(mines=72), InvalidRulesError, "mines must be between 1 and 71"),
    (dict(mines=60, max_tries=3), NoGuessBudgetError, "within max_tries=3 certifications"),
])
def test_bad_arguments_and_spent_budgets_are_refused(kwargs, error, match):
    args = dict(rows=9, cols=9, mines=10, first_click=(4, 4), seed=0) | kwargs
    with pytest.raises(error, match=match):
        no_guess_board(**args)


def test_certify_refuses_a_click_on_a_mine_and_a_malformed_layout():
    with pytest.raises(InvalidRulesError, match=r"first_click \(0, 0\) holds a mine"):
        certify(np.array([[True, False]]), (0, 0))
    with pytest.raises(InvalidRulesError, match="2-D array of bool"):
        certify(np.zeros((2, 2), dtype=int), (0, 0))


def test_the_text_format_reads_back_and_refuses_other_characters():
    layouts = [no_guess_board(9, 9, 10, (4, 4), s) for s in range(3)]
    text = format_layouts(layouts, [f"board {k}" for k in range(3)])
    assert text.startswith("# board 0\n") and text.count("\n\n") == 2
    assert all(np.array_equal(a, b) for a, b in zip(parse_layouts(text), layouts, strict=True))
    with pytest.raises(InvalidRulesError, match="line 2: a layout row holds only"):
        parse_layouts("..*\n.x.\n")
    with pytest.raises(InvalidRulesError, match="not a rectangle"):
        parse_layouts("..*\n..\n")
    with pytest.raises(InvalidRulesError, match="no layout"):
        parse_layouts("# nothing\n")


def test_eval_plays_no_guess_boards_and_csp_never_guesses(tmp_path):
    table = ns.evaluate({"csp": ns.get_solver("csp")}, boards=["beginner"], trials=30,
                        first_click="no-guess", n_jobs=1)
    (row,) = table.rows
    assert row["wins"] == 30 and row["first_click"] == "no-guess"


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "nnsweeper", *args], capture_output=True, text=True, cwd=cwd)


def test_the_boards_command_writes_certified_boards_and_refuses_in_one_line(tmp_path):
    done = _cli("boards", "b.txt", "--board", "9x9:12", "--no-guess", "fast", "--count", "4",
                "--start", "corner", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    layouts = parse_layouts((tmp_path / "b.txt").read_text())
    assert len(layouts) == 4 and all(certify(m, (0, 0)).no_guess and m.sum() == 12 for m in layouts)
    assert "rule no-guess-fast, game seed" in (tmp_path / "b.txt").read_text()
    spent = _cli("boards", "c.txt", "--board", "9x9:60", "--no-guess", "--max-tries", "2", "--quiet",
                 cwd=tmp_path)
    assert spent.returncode == 2 and len(spent.stderr.strip().splitlines()) == 1
    assert "within max_tries=2 certifications" in spent.stderr and not (tmp_path / "c.txt").exists()
    both = _cli("eval", "--solvers", "csp", "--preset", "beginner", "--no-guess", "--first-click", "zero",
                "--trials", "2", "--quiet", "--out", "x", cwd=tmp_path)
    assert both.returncode == 2 and "give --no-guess or --first-click zero, not both" in both.stderr


def test_the_gymnasium_environment_deals_no_guess_boards():
    pytest.importorskip("gymnasium")
    from nnsweeper.gym import MinesweeperGymEnv

    env = MinesweeperGymEnv(preset="beginner", first_click="no-guess")
    for seed in range(5):
        env.reset(seed=seed)
        env.step(40)  # the centre: it opens an area, and from it no guess is ever needed
        assert certify(env.game.mine_layout(), (4, 4)).no_guess
