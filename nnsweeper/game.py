"""Minesweeper rules and the seeded game engine.

The hidden mine layout lives here and nowhere else (the data generator reads it
only to write truth labels). Solvers look at :meth:`Game.observe` or at the
seed notebook's attributes ``mask`` and ``_counts`` on revealed cells.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass

import numpy as np

from nnsweeper.errors import InvalidActionError, InvalidRulesError, check_int
from nnsweeper.grid import covered_grid, dilate, neighbours, openings

__all__ = ["BOARD_SYNTAX", "MAX_BOARDS_PER_TEXT", "parse_boards", "parse_mine_counts",
           "FIRST_CLICK_RULES", "FIRST_CLICK_CODES", "PRESETS", "MAX_ROWS", "MAX_COLS", "Rules", "Game",
           "MinesweeperEnv", "NO_GUESS_RULES", "choose_mines", "draw_layout", "layout_rng", "mine_cells",
           "set_no_guess_maker"]

#: The first-click rules. ``safe``: the first revealed cell is never a mine.
#: ``zero``: the first revealed cell and its neighbours are mine-free, so it opens
#: an area. ``none``: mines are placed at reset and the first click may lose.
#: ``no-guess``: as ``zero``, and the layout is one that cells proved safe alone win
#: from the first click, every such layout equally likely
#: (:func:`nnsweeper.noguess.no_guess_board`, ``mode="uniform"``); ``no-guess-fast``:
#: the same certificate, the layout repaired rather than drawn again (``mode="fast"``,
#: faster on dense boards, biased as that function says).
FIRST_CLICK_RULES = ("safe", "zero", "none", "no-guess", "no-guess-fast")
#: Each rule's code in the seed keys of generated games. The codes are part of every
#: dataset's seeds: a new rule takes a new code, and no code changes.
FIRST_CLICK_CODES: dict[str, int] = {"safe": 0, "zero": 1, "none": 2, "no-guess": 3, "no-guess-fast": 4}
#: The no-guess rules and the generator's mode each uses.
NO_GUESS_RULES: dict[str, str] = {"no-guess": "uniform", "no-guess-fast": "fast"}
#: Certifications a game of a no-guess rule tries before it refuses its first click
#: (:class:`nnsweeper.noguess.NoGuessBudgetError`): about a minute on a hopeless density.
NO_GUESS_TRIES = 10_000
#: Seconds a game of a no-guess rule spends finding its layout before it refuses its first click
#: (the same error): a huge board's certification can take seconds, so a count of tries alone
#: does not bound the time. A layout found is the same whatever the machine; only whether one
#: is found within the time depends on it.
NO_GUESS_SECONDS = 60.0

#: Largest board side, in rows and in columns. Every entry point (the Python API,
#: ``eval``, ``compare``, ``generate``, presets) builds a :class:`Rules` and so gets
#: this bound. Why 1000: one ``csp`` game on 1000x1000 (12% mines) already takes
#: about 11.5 minutes and 230 MB; a game's arrays grow with rows x cols and its
#: time faster still, so a larger board is refused up front rather than left to run
#: for hours or to allocate gigabytes.
MAX_ROWS = 1000
MAX_COLS = 1000

#: Spawn key of the mine-layout stream of a game seed.
_LAYOUT_STREAM = 0


def _check_int(name: str, value, minimum: int, maximum: int | None = None) -> int:
    return check_int(name, value, minimum, InvalidRulesError, maximum=maximum)


@dataclass(frozen=True)
class Rules:
    """The rules of one kind of game.

    Parameters
    ----------
    rows, cols : int
        Board size: at least 1 and at most :data:`MAX_ROWS` rows and
        :data:`MAX_COLS` columns.
    mines : int
        Number of mines, at least 1 and small enough that the first-click rule
        can always be honoured (see :meth:`max_mines`).
    first_click : {"safe", "zero", "none", "no-guess", "no-guess-fast"}, default="safe"
        See :data:`FIRST_CLICK_RULES`.
    """

    rows: int
    cols: int
    mines: int
    first_click: str = "safe"

    def __post_init__(self):
        object.__setattr__(self, "rows", _check_int("rows", self.rows, 1, MAX_ROWS))
        object.__setattr__(self, "cols", _check_int("cols", self.cols, 1, MAX_COLS))
        if self.first_click not in FIRST_CLICK_RULES:
            raise InvalidRulesError(
                f"first_click must be one of {', '.join(FIRST_CLICK_RULES)}; got {self.first_click!r}"
            )
        if isinstance(self.mines, bool) or not isinstance(self.mines, numbers.Integral):
            raise InvalidRulesError(f"mines must be an integer; got {self.mines!r}")
        hi = self.max_mines()
        if not 1 <= self.mines <= hi:
            rule = {"safe": "a safe", "zero": "an opening (zero)", "none": "an unprotected",
                    "no-guess": "a no-guess", "no-guess-fast": "a no-guess"}
            where = f"a {self.rows}x{self.cols} board with {rule[self.first_click]} first click"
            if hi < 1:
                raise InvalidRulesError(f"{where} has no room for mines; got mines={self.mines}")
            raise InvalidRulesError(f"mines must be between 1 and {hi} for {where}; got {self.mines}")
        object.__setattr__(self, "mines", int(self.mines))

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    def max_mines(self) -> int:
        """Largest legal mine count: fewer mines than the cells that may hold one.

        Under ``safe`` the first click cannot hold a mine, under ``zero`` (and the
        no-guess rules) neither can its neighbours (nine cells for a click away from the
        edge), so at least one
        cell besides those stays safe and the game is never decided by the rule alone.
        """
        block = min(3, self.rows) * min(3, self.cols)
        protected = {"none": 0, "safe": 1, "zero": block, "no-guess": block, "no-guess-fast": block}
        return self.cells - protected[self.first_click] - 1

    @property
    def density(self) -> float:
        return self.mines / self.cells

    @classmethod
    def preset(cls, name: str, first_click: str = "safe") -> Rules:
        """One of the classic boards: ``beginner``, ``intermediate`` or ``expert``."""
        if name not in PRESETS:
            raise InvalidRulesError(
                f"preset must be one of {', '.join(PRESETS)}; got {name!r}"
            )
        r, c, m = PRESETS[name]
        return cls(r, c, m, first_click)


#: Classic presets: (rows, cols, mines).
PRESETS: dict[str, tuple[int, int, int]] = {
    "beginner": (9, 9, 10),
    "intermediate": (16, 16, 40),
    "expert": (16, 30, 99),
}


#: The most boards one board text (:func:`parse_boards`) may name.
MAX_BOARDS_PER_TEXT = 10_000
#: What :func:`parse_boards` reads, for messages.
BOARD_SYNTAX = "ROWSxCOLS:MINES (such as 10x10:20, 10x10:5-30 or 16x16:10,40) or a preset name"

_SIZE_TEXT = re.compile(r"^(\d+)x(\d+)$")
_MINES_TEXT = re.compile(r"^(\d+)(?:-(\d+)(?:/(\d+))?)?$")


def parse_mine_counts(field: str, *, limit: int = MAX_BOARDS_PER_TEXT) -> list[int]:
    """Mine counts from text: ``N``, ``A-B`` (every count), ``A-B/STEP`` or a comma list of them.

    Raises
    ------
    ValueError
        Text of another form, an empty range, or more than ``limit`` counts (refused
        before they are listed).

    Examples
    --------
    >>> parse_mine_counts("5-30/5")
    [5, 10, 15, 20, 25, 30]
    """
    counts: list[int] = []
    for item in str(field).split(","):
        m = _MINES_TEXT.match(item.strip())
        if m is None:
            raise ValueError(
                f"mines must be N, A-B, A-B/STEP or a comma list such as 5,10; got {item.strip()!r}"
            )
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        step = int(m.group(3)) if m.group(3) else 1
        if hi < lo or step < 1:
            raise ValueError(f"empty mine range {item.strip()!r}: write it low-high, such as 5-30")
        n = len(counts) + (hi - lo) // step + 1  # counted before the range is listed
        if n > limit:
            raise ValueError(f"at most {limit} configurations; these mine counts make {n}")
        counts.extend(range(lo, hi + 1, step))
    return counts


def parse_boards(text: str, *, first_click: str = "safe") -> list[tuple[str, int, int, int]]:
    """Boards from the one board syntax of the command line, the scripts and the benchmarks.

    ``ROWSxCOLS:MINES`` with ``MINES`` as in :func:`parse_mine_counts`, a preset name
    (``beginner``, ``intermediate``, ``expert``) or ``classic`` (all three). Sizes and
    mine counts are checked against the game's limits under ``first_click``.

    Parameters
    ----------
    text : str
        The board text.
    first_click : {"safe", "zero", "none", "no-guess", "no-guess-fast"}, default="safe"
        The rule whose mine limit (:meth:`Rules.max_mines`) the boards must keep: a 9x9
        board holds at most 79 mines with a safe first click, 71 with an opening (zero)
        and 80 with none.

    Returns
    -------
    list of (name, rows, cols, mines)
        ``name`` is the preset's name or ``"RxC"``.

    Raises
    ------
    InvalidRulesError
        Text of another form, or a board the rules refuse (naming the limit).

    Examples
    --------
    >>> parse_boards("10x10:10,20")
    [('10x10', 10, 10, 10), ('10x10', 10, 10, 20)]
    >>> parse_boards("expert")
    [('expert', 16, 30, 99)]
    >>> parse_boards("9x9:80", first_click="none")
    [('9x9', 9, 9, 80)]
    """
    if first_click not in FIRST_CLICK_RULES:
        raise InvalidRulesError(
            f"first_click must be one of {', '.join(FIRST_CLICK_RULES)}; got {first_click!r}"
        )
    if not isinstance(text, str) or not text.strip():
        raise InvalidRulesError(f"a board must be {BOARD_SYNTAX}; got {text!r}")
    head, sep, field = (t.strip() for t in text.strip().lower().partition(":"))
    if not sep:
        if head == "classic":
            return [(name, *PRESETS[name]) for name in PRESETS]
        if head in PRESETS:
            return [(head, *PRESETS[head])]
    size = _SIZE_TEXT.match(head)
    if size is None or not sep:
        raise InvalidRulesError(
            f"a board must be {BOARD_SYNTAX} ({', '.join(PRESETS)} or classic); got {text!r:.80}"
        )
    rows, cols = int(size.group(1)), int(size.group(2))
    try:
        counts = parse_mine_counts(field)
    except ValueError as e:
        raise InvalidRulesError(f"board {text!r:.80}: {e}") from None
    Rules(rows, cols, max(counts), first_click)  # the size and the most mines, refused naming the limit
    return [(f"{rows}x{cols}", rows, cols, m) for m in counts]


def layout_rng(seed: int) -> np.random.Generator:
    """The generator that places the mines of the game of ``seed``.

    A child stream of the seed, not ``default_rng(seed)`` itself: the seed notebook's
    harness hands solvers ``default_rng(seed)``, and a solver drawing the same
    numbers that placed the mines would be correlated with the layout.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_LAYOUT_STREAM,)))


