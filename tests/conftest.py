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


#: Seconds the Dask cluster of ``dask_scheduler_address`` may take to start.
_CLUSTER_START_SECONDS = 60


@pytest.fixture
def dask_scheduler_address(tmp_path):
    """A real Dask cluster on 127.0.0.1: ``(address, workers)``.

    A scheduler and two single-threaded worker processes, each its own subprocess
    (``python -m distributed.cli.dask_scheduler`` / ``dask_worker``, workers without a
    nanny, so a worker's ``Popen`` is the worker itself and killing it loses it).
    ``workers`` are the two ``Popen`` objects. The workers find this test directory on
    their path (to unpickle its functions) and start without ``OMP_NUM_THREADS``, as
    from a plain shell. Everything is stopped at teardown. Skipped without
    dask.distributed.
    """
    import json
    import subprocess
    import sys
    import time

    pytest.importorskip("dask.distributed")
    from dask.distributed import Client

    here = os.path.dirname(os.path.abspath(__file__))
    scheduler_file = tmp_path / "scheduler.json"
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                           "OPENBLAS_NUM_THREADS")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
    started, logs = [], []

    def start(name: str, *args: str) -> subprocess.Popen:
        log = open(tmp_path / f"{name}.log", "wb")  # noqa: SIM115 (closed at teardown)
        logs.append(log)
        process = subprocess.Popen([sys.executable, "-m", *args], stdout=log, stderr=subprocess.STDOUT,
                                   env=env, cwd=tmp_path)
        started.append(process)
        return process

    def fail(why: str):
        tails = "\n".join(f"--- {p.name}\n" + p.read_text(errors="replace")[-2000:]
                          for p in sorted(tmp_path.glob("*.log")))
        pytest.fail(f"the Dask test cluster did not start: {why}\n{tails}")

    try:
        scheduler = start("scheduler", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                          "--port", "0", "--no-dashboard", "--dashboard-address", "127.0.0.1:0",
                          "--scheduler-file", str(scheduler_file))
        workers = [
            start(f"worker-{k}", "distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file),
                  "--host", "127.0.0.1", "--nthreads", "1", "--nworkers", "1", "--no-nanny",
                  "--memory-limit", "1GiB", "--no-dashboard", "--death-timeout", "60",
                  "--name", f"worker-{k}")
            for k in range(2)
        ]
        deadline = time.monotonic() + _CLUSTER_START_SECONDS
        address = None
        while address is None:
            if scheduler.poll() is not None:
                fail(f"the scheduler exited with code {scheduler.returncode}")
            if time.monotonic() > deadline:
                fail(f"no scheduler address in {scheduler_file} after {_CLUSTER_START_SECONDS} s")
            try:
                address = json.loads(scheduler_file.read_text())["address"]
            except (OSError, ValueError, KeyError):  # not written yet, or half written
                time.sleep(0.1)
        with Client(address, timeout=max(1.0, deadline - time.monotonic())) as client:
            try:
                client.wait_for_workers(2, timeout=max(1.0, deadline - time.monotonic()))
            except TimeoutError:
                fail(f"fewer than 2 workers joined {address} within {_CLUSTER_START_SECONDS} s")
        yield address, workers
    finally:
        # The workers first, while the scheduler they say goodbye to is still there
        # (without it, a worker's graceful exit waits on its connection for 10 s).
        for group in (started[1:], started[:1]):
            for process in group:
                if process.poll() is None:
                    process.terminate()
            for process in group:
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        for log in logs:
            log.close()


@pytest.fixture
def ctrl_c_at_step(monkeypatch):
    """A function ``arm(n)``: the training loop's ``n``-th optimiser step from now (1 for the next)
    is a Ctrl-C instead; ``arm(None)`` gives the loop its own step back. ``arm(n, action)``
    runs ``action()`` before that step instead (a signal that the loop turns into a Ctrl-C)."""
    import nnsweeper.training.loop as loop

    real = loop._step

    def ctrl_c():
        raise KeyboardInterrupt

    def arm(n, action=ctrl_c):
        if n is None:
            monkeypatch.setattr(loop, "_step", real)
            return
        calls = {"n": 0}

        def step(run, net, batch, b):
            calls["n"] += 1
            if calls["n"] == n:
                action()
            return real(run, net, batch, b)

        monkeypatch.setattr(loop, "_step", step)

    return arm


@pytest.fixture
def each_byte_changed():
    """``sweep(path, read, error)``: each byte of the file ``path`` in turn set to its complement,
    then ``read()``. Returns ``(refusals, reads)``: the message of each ``error`` raised, and
    ``(offset, what read returned)`` of every read that raised nothing. Any other exception
    escapes (the bug a sweep looks for); the file is restored at the end."""
    def sweep(path, read, error):
        data, refusals, reads = path.read_bytes(), [], []
        try:
            for i in range(len(data)):
                changed = bytearray(data)
                changed[i] ^= 0xFF
                path.write_bytes(bytes(changed))
                try:
                    reads.append((i, read()))
                except error as e:
                    refusals.append(str(e))
        finally:
            path.write_bytes(data)
        return refusals, reads

    return sweep
