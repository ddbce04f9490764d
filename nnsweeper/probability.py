"""Deprecated path of :mod:`nnsweeper.engine.probability`, the exact mine-probability engine.

Deprecated: import from :mod:`nnsweeper.engine` (or ``nnsweeper`` itself) instead.
This module only re-exports the engine's public names, so that
``nnsweeper.probability.analyze``, ``probability.set_cache_size`` and the like keep
working; it issues no warning, because code that cannot change yet still imports from
here. The functions are the engine's own: :func:`set_cache_size` here and in
:mod:`nnsweeper.engine` act on the one component cache. The engine's private names
(and the tuning constants tests patch) are not reachable from here: patch them in
:mod:`nnsweeper.engine.probability` or :mod:`nnsweeper.engine.counting`.
"""

from nnsweeper.engine.probability import (
    CACHE_SIZE,
    MAX_STATES,
    BoardAnalysis,
    CacheInfo,
    analyze,
    cache_info,
    clear_cache,
    count_layouts,
    mine_probabilities,
    set_cache_size,
)
from nnsweeper.errors import EngineLimitError, InconsistentBoardError, InvalidBoardError

# The board checks live with the Observation; they were importable from here.
from nnsweeper.observation import as_observation, check_flags, check_grid_values, validate_board

__all__ = ["mine_probabilities", "analyze", "BoardAnalysis", "validate_board", "MAX_STATES", "CACHE_SIZE",
           "CacheInfo", "cache_info", "clear_cache", "count_layouts", "set_cache_size", "EngineLimitError",
           "InconsistentBoardError", "InvalidBoardError", "as_observation", "check_flags",
           "check_grid_values"]