def mine_cells(rules: Rules, first_cell: tuple[int, int] | None = None) -> np.ndarray:
    """The cells that may hold a mine (bool, the board's shape) given the first click.

    Every cell when ``first_cell`` is None (the layout of ``first_click="none"``, placed
    at reset); else every cell but the clicked one (``safe``) or but its 3x3 block
    (``zero``).
    """
    allowed = np.ones((rules.rows, rules.cols), dtype=bool)
    if first_cell is not None:
        i, j = first_cell
        if rules.first_click == "zero" or rules.first_click in NO_GUESS_RULES:
            allowed[max(i - 1, 0) : i + 2, max(j - 1, 0) : j + 2] = False
        else:
            allowed[i, j] = False
    return allowed


def choose_mines(rng: np.random.Generator, allowed: np.ndarray, mines: int) -> np.ndarray:
    """``mines`` mines drawn uniformly among the ``allowed`` cells with ``rng``: a bool layout."""
    cells = np.flatnonzero(allowed.ravel())
    chosen = rng.choice(cells, size=mines, replace=False)
    mine = np.zeros(allowed.shape, dtype=bool)
    mine.ravel()[chosen] = True
    return mine


#: The function that makes the layouts of the no-guess rules: ``maker(rules, seed, first_cell)``. The
#: game layer sits below the exact engine that certifies them, so :mod:`nnsweeper.noguess` hands it
#: in when it loads (``import nnsweeper`` loads it) rather than the game importing it.
_NO_GUESS_MAKER: list = [None]


