"""The workspace's record of harness sessions and of the tool calls no task claimed.

``sessions.json`` binds a harness session (``harness:session_id``) to the task its loop calls named, and notes
whether the agent was told about unclaimed calls; ``unclaimed.jsonl`` keeps every call that no task claimed
(masked like every ledger). Standard library only: the hook reads these on every call.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Optional

from strict_loop.base.fsio import append_line, atomic_write, file_lock
from strict_loop.base.jsontext import read_object

__all__ = ["SESSIONS_FILE", "UNCLAIMED_FILE", "append_unclaimed", "bind", "bound_task", "unclaimed_count"]

SESSIONS_FILE = "sessions.json"
UNCLAIMED_FILE = "unclaimed.jsonl"
LOCK_FILE = "sessions.lock"
MAX_SESSIONS = 200
"""Bindings kept (the most recent): a session older than that is bound again by its next loop call."""


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
