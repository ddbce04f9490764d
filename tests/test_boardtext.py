"""Boards typed as text, and probabilities printed as a grid."""

import math
import re

import numpy as np
import pytest

from nnsweeper import BoardParseError, InvalidBoardError, analyze
from nnsweeper.boardtext import (
    LEGEND,
    format_analysis,
    format_board,
    format_count,
    format_probabilities,
    parse_board,
    parse_observation,
)


def cells(text):
    """The grid part of format_probabilities output, as lists of strings (labels dropped)."""
    lines = text.split("\n\n")[0].splitlines()
    return [line.split()[1:] for line in lines[1:]]


def test_parse_cells_flags_and_whitespace():
    grid, flags = parse_board("\n\n   1 F .\n\t. f 0  \n\n")
    np.testing.assert_array_equal(grid, [[1, -1, -1], [-1, -1, 0]])
    np.testing.assert_array_equal(flags, [[False, True, False], [False, True, False]])
    assert grid.dtype == np.int8 and flags.dtype == bool


def test_spaces_between_cells_are_optional():
    a = parse_board("1.F\n.8.")
    b = parse_board("1 . F\n.  8 .")
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_format_board_round_trips():
    grid = np.array([[0, 1, -1], [2, -1, -1]], dtype=np.int8)
    flags = np.array([[False, False, True], [False, False, False]])
    text = format_board(grid, flags)
    assert text == "0 1 F\n2 . ."
    back_grid, back_flags = parse_board(text)
    np.testing.assert_array_equal(back_grid, grid)
    np.testing.assert_array_equal(back_flags, flags)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 . .\n. . x\n", r"line 2, column 5: unexpected character 'x'"),
        ("\n..9\n", r"line 2, column 3: unexpected character '9'"),
        ("1 . .\n. .\n. . .", r"line 2: row has 2 cells but line 1 has 3"),
        ("1 . .\n\n. . .", r"line 2: blank line inside the board"),
        ("", r"the board is empty"),
        (" \n\t\n", r"the board is empty"),
    ],
)
def test_parse_errors_name_line_column_and_character(text, message):
    with pytest.raises(BoardParseError, match=message):
        parse_board(text)


def test_probabilities_grid_with_interior_footer():
    # A 1 in the corner of a 3x3 board with 2 mines: one mine among its three covered
    # neighbours, the other among the five cells away from it. 3 * 5 layouts, all
    # equally likely: 1/3 next to the 1, 1/5 elsewhere.
    grid, flags = parse_board("1..\n...\n...")
    a = analyze(grid, 2, flags)
    text = format_probabilities(grid, flags, a.probabilities,
                                interior_probability=a.interior_probability)
    assert cells(text) == [["1", "33.3", "20.0"], ["33.3", "33.3", "20.0"],
                           ["20.0", "20.0", "20.0"]]
    assert text.splitlines()[0].split() == ["0", "1", "2"]
    assert "8 covered unflagged cells: 0 certainly safe, 0 certainly mines" in text
    assert "(interior): 20.0% each" in text


def test_probabilities_grid_with_a_flag():
    # The flag satisfies the 1, so its other neighbours are safe; the second mine is
    # in the right-hand column, one of two cells.
    grid, flags = parse_board("1 F .\n. . .")
    probs = analyze(grid, 2, flags).probabilities
    text = format_probabilities(grid, flags, probs)
    assert cells(text) == [["1", "F", "50.0"], ["0.0", "0.0", "50.0"]]
    assert "4 covered unflagged cells: 2 certainly safe, 0 certainly mines" in text
    assert "interior" not in text


def test_near_certainties_are_not_rounded_to_certainties():
    grid = np.full((1, 4), -1)
    text = format_probabilities(grid, None, np.array([[0.0, 1e-5, 1 - 1e-5, 1.0]]))
    assert cells(text) == [["0.0", "<0.1", ">99.9", "100.0"]]
    assert "1 certainly safe, 1 certainly mines" in text


def test_format_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"probs must have the grid's shape \(2, 2\)"):
        format_probabilities(np.zeros((2, 2)), None, np.zeros((3, 3)))


def test_board_size_and_text_length_are_bounded(monkeypatch):
    from nnsweeper import boardtext

    assert boardtext.MAX_TEXT_CHARS == 16 * 2**20
    grid, _ = parse_board(("." * 1000 + "\n") * 3)
    assert grid.shape == (3, 1000)
    with pytest.raises(BoardParseError, match="line 2: a board row has at most 1000 cells"):
        parse_board("...\n" + "." * 1001)
    with pytest.raises(BoardParseError, match=r"at most 1000 rows; got 1001 \(lines 2 to 1002\)"):
        parse_board("\n" + ". .\n" * 1001)
    monkeypatch.setattr(boardtext, "MAX_TEXT_CHARS", 10)
    with pytest.raises(BoardParseError, match="at most 10 characters; got 11"):
        parse_board(". . . . . ." [:11])


