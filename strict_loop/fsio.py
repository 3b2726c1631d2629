"""Crash-safe file primitives: atomic replace, whole-line appends, torn-tail repair, tail reads.

Why: several processes (MCP server, scripts, hooks, supervisor) write one task.
Appends happen under the task lock as a single ``write`` of a complete line;
a process killed mid-append can at worst leave an unterminated fragment at the
end, which readers ignore and the next writer trims before appending.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


from .errors import LoopError

LOCK_TIMEOUT_S = 120.0


def dumps_line(record: Any) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def dumps_doc(record: Any) -> bytes:
    return (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode()


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Write ``data`` to a temp file beside ``path``, fsync it (unless ``sync`` is off), then rename over ``path``.

    Without ``sync`` the replace is still atomic for every reader and survives a
    crash of the process; only a power cut may bring back the previous version.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with _naming(path):
            _write_all(fd, data)
            if sync:
                os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, path)
    if sync:
        _fsync_dir(path.parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def append_line(path: Path, line: bytes, *, sync: bool = True) -> None:
    """Append one complete line; the caller holds the task lock.

    A fragment left by a killed writer (no trailing newline) is cut off first,
    so the new line never fuses with garbage. ``sync`` forces it to disk before
    returning (power-loss safe); without it the line is in the kernel, which
    is enough to survive any crash of the process.
    """
    with _naming(path):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                os.ftruncate(fd, _last_newline_end(fd, size))
            _write_all(fd, line)
            if sync:
                os.fdatasync(fd) if hasattr(os, "fdatasync") else os.fsync(fd)
        finally:
            os.close(fd)


@contextmanager
def _naming(path: Path) -> Iterator[None]:
    """Attach ``path`` to an OSError that lacks a file name (``os.write`` errors carry none), so the message names the file."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def _last_newline_end(fd: int, size: int) -> int:
    """Offset just past the last newline in the file (0 if none)."""
    pos = size
    chunk = 8192
    while pos > 0:
        start = max(0, pos - chunk)
        block = os.pread(fd, pos - start, start)
        idx = block.rfind(b"\n")
        if idx >= 0:
            return start + idx + 1
        pos = start
    return 0


def trim_torn_tail(path: Path) -> bool:
    """Cut an unterminated last line (caller holds the lock); True if there was one."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        size = os.fstat(fd).st_size
        if not size or os.pread(fd, 1, size - 1) == b"\n":
            return False
        os.ftruncate(fd, _last_newline_end(fd, size))
        os.fsync(fd)
        return True
    finally:
        os.close(fd)


def has_torn_tail(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"
    except FileNotFoundError:
        return False


def tail_lines(path: Path, count: int) -> list[str]:
    """The last ``count`` complete, non-blank lines, read backwards in small chunks.

    The cost depends on the length of those lines only, never on the file's size.
    """
    if count <= 0:
        return []
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return []
    try:
        pos = _last_newline_end(fd, os.fstat(fd).st_size)  # ignore an unterminated fragment
        buf, chunk = b"", 4096
        while True:
            start = max(0, pos - chunk)
            buf = os.pread(fd, pos - start, start) + buf
            pos, chunk = start, min(chunk * 4, 1 << 20)
            pieces = buf.split(b"\n")[:-1]
            if pos > 0:
                pieces = pieces[1:]  # the first piece may be a partial line
            out = [raw for raw in pieces if raw.strip()][-count:]
            if len(out) == count or pos == 0:
                return [raw.decode("utf-8", errors="replace") for raw in out]
    finally:
        os.close(fd)


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every complete, non-blank line."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return
    with fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.endswith(b"\n"):
                return  # torn tail
            text = raw.decode("utf-8", errors="replace").strip()
            if text:
                yield number, text


def json_records(path: Path, *, last: int | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every complete ledger line that is a JSON object; others are skipped.

    With ``last``, only the last ``last`` lines are read (numbered from the end: -1 is the last line).
    The one reader of ledgers: a damaged line costs that line, never the ones around it.
    """
    if last is None:
        lines: Iterator[tuple[int, str]] = iter_lines(path)
    else:
        tail = tail_lines(path, last)
        lines = zip(range(-len(tail), 0), tail)
    for number, line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield number, value


def last_json(path: Path) -> dict[str, Any] | None:
    """The last parseable JSON object of a ledger, or None."""
    found = None
    for _, found in json_records(path, last=3):
        pass
    return found


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
                        "lock", f"{what} stayed locked for {timeout:g}s",
                        "another process is writing it; retry (the lock is released when that process exits)",
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
