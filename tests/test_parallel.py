"""Parallel work: the set-up of worker processes, their end, and Dask futures."""

import contextlib
import os
import signal
import subprocess
import sys
import time

import joblib
import pytest

from nnsweeper import parallel
from nnsweeper.parallel import backend, imap, terminate_on_sigterm

#: Set in a process by WorkerSetUp.
_SET_UP_IN = None


class WorkerSetUp:
    """Marks the process it runs in; equal to every other one."""

    def __call__(self):
        global _SET_UP_IN
        _SET_UP_IN = os.getpid()

    def __eq__(self, other):
        return isinstance(other, WorkerSetUp)

    def __hash__(self):
        return 0


def where(k):
    """The task, the process that ran it, and whether that process was set up before."""
    return k, os.getpid(), _SET_UP_IN == os.getpid()


def test_loky_workers_are_set_up_before_their_first_task():
    out = list(imap(where, [(k,) for k in range(8)], 2, worker_setup=WorkerSetUp()))
    assert [k for k, _, _ in out] == list(range(8))
    assert all(ready for _, _, ready in out)
    assert {pid for _, pid, _ in out} - {os.getpid()}  # played in workers


def test_worker_set_up_is_skipped_where_there_are_no_new_workers():
    # In this process (n_jobs=1) and on threads, the task must set itself up.
    assert [ready for _, _, ready in imap(where, [(0,), (1,)], 1, worker_setup=WorkerSetUp())] == [False] * 2
    with joblib.parallel_config(backend="threading"):
        out = list(imap(where, [(k,) for k in range(4)], 2, worker_setup=WorkerSetUp()))
    assert [ready for _, _, ready in out] == [False] * 4


# ---------------------------------------------------------------- stopping
def square(k, seconds=0.0):
    """``(k, k * k)``, after sleeping ``seconds``."""
    time.sleep(seconds)
    return k, k * k


def spin(k, seconds):
    """``k`` after ``seconds`` of busy CPU (a task that never waits)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return k


def _loky_workers(process) -> list:
    """The loky workers among the children of ``process`` (psutil), not its resource trackers."""
    return [c for c in process.children() if "resource_tracker" not in " ".join(c.cmdline())]


#: A command that runs ``imap`` on 2 loky workers over tasks of 2 minutes of CPU each;
#: each task touches a file in the folder argv[1] as it starts. argv[2] == "sigterm":
#: under terminate_on_sigterm.
_ORPHAN_SCRIPT = """
import contextlib, os, sys, time
from nnsweeper.parallel import imap, terminate_on_sigterm

def spin(k):
    open(os.path.join(sys.argv[1], f"started-{k}"), "w").close()
    end = time.monotonic() + 120
    while time.monotonic() < end:
        pass
    return k

if __name__ == "__main__":
    with terminate_on_sigterm() if sys.argv[2] == "sigterm" else contextlib.nullcontext():
        for _ in imap(spin, [(k,) for k in range(4)], 2):
            pass
"""


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_workers_end_with_their_parent_in_the_middle_of_a_task(tmp_path, how):
    # SIGKILL leaves the workers orphans: their watchdog must end them. SIGTERM, under
    # terminate_on_sigterm, interrupts the run, which kills them on its way out.
    psutil = pytest.importorskip("psutil")
    started = tmp_path / "started"
    started.mkdir()
    run = subprocess.Popen([sys.executable, "-c", _ORPHAN_SCRIPT, str(started), how.lower()],
                           stderr=subprocess.PIPE, text=True)
    children = []
    try:
        deadline = time.monotonic() + 30
        while len(list(started.iterdir())) < 2:  # both workers inside a task
            assert run.poll() is None, run.stderr.read()
            assert time.monotonic() < deadline, "the workers did not start within 30 s"
            time.sleep(0.05)
        children += psutil.Process(run.pid).children(recursive=True)
        assert len(_loky_workers(psutil.Process(run.pid))) == 2
        run.send_signal(getattr(signal, how))
        _, stderr = run.communicate(timeout=10)
        _, alive = psutil.wait_procs(children, timeout=10)
        assert alive == [], f"{len(alive)} of {len(children)} children still run 10 s after {how}"
        if how == "SIGTERM":
            assert "KeyboardInterrupt: terminated by signal SIGTERM" in stderr
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for child in children:  # no leftovers, should the test fail
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()


#: A command that runs ``imap`` on 2 loky workers whose start takes argv[1] seconds (their
#: set-up is slow to unpickle, as a worker's imports are on a busy machine), so that a kill
#: of the command soon after its start finds them still starting.
_SLOW_START_SCRIPT = """
import sys, time
from nnsweeper.parallel import imap

