"""Issue 27 for Hermes: the plugin ``supervise --harness hermes`` puts in its per-run HERMES_HOME runs the thin hook
(``python -S .../strict_loop/entry.py hook hermes``, ~25 ms a call with the daemon warm, not the ``strict-loop``
console script's ~50 ms), which hands each call to the workspace's hook daemon and decides a paused task's calls in
process, as Codex's, Claude Code's and Gemini CLI's command hooks do.

The plugin is the one ``headless.wiring.wire`` writes, loaded and called as Hermes does; the daemon is a stand-in on
the real socket (``test_thin_hooks.StandIn``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from test_hermes_plugin import load
from test_thin_hooks import ENTRY, StandIn, event, start, turns

from strict_loop.harness import handler
from strict_loop.headless import wiring


@pytest.fixture
def supervised(tmp_path, ws_dir, monkeypatch):
    """The plugin of one supervised Hermes run (its module, its hooks), this process's environment the run's."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes"))
    binary = tmp_path / "hermes-bin"
    binary.write_text("#!/bin/sh\n")
    wired = wiring.wire("hermes", str(binary), "go", ws_dir, "t1", tmp_path / "scratch", mcp=False)
    for name in ("STRICT_LOOP_TASK", "STRICT_LOOP_SUPERVISOR"):  # what Hermes, and so each hook it runs, is given
        monkeypatch.setenv(name, wired.env[name])
    monkeypatch.chdir(ws_dir)
    return load(Path(wired.env["HERMES_HOME"]) / "plugins" / "strict-loop" / "__init__.py")


def call(i: int, command: str = "ls") -> dict:
    common = {"tool_name": "terminal", "args": {"command": command}, "task_id": "", "session_id": "s1"}
    return {**common, "tool_call_id": f"call_{i}", "turn_id": "turn1", "api_request_id": ""}


def test_a_supervised_hermes_runs_the_thin_hook_and_its_calls_reach_the_daemon(supervised, ws_dir):
    module, hooks = supervised
    hook, workspace = module.HOOK, module.WORKSPACE
    assert hook == [sys.executable, "-S", ENTRY] and workspace == str(ws_dir)
    start(ws_dir)
    refusal = b'{"decision": "block", "reason": "said by the daemon"}'
    with StandIn(ws_dir, refusal) as daemon_:
        hooks["post_tool_call"](**call(1), result='{"output": "a", "exit_code": 0}', status="ok")
        hooks["on_session_end"](session_id="s1", completed=False)  # the recording is done
        blocked = hooks["pre_tool_call"](**call(2))
    assert blocked == {"action": "block", "message": "said by the daemon"}
    assert [(h["harness"], h["workspace"], h["env"]) for h, _ in daemon_.received] == [
        ("hermes", str(ws_dir.resolve()), {"STRICT_LOOP_TASK": "t1", "STRICT_LOOP_SUPERVISOR": "1"})
    ] * 2
    assert [p["hook_event_name"] for _, p in daemon_.received] == ["post_tool_call", "pre_tool_call"]
    assert turns(ws_dir) == []  # recorded by the daemon (here a stand-in), not again by the hook


def test_a_paused_tasks_hermes_calls_are_refused_without_the_daemon(supervised, ws_dir):
    module, hooks = supervised
    w = start(ws_dir)
    for n in range(8):
        post = event(ws_dir, "PostToolUse", "pytest -q", "FAILED test_x", n)
        handler.handle("codex", post, env={**os.environ, "STRICT_LOOP_TASK": "t1"}, cwd="/")
    assert w.supervisor("t1").paused
    with StandIn(ws_dir, b"") as daemon_:
        blocked = hooks["pre_tool_call"](**call(9, "touch x"))
    assert blocked is not None and blocked["action"] == "block" and "PAUSED" in blocked["message"], blocked
    assert daemon_.received == []
