"""The workspace's record of harness sessions, of the tool calls no task claimed, and of the tasks a call may belong to.

``sessions.json`` binds a harness session (``harness:session_id``) to the task its loop calls named, and notes
whether the agent was told about unclaimed calls; ``unclaimed.jsonl`` keeps every call that no task claimed
(masked like every ledger); ``live-tasks.json`` indexes the tasks a hook must consider (running, or whose
state.json does not read), so that a tool call costs the same with 1 task folder or 1,000 (issue 25, item 16).
Standard library only: the hook reads these on every call.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from strict_loop.base.fsio import append_line, atomic_write, file_lock
from strict_loop.base.jsontext import read_object

if TYPE_CHECKING:
    from strict_loop.base.layout import Layout

__all__ = [
    "LIVE_FILE",
    "SESSIONS_FILE",
    "UNCLAIMED_FILE",
    "append_unclaimed",
    "bind",
    "bound_task",
    "live_tasks",
    "note_status",
    "unclaimed_count",
]

SESSIONS_FILE = "sessions.json"
UNCLAIMED_FILE = "unclaimed.jsonl"
LOCK_FILE = "sessions.lock"
MAX_SESSIONS = 200
"""Bindings kept (the most recent): a session older than that is bound again by its next loop call."""
LIVE_FILE = "live-tasks.json"
LIVE_LOCK = "live-tasks.lock"
LIVE_RESCAN_S = 600.0
"""The index is rebuilt at least this often: a state.json edited by hand (or by git) is seen within this time."""
RACY_S = 2.0
"""A tasks/ folder changed less than this long before a scan may change again unseen within the same timestamp tick
(1 s on HFS+): such a scan is used but not kept."""
LIVE = ("running", None)
"""The statuses a call may belong to: running, or a state.json that does not read (its problem is then logged)."""


def bound_task(manager: Path, key: str) -> Optional[str]:
    """The task this session was bound to, if any."""
    entry = (read_object(manager / SESSIONS_FILE) or {}).get(key)
    task_id = entry.get("task_id") if isinstance(entry, dict) else None
    return task_id if isinstance(task_id, str) else None


def _update(manager: Path, key: str, **fields: Any) -> dict[str, Any]:
    """Merge ``fields`` into this session's entry (caller holds the sessions lock); the entry before."""
    sessions = read_object(manager / SESSIONS_FILE) or {}
    before = sessions.pop(key, None)
    before = before if isinstance(before, dict) else {}
    sessions[key] = {**before, **fields, "ts": round(time.time(), 3)}
    kept = dict(list(sessions.items())[-MAX_SESSIONS:])  # insertion order: the most recently used last
    atomic_write(manager / SESSIONS_FILE, (json.dumps(kept, indent=1) + "\n").encode(), sync=False)
    return before


def _locked(manager: Path) -> Any:
    return file_lock(manager / LOCK_FILE, "sessions.json", timeout=5.0)


def bind(manager: Path, key: str, task_id: str) -> None:
    """Bind session ``key`` to ``task_id`` (written only when it changes)."""
    if bound_task(manager, key) != task_id:
        with _locked(manager):
            _update(manager, key, task_id=task_id, told=False)


def append_unclaimed(manager: Path, key: str, line: dict[str, Any]) -> bool:
    """Append one (already masked) unclaimed call; True the first time for this session (then say so to the agent)."""
    with _locked(manager):
        append_line(manager / UNCLAIMED_FILE, (json.dumps(line, ensure_ascii=False) + "\n").encode(), sync=False)
        entry = (read_object(manager / SESSIONS_FILE) or {}).get(key)
        if isinstance(entry, dict) and entry.get("told") is True:
            return False
        _update(manager, key, told=True)
        return True