class SlowToUnpickle:
    def __init__(self, seconds):
        self.seconds = seconds
    def __setstate__(self, state):
        time.sleep(state["seconds"])
        self.__dict__.update(state)
    def __call__(self):
        pass
    def __eq__(self, other):
        return isinstance(other, SlowToUnpickle)
    def __hash__(self):
        return 0

def wait(k):
    time.sleep(60)
    return k

if __name__ == "__main__":
    for _ in imap(wait, [(k,) for k in range(4)], 2, worker_setup=SlowToUnpickle(float(sys.argv[1]))):
        pass
"""


def _in_session(sid, psutil) -> list:
    """The live processes of session ``sid`` (psutil), zombies excluded."""
    found = []
    for p in psutil.process_iter():
        try:
            if os.getsid(p.pid) == sid and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (OSError, psutil.Error):  # gone meanwhile
            pass
    return found


def test_workers_killed_with_their_parent_while_starting_end_with_the_resource_trackers(tmp_path):
    # The command is killed 1 s after its start, while its workers still start (their set-up
    # takes 3 s to unpickle): they are orphans before they run a line of nnsweeper, and must
    # still find out, from the parent's id that the parent gave them, and exit. Then loky's
    # and multiprocessing's resource trackers, whose pipe the workers held, exit too.
    # Every process of the run is in the command's session (loky does not start new ones).
    psutil = pytest.importorskip("psutil")
    stderr = tmp_path / "stderr"
    with open(stderr, "wb") as err:  # a file: orphans holding a pipe would keep it open
        run = subprocess.Popen([sys.executable, "-c", _SLOW_START_SCRIPT, "3"], start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=err)
    try:
        started = time.monotonic()
        while len(_loky_workers(psutil.Process(run.pid))) < 2:  # 1 s, or once the workers exist
            assert run.poll() is None, stderr.read_text(errors="replace")
            assert time.monotonic() < started + 30, "the workers were not started within 30 s"
            time.sleep(0.05)
        time.sleep(max(0.0, started + 1.0 - time.monotonic()))
        run.kill()
        run.wait(timeout=10)
        deadline = time.monotonic() + 10
        while alive := _in_session(run.pid, psutil):
            assert time.monotonic() < deadline, (
                f"{len(alive)} processes of the run alive 10 s after SIGKILL: "
                + "; ".join(f"{p.pid} {' '.join(p.cmdline())[-70:]}" for p in alive))
            time.sleep(0.1)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for p in _in_session(run.pid, psutil):  # no leftovers, should the test fail
            with contextlib.suppress(psutil.Error):
                p.kill()


def test_the_loky_initializer_names_the_parent_that_made_it():
    # Equal set-ups made in the same process: equal initializers (loky keeps its workers).
    first, second = parallel._LokyWorkerStart(WorkerSetUp()), parallel._LokyWorkerStart(WorkerSetUp())
    assert first.parent == second.parent == os.getpid()
    assert first == second and hash(first) == hash(second)
    assert parallel._LokyWorkerStart(None) == parallel._LokyWorkerStart(None) != first
    other = parallel._LokyWorkerStart(WorkerSetUp())
    other.parent += 1  # as if made in another process
    assert other != first


@pytest.mark.parametrize("stop", ["close", "task error"])
def test_workers_are_killed_when_the_consumer_stops(stop):
    psutil = pytest.importorskip("psutil")
    me = psutil.Process()
    tasks = [(0, 0.2), *[(k, 60) for k in range(1, 6)]]
    if stop == "close":
        results = imap(spin, tasks, 2)
        assert next(results) == 0
        workers = _loky_workers(me)
        results.close()
    else:
        with pytest.raises(ZeroDivisionError):
            for _ in imap(divide_after, [(1, 0.0, 60), (1, 0.0, 60), (1, 1.0, 0)], 2):
                pass
        workers = _loky_workers(me)
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert alive == []
    assert _loky_workers(me) == []


def divide_after(a, seconds, b):
    """``a / b`` after ``seconds`` of busy CPU."""
    spin(0, seconds)
    return a / b


def test_loky_workers_are_reused_from_one_call_to_the_next():
    # The pool's processes, not only those that got one of the first call's quick tasks (one
    # worker may run them all): the second call runs in them and starts no new one.
    psutil = pytest.importorskip("psutil")
    me = psutil.Process()
    first = {pid for _, pid, _ in imap(where, [(k,) for k in range(8)], 2, worker_setup=WorkerSetUp())}
    pool = {p.pid for p in _loky_workers(me)}
    second = {pid for _, pid, _ in imap(where, [(k,) for k in range(8)], 2, worker_setup=WorkerSetUp())}
    assert first <= pool and second <= pool  # the same processes, set up once
    assert {p.pid for p in _loky_workers(me)} == pool
    assert os.getpid() not in first


def test_terminate_on_sigterm_raises_keyboard_interrupt_then_restores_the_handler():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt, match="terminated by signal SIGTERM"):
        with terminate_on_sigterm():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # interrupted at once
    assert signal.getsignal(signal.SIGTERM) is before


# ---------------------------------------------------------------- Dask
def environment(k):
    """The task, the worker's OMP_NUM_THREADS, and whether WorkerSetUp ran in this process first."""
    return k, os.environ.get("OMP_NUM_THREADS"), _SET_UP_IN == os.getpid()


