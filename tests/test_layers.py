"""The layering contracts of pyproject.toml ([tool.importlinter]) hold: every import points down."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(*args: str, config: Path | None = None) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "lint-imports"
    if not exe.exists():
        found = shutil.which("lint-imports")
        if found is None:
            pytest.skip("import-linter is not installed (it is in the dev extra)")
        exe = Path(found)
    cmd = [str(exe), *args] + (["--config", str(config)] if config else [])
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_every_import_points_down():
    done = _lint_imports("--no-cache")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "every import points down KEPT" in done.stdout
    assert "the engine and the game run without torch KEPT" in done.stdout


def test_an_upward_import_breaks_the_layers(tmp_path):
    # The same layers with two of them swapped: the engine "above" the solvers that use it.
    text = (ROOT / "pyproject.toml").read_text()
    swapped = text.replace('    "nnsweeper.solvers",\n', '    "nnsweeper.@@",\n') \
                  .replace('    "nnsweeper.engine",\n', '    "nnsweeper.solvers",\n') \
                  .replace('    "nnsweeper.@@",\n', '    "nnsweeper.engine",\n')
    assert swapped != text
    config = tmp_path / "pyproject.toml"
    config.write_text(swapped)
    done = _lint_imports("--no-cache", config=config)
    assert done.returncode != 0 and "every import points down BROKEN" in done.stdout


def _private_imports(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """``from M import _name`` lines of ``source`` (the module ``module``, a package's
    ``__init__`` with ``is_package``) where M is another nnsweeper module: internals shared
    by private name across modules."""
    import ast

    package = module if is_package else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:  # relative: from the module's package (one dot) or above
            parts = package.split(".")
            base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
        if not base.startswith("nnsweeper") or base == module:
            continue
        found += [f"{module}: from {base} import {a.name}" for a in node.names
                  if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_another_ones_private_names():
    found = []
    for path in sorted((ROOT / "nnsweeper").rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        found += _private_imports(path.read_text(encoding="utf-8"), name, is_package=path.stem == "__init__")
    assert found == []
    # The check finds one: a relative import of a private name from a sibling module.
    assert _private_imports("from .generate import _check, Part\n", "nnsweeper.datasets.values") == [
        "nnsweeper.datasets.values: from nnsweeper.datasets.generate import _check"]
