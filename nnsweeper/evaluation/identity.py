"""What makes two evaluations' games the same experiment: the code that plays, the weights, the solver.

A game store (:mod:`~nnsweeper.evaluation.store`) keeps the games of a solver on a
board so that a rerun plays only what is missing. That is only sound when the games
already stored were played by the same experiment: the same solver with the same
options, the same code and the same weights. This module says what those are, as
digests that a store writes beside every chunk and checks on every read:

- :func:`code_digest`: SHA-256 of the source of every module of nnsweeper that
  plays a game, found by following the imports (those inside functions too) from the
  solvers, the game loop and the seed stream. A changed line in any of them changes
  the digest; a changed line in the command line, the plots or the training code
  does not.
- :func:`solver_identity`: a solver's description, the code digest, the digest of
  the source of a solver written outside nnsweeper (a function of the seed
  notebook's kind) and the SHA-256 of every checkpoint file it plays with (the bytes,
  not the path: a checkpoint copied over the same path is another experiment).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
from pathlib import Path

from nnsweeper.models.digest import model_weights, weights_digest

__all__ = ["code_digest", "describe", "model_weights", "playing_modules", "solver_identity",
           "weights_digest"]

_PACKAGE = "nnsweeper"
_ROOT = Path(__file__).resolve().parent.parent
#: Where the code that plays starts: every solver, the loop that plays a chunk of
#: games and the stream of game seeds (:mod:`~nnsweeper.evaluation.runner`).
_ROOTS = ("nnsweeper.solvers", "nnsweeper.evaluation.games", "nnsweeper.evaluation.runner")
#: Modules that the code that plays imports but that decide no game: how tasks are
#: spread over workers (the results do not depend on it: tested), how files are
#: written, the version label, and this module (which names the weights). Their
#: imports are not followed either.
_NOT_PLAYING = frozenset({"nnsweeper.parallel", "nnsweeper.fileio", "nnsweeper._version",
                          "nnsweeper.evaluation.identity"})


def _module_file(name: str) -> Path | None:
    """The source file of module ``name`` of this package (a package's ``__init__.py``), or None."""
    parts = name.split(".")
    if parts[0] != _PACKAGE:
        return None
    base = _ROOT.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(name: str, path: Path) -> set[str]:
    """The modules of this package that module ``name`` (at ``path``) imports, anywhere in its body."""
    tree = ast.parse(path.read_bytes(), filename=os.fspath(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from package import name``: name is a submodule, or something the
            # package's ``__init__`` defines (then that module is followed too).
            subs = {f"{module}.{alias.name}" for alias in node.names}
            found = {m for m in subs if _module_file(m) is not None}
            out.update(found)
            if len(found) < len(subs):
                out.add(module)
    return {m for m in out if m.split(".")[0] == _PACKAGE and _module_file(m) is not None}


@functools.cache
def playing_modules() -> tuple[str, ...]:
    """The modules of nnsweeper whose code can change a game's result, sorted.

    Every module imported (at the top or inside a function) by the solvers, the game
    loop or the seed stream, and so on down, less the few that decide no game (how
    work is spread over processes, how files are written, the version label). Parent
    packages that a module merely sits in are not followed (importing them runs their
    ``__init__``, which changes no move).
    """
    seen: set[str] = set()
    todo = list(_ROOTS)
    while todo:
        name = todo.pop()
        if name in seen or name in _NOT_PLAYING:
            continue
        path = _module_file(name)
        if path is None:
            continue
        seen.add(name)
        todo.extend(_imports(name, path) - seen)
    return tuple(sorted(seen))


@functools.cache
def code_digest() -> str:
    """SHA-256 (hex) of the source of :func:`playing_modules`, the same on every machine.

    Each file is read as bytes with its line endings made ``\\n``, so a checkout with
    other line endings gives the same digest.
    """
    h = hashlib.sha256()
    for name in playing_modules():
        source = _module_file(name).read_bytes().replace(b"\r\n", b"\n")
        h.update(f"{name}\0{len(source)}\0".encode())
        h.update(source)
    return h.hexdigest()


def _outside_source(fn) -> str | None:
    """SHA-256 of the source of a solver written outside nnsweeper (None for nnsweeper's own)."""
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn)
    module = getattr(target, "__module__", "") or ""
    if module.split(".")[0] == _PACKAGE:
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
    identity = {"description": describe(fn), "code": code_digest()}
    weights = getattr(fn, "weights", None)
    identity["weights"] = dict(sorted(weights().items())) if callable(weights) else {}
    source = _outside_source(fn)
    if source is not None:
        identity["source"] = source
    return identity
