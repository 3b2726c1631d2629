"""A real Claude Code permission prompt reaches the person (issue 29): the loop installed with ``strict-loop install
claude``, a scripted model asks for a shell command no permission mode allows, and Claude Code, driven headless as an
SDK host drives it (``--permission-prompt-tool stdio``: the prompt goes to the host), fires its ``Notification`` hook
after 6 s without an answer. The alert reaches a local HTTP receiver within seconds, once; the task says what the agent
waits for until the call, allowed, runs."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest
from alert_rig import FAST, receiver, wait_until
from capture_notifications import sdk_command
from conftest import read_jsonl, run_cli
from harness_rig import Harness, require_binary
from model_servers import AnthropicModel, Final, Shell

from strict_loop import Workspace
from strict_loop.alerts import waiting

pytestmark = pytest.mark.slow
COMMAND = "touch permission-marker"
NOTIFY_AFTER_S = 6  # Claude Code 2.1.332 notifies a permission prompt left unanswered this long


def test_a_real_permission_prompt_reaches_the_person_once(tmp_path: Path, monkeypatch):
    harness = Harness("claude", require_binary("claude"), tmp_path / "home")
    harness.home.mkdir()
    work = tmp_path / "w"
    work.mkdir()
    monkeypatch.setenv("HOME", str(harness.home))
    run_cli("install", "claude", "--workspace", str(work), cwd=work)
    Workspace(work).init_state(task_id="t1", goal="Make the marker", global_stop_condition="the marker exists")
    task = work / ".agent-loop" / "tasks" / "t1"
    shown: list[dict | None] = []
    with receiver() as http, AnthropicModel([Shell(COMMAND), Final("Done.")]) as model:
        harness.configure(model.url)
        env = harness.env(model.url, {**FAST, "STRICT_LOOP_WEBHOOK_URL": http.url("/ok/hook")})
        # --strict-mcp-config: no MCP server (the install's included, ~0.6 s of CPU to start): the prompt and the
        # Notification hook are Claude Code's own, whatever servers it runs
        argv = [*sdk_command(harness.binary), "--strict-mcp-config"]
        proc = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        watchdog = threading.Timer(90, proc.kill)
        watchdog.start()
        try:
            proc.stdin.write(
                json.dumps({"type": "user", "message": {"role": "user", "content": "Go."}}).encode() + b"\n"
            )
            proc.stdin.flush()
            for line in proc.stdout:
                event = json.loads(line)
                if event.get("type") == "control_request":  # the person is asked; nobody answers for a while
                    asked = time.monotonic()
                    wait_until(lambda: http.received, NOTIFY_AFTER_S + 20, "the alert at the receiver")
                    took = time.monotonic() - asked
                    shown.append(waiting.current(task))
                    allow = {"behavior": "allow", "updatedInput": event["request"]["input"]}
                    answer = {"subtype": "success", "request_id": event["request_id"], "response": allow}
                    proc.stdin.write(json.dumps({"type": "control_response", "response": answer}).encode() + b"\n")
                    proc.stdin.flush()
                elif event.get("type") == "result":
                    proc.stdin.close()
            proc.wait(30)
        finally:
            watchdog.cancel()
        time.sleep(0.3)  # a second alert, were one sent, would reach the receiver by now
    assert (work / "permission-marker").is_file()  # allowed, it ran
    [sent] = http.received  # once
    assert sent["body"]["text"].startswith(f"[WAITING] t1: Claude Code waits for you: permission to run `{COMMAND}`")
    assert took < NOTIFY_AFTER_S + 10, took  # within seconds of Claude Code's notification
    assert shown[0] and shown[0]["text"] == f"waiting for you: permission to run `{COMMAND}`"
    assert waiting.current(task) is None  # the call ran: the task no longer waits
    said = [e["data"] for e in read_jsonl(task / "events.jsonl") if e["kind"] == "agent.waiting"]
    assert [(d["kind"], d["command"], d["throttled"]) for d in said] == [("permission", COMMAND, False)]
