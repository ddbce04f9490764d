"""Deprecated path of :mod:`nnsweeper.engine.kernels`, the engine's and the solvers' compiled loops.

Deprecated: import from :mod:`nnsweeper.engine.kernels`. This module re-exports its
public kernels and constants for compatibility; like it, it imports numba, so nothing
in ``import nnsweeper`` imports it.
"""

from nnsweeper.engine.kernels import (
    CONTRADICTION,
    OVER_BUDGET,
    SETTLED,
    SOLVED,
    UNSATISFIABLE,
    boxes,
    count_component,
    count_layouts,
    endgame_win,
    forced_pair,
    frontier_components,
    fronts,
    plan_spec,
    rules_once,
    rules_with_flags,
    settle,
)

__all__ = ["CONTRADICTION", "OVER_BUDGET", "SETTLED", "SOLVED", "UNSATISFIABLE", "boxes", "count_component",
           "count_layouts", "endgame_win", "forced_pair", "frontier_components", "fronts", "plan_spec",
           "rules_once", "rules_with_flags", "settle"]
