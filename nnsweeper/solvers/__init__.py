"""Solvers and their registry: ``get_solver(name, **options) -> solver_fn``.

:data:`SOLVERS` maps every registered name to its class. A new solver is a module
with a :class:`Solver` subclass and one :func:`register_solver` line below; it is
then played by ``nnsweeper eval`` and, unless registered with ``compare=False``,
by ``nnsweeper compare`` by default. Every architecture of
:data:`nnsweeper.models.ARCHITECTURES` adds two solvers, ``ARCH`` and ``hybrid-ARCH``
(:func:`register_neural_solvers`).
"""

from __future__ import annotations

import sys

from nnsweeper.solvers.base import (
    GUESS_KINDS,
    MOVE_KINDS,
    STARTS,
    Decision,
    GameRecord,
    Move,
    Solver,
    Turns,
    first_click_cell,
    local_rules,
)
from nnsweeper.solvers.csp import CSPSolver
from nnsweeper.solvers.neural import ModelRequest, NeuralSolver, neural_solver_class
from nnsweeper.solvers.ranking import TIE_BREAKS, prob_zero, rank_cells
from nnsweeper.solvers.search import Candidate, DeepSearchSolver, SearchChoice, SearchSolver, forced_guess
from nnsweeper.solvers.single_point import SinglePointSolver
from nnsweeper.solvers.value import ValueSolver

__all__ = [
    "GUESS_KINDS",
    "MOVE_KINDS",
    "SOLVERS",
    "STARTS",
    "TIE_BREAKS",
    "CSPSolver",
    "Candidate",
    "CNNSolver",
    "Decision",
    "DeepSearchSolver",
    "GNNSolver",
    "GameRecord",
    "HybridCNNSolver",
    "HybridGNNSolver",
    "ModelRequest",
    "Move",
    "NeuralSolver",
    "SearchChoice",
    "SearchSolver",
    "SinglePointSolver",
    "Solver",
    "Turns",
    "ValueSolver",
    "compare_solvers",
    "first_click_cell",
    "forced_guess",
    "get_solver",
    "local_rules",
    "prob_zero",
    "rank_cells",
    "register_neural_solvers",
    "register_solver",
    "unregister_solver",
]

#: Registered solver names and their classes, in registration order.
SOLVERS: dict[str, type[Solver]] = {}
#: The registered names that ``compare`` leaves out unless asked for.
_NOT_COMPARED: set[str] = set()


def register_solver(name: str, cls: type, *, compare: bool = True) -> type:
    """Add a solver class to :data:`SOLVERS` under ``name``.

    Parameters
    ----------
    name : str
        The registry name; must not be taken.
    cls : type
        Called as ``cls(**options)``; its instances are ``solver(env, rng) -> bool``
        (a :class:`Solver` subclass, usually).
    compare : bool, default True
        Whether ``compare`` plays it when no solvers are named.

    Returns
    -------
    type
        ``cls``, so that the function can decorate a class.
    """
    if not isinstance(name, str) or not name or name != name.strip() or "," in name:
        raise ValueError(f"a solver name must be a non-empty string without commas or surrounding spaces; "
                         f"got {name!r}")
    if name in SOLVERS:
        raise ValueError(f"solver {name!r} is registered already ({SOLVERS[name].__qualname__})")
    if not callable(cls):
        raise ValueError(f"a solver must be a class (callable with its options); got {cls!r}")
    SOLVERS[name] = cls
    if not compare:
        _NOT_COMPARED.add(name)
    return cls


def unregister_solver(name: str, *, missing_ok: bool = False) -> None:
    """Remove a solver from the registry."""
    if name not in SOLVERS:
        if missing_ok:
            return
        raise ValueError(f"solver {name!r} is not registered")
    del SOLVERS[name]
    _NOT_COMPARED.discard(name)


def register_neural_solvers(arch) -> tuple[type[NeuralSolver], type[NeuralSolver]]:
    """Register an architecture's two solvers, ``ARCH`` (model alone) and ``hybrid-ARCH``.

    Parameters
    ----------
    arch : Architecture
        An entry of :data:`nnsweeper.models.ARCHITECTURES` (or one being added).
    """
    taken = [n for n in arch.solvers if n in SOLVERS]
    if taken:
        raise ValueError(f"architecture {arch.name!r} needs the solver names {', '.join(arch.solvers)}; "
                         f"{', '.join(taken)} is registered already")
    pure, hybrid = neural_solver_class(arch, False), neural_solver_class(arch, True)
    register_solver(arch.solvers[0], pure)
    register_solver(arch.solvers[1], hybrid)
    return pure, hybrid


def compare_solvers() -> list[str]:
    """The solvers ``compare`` plays by default: every registered one not left out."""
    return [name for name in SOLVERS if name not in _NOT_COMPARED]


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


register_solver("single_point", SinglePointSolver)
register_solver("csp", CSPSolver)
register_solver("search", SearchSolver)
register_solver("search-deep", DeepSearchSolver, compare=False)
register_solver("value-gnn", ValueSolver, compare=False)


def _register_shipped_architectures() -> None:
    # The models alone first, then the hybrids (the order compare plays them in).
    from nnsweeper.models.registry import ARCHITECTURES

    module = sys.modules[NeuralSolver.__module__]
    for hybrid in (False, True):
        for arch in ARCHITECTURES.values():
            cls = neural_solver_class(arch, hybrid)
            register_solver(arch.solvers[hybrid], cls)
            # Importable by name, so that they pickle by reference into worker processes.
            setattr(module, cls.__name__, cls)


_register_shipped_architectures()

# The shipped architectures' solver classes by their names, for existing callers.
CNNSolver, GNNSolver = SOLVERS["cnn"], SOLVERS["gnn"]
HybridCNNSolver, HybridGNNSolver = SOLVERS["hybrid-cnn"], SOLVERS["hybrid-gnn"]
