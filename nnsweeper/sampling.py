"""Deprecated path of :mod:`nnsweeper.engine.sampling`: uniform layouts and outcome distributions.

Deprecated: import from :mod:`nnsweeper.engine` (or ``nnsweeper`` itself) instead.
This module only re-exports the public names of :mod:`nnsweeper.engine.sampling`, so
that ``nnsweeper.sampling.sample_layouts`` and the like keep working; it issues no
warning, because code that cannot change yet still imports from here.
"""

from nnsweeper.engine.probability import MAX_STATES, analyze
from nnsweeper.engine.sampling import (
    MAX_SAMPLE_CELLS,
    each_outcome,
    enumerate_layouts,
    isolated_areas,
    outcome_distribution,
    sample_layouts,
)

__all__ = ["MAX_SAMPLE_CELLS", "MAX_STATES", "analyze", "each_outcome", "enumerate_layouts",
           "isolated_areas", "outcome_distribution", "sample_layouts"]
