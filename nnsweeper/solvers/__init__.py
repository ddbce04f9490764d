"""Solvers and their registry: ``get_solver(name, **options) -> solver_fn``."""

from __future__ import annotations

from nnsweeper.solvers.base import (
    MOVE_KINDS,
    GameRecord,
    Move,
    Solver,
    first_click_cell,
    local_rules,
)
from nnsweeper.solvers.csp import TIE_BREAKS, CSPSolver
from nnsweeper.solvers.neural import (
    CNNSolver,
    GNNSolver,
    HybridCNNSolver,
    HybridGNNSolver,
    ModelRequest,
    NeuralSolver,
)
from nnsweeper.solvers.single_point import SinglePointSolver

__all__ = [
    "MOVE_KINDS",
    "SOLVERS",
    "TIE_BREAKS",
    "CSPSolver",
    "CNNSolver",
    "GNNSolver",
    "GameRecord",
    "HybridCNNSolver",
    "HybridGNNSolver",
    "ModelRequest",
    "Move",
    "NeuralSolver",
    "SinglePointSolver",
    "Solver",
    "first_click_cell",
    "get_solver",
    "local_rules",
]

#: Registered solver names and their classes.
SOLVERS: dict[str, type[Solver]] = {
    "single_point": SinglePointSolver,
    "csp": CSPSolver,
    "cnn": CNNSolver,
    "gnn": GNNSolver,
    "hybrid-cnn": HybridCNNSolver,
    "hybrid-gnn": HybridGNNSolver,
}


def get_solver(name: str, **options) -> Solver:
    """A solver by name: ``solver(env, rng) -> bool`` and ``solver.play(env, rng) -> GameRecord``.

    Parameters
    ----------
    name : str
        One of :data:`SOLVERS`.
    **options
        Passed to the solver's class, e.g. ``start="corner"`` or ``tie_break="random"``;
        the neural solvers take ``model`` (a bundled name or a checkpoint path).
    """
    if name not in SOLVERS:
        raise ValueError(f"unknown solver {name!r}; choose one of {', '.join(SOLVERS)}")
    try:
        return SOLVERS[name](**options)
    except TypeError as exc:
        raise ValueError(f"bad options for solver {name!r}: {exc}") from None
