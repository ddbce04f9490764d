"""The notebooks run from top to bottom (fast mode) and show what they promise."""

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from nnsweeper.evaluation import EvalTable

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CELL_TIMEOUT = 120  # seconds per cell; a fast-mode cell takes a few


def execute(name: str, extra_cells=()) -> nbformat.NotebookNode:
    """Run notebooks/<name> in fast mode with notebooks/ as the working folder; return it run."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nb.cells.extend(nbformat.v4.new_code_cell(source) for source in extra_cells)
    client = NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute(env={**os.environ, "NNSWEEPER_NOTEBOOK_FAST": "1"})
    return nb


def outputs(nb) -> tuple[str, str, int]:
    """The notebook's printed text, its stderr text and the number of PNG figures."""
    text, errors, images = [], [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                (errors if out.name == "stderr" else text).append(out.text)
            elif out.output_type in ("display_data", "execute_result"):
                images += "image/png" in out.data
                text.append(out.data.get("text/markdown", out.data.get("text/plain", "")))
    return "\n".join(text), "\n".join(errors), images


@pytest.fixture(scope="module")
def comparison():
    # The last cell checks that the kernel is this environment's Python.
    return outputs(execute("solver_comparison.ipynb", ["import sys\nprint('kernel prefix:', sys.prefix)"]))


@pytest.fixture(scope="module")
def inspection():
    return outputs(execute("model_inspection.ipynb"))


def test_solver_comparison_shows_the_reference_table_and_a_live_sweep(comparison):
    text, errors, images = comparison
    assert f"kernel prefix: {sys.prefix}" in text
    assert "fast mode: True" in text
    assert errors == ""  # no warnings or tracebacks in the saved outputs
    table = EvalTable.from_json(NOTEBOOKS.parent / "eval" / "results" / "compare_10x10.json")
    for solver in table.solvers:
        assert solver in text
    assert "win rate minus csp's" in text
    assert "Mean win rate over the mine counts" in text
    assert ("skipping the classic boards" in text) or ("expert" in text)
    # The live sweep: 4 games per point in fast mode, compared with the reference.
    assert "live win rate against the reference table's" in text
    assert "csp          10 mines: " in text and "/4 = " in text
    assert images >= 2  # win rate and gap to csp (plus the classic boards when present)


def test_model_inspection_compares_both_models_with_the_exact_engine(inspection):
    text, errors, images = inspection
    assert "fast mode: True" in text
    assert errors == ""
    assert "none of them in the models' training data" in text
    for label in ("exact engine: safest cell", "CNN: safest cell", "GNN: safest cell",
                  "MAE frontier", "largest error at"):
        assert label in text
    assert not re.search(r"\bnan\b", text, re.IGNORECASE)
    assert images >= 5  # one position, reliability, two hardest positions, the scaling curves
    # The scaling section reads the committed table: every run in it, and its closest point.
    with (NOTEBOOKS.parent / "eval" / "results" / "scaling.csv").open() as fh:
        runs = {line.split(",")[0] for line in list(fh)[1:]}
    assert runs and all(f"| {run} |" in text for run in runs)
    assert "closest to the exact engine so far: " in text
