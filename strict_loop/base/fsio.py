"""Crash-safe file primitives: atomic replace, whole-line appends, torn-tail repair, the task lock (reads of ledger
lines are in ``jsonl``).

Why: several processes (MCP server, scripts, hooks, supervisor) write one task.
Appends happen under the task lock as a single ``write`` of a complete line;
a process killed mid-append can at worst leave an unterminated fragment at the
end, which readers ignore and the next writer trims before appending.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Optional

from strict_loop.base.errors import LoopError, StateDamaged

LOCK_TIMEOUT_S = 120.0
MAX_DOC_BYTES = 16 << 20
"""Largest JSON document (state.json, monitor.json) read whole; state.json is never over 64 KiB."""
_CHUNK = 1 << 16


def dumps_line(record: Any) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def dumps_doc(record: Any) -> bytes:
    return (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode()


def _fsync_dir(directory: Path) -> None:
    with suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(
    path: Path, data: bytes, *, sync: bool = True, mode: Optional[int] = None, owner: Optional[tuple[int, int]] = None
) -> None:
    """Write ``data`` to a temp file beside ``path``, fsync it (unless ``sync`` is off), then rename over ``path``.

    Without ``sync`` the replace is still atomic for every reader and survives a
    crash of the process; only a power cut may bring back the previous version.
    ``mode`` (exact, the umask aside) and ``owner`` (uid, gid; kept where the process may) are given to the
    new file before it takes ``path``'s name; by default it is 0644 less the umask, owned by this process.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644 if mode is None else 0o600)
    try:
        with _naming(path):
            made = os.fstat(fd)
            if owner is not None and owner != (made.st_uid, made.st_gid):
                with suppress(PermissionError):  # only root may give a file away; then it stays ours
                    os.fchown(fd, *owner)
            if mode is not None:
                os.fchmod(fd, mode)  # after the chown, which may clear set-id bits
            _write_all(fd, data)
            if sync:
                os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, path)  # replaces a symbolic link at ``path`` itself, never the file it points to
    if sync:
        _fsync_dir(path.parent)


