"""A workspace written by strict-agent-loop 0.1.0 (the fixture was made by that version's code) loads and keeps
working."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import read_jsonl, run_script

from strict_loop import Workspace

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "v0.1.0" / "agent-loop"


def test_a_0_1_0_workspace_loads_resumes_and_records(ws_dir):
    shutil.copytree(FIXTURE, ws_dir / ".agent-loop")
    ws = Workspace(ws_dir)
    assert ws.trust(
        task_id="old-task"
    ).monitor  # it came from elsewhere: its monitor settings once a person trusts them
    [task] = ws.list_tasks()
    assert (task.task_id, task.problem, task.iteration) == ("old-task", None, 3)
    view = ws.show_task(task_id="old-task")
    assert view.last_stop_report is not None and view.state.counters.iteration == 3
    assert ws.detect_spiral(task_id="old-task").paused  # its monitor.json (with fields 0.1.0 wrote) loads
    ws.resume(task_id="old-task", action="continue", note="carry on")
    (ws_dir / "notes.md").write_text("done\n")
    result = ws.update_state(
        task_id="old-task",
        task="finish",
        result_summary="notes.md written",
        verification_summary="grep done notes.md",
        status="completed",
    )
    assert result.iteration == 4 and result.status == "completed"
    rebuilt = ws.rebuild_state(task_id="old-task")
    assert rebuilt.iteration == 4 and rebuilt.repaired == []
    assert run_script("check_stop", "--task-id", "old-task", "--exit-status", cwd=ws_dir).returncode == 0
    assert [r["iteration"] for r in read_jsonl(ws.task_paths("old-task").iterations)] == [1, 2, 3, 4]
