"""Digests of nnsweeper's own source: which code made a result, the same on every machine.

A stored result that a later run extends (a game store's chunks, a dataset's shards)
must have been made by the same code as the run that extends it. The package version
does not say that (it stays the same across many changes), so these functions digest
the source itself: :func:`module_closure` follows the imports (those inside functions
too, and modules named in strings to be imported later) from a few root modules through
the package, and :func:`source_digest` is the
SHA-256 of the files found. A changed line in any of them changes the digest; a
changed line elsewhere (the command line, plots, docs) does not.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
from pathlib import Path

__all__ = ["module_closure", "source_digest", "clear_cache", "INFRASTRUCTURE"]

_PACKAGE = "nnsweeper"
_ROOT = Path(__file__).resolve().parent

#: Modules that much code imports but that decide no result: how work is spread over
#: processes (the results do not depend on it: tested), how files are written, the
#: version label, and this module. Digests leave them out and do not follow their imports.
INFRASTRUCTURE = frozenset({"nnsweeper.parallel", "nnsweeper.fileio", "nnsweeper._version",
                            "nnsweeper.sourcecode"})


#: A string that names a module of the package, or an attribute of one ("module:Name").
_MODULE_TEXT = re.compile(rf"{_PACKAGE}(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?")


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


def _imports(name: str, path: Path) -> frozenset[str]:
    """The modules of this package that module ``name`` (at ``path``) imports, anywhere in its body.

    Parsed once per version of the file in a process (the closures of a run's solvers share
    most of their modules): kept by the file's modification time and size.
    """
    st = path.stat()
    return _parsed_imports(name, os.fspath(path), st.st_mtime_ns, st.st_size)


@functools.cache
def _parsed_imports(name: str, where: str, mtime_ns: int, size: int) -> frozenset[str]:
    """:func:`_imports` of one version of the file (its time and size are the cache's key only)."""
    path = Path(where)
    tree = ast.parse(path.read_bytes(), filename=where)
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
        elif isinstance(node, ast.Constant) and _MODULE_TEXT.fullmatch(str(node.value)):
            # A module named in a string, to be imported on first use ("nnsweeper.models.gnn:MineGNN" in
            # the architecture registry, the lazy names of a package): imported all the same.
            out.add(node.value.partition(":")[0])
    return frozenset(m for m in out if m.split(".")[0] == _PACKAGE and _module_file(m) is not None)


@functools.cache
def module_closure(roots: tuple[str, ...], skip: frozenset[str] = INFRASTRUCTURE) -> tuple[str, ...]:
    """The modules of nnsweeper that ``roots`` import, directly or not, sorted (the roots included).

    Imports anywhere in a module count (inside functions too). The modules in ``skip``
    are left out and their imports not followed. Parent packages that a module merely
    sits in are not followed either (importing them runs their ``__init__``, which
    makes no result).
    """
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name in skip:
            continue
        path = _module_file(name)
        if path is None:
            continue
        seen.add(name)
        todo.extend(_imports(name, path) - seen)
    return tuple(sorted(seen))


@functools.cache
def source_digest(roots: tuple[str, ...], skip: frozenset[str] = INFRASTRUCTURE) -> str:
    """SHA-256 (hex) of the source of :func:`module_closure` of ``roots``, the same on every machine.

    Each file is read as bytes with its line endings made ``\\n``, so a checkout with
    other line endings gives the same digest.
    """
    h = hashlib.sha256()
    for name in module_closure(roots, skip):
        source = _module_file(name).read_bytes().replace(b"\r\n", b"\n")
        h.update(f"{name}\0{len(source)}\0".encode())
        h.update(source)
    return h.hexdigest()


def clear_cache() -> None:
    """Forget the digests computed so far (after the source changed in this process)."""
    module_closure.cache_clear()
    source_digest.cache_clear()
    _parsed_imports.cache_clear()