def _scheduler_tasks(dask_scheduler) -> int:
    """How many tasks the scheduler holds (run there by ``client.run_on_scheduler``)."""
    return len(dask_scheduler.tasks)


@pytest.mark.cluster
def test_dask_cluster_gives_the_local_results(dask_scheduler_address):
    from dask.distributed import get_client

    address, workers = dask_scheduler_address
    tasks = [(k, 0.01 * (k % 3)) for k in range(20)]
    local = list(imap(square, tasks, 1))
    with backend("dask", address):
        ordered = list(imap(square, tasks, None))
        unordered = list(imap(square, tasks, -1, ordered=False))
        ready = list(imap(where, [(k,) for k in range(8)], None, worker_setup=WorkerSetUp()))
        numerics = list(imap(environment, [(k,) for k in range(4)], None))
        with pytest.raises(ZeroDivisionError):
            list(imap(divide_after, [(1, 0.0, 1), (1, 0.0, 0)], None))
        # Tasks are read lazily (2 threads: 4 in flight, and 1 more once one is done),
        # and closing early cancels the rest; the scheduler forgets every task (the
        # failed one too).
        pulled = []
        results = imap(square, ((pulled.append(k) or k, 0.5) for k in range(100)), None, ordered=False)
        assert next(results) in {(0, 0), (1, 1)}
        assert len(pulled) == 2 * parallel.DASK_TASKS_PER_THREAD + 1
        results.close()
        client = get_client()
        deadline = time.monotonic() + 10
        while client.run_on_scheduler(_scheduler_tasks):
            assert time.monotonic() < deadline, "the abandoned tasks are still on the scheduler"
            time.sleep(0.05)
    assert ordered == local
    assert sorted(unordered) == local
    assert [k for k, _, _ in ready] == list(range(8))
    assert all(up for _, _, up in ready)  # set up in each worker before its first task
    assert {pid for _, pid, _ in ready} <= {w.pid for w in workers}
    assert [omp for _, omp, _ in numerics] == ["1"] * 4  # single-threaded numerics


@pytest.mark.cluster
def test_a_lost_dask_worker_costs_only_its_tasks(dask_scheduler_address):
    from dask.distributed import get_client

    address, workers = dask_scheduler_address
    tasks = [(k, 0.3) for k in range(10)]
    local = [square(k) for k, _ in tasks]
    with backend("dask", address):
        client = get_client()
        results = imap(square, tasks, None, ordered=False)
        got = [next(results)]
        victim = workers[0]
        on_victim = [a for a, w in client.scheduler_info()["workers"].items() if w["name"] == "worker-0"]
        assert client.processing(workers=on_victim)[on_victim[0]]  # it holds a task
        victim.kill()  # SIGKILL
        victim.wait(timeout=10)
        got += list(results)
    assert sorted(got) == local  # every task exactly once, as played here


