"""Resident memory of a process and its descendants, for the benchmarks that report a peak (Linux /proc)."""

from __future__ import annotations

import os
import threading

__all__ = ["PeakRSS", "tree_pids", "tree_rss"]


def tree_pids(root: int) -> list[int]:
    """``root`` and every process descended from it that is alive now."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        out.append(pid)
    return out


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants."""
    total = 0
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


class PeakRSS:
    """The largest :func:`tree_rss` of ``root`` (default: this process) while inside, sampled every 50 ms."""

    def __init__(self, root: int | None = None):
        self.root = os.getpid() if root is None else root
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(self.root))
            self._stop.wait(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, tree_rss(self.root))
