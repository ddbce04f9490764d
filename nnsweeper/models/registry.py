"""The architectures: one entry per kind of model, read by everything that names one.

An :class:`Architecture` ties a name (``"cnn"``, ``"gnn"``: the ``arch`` of a model's
config, the stem of its bundled weights, the name of its pure solver) to its model
class. The class holds the rest: its typed config (``Config``), its training batches
(``make_loader``), its predictions. Training, checkpoints, :func:`nnsweeper.load_model`,
the command line (``--model ARCH=PATH``) and the solver registry read this table, and
every architecture gets two solvers, ``ARCH`` (the model alone) and ``hybrid-ARCH``
(logic first, the model for guesses), that ``compare`` plays by default.

This module imports no torch: the architectures that ship are named here by the
dotted path of their class, imported when first used. A new architecture is one
model module and a line below; a :class:`~nnsweeper.models.MineModel` subclass with
an ``arch`` not listed here registers itself when its class is defined (in a test
or a notebook, say).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field

__all__ = ["Architecture", "ARCHITECTURES", "register_architecture", "unregister_architecture",
           "get_architecture"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass
class Architecture:
    """One kind of model.

    Attributes
    ----------
    name : str
        The ``arch`` of its configs; lower-case letters, digits and ``_``.
    title : str
        How legends and solver classes write it (``"GNN"``: ``GNNSolver``,
        ``HybridGNNSolver``).
    model : str or type
        The :class:`~nnsweeper.models.MineModel` subclass, or ``"module:Class"`` to
        import it on first use.
    bundled : bool
        Whether weights ship in the package (``nnsweeper/models/weights/{name}.pt``),
        so that the bare name loads them and its solvers play without a path.
    """

    name: str
    title: str
    model: str | type
    bundled: bool = False
    _class: type | None = field(default=None, repr=False, compare=False)

    @property
    def solvers(self) -> tuple[str, str]:
        """Its registry solvers: ``(pure, hybrid)``."""
        return self.name, f"hybrid-{self.name}"

    def model_class(self) -> type:
        """The model class (imported on first use)."""
        if self._class is None:
            if isinstance(self.model, str):
                module, _, attr = self.model.partition(":")
                self._class = getattr(importlib.import_module(module), attr)
            else:
                self._class = self.model
        return self._class


#: Every architecture by name, in registration order.
ARCHITECTURES: dict[str, Architecture] = {}


def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"an architecture name must be lower-case letters, digits and '_', starting "
                         f"with a letter; got {name!r}")
    return name


def register_architecture(name: str, model, *, title: str | None = None, bundled: bool = False,
                          solvers: bool = True) -> Architecture:
    """Add an architecture (and, with ``solvers``, its two solvers) to the registries.

    Parameters
    ----------
    name : str
        Its ``arch``; must not be registered already (see :func:`unregister_architecture`).
    model : type or str
        The model class or ``"module:Class"``.
    title : str, optional
        Defaults to ``name.upper()``.
    bundled : bool, default False
        Weights ship in the package under ``name``.
    solvers : bool, default True
        Register the solvers ``name`` and ``hybrid-name`` too.

    Returns
    -------
    Architecture

    Raises
    ------
    ValueError
        A bad or taken name, or solver names already taken.
    """
    _check_name(name)
    if name in ARCHITECTURES:
        raise ValueError(f"architecture {name!r} is registered already")
    arch = Architecture(name, title or name.upper(), model, bundled)
    if solvers:
        from nnsweeper.solvers import register_neural_solvers

        register_neural_solvers(arch)
    ARCHITECTURES[name] = arch
    return arch


def unregister_architecture(name: str) -> None:
    """Remove an architecture and its solvers from the registries (what a test registered)."""
    arch = get_architecture(name)
    from nnsweeper.solvers import unregister_solver

    for solver in arch.solvers:
        unregister_solver(solver, missing_ok=True)
    del ARCHITECTURES[name]


def get_architecture(name) -> Architecture:
    """The architecture ``name``, or a ValueError listing them."""
    if not isinstance(name, str) or name not in ARCHITECTURES:
        raise ValueError(f"arch must be one of {', '.join(map(repr, ARCHITECTURES))}; got {name!r}")
    return ARCHITECTURES[name]


# The architectures that ship. Their solvers are registered by nnsweeper.solvers,
# which reads this table when it is imported.
ARCHITECTURES["cnn"] = Architecture("cnn", "CNN", "nnsweeper.models.cnn:MineCNN", bundled=True)
ARCHITECTURES["gnn"] = Architecture("gnn", "GNN", "nnsweeper.models.gnn:MineGNN", bundled=True)