def test_dask_without_workers_says_so(monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    monkeypatch.setattr(parallel, "_DASK_WORKER_WAIT_SECONDS", 0.5)
    # Its HTTP routes on a free port: without a dashboard they still go to 8787 if they can.
    with (distributed.LocalCluster(n_workers=0, processes=False, dashboard_address="127.0.0.1:0") as cluster,
          distributed.Client(cluster), joblib.parallel_config(backend="dask")):
        with pytest.raises(TimeoutError, match=r"has no worker after 0.5 s; start workers \(dask worker \w+://"):
            next(imap(square, [(1,)], None))


def _no_port_cluster(distributed, workers: int):
    """A LocalCluster of ``workers`` single-threaded in-process workers, on no fixed port.

    The scheduler on a free port and its HTTP routes too: without an address they take 8787
    if they can, and fail the test (a warning, an error here) when another cluster holds it.
    """
    return distributed.LocalCluster(n_workers=workers, processes=False, threads_per_worker=1,
                                    scheduler_port=0, dashboard_address="127.0.0.1:0")


@pytest.mark.parametrize("back", [False, True], ids=["none come back", "one comes back"])
def test_dask_losing_every_worker_says_so_and_waits_for_one(monkeypatch, back):
    # Every worker lost while tasks are pending: a warning naming the scheduler says that the
    # run waits for workers; one that comes back within _DASK_WORKER_WAIT_SECONDS takes the
    # tasks, and without one the run ends with a TimeoutError that says what to do.
    import threading

    distributed = pytest.importorskip("dask.distributed")
    monkeypatch.setattr(parallel, "_DASK_LOST_CHECK_SECONDS", 0.1)
    monkeypatch.setattr(parallel, "_DASK_WORKER_WAIT_SECONDS", 30 if back else 1)
    tasks = [(k, 0.1) for k in range(6)]
    with (_no_port_cluster(distributed, 1) as cluster, distributed.Client(cluster) as client,
          joblib.parallel_config(backend="dask")):
        address = client.scheduler.address
        results = imap(square, tasks, None, ordered=False)
        got = [next(results)]
        cluster.scale(0)
        deadline = time.monotonic() + 10
        while client.nthreads():
            assert time.monotonic() < deadline, "the worker was not closed within 10 s"
            time.sleep(0.02)
        restart = threading.Timer(1.0, cluster.scale, (1,)) if back else None  # a worker again in 1 s
        if restart is not None:
            restart.start()
        try:
            with pytest.warns(RuntimeWarning, match=rf"the Dask cluster at {address} has lost all its "
                              rf"workers with \d+ task\(s\) pending; waiting up to {30 if back else 1} s "
                              rf"for workers to come back \(dask worker {address}\)"):
                if back:
                    got += list(results)
                else:
                    with pytest.raises(TimeoutError, match=rf"the Dask cluster at {address} lost all its "
                                       r"workers and none came back within 1 s, with \d+ task\(s\) pending; "
                                       rf"start workers \(dask worker {address}\) or scale the cluster"):
                        next(results)
        finally:
            if restart is not None:
                restart.cancel()
                restart.join()
            results.close()
    if back:
        assert sorted(got) == [square(k) for k, _ in tasks]


@contextlib.contextmanager
def _not_a_dask_scheduler(kind: str):
    """The address of a server on 127.0.0.1 that is no Dask scheduler, for the duration.

    ``http``: every connection gets an HTTP 400 reply and is closed; ``silent``: accepted
    and never answered; ``refused``: a bound port that nothing listens on.
    """
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.settimeout(0.05)  # accept() wakes up to see the end
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    held, end = [], threading.Event()

    def serve():
        while not end.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            held.append(conn)
            if kind == "http":
                with contextlib.suppress(OSError):
                    conn.settimeout(5)
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
                                 b"Content-Length: 11\r\nConnection: close\r\n\r\nBad Request")
                    conn.shutdown(socket.SHUT_RDWR)

    thread = None
    if kind != "refused":
        server.listen(16)
        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
    try:
        yield address
    finally:
        end.set()
        if thread is not None:
            thread.join()
        server.close()
        for conn in held:
            conn.close()


