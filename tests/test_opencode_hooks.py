"""OpenCode's row through the real entry points, on what OpenCode 1.18.33 really handed our plugin and printed: every
payload of one captured run replayed through the hook (tests/fixtures/hooks/opencode_hooks.json, by
tests/capture_opencode.py), its pause, the plugin itself under Node (its fail-closed gate and its whisper), the
captured streams through the supervisor's adapter, ``strict-loop install opencode`` and the per-run wiring of
``supervise --harness opencode``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli, tree_files

from strict_loop import Workspace
from strict_loop.base.errors import LoopError
from strict_loop.harness import handler
from strict_loop.harness.opencode import plugin_text
from strict_loop.headless import wiring as headless
from strict_loop.headless.streambase import signed_out
from strict_loop.headless.streams import adapter_for

FIXTURES = Path(__file__).parent / "fixtures"
CAPTURED = [row["payload"] for row in json.loads((FIXTURES / "hooks" / "opencode_hooks.json").read_text())]
PROBE = "ls /nonexistent-strict-loop-probe"


def start(ws: Path, **contract) -> Workspace:
    w = Workspace(ws)
    w.init_state(task_id="t1", goal="Fix the helper", global_stop_condition="the test passes", **contract)
    return w


def replay(ws: Path, payload: dict, **changes) -> dict | None:
    """One captured payload through the hook, as the plugin hands it to ``strict-loop hook opencode``."""
    text = json.dumps(payload).replace("WORKSPACE", str(ws))
    out = handler.handle("opencode", json.dumps({**json.loads(text), **changes}), env={}, cwd="/")
    return json.loads(out) if out else None


def turns(ws: Path) -> list[dict]:
    return [e["data"] for e in read_jsonl(ws / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"]


def test_every_captured_call_is_recorded_with_its_payload_outcome_and_words_and_the_prompt_once(ws_dir):
    """The person's prompt; each call with its arguments, its output, the shell's exit code, the file it names and the
    text written before it; the edit whose old text was not there (no tool.execute.after: the plugin took it from the
    session's events) and the call of a tool that does not exist, both failures. The call the dump refused never ran:
    it has no PostToolUse."""
    start(ws_dir)
    for payload in CAPTURED:
        assert replay(ws_dir, payload) is None  # nothing to say: running, attended
    seen = [
        (t["tool"], t["args"].get("command") or t["args"].get("filePath"), t.get("exit_code"), t.get("error"))
        for t in turns(ws_dir)
    ]
    assert seen == [
        ("user_prompt", None, None, None),
        ("read", "calc.py", None, False),
        ("write", "NOTES.md", None, False),
        ("edit", "calc.py", None, False),
        ("edit", "calc.py", None, True),
        ("bash", PROBE, 2, True),
        ("bash", "echo WHISPER ok", 0, False),
        ("bash", "echo b; exit 3", 3, True),
        ("bash", "echo a", 0, False),
        ("invalid", None, None, True),
    ]
    prompt, read, _, _, failed, probe = turns(ws_dir)[:6]
    assert prompt["output"] == '"Fix calc.py"' and prompt["actor"] == "person"
    assert "2:     return a - b" in read["output"] and read["thought"] == "First I will read the helper."
    assert read["hook"] == {**read["hook"], "harness": "opencode", "event": "PostToolUse", "tool_use_id": "call_0002"}
    assert failed["output"].startswith("Could not find oldString") and failed["thought"] == "Again."
    assert "No such file or directory" in probe["output"] and probe["thought"] == "Now the probe."


def test_while_paused_a_call_is_refused_a_note_allowed_an_unreadable_call_refused_and_the_loop_never_written(ws_dir):
    ws = start(ws_dir)
    before = next(p for p in CAPTURED if p["hook_event_name"] == "PreToolUse" and p["tool_name"] == "bash")
    after = next(p for p in CAPTURED if p["hook_event_name"] == "PostToolUse" and PROBE in json.dumps(p))
    assert replay(ws_dir, before) is None
    said = [replay(ws_dir, after, tool_use_id=f"probe-{n}") for n in range(8)]
    assert any(s and "[strict-loop monitor]" in s["whisper"] for s in said)  # the plugin appends it to the output
    assert ws.supervisor("t1").paused
    refused = replay(ws_dir, before)
    assert refused["decision"] == "block" and refused["reason"].startswith("PAUSED by the strict-loop progress monitor")
    assert replay(ws_dir, before)["reason"].startswith("Still PAUSED")
    note = {"command": "strict-loop append_event --task-id t1 --kind note --message 'stuck on calc'"}
    assert replay(ws_dir, before, tool_input=note) is None  # OpenCode's shell tool is `bash`: a note is allowed
    own = {"tool_name": "strict-loop_report_status", "tool_input": {"task_id": "t1"}}  # OpenCode's MCP tool names
    assert replay(ws_dir, before, **own) is None
    torn = f'{{"hook_event_name": "PreToolUse", "cwd": "{ws_dir}", "tool_name": "edit", "tool_input": {{'
    out = json.loads(handler.handle("opencode", torn, env={}, cwd="/"))
    assert out["decision"] == "block" and "could not decide" in out["reason"]  # fails closed
    ws.resume(task_id="t1", action="continue")
    edit = next(p for p in CAPTURED if p["hook_event_name"] == "PreToolUse" and p["tool_name"] == "edit")
    into_loop = {"filePath": str(ws_dir / ".agent-loop/tasks/t1/state.json"), "oldString": "a", "newString": "b"}
    assert "inside the loop's folder" in replay(ws_dir, edit, tool_input=into_loop)["reason"]  # at any time


NODE = shutil.which("node")
GATE = """
const [plugin, cwd] = process.argv.slice(1);
const { StrictLoop } = await import(new URL(`file://${plugin}`).href);
const hooks = await StrictLoop({ directory: cwd });
const out = {};
try {
  await hooks["tool.execute.before"]({ tool: "bash", sessionID: "s", callID: "c1" }, { args: { command: "ls" } });
  out.before = "allowed";
} catch (err) {
  out.before = String(err.message);
}
const result = { title: "ls", output: "a.txt\\n", metadata: { exit: 0 } };
await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s", callID: "c1", args: { command: "ls" } }, result);
out.after = result.output;
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(NODE is None, reason="no node on PATH to run the OpenCode plugin")
@pytest.mark.parametrize(
    "program, flagged, before",
    [
        ("#!/bin/sh\nexit 3\n", True, "could not decide"),  # a hook that fails, while paused: refused
        ("#!/bin/sh\necho 'not json'\n", True, "could not decide"),  # garbage, while paused: refused
        ("#!/bin/sh\nexit 3\n", False, "allowed"),  # a hook that fails, nothing paused: the session goes on
        ('#!/bin/sh\ncat >/dev/null; echo \'{"decision": "block", "reason": "no"}\'\n', False, "no"),
    ],
)
def test_the_plugin_fails_closed_only_while_a_task_is_paused(tmp_path, program, flagged, before):
    """The shipped plugin under Node (OpenCode runs it under Bun; it uses only Node's built-ins): a hook that cannot be
    asked or answers garbage refuses the call when `.agent-loop/paused/` holds a flag, and not otherwise."""
    hook = tmp_path / "hook"
    hook.write_text(program)
    hook.chmod(0o755)
    (tmp_path / "w" / ".agent-loop" / "paused").mkdir(parents=True)
    if flagged:
        (tmp_path / "w" / ".agent-loop" / "paused" / "t1").touch()
    plugin = tmp_path / "strict-loop.mjs"
    plugin.write_text(standing_in(hook, tmp_path / "w"))
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", GATE, "--", str(plugin), str(tmp_path / "w")],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    out = json.loads(done.stdout)
    assert before in out["before"] and out["after"] == "a.txt\n"


def standing_in(hook: Path, workspace: Path | None) -> str:
    """The plugin as installed, but running ``hook`` (a stand-in program) for every event, as it runs the program
    written in when the install names no hook words."""
    return re.sub(r"^const HOOK = \[.*\];", "const HOOK = [];", plugin_text(str(hook), workspace), flags=re.M)


@pytest.mark.skipif(NODE is None, reason="no node on PATH to run the OpenCode plugin")
def test_the_installed_plugin_runs_the_thin_hook_and_the_warm_daemon_answers_it(tmp_path):
    """OpenCode's plugin starts the hook as a program of its own for every event: the thin hook (no site, ~15 ms when
    the workspace's daemon answers), as every other harness's command hook, not the console script (~50 ms)."""
    from test_thin_hooks import start, wait_status

    ws = tmp_path / "w"
    ws.mkdir()
    start(ws)
    plugin = tmp_path / "strict-loop.mjs"
    plugin.write_text(plugin_text(shutil.which("strict-loop") or "strict-loop", ws))
    gate = [NODE, "--input-type=module", "-e", GATE, "--", str(plugin), str(ws)]
    subprocess.run(gate, capture_output=True, text=True, timeout=30, check=True)  # the first call starts the daemon
    served = wait_status(ws)["served"]
    out = json.loads(subprocess.run(gate, capture_output=True, text=True, timeout=30, check=True).stdout)
    assert out == {"before": "allowed", "after": "a.txt\n"} and wait_status(ws)["served"] == served + 2
    calls = [e for e in read_jsonl(ws / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"]
    assert [c["data"]["args"] for c in calls] == [{"command": "ls"}] * 2


@pytest.mark.skipif(NODE is None, reason="no node on PATH to run the OpenCode plugin")
def test_the_plugin_appends_a_whisper_to_the_tool_output_and_stands_aside_for_the_runs_own_copy(tmp_path):
    hook = tmp_path / "hook"
    hook.write_text('#!/bin/sh\ncat >/dev/null; echo \'{"whisper": "[strict-loop monitor] slow down"}\'\n')
    hook.chmod(0o755)
    plugin = tmp_path / "strict-loop.mjs"
    plugin.write_text(standing_in(hook, None))
    run = [NODE, "--input-type=module", "-e", GATE, "--", str(plugin), str(tmp_path)]
    out = json.loads(subprocess.run(run, capture_output=True, text=True, timeout=30, check=True).stdout)
    assert out == {"before": "allowed", "after": "a.txt\n\n\n[strict-loop monitor] slow down"}
    env = {"PATH": "/usr/bin:/bin", headless.OPENCODE_PLUGIN_ENV: str(tmp_path / "another.mjs")}
    aside = subprocess.run(run, capture_output=True, text=True, env=env)
    assert aside.returncode != 0 and "is not a function" in aside.stderr  # no hooks at all: the run's copy records


def replay_stream(case: str):
    meta = json.loads((FIXTURES / "streams" / f"opencode-{case}.meta.json").read_text())
    adapter = adapter_for("opencode")
    lines = (FIXTURES / "streams" / f"opencode-{case}.jsonl").read_text().splitlines()
    calls = [c for line in lines for c in adapter.feed(line)]
    return calls, adapter.finish(meta["exit_code"], meta["timed_out"])


def test_the_stream_gives_every_call_by_its_id_the_session_tokens_and_the_last_text():
    calls, outcome = replay_stream("calls")
    assert [(c.call_id, c.turn["tool"], c.turn["error"]) for c in calls][:5] == [
        ("call_0002", "read", False),
        ("call_0004", "write", False),
        ("call_0006", "edit", False),
        ("call_0008", "edit", True),
        ("call_0010", "bash", True),
    ]
    refused = next(c for c in calls if c.turn["args"].get("command") == "echo REFUSE me")
    assert refused.turn["error"] and refused.turn["output"] == "CAPTURE: refused"
    assert calls[0].turn["thought"] == "First I will read the helper." and calls[0].turn["paths"] == ["calc.py"]
    assert outcome.ok and outcome.session_id.startswith("ses_") and outcome.last_text == "Done."
    assert (outcome.input_tokens, outcome.output_tokens, outcome.cost_usd) == (1000, 100, 0.0)


def test_a_refused_request_fails_and_a_run_not_signed_in_says_so():
    calls, outcome = replay_stream("api-error")
    assert calls == [] and not outcome.ok and outcome.reason == "failed: APIError 400: scripted API error"
    assert not signed_out(outcome)
    adapter = adapter_for("opencode")
    line = (
        (FIXTURES / "streams" / "opencode-api-error.jsonl").read_text().replace('"statusCode":400', '"statusCode":401')
    )
    adapter.feed(line.replace("scripted API error", "Incorrect API key provided"))
    assert signed_out(adapter.finish(1, False))


def test_odd_stream_lines_give_no_call_and_never_raise():
    adapter = adapter_for("opencode")
    lines = [
        {"type": "tool_use", "part": {"callID": 7, "tool": "bash"}},
        {"type": "tool_use", "part": {"callID": "c0", "tool": "bash", "state": {"status": "running"}}},
        {"type": "tool_use", "part": {"callID": "c1", "tool": "bash", "state": {"status": "completed", "input": "x"}}},
        {"type": "step_finish", "part": {"tokens": {"input": -1, "output": True}, "cost": "a lot"}},
        {"type": "text", "part": {"text": 5}},
        "not an object",
    ]
    calls = [c for line in lines for c in adapter.feed(json.dumps(line))]
    assert [(c.call_id, c.turn["args"], c.turn["output"]) for c in calls] == [("c1", {}, "")]
    outcome = adapter.finish(0, False)
    assert outcome.ok and (outcome.input_tokens, outcome.output_tokens, outcome.cost_usd) == (0, 0, 0.0)


@pytest.fixture
def place(tmp_path, monkeypatch):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home, ws


@pytest.mark.parametrize("scope", ["project", "user"])
def test_install_writes_plugin_server_and_skill_once_and_uninstall_restores_every_byte(place, scope, tmp_path):
    home, ws = place
    base = ws if scope == "project" else Path(os.environ["XDG_CONFIG_HOME"]) / "opencode"  # the test's own (conftest)
    base.mkdir(parents=True, exist_ok=True)
    tmp_path = tmp_path if scope == "project" else base  # every file the install may touch is under it
    theirs = '{\n  "$schema": "https://opencode.ai/config.json",\n  "mcp": {},\n  "model": "a/b"\n}\n'
    (base / "opencode.json").write_text(theirs)
    before = tree_files(tmp_path)
    dry = run_cli("install", "opencode", "--scope", scope, "--workspace", str(ws), "--dry-run", cwd=ws).stdout
    assert "+++ " in dry and tree_files(tmp_path) == before
    run_cli("install", "opencode", "--scope", scope, "--workspace", str(ws), cwd=ws)
    config = json.loads((base / "opencode.json").read_text())
    assert config["mcp"]["strict-loop"]["type"] == "local" and config["model"] == "a/b"
    assert config["mcp"]["strict-loop"]["command"][-2:] == ["--workspace", str(ws)]
    plugins = (ws / ".opencode" if scope == "project" else base) / "plugins"
    code = (plugins / "strict-loop.js").read_text()
    assert f"const WORKSPACE = {json.dumps(str(ws))};" in code and 'const STRICT_LOOP = "/' in code
    assert (plugins.parent / "skills" / "strict-agent-loop" / "SKILL.md").is_file()
    installed = tree_files(tmp_path)
    assert run_cli("install", "opencode", "--scope", scope, "--workspace", str(ws), cwd=ws).stdout.startswith("nothing")
    assert tree_files(tmp_path) == installed
    run_cli("install", "opencode", "--scope", scope, "--workspace", str(ws), "--uninstall", cwd=ws)
    assert tree_files(tmp_path) == before


def test_install_refuses_a_plugin_or_server_entry_not_ours_and_a_config_with_comments(place):
    _, ws = place
    (ws / ".opencode" / "plugins").mkdir(parents=True)
    (ws / ".opencode" / "plugins" / "strict-loop.js").write_text("export const Mine = async () => ({});\n")
    failed = run_cli("install", "opencode", "--workspace", str(ws), cwd=ws, check=False)
    assert failed.returncode == 2 and "not strict-agent-loop's OpenCode plugin" in failed.stderr
    (ws / ".opencode" / "plugins" / "strict-loop.js").unlink()
    (ws / "opencode.json").write_text('{"mcp": {"strict-loop": {"type": "local", "command": ["my-server"]}}}')
    failed = run_cli("install", "opencode", "--workspace", str(ws), cwd=ws, check=False)
    assert failed.returncode == 2 and "runs ['my-server']" in failed.stderr
    (ws / "opencode.json").write_text('{"model": "a/b", // mine\n}\n')
    failed = run_cli("install", "opencode", "--workspace", str(ws), cwd=ws, check=False)
    assert failed.returncode == 2 and "is not valid JSON" in failed.stderr
    assert not (ws / ".opencode" / "skills").exists() and not list((ws / ".opencode" / "plugins").iterdir())


def test_a_supervised_run_gets_our_plugin_and_server_through_config_content_and_the_persons_config_stays(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    theirs = {"plugin": ["their-plugin"], "mcp": {"docs": {"type": "remote", "url": "https://x"}}}
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin", "OPENCODE_CONFIG_CONTENT": json.dumps(theirs)}
    wiring = headless.wire("opencode", "opencode", "do it", ws, "t1", tmp_path / "scratch", env=env)
    assert wiring.argv[:5] == ["opencode", "run", "--format", "json", "--auto"] and wiring.argv[-2:] == ["--", "do it"]
    content = json.loads(wiring.env["OPENCODE_CONFIG_CONTENT"])
    plugin = Path(wiring.env[headless.OPENCODE_PLUGIN_ENV])
    assert content["plugin"] == ["their-plugin", plugin.as_uri()] and plugin.is_relative_to(tmp_path / "scratch")
    assert f"const WORKSPACE = {json.dumps(str(ws))};" in plugin.read_text()
    assert set(content["mcp"]) == {"docs", "strict-loop"} and content["mcp"]["strict-loop"]["command"][-1] == str(ws)
    assert wiring.env["STRICT_LOOP_TASK"] == "t1" and wiring.env["STRICT_LOOP_SUPERVISOR"] == "1"
    tmp = Path(wiring.env["TMPDIR"])  # OpenCode leaves a library in TMPDIR on every start: the run's folder, removed
    assert tmp.is_dir() and tmp.is_relative_to(tmp_path / "scratch")
    wiring.cleanup()
    assert not tmp.exists()
    resumed = headless.wire("opencode", "opencode", "go", ws, "t1", tmp_path / "s2", session_id="ses_abc123def456ghi")
    assert resumed.argv[5:7] == ["--session", "ses_abc123def456ghi"]
    with pytest.raises(LoopError, match="OPENCODE_CONFIG_CONTENT"):
        headless.wire("opencode", "opencode", "x", ws, "t1", tmp_path / "s3", env={"OPENCODE_CONFIG_CONTENT": "[1]"})
