"""The architectures: one entry per kind of model, read by everything that names one.

An :class:`Architecture` ties a name (``"cnn"``, ``"gnn"``: the ``arch`` of a model's
config, the stem of its bundled weights, the name of its pure solver) to its model
class. The class holds the rest: its typed config (``Config``), the kind of input it
reads (``inputs``: the datasets package picks the loader of its training batches from
it), its predictions. Training, checkpoints, :func:`nnsweeper.load_model`, the command
line (``--model ARCH=PATH``) and the solver registry read this table; the solvers
package derives two solvers from every entry, ``ARCH`` (the model alone) and
``hybrid-ARCH`` (logic first, the model for guesses), when it lists its solvers.

This module imports no torch (and nothing of the packages above the models): the
architectures that ship are named in the table at the end by the dotted path of
their class, imported when first used. A new architecture is one model module and one
:func:`register_architecture` line there (or, for a class defined in a test or a
notebook, one call beside it).
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
        """The names of the solvers derived from it: ``(pure, hybrid)``."""
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


#: Every architecture by name, in registration order (the table at the end of this
#: module, then what :func:`register_architecture` adds).
ARCHITECTURES: dict[str, Architecture] = {}


def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"an architecture name must be lower-case letters, digits and '_', starting "
                         f"with a letter; got {name!r}")
    return name


def _same_class(old: str | type, new: str | type) -> bool:
    """Whether ``new`` is ``old`` again: the same object, or a class of the same module and
    name (a notebook cell run again defines a new class object)."""
    if old is new:
        return True
    if isinstance(old, type) and isinstance(new, type):
        return (old.__module__, old.__qualname__) == (new.__module__, new.__qualname__)
    return False


def register_architecture(name: str, model, *, title: str | None = None,
                          bundled: bool = False) -> Architecture:
    """Add an architecture to :data:`ARCHITECTURES`.

    Its solvers ``name`` and ``hybrid-name`` follow: :mod:`nnsweeper.solvers` reads
    this table whenever it lists its solvers.

    Parameters
    ----------
    name : str
        Its ``arch``, the ``arch`` class attribute of its model class; must not be
        registered already (see :func:`unregister_architecture`), unless for a class of
        the same module and name (a notebook cell run again), which replaces it.
    model : type or str
        The model class or ``"module:Class"``.
    title : str, optional
        Defaults to ``name.upper()``.
    bundled : bool, default False
        Weights ship in the package under ``name``.

    Returns
    -------
    Architecture

    Raises
    ------
    ValueError
        A bad or taken name, or a model class whose ``arch`` is another name.
    """
    _check_name(name)
    if isinstance(model, type) and getattr(model, "arch", name) != name:
        raise ValueError(f"{model.__qualname__}.arch is {model.arch!r}; register it under that name")
    if not isinstance(model, str | type):
        raise ValueError(f"model must be a MineModel subclass or 'module:Class'; got {model!r}")
    old = ARCHITECTURES.get(name)
    if old is not None and not _same_class(old.model, model):
        raise ValueError(f"architecture {name!r} is registered already ({old.model})")
    arch = Architecture(name, title or name.upper(), model, bundled)
    ARCHITECTURES[name] = arch
    return arch


def unregister_architecture(name: str) -> None:
    """Remove an architecture from :data:`ARCHITECTURES` (what a test registered); its
    solvers go with it."""
    get_architecture(name)
    del ARCHITECTURES[name]


def get_architecture(name) -> Architecture:
    """The architecture ``name``, or a ValueError listing them."""
    if not isinstance(name, str) or name not in ARCHITECTURES:
        raise ValueError(f"arch must be one of {', '.join(map(repr, ARCHITECTURES))}; got {name!r}")
    return ARCHITECTURES[name]


# --------------------------------------------------------------------------- the table
# The architectures that ship, in the order their solvers are listed.
register_architecture("cnn", "nnsweeper.models.cnn:MineCNN", title="CNN", bundled=True)
register_architecture("gnn", "nnsweeper.models.gnn:MineGNN", title="GNN", bundled=True)