def unclaimed_count(manager: Path) -> int:
    """How many tool calls no task claimed (lines of unclaimed.jsonl)."""
    try:
        with open(manager / UNCLAIMED_FILE, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    except OSError:
        return 0


def live_tasks(layout: Layout) -> list[str]:
    """The tasks a tool call may belong to (status running, or a state.json that does not read), sorted.

    Read from ``live-tasks.json``, each entry checked against its own state.json: the work is bounded by the running
    tasks, not by every task folder. The index is rebuilt by one scan when it is missing or damaged, when a task
    folder was added or removed (the tasks/ folder's identity, mtime and link count changed), and every
    ``LIVE_RESCAN_S``; ``TaskIndex.register`` keeps it in step with each status the loop records, and an entry
    found no longer running is dropped."""
    stamp = _stamp(layout.tasks)
    if stamp is None:
        return []
    index = read_object(layout.manager / LIVE_FILE) or {}
    listed = index.get("live")
    age = time.time() - index.get("built", 0) if isinstance(index.get("built"), (int, float)) else -1.0
    if index.get("stamp") != stamp or not isinstance(listed, list) or not 0 <= age < LIVE_RESCAN_S:
        return _rebuild(layout)
    listed = [t for t in listed if isinstance(t, str)]
    live = [t for t in listed if _status(layout, t) in LIVE]
    if live != listed:
        _edit(layout, drop=[t for t in listed if t not in live])
    return live


def note_status(layout: Layout, task_id: str, status: str) -> None:
    """Keep the index in step with a status just saved in ``task_id``'s state.json (an absent index is left to the
    next reader's scan)."""
    if status in LIVE:
        _edit(layout, add=[task_id])
    else:
        _edit(layout, drop=[task_id])


def _stamp(folder: Path) -> Optional[list[int]]:
    try:
        st = folder.stat()
    except OSError:
        return None
    return [st.st_ino, st.st_mtime_ns, st.st_nlink]


def _status(layout: Layout, task_id: str) -> Any:
    """A task's status read without validation: None when its state.json does not read, "" when it is no task."""
    try:
        paths = layout.task(task_id)
    except Exception:  # noqa: BLE001 (a bad id or a link out of the workspace: no task of ours)
        return ""
    if not paths.exists():
        return ""
    status = (read_object(paths.state) or {}).get("status")
    return status if isinstance(status, str) else None


def _rebuild(layout: Layout) -> list[str]:
    """Scan every task folder and keep the result, unless the folder changed too recently to trust its stamp.

    The stamp is taken before the scan (a change during it is seen by the next reader), and the scan runs under the
    index's lock, so that a status ``note_status`` records meanwhile is never overwritten by an older scan."""
    stamp = _stamp(layout.tasks)
    built = time.time()
    if stamp is None or built - stamp[1] / 1e9 < RACY_S:
        return _scan(layout)
    live: Optional[list[str]] = None
    try:
        with file_lock(layout.manager / LIVE_LOCK, "the live task index", timeout=2.0):
            live = _scan(layout)
            body = {"stamp": stamp, "built": round(built, 3), "live": live}
            atomic_write(layout.manager / LIVE_FILE, (json.dumps(body) + "\n").encode(), sync=False)
    except Exception:  # noqa: BLE001 (a busy lock or a read-only folder: the scan is still right, only not kept)
        pass
    return live if live is not None else _scan(layout)


def _scan(layout: Layout) -> list[str]:
    return [t for t in layout.task_ids() if _status(layout, t) in LIVE]


def _edit(layout: Layout, add: Optional[list[str]] = None, drop: Optional[list[str]] = None) -> None:
    """Add or drop entries under the index's lock, each checked again there (a status saved meanwhile wins); if that
    fails, the index is made stale (the tasks/ folder's mtime moves on), so that the next reader scans."""
    try:
        with file_lock(layout.manager / LIVE_LOCK, "the live task index", timeout=2.0):
            index = read_object(layout.manager / LIVE_FILE) or {}
            listed = index.get("live")
            if not isinstance(listed, list):
                return
            now = set(listed) - {t for t in drop or [] if _status(layout, t) not in LIVE}
            now |= {t for t in add or [] if _status(layout, t) in LIVE}
            if now != set(listed):
                index["live"] = sorted(t for t in now if isinstance(t, str))
                atomic_write(layout.manager / LIVE_FILE, (json.dumps(index) + "\n").encode(), sync=False)
    except Exception:  # noqa: BLE001 (only an index: the next scan mends it)
        try:
            os.utime(layout.tasks, follow_symlinks=False)
        except OSError:
            pass
