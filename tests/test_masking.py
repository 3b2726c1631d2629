"""What a caller reports is stored masked, whichever operation carries it (hostile review): a round's summaries,
a person's resume note (events, handback.md, the note the agent is given), the names of a tool's arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from person_rig import person_key
from test_hooks import hook

from strict_loop import LoopError, Workspace

SECRET = "sUp3rS3cr3tV4lu3xyz"
URL = "https://admin:hunter2pass@internal.example/"


@pytest.fixture
def secret_env(monkeypatch):
    monkeypatch.setenv("MY_SECRET_TOKEN", SECRET)


def leaked(ws: Path) -> list[str]:
    files = [p for p in (ws / ".agent-loop").rglob("*") if p.is_file() and "snapshots.git" not in p.parts]
    return [str(p) for p in files if SECRET.encode() in p.read_bytes() or b"hunter2pass" in p.read_bytes()]


def paused(ws: Path) -> Workspace:
    w = Workspace(ws)
    w.init_state(task_id="t1", goal="Deploy", global_stop_condition="deployed")
    failing = {"tool": "bash", "args": {"command": "deploy"}, "output": "refused", "error": True}
    while not w.supervisor("t1").paused:
        w.append_event(task_id="t1", kind="tool_call", message="deploy", data=failing)
    return w


def test_a_rounds_summaries_are_stored_masked(ws_dir, secret_env):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t1", goal="Deploy", global_stop_condition="deployed")
    ws.update_state(
        task_id="t1",
        task=f"deploy with {SECRET}",
        result_summary=f"deployed with {SECRET}",
        verification_summary=f"curl {URL} answered 200",
        evidence=[f"token {SECRET}"],
        next_task=f"rotate {SECRET}",
    )
    run_cli("report_status", "--task-id", "t1", cwd=ws_dir)
    assert leaked(ws_dir) == []
    last = ws.show_task(task_id="t1").state.recent_rounds[-1]
    assert last.result == "deployed with ***" and "https://***@internal" in last.verification


@pytest.mark.parametrize("action", ["continue", "hand-back"])
def test_a_resume_note_is_stored_and_given_to_the_agent_masked(ws_dir, secret_env, action):
    ws = paused(ws_dir)
    ws.resume(task_id="t1", action=action, note=f"use token {SECRET} and {URL}")
    if action == "continue":
        said = hook("claude", "claude_post_tool_use", ws_dir, env={"STRICT_LOOP_TASK": "t1"})
        context = said["hookSpecificOutput"]["additionalContext"]
        assert "use token ***" in context and SECRET not in context
    else:
        assert "use token ***" in (ws_dir / ".agent-loop/tasks/t1/handback.md").read_text()
    assert leaked(ws_dir) == []


def test_a_note_with_control_characters_is_refused_before_anything_changes(ws_dir):
    ws = paused(ws_dir)
    for note in ("\x1b[31mred\x1b[0m", "a\x00b", "over\rwritten", "c1 \x9b"):
        with pytest.raises(LoopError, match="control characters"):
            ws.resume(task_id="t1", action="hand-back", note=note)
    assert ws.supervisor("t1").paused
    ws.resume(task_id="t1", action="continue", note="line one\r\nline two\twith a tab")
    assert not ws.supervisor("t1").paused
    args = ("resume", "t1", "--action", "continue", "--note", "\x1b]0;title\x07", "--person-key", person_key())
    out = run_cli(*args, cwd=ws_dir, check=False)
    assert out.returncode == 2 and "control characters" in out.stderr


def test_a_secret_naming_a_tool_argument_is_masked(ws_dir, secret_env):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t1", goal="g", global_stop_condition="c")
    ws.append_event(task_id="t1", kind="tool_call", message="call", data={"tool": "api", "args": {SECRET: "v"}})
    assert leaked(ws_dir) == []
