"""What makes two evaluations' games the same experiment: the code that plays, the weights, the solver.

A game store (:mod:`~nnsweeper.evaluation.store`) keeps the games of a solver on a
board so that a rerun plays only what is missing. That is only sound when the games
already stored were played by the same experiment: the same solver with the same
options, the same code and the same weights. This module says what those are, as
digests that a store writes beside every chunk and checks on every read:

- :func:`code_digest`: SHA-256 of the source of every module of nnsweeper that
  plays a solver's games, found by following the imports (those inside functions too)
  from the solver's class, the game loop and the seed stream. A changed line in any of
  them changes the digest; a changed line in another solver, the command line, the
  plots or the training code does not.
- :func:`solver_identity`: a solver's description, the code digest, the digest of
  the source of a solver written outside nnsweeper (a function of the seed
  notebook's kind) and the SHA-256 of every checkpoint file it plays with (the bytes,
  not the path: a checkpoint copied over the same path is another experiment).
"""

from __future__ import annotations

import hashlib
import inspect

from nnsweeper.models.digest import model_weights, weights_digest
from nnsweeper.sourcecode import INFRASTRUCTURE, module_closure, source_digest

__all__ = ["code_digest", "describe", "model_weights", "playing_modules", "solver_identity",
           "weights_digest"]

_PACKAGE = "nnsweeper"
#: Where the code that plays starts: every solver, the loop that plays a chunk of
#: games and the stream of game seeds (:mod:`~nnsweeper.evaluation.runner`).
_ROOTS = ("nnsweeper.solvers", "nnsweeper.evaluation.games", "nnsweeper.evaluation.runner")
#: Modules that decide no game: :data:`~nnsweeper.sourcecode.INFRASTRUCTURE`, this module
#: (which names the weights) and the store (which keeps the games; the runner names its error).
_NOT_PLAYING = INFRASTRUCTURE | {"nnsweeper.evaluation.identity", "nnsweeper.evaluation.store"}


#: The code every solver's games go through: the game loop and the stream of game seeds.
_LOOP = ("nnsweeper.evaluation.games", "nnsweeper.evaluation.runner")


def _roots(solver=None) -> tuple[str, ...]:
    """Where the code that plays ``solver``'s games starts (every solver's code for None).

    A solver of nnsweeper: the modules of its class and of the classes it derives
    from, and the game loop. A solver written outside nnsweeper may call any of
    nnsweeper's solvers, so its games depend on all of them (and on its own source,
    :func:`solver_identity`).
    """
    if solver is None:
        return _ROOTS
    target = _code_of(solver)
    classes = target.__mro__ if inspect.isclass(target) else (target,)
    mine = {c.__module__ for c in classes if _ours(c)}
    return tuple(sorted(mine)) + _LOOP if mine else _ROOTS


def _code_of(fn):
    """What holds a solver's code: the function itself, or the class of a solver object."""
    return fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn)


def _ours(obj) -> bool:
    """Whether ``obj`` (a function or a class) is defined in nnsweeper."""
    return (getattr(obj, "__module__", "") or "").split(".")[0] == _PACKAGE


def playing_modules(solver=None) -> tuple[str, ...]:
    """The modules of nnsweeper whose code can change the result of ``solver``'s games, sorted.

    Every module imported (at the top or inside a function) by the solver's class (and
    its bases), the game loop and the seed stream, and so on down, less the few that
    decide no game (how work is spread over processes, how files are written, the
    version label); see :func:`~nnsweeper.sourcecode.module_closure`. Without a solver:
    those of every solver.
    """
    return module_closure(_roots(solver), _NOT_PLAYING)


def code_digest(solver=None) -> str:
    """SHA-256 (hex) of the source of :func:`playing_modules`, the same on every machine.

    A change in a module that ``solver`` does not use leaves its digest alone, so a
    long run's stored games survive work on other solvers.
    """
    return source_digest(_roots(solver), _NOT_PLAYING)


def _outside_source(fn) -> str | None:
    """SHA-256 of the source of a solver written outside nnsweeper (None for nnsweeper's own)."""
    target = _code_of(fn)
    if _ours(target):
        return None
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError):  # a built-in, or code typed where no source is kept
        return None
    return hashlib.sha256(source.encode()).hexdigest()


def describe(fn) -> str:
    """How a solver is named in a table and a store: its ``repr`` (a function: ``module.qualname``)."""
    if hasattr(fn, "__qualname__") and hasattr(fn, "__module__"):
        return f"{fn.__module__}.{fn.__qualname__}"
    return repr(fn)


def solver_identity(fn) -> dict:
    """What a solver's games depend on besides the board, the rule and the seeds.

    Returns
    -------
    dict
        ``description`` (:func:`describe`), ``code`` (:func:`code_digest`),
        ``weights`` (what each checkpoint the solver plays with is named by, to its
        :func:`weights_digest`, from the solver's ``weights()`` where it has one) and,
        for a solver defined outside nnsweeper, ``source`` (SHA-256 of its source).
    """
    identity = {"description": describe(fn), "code": code_digest(fn)}
    weights = getattr(fn, "weights", None)
    identity["weights"] = dict(sorted(weights().items())) if callable(weights) else {}
    source = _outside_source(fn)
    if source is not None:
        identity["source"] = source
    return identity
