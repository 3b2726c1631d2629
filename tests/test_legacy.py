"""Takeover of the original skill's .codex-loop/ tasks: listed and read in place, migrated on first write."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import read_jsonl, run_json, tree_digest

from strict_loop import Workspace


def _legacy_task(ws: Path, task_id: str = "parser-fix", rounds: int = 3) -> Path:
    """A task directory as the original strict-agent-loop scripts wrote it (state schema v3)."""
    root = ws / ".codex-loop" / "tasks" / task_id
    (root / "rounds").mkdir(parents=True)
    history = []
    for i in range(1, rounds + 1):
        entry = {
            "iteration": i,
            "timestamp": f"2026-05-0{i}T10:00:00Z",
            "task": f"legacy step {i}",
            "announcement": f"Round {i}",
            "local_done_condition": "test passes",
            "result_summary": f"did step {i}",
            "verification_summary": f"pytest -q ok ({i})",
            "progress_made": i != 2,
            "status": "running",
            "stop_condition_met": False,
            "stop_reason": "",
            "needs_human_input": False,
            "evidence": [f"log {i}"],
            "artifacts": ["src/parser.py"],
            "next_task": f"legacy step {i + 1}",
            "elapsed_since_previous_seconds": 30 + i,
            "round_summary_path": str(root / "rounds" / f"iteration-{i:04d}.md"),
        }
        history.append(entry)
        (root / "rounds" / f"iteration-{i:04d}.md").write_text(f"# round {i}\n")
    with open(root / "iterations.jsonl", "w") as fh:
        for entry in history:
            fh.write(json.dumps(entry) + "\n")
    with open(root / "events.jsonl", "w") as fh:
        fh.write(
            json.dumps({"timestamp": "2026-05-01T09:59:00Z", "event_type": "round_announcement", "message": "Round 1"})
            + "\n"
        )
        fh.write(json.dumps({"timestamp": "2026-05-01T10:00:00Z", "event_type": "note", "details": {"k": 1}}) + "\n")
    state = {
        "schema_version": 3,
        "skill_name": "strict-agent-loop",
        "created_at": "2026-05-01T09:00:00Z",
        "updated_at": "2026-05-03T10:00:00Z",
        "task": {"id": task_id, "root_dir": str(root), "manager_dir": str(ws / ".codex-loop")},
        "goal": "Fix the parser in strict atomic steps.",
        "global_stop_condition": "pytest passes",
        "workspace_root": str(ws),
        "success_evidence": ["pytest -q passes"],
        "blocker_definition": "needs a human",
        "operating_mode": "unattended",
        "status": "running",
        "limits": {"max_iterations": 40, "max_no_progress_rounds": 4, "max_context_chars": 12000},
        "counters": {"iteration": rounds, "no_progress_rounds": 0, "recovery_count": 0},
        "stop_checks": {
            "commands": [{"command": "test -f parser.done", "cwd": ".", "timeout_seconds": 900, "description": "x"}],
            "paths_exist": [{"path": "src/parser.py", "description": "exists"}],
            "text_patterns": [{"path": "README.md", "pattern": "parser", "description": "d"}],
        },
        "supervisor": {"enabled": True, "max_rounds_per_invocation": 4, "max_consecutive_failures": 2},
        "blocker": {"needs_human_input": False, "reason": ""},
        "next_task": "legacy step 4",
        "context_snapshot": "parser half fixed",
        "archive_summary": "",
        "history": history[-2:],
    }
    (root / "state.json").write_text(json.dumps(state, indent=2))
    (ws / ".codex-loop" / "registry.json").write_text(
        json.dumps({"schema_version": 1, "tasks": {task_id: {"id": task_id}}})
    )
    return root


def test_legacy_tasks_are_listed_and_shown_in_place(ws_dir):
    legacy_root = _legacy_task(ws_dir)
    before = tree_digest(ws_dir / ".codex-loop")
    listed = run_json("list_tasks", cwd=ws_dir)
    assert listed == [
        {
            **listed[0],
            "task_id": "parser-fix",
            "source": "codex-loop",
            "status": "running",
            "iteration": 3,
            "max_iterations": 40,
            "operating_mode": "unattended",
        }
    ]
    shown = run_json("show_task", "--task-id", "parser-fix", cwd=ws_dir)
    state = shown["state"]
    assert state["contract"]["stop_checks"] == {
        "commands": ["test -f parser.done"],
        "paths_exist": ["src/parser.py"],
        "text_patterns": ["README.md::parser"],
        "command_timeout_s": 900.0,
        "output_tail_chars": 4000,
    }
    assert state["contract"]["unattended"]["max_rounds_per_invocation"] == 4
    assert state["counters"]["progress_rounds"] == 2 and state["counters"]["no_progress_rounds"] == 1
    assert state["next_task"] == "legacy step 4" and state["context_snapshot"] == "parser half fixed"
    assert shown["paths"]["state"] == str(legacy_root / "state.json")
    assert tree_digest(ws_dir / ".codex-loop") == before
    assert not (ws_dir / ".agent-loop" / "tasks").exists()


def test_first_write_migrates_and_keeps_history(ws_dir):
    _legacy_task(ws_dir)
    before = tree_digest(ws_dir / ".codex-loop")
    ws = Workspace(ws_dir)
    ws.append_event(kind="round.started", message="Round 4 under strict-loop")  # the only running task
    r = ws.update_state(task_id="parser-fix", task="legacy step 4", result_summary="done", verification_summary="ok")
    assert r.iteration == 4 and r.warnings == []
    paths = ws.task_paths("parser-fix")
    records = read_jsonl(paths.iterations)
    assert [x["iteration"] for x in records] == [1, 2, 3, 4]
    assert records[0]["task"] == "legacy step 1" and records[1]["progress"] == "none" and records[2]["duration_s"] == 33
    events = read_jsonl(paths.events)
    kinds = [e["kind"] for e in events]
    assert kinds[:3] == ["task.initialized", "legacy.event", "legacy.event"] and "task.migrated" in kinds
    assert events[1]["message"] == "Round 1" and events[2]["data"]["legacy"]["details"] == {"k": 1}
    assert sorted(p.name for p in paths.rounds.iterdir()) == [f"iteration-000{i}.md" for i in range(1, 5)]
    assert tree_digest(ws_dir / ".codex-loop") == before  # the original files are never modified
    listed = ws.list_tasks()
    assert [(t.task_id, t.source, t.iteration) for t in listed] == [("parser-fix", "agent-loop", 4)]
    assert ws.rebuild_state(task_id="parser-fix").iteration == 4


def test_legacy_gap_in_ledger_is_filled_not_renumbered(ws_dir):
    root = _legacy_task(ws_dir, "gappy", rounds=3)
    lines = (root / "iterations.jsonl").read_text().splitlines()
    (root / "iterations.jsonl").write_text(lines[2] + "\n")  # only round 3 survives in the ledger
    state = json.loads((root / "state.json").read_text())
    state["history"] = []
    (root / "state.json").write_text(json.dumps(state))
    ws = Workspace(ws_dir)
    ws.append_event(task_id="gappy", kind="note", message="migrate")
    records = read_jsonl(ws.task_paths("gappy").iterations)
    assert [x["iteration"] for x in records] == [1, 2, 3]
    assert "missing from its iterations.jsonl" in records[0]["task"] and records[2]["task"] == "legacy step 3"
