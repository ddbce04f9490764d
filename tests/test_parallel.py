"""Parallel work: the set-up of worker processes."""

import os

import joblib

from nnsweeper.parallel import imap

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