_NOT_DASK = {
    "http": "the server there answered, but not in Dask's protocol (an HTTP server, such as the dashboard",
    "silent": "no answer within 1 s (something accepted the connection but sent nothing",
    "refused": "the connection was refused (nothing listens on that port)",
}


@pytest.mark.parametrize("kind", list(_NOT_DASK))
def test_dask_backend_refuses_an_address_where_no_scheduler_answers(kind, monkeypatch):
    # Client alone reads an HTTP reply as a frame length of exabytes (MemoryError) and waits
    # for ever for a handshake from a server that sends nothing.
    import threading

    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(parallel, "DASK_CONNECT_SECONDS", 1)
    raised = []

    def connect(address):
        try:
            with backend("dask", address):
                pass
        except BaseException as e:
            raised.append(e)

    with _not_a_dask_scheduler(kind) as address:
        before = {t.ident for t in threading.enumerate()}
        attempt = threading.Thread(target=connect, args=(address,), daemon=True)
        attempt.start()
        attempt.join(30)
        assert not attempt.is_alive(), f"backend('dask', {address!r}) still waits after 30 s"
    assert len(raised) == 1 and isinstance(raised[0], parallel.BackendError), raised
    assert isinstance(raised[0], ValueError)  # the command line's one line, exit code 2
    message = str(raised[0])
    assert message.startswith(f"no Dask scheduler answered at {address}: {_NOT_DASK[kind]}"), message
    assert message.endswith("; is a Dask scheduler running there? start one with `dask scheduler`")
    _nothing_left_behind(before)


def _nothing_left_behind(before: set) -> None:
    """No default Dask client, and no thread beyond those of ``before`` (a client's event loop, the
    handshake's), within 5 s."""
    import threading

    from dask.distributed import default_client

    with pytest.raises(ValueError, match="No clients found"):
        default_client()
    deadline = time.monotonic() + 5
    while {t.ident for t in threading.enumerate() if t.is_alive()} - before:
        assert time.monotonic() < deadline, [t.name for t in threading.enumerate() if t.ident not in before]
        time.sleep(0.05)


#: The command line with DASK_CONNECT_SECONDS at 1 s.
_CLI_SCRIPT = """
import sys
from nnsweeper import parallel
from nnsweeper.cli import main
parallel.DASK_CONNECT_SECONDS = 1
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("kind, command", [
    ("http", ["eval", "--solvers", "single_point", "--board", "5x5:3", "--trials", "1"]),
    ("silent", ["compare", "--solvers", "single_point", "--board", "5x5:3", "--trials", "1"]),
    ("refused", ["generate", "data", "5x5:3:2"]),
])
def test_a_command_on_no_dask_scheduler_says_so_in_one_line(kind, command, tmp_path):
    # The whole process: one line on stderr, exit code 2, and nothing that keeps it alive.
    pytest.importorskip("dask.distributed")
    with _not_a_dask_scheduler(kind) as address:
        run = subprocess.run([sys.executable, "-c", _CLI_SCRIPT, *command, "--backend", "dask",
                              "--scheduler", address, "--quiet"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout) == (2, ""), run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(f"nnsweeper: error: no Dask scheduler answered at {address}: "
                               f"{_NOT_DASK[kind]}"), lines[0]
    assert list(tmp_path.iterdir()) == []  # refused before anything is written


def test_a_client_that_fails_after_the_handshake_is_closed(monkeypatch):
    # Past the check (a scheduler that answered, then failed the client; an address of
    # another scheme): one error too, and the half-made client, set as the default one
    # before it failed, is closed.
    import threading

    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(parallel, "DASK_CONNECT_SECONDS", 1)
    monkeypatch.setattr(parallel, "_check_dask_scheduler", lambda address, deadline: None)
    before = {t.ident for t in threading.enumerate()}
    with _not_a_dask_scheduler("http") as address:
        with pytest.raises(parallel.BackendError, match=rf"^a Dask client could not connect to {address}: "
                           r"the server there answered, but not in Dask's protocol .*; is a Dask scheduler "
                           r"running there\?"):
            with backend("dask", address):
                pass
    _nothing_left_behind(before)
