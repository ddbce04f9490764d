"""nnsweeper: Minesweeper solvers, an exact mine-probability engine and neural predictors."""

from nnsweeper.errors import (
    BoardParseError,
    InconsistentBoardError,
    InvalidActionError,
    InvalidBoardError,
    InvalidRulesError,
    NnsweeperError,
)
from nnsweeper.evaluation import EvalTable, eval_solver_over_mines, evaluate, game_seeds
from nnsweeper.game import PRESETS, Game, MinesweeperEnv, Rules
from nnsweeper.probability import BoardAnalysis, analyze, mine_probabilities
from nnsweeper.solvers import SOLVERS, GameRecord, get_solver

__version__ = "0.1.0"

__all__ = [
    "BoardAnalysis",
    "BoardParseError",
    "EvalTable",
    "Game",
    "InvalidBoardError",
    "eval_solver_over_mines",
    "evaluate",
    "game_seeds",
    "GameRecord",
    "SOLVERS",
    "get_solver",
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
