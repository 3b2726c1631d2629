"""The supervisor's bookkeeping that outlives a process: its per-task lock, the session it resumes and the tool calls
already recorded.

Why apart from ``supervisor.py``: both are small and testable without a harness. The lock makes one
supervisor per task (a dead holder's lock is taken over; a live one refuses); the seen-ids set keeps
a tool call that a harness hook already recorded from being recorded a second time from the stream.
"""

from __future__ import annotations

import importlib
import json
import os
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import atomic_write, file_lock
from strict_loop.base.jsontext import read_object
from strict_loop.base.timefmt import now_iso

SEEN_CAP = 2000
"""Tool-call ids remembered; the set is rebuilt from the last events, so older ids are never needed."""


PROC = Path("/proc")
"""Where Linux tells about each process (read directly: no import). Absent on macOS, where psutil answers."""


def stat_fields(pid: int) -> Optional[list[str]]:
    """Fields 3.. of ``/proc/<pid>/stat`` (after the command name in parentheses), or None where unknown."""
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None


def _no_proc() -> bool:
    """Whether this system has no /proc to read (macOS, a chroot): then psutil tells instead."""
    try:
        (PROC / "self" / "stat").stat()
    except OSError:
        return True
    return False


def _psutil_process(pid: int) -> Any:
    """psutil's view of ``pid`` (imported only here, never on a hook's path), or None: no such process, or no
    psutil."""
    try:
        return importlib.import_module("psutil").Process(pid)  # by name: psutil ships no type hints
    except Exception:  # noqa: BLE001 (NoSuchProcess, AccessDenied, or psutil missing: unknown)
        return None


def process_start(pid: int) -> Optional[str]:
    """When the process started, as a string that names it for good together with its pid (a pid alone is reused);
    None where unknown.

    Linux: clock ticks since boot from ``/proc``; elsewhere (macOS) psutil's creation time. One system always
    answers the same way, so a recorded start compares equal only with the same process."""
    fields = stat_fields(pid)
    if fields:
        return fields[19]  # field 22 of stat
    if not _no_proc():
        return None  # /proc knows every process: this one is gone
    proc = _psutil_process(pid)
    try:
        return f"{proc.create_time():.3f}" if proc is not None else None
    except Exception:  # noqa: BLE001 (it ended meanwhile)
        return None


def process_uid(pid: int) -> Optional[int]:
    """The real user id the process runs as (its ``/proc`` folder's owner, else psutil's), or None where unknown."""
    try:
        return (PROC / str(pid)).stat().st_uid
    except OSError:
        pass
    proc = _psutil_process(pid) if _no_proc() else None
    try:
        return int(proc.uids().real) if proc is not None else None
    except Exception:  # noqa: BLE001
        return None


def zombie(pid: int) -> bool:
    """Whether the process has ended and only waits to be reaped (state Z or X): it holds nothing any more."""
    fields = stat_fields(pid)
    if fields is not None or not _no_proc():
        return fields is not None and bool(fields) and fields[0] in ("Z", "X")
    proc = _psutil_process(pid)
    try:
        return proc is not None and proc.status() in ("zombie", "dead")
    except Exception:  # noqa: BLE001 (gone: not a zombie, and alive() finds it gone)
        return False


def alive(holder: dict[str, Any]) -> bool:
    """Whether the process a lock file names still runs (the same process: its start time matches)."""
    pid = holder.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    if zombie(pid):  # killed, not yet reaped by its parent: gone for every purpose of ours
        return False
    start = holder.get("start")
    return start is None or process_start(pid) in (None, start)


