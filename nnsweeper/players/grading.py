"""A finished game graded move by move: what each click risked, and what it cost in chance of winning.

:func:`grade` replays a game (a :class:`~nnsweeper.players.play.GameLog`, as ``nnsweeper play --save``
writes it, or a :class:`Replay` of any source: :mod:`nnsweeper.players.replays` reads the players'
replay formats) and, for every move after the first click, looks at the position the player
saw, **the numbers only** (a human's flags are not trusted):

- the exact P(mine) of the move (a chord: that any cell it opens is a mine) and the lowest
  exact P(mine) of any covered cell;
- whether a cell proved safe existed (a guess then is a *needless guess*);
- the chance of winning before the move (with best play from there) and after it (the move,
  then best play), and the move's *loss*, the difference:

  * ``"exact"``: when at most :data:`ENDGAME_LAYOUTS` layouts fit the board, the game tree
    searched exactly (:class:`~nnsweeper.solvers.endgame.Endgame`), a true chance of winning;
  * ``"look-ahead"``: elsewhere, what ``search`` ranks its guesses by: the chance that the
    cell is safe and that the next decision is safe too (the next board worth a blend of its
    best and second-best safety). It is not the chance of winning the whole game; it is
    the same scale before and after the move, so the loss compares the move with the best
    candidate ``search`` found;
  * ``"certain"``: a move proved safe costs nothing (revealing a safe cell never lowers a
    chance of winning), and its chances are not computed.

The summary: moves and guesses, needless guesses, mistakes (a loss of at least
:data:`MISTAKE`), the biggest loss, the *accuracy* (the product over the guesses of the share
of the chance the move kept, ``after / before``: 100% when every guess was the best), the
*luck* (the chance of surviving the guesses the player survived, the product of their ``1 - P``),
and the speed figures a replay carries (time, 3BV, 3BV/s). Every probability is the exact
engine's; the decisions of the grading are the same on every machine.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from itertools import combinations

import numpy as np

from nnsweeper.errors import InvalidBoardError
from nnsweeper.grid import dilate, open_cells, openings

__all__ = ["ENDGAME_LAYOUTS", "MISTAKE", "GameGrade", "GradedMove", "Replay", "bbbv", "format_grade", "grade",
           "plot_grade", "replay_of_log"]

#: At most this many layouts: the chances of winning are searched exactly.
ENDGAME_LAYOUTS = 5000
#: Positions the exact search may expand per move before it falls back to the look-ahead.
NODE_LIMIT = 200_000
#: A loss of at least this much chance of winning is a mistake.
MISTAKE = 0.02


@dataclass(frozen=True)
class Replay:
    """A game as a grader needs it: the layout and the cells each move opened at once.

    Attributes
    ----------
    mines : ndarray of bool, shape (rows, cols)
        The layout (True: a mine).
    moves : list of (str, tuple of (int, int))
        In order: ``("reveal", (cell,))`` or ``("chord", cells)`` (the covered neighbours a
        chord opened, the mine that ended it included). The first is the first click.
    seconds : float or None
        The game's time, when the source records it.
    source : str
        Where it came from, for the report.
    """

    mines: np.ndarray
    moves: list
    seconds: float | None = None
    source: str = ""


@dataclass(frozen=True)
class GradedMove:
    """One move of a graded game (see the module for the fields' meaning)."""

    number: int
    action: str
    cells: tuple
    kind: str  # "first click", "certain", "guess", "needless guess"
    p_mine: float
    p_lowest: float
    lowest_cell: tuple
    safe_existed: bool
    estimate: str  # "exact", "look-ahead", "certain", "first click"
    win_before: float | None
    win_after: float | None
    loss: float
    better: tuple | None
    survived: bool


@dataclass
class GameGrade:
    """A graded game: its moves and the summary (:meth:`summary`)."""

    rows: int
    cols: int
    mines: int
    won: bool
    moves: list[GradedMove] = field(default_factory=list)
    seconds: float | None = None
    bbbv: int = 0
    source: str = ""
    #: The board each guess was made on (move number: grid, -1 covered), for the picture.
    positions: dict = field(default_factory=dict, repr=False)
    #: The board at the end of the game (-1 covered, the mine that ended a lost game -2), for the
    #: picture of a game without a guess.
    final: np.ndarray | None = field(default=None, repr=False)

    def summary(self) -> dict:
        guesses = [m for m in self.moves if m.kind in ("guess", "needless guess")]
        graded = [m for m in guesses if m.win_before]
        accuracy = math.prod(min(1.0, m.win_after / m.win_before) for m in graded) if graded else 1.0
        worst = max(self.moves, key=lambda m: m.loss, default=None)
        survived = [m for m in guesses if m.survived]
        return {
            "board": f"{self.rows}x{self.cols}/{self.mines}",
            "won": self.won,
            "moves": len(self.moves),
            "guesses": len(guesses),
            "needless_guesses": sum(m.kind == "needless guess" for m in self.moves),
            "mistakes": sum(m.loss >= MISTAKE for m in self.moves),
            "biggest_loss": None if worst is None or worst.loss <= 0 else
            {"move": worst.number, "loss": worst.loss, "cells": worst.cells, "better": worst.better,
             "estimate": worst.estimate},
            "accuracy": accuracy,
            "luck": math.prod(1.0 - m.p_mine for m in survived),
            "seconds": self.seconds,
            "3bv": self.bbbv,
            "3bv_per_second": self.bbbv / self.seconds if self.seconds else None,
        }

    def to_dict(self) -> dict:
        return {"board": {"rows": self.rows, "cols": self.cols, "mines": self.mines}, "won": self.won,
                "source": self.source, "summary": self.summary(), "moves": [asdict(m) for m in self.moves]}


def bbbv(mines: np.ndarray) -> int:
    """The board's 3BV: the fewest clicks that clear it (one per opening, one per other number)."""
    return _bbbv(mines, openings(mines)[1])


def _bbbv(mines: np.ndarray, labels: np.ndarray) -> int:
    """:func:`bbbv` with the layout's openings already labelled (:func:`~nnsweeper.grid.openings`)."""
    return int(labels.max(initial=0) + np.count_nonzero(~mines & ~dilate(labels > 0)))


def replay_of_log(log) -> Replay:
    """A :class:`~nnsweeper.players.play.GameLog` played again: its layout and what each action opened."""
    from nnsweeper.game import MinesweeperEnv

    r = log.rules
    g = MinesweeperEnv(r.rows, r.cols, r.mines, seed=log.seed, first_click=r.first_click)
    moves = []
    for action, i, j in log.actions:
        if g.done:
            break
        if action == "flag":
            if g.mask[i, j] == 1:
                g.toggle_flag(i, j)
            continue
        if action == "reveal" and g.mask[i, j] == 1:
            if g.flags[i, j]:
                continue
            g.reveal(i, j)
            moves.append(("reveal", ((i, j),)))
            continue
        # A chord (or a reveal on a number, which chords): the covered unflagged neighbours.
        if g.mask[i, j] == 1:
            continue
        around = [(a, b) for a, b in g._neighbors(i, j) if g.mask[a, b] == 1]
        flagged = sum(bool(g.flags[a, b]) for a, b in around)
        if flagged != g._counts[i, j] or flagged == len(around):
            continue
        opened = []
        for a, b in around:
            if not g.flags[a, b] and g.mask[a, b] == 1 and not g.done:
                g.reveal(a, b)
                opened.append((a, b))
        moves.append(("chord", tuple(opened)))
    if not moves:
        raise InvalidBoardError("the game has no move to grade (no cell was revealed)")
    return Replay(g.mine_layout(), moves, getattr(log, "seconds", None), "nnsweeper play --save")


#: Most cells one move may open at once: a chord opens the covered neighbours of one number.
MAX_MOVE_CELLS = 8


def _is_int(v) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


def _checked_log(log):
    """A :class:`~nnsweeper.players.play.GameLog` whose every field is what ``play --save`` writes."""
    from nnsweeper.game import Rules
    from nnsweeper.players.play import ACTIONS

    if not isinstance(log.rules, Rules):
        raise InvalidBoardError(f"GameLog.rules must be Rules; got {type(log.rules).__name__}")
    if not _is_int(log.seed) or log.seed < 0:
        raise InvalidBoardError(f"GameLog.seed must be the game's seed, a non-negative integer; "
                                f"got {log.seed!r:.40}")
    if not isinstance(log.actions, list | tuple):
        raise InvalidBoardError(f"GameLog.actions must be a list; got {type(log.actions).__name__}")
    r = log.rules
    for k, a in enumerate(log.actions):
        if (not isinstance(a, list | tuple) or len(a) != 3 or a[0] not in ACTIONS
                or not all(_is_int(v) for v in a[1:]) or not (0 <= a[1] < r.rows and 0 <= a[2] < r.cols)):
            raise InvalidBoardError(f"GameLog action {k} must be (reveal|flag|chord, row, col) on the "
                                    f"{r.rows}x{r.cols} board; got {a!r:.60}")
    return log


def _checked_replay(replay: Replay) -> Replay:
    """A :class:`Replay` whose layout, moves and time are well formed (see its fields)."""
    from nnsweeper.game import MAX_COLS, MAX_ROWS

    mines = replay.mines
    if not isinstance(mines, np.ndarray) or mines.dtype != bool or mines.ndim != 2 or 0 in mines.shape:
        raise InvalidBoardError("Replay.mines must be a 2-d bool array of the layout; got "
                                f"{type(mines).__name__} {getattr(mines, 'dtype', '')}".rstrip())
    rows, cols = mines.shape
    if rows > MAX_ROWS or cols > MAX_COLS:
        raise InvalidBoardError(f"Replay.mines is {rows}x{cols}, larger than {MAX_ROWS}x{MAX_COLS}")
    if not isinstance(replay.moves, list | tuple):
        raise InvalidBoardError(f"Replay.moves must be a list; got {type(replay.moves).__name__}")
    for k, move in enumerate(replay.moves, 1):
        ok = isinstance(move, list | tuple) and len(move) == 2 and move[0] in ("reveal", "chord")
        cells = move[1] if ok else None
        ok = ok and isinstance(cells, list | tuple) and 1 <= len(cells) <= MAX_MOVE_CELLS and all(
            isinstance(c, list | tuple) and len(c) == 2 and all(_is_int(v) for v in c) for c in cells)
        if not ok:
            raise InvalidBoardError(f"Replay move {k} must be (reveal|chord, cells): 1 to {MAX_MOVE_CELLS} "
                                    f"(row, col) cells; got {move!r:.80}")
        if move[0] == "reveal" and len(cells) != 1:
            raise InvalidBoardError(f"Replay move {k}: a reveal opens one cell; got {len(cells)}")
        rs, cs = [c[0] for c in cells], [c[1] for c in cells]
        if max(rs) - min(rs) > 2 or max(cs) - min(cs) > 2:
            raise InvalidBoardError(f"Replay move {k}: a chord opens neighbours of one number, cells within "
                                    f"a 3x3 square; got {cells!r:.80}")
    if replay.seconds is not None and (not isinstance(replay.seconds, int | float) or isinstance(
            replay.seconds, bool) or not 0 <= replay.seconds < float("inf")):
        raise InvalidBoardError(f"Replay.seconds must be None or a non-negative number; "
                                f"got {replay.seconds!r:.40}")
    return replay


def grade(game, *, endgame_layouts: int = ENDGAME_LAYOUTS) -> GameGrade:
    """Grade a finished (or abandoned) game move by move.

    Parameters
    ----------
    game : GameLog, Replay, str or path
        A game saved by ``nnsweeper play --save`` (the log or its file), or a :class:`Replay`
        (:func:`nnsweeper.players.replays.read_replay` makes one of an AVF, RMV, MVF or EVF file).
    endgame_layouts : int, default=ENDGAME_LAYOUTS
        Positions with at most this many layouts get exact chances of winning.

    Returns
    -------
    GameGrade
    """
    from nnsweeper.errors import check_int
    from nnsweeper.players.play import GameLog, load_game

    endgame_layouts = check_int("endgame_layouts", endgame_layouts, 0, InvalidBoardError)
    if isinstance(game, GameLog):
        replay = replay_of_log(_checked_log(game))
    elif isinstance(game, Replay):
        replay = _checked_replay(game)
    elif isinstance(game, str) or hasattr(game, "__fspath__"):
        replay = replay_of_log(load_game(game))
    else:
        raise InvalidBoardError(f"grade takes a GameLog, a Replay or the path of a saved game; got "
                                f"{type(game).__name__}")
    mines = np.asarray(replay.mines, dtype=bool)
    rows, cols = mines.shape
    counts, labels = openings(mines)
    shown = np.zeros(mines.shape, dtype=bool)
    out = GameGrade(rows, cols, int(mines.sum()), False, seconds=replay.seconds, bbbv=_bbbv(mines, labels),
                    source=replay.source)
    grader = _Grader(mines, endgame_layouts)
    moves = [(action, tuple((int(i), int(j)) for i, j in cells)) for action, cells in replay.moves]
    for number, (_, cells) in enumerate(moves, 1):
        for i, j in cells:
            if not (0 <= i < rows and 0 <= j < cols):
                raise InvalidBoardError(f"move {number} opens ({i}, {j}), off the {rows}x{cols} board")
    for number, (action, cells) in enumerate(moves, 1):
        cells = tuple(c for c in cells if not shown[c])
        if not cells:
            continue
        grid = np.where(shown, counts, -1).astype(np.int8)
        if number == 1:
            # Not graded: no number is shown yet (under the safe and zero rules it cannot lose).
            move = GradedMove(1, action, cells, "first click", 0.0, 0.0, cells[0], False, "first click",
                              None, None, 0.0, None, not mines[cells[0]])
        else:
            move = grader.move(number, action, grid, cells)
            if move.kind != "certain":
                out.positions[number] = grid
        out.moves.append(move)
        hit = [c for c in cells if mines[c]]
        if hit:
            out.final = np.where(shown, counts, -1).astype(np.int8)
            out.final[hit[0]] = -2
            break
        opened = np.zeros(mines.shape, dtype=bool)
        opened[tuple(np.array(cells).T)] = True
        open_cells(shown, opened, labels)
        if int(shown.sum()) == mines.size - int(mines.sum()):
            out.won = True
            break
    if out.final is None:
        out.final = np.where(shown, counts, -1).astype(np.int8)
    return out


class _Grader:
    """The engine's views of one game's positions (the look-ahead and the exact search)."""

    def __init__(self, mines: np.ndarray, endgame_layouts: int):
        from nnsweeper.solvers import SearchSolver

        self.mines, self.limit = mines, endgame_layouts
        self.total = int(mines.sum())
        self.search = SearchSolver()
        # The exact search's tree, made at the first position small enough and kept: the layouts
        # of every later position are among its layouts, and its memo serves them all.
        self.tree = None

    def move(self, number: int, action: str, grid: np.ndarray, cells) -> GradedMove:
        from nnsweeper.engine import analyze
        from nnsweeper.observation import Observation

        obs = Observation.from_checked(grid, self.total, np.zeros(grid.shape, dtype=bool))
        a = analyze(obs)
        p = a.probabilities
        open_ = a.unknown & ~a.mines
        lowest = float(p[open_].min())
        k = int(np.flatnonzero((p == lowest).ravel() & open_.ravel())[0])
        lowest_cell = divmod(k, grid.shape[1])
        safe_existed = lowest == 0.0
        p_mine = self._p_any(obs, a, cells)
        survived = not any(self.mines[c] for c in cells)
        if p_mine == 0.0:
            return GradedMove(number, action, cells, "certain", 0.0, lowest, lowest_cell, safe_existed,
                              "certain", None, None, 0.0, None, survived)
        kind = "needless guess" if safe_existed else "guess"
        before = after = None
        better = None
        estimate = "look-ahead"
        if len(cells) == 1:
            found = self._exact(obs, a, cells[0]) if a.layouts <= self.limit else None
            if found is not None:
                before, after, better = found
                estimate = "exact"
            else:
                before, after, better = self._look_ahead(obs, a, cells[0])
            if safe_existed and estimate == "look-ahead":
                # A proved-safe cell keeps every chance the position has: after it, the guess still waits.
                before = max(before, after)
        loss = 0.0 if before is None else max(0.0, before - after)
        return GradedMove(number, action, cells, kind, p_mine, lowest, lowest_cell, safe_existed, estimate,
                          before, after, loss, better if loss > 0 else None, survived)

    def _p_any(self, obs, a, cells) -> float:
        """P(at least one of ``cells`` is a mine), exactly (inclusion-exclusion over flagged subsets)."""
        from nnsweeper.engine import count_layouts
        from nnsweeper.errors import InconsistentBoardError

        if len(cells) == 1:
            return float(a.probabilities[cells[0]])

        none = 0  # layouts with no mine among the cells
        for k in range(len(cells) + 1):
            for sub in combinations(cells, k):
                flags = obs.flags.copy()
                for c in sub:
                    flags[c] = True
                try:
                    n = count_layouts(obs.grid, obs.total_mines, flags)
                except InconsistentBoardError:
                    n = 0
                none += (-1) ** k * n
        return float(1 - Fraction(none, a.layouts))

    def _exact(self, obs, a, cell):
        from nnsweeper.engine import enumerate_layouts
        from nnsweeper.solvers.endgame import Endgame, SearchBudgetExceeded

        try:
            if self.tree is None:
                self.tree = Endgame(enumerate_layouts(obs, limit=self.limit), obs.grid, NODE_LIMIT)
            tree = self.tree
            wins, best = tree.value(obs.grid)
            mine = tree.win_counts(obs.grid, [cell])[cell]
        except SearchBudgetExceeded:
            return None
        n = a.layouts
        if best is None:  # no guess needed: a proved-safe cell is the better move
            best = tuple(int(x) for x in np.argwhere(a.safe)[0])
        return wins / n, mine / n, best

    def _look_ahead(self, obs, a, cell):
        cands = self.search.score_candidates(obs, a, np.random.default_rng(0), 1, prune=False)
        mine = self.search.guess_value(obs, a, cell)
        best = max(cands, key=lambda c: c.value)
        return max(best.value, mine), mine, best.cell


# ----------------------------------------------------------------------- report
def _pct(x) -> str:
    return "" if x is None else f"{100 * x:.1f}%"


def format_grade(g: GameGrade, *, every_move: bool = False) -> str:
    """The graded game as text: the guesses (every move with ``every_move``) and the summary."""
    s = g.summary()
    end = "won" if g.won else f"lost at move {g.moves[-1].number}" if g.moves and not g.moves[-1].survived \
        else "not finished"
    head = f"{g.source or 'a game'}: {s['board']}, {end}, {s['moves']} moves"
    rows = [("move", "cells", "kind", "P(mine)", "lowest", "chance before", "after", "loss", "estimate",
             "better")]
    for m in g.moves:
        if m.kind in ("certain", "first click") and not every_move:
            continue
        cells = " ".join(f"({i}, {j})" for i, j in m.cells[:2]) + (" ..." if len(m.cells) > 2 else "")
        better = "" if m.better is None or m.loss < 0.0005 else f"({m.better[0]}, {m.better[1]})"
        rows.append((str(m.number), cells, m.kind, _pct(m.p_mine), _pct(m.p_lowest), _pct(m.win_before),
                     _pct(m.win_after), f"{100 * m.loss:.1f}" if m.win_before is not None else "",
                     m.estimate, better))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    table = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    worst = s["biggest_loss"]
    if len(table) == 1:  # the header alone: every move was proved safe (or there was none but the first)
        table = ["no guess in this game: every move after the first click was proved safe"]
    lines = [head, "", *table, "",
             f"guesses {s['guesses']} ({s['needless_guesses']} needless), mistakes {s['mistakes']} "
             f"(a loss of {100 * MISTAKE:.0f} points or more), accuracy {100 * s['accuracy']:.1f}% "
             "(the share of the chance of winning the guesses kept)",
             f"luck: {100 * s['luck']:.1f}% (the chance of surviving the guesses survived)"]
    if worst is not None:
        better = "" if worst["better"] is None else f"; better ({worst['better'][0]}, {worst['better'][1]})"
        lines.append(f"biggest loss: {100 * worst['loss']:.1f} points at move {worst['move']} "
                     f"({worst['estimate']}){better}")
    if s["seconds"]:
        lines.append(f"time {s['seconds']:.2f} s, 3BV {s['3bv']}, 3BV/s {s['3bv_per_second']:.2f}")
    else:
        lines.append(f"3BV {s['3bv']} (no time recorded)")
    lines.append("chances: exact = the game tree searched exactly; look-ahead = search's chance of surviving "
                 "the move and the next decision (not of winning the whole game); loss in points of that "
                 "chance")
    return "\n".join(lines)


def _draw_board(ax, grid: np.ndarray) -> None:
    """A board as the player saw it: revealed cells light with their numbers, covered ones grey,
    the mine that ended the game (-2) red."""
    from matplotlib.colors import ListedColormap

    colour = np.where(grid == -2, 2, np.where(grid >= 0, 0, 1))
    ax.imshow(colour, cmap=ListedColormap(["0.92", "0.55", "tab:red"]), vmin=0, vmax=2)
    for (i, j), v in np.ndenumerate(grid):
        if v > 0:
            ax.text(j, i, str(v), ha="center", va="center", fontsize=7)
    ax.set_xticks([])
    ax.set_yticks([])


def plot_grade(g: GameGrade, path) -> None:
    """The picture: the chance along the game (mistakes marked) and the board at the worst move,
    its covered cells coloured by exact P(mine), the move played and the better cell outlined."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from nnsweeper.engine import analyze
    from nnsweeper.fileio import atomic_path
    from nnsweeper.observation import Observation

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [1, 1.25]})
    graded = [m for m in g.moves if m.win_before is not None]
    for estimate, marker in (("exact", "o"), ("look-ahead", "s")):
        ms = [m for m in graded if m.estimate == estimate]
        if not ms:
            continue
        ax.plot([m.number for m in ms], [100 * m.win_before for m in ms], marker, mfc="none", color="0.3",
                label=f"before the guess ({estimate})")
        ax.plot([m.number for m in ms], [100 * m.win_after for m in ms], marker, color="tab:blue", ms=4,
                label=f"after it ({estimate})")
    bad = [m for m in graded if m.loss >= MISTAKE]
    if bad:
        ax.plot([m.number for m in bad], [100 * m.win_after for m in bad], "x", color="tab:red", ms=11, mew=2,
                label=f"mistake (loss >= {100 * MISTAKE:.0f} points)")
    for m in bad:
        ax.annotate(f"-{100 * m.loss:.0f}", (m.number, 100 * m.win_after), textcoords="offset points",
                    xytext=(5, -12), color="tab:red", fontsize=8)
    ax.set(xlabel="move  (exact: the chance of winning; look-ahead: of surviving the move and the next "
                  "decision)", ylabel="chance (%)", ylim=(-3, 103),
           title=f"{g.rows}x{g.cols}/{g.mines}, {'won' if g.won else 'lost'}: the chance at each guess")
    ax.grid(alpha=0.3)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.xaxis.label.set_fontsize(8)
    if graded:
        ax.legend(fontsize=7, loc="lower left")
    else:
        ax.text(0.5, 0.5, "no guess: every move was proved safe", transform=ax.transAxes, ha="center",
                va="center", color="0.4")
    guesses = [m for m in g.moves if m.number in g.positions]
    worst = max(guesses, key=lambda m: (m.loss, m.number), default=None)
    if worst is None:
        if g.final is not None:
            _draw_board(bx, g.final)
        else:
            bx.set_axis_off()
        bx.set_title("no guess in this game: the board at its end", fontsize=9)
    else:
        grid = g.positions[worst.number]
        p = analyze(Observation.from_checked(grid, g.mines, np.zeros(grid.shape, dtype=bool))).probabilities
        shown = np.where(grid < 0, p, np.nan)
        im = bx.imshow(shown, cmap="RdYlGn_r", vmin=0, vmax=1)
        for (i, j), v in np.ndenumerate(grid):
            if v >= 0:
                bx.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, color="0.9"))
                if v:
                    bx.text(j, i, str(v), ha="center", va="center", fontsize=7)
        for cells, color in ((worst.cells, "black"), ((worst.better,) if worst.better else (), "tab:blue")):
            for i, j in cells:
                bx.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec=color, lw=2.2))
        fig.colorbar(im, ax=bx, fraction=0.03, label="exact P(mine)")
        bx.set_xticks([])
        bx.set_yticks([])
        loss = f", loss {100 * worst.loss:.1f} points" if worst.loss else ""
        bx.set_title(f"move {worst.number}: played (black) P={worst.p_mine:.3f}{loss}"
                     + ("; better (blue)" if worst.better else ""), fontsize=9)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
