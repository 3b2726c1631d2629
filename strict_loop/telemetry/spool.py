"""The telemetry spool: an append-only, size-bounded file of ledger events per workspace, written with the standard
library in microseconds and drained in batches by whichever long-lived process exports (``export``).

Why a file, not a socket or a thread: the hook runs once per tool call and must not wait for a collector, nor even
for a process that talks to one. A writer appends one line under ``flock`` (so concurrent writers never interleave
a line and a drain never loses one); an exporter renames the spool aside, takes the same lock (waiting out a writer
that opened the old file), reads it and removes it. When nobody drains, the spool stops growing at
``MAX_SPOOL_BYTES`` and later events are dropped (counted in ``dropped``): a dead exporter costs the agent nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Optional

SPOOL_DIR = "telemetry"
SPOOL_FILE = "spool.jsonl"
DRAINING = ".draining-"
DROPPED_FILE = "dropped"
MAX_SPOOL_BYTES = 1 << 20
"""The bound on what waits for an exporter: about 2,000 events (a tool call's line is ~400 bytes)."""
MAX_LINE_BYTES = 8 << 10
MAX_TEXT_CHARS = 400
ENDPOINTS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
)
MANAGER_DIR = ".agent-loop"


def enabled(env: Optional[Mapping[str, str]] = None) -> bool:
    """Telemetry is on when an OTLP endpoint is configured and ``OTEL_SDK_DISABLED`` is not true (the SDK's own
    variables: nothing of ours to set)."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(env.get(name, "").strip() for name in ENDPOINTS)


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
        if manager is not None and (enabled(env) or os.path.isdir(spool_dir(manager))):
            enqueue(manager, {"task": task_id, "workspace": str(manager.parent), **_clipped(event)})
    except Exception:  # noqa: BLE001 (a full disk or a bad value must not fail the turn being recorded)
        return


def _clipped(value: Any, depth: int = 0) -> Any:
    """Strings clipped, lists and depth bounded: a span attribute never needs a whole command output."""
    if isinstance(value, str):
        return value[:MAX_TEXT_CHARS]
    if isinstance(value, Mapping):
        return {str(k): _clipped(v, depth + 1) for k, v in list(value.items())[:40]} if depth < 6 else {}
    if isinstance(value, (list, tuple)):
        return [_clipped(v, depth + 1) for v in value[:20]] if depth < 6 else []
    return value if value is None or isinstance(value, (bool, int, float)) else str(value)[:MAX_TEXT_CHARS]


def enqueue(manager: Path, record: Mapping[str, Any]) -> bool:
    """Append one record to the workspace's spool; False when it was dropped (spool full, line too long)."""
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()
    folder = spool_dir(manager)
    if len(line) > MAX_LINE_BYTES:
        return _drop(folder)
    path = folder / SPOOL_FILE
    for _ in range(3):  # the file may be renamed aside between our open and our lock: then open the new one
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            info = os.fstat(fd)
            try:
                same = os.lstat(path).st_ino == info.st_ino
            except FileNotFoundError:
                same = False
            if not same:
                continue
            if info.st_size + len(line) > MAX_SPOOL_BYTES:
                return _drop(folder)
            os.write(fd, line)
            return True
        finally:
            os.close(fd)  # releases the lock
    return _drop(folder)


def _drop(folder: Path) -> bool:
    """Count a dropped record (one byte appended: the count is the file's size, no read-modify-write race)."""
    try:
        fd = os.open(folder / DROPPED_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, b".")
        finally:
            os.close(fd)
    except OSError:
        pass
    return False


def dropped(manager: Path) -> int:
    """How many records were dropped since the spool folder was made."""
    try:
        return os.stat(spool_dir(manager) / DROPPED_FILE).st_size
    except OSError:
        return 0


def drain(manager: Path) -> list[dict[str, Any]]:
    """Take every spooled record (a batch left by an exporter that died mid-drain first); each is returned once, to
    one caller, even with several exporters draining the same workspace."""
    folder = spool_dir(manager)
    try:
        left = sorted(p for p in folder.iterdir() if p.name.startswith(DRAINING))
    except OSError:
        return []
    mine = folder / f"{DRAINING}{os.getpid()}-{os.urandom(4).hex()}"
    try:
        os.rename(folder / SPOOL_FILE, mine)
        left.append(mine)
    except OSError:
        pass
    out: list[dict[str, Any]] = []
    for path in left:
        out.extend(_take(path))
    return out


def _take(path: Path) -> Iterator[dict[str, Any]]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return iter(())  # another exporter took it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held: a writer mid-line, or another exporter; next time
    except OSError:
        os.close(fd)
        return iter(())
    try:
        if os.lstat(path).st_ino != os.fstat(fd).st_ino:
            return iter(())  # read and removed by another exporter between our open and our lock
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        os.unlink(path)
    except OSError:
        return iter(())
    finally:
        os.close(fd)
    records = []
    for raw in b"".join(chunks).splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return iter(records)
