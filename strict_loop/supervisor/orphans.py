"""The child a supervisor (or ``watch``) runs, recorded on disk, so that a restart after a ``kill -9`` ends it.

Why: a supervisor killed with SIGKILL cannot kill its child's process group; the harness (or the watched job) goes
on, and the restarted supervisor would start a second one beside it, both writing to the same task. The record names
the group (its leader's pid) and the leader's start time; on the next start a group still alive under that leader,
a session leader of ours with the same start time, is the person's own earlier run: it is killed, and the caller
records that it was. A record that names any other process is dropped without a signal sent.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any, Optional

from strict_loop.base.fsio import atomic_write
from strict_loop.base.jsontext import read_object
from strict_loop.base.timefmt import now_iso
from strict_loop.supervisor.lock import alive, process_start, stat_fields

CHILD_FILE = "child.json"
GRACE_S = 3.0


class ChildRecord:
    """``<folder>/child.json``: the process group of the child running now, while it runs."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / CHILD_FILE

    def started(self, pid: int) -> None:
        """Record the child's group (started with its own session: group id = its pid) as soon as it runs."""
        me = os.getpid()
        body = {"pgid": pid, "start": process_start(pid), "owner": me, "owner_start": process_start(me)}
        atomic_write(self.path, json.dumps({**body, "started_at": now_iso()}).encode(), sync=False)

    def ended(self) -> None:
        self.path.unlink(missing_ok=True)

    def reap(self) -> Optional[dict[str, Any]]:
        """End the group a dead predecessor left running; the record of what was killed, else None.

        A record whose owner still runs is left alone (that process still supervises its child)."""
        data = read_object(self.path)
        if data is None:
            return None
        owner = {"pid": data.get("owner"), "start": data.get("owner_start")}
        if owner["pid"] != os.getpid() and alive(owner):
            return None
        self.path.unlink(missing_ok=True)
        pgid = data.get("pgid")
        if not isinstance(pgid, int) or not ours(pgid, data.get("start")):
            return None
        kill_group(pgid)
        return {"pgid": pgid, "start": data.get("start"), "started_at": data.get("started_at")}


def ours(pid: int, start: Any) -> bool:
    """Whether ``pid`` is the same process that was recorded: start time equal, a session and group leader, our uid."""
    if pid <= 1 or not isinstance(start, str) or process_start(pid) != start:
        return False
    fields = stat_fields(pid)
    try:
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return False
    leads = fields is not None and fields[2] == fields[3] == str(pid)  # pgrp, session (fields 5, 6 of stat)
    return leads and uid == os.getuid()


def kill_group(pgid: int, grace_s: float = GRACE_S) -> None:
    """SIGTERM the group, SIGKILL what is left after ``grace_s``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        end = time.monotonic() + (grace_s if sig == signal.SIGTERM else 0)
        while time.monotonic() < end and _group_alive(pgid):
            time.sleep(0.05)
        if not _group_alive(pgid):
            return


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
