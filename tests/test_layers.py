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