def set_no_guess_maker(maker) -> None:
    """Make ``maker(rules, seed, first_cell) -> layout`` place the mines of the no-guess rules."""
    _NO_GUESS_MAKER[0] = maker


def draw_layout(rules: Rules, seed: int, first_cell: tuple[int, int] | None = None) -> np.ndarray:
    """The mine layout (bool, the board's shape) of ``Game(rules, seed)`` for a first click.

    ``first_cell`` is the ``(row, col)`` of the first revealed cell; it is ignored
    under ``first_click="none"``, whose layout is drawn at reset over every cell.
    :class:`Game` and :class:`nnsweeper.batched.BatchedGames` both place their mines
    with it (the same draw of :func:`layout_rng`).
    """
    if rules.first_click == "none":
        first_cell = None
    if rules.first_click in NO_GUESS_RULES:
        if _NO_GUESS_MAKER[0] is None:
            raise InvalidRulesError(f"first_click={rules.first_click!r} needs nnsweeper.noguess, which "
                                    "`import nnsweeper` loads")
        return _NO_GUESS_MAKER[0](rules, seed, first_cell)
    return choose_mines(layout_rng(seed), mine_cells(rules, first_cell), rules.mines)


class Game:
    """A seeded game of Minesweeper.

    Description
        Mines are hidden on a ``rows x cols`` board. Revealing a safe cell shows how
        many of its eight neighbours hold mines; revealing a zero opens its whole
        connected zero region and that region's border (flood fill). The game is won
        when every safe cell is revealed and lost when a mine is revealed.
    Action Space
        ``step(a)`` with a flat index ``a = row * cols + col`` in ``[0, rows*cols)``
        reveals that cell. ``toggle_flag(i, j)`` marks a covered cell (flags never end
        the game and are not needed to win).
    Observation Space
        ``int8`` array of shape ``(rows, cols)``: -1 covered (flagged or not), 0..8 the
        number on a revealed cell. :attr:`flags` holds the flags.
    Starting State
        Everything covered. Under ``first_click="none"`` the mines are placed at reset;
        under ``safe`` and ``zero`` at the first reveal, uniformly among the layouts
        that honour the rule, so every layout consistent with what is seen stays equally
        likely (the probability engine relies on this).
    Rewards
        +1 for the winning move, -1 for revealing a mine, otherwise the share of safe
        cells the move revealed.
    Episode End
        On a win or a loss; ``info["result"]`` is then ``"win"`` or ``"lose"``. The mine
        that lost the game stays covered in ``mask`` and is named by ``exploded``.
    Arguments
        ``rules`` (:class:`Rules`) and ``seed`` (int). The layout is a function of the
        rules, the seed and (for ``safe``/``zero``) the first click only. ``reset()``
        replays the same game; ``reset(seed=s)`` starts the game of seed ``s``.
    """

    def __init__(self, rules: Rules, seed: int | None = None):
        if not isinstance(rules, Rules):
            raise InvalidRulesError(f"rules must be a Rules instance; got {type(rules).__name__}")
        self.rules = rules
        if seed is None:
            # Draw a concrete seed once so that reset() replays the same game.
            seed = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
        self.seed = self._check_seed(seed)
        self.reset()

    # ------------------------------------------------------------------ set-up
    @staticmethod
    def _check_seed(seed) -> int:
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise InvalidRulesError(f"seed must be a non-negative integer; got {seed!r}")
        return int(seed)

    @property
    def r(self) -> int:
        return self.rules.rows

    @property
    def c(self) -> int:
        return self.rules.cols

    @property
    def mines(self) -> int:
        return self.rules.mines

    @property
    def first_click(self) -> str:
        return self.rules.first_click

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rules.rows, self.rules.cols)

    def reset(self, seed: int | None = None) -> np.ndarray:
        """Start the game again (same seed unless one is given); returns the observation."""
        if seed is not None:
            self.seed = self._check_seed(seed)
        r, c = self.shape
        self.mask = np.ones((r, c), dtype=np.int8)  # 1 covered, 0 revealed
        self.flags = np.zeros((r, c), dtype=bool)
        self._mine = np.zeros((r, c), dtype=bool)
        self._counts = np.zeros((r, c), dtype=np.int8)
        self.board = np.zeros((r, c), dtype=np.int8)  # -1 mine, else the count
        self._zero_labels: np.ndarray | None = None
        self.placed = False
        self.done = False
        self.result: str | None = None
        self.exploded: tuple[int, int] | None = None
        self.moves = 0
        self._covered_safe = r * c - self.rules.mines
        if self.rules.first_click == "none":
            self._set_layout(draw_layout(self.rules, self.seed))
        return self.observe()

    def _set_layout(self, mine: np.ndarray) -> None:
        """Make ``mine`` (bool, the board's shape, the rules' mine count) the hidden layout."""
        self._mine = mine
        counts, self._zero_labels = openings(mine)
        self._counts = counts.astype(np.int8)
        self.board = np.where(self._mine, -1, self._counts).astype(np.int8)
        self.placed = True

    # --------------------------------------------------------- seed interface
    def _flat(self, i: int, j: int) -> int:
        return int(i) * self.rules.cols + int(j)

    def _unflat(self, a: int) -> tuple[int, int]:
        return divmod(int(a), self.rules.cols)

    def _neighbors(self, i: int, j: int) -> list[tuple[int, int]]:
        return neighbours(i, j, self.rules.rows, self.rules.cols)

    # ------------------------------------------------------------ observation
    def observe(self) -> np.ndarray:
        """The visible grid: ``int8`` (rows, cols), -1 covered, 0..8 revealed."""
        return covered_grid(self.mask, self._counts)

    @property
    def explosion(self) -> bool:
        return self.result == "lose"

    @property
    def won(self) -> bool:
        return self.result == "win"

    @property
    def safe_cells(self) -> int:
        return self.rules.cells - self.rules.mines

    @property
    def revealed_safe(self) -> int:
        """Safe cells revealed so far."""
        return self.safe_cells - self._covered_safe

    # ---------------------------------------------------------------- actions
    def _check_cell(self, i, j) -> tuple[int, int]:
        r, c = self.shape
        for name, v, hi in (("row", i, r), ("col", j, c)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v < hi:
                raise InvalidActionError(f"{name} must be an integer in [0, {hi}); got {v!r}")
        return int(i), int(j)

    def step(self, action: int):
        """Reveal the cell with flat index ``action``.

        Returns
        -------
        obs : ndarray of int8, shape (rows, cols)
        reward : float
        done : bool
        info : dict
            ``result`` ("win" or "lose") once the game is over, ``revealed`` (cells
            this move revealed) and ``moves``.
        """
        n = self.rules.cells
        if isinstance(action, bool) or not isinstance(action, numbers.Integral) or not 0 <= action < n:
            raise InvalidActionError(
                f"action must be a flat cell index in [0, {n}) for a {self.r}x{self.c} board; "
                f"got {action!r}"
            )
        return self.reveal(*self._unflat(action))

    def reveal(self, i: int, j: int):
        """Reveal cell ``(i, j)``; same return value as :meth:`step`."""
        reward, done, info = self.open_cell(i, j)
        return self.observe(), reward, done, info

    def open_cell(self, i: int, j: int) -> tuple[float, bool, dict]:
        """:meth:`reveal` without building the observation: ``(reward, done, info)``.

        For players that reveal many cells in a row and look at the board once after
        them (:attr:`mask` and :meth:`observe` are up to date after every call).
        """
        r, c = self.shape
        if not (type(i) is int and type(j) is int and 0 <= i < r and 0 <= j < c):  # noqa: E721
            i, j = self._check_cell(i, j)
        if self.done:
            raise InvalidActionError(f"the game is over ({self.result}); call reset() first")
        if self.mask[i, j] == 0:
            raise InvalidActionError(f"cell ({i}, {j}) is already revealed")
        if self.flags[i, j]:
            raise InvalidActionError(f"cell ({i}, {j}) is flagged; unflag it before revealing")
        if not self.placed:
            self._set_layout(draw_layout(self.rules, self.seed, (i, j)))
        self.moves += 1
        info: dict = {"moves": self.moves}
        if self._mine[i, j]:
            # The mine stays covered: the observation only ever shows -1 or a number.
            self.exploded = (i, j)
            self.done, self.result = True, "lose"
            info.update(result="lose", revealed=1)
            return -1.0, True, info
        if self._counts[i, j] == 0:
            opened = dilate(self._zero_labels == self._zero_labels[i, j]) & (self.mask == 1)
            k = int(opened.sum())
            self.mask[opened] = 0
            self.flags[opened] = False  # a wrong flag on a cell that flood fill opens goes away
        else:
            k = 1
            self.mask[i, j] = 0
        self._covered_safe -= k
        info["revealed"] = k
        if self._covered_safe == 0:
            self.done, self.result = True, "win"
            info["result"] = "win"
            return 1.0, True, info
        return k / self.safe_cells, False, info

    def toggle_flag(self, i: int, j: int) -> bool:
        """Flag or unflag a covered cell; returns the new flag state."""
        i, j = self._check_cell(i, j)
        if self.done:
            raise InvalidActionError(f"the game is over ({self.result}); call reset() first")
        if self.mask[i, j] == 0:
            raise InvalidActionError(f"cell ({i}, {j}) is revealed and cannot be flagged")
        self.flags[i, j] = not self.flags[i, j]
        return bool(self.flags[i, j])

    def mine_layout(self) -> np.ndarray:
        """The hidden layout (bool, True = mine). For labels and tests, never for solvers."""
        return self._mine.copy()

    def __repr__(self) -> str:
        r = self.rules
        state = self.result or ("in play" if self.placed else "new")
        return (
            f"{type(self).__name__}(rows={r.rows}, cols={r.cols}, mines={r.mines}, "
            f"seed={self.seed}, first_click={r.first_click!r}) [{state}]"
        )


class MinesweeperEnv(Game):
    """The seed notebook's environment: ``MinesweeperEnv(rows, cols, mines, seed)``.

    A :class:`Game` with the seed's constructor. Attributes used by the seed's
    solvers: ``r``, ``c``, ``mask`` (1 covered, 0 revealed), ``board`` (-1 mine, else
    the count), ``_counts``, ``_flat(i, j)``, ``_neighbors(i, j)``, ``reset()`` and
    ``step(flat_index) -> (obs, reward, done, info)``.
    """

    def __init__(
        self,
        rows: int = 10,
        cols: int = 10,
        mines: int = 10,
        seed: int | None = None,
        first_click: str = "safe",
    ):
        super().__init__(Rules(rows, cols, mines, first_click), seed)
