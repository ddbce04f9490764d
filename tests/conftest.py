"""Shared test set-up: quiet, single-threaded numerics and reproducible Hypothesis runs."""

import os

# Set before numpy, torch or matplotlib are imported by any test module: one thread
# per test process keeps parallel runs (pytest -n) from oversubscribing the cores,
# and the Agg backend needs no display.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

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