class SupervisorLock:
    """``<task>/supervisor/supervisor.lock``: who supervises the task (pid, start time, harness, session)."""

    def __init__(self, folder: Path, task_id: str, field: str = "supervise.task_id") -> None:
        self.path = folder / "supervisor.lock"
        self.task_id = task_id
        self.field = field  # whose refusal it is: supervise's, or watch's (one process drives a task)
        self.mine: Optional[dict[str, Any]] = None

    def holder(self) -> Optional[dict[str, Any]]:
        return read_object(self.path)

    def acquire(self, harness: str, session_id: Optional[str]) -> Optional[dict[str, Any]]:
        """Take the lock; returns the stale holder it took over (None if the lock was free).

        A short flock around the check-and-write makes two starting supervisors agree on one winner."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        pid = os.getpid()
        mine = {
            "pid": pid,
            "start": process_start(pid),
            "task_id": self.task_id,
            "harness": harness,
            "session_id": session_id,
            "started_at": now_iso(),
        }
        with file_lock(self.path.with_name("supervisor.lock.guard"), "the supervisor lock"):
            stale = None
            if self.path.exists():
                held = self.holder()
                if held is not None and alive(held):
                    raise LoopError(
                        self.field,
                        f"task '{self.task_id}' is already supervised by pid {held.get('pid')} ({held.get('harness')}, "
                        f"since {held.get('started_at')})",
                        "let it finish or stop it (kill -INT <pid>); one supervise or watch per task",
                    )
                stale = held or {}
            tmp = self.path.with_name(f"supervisor.lock.{pid}.tmp")
            tmp.write_text(json.dumps(mine), encoding="utf-8")
            os.replace(tmp, self.path)
        self.mine = mine
        return stale

    def update(self, **fields: Any) -> None:
        """Record e.g. the session id now resumed (only while the lock is ours)."""
        if self.mine is None:
            return
        self.mine.update(fields)
        tmp = self.path.with_name(f"supervisor.lock.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.mine), encoding="utf-8")
        os.replace(tmp, self.path)

    def release(self) -> None:
        """Remove the lock if it is still ours (never a successor's)."""
        if self.mine is None:
            return
        held = self.holder()
        if held and held.get("pid") == self.mine["pid"] and held.get("start") == self.mine["start"]:
            self.path.unlink(missing_ok=True)
        self.mine = None


class SeenIds:
    """A bounded set of tool-call ids already recorded (by a hook or by us), rebuilt from the recent events."""

    def __init__(self, cap: int = SEEN_CAP) -> None:
        self._order: deque[str] = deque()
        self._ids: set[str] = set()
        self.cap = cap

    def __contains__(self, call_id: str) -> bool:
        return call_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, call_id: str) -> None:
        if not call_id or call_id in self._ids:
            return
        self._order.append(call_id)
        self._ids.add(call_id)
        while len(self._order) > self.cap:
            self._ids.discard(self._order.popleft())

    def absorb(self, events: Iterable[dict[str, Any]]) -> None:
        """Remember the ids of the ``tool_call`` events given (``hook.tool_use_id`` from hooks, ``hook.call_id`` from
        us)."""
        for event in events:
            if event.get("kind") != "tool_call":
                continue
            data = event.get("data")
            meta = data.get("hook") if isinstance(data, dict) else None
            if isinstance(meta, dict):
                for key in ("tool_use_id", "call_id"):
                    if isinstance(meta.get(key), str):
                        self.add(meta[key])


class SessionFile:
    """``session.json``: the harness session this task's supervisor resumes (its own harness's, one it started)."""

    def __init__(self, folder: Path, harness: str, task_id: str) -> None:
        self.path, self.harness, self.task_id = folder / "session.json", harness, task_id
        self.refused: Optional[str] = None  # why the file's session was not resumed (not the harness's id format)

    def get(self) -> Optional[str]:
        """The session to resume, or None; an id not in the harness's format (``session.json`` is repository content,
        and the id becomes a command-line argument) is refused: the file is removed and ``refused`` says why."""
        data = read_object(self.path)
        from strict_loop.harness import registry

        if data is None or data.get("harness") != self.harness or not registry.get(self.harness).resumes_sessions:
            return None  # e.g. hermes -z: no resume
        problem = registry.session_id_problem(self.harness, data.get("session_id"))
        if problem:
            self.refused = f"{problem}; starting a fresh session"
            self.path.unlink(missing_ok=True)
            return None
        return str(data["session_id"])

    def keep(self, resumed: Optional[str], ok: bool, session_id: Optional[str]) -> None:
        """Remember the session after a good run; forget it after a failed one (the next run starts fresh from disk)."""
        from strict_loop.harness import registry

        if session_id and registry.session_id_problem(self.harness, session_id):
            session_id = None  # a stream's id of another shape is never kept to be resumed
        if ok and session_id:
            body = {"harness": self.harness, "session_id": session_id, "task_id": self.task_id, "updated_at": now_iso()}
            atomic_write(self.path, json.dumps(body).encode(), sync=False)  # lost: the next run starts fresh
        elif not ok and (resumed or self.path.exists()):
            self.path.unlink(missing_ok=True)
