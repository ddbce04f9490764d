"""Grading a game: every exact figure against a brute-force game tree of its own."""

from __future__ import annotations

import itertools
import json
from functools import cache

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.errors import InvalidBoardError
from nnsweeper.grid import neighbour_sum
from nnsweeper.players.grading import MISTAKE, Replay, bbbv, grade
from nnsweeper.players.play import GameLog

ROWS, COLS, MINES = 3, 4, 3
CELLS = [(i, j) for i in range(ROWS) for j in range(COLS)]
LAYOUTS = []
for chosen in itertools.combinations(range(ROWS * COLS), MINES):
    lay = np.zeros((ROWS, COLS), dtype=bool)
    lay.ravel()[list(chosen)] = True
    LAYOUTS.append((lay, neighbour_sum(lay)))


def _open(k: int, revealed: frozenset, cell) -> frozenset:
    """``revealed`` after clicking the safe ``cell`` in layout ``k`` (zeros open their neighbours)."""
    lay, counts = LAYOUTS[k]
    out, stack = set(revealed), [cell]
    while stack:
        c = stack.pop()
        if c in out:
            continue
        out.add(c)
        if counts[c] == 0:
            stack += [(a, b) for a in range(max(c[0] - 1, 0), min(c[0] + 2, ROWS))
                      for b in range(max(c[1] - 1, 0), min(c[1] + 2, COLS)) if (a, b) not in out]
    return frozenset(out)


@cache
def value(revealed: frozenset, layouts: frozenset) -> float:
    """P(win) with best play, from the layouts that fit what ``revealed`` shows (each equally likely)."""
    if len(layouts) == 1:
        return 1.0
    return max(after(revealed, layouts, c) for c in CELLS if c not in revealed)


def after(revealed: frozenset, layouts: frozenset, cell) -> float:
    """P(win) when ``cell`` is clicked now, then best play."""
    groups: dict = {}
    for k in layouts:
        lay, counts = LAYOUTS[k]
        if lay[cell]:
            continue
        shown = _open(k, revealed, cell)
        key = (shown, tuple(int(counts[c]) for c in sorted(shown)))
        groups.setdefault(key, set()).add(k)
    return sum(len(g) * value(key[0], frozenset(g)) for key, g in groups.items()) / len(layouts)


def fitting(revealed: frozenset, truth: int) -> frozenset:
    counts = LAYOUTS[truth][1]
    return frozenset(k for k, (lay, c) in enumerate(LAYOUTS)
                     if not any(lay[x] for x in revealed) and all(c[x] == counts[x] for x in revealed))


def play_worst(truth: int, rng) -> list:
    """A careless player: after the first click, a random covered cell (proved safe or not)."""
    revealed = _open(truth, frozenset(), (0, 0))
    moves = [("reveal", ((0, 0),))]
    lay = LAYOUTS[truth][0]
    while len(revealed) < ROWS * COLS - MINES:
        covered = [c for c in CELLS if c not in revealed]
        cell = covered[rng.integers(len(covered))]
        moves.append(("reveal", (cell,)))
        if lay[cell]:
            break
        revealed = _open(truth, revealed, cell)
    return moves


def test_every_graded_figure_is_the_game_trees():
    rng = np.random.default_rng(5)
    seen = {"needless": 0, "wrong choice": 0, "best": 0}
    for truth in range(0, len(LAYOUTS), 3):
        lay = LAYOUTS[truth][0]
        if lay[0, 0]:
            continue
        moves = play_worst(truth, rng)
        g = grade(Replay(lay, moves))
        revealed = _open(truth, frozenset(), (0, 0))
        for m, (_, (cell,)) in zip(g.moves[1:], moves[1:], strict=False):
            fits = fitting(revealed, truth)
            p = {c: sum(LAYOUTS[k][0][c] for k in fits) / len(fits) for c in CELLS if c not in revealed}
            assert m.p_mine == pytest.approx(p[cell], abs=1e-12)
            assert m.p_lowest == pytest.approx(min(p.values()), abs=1e-12)
            assert m.safe_existed == (min(p.values()) == 0)
            if p[cell] == 0:
                assert (m.kind, m.loss, m.estimate) == ("certain", 0.0, "certain")
            else:
                assert m.estimate == "exact" and m.kind == ("needless guess" if m.safe_existed else "guess")
                assert m.win_before == pytest.approx(value(revealed, fits), abs=1e-12)
                assert m.win_after == pytest.approx(after(revealed, fits, cell), abs=1e-12)
                assert m.loss == pytest.approx(m.win_before - m.win_after, abs=1e-12)
                seen["needless"] += m.kind == "needless guess" and m.loss > 0
                seen["wrong choice"] += m.p_mine > m.p_lowest > 0 and m.loss > 0
                seen["best"] += m.loss == 0
            if lay[cell]:
                break
            revealed = _open(truth, revealed, cell)
    assert all(n >= 3 for n in seen.values()), seen


