"""The telemetry spool: an append-only, size-bounded file of ledger events per workspace, written with the standard
library in microseconds and drained in batches by whichever long-lived process exports (``export``).

Why a file, not a socket or a thread: the hook runs once per tool call and must not wait for a collector, nor even
for a process that talks to one. A writer appends one line under ``flock`` (so concurrent writers never interleave
a line and a drain never loses one); an exporter renames the spool aside, takes the same lock (waiting out a writer
that opened the old file), reads it and removes it. When nobody drains, the spool stops growing at
``MAX_SPOOL_BYTES`` and later events are dropped (counted in ``dropped``): a dead exporter costs the agent nothing.

The folder sits in the workspace, where the agent writes too (issue 25): it is opened without following a link, and
every file in it like ``fsio.open_own`` opens the loop's own (no link, FIFO or device is ever opened; non-blocking),
so nothing planted there can hang an event's write, a hook or an exporter, nor send the events elsewhere. A lock
held by someone else is waited for ``LOCK_WAIT_S`` at most; a drain reads a bounded amount, a bad line costs itself.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import time
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any, Optional

SPOOL_DIR = "telemetry"
SPOOL_FILE = "spool.jsonl"
DRAINING = ".draining-"
DROPPED_FILE = "dropped"
EXPORTER_LOCK = "exporter.lock"
"""Held (``flock``) by a long-lived exporter of the workspace while it runs: a short-lived command then leaves the
spool to it (no SDK to load, no collector to wait for)."""
MAX_SPOOL_BYTES = 1 << 20
"""The bound on what waits for an exporter: about 2,000 events (a tool call's line is ~400 bytes)."""
MAX_LINE_BYTES = 8 << 10
MAX_TEXT_CHARS = 400
MAX_DRAIN_FILES = 16
"""Spool files one drain looks at, at most (``.draining-*`` ones left by dead exporters, then the spool)."""
LOCK_WAIT_S = 0.5
"""Longest an event's write waits for the spool's lock (held for microseconds by a writer, a millisecond by a
drain): a lock held longer is someone else's doing, and the record is dropped rather than the turn held up."""
ENDPOINTS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
)
SIGNALS = ("traces", "metrics", "logs")
MANAGER_DIR = ".agent-loop"
SPOOLED: set[Path] = set()
"""The workspaces (their ``.agent-loop``) this process spooled an event into: a short-lived command exports them as it
ends (``export.send_spooled``)."""
_OWN = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


def exporter_names(env: Mapping[str, str], signal: str) -> list[str]:
    """``OTEL_<SIGNAL>_EXPORTER`` as a list (the spec's comma-separated form); unset or empty: ``otlp``."""
    raw = env.get(f"OTEL_{signal.upper()}_EXPORTER", "").strip().lower()
    return [name.strip() for name in raw.split(",") if name.strip()] or ["otlp"]


def signals(env: Optional[Mapping[str, str]] = None) -> frozenset[str]:
    """The signals exported, by the OpenTelemetry spec's variables (nothing of ours to set): one goes out when
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` or its own ``OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT`` is set and
    ``OTEL_<SIGNAL>_EXPORTER`` names ``otlp`` (its default; ``none`` or an exporter we do not have turns it off);
    ``OTEL_SDK_DISABLED=true`` turns them all off. Why not the SDK's default endpoint (localhost:4318) for the
    others: with only a traces endpoint set, nothing may go anywhere else."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return frozenset()
    generic = bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip())
    return frozenset(
        signal
        for signal in SIGNALS
        if (generic or env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "").strip())
        and "otlp" in exporter_names(env, signal)
    )


def enabled(env: Optional[Mapping[str, str]] = None) -> bool:
    """Telemetry is on when at least one signal is exported (``signals``)."""
    return bool(signals(env))


def spool_dir(manager: Path) -> Path:
    return manager / SPOOL_DIR


def manager_of(task_dir: Path) -> Optional[Path]:
    """The workspace's ``.agent-loop/`` above a task folder (``tasks/<id>``, or a legacy ``<id>``)."""
    for parent in task_dir.parents[:3]:
        if parent.name == MANAGER_DIR:
            return parent
    return None


