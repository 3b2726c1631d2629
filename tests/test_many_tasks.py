"""A tool call costs the same however many task folders the workspace keeps (issue 25, item 16): the hook finds the
running task through an index, never by reading every task's state. Real workspaces; the hook handler in-process, as
the harness calls it (payload in, answer out); the files the hook touches are counted, not timed."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from test_hooks import events, hook, start

from strict_loop import Workspace
from strict_loop.storage import sessions

DONE = 40
ROUND = {"task": "t", "result_summary": "r", "verification_summary": "v"}


def with_done_tasks(ws: Path, n: int = DONE) -> Path:
    """Task 'live' running, ``n`` completed tasks beside it (copies); tasks/ dated back out of the racy window."""
    start(ws, "live")
    folder = ws / ".agent-loop/tasks"
    for i in range(n):
        copy = folder / f"done-{i:03d}"
        shutil.copytree(folder / "live", copy, ignore=shutil.ignore_patterns(".lock"))
        state = json.loads((copy / "state.json").read_text())
        state.update(task_id=copy.name, status="completed")
        (copy / "state.json").write_text(json.dumps(state))
    past = time.time() - 10
    os.utime(folder, (past, past))
    return folder


def touched(monkeypatch) -> dict[str, list[str]]:
    """Every path opened, listed or stat'ed from now on, by what was done to it."""
    seen: dict[str, list[str]] = {}
    for name in ("open", "listdir", "scandir", "stat", "lstat"):
        real, paths = getattr(os, name), seen.setdefault(name, [])

        def spy(path=".", *args, _real=real, _paths=paths, **kwargs):
            _paths.append(os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path))
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, spy)
    return seen


def test_a_tool_call_reads_no_folder_of_a_finished_task(ws_dir, monkeypatch):
    folder = with_done_tasks(ws_dir)
    assert hook("claude", "claude_pre_tool_use", ws_dir) is None  # the first call builds the index
    seen = touched(monkeypatch)
    assert hook("claude", "claude_pre_tool_use", ws_dir) is None
    assert hook("claude", "claude_post_tool_use", ws_dir, tool_input={"command": "pytest -q"}) is None
    monkeypatch.undo()
    assert seen["open"] and not [p for paths in seen.values() for p in paths if "/done-" in p], (
        "a finished task's folder was read"
    )
    assert str(folder) not in seen["listdir"] + seen["scandir"], "the tasks folder was listed"
    assert [e["data"]["args"]["command"] for e in events(ws_dir, "live", "tool_call")] == ["pytest -q"]


def test_the_index_follows_tasks_that_end_start_or_are_damaged(ws_dir):
    folder = with_done_tasks(ws_dir, 3)
    ws = Workspace(ws_dir)
    assert hook("claude", "claude_post_tool_use", ws_dir, tool_input={"command": "make a"}) is None
    ws.update_state(task_id="live", status="completed", **ROUND)
    start(ws_dir, "next")  # a new folder: the index is rebuilt
    past = time.time() - 10
    os.utime(folder, (past, past))
    assert hook("claude", "claude_post_tool_use", ws_dir, tool_input={"command": "make b"}) is None
    assert [e["data"]["args"]["command"] for e in events(ws_dir, "next", "tool_call")] == ["make b"]
    assert sessions.live_tasks(ws.layout) == ["next"]
    (ws_dir / ".agent-loop" / sessions.LIVE_FILE).write_text('{"stamp": "x", "live": 7')  # damaged: rebuilt
    (folder / "done-001/state.json").write_text("{not json")  # a state that does not read counts, to be logged
    assert sessions.live_tasks(ws.layout) == ["done-001", "next"]


@pytest.mark.parametrize("edit", ["completed", "running"])
def test_a_status_saved_by_the_loop_updates_the_index_at_once(ws_dir, edit):
    with_done_tasks(ws_dir, 2)
    ws = Workspace(ws_dir)
    assert sessions.live_tasks(ws.layout) == ["live"]
    if edit == "completed":
        ws.update_state(task_id="live", status="completed", **ROUND)
        assert sessions.live_tasks(ws.layout) == []
    else:  # a blocked task taken up again by its next round
        ws.update_state(task_id="live", status="blocked", stop_reason="stuck", **ROUND)
        assert sessions.live_tasks(ws.layout) == []
        ws.update_state(task_id="live", status="running", **ROUND)
        assert sessions.live_tasks(ws.layout) == ["live"]
