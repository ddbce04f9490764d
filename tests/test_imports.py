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
    # Nor the bundled GNN's play: its sage layers are plain torch (training reads the graphs'
    # datasets through torch-geometric; another kind of layer is torch-geometric's).
    gnn = ("import numpy as np\n"
           "from nnsweeper.models import load_model\n"
           "load_model('gnn').predict_proba(np.full((6, 6), -1, dtype=np.int8), total_mines=5)")
    assert "torch_geometric" not in loaded_by(gnn)
    graph = ("import numpy as np\n"
             "from nnsweeper.models import MineModel\n"
             "m = MineModel.from_config({'arch': 'gnn', 'conv': 'graph', 'layers': 1}).eval()\n"
             "m.predict_proba(np.full((6, 6), -1, dtype=np.int8), total_mines=5)")
    assert "torch_geometric" in loaded_by(graph)  # (the probe sees it where it is used)


def test_the_networks_training_seeds_are_read_without_torch():
    # The process that hands games to workers checks their seeds against the networks' training
    # data: it reads the checkpoints' descriptions, and loads no model (and no torch) for it.
    code = ("from nnsweeper.solvers import get_solver\n"
            "for name in ('gnn', 'hybrid-cnn'):\n"
            "    assert get_solver(name).training_seeds['seed_streams']")
    assert "torch" not in loaded_by(code)


def test_the_description_reader_agrees_with_the_loaded_model(tmp_path):
    from nnsweeper.models import checkpoint, load_model
    from nnsweeper.models.digest import CHECKPOINT_FORMAT, model_description

    assert CHECKPOINT_FORMAT == (checkpoint.FORMAT, checkpoint.FORMAT_VERSION)
    for name in ("gnn", "cnn"):
        assert model_description(name) == load_model(name).checkpoint_meta
    # What it cannot read as a current checkpoint's is left to the loader (which says why).
    other = tmp_path / "other.pt"
    other.with_suffix(".json").write_text(json.dumps({"format": "nnsweeper-value-model"}))
    assert model_description(other) is None
    assert model_description(tmp_path / "missing.pt") is None
    assert model_description("gnn", "gnn") == model_description("gnn")
    assert model_description("gnn", "cnn") is None  # another architecture: the loader refuses it
    import shutil

    from nnsweeper.models.checkpoint import WEIGHTS_DIR

    for suffix in (".pt", ".json"):
        shutil.copy(WEIGHTS_DIR / f"cnn{suffix}", tmp_path / f"copy{suffix}")
    assert model_description(tmp_path / "copy.pt", "cnn") == load_model("cnn").checkpoint_meta
    with open(tmp_path / "copy.pt", "ab") as f:  # damaged: the loader says so
        f.write(b"\0")
    assert model_description(tmp_path / "copy.pt", "cnn") is None
    assert model_description(tmp_path / "weights.bin") is None
    assert model_description(object()) is None
