"""Atomic file writes: write to a temporary name in the target folder, then rename.

A reader never sees a half-written file, and an interrupted write leaves the old
file (if any) in place. ``os.replace`` is atomic when source and target are on the
same file system, hence the temporary file in the target's own folder. The file's
bytes are flushed to the disk (``fsync``) before the rename and the folder after it,
so that a power loss or a lost machine cannot leave a renamed file that is empty or
cut short (a rename can reach the disk before the data it names).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "write_text_atomic", "write_bytes_atomic", "file_sha256", "exclusive_lock",
           "fsync_folder", "leftover_of", "leftovers", "reader_error", "write_error", "output_target",
           "check_not_input", "read_regular_file", "SpecialFileError"]


class SpecialFileError(ValueError):
    """A path that is no regular file where one is read or written: a folder, a device, a FIFO, a
    socket (an atomic write would replace it with an ordinary file; a read could block or not end)."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def output_target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or the file a symbolic link there
    points to (the link stays a link). Checks only, writes nothing.

    Raises
    ------
    SpecialFileError
        ``path`` (or what it links to) exists and is no regular file: a folder, a device, a FIFO
        or a socket, which an atomic write would replace with an ordinary file.
    """
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    try:
        mode = os.stat(target).st_mode
    except OSError:  # nothing there yet (or unreadable: the write itself says so)
        return target
    if not stat.S_ISREG(mode):
        raise SpecialFileError(f"{os.fspath(path)!r} is {_kind(mode)}, not a file to write: "
                               "not replaced (give a file name)")
    return target


def check_not_input(output: str | os.PathLike | None, inputs, option: str) -> None:
    """Refuse an output that is one of the command's inputs (the same file, by any name)."""
    if output is None:
        return
    for source in inputs:
        try:
            same = os.path.samefile(output, source)
        except OSError:  # one of them does not exist
            same = False
        if same:
            raise ValueError(f"{option} {os.fspath(output)!r} is the input {os.fspath(source)!r}: "
                             "writing it would replace what is read; give another file")


def read_regular_file(path: str | os.PathLike, limit: int, what: str,
                      error: type[Exception] = ValueError) -> bytes:
    """The bytes of the regular file at ``path``, refused beyond ``limit`` bytes.

    Only a regular file is opened: a FIFO would block the reader and a device such as
    ``/dev/zero`` would never end, so both are refused with a folder, before any read; a
    file is read no further than ``limit + 1`` bytes.

    Raises
    ------
    error
        Naming ``what`` (``"saved game"``) and the path: no such file, not a regular file,
        unreadable, or longer than ``limit`` bytes.
    """
    name = os.fspath(path)
    try:
        mode = os.stat(name).st_mode
        if not stat.S_ISREG(mode):
            raise error(f"{name!r} is {_kind(mode)}, not a {what}")
        with open(name, "rb") as f:
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise error(f"no {what} at {name!r}") from None
    except OSError as exc:
        raise error(f"cannot read {what} {name!r}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{name!r} holds more than {limit:,} bytes, more than any {what}; not read further")
    return data


def _default_mode() -> int:
    # mkstemp creates files readable by the owner only; finished files should get the
    # usual permissions (0o666 less the umask), as open() would give them.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


_FILE_MODE = _default_mode()


#: The temporary name :func:`atomic_path` gives a write of NAME: "." + NAME + "." + the random
#: letters, digits and "_" of ``tempfile.mkstemp`` + NAME's suffix.
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}(?P<suffix>\.[^.]*)?")


def leftover_of(name: str) -> str | None:
    """The file whose interrupted :func:`atomic_path` write left a temporary file named ``name``, or None.

    ``leftover_of(".resume.pt.k2j4h_x9.pt") == "resume.pt"``. A killed process leaves
    such files; they are never a finished file and may be removed.
    """
    m = _TEMPORARY.fullmatch(name)
    if m is None or os.path.splitext(m["name"])[1] != (m["suffix"] or ""):
        return None
    return m["name"]


def leftovers(folder: str | os.PathLike) -> list[Path]:
    """The temporary files that interrupted :func:`atomic_path` writes left in ``folder``, sorted
    (:func:`leftover_of` names what each was to become); none where there is no folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if leftover_of(p.name) is not None and p.is_file())


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_folder(path: str | os.PathLike) -> None:
    """Flush a folder's entries (a rename, a new file) to the disk; nothing where folders cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # Windows opens no folder; the rename is durable there on its own
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse to sync a folder; the file itself was synced
        pass
    finally:
        os.close(fd)


