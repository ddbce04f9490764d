"""nnsweeper: Minesweeper solvers, an exact mine-probability engine and neural predictors."""

from nnsweeper._version import __version__
from nnsweeper.boardtext import (
    format_analysis,
    format_board,
    format_probabilities,
    parse_board,
    parse_observation,
    parse_position,
)
from nnsweeper.engine import (
    BoardAnalysis,
    analyze,
    enumerate_layouts,
    mine_probabilities,
    outcome_distribution,
    sample_layouts,
)
from nnsweeper.errors import (
    BoardParseError,
    EngineLimitError,
    InconsistentBoardError,
    InvalidActionError,
    InvalidBoardError,
    InvalidRulesError,
    NnsweeperError,
)
from nnsweeper.evaluation import EvalTable, eval_solver_over_mines, evaluate, format_summary, game_seeds
from nnsweeper.game import PRESETS, Game, MinesweeperEnv, Rules
from nnsweeper.noguess import NoGuessBudgetError, no_guess_board
from nnsweeper.observation import Observation, Observations
from nnsweeper.solvers import SOLVERS, GameRecord, get_solver
from nnsweeper.solvers.suggest import Suggestion, suggest_move

#: Names imported on first use, and their modules: those that need torch, and the grader
#: (which `import nnsweeper` need not pay for).
_ON_FIRST_USE = {
    "load_model": "nnsweeper.models",
    "BatchedGames": "nnsweeper.batched",
    "play_batched": "nnsweeper.batched",
    "grade": "nnsweeper.players.grading",
}


def __getattr__(name):
    # The models and the batched games need torch; importing them on first use keeps
    # `import nnsweeper` (and every worker process that plays or generates games) free of it.
    if name in _ON_FIRST_USE:
        import importlib

        return getattr(importlib.import_module(_ON_FIRST_USE[name]), name)
    raise AttributeError(f"module 'nnsweeper' has no attribute {name!r}")


__all__ = [
    "BatchedGames",
    "BoardAnalysis",
    "BoardParseError",
    "EvalTable",
    "EngineLimitError",
    "Game",
    "InvalidBoardError",
    "eval_solver_over_mines",
    "evaluate",
    "format_summary",
    "game_seeds",
    "GameRecord",
    "SOLVERS",
    "get_solver",
    "InconsistentBoardError",
    "InvalidActionError",
    "InvalidRulesError",
    "MinesweeperEnv",
    "NnsweeperError",
    "Observation",
    "Observations",
    "PRESETS",
    "Rules",
    "Suggestion",
    "analyze",
    "format_analysis",
    "format_board",
    "format_probabilities",
    "load_model",
    "mine_probabilities",
    "enumerate_layouts",
    "outcome_distribution",
    "sample_layouts",
    "parse_board",
    "parse_observation",
    "parse_position",
    "play_batched",
    "suggest_move",
    "no_guess_board",
    "grade",
    "NoGuessBudgetError",
    "__version__",
]
