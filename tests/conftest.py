"""Shared test set-up: quiet, single-threaded numerics and reproducible Hypothesis runs."""

import os

# Set before numpy, torch or matplotlib are imported by any test module: one thread
# per test process keeps parallel runs (pytest -n) from oversubscribing the cores,
# and the Agg backend needs no display.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# "ci" (the default) explores the same examples on every run and keeps no example
# database, so a failure reproduces anywhere. "explore" draws fresh examples each
# run: HYPOTHESIS_PROFILE=explore pytest tests/test_probability.py
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def perturbed_model():
    """``make(config, seed=0)``: a small MineModel of ``config`` with non-trivial random weights
    (its probabilities vary by cell), the same for the same seed."""

    def make(config: dict, seed: int = 0):
        import torch

        from nnsweeper.models import MineModel

        torch.manual_seed(seed)
        model = MineModel.from_config(config).eval()
        gen = torch.Generator().manual_seed(seed + 1)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn(p.shape, generator=gen) * 0.3)
        return model

    return make