def replace_keeping_mode(path: Path, data: bytes, *, new_mode: int = 0o600) -> None:
    """``atomic_write`` that gives the new file the mode and owner of the one it replaces (``new_mode`` when there
    is none).

    Why: a person's settings file may be 0600 because it holds tokens, or 0400 to keep it from being changed
    by accident; a rewrite must not widen or narrow that. A file that did not exist gets ``new_mode``.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        atomic_write(path, data, mode=new_mode)
        return
    atomic_write(path, data, mode=stat.S_IMODE(info.st_mode), owner=(info.st_uid, info.st_gid))


def confined(root: Path, path: Path, why: str) -> Path:
    """``path`` (below ``root``), refused with a LoopError naming ``why`` when a part of it below ``root`` is a
    symbolic link, or a part that must be a folder is something else, or it resolves outside ``root``."""
    here = root
    for part in path.relative_to(root).parts:
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            break
        if stat.S_ISLNK(info.st_mode):
            raise LoopError(
                str(here),
                f"is a symbolic link; {why}; nothing was changed",
                "replace the link with a real folder or file (or remove it) and try again",
            )
        if here != path and not stat.S_ISDIR(info.st_mode):
            raise LoopError(str(here), "is not a folder; nothing was changed", "move it aside")
    if not path.resolve().is_relative_to(root.resolve()):
        raise LoopError(str(path), f"resolves outside {root}; {why}; nothing was changed", "remove what leads out")
    return path


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def open_own(path: Path, flags: int = os.O_RDONLY) -> int:
    """Open one of the loop's own files without following a symbolic link; regular files only.

    Why: a cloned repository may carry a task folder whose ledger links to a file elsewhere (an append
    would trim that file's last line) or to a FIFO or device (a read would hang or never end).
    FileNotFoundError passes through for the caller to decide.
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _not_own(path, "is a symbolic link") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _not_own(path, "is not a regular file")
    return fd


def _not_own(path: Path, what: str) -> LoopError:
    return StateDamaged(
        str(path),
        f"cannot be read or written: it {what}; the loop uses its own regular files, never a link, FIFO or device",
        "put the real file in its place (for state.json: run `strict-loop rebuild_state` for the task)",
    )


class Unreadable(Exception):
    """Why :func:`read_regular` did not read a file: ``kind`` is "link", "special" (see ``mode``) or "big" (see
    ``size``)."""

    def __init__(self, kind: str, *, mode: int = 0, size: int = 0) -> None:
        super().__init__(kind)
        self.kind, self.mode, self.size = kind, mode, size


def file_kind(mode: int) -> str:
    """'FIFO', 'directory', 'character device', ... for a file that is not a regular one."""
    for test, name in (
        (stat.S_ISDIR, "directory"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return "special file"


def read_regular(path: Path | str, cap: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``cap``; :class:`Unreadable` otherwise (OSErrors pass
    through).

    Why one reader: files named by a repository (the loop's own, a stop check's) may be a link, a FIFO or a
    device. lstat first (a FIFO or device is never opened), a non-blocking no-follow open, then fstat again.
    """
    fd, size = _open_regular(path)
    try:
        if size > cap:
            raise Unreadable("big", size=size)
        data = os.pread(fd, cap + 1, 0)
        if len(data) > cap:  # it grew after the fstat
            raise Unreadable("big", size=len(data))
        return data
    finally:
        os.close(fd)


def read_tail(path: Path | str, cap: int) -> tuple[bytes, bool]:
    """At most the last ``cap`` bytes of the regular file at ``path``, and whether they begin at its first byte;
    :class:`Unreadable` as :func:`read_regular` (a link, a FIFO or a device is never read).

    Why: a file another program appends to (a harness's transcript) can be huge; its end is all that is wanted, and
    one ``pread`` of it costs the same whatever the size. Bytes appended meanwhile are not waited for.
    """
    fd, size = _open_regular(path)
    try:
        start = max(size - cap, 0)
        return os.pread(fd, cap, start), start == 0
    finally:
        os.close(fd)


def _open_regular(path: Path | str) -> tuple[int, int]:
    """A read-only descriptor of the regular file at ``path`` and its size; never opens a link, a FIFO or a device."""
    mode = os.lstat(path).st_mode
    if not stat.S_ISREG(mode):
        raise Unreadable("link" if stat.S_ISLNK(mode) else "special", mode=mode)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable("link", mode=stat.S_IFLNK) from None
        raise
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise Unreadable("special", mode=info.st_mode)
    return fd, info.st_size


def read_own(path: Path, cap: int = MAX_DOC_BYTES) -> bytes:
    """The bytes of one of the loop's own documents (see ``open_own``), refusing one over ``cap`` bytes."""
    try:
        return read_regular(path, cap)
    except Unreadable as exc:
        if exc.kind == "big":
            raise _too_big(path, exc.size, cap) from None
        raise _not_own(path, "is a symbolic link" if exc.kind == "link" else "is not a regular file") from None


def _too_big(path: Path, size: int, cap: int) -> LoopError:
    return StateDamaged(
        str(path),
        f"is {size} bytes; no file the loop writes is over {cap}",
        "run `strict-loop rebuild_state` for the task to rebuild it from the ledgers",
    )


def append_line(path: Path, line: bytes, *, sync: bool = True) -> None:
    """Append one complete line; the caller holds the task lock.

    A fragment left by a killed writer (no trailing newline) is cut off first,
    so the new line never fuses with garbage; a write that fails midway (disk
    full) is cut back too, so a failed append leaves the ledger as it was.
    ``sync`` forces the line to disk before returning (power-loss safe); without
    it the line is in the kernel, which is enough to survive any crash of the process.
    """
    with _naming(path):
        fd = open_own(path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        try:
            size = os.fstat(fd).st_size
            if _torn(fd):
                size = _last_newline_end(fd, size)
                os.ftruncate(fd, size)
            try:
                _write_all(fd, line)
            except OSError:
                with suppress(OSError):
                    os.ftruncate(fd, size)
                raise
            if sync:
                os.fdatasync(fd) if hasattr(os, "fdatasync") else os.fsync(fd)
        finally:
            os.close(fd)


@contextmanager
def _naming(path: Path) -> Iterator[None]:
    """Attach ``path`` to an OSError that lacks a file name (``os.write`` errors carry none), so the message names the
    file."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def _last_newline_end(fd: int, size: int) -> int:
    """Offset just past the last newline in the file (0 if none)."""
    pos = size
    while pos > 0:
        start = max(0, pos - _CHUNK)
        block = os.pread(fd, pos - start, start)
        idx = block.rfind(b"\n")
        if idx >= 0:
            return start + idx + 1
        pos = start
    return 0


def trim_torn_tail(path: Path) -> bool:
    """Cut an unterminated last line (caller holds the lock); True if there was one."""
    try:
        fd = open_own(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        if not _torn(fd):
            return False
        os.ftruncate(fd, _last_newline_end(fd, os.fstat(fd).st_size))
        os.fsync(fd)
        return True
    finally:
        os.close(fd)


def has_torn_tail(path: Path) -> bool:
    try:
        fd = open_own(path)
    except FileNotFoundError:
        return False
    try:
        return _torn(fd)
    finally:
        os.close(fd)


def _torn(fd: int) -> bool:
    """Does the file end in an unterminated line (a writer died mid-append)?"""
    size = os.fstat(fd).st_size
    return bool(size) and os.pread(fd, 1, size - 1) != b"\n"


@contextmanager
def file_lock(path: Path, what: str, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Exclusive cross-process lock on ``path`` (``flock``); a clear error if it stays busy.

    ``flock`` locks belong to an open file description, so each holder opens its
    own descriptor: threads of one process exclude each other as processes do,
    and the kernel drops the lock when a holder dies, even by SIGKILL.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LoopError(
                        "lock",
                        f"{what} stayed locked for {timeout:g}s",
                        "another process is writing it; retry (the lock is released when that process exits)",
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
