"""What ``import nnsweeper`` loads: none of the heavy packages the games do not need."""

import importlib
import json
import subprocess
import sys

import pytest

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


def test_the_engine_package_loads_no_heavy_package():
    # Its compiled kernels (numba) load on first use, not with the package.
    assert loaded_by("import nnsweeper.engine") == []


def test_the_deprecated_paths_are_gone():
    # One public path per name: the engine's old module paths and the value-training shim went in 0.x.
    for name in ("probability", "sampling", "_kernels", "value_training"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"nnsweeper.{name}")
        assert not hasattr(nnsweeper, name)


def test_version_comes_from_one_place():
    assert nnsweeper.__version__ == __version__
    assert "__version__" in nnsweeper.__all__


def test_the_cnn_and_the_config_checks_load_no_torch_geometric_and_help_no_torch():
    # torch-geometric (and the torch._dynamo it imports, seconds of a fresh process) comes with a
    # GNN built or run, not with the CNN, a training config's check or train's help.
    cnn = ("import numpy as np\n"
           "from nnsweeper.models import load_model\n"
           "grid = np.full((6, 6), -1, dtype=np.int8); grid[0, 0] = 1\n"
           "assert load_model('cnn').predict_proba(grid, total_mines=5).shape == (6, 6)")
    assert "torch_geometric" not in loaded_by(cnn)
    check = ("from nnsweeper.training_config import check_config, config_help\n"
             "config_help(); config_help(value=True)\n"
             "for arch in ('gnn', 'value-gnn', 'cnn'):\n"
             "    check_config({'data': {'path': 'd'}, 'model': {'arch': arch}, 'output': {'dir': 'r'}})")
    assert "torch_geometric" not in loaded_by(check)
    # Nor torch: the configs live apart from the models, so help and checks are instant.
    assert "torch" not in loaded_by(check)
    helped = ("from nnsweeper.cli import main\n"
              "try:\n    main(['train', '--help'])\nexcept SystemExit:\n    pass")
    assert loaded_by(helped) == []
    gnn = ("import numpy as np\n"
           "from nnsweeper.models import load_model\n"
           "load_model('gnn').predict_proba(np.full((6, 6), -1, dtype=np.int8), total_mines=5)")
    assert "torch_geometric" in loaded_by(gnn)  # (the probe sees it where it is used)
