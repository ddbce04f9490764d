"""What ``import nnsweeper`` loads: none of the heavy packages the games do not need."""

import json
import subprocess
import sys

import nnsweeper
from nnsweeper._version import __version__

#: Packages that must stay out of a fresh ``import nnsweeper`` (and so out of every
#: worker process that only plays or generates games).
HEAVY = ("torch", "torch_geometric", "scipy", "scipy.stats", "sklearn", "matplotlib", "numba")


def loaded_by(code: str) -> list[str]:
    """The :data:`HEAVY` packages in ``sys.modules`` after ``code`` ran in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_nnsweeper_loads_no_heavy_package():
    assert loaded_by("import nnsweeper") == []


def test_evaluation_and_intervals_load_no_heavy_package():
    code = ("import nnsweeper.evaluation as ev\n"
            "ev.wilson_interval(3, 10); ev.newcombe_interval(3, 10, 5, 10)\n"
            "ev.newcombe_paired_interval(2, 1, 3, 4)")
    assert loaded_by(code) == []


def test_version_comes_from_one_place():
    assert nnsweeper.__version__ == __version__
    assert "__version__" in nnsweeper.__all__