def offer(task_dir: Path, task_id: str, event: Mapping[str, Any], env: Optional[Mapping[str, str]] = None) -> None:
    """Spool one ledger event of ``task_id`` when telemetry is on: configured in this process's environment, or the
    workspace has an exporter (its spool folder exists: a harness may start our hooks with an environment of its
    own); never raises (telemetry is never the error)."""
    try:
        manager = manager_of(task_dir)
        if manager is None or not (enabled(env) or os.path.isdir(spool_dir(manager))):
            return
        if enqueue(manager, {"task": task_id, "workspace": str(manager.parent), **clipped(event)}):
            SPOOLED.add(manager)
    except Exception:  # noqa: BLE001 (a full disk or a bad value must not fail the turn being recorded)
        return


def clipped(value: Any, depth: int = 0) -> Any:
    """Strings clipped, lists and depth bounded: a span attribute never needs a whole command output."""
    if isinstance(value, str):
        return value[:MAX_TEXT_CHARS]
    if isinstance(value, Mapping):
        return {str(k): clipped(v, depth + 1) for k, v in list(value.items())[:40]} if depth < 6 else {}
    if isinstance(value, (list, tuple)):
        return [clipped(v, depth + 1) for v in value[:20]] if depth < 6 else []
    return value if value is None or isinstance(value, (bool, int, float)) else str(value)[:MAX_TEXT_CHARS]


def folder(manager: Path, *, create: bool = False) -> Optional[int]:
    """A descriptor of the spool folder (made when ``create``), or None when there is none or it is not a real folder:
    a symbolic link there is never followed (it would send every event out of the workspace)."""
    path = spool_dir(manager)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(2):
        try:
            return os.open(path, flags)
        except FileNotFoundError:
            if not create:
                return None
            with suppress(FileExistsError):
                os.mkdir(path, 0o700)  # never through a link: an existing one is EEXIST, then refused by the open
        except OSError:  # ELOOP or ENOTDIR: a link, or a file, where the folder belongs
            return None
    return None


def linked(manager: Path) -> bool:
    """Is something other than a real folder (a link, a file) where the spool folder belongs?"""
    try:
        return not stat.S_ISDIR(os.lstat(spool_dir(manager)).st_mode)
    except OSError:
        return False


def _open(where: int, name: str, flags: int) -> Optional[int]:
    """A descriptor of the regular file ``name`` in the spool folder, opened as ``fsio.open_own`` does (never a link,
    FIFO or device; non-blocking); None for anything else, or when it is not there."""
    try:
        fd = os.open(name, flags | _OWN, 0o600, dir_fd=where)
    except OSError:  # ELOOP (a link), ENXIO (a FIFO nobody reads, a socket), EISDIR, ENOENT, ...
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _lock(fd: int) -> bool:
    """The spool file's lock, waited for ``LOCK_WAIT_S`` at most."""
    deadline, delay = time.monotonic() + LOCK_WAIT_S, 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
        except OSError:
            return False


