"""Parallel work through joblib, with a switchable backend.

Everything that fans out (evaluation, dataset generation) calls :func:`imap`, which
runs tasks in this process for ``n_jobs=1`` and otherwise through
``joblib.Parallel``. joblib picks its backend from the active
``joblib.parallel_config``, so the same call runs on local processes (loky, the
default), on a Dask cluster or on a Ray cluster::

    from dask.distributed import Client
    import joblib
    client = Client("tcp://scheduler:8786")        # or Client(LocalCluster(...))
    with joblib.parallel_config(backend="dask"):
        nnsweeper.datasets.generate("data/big", ["expert:5000"], n_jobs=-1)

    from ray.util.joblib import register_ray       # Ray: register, then select
    register_ray()
    with joblib.parallel_config(backend="ray"):
        ...

:func:`backend` does the same from a name (what ``--backend`` on the command line
uses).
"""

from __future__ import annotations

import contextlib
import numbers
import os
from collections.abc import Callable, Iterable, Iterator

__all__ = ["imap", "single_threaded_workers", "backend", "BACKENDS", "JOBS_PER_CPU", "max_jobs",
           "check_n_jobs", "effective_jobs"]

#: Backend names :func:`backend` understands.
BACKENDS = ("loky", "threading", "multiprocessing", "dask", "ray")

#: Most worker processes per CPU that ``n_jobs`` may ask for (:func:`max_jobs`).
#: Games and the exact engine are CPU-bound, so workers beyond the cores gain
#: nothing, while each loky worker is a whole Python process (about 100 MB with
#: nnsweeper loaded, 300 MB once the neural solvers import torch): ``n_jobs=100000``
#: would start 100000 of them. Two per CPU leaves room for oversubscribing on
#: purpose; on a cluster backend (Dask, Ray) ask for ``n_jobs=-1`` (all its workers).
JOBS_PER_CPU = 2


def max_jobs() -> int:
    """The largest ``n_jobs`` accepted here: :data:`JOBS_PER_CPU` times the usable CPUs.

    The CPUs are joblib's count, which honours CPU affinity and container quotas.
    """
    from joblib import cpu_count

    return JOBS_PER_CPU * max(1, cpu_count())


def check_n_jobs(n_jobs, *, allow_none: bool = False, error: type[ValueError] = ValueError) -> int | None:
    """``n_jobs`` checked against this machine, or ``error`` naming the rule it breaks.

    Accepted: 1 (this process), 2 up to :func:`max_jobs` workers, and -1 down to
    minus the number of CPUs (joblib's "all CPUs but ``-n_jobs - 1``"); None too
    when ``allow_none`` (the active ``joblib.parallel_config`` decides).
    """
    if n_jobs is None and allow_none:
        return None
    from joblib import cpu_count

    cpus, top = max(1, cpu_count()), max_jobs()
    if (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0
            or not -cpus <= n_jobs <= top):
        raise error(
            f"n_jobs must be a non-zero integer from -{cpus} to {top} (1: no parallelism, -1: all "
            f"{cpus} CPUs, at most {JOBS_PER_CPU} workers per CPU); got {n_jobs!r}"
        )
    return int(n_jobs)


def effective_jobs(n_jobs: int | None) -> int:
    """How many workers :func:`imap` runs ``n_jobs`` on.

    1 for ``n_jobs=1`` (this process); otherwise joblib's count under the active
    ``joblib.parallel_config`` (``-1``: all CPUs), which callers use to size their tasks.
    """
    if n_jobs == 1:
        return 1
    from joblib import effective_n_jobs

    return effective_n_jobs(n_jobs)


@contextlib.contextmanager
def single_threaded_workers() -> Iterator[None]:
    """Start worker processes with ``OMP_NUM_THREADS=1`` (a value the user set is kept).

    Without it every worker that imports torch or a threaded BLAS starts a thread per
    core, and on a small machine the oversubscription costs far more than it gains.
    """
    if "OMP_NUM_THREADS" in os.environ:
        yield
        return
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        os.environ.pop("OMP_NUM_THREADS", None)