# ------------------------------------------------------------------ format_analysis
def analysis_cells(text):
    """The grid part of format_analysis output, as lists of strings (labels dropped)."""
    lines = text.split("\nlegend:")[0].splitlines()
    return [line.split()[1:] for line in lines[1:]]


def test_analysis_marks_numbers_flags_and_proven_cells():
    # The flag satisfies the 1: (1, 0) and (1, 1) are safe; the second mine is one of
    # the two right-hand cells.
    board = parse_observation("1 F .\n. . .", 2)
    text = format_analysis(board)
    assert analysis_cells(text) == [["[1]", "F", "50.0"], ["safe", "safe", "50.0"]]
    assert LEGEND in text.splitlines()
    assert "mines left: 1 (2 on the board, 1 flagged)" in text
    assert "covered unflagged cells: 4 (2 next to a number, 2 interior); proven: 2 safe, 0 mines" in text
    assert "interior P(mine): 0.5 (50.0%) for each of the 2 cells away from the numbers" in text
    assert "consistent layouts: 2 (exactly)" in text
    assert "\x1b[" not in text


def test_analysis_marks_an_unflagged_proven_mine_and_no_interior():
    # The 1 has one covered neighbour: a mine, not flagged. No cell is away from the numbers.
    board = parse_observation("1 .\n1 1", 1)
    text = format_analysis(board)
    assert analysis_cells(text) == [["[1]", "mine"], ["[1]", "[1]"]]
    assert "proven: 0 safe, 1 mine" in text
    assert "interior P(mine): none" in text
    assert "consistent layouts: 1 (exactly)" in text


def test_analysis_of_the_corner_one_keeps_probabilities():
    board = parse_observation("1..\n...\n...", 2)
    a = analyze(board)
    text = format_analysis(board, a)
    assert analysis_cells(text) == [["[1]", "33.3", "20.0"], ["33.3", "33.3", "20.0"],
                                    ["20.0", "20.0", "20.0"]]
    assert text.splitlines()[0].split() == ["0", "1", "2"]
    assert "consistent layouts: 15 (exactly)" in text  # 3 * 5


def test_analysis_colour_only_when_asked():
    board = parse_observation("1 F .\n. . .", 2)
    plain, coloured = format_analysis(board), format_analysis(board, color=True)
    assert "\x1b[32msafe\x1b[0m" in coloured and "\x1b[1m [1]\x1b[0m" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


def test_analysis_refuses_a_raw_grid_and_a_mismatched_analysis():
    with pytest.raises(InvalidBoardError, match=r"must be an Observation .*parse_observation.*got ndarray"):
        format_analysis(np.zeros((2, 2)))
    other = analyze(parse_observation("1 .", 1))
    with pytest.raises(InvalidBoardError, match=r"of a board of shape \(2, 2\); got shape \(1, 2\)"):
        format_analysis(parse_observation("1 .\n. .", 1), other)


def test_layout_counts_exact_when_small_scientific_when_huge():
    assert format_count(0) == "0 (exactly)"
    assert format_count(10**15 - 1) == f"{10**15 - 1} (exactly)"
    assert format_count(10**15) == "about 1.000e+15 (ln = 34.54)"
    assert format_count(12346 * 10**40) == "about 1.235e+44 (ln = 101.52)"
    assert format_count(9_999_999 * 10**30) == "about 1.000e+37 (ln = 85.20)"
    huge = math.comb(10**6, 2 * 10**5)  # more digits than str() prints by default
    text = format_count(huge)
    assert text.startswith("about ") and f"(ln = {math.log(huge):.2f})" in text
    with pytest.raises(ValueError, match="an integer of at least 0; got -1"):
        format_count(-1)


def test_board_text_functions_are_top_level():
    import nnsweeper as ns

    assert ns.format_board is format_board and ns.parse_board is parse_board
    assert {"format_board", "parse_board", "parse_observation", "format_analysis"} <= set(ns.__all__)


def test_minesweeperprob_text_reads_as_the_same_board_with_its_mine_count():
    from nnsweeper.boardtext import parse_position

    grid, flags, mines = parse_position("\n  5x2x3 \n12HmH\nHHMhH\n")
    np.testing.assert_array_equal(grid, [[1, 2, -1, -1, -1], [-1, -1, -1, -1, -1]])
    np.testing.assert_array_equal(flags, [[False] * 5, [False, False, True, False, False]])
    assert mines == 3
    assert parse_position("12..F\n")[2] is None
    assert parse_observation("5x2x3\n12HmH\nHHMhH\n").total_mines == 3
    with pytest.raises(BoardParseError, match="header says 5 columns and 3 rows"):
        parse_position("5x3x3\n12HmH\nHHMhH\n")
    with pytest.raises(BoardParseError, match=r"line 2, column 3: unexpected character '\.'"):
        parse_position("5x2x3\n12.mH\nHHMhH\n")
    with pytest.raises(BoardParseError, match="the board is empty"):
        parse_position("5x2x3\n\n")
