"""Solvers and their registry: ``get_solver(name, **options) -> solver_fn``.

The registry is one table, :data:`REGISTRY` (name -> :class:`SolverSpec`), filled by
the :func:`register_solver` lines at the end of this module and by any later call.
Every architecture of :data:`nnsweeper.models.ARCHITECTURES` adds two solvers to
what users see, ``ARCH`` (its model alone) and ``hybrid-ARCH`` (logic first, the
model for guesses): they are derived from the architectures whenever the solvers
are listed, never registered. :data:`SOLVERS` (name -> class), :func:`compare_solvers`
and :func:`get_solver` read both: the package's own solvers, then every
architecture's model-alone solver, then the hybrids, then the solvers registered
from outside, each group in registration order.

A new solver is a module with a :class:`Solver` subclass and one
:func:`register_solver` line below; it is then played by ``nnsweeper eval`` and,
unless registered with ``compare=False``, by ``nnsweeper compare`` by default.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

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
    "REGISTRY",
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
    "SolverSpec",
    "Turns",
    "ValueSolver",
    "compare_solvers",
    "first_click_cell",
    "forced_guess",
    "get_solver",
    "local_rules",
    "prob_zero",
    "rank_cells",
    "register_solver",
    "unregister_solver",
]

@dataclass(frozen=True)
class SolverSpec:
    """One entry of the solver registry.

    Attributes
    ----------
    name : str
        The registry name (``get_solver(name)``, ``--solvers``).
    cls : type
        Called as ``cls(**options)``; its instances are ``solver(env, rng) -> bool``
        (a :class:`Solver` subclass, usually).
    compare : bool
        Whether ``compare`` plays it when no solvers are named.
    """

    name: str
    cls: type
    compare: bool = True


#: The registered solvers by name, in registration order: the table at the end of this
#: module, then what :func:`register_solver` adds. The ``ARCH`` / ``hybrid-ARCH``
#: solvers are not in it: :data:`SOLVERS` derives them from the architectures.
REGISTRY: dict[str, SolverSpec] = {}


def _check_new_name(name) -> None:
    if not isinstance(name, str) or not name or name != name.strip() or "," in name:
        raise ValueError(f"a solver name must be a non-empty string without commas or surrounding spaces; "
                         f"got {name!r}")
    if name in REGISTRY:
        raise ValueError(f"solver {name!r} is registered already ({REGISTRY[name].cls.__qualname__})")


def register_solver(name: str, cls: type, *, compare: bool = True) -> type:
    """Add a solver class to :data:`REGISTRY` under ``name``.

    Parameters
    ----------
    name : str
        The registry name; must not be taken (by a registered solver or an
        architecture's).
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
    _check_new_name(name)
    if name in _architecture_specs():
        raise ValueError(f"solver {name!r} is registered already (a solver of the architecture "
                         f"{name.removeprefix('hybrid-')!r})")
    if not callable(cls):
        raise ValueError(f"a solver must be a class (callable with its options); got {cls!r}")
    REGISTRY[name] = SolverSpec(name, cls, bool(compare))
    return cls


def unregister_solver(name: str, *, missing_ok: bool = False) -> None:
    """Remove a solver from :data:`REGISTRY` (an architecture's solvers go with the architecture:
    :func:`nnsweeper.models.unregister_architecture`)."""
    if name not in REGISTRY:
        if missing_ok:
            return
        raise ValueError(f"solver {name!r} is not registered")
    del REGISTRY[name]


def _architecture_specs() -> dict[str, SolverSpec]:
    """The solvers of the architectures, computed now: every model alone, then every hybrid."""
    from nnsweeper.models.registry import ARCHITECTURES

    specs = {}
    for hybrid in (False, True):
        for arch in ARCHITECTURES.values():
            name = arch.solvers[hybrid]
            if name in REGISTRY:
                raise ValueError(f"architecture {arch.name!r} needs the solver names "
                                 f"{', '.join(arch.solvers)}; {name} is registered already")
            specs[name] = SolverSpec(name, neural_solver_class(arch, hybrid))
    return specs


def _specs() -> dict[str, SolverSpec]:
    """Every solver users see, in listing order (see the module's docstring)."""
    own = {n: s for n, s in REGISTRY.items() if n in _PACKAGE_SOLVERS}
    added = {n: s for n, s in REGISTRY.items() if n not in _PACKAGE_SOLVERS}
    return {**own, **_architecture_specs(), **added}


class _SolverTable(Mapping):
    """:data:`SOLVERS`: every solver's class by name, read from the registry and the
    architectures when asked (a read-only mapping; :func:`register_solver` adds)."""

    def __getitem__(self, name: str) -> type:
        return _specs()[name].cls

    def __iter__(self) -> Iterator[str]:
        return iter(_specs())

    def __len__(self) -> int:
        return len(_specs())

    def __contains__(self, name) -> bool:
        return name in _specs()

    def __repr__(self) -> str:
        return f"SOLVERS({', '.join(_specs())})"


#: Every solver name and its class (the registered ones and the architectures'), in
#: listing order; computed on each read.
SOLVERS: Mapping[str, type] = _SolverTable()


def compare_solvers() -> list[str]:
    """The solvers ``compare`` plays by default: every listed one not registered with ``compare=False``."""
    return [name for name, spec in _specs().items() if spec.compare]


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
    specs = _specs()
    if name not in specs:
        raise ValueError(f"unknown solver {name!r}; choose one of {', '.join(specs)}")
    try:
        return specs[name].cls(**options)
    except TypeError as exc:
        raise ValueError(f"bad options for solver {name!r}: {exc}") from None


def __getattr__(name: str):
    # The architectures' solver classes by their class names (CNNSolver, HybridGNNSolver, ...),
    # made when first asked for.
    if name.endswith("Solver"):
        from nnsweeper.solvers import neural

        try:
            return getattr(neural, name)
        except AttributeError:
            pass
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- the table
register_solver("single_point", SinglePointSolver)
register_solver("csp", CSPSolver)
register_solver("search", SearchSolver)
register_solver("search-deep", DeepSearchSolver, compare=False)
register_solver("value-gnn", ValueSolver, compare=False)

#: The solvers of the table above: listed before the architectures' solvers, the ones
#: registered later after them.
_PACKAGE_SOLVERS = frozenset(REGISTRY)
