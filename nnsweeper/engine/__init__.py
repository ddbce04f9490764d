"""The exact engine: mine probabilities, layout counts, uniform layouts and outcome distributions.

Every answer comes from one exact count of the mine layouts that fit a visible board
(a uniform prior over all layouts with exactly ``total_mines`` mines):

* :func:`mine_probabilities` / :func:`analyze` (:mod:`nnsweeper.engine.probability`):
  P(mine) per cell, the frontier, the layout count; the component cache
  (:func:`cache_info`, :func:`clear_cache`, :func:`set_cache_size`);
* :func:`sample_layouts`, :func:`enumerate_layouts`, :func:`each_outcome`,
  :func:`outcome_distribution` (:mod:`nnsweeper.engine.sampling`): layouts drawn
  exactly uniformly or listed, and what a covered cell would show.

The modules behind them are package-internal: :mod:`nnsweeper.engine.frontier` (the
single-point rules, boxes, components and the counting plan) and
:mod:`nnsweeper.engine.counting` (the dynamic program over one component), shared by
both of the above; :mod:`nnsweeper.engine.kernels` holds their compiled loops (numba),
imported on first use only, so that importing this package does not import numba.
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
from nnsweeper.engine.sampling import (
    MAX_SAMPLE_CELLS,
    each_outcome,
    enumerate_layouts,
    isolated_areas,
    outcome_distribution,
    sample_layouts,
)

__all__ = [
    "BoardAnalysis",
    "CACHE_SIZE",
    "CacheInfo",
    "MAX_SAMPLE_CELLS",
    "MAX_STATES",
    "analyze",
    "cache_info",
    "clear_cache",
    "count_layouts",
    "each_outcome",
    "enumerate_layouts",
    "isolated_areas",
    "mine_probabilities",
    "outcome_distribution",
    "sample_layouts",
    "set_cache_size",
]