def test_a_forced_fifty_fifty_a_certain_move_and_a_needless_guess_by_hand():
    """Chances worked by hand.

    2x2 board, one mine at (1, 1): the click at (0, 0) shows 1; each covered cell is the mine in
    1 of 3 layouts. Best play: guess one (safe 2/3); it shows 1 and leaves a 50/50: P(win) = 1/3.
    """
    mines = np.zeros((2, 2), dtype=bool)
    mines[1, 1] = True
    g = grade(Replay(mines, [("reveal", ((0, 0),)), ("reveal", ((0, 1),)), ("reveal", ((1, 0),))]))
    first, guess, fifty = g.moves
    assert guess.p_mine == pytest.approx(1 / 3) and guess.win_before == pytest.approx(1 / 3)
    assert guess.win_after == pytest.approx(1 / 3) and guess.loss == 0 and guess.kind == "guess"
    assert fifty.p_mine == fifty.p_lowest == 0.5 and fifty.win_before == fifty.win_after == 0.5
    assert g.won and g.summary()["luck"] == pytest.approx(2 / 3 * 1 / 2) and g.summary()["accuracy"] == 1.0
    # 1x4, one mine at (0, 2): the click at (0, 0) shows 0 and opens (0, 1), which shows 1 and
    # proves (0, 2) a mine and (0, 3) safe. Clicking the proved mine is a needless guess that
    # throws the whole game away; clicking (0, 3) is certain and wins.
    mines = np.array([[False, False, True, False]])
    g = grade(Replay(mines, [("reveal", ((0, 0),)), ("reveal", ((0, 2),))]))
    blunder = g.moves[1]
    assert (blunder.kind, blunder.p_mine, blunder.p_lowest) == ("needless guess", 1.0, 0.0)
    assert (blunder.win_before, blunder.win_after, blunder.loss, blunder.better) == (1.0, 0.0, 1.0, (0, 3))
    assert not g.won and g.summary()["mistakes"] == 1 and g.summary()["accuracy"] == 0.0
    g = grade(Replay(mines, [("reveal", ((0, 0),)), ("reveal", ((0, 3),))]))
    assert g.won and (g.moves[1].kind, g.moves[1].loss) == ("certain", 0.0)


def test_mistakes_accuracy_and_the_summary_follow_the_moves():
    # 3x4 with the mines where a careless player meets a needless guess (found by the test above).
    rng = np.random.default_rng(5)
    for truth in range(len(LAYOUTS)):
        lay = LAYOUTS[truth][0]
        if lay[0, 0]:
            continue
        g = grade(Replay(lay, play_worst(truth, rng)))
        s = g.summary()
        guesses = [m for m in g.moves if m.kind in ("guess", "needless guess")]
        assert s["guesses"] == len(guesses) and s["mistakes"] == sum(m.loss >= MISTAKE for m in g.moves)
        kept = np.prod([m.win_after / m.win_before for m in guesses if m.win_before])
        assert s["accuracy"] == pytest.approx(kept)
        if s["mistakes"]:
            worst = max(g.moves, key=lambda m: m.loss)
            assert s["biggest_loss"]["move"] == worst.number and worst.better is not None
            json.dumps(g.to_dict())  # the report's JSON holds only plain values
            return
    raise AssertionError("no game with a mistake")


def test_an_expert_game_is_graded_with_the_look_ahead_and_search_loses_nothing_by_it():
    r = ns.Rules.preset("expert")
    env = ns.MinesweeperEnv(r.rows, r.cols, r.mines, seed=12)
    rec = ns.get_solver("search", start="corner").play(env, np.random.default_rng(0))
    g = grade(GameLog(r, 12, [("reveal", m.cell[0], m.cell[1]) for m in rec.moves]))
    assert g.won == rec.won and len(g.moves) == len(rec.moves)
    guesses = [m for m in g.moves if m.kind == "guess"]
    assert guesses and {m.estimate for m in guesses} <= {"exact", "look-ahead"}
    assert all(m.loss == 0 for m in g.moves)  # search plays the grader's best cell
    assert g.bbbv == bbbv(env.mine_layout()) > 0


def test_bbbv_counts_openings_and_the_numbers_no_opening_reaches():
    mines = np.zeros((3, 3), dtype=bool)
    assert bbbv(mines) == 1  # one opening clears the board
    mines[1, 1] = True
    assert bbbv(mines) == 8  # eight numbers, no opening
    mines = np.zeros((1, 5), dtype=bool)
    mines[0, 2] = True
    assert bbbv(mines) == 2  # two openings, each with its number


def test_a_game_without_a_move_is_refused():
    with pytest.raises(InvalidBoardError, match="no move to grade"):
        grade(GameLog(ns.Rules(9, 9, 10), 1, []))
    with pytest.raises(InvalidBoardError, match="off the 2x2 board"):
        grade(Replay(np.zeros((2, 2), dtype=bool), [("reveal", ((0, 0),)), ("reveal", ((5, 0),))]))


def test_a_game_without_a_guess_says_so_and_draws_its_last_board(tmp_path):
    from nnsweeper.players.grading import format_grade, plot_grade
    from nnsweeper.players.play import PlaySession

    # 6x6 with 2 mines, seed 5: the first click at (0, 0) and one proved-safe cell win it.
    session = PlaySession(ns.Rules(6, 6, 2), 5)
    session.act("reveal", 0, 0)
    while not session.over:
        p = ns.analyze(ns.Observation.of(session.grid(), 2)).probabilities
        session.act("reveal", *map(int, np.argwhere((session.grid() < 0) & (p <= 0))[0]))
    graded = ns.grade(GameLog(session.rules, session.seed, session.log.actions))
    assert graded.won and graded.summary()["guesses"] == 0
    text = format_grade(graded)
    assert "no guess in this game: every move after the first click was proved safe" in text
    assert "move  cells" not in text  # no empty table
    np.testing.assert_array_equal(graded.final, session.grid())
    plot_grade(graded, tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 5000
