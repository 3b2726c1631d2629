"""The Hermes plugin as Hermes drives it: installed by ``strict-loop install hermes``, loaded from its file,
its hooks called in hermes-agent 0.19's order (pre_tool_call, the tool, post_tool_call,
transform_tool_result) on a small recording ``ctx``; each hook runs the real ``strict-loop hook hermes``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import read_jsonl, run_cli
from harness_rig import settle_tasks
from person_rig import person_key

from strict_loop.base import skillfiles

FAILED = json.dumps({"output": "", "exit_code": 1, "error": None})


class Ctx:
    """What the plugin uses of Hermes' PluginContext: ``register_hook``."""

    def __init__(self) -> None:
        self.hooks: dict[str, Callable[..., Any]] = {}

    def register_hook(self, name: str, callback: Callable[..., Any]) -> None:
        self.hooks[name] = callback


def load(path: Path) -> tuple[ModuleType, dict[str, Callable[..., Any]]]:
    spec = importlib.util.spec_from_file_location(f"hermes_plugin_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ctx = Ctx()
    module.register(ctx)
    return module, ctx.hooks


def tool_call(hooks: dict, i: int, command: str = "false") -> tuple[Any, Any]:
    """One terminal call as model_tools.handle_function_call runs it: (pre_tool_call's answer, the result the model
    gets)."""
    common = {
        "tool_name": "terminal",
        "args": {"command": command},
        "task_id": "",
        "session_id": "s1",
        "tool_call_id": f"call_{i}",
        "turn_id": "turn1",
        "api_request_id": "",
        "telemetry_schema_version": 1,
    }
    blocked = hooks["pre_tool_call"](**common, middleware_trace=[])
    if blocked is not None:
        hooks["post_tool_call"](
            **common,
            result=json.dumps({"error": blocked["message"]}),
            status="blocked",
            error_type="plugin_block",
            error_message=blocked["message"],
            duration_ms=0,
            middleware_trace=[],
        )
        return blocked, json.dumps({"error": blocked["message"]})
    hooks["post_tool_call"](
        **common, result=FAILED, status="ok", error_type=None, error_message=None, duration_ms=3, middleware_trace=[]
    )
    changed = hooks["transform_tool_result"](
        **common, result=FAILED, status="ok", error_type=None, error_message=None, duration_ms=3
    )
    return None, changed if isinstance(changed, str) else FAILED


@pytest.fixture
def installed(tmp_path, monkeypatch, ws_dir):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home" / ".hermes"))
    monkeypatch.delenv("STRICT_LOOP_TASK", raising=False)
    run_cli("install", "hermes", "--workspace", str(ws_dir), cwd=tmp_path)
    return load(tmp_path / "home" / ".hermes" / "plugins" / "strict-loop" / "__init__.py")[1]


@pytest.mark.slow  # one real `strict-loop hook hermes` process per hook call (~25 of them)
def test_installed_plugin_records_whispers_into_the_tool_result_blocks_while_paused_and_resumes(installed, ws_dir):
    run_cli("init_state", "--task-id", "t1", "--goal", "g", "--global-stop-condition", "c", cwd=ws_dir)
    settle_tasks(ws_dir)  # the calls before the pause go to the workspace's daemon, as in a session started later
    results = [tool_call(installed, i) for i in range(8)]
    paused_at = next(i for i, (blocked, _) in enumerate(results) if blocked)
    turns = [e["data"] for e in read_jsonl(ws_dir / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"]
    assert len(turns) == paused_at and all(t["tool"] == "terminal" and t["exit_code"] == 1 for t in turns)
    whispered = [r for _, r in results[:paused_at] if r != FAILED]
    assert len(whispered) >= 2 and all(r.startswith(FAILED + "\n") for r in whispered)
    assert all("[strict-loop monitor]" in r for r in whispered)
    blocked = results[paused_at][0]  # recorded in the background: the pause notice rides on the next call's block
    assert (
        blocked["action"] == "block" and "strict-loop resume" in blocked["message"] and "PAUSED" in blocked["message"]
    )
    assert all(b is not None for b, _ in results[paused_at:])  # nothing ran, nothing was recorded
    run_cli("resume", "--task-id", "t1", "--action", "continue", "--person-key", person_key(), cwd=ws_dir)
    assert tool_call(installed, 99, "echo again")[0] is None
    installed["on_session_end"](session_id="s1", completed=True, interrupted=False)  # the end of the agent's run
    assert (
        len([e for e in read_jsonl(ws_dir / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"])
        == paused_at + 1
    )


@pytest.mark.slow  # runs the task's stop check through the real hook process
def test_installed_plugin_keeps_an_unattended_agent_going_at_pre_verify(installed, ws_dir):
    run_cli(
        "init_state",
        "--task-id",
        "t1",
        "--goal",
        "g",
        "--global-stop-condition",
        "done.txt exists",
        "--operating-mode",
        "unattended",
        "--stop-command",
        "test -f done.txt",
        "--next-task",
        "write done.txt",
        cwd=ws_dir,
    )
    verify = {
        "session_id": "s1",
        "platform": "cli",
        "model": "m",
        "coding": True,
        "attempt": 0,
        "final_response": "done",
        "changed_paths": ["a.py"],
        "telemetry_schema_version": 1,
    }
    answer = installed["pre_verify"](**verify)
    assert answer["action"] == "continue" and "write done.txt" in answer["message"]
    (ws_dir / "done.txt").write_text("ok")
    assert installed["pre_verify"](**verify) is None


def test_with_no_running_loop_every_hook_stays_silent(installed, ws_dir):
    assert tool_call(installed, 1) == (None, FAILED)
    assert not (ws_dir / ".agent-loop").exists()


def test_the_plugin_never_raises_into_hermes_when_the_program_is_missing(tmp_path, ws_dir, monkeypatch):
    monkeypatch.setattr(
        sys, "dont_write_bytecode", True
    )  # no __pycache__ in the repo's plugin folder (the wheel copies it)
    module, hooks = load(skillfiles.hermes_plugin_dir() / "__init__.py")
    module.STRICT_LOOP = str(tmp_path / "no-such-program")
    assert tool_call(hooks, 1) == (None, FAILED)
    assert hooks["pre_verify"](session_id="s", changed_paths=["x"]) is None
    assert hooks["transform_tool_result"](tool_name="terminal", result=object()) is None