def imap(fn: Callable, tasks: Iterable, n_jobs: int | None, *, ordered: bool = True,
         worker_setup: Callable[[], None] | None = None) -> Iterator:
    """``fn(*task)`` for every task, yielded as they finish.

    Parameters
    ----------
    fn : callable
        A picklable function.
    tasks : iterable of tuples
        Positional arguments of each call; read lazily, a few tasks ahead of the workers.
    n_jobs : int or None
        1 runs in this process; otherwise joblib workers (-1: all cores; None: the
        active ``joblib.parallel_config``'s choice); see :func:`check_n_jobs`.
    ordered : bool, default=True
        Yield in task order; with False, in order of completion (wrap each result
        with what identifies its task).
    worker_setup : callable, optional
        One-time set-up of the worker processes (importing torch, loading a model),
        called with no arguments in every new loky worker before it takes a task.
        It must be picklable, must not raise, and should compare equal to the
        set-up of an earlier call that needs the same (loky keeps its workers from
        one call to the next only while their set-up is equal). It is an
        optimisation, not a guarantee: other backends and ``n_jobs=1`` skip it, so
        ``fn`` must still set itself up (once per process) where it was not done.

    Notes
    -----
    Why the set-up goes first: a loky worker measures its memory after its first
    task and, whenever it has since grown by more than 300 MB, takes it for a leak,
    exits and is replaced (with the warning "A worker stopped while some jobs were
    given to the executor"). Importing torch and loading a model in a task after
    the first adds about that much, so the worker would be restarted, and its
    replacement would import and load everything again. Set up before the first
    task, it counts in the worker's reference size instead.
    """
    n_jobs = check_n_jobs(n_jobs, allow_none=True)
    if n_jobs == 1:
        for task in tasks:
            yield fn(*task)
        return
    from joblib import Parallel, delayed

    options = {}
    if worker_setup is not None and _loky_is_active():
        options["initializer"] = worker_setup
    with single_threaded_workers():
        parallel = Parallel(n_jobs=n_jobs, return_as="generator" if ordered else "generator_unordered",
                            **options)
        yield from parallel(delayed(fn)(*task) for task in tasks)


def _loky_is_active() -> bool:
    """Whether joblib's active backend is loky (whose workers take an ``initializer``)."""
    from joblib.parallel import LokyBackend, get_active_backend

    return isinstance(get_active_backend()[0], LokyBackend)


@contextlib.contextmanager
def backend(name: str | None, scheduler: str | None = None) -> Iterator[None]:
    """Run the enclosed :func:`imap` calls on joblib backend ``name``.

    Parameters
    ----------
    name : str or None
        One of :data:`BACKENDS`; None keeps joblib's current choice.
    scheduler : str, optional
        For ``"dask"``: the address of a running scheduler (``tcp://host:8786``).
        Without one, a local Dask cluster is started for the duration.
    """
    if name is None:
        if scheduler is not None:
            raise ValueError("scheduler is only used with backend 'dask'")
        yield
        return
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {name!r}")
    if scheduler is not None and name != "dask":
        raise ValueError(f"scheduler is only used with backend 'dask'; got backend {name!r}")
    from joblib import parallel_config

    with contextlib.ExitStack() as stack:
        if name == "dask":
            try:
                from dask.distributed import Client, LocalCluster
            except ImportError:
                raise ValueError(
                    "backend 'dask' needs dask.distributed: pip install 'dask[distributed]'"
                ) from None
            if scheduler is None:
                cluster = stack.enter_context(LocalCluster(processes=True, threads_per_worker=1))
                client = stack.enter_context(Client(cluster))
            else:
                client = stack.enter_context(Client(scheduler))
            del client  # the active client is what joblib's dask backend uses
        elif name == "ray":
            try:
                from ray.util.joblib import register_ray
            except ImportError:
                raise ValueError("backend 'ray' needs ray: pip install 'ray[default]'") from None
            register_ray()
        stack.enter_context(parallel_config(backend=name))
        yield

