"""nnsweeper: Minesweeper solvers, an exact mine-probability engine and neural predictors."""

from nnsweeper.errors import (
    BoardParseError,
    InconsistentBoardError,
    InvalidActionError,
    InvalidRulesError,
    NnsweeperError,
)
from nnsweeper.game import PRESETS, Game, MinesweeperEnv, Rules
from nnsweeper.probability import BoardAnalysis, analyze, mine_probabilities

__version__ = "0.1.0"

__all__ = [
    "BoardAnalysis",
    "BoardParseError",
    "Game",
    "InconsistentBoardError",
    "InvalidActionError",
    "InvalidRulesError",
    "MinesweeperEnv",
    "NnsweeperError",
    "PRESETS",
    "Rules",
    "analyze",
    "mine_probabilities",
    "__version__",
]