def _make_folders(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each new entry flushed to the disk in its parent."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for new in reversed(missing):
        new.mkdir(exist_ok=True)
        fsync_folder(new.parent)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; move it onto ``path`` on success.

    The temporary name keeps ``path``'s suffix, so writers that infer the format
    from the extension (``numpy.savez``, ``Figure.savefig``) behave as for ``path``.
    Parent folders are created. The file is flushed to the disk before it is renamed
    and the folder after, so the write survives a power loss whole or not at all. On an
    exception the temporary file is removed and ``path`` is left untouched.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.

    Yields
    ------
    pathlib.Path
        Where to write the content.

    Raises
    ------
    OSError
        The file could not be written (a full disk, a file-size limit, a read-only
        folder): of the kind of the error met, its message naming ``path``.
    SpecialFileError
        ``path`` is a folder, a device, a FIFO or a socket (:func:`output_target`): never
        replaced. A symbolic link is written through: its target gets the new content.
    """
    target = output_target(path)
    _make_folders(target.parent)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=target.suffix)
    except OSError as exc:
        raise write_error(exc, repr(os.fspath(target))) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, _FILE_MODE)
        _fsync_file(tmp_path)
        os.replace(tmp_path, target)
        fsync_folder(target.parent)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        # A write that failed (a full disk, a file-size limit, a folder made read-only) names the file
        # it was for: the error of a write to an open file names none, and the temporary file is gone.
        if isinstance(exc, OSError) and exc.filename in (None, os.fspath(tmp_path)):
            raise write_error(exc, repr(os.fspath(target))) from None
        raise


def write_error(exc: OSError, what: str) -> OSError:
    """``exc``, an error while writing ``what`` (``"'runs/x/last.pt'"``, ``"the logs in ..."``), as an
    OSError of the same kind (errno) whose message names it: ``cannot write WHAT: STRERROR``."""
    return OSError(exc.errno, f"cannot write {what}: {exc.strerror or exc}")


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns ``path`` as a Path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_bytes_atomic(path: str | os.PathLike, data) -> Path:
    """Write ``data`` (bytes or a buffer) to ``path`` atomically; returns ``path`` as a Path."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def reader_error(exc: BaseException) -> str:
    """What a reader's exception says of a damaged file, for a message: its type and first sentence.

    Readers of damaged bytes (numpy, zipfile, zlib, torch) raise many kinds of exception, some
    with advice that does not fit a damaged file (numpy's "If you trust the file you can load it
    unsafely" for a header changed into an object array's); the first sentence, cut to 160
    characters, says what went wrong.
    """
    said = " ".join(str(exc).split())
    first = said.split(". ", 1)[0].rstrip(".")
    return f"{type(exc).__name__}: {first[:160]}" if first else type(exc).__name__


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes, as hex (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@contextlib.contextmanager
def exclusive_lock(path: str | os.PathLike, *, what: str, error: type[Exception],
                   then: str = "running the same command again resumes it") -> Iterator[None]:
    """Hold the exclusive lock file ``path`` (its folder created if new), or refuse at once.

    The lock is an ``flock`` (through ``filelock``), so the operating system drops it
    when its process dies, however it dies; a killed process leaves the (empty) file,
    which locks nothing. On release the file is removed while it is still locked, so a
    finished run leaves none. That is safe because a second process never waits for the
    lock: one that opened the file just before its removal and locks it afterwards finds
    it unlinked (``filelock`` checks the link count) and is refused, while a third that
    creates the file anew holds the only lock.

    Parameters
    ----------
    path : str or os.PathLike
        The lock file.
    what : str
        What the lock guards, for the message (``"dataset 'data/x'"``).
    error : type of Exception
        Raised, naming ``what``, when another process holds the lock.
    then : str
        How the work goes on once a killed process released the lock, for the message.
    """
    from filelock import FileLock, Timeout, UnixFileLock

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(os.fspath(path), timeout=0)  # one attempt: a second writer is refused, not queued
    try:
        lock.acquire()
    except Timeout:
        raise error(
            f"another process is writing {what}; wait for it to end (a killed run releases it, and {then})"
        ) from None
    try:
        yield
    finally:
        if isinstance(lock, UnixFileLock):  # (the fallback without flock, and Windows, remove it themselves)
            with contextlib.suppress(OSError):
                path.unlink()
        lock.release()
