"""The reference site builds from a clean tree with warnings as errors (what make docs runs)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings_handlers.python")


def test_the_site_builds_strict_with_the_reference_of_the_public_names(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    pages = {name: (site / "reference" / name / "index.html").read_text(encoding="utf-8")
             for name in ("engine", "game", "solvers", "evaluation", "grading", "noguess", "models")}
    expected = {"engine": ["analyze", "mine_probabilities", "BoardAnalysis"],
                "game": ["Rules", "MinesweeperEnv"], "solvers": ["get_solver", "SearchSolver"],
                "evaluation": ["evaluate", "eval_solver_over_mines", "EvalTable"],
                "grading": ["grade", "read_replay"], "noguess": ["no_guess_board", "certify"]}
    for page, names in expected.items():
        for name in names:  # each documented under its own anchor
            assert re.search(rf'id="nnsweeper\.[\w.]*\b{name}"', pages[page]), (page, name)
    # The docstrings' Sphinx roles are shown as code, never as ":func:`...`".
    assert not any(re.search(r":(func|class|meth|attr|data|mod|exc):", text) for text in pages.values())
    # Every guide page is in the site.
    for page in (ROOT / "docs").glob("*.md"):
        assert (site / page.stem / "index.html").exists() or page.stem in ("index", "README"), page.name
    # Every link and figure works in the site: no target left behind, the repository's files copied.
    said = done.stdout + done.stderr
    assert "not found" not in said and "unrecognized relative link" not in said, said[-2000:]
    experiments = (site / "experiments" / "index.html").read_text(encoding="utf-8")
    figure = re.search(r'src="([^"]*compare_10x10\.png)"', experiments).group(1)
    assert (site / "experiments" / figure).resolve().is_file()
    # The command line's page, made from the parser: every command's help.
    from nnsweeper.cli import build_parser

    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    commands = build_parser()._subparsers._group_actions[0].choices
    assert all(f"nnsweeper {name}" in cli for name in commands) and "--time-limit" in cli
    shutil.rmtree(site)