def enqueue(manager: Path, record: Mapping[str, Any]) -> bool:
    """Append one record to the workspace's spool; False when it was dropped (spool full, line too long, lock held,
    something other than a regular file at the spool's name) or there is no real spool folder."""
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()
    where = folder(manager, create=True)
    if where is None:
        return False
    try:
        if len(line) > MAX_LINE_BYTES:
            return _drop(where)
        for _ in range(3):  # the file may be renamed aside between our open and our lock: then open the new one
            fd = _open(where, SPOOL_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            if fd is None:
                return _drop(where)
            try:
                if not _lock(fd):
                    return _drop(where)
                info = os.fstat(fd)
                try:
                    same = os.stat(SPOOL_FILE, dir_fd=where, follow_symlinks=False).st_ino == info.st_ino
                except FileNotFoundError:
                    same = False
                if not same:
                    continue
                if info.st_size + len(line) > MAX_SPOOL_BYTES:
                    return _drop(where)
                os.write(fd, line)
                return True
            finally:
                os.close(fd)  # releases the lock
        return _drop(where)
    finally:
        os.close(where)


def _drop(where: int, count: int = 1) -> bool:
    """Count dropped records (one byte each, appended: the count is the file's size, no read-modify-write race)."""
    fd = _open(where, DROPPED_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    if fd is not None:
        try:
            os.write(fd, b"." * count)
        except OSError:
            pass
        finally:
            os.close(fd)
    return False


def drop(manager: Path, count: int) -> None:
    """Count ``count`` records that were spooled but not exported (malformed, or no ledger holds them)."""
    where = folder(manager) if count > 0 else None
    if where is not None:
        try:
            _drop(where, count)
        finally:
            os.close(where)


def dropped(manager: Path) -> int:
    """How many records were dropped since the spool folder was made."""
    where = folder(manager)
    if where is None:
        return 0
    try:
        info = os.stat(DROPPED_FILE, dir_fd=where, follow_symlinks=False)
        return info.st_size if stat.S_ISREG(info.st_mode) else 0
    except OSError:
        return 0
    finally:
        os.close(where)


def hold_exporter(manager: Path) -> Optional[int]:
    """Take the workspace's exporter lock, for as long as the descriptor returned stays open (it closes with the
    process); None when another process holds it or the folder is not a real one."""
    where = folder(manager, create=True)
    if where is None:
        return None
    try:
        fd = _open(where, EXPORTER_LOCK, os.O_RDONLY | os.O_CREAT)
        if fd is None:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        return fd
    finally:
        os.close(where)


def exporter_running(manager: Path) -> bool:
    """Does a long-lived exporter drain this workspace now (someone holds its exporter lock)?"""
    where = folder(manager)
    if where is None:
        return False
    try:
        fd = _open(where, EXPORTER_LOCK, os.O_RDONLY)
        if fd is None:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            os.close(fd)
        return False
    finally:
        os.close(where)


def drain(manager: Path) -> list[dict[str, Any]]:
    """Take the spooled records (batches left by exporters that died mid-drain first); each is returned once, to one
    caller, even with several exporters draining the same workspace. At most ``MAX_DRAIN_FILES`` files of at most
    ``MAX_SPOOL_BYTES`` each are read (what a writer can make; the rest of a bigger one is dropped); a line that is
    not a JSON object is skipped and counted in ``dropped``."""
    where = folder(manager)
    if where is None:
        return []
    try:
        try:
            left = sorted(n for n in os.listdir(where) if n.startswith(DRAINING))[: MAX_DRAIN_FILES - 1]
        except OSError:
            return []
        mine = f"{DRAINING}{os.getpid()}-{os.urandom(4).hex()}"
        try:
            os.rename(SPOOL_FILE, mine, src_dir_fd=where, dst_dir_fd=where)
            left.append(mine)
        except OSError:
            pass
        out: list[dict[str, Any]] = []
        bad = 0
        for name in left:
            bad += _take(where, name, out)
        if bad:
            _drop(where, bad)
        return out
    finally:
        os.close(where)


def _take(where: int, name: str, out: list[dict[str, Any]]) -> int:
    """Read and remove one spool file, its records added to ``out``; the number of bad lines."""
    fd = _open(where, name, os.O_RDONLY)
    if fd is None:  # taken by another exporter, or a link, FIFO or device planted under a spool's name: remove that
        with suppress(OSError):
            if not stat.S_ISREG(os.stat(name, dir_fd=where, follow_symlinks=False).st_mode):
                os.unlink(name, dir_fd=where)
        return 0
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held: a writer mid-line, or another exporter; next time
        if os.stat(name, dir_fd=where, follow_symlinks=False).st_ino != os.fstat(fd).st_ino:
            return 0  # read and removed by another exporter between our open and our lock
        data = _read(fd, MAX_SPOOL_BYTES)
        os.unlink(name, dir_fd=where)
    except OSError:
        return 0
    finally:
        os.close(fd)
    bad = 0
    if len(data) > MAX_SPOOL_BYTES:  # no writer makes this: the rest was not read, its records are lost
        data, bad = data[: data.rfind(b"\n", 0, MAX_SPOOL_BYTES) + 1], 1
    for raw in data.split(b"\n"):
        if raw.strip():
            value = _record(raw)
            if value is None:
                bad += 1
            else:
                out.append(value)
    return bad


def _read(fd: int, cap: int) -> bytes:
    """At most ``cap`` + 1 bytes, in pieces (the + 1 tells a file over the cap)."""
    chunks, size = [], 0
    while size <= cap and (chunk := os.read(fd, min(1 << 16, cap + 1 - size))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _record(raw: bytes) -> Optional[dict[str, Any]]:
    if len(raw) > MAX_LINE_BYTES:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: a line of thousands of nested brackets
        return None
    return value if isinstance(value, dict) else None
