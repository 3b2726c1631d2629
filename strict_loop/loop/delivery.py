"""The supervisor an ``append_event`` result carries, without loading monitor.json again while it says nothing.

Why: every result about a task carries the monitor's messages (``TaskMonitor.deliver``), which loads and validates
monitor.json, the largest document the call reads (the window of recent turns), for an answer that is nearly always
empty. A monitor with no pause, whisper nor notice gives the empty supervisor whatever else its file holds, so a
long-lived process (the MCP server) remembers the bytes it last found so and, while the file still holds exactly
them, answers without parsing it. A tool call, a pause or an answer rewrites the file; it is then loaded in full.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import read_own
from strict_loop.model.monitoring import MonitorView

if TYPE_CHECKING:
    from strict_loop.loop.monitoring import TaskMonitor


class QuietMonitors:
    """monitor.json's bytes, by path, when they were last found to say nothing."""

    def __init__(self) -> None:
        self._bytes: dict[Path, bytes] = {}

    def deliver(self, sup: TaskMonitor) -> MonitorView:
        """``sup.deliver()`` (the caller holds the task's lock), from memory while the file holds the same bytes."""
        path = sup.store.paths.monitor
        try:
            data: Optional[bytes] = read_own(path)  # never through a link, never a FIFO, as TaskMonitor.load reads it
        except (OSError, LoopError):  # missing, a link, unreadable: deliver says what that means
            data = None
        if data is not None and self._bytes.get(path) == data:
            return MonitorView()
        view = sup.deliver()
        if data is not None and view == MonitorView() and _says_nothing(data):
            self._bytes[path] = data
        else:
            self._bytes.pop(path, None)
        return view


def _says_nothing(data: bytes) -> bool:
    """The bytes hold no pause, whisper nor notice: nothing the supervisor depends on beyond them (a pause's recorded
    answer, a notice to hand over)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("paused") is False and doc.get("whispers") == [] and not doc.get("notice")
