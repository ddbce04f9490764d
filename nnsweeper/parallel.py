"""Parallel work on local processes or a cluster, with a switchable backend.

Everything that fans out (evaluation, dataset generation) calls :func:`imap`, which
runs tasks in this process for ``n_jobs=1``, on Dask futures when the active joblib
backend is Dask, and otherwise through ``joblib.Parallel``. The backend comes from the
active ``joblib.parallel_config``, so the same call runs on local processes (loky, the
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
uses), and :func:`terminate_on_sigterm` makes a ``kill`` of the command stop its
workers as Ctrl-C does.

Worker processes never outlive the process that started them: a loky worker watches
its parent and exits within about :data:`PARENT_POLL_SECONDS` of its death (a
``SIGKILL`` included), even in the middle of a task or while it still starts, and
when the consumer of :func:`imap` stops early (an exception, Ctrl-C, the generator
closed) the workers are killed rather than left to finish their tasks. On Dask, tasks
are futures: a worker lost mid-run costs only the tasks it held, which the scheduler
runs again elsewhere; with every worker lost, :func:`imap` says so and waits a while
for one to come back.
"""

from __future__ import annotations

import contextlib
import numbers
import os
import signal
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator

from nnsweeper.errors import NnsweeperError

__all__ = ["imap", "single_threaded_workers", "terminate_on_sigterm", "backend", "BACKENDS",
           "BackendError", "JOBS_PER_CPU", "PARENT_POLL_SECONDS", "DASK_TASKS_PER_THREAD",
           "DASK_CONNECT_SECONDS", "max_jobs", "check_n_jobs", "effective_jobs", "machine"]

#: Backend names :func:`backend` understands.
BACKENDS = ("loky", "threading", "multiprocessing", "dask", "ray")

#: Most worker processes per CPU that ``n_jobs`` may ask for (:func:`max_jobs`).
#: Games and the exact engine are CPU-bound, so workers beyond the cores gain
#: nothing, while each loky worker is a whole Python process (about 100 MB with
#: nnsweeper loaded, 300 MB once the neural solvers import torch): ``n_jobs=100000``
#: would start 100000 of them. Two per CPU leaves room for oversubscribing on
#: purpose; on a cluster backend (Dask, Ray) ask for ``n_jobs=-1`` (all its workers).
JOBS_PER_CPU = 2

#: Seconds between a loky worker's checks that the process that started it is alive
#: (:func:`imap`): how long an orphaned worker can keep running at most, give or take
#: the time its task holds the GIL without a break.
PARENT_POLL_SECONDS = 0.5

#: Dask tasks kept in flight per worker thread of the cluster (:func:`imap`): enough
#: that a thread finishing a task finds the next one waiting on its worker, few enough
#: that the tasks are read lazily and a lost worker held only a few.
DASK_TASKS_PER_THREAD = 2

#: Seconds :func:`backend` gives the Dask scheduler at the address it is given to answer
#: (the connection, Dask's handshake, the client's registration) before saying that none did.
DASK_CONNECT_SECONDS = 10

#: Seconds :func:`imap` waits for a first worker when the Dask cluster has none, and
#: for one to come back when the cluster loses all its workers while tasks are pending.
_DASK_WORKER_WAIT_SECONDS = 60

#: Seconds without a Dask result after which :func:`imap` asks the scheduler whether
#: the cluster still has a worker (and from then on as often, while none comes).
_DASK_LOST_CHECK_SECONDS = 1.0

#: Seconds between :func:`imap`'s readings of the Dask cluster's size while it runs
#: (a cluster that grows, such as SLURM jobs starting one by one, gets more tasks).
_DASK_RESIZE_SECONDS = 10

#: Ordered Dask results held back for an earlier one, at most, per task in flight.
_DASK_HELD_PER_TASK = 8

#: The end of an iterator of tasks (None could be a task's arguments).
_END = object()

#: The start of joblib's warning when its result generator is closed early; imap
#: closes it on purpose (the consumer stopped) and kills the workers.
_EARLY_EXIT_WARNING = r"\d+ tasks (have been successfully executed|which were still being processed)"

