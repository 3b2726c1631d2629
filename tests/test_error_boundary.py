"""The core raises only its own errors: file-system failures and bad stored values become one clear line."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys

import pytest
from conftest import REPO, read_jsonl

from strict_loop import LoopError, Workspace
from strict_loop.base.errors import StorageError


def test_one_unreadable_task_does_not_break_list_tasks(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="good")
    ws.init_state(goal="g", global_stop_condition="c", task_id="bad")
    state = ws.task_paths("bad").state
    state.unlink()
    state.mkdir()  # reading it raises IsADirectoryError, an OSError that is not "missing"
    tasks = {t.task_id: t for t in Workspace(ws_dir).list_tasks()}
    assert tasks["good"].problem is None and tasks["good"].status == "running"
    assert "state.json" in tasks["bad"].problem and "cannot be read" in tasks["bad"].problem
    with pytest.raises(LoopError, match="cannot be read"):
        Workspace(ws_dir).show_task(task_id="bad")


def test_a_hand_edited_timestamp_does_not_break_a_round(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="ts")
    path = ws.task_paths("ts").state
    doc = json.loads(path.read_text())
    doc["created_at"] = "yesterday-ish"
    path.write_text(json.dumps(doc))
    result = Workspace(ws_dir).update_state(task_id="ts", task="t", result_summary="r", verification_summary="v")
    assert result.iteration == 1 and result.duration_s is None


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing us
    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))


def test_a_full_disk_is_one_line_naming_the_file_and_the_fix(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="full")
    events = ws.task_paths("full").events
    before = events.read_bytes()
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "append_event.py"),
            "--task-id",
            "full",
            "--kind",
            "note",
            "--message",
            "m",
            "--data",
            json.dumps({"x": "y" * 30_000}),
        ],
        cwd=ws_dir,
        capture_output=True,
        text=True,
        preexec_fn=_limit_file_size,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: append_event ({events}): file system error: File too large"), proc.stderr
    assert "free disk space" in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    # The ledger keeps every earlier line; a fragment of the failed line is cut by the next writer.
    assert events.read_bytes().startswith(before)
    Workspace(ws_dir).append_event(task_id="full", kind="note", message="after the disk filled")
    lines = read_jsonl(events)
    assert [e["seq"] for e in lines] == list(range(1, len(lines) + 1)) and lines[-1][
        "message"
    ] == "after the disk filled"


def test_storage_errors_are_loop_errors():
    assert issubclass(StorageError, LoopError)
