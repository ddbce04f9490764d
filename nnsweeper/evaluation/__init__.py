"""Win rates of solvers over mine counts and boards, on fixed game seeds.

Every evaluation plays the same games for the same ``base_seed``: the seed
notebook's scheme (:func:`game_seeds`) draws ``trials`` game seeds, and each seed
``sd`` gives the game ``MinesweeperEnv(rows, cols, mines, seed=sd)`` and the solver's
generator ``np.random.default_rng(sd)``. Every mine count and board reuses the same
seeds. A game's result is therefore a function of the solver, the board and the
seed only, which is why the results do not depend on ``n_jobs``.

:func:`eval_solver_over_mines` is the seed notebook's harness (win rate per mine
count) for any ``solver_fn(env, rng) -> bool``; :func:`evaluate` returns an
:class:`EvalTable` with counts, Wilson intervals (:func:`wilson_interval`), guesses,
the share of the board cleared in lost games and time per game, and every game's
result in seed order.

Because every solver plays the same games, two solvers can be compared game by game:
:meth:`EvalTable.difference` gives the difference of their win rates with a 95%
interval that uses the pairing (:func:`newcombe_paired_interval`) when both rows carry
the outcomes of the same games, and the interval for independent samples
(:func:`newcombe_interval`) otherwise.

The package has one module per job:

- :mod:`~nnsweeper.evaluation.harness`: checking the arguments, scheduling the games
  and summarising them (:func:`evaluate`, :func:`eval_solver_over_mines`,
  :func:`game_seeds` and the limits :data:`MAX_TRIALS`, :data:`MAX_GAMES`,
  :data:`MAX_TABLE_ROWS`);
- :mod:`~nnsweeper.evaluation.games`: playing a run of games (:class:`GameResults`);
- :mod:`~nnsweeper.evaluation.stats`: the intervals, in closed form;
- :mod:`~nnsweeper.evaluation.table`: :class:`EvalTable`, its files and
  :func:`pack_outcomes` / :func:`unpack_outcomes`.
"""

from .games import GameResults
from .harness import MAX_GAMES, MAX_TABLE_ROWS, MAX_TRIALS, eval_solver_over_mines, evaluate, game_seeds
from .stats import newcombe_interval, newcombe_paired_interval, wilson_interval
from .table import EvalTable, config_key, pack_outcomes, unpack_outcomes

__all__ = [
    "MAX_TRIALS",
    "MAX_GAMES",
    "MAX_TABLE_ROWS",
    "EvalTable",
    "GameResults",
    "config_key",
    "eval_solver_over_mines",
    "evaluate",
    "game_seeds",
    "newcombe_interval",
    "newcombe_paired_interval",
    "pack_outcomes",
    "unpack_outcomes",
    "wilson_interval",
]