#: The start of loky's warning when it replaces a worker: one that grew by more than 300 MB
#: since its first task (torch, a model, the engine's caches) exits between two tasks, as
#: loky's guard against leaks, and a fresh worker takes the tasks given to it. No task or
#: result is lost, so the notice, printed from loky's thread across the progress bar, is noise.
_WORKER_RESTART_WARNING = "A worker stopped while some jobs were given to the executor"


class BackendError(NnsweeperError):
    """A backend that cannot run the work: no Dask scheduler answering at the address given."""


def max_jobs() -> int:
    """The largest ``n_jobs`` accepted here: :data:`JOBS_PER_CPU` times the usable CPUs.

    The CPUs are joblib's count, which honours CPU affinity and container quotas.
    """
    from joblib import cpu_count

    return JOBS_PER_CPU * max(1, cpu_count())


def machine() -> str:
    """The processor this process runs on, for the account of a run (its model name where known)."""
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


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


@contextlib.contextmanager
def terminate_on_sigterm() -> Iterator[None]:
    """Turn ``SIGTERM`` into :class:`KeyboardInterrupt` in the main thread while inside.

    A ``kill`` (or a batch system ending a job) then stops the run as Ctrl-C does:
    the work in progress is abandoned cleanly, :func:`imap`'s workers are killed and
    the files written so far stay valid. Without it Python dies at once on
    ``SIGTERM``, running no clean-up (the workers still exit, on their own, within
    :data:`PARENT_POLL_SECONDS`). The previous handler is restored on leaving.

    Signal handlers belong to the main thread: entered from another thread, or where
    there is no ``SIGTERM``, this does nothing.
    """
    sigterm = getattr(signal, "SIGTERM", None)
    if sigterm is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"terminated by signal {signal.Signals(signum).name}")

    previous = signal.signal(sigterm, interrupt)
    try:
        yield
    finally:  # None: a handler not set from Python, which cannot be put back; the default
        signal.signal(sigterm, signal.SIG_DFL if previous is None else previous)


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
        active ``joblib.parallel_config``'s choice); see :func:`check_n_jobs`. On
        Dask every worker of the cluster takes tasks whatever the value (other than 1).
    ordered : bool, default=True
        Yield in task order; with False, in order of completion (wrap each result
        with what identifies its task).
    worker_setup : callable, optional
        One-time set-up of the worker processes (importing torch, loading a model),
        called with no arguments in every new loky worker before it takes a task,
        and on Dask once in each worker process before the first of its tasks.
        It must be picklable, must not raise, and should compare equal to the
        set-up of an earlier call that needs the same (loky keeps its workers from
        one call to the next only while their set-up is equal; a Dask worker runs
        a set-up equal to one it ran before only once). It is an optimisation, not
        a guarantee: threads, multiprocessing, Ray and ``n_jobs=1`` skip it, so
        ``fn`` must still set itself up (once per process) where it was not done.

    Yields
    ------
    object
        ``fn(*task)`` of each task. An exception in a task is raised here, and the
        tasks still running are abandoned.

    Notes
    -----
    Why the set-up goes first: a loky worker measures its memory after its first
    task and, whenever it has since grown by more than 300 MB, takes it for a leak,
    exits and is replaced (with the warning "A worker stopped while some jobs were
    given to the executor"). Importing torch and loading a model in a task after
    the first adds about that much, so the worker would be restarted, and its
    replacement would import and load everything again. Set up before the first
    task, it counts in the worker's reference size instead.

    Stopping: every loky worker started here runs a watchdog thread that ends the
    worker (``os._exit``) within :data:`PARENT_POLL_SECONDS` once the process that
    started it has died, whatever the worker is doing. When the consumer stops
    early (the generator is closed, or an exception or :class:`KeyboardInterrupt`
    reaches it while it waits), the loky workers are killed and the remaining Dask
    futures cancelled.

    On Dask (the active joblib backend is ``"dask"``: :func:`backend` with
    ``"dask"``, or ``joblib.parallel_config(backend="dask")`` under a Client of your
    own) each task is a future (``client.submit``), about
    :data:`DASK_TASKS_PER_THREAD` per worker thread in flight, results taken with
    ``dask.distributed.as_completed``. A worker lost mid-run costs only its tasks: the
    scheduler runs them again on another worker (a task that kills
    ``distributed.scheduler.allowed-failures`` + 1 workers, 4 by default, fails with
    ``KilledWorker``). A cluster that loses all its workers while tasks are pending
    keeps them until workers come back: a :class:`RuntimeWarning` names the scheduler
    and says so, and after :data:`_DASK_WORKER_WAIT_SECONDS` with none,
    :class:`TimeoutError` ends the run. Each Dask worker process gets single-threaded
    numerics (``OMP_NUM_THREADS=1`` unless set, as :func:`single_threaded_workers` does).
    """
    n_jobs = check_n_jobs(n_jobs, allow_none=True)
    if n_jobs == 1:
        for task in tasks:
            yield fn(*task)
        return
    client = _dask_client()
    if client is not None:
        yield from _dask_imap(client, fn, tasks, ordered=ordered, worker_setup=worker_setup)
        return
    from joblib import Parallel, delayed

    options = {}
    if _loky_is_active():
        options["initializer"] = _LokyWorkerStart(worker_setup)
        # For the whole process, not a catch_warnings scope: loky warns from its own thread at any
        # time, and a scope held open across this generator's yields would undo the caller's filters.
        warnings.filterwarnings("ignore", message=_WORKER_RESTART_WARNING, category=UserWarning)
    with single_threaded_workers():
        parallel = Parallel(n_jobs=n_jobs, return_as="generator" if ordered else "generator_unordered",
                            **options)
        results = parallel(delayed(fn)(*task) for task in tasks)
        try:
            # Not ``yield from``: closing this generator must close joblib's below
            # inside the filter (the kill is on purpose, its warning is noise).
            for result in results:  # noqa: UP028
                yield result
        finally:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=_EARLY_EXIT_WARNING, category=UserWarning)
                results.close()  # joblib aborts: kills the loky workers, running tasks and all


class _LokyWorkerStart:
    """The initializer of :func:`imap`'s loky workers: the parent watchdog, then ``setup``.

    Made in the process that starts the workers, it records that process's id
    (``parent``): a worker reads its own parent only once its imports are done,
    when an early death of the parent would already have re-parented it (to init
    or a subreaper), so the parent to watch must come from the parent itself.

    Two are equal when their set-ups are (None included) and they were made in the
    same process, which is what lets loky keep its workers from one call to the next.
    """

    def __init__(self, setup: Callable[[], None] | None):
        self.setup = setup
        self.parent = os.getpid()

    def __eq__(self, other) -> bool:
        return (isinstance(other, _LokyWorkerStart) and self.parent == other.parent
                and self.setup == other.setup)

    def __hash__(self) -> int:
        return hash(_LokyWorkerStart)  # set-ups need not be hashable

    def __repr__(self) -> str:
        return f"_LokyWorkerStart({self.setup!r}, parent={self.parent})"

    def __call__(self) -> None:
        _exit_with_parent(self.parent)
        if self.setup is not None:
            self.setup()


#: Whether this process runs the watchdog of :func:`_exit_with_parent`.
_WATCHING_PARENT = False


def _exit_with_parent(parent: int, poll: float = PARENT_POLL_SECONDS) -> None:
    """End this process (``os._exit``) soon after its parent ``parent`` dies, whatever it is doing.

    ``parent`` is the process id of the parent as the parent gave it (its
    ``os.getpid()``), not this process's ``os.getppid()`` now: the parent may have
    died already while this process started (importing takes seconds on a busy
    machine), and an orphan is re-parented to init or a subreaper, whose id it would
    then watch for ever. If ``os.getppid()`` is not ``parent`` now, the parent is
    gone and this process exits at once; otherwise a daemon thread checks every
    ``poll`` seconds that it still is. Polling, not ``prctl(PR_SET_PDEATHSIG)``: that
    signal fires when the *thread* that started the process ends, and loky starts
    workers from whichever thread calls :func:`imap` (which may be short-lived) and
    replacements from its manager thread, so live workers of a live parent would be
    killed. POSIX only (on Windows the parent id never changes); started once per
    process.

    With the workers gone, loky's and multiprocessing's resource trackers (started
    by the parent, reading a pipe that the parent and its workers hold open) see the
    end of their pipe and exit too.
    """
    global _WATCHING_PARENT
    if _WATCHING_PARENT or os.name != "posix":
        return
    if os.getppid() != parent:
        os._exit(1)  # orphaned before it could watch: the parent that wanted its results is gone

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        os._exit(1)  # no clean-up: the parent that would receive the results is gone

    threading.Thread(target=watch, name="nnsweeper-parent-watchdog", daemon=True).start()
    _WATCHING_PARENT = True


def _dask_client():
    """The Client of joblib's active backend when that is Dask, else None."""
    if "distributed" not in sys.modules:  # no Client can exist, and joblib has no Dask backend
        return None
    from joblib.parallel import BACKENDS as JOBLIB_BACKENDS
    from joblib.parallel import get_active_backend

    dask_backend = JOBLIB_BACKENDS.get("dask")
    active = get_active_backend()[0]
    if dask_backend is None or not isinstance(active, dask_backend):
        return None
    return active.client


def _dask_threads(client) -> int:
    """The worker threads of ``client``'s cluster, after waiting for a first worker."""
    threads = sum(client.nthreads().values())
    if threads:
        return threads
    try:
        client.wait_for_workers(1, timeout=_DASK_WORKER_WAIT_SECONDS)
    except TimeoutError:
        raise TimeoutError(
            f"the Dask scheduler at {client.scheduler.address} has no worker after "
            f"{_DASK_WORKER_WAIT_SECONDS} s; start workers (dask worker {client.scheduler.address}) "
            f"or scale the cluster before running"
        ) from None
    return max(1, sum(client.nthreads().values()))


def _dask_imap(client, fn: Callable, tasks: Iterable, *, ordered: bool,
               worker_setup: Callable[[], None] | None) -> Iterator:
    """:func:`imap` on Dask futures: a bounded number in flight, results as they complete."""
    from dask.distributed import as_completed
    from dask.utils import funcname

    name = funcname(fn)
    tasks = iter(tasks)
    submitted = 0
    limit = DASK_TASKS_PER_THREAD * _dask_threads(client)
    sized = time.monotonic()
    pending: dict = {}  # future: its task's number
    held: dict[int, object] = {}  # ordered: results waiting for an earlier one
    following = 0  # ordered: the number of the next result to yield
    finished = as_completed(loop=client.loop)
    exhausted = False

    def submit() -> None:
        nonlocal exhausted, limit, sized, submitted
        if time.monotonic() - sized > _DASK_RESIZE_SECONDS:
            limit = DASK_TASKS_PER_THREAD * max(1, sum(client.nthreads().values()))
            sized = time.monotonic()
        while not exhausted and len(pending) < limit and len(held) < _DASK_HELD_PER_TASK * limit:
            task = next(tasks, _END)
            if task is _END:
                exhausted = True
                return
            future = client.submit(_run_dask_task, fn, worker_setup, *task, pure=False,
                                   key=f"{name}-{uuid.uuid4().hex}")
            pending[future] = submitted
            submitted += 1
            finished.add(future)

    def next_finished():
        """``next(finished)``, saying so when the cluster loses every worker meanwhile.

        While no result comes, the scheduler is asked every :data:`_DASK_LOST_CHECK_SECONDS`
        how many worker threads it has. With none, a warning says that the run waits for
        workers to come back, and after :data:`_DASK_WORKER_WAIT_SECONDS` of none a
        TimeoutError ends it (its pending futures are cancelled on the way out).
        """
        wake = getattr(finished, "thread_condition", None)  # notified as each future arrives
        checked = time.monotonic()
        lost_since = None
        while not finished.has_ready():
            if wake is None:
                time.sleep(0.01)
            else:
                with wake:
                    wake.wait(timeout=0.1)
            if finished.has_ready() or time.monotonic() - checked < _DASK_LOST_CHECK_SECONDS:
                continue
            checked = time.monotonic()
            if sum(client.nthreads().values()):
                lost_since = None  # long tasks, or workers back
                continue
            address = client.scheduler.address
            if lost_since is None:
                lost_since = checked
                warnings.warn(
                    f"the Dask cluster at {address} has lost all its workers with {len(pending)} "
                    f"task(s) pending; waiting up to {_DASK_WORKER_WAIT_SECONDS} s for workers to "
                    f"come back (dask worker {address})", RuntimeWarning, stacklevel=4)
            elif checked - lost_since >= _DASK_WORKER_WAIT_SECONDS:
                raise TimeoutError(
                    f"the Dask cluster at {address} lost all its workers and none came back within "
                    f"{_DASK_WORKER_WAIT_SECONDS} s, with {len(pending)} task(s) pending; start workers "
                    f"(dask worker {address}) or scale the cluster, then run again"
                )
        return next(finished)

    try:
        submit()
        while pending:
            future = next_finished()
            number = pending.pop(future)
            try:
                result = future.result()  # a task's exception is raised here
            finally:  # the scheduler forgets the task, even while its traceback is kept
                future.release()
            submit()  # before yielding, so that the workers stay busy meanwhile
            if not ordered:
                yield result
                continue
            held[number] = result
            while following in held:
                result = held.pop(following)
                following += 1
                yield result
            submit()
    finally:
        if pending:
            with contextlib.suppress(Exception):  # the client may be closing already
                client.cancel(list(pending))
            pending.clear()


#: The worker set-ups this Dask worker process ran (:func:`_run_dask_task`), latest last;
#: None until its first task.
_DASK_SET_UPS: list | None = None
_DASK_SET_UP_LOCK = threading.Lock()
#: How many set-ups a Dask worker process remembers (each may hold loaded models).
_DASK_SET_UPS_KEPT = 8


def _run_dask_task(fn: Callable, setup: Callable[[], None] | None, *args):
    """``fn(*args)`` in a Dask worker, after this process's one-time set-up.

    The first task in a process makes its numerics single-threaded (as
    :func:`single_threaded_workers` does for local workers: ``OMP_NUM_THREADS=1``
    unless set, and torch's threads if it is already imported). A ``setup`` equal to
    none this process ran runs first, while the process's other threads wait.
    """
    global _DASK_SET_UPS
    with _DASK_SET_UP_LOCK:
        if _DASK_SET_UPS is None:
            _single_threaded_process()
            _DASK_SET_UPS = []
        if setup is not None and not any(setup == done for done in _DASK_SET_UPS):
            setup()
            _DASK_SET_UPS = [*_DASK_SET_UPS, setup][-_DASK_SET_UPS_KEPT:]
    return fn(*args)


def _single_threaded_process() -> None:
    """``OMP_NUM_THREADS=1`` in this process unless set (torch too, if already imported)."""
    if "OMP_NUM_THREADS" in os.environ:
        return
    os.environ["OMP_NUM_THREADS"] = "1"
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


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
        One of :data:`BACKENDS`; None keeps joblib's current choice. With
        ``"dask"``, :func:`imap` submits its tasks as Dask futures to the cluster
        (every worker takes tasks, whatever ``n_jobs``).
    scheduler : str, optional
        For ``"dask"``: the address of a running scheduler (``tcp://host:8786``).
        Without one, a local Dask cluster (one single-threaded worker process per
        CPU, on free ports of 127.0.0.1, without a dashboard) is started for the duration.

    Raises
    ------
    BackendError
        No Dask scheduler answered at ``scheduler`` within :data:`DASK_CONNECT_SECONDS`
        (nothing listens there, a server sent nothing, or one answered in another protocol).
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
                # No fixed port: the scheduler on a free one and, since nobody could find
                # it there, no dashboard; the scheduler's HTTP routes (which would take 8787
                # without an address) on a free port of the loopback interface.
                cluster = stack.enter_context(LocalCluster(
                    processes=True, threads_per_worker=1, scheduler_port=0,
                    dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False}))
                client = stack.enter_context(Client(cluster))
            else:
                client = stack.enter_context(_connect_dask(scheduler))
            del client  # the active client is what joblib's dask backend uses
        elif name == "ray":
            try:
                from ray.util.joblib import register_ray
            except ImportError:
                raise ValueError("backend 'ray' needs ray: pip install 'ray[default]'") from None
            register_ray()
        stack.enter_context(parallel_config(backend=name))
        yield


def _connect_dask(address: str):
    """A ``dask.distributed.Client`` of the scheduler at ``address``, or :class:`BackendError`.

    Within :data:`DASK_CONNECT_SECONDS` a tcp address must accept a connection (refused
    at once when nothing listens there) and answer Dask's handshake. ``Client`` alone
    would wait for that answer for ever from a server that never sends one, and reads
    whatever another server sends as Dask frames (an HTTP reply becomes a frame length of
    exabytes). The error names the address, what went wrong and what to check; a client
    left half made is closed.
    """
    from dask.distributed import Client

    deadline = time.monotonic() + DASK_CONNECT_SECONDS
    check = "is a Dask scheduler running there? start one with `dask scheduler`"
    try:
        _check_dask_scheduler(address, deadline)
    except BackendError:
        raise
    except Exception as e:
        raise BackendError(f"no Dask scheduler answered at {address}: {_dask_failure(e)}; {check}") from None
    previous = _default_dask_client()
    try:
        return Client(address, timeout=max(1.0, deadline - time.monotonic()))
    except Exception as e:
        half_made = _default_dask_client()
        if half_made is not None and half_made is not previous:
            with contextlib.suppress(Exception):
                half_made.close(timeout=1)
        raise BackendError(f"a Dask client could not connect to {address}: {_dask_failure(e)}; "
                           f"{check}") from None


def _check_dask_scheduler(address: str, deadline: float) -> None:
    """Nothing when the server at tcp ``address`` answers Dask's handshake before ``deadline``.

    One connection, as ``dask.distributed``'s ``connect`` makes it but without its
    retries (a refused one fails at once), and the handshake both ways, so that a
    scheduler logs nothing about it. Raises what failed: the connection's OSError
    (CommClosedError from ConnectionRefusedError, socket.gaierror), TimeoutError when
    nothing answered, or what reading another server's reply as Dask frames raised
    (MemoryError, ValueError, ...). Addresses of other schemes (tls, ucx, inproc) are
    left to ``Client`` and its timeout. The handshake runs in an event loop of its own,
    on a thread of its own, so that a caller whose thread runs a loop (a notebook) can call.
    """
    import asyncio

    from distributed.comm import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(address)
        if scheme != "tcp":
            return
        parse_host_port(location)
    except ValueError as e:
        raise BackendError(f"the Dask scheduler address must be such as tcp://HOST:8786; got "
                           f"{address!r} ({e})") from None

    async def handshake() -> None:
        comm = await get_backend(scheme).get_connector().connect(location)
        try:
            await comm.write(comm.handshake_info())
            await comm.read()  # the scheduler's: where another server's reply fails
        finally:
            await comm.close()

    failed: list[BaseException] = []

    def shake() -> None:
        try:
            asyncio.run(asyncio.wait_for(handshake(), max(0.1, deadline - time.monotonic())))
        except BaseException as e:  # handed to the caller's thread
            failed.append(e)

    thread = threading.Thread(target=shake, name="nnsweeper-dask-handshake", daemon=True)
    thread.start()
    thread.join(max(0.1, deadline - time.monotonic()) + 5)  # wait_for ends it first
    if thread.is_alive():
        raise TimeoutError("the Dask handshake did not end")
    if failed:
        raise failed[0]


def _dask_failure(error: Exception) -> str:
    """What ``error``, raised while connecting to a Dask scheduler, says went wrong, in words."""
    import socket

    from distributed.comm import CommClosedError

    causes = [error]
    while causes[-1].__cause__ is not None and len(causes) < 10:  # CommClosedError wraps the OSError
        causes.append(causes[-1].__cause__)
    if any(isinstance(e, ConnectionRefusedError) for e in causes):
        return "the connection was refused (nothing listens on that port)"
    unknown = next((e for e in causes if isinstance(e, socket.gaierror)), None)
    if unknown is not None:
        return f"its host name is not known ({unknown.strerror or unknown})"
    if isinstance(error, TimeoutError):
        return (f"no answer within {DASK_CONNECT_SECONDS:g} s (something accepted the connection but "
                f"sent nothing, or a firewall dropped it)")
    if isinstance(error, CommClosedError):
        return "the server there closed the connection without a Dask handshake"
    if isinstance(error, OSError):
        return f"{type(error).__name__}: {error}"
    # A reply read as Dask frames that are not: an HTTP server's bytes make a frame length
    # of exabytes (MemoryError), others a malformed message.
    return ("the server there answered, but not in Dask's protocol (an HTTP server, such as the "
            "dashboard on port 8787 instead of the scheduler on 8786?)")


def _default_dask_client():
    """The default ``dask.distributed`` Client of this process, or None."""
    from dask.distributed import default_client

    try:
        return default_client()
    except ValueError:  # none
        return None
