"""The architectures: one entry per kind of model, read by everything that names one.

An :class:`Architecture` ties a name (``"cnn"``, ``"gnn"``: the ``arch`` of a model's
config, the stem of its bundled weights, the name of its pure solver) to its model
class. The class holds the rest: its typed config (``Config``), the kind of input it
reads (``inputs``: the datasets package picks the loader of its training batches from
it), its predictions. Training, checkpoints, :func:`nnsweeper.load_model`, the command
line (``--model ARCH=PATH``) and the solver registry read this table; the solvers
package derives two solvers from every entry, ``ARCH`` (the model alone) and
``hybrid-ARCH`` (logic first, the model for guesses), when it lists its solvers.

An architecture has a ``target``: ``"probability"`` (a mine predictor, P(mine) per
cell: the CNN and GNN) or ``"value"`` (a state-value network, P(win) per position:
``value-gnn``, ``value-cnn`` of :mod:`nnsweeper.models.value`). The two kinds live in
two tables, :data:`ARCHITECTURES` and :data:`VALUE_ARCHITECTURES`, so that everything
that plays or lists mine predictors (solvers, ``--model ARCH=PATH``) reads the first
alone and never derives a probability solver from a value network; checkpoints,
:func:`get_architecture` and training read both (:func:`all_architectures`).

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

__all__ = ["Architecture", "ARCHITECTURES", "VALUE_ARCHITECTURES", "TARGETS", "all_architectures",
           "register_architecture", "unregister_architecture", "get_architecture"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
# A value network names no solver class, so its name may hold '-' (the bundled "value-gnn").
_VALUE_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")

#: What a model predicts: P(mine) per cell, or P(win) per position.
TARGETS: tuple[str, ...] = ("probability", "value")


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
    target : {"probability", "value"}
        What the model predicts (see :data:`TARGETS`); only probability models have
        solvers of their own.
    config : str, optional
        ``"module:Class"`` of its config class in a module without torch (the bundled
        architectures': :mod:`nnsweeper.models.config`), so that a config is checked and
        its keys listed without importing the model; None: the model class's ``Config``.
    """

    name: str
    title: str
    model: str | type
    bundled: bool = False
    target: str = "probability"
    config: str | None = None
    _class: type | None = field(default=None, repr=False, compare=False)

    @property
    def solvers(self) -> tuple[str, str]:
        """The names of the solvers derived from it: ``(pure, hybrid)``; none for a value model
        (the value solvers are registered solvers of their own)."""
        if self.target != "probability":
            return ()
        return self.name, f"hybrid-{self.name}"

    def config_class(self) -> type:
        """The typed config class (``Config``), without importing the model's module when
        the architecture names one of :mod:`nnsweeper.models.config` (``config``)."""
        if self.config is not None:
            module, _, attr = self.config.partition(":")
            return getattr(importlib.import_module(module), attr)
        return self.model_class().Config

    def model_class(self) -> type:
        """The model class (imported on first use)."""
        if self._class is None:
            if isinstance(self.model, str):
                module, _, attr = self.model.partition(":")
                self._class = getattr(importlib.import_module(module), attr)
            else:
                self._class = self.model
        return self._class


#: Every probability architecture (mine predictor) by name, in registration order (the
#: table at the end of this module, then what :func:`register_architecture` adds).
ARCHITECTURES: dict[str, Architecture] = {}
#: Every value architecture (state-value network) by name, in registration order.
VALUE_ARCHITECTURES: dict[str, Architecture] = {}


def _table(target: str) -> dict[str, Architecture]:
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(map(repr, TARGETS))}; got {target!r}")
    return ARCHITECTURES if target == "probability" else VALUE_ARCHITECTURES


def all_architectures() -> dict[str, Architecture]:
    """Every architecture of both targets by name: the probability ones, then the value ones."""
    return {**ARCHITECTURES, **VALUE_ARCHITECTURES}


def _check_name(name, target: str = "probability") -> str:
    if target == "value":
        if not isinstance(name, str) or not _VALUE_NAME.match(name):
            raise ValueError(f"a value architecture name must be lower-case letters, digits, '_' and '-', "
                             f"starting with a letter; got {name!r}")
        return name
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
                          bundled: bool = False, target: str = "probability",
                          config: str | None = None) -> Architecture:
    """Add an architecture to :data:`ARCHITECTURES` (or :data:`VALUE_ARCHITECTURES`).

    A probability architecture's solvers ``name`` and ``hybrid-name`` follow:
    :mod:`nnsweeper.solvers` reads :data:`ARCHITECTURES` whenever it lists its solvers.

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
    target : {"probability", "value"}, default "probability"
        What the model predicts; the table it goes to.
    config : str, optional
        ``"module:Class"`` of its config class, when that lives in a module without torch
        (see :attr:`Architecture.config`).

    Returns
    -------
    Architecture

    Raises
    ------
    ValueError
        A bad or taken name, or a model class whose ``arch`` is another name.
    """
    table = _table(target)
    _check_name(name, target)
    if isinstance(model, type) and getattr(model, "arch", name) != name:
        raise ValueError(f"{model.__qualname__}.arch is {model.arch!r}; register it under that name")
    if not isinstance(model, str | type):
        raise ValueError(f"model must be a MineModel subclass or 'module:Class'; got {model!r}")
    old = all_architectures().get(name)
    if old is not None and (old.target != target or not _same_class(old.model, model)):
        raise ValueError(f"architecture {name!r} is registered already ({old.model})")
    if config is not None and (not isinstance(config, str) or ":" not in config):
        raise ValueError(f"config must be 'module:Class'; got {config!r}")
    arch = Architecture(name, title or name.upper(), model, bundled, target, config)
    table[name] = arch
    return arch


def unregister_architecture(name: str) -> None:
    """Remove an architecture from its table (what a test registered); its solvers go with it."""
    del _table(get_architecture(name, target=None).target)[name]


def get_architecture(name, *, target: str | None = "probability") -> Architecture:
    """The architecture ``name`` of ``target`` (None: of either target), or a ValueError listing them.

    The default looks among the mine predictors only, as the solvers need.
    """
    table = all_architectures() if target is None else _table(target)
    if not isinstance(name, str) or name not in table:
        raise ValueError(f"arch must be one of {', '.join(map(repr, table))}; got {name!r}")
    return table[name]


# --------------------------------------------------------------------------- the table
# The architectures that ship, in the order their solvers are listed.
register_architecture("cnn", "nnsweeper.models.cnn:MineCNN", title="CNN", bundled=True,
                      config="nnsweeper.models.config:CNNConfig")
register_architecture("gnn", "nnsweeper.models.gnn:MineGNN", title="GNN", bundled=True,
                      config="nnsweeper.models.config:GNNConfig")
# The state-value networks of the value solvers (their weights: value-gnn.pt).
register_architecture("value-gnn", "nnsweeper.models.value:ValueGNN", title="Value GNN", bundled=True,
                      target="value", config="nnsweeper.models.config:ValueConfig")
register_architecture("value-cnn", "nnsweeper.models.value:ValueCNN", title="Value CNN", target="value",
                      config="nnsweeper.models.config:ValueConfig")
