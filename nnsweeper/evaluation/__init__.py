"""Win rates of solvers over mine counts and boards, on fixed game seeds, with intervals.

Every solver plays the same games for the same ``base_seed`` (the seed notebook's
scheme), so results do not depend on ``n_jobs`` and two solvers can be compared game
by game (:meth:`EvalTable.difference`, paired intervals). The package has one module
per job:

- :mod:`~nnsweeper.evaluation.harness`: checking the arguments and making the table
  (:func:`evaluate`, :func:`eval_solver_over_mines`, :func:`game_seeds` and the limits
  :data:`MAX_TRIALS`, :data:`MAX_GAMES`, :data:`MAX_TABLE_ROWS`);
- :mod:`~nnsweeper.evaluation.runner`: the games still to play, cut into chunks for the
  workers (any backend) and written to the store as they come back;
- :mod:`~nnsweeper.evaluation.store`: where the finished games are kept (:class:`GameStore`
  on disk, which a rerun continues from, or in memory);
- :mod:`~nnsweeper.evaluation.rows`: a table row from a job's stored games, in bounded memory;
- :mod:`~nnsweeper.evaluation.games`: playing a run of games (:class:`GameResults`);
- :mod:`~nnsweeper.evaluation.stats`: the intervals, in closed form;
- :mod:`~nnsweeper.evaluation.table`: :class:`EvalTable`, its files and
  :func:`pack_outcomes` / :func:`unpack_outcomes`;
- :mod:`~nnsweeper.evaluation.summary`: the answer per board (:func:`summarize`,
  :func:`format_summary`): best solver and each solver's paired gap to a reference.
- :mod:`~nnsweeper.evaluation.divergence`: where two players of one game first choose
  differently, and the kind of that choice (what decides the games one wins and the other
  loses).
"""

from .games import GameResults
from .harness import MAX_GAMES, MAX_TABLE_ROWS, MAX_TRIALS, eval_solver_over_mines, evaluate, game_seeds
from .stats import newcombe_interval, newcombe_paired_interval, wilson_interval
from .store import GameStore, StoreError
from .summary import format_summary, summarize
from .table import EvalTable, config_key, pack_outcomes, unpack_outcomes

__all__ = [
    "MAX_TRIALS",
    "MAX_GAMES",
    "MAX_TABLE_ROWS",
    "EvalTable",
    "GameResults",
    "GameStore",
    "StoreError",
    "config_key",
    "eval_solver_over_mines",
    "evaluate",
    "format_summary",
    "game_seeds",
    "newcombe_interval",
    "newcombe_paired_interval",
    "pack_outcomes",
    "summarize",
    "unpack_outcomes",
    "wilson_interval",
]
