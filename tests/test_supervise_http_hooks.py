"""`strict-loop supervise --harness claude` wires Claude Code's HTTP hooks into the workspace's endpoint (issue 27).

Fast: the wiring as ``wire`` builds it, and a fake ``claude`` run by the real supervisor and CLI. What the entries do
under the real binary (served over HTTP, the endpoint killed while paused and the next call still denied) is in
tests/test_supervisor_e2e.py; the gate's own behaviour in tests/test_http_hooks.py.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli

from strict_loop import Workspace, hookd
from strict_loop.harness import client, daemon, install
from strict_loop.headless import wiring as headless
from strict_loop.supervisor.runner import Supervisor

TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit")


def _settings(wired: headless.Wiring) -> dict:
    return json.loads(wired.argv[wired.argv.index("--settings") + 1])


def test_the_claude_wiring_carries_http_hooks_beside_the_gate_and_the_token_only_in_the_environment(tmp_path: Path):
    ws = tmp_path / "ws"
    (ws / ".agent-loop").mkdir(parents=True)
    env = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": "example.invalid"}
    env.pop("no_proxy", None)
    wired = headless.wire("claude", "claude", "go on", ws, "t", tmp_path / "s", env=env, mcp=False)
    record, folder = daemon.read_record(ws, env), daemon.http_dir(ws, env)
    assert record is not None and folder is not None and daemon.TOKEN_ENV not in env  # the caller's env untouched
    assert (daemon.record_path(ws, env).stat().st_mode & 0o777) == 0o600  # private, in the person's config folder
    token = record["token"]
    assert wired.env[daemon.TOKEN_ENV] == token and wired.secret_env == {daemon.TOKEN_ENV: token}
    assert not any(token in arg for arg in wired.argv)  # never on the command line
    assert wired.env["NO_PROXY"] == "example.invalid,127.0.0.1" and wired.env["no_proxy"] == "127.0.0.1"
    settings = _settings(wired)
    assert settings["httpHookAllowedEnvVars"] == [daemon.TOKEN_ENV]
    program = install.program("strict-loop")  # this installation's
    assert settings["hooks"] == daemon.claude_http_groups(program, ws, folder, record["port"])  # install's entries
    for event in TOOL_EVENTS:
        (gate, web) = settings["hooks"][event][0]["hooks"]
        kind = "pre" if event == "PreToolUse" else "post"
        assert gate["command"] == "/bin/sh" and gate["args"][2:6] == [
            daemon.GATE_NAME,
            kind,
            f"{ws}/.agent-loop",
            str(folder),
        ]
        assert gate["args"][6:] == client.hook_words(program, "claude", ws)  # the (thin) hook, when it must
        assert web["url"] == f"http://127.0.0.1:{record['port']}{daemon.HTTP_PATH}" and web["type"] == "http"
        assert web["headers"] == {daemon.TOKEN_HEADER: "${" + daemon.TOKEN_ENV + "}"}
    stop = settings["hooks"]["Stop"][0]["hooks"]
    assert _hook_of(stop[0]["command"]) == "claude"  # the Stop's decision is the hook's, as before
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["args"][2] == "session"  # starts the endpoint
    again = headless.wire("claude", "claude", "go on", ws, "t", tmp_path / "s", env=env, mcp=False)
    assert again.env[daemon.TOKEN_ENV] == token  # one record per workspace: kept
    command = headless.wire("claude", "claude", "go on", ws, "t", tmp_path / "s", env=env, http_hooks=False)
    hooks = _settings(command)["hooks"]
    assert daemon.TOKEN_ENV not in command.env and not command.secret_env and "SessionStart" not in hooks
    assert all(_hook_of(h["hooks"][0]["command"]) == "claude" for h in hooks["PreToolUse"])


def _hook_of(command: str) -> str:
    """The harness a hook command (``strict-loop hook NAME`` or the thin hook's words) is for."""
    words = shlex.split(command)
    return words[words.index("hook") + 1]


def test_without_a_private_runtime_folder_the_run_gets_command_hooks(tmp_path: Path):
    ws, run = tmp_path / "ws", tmp_path / "run"
    (ws / ".agent-loop").mkdir(parents=True)
    (run / "strict-loop").mkdir(parents=True, mode=0o777)
    (run / "strict-loop").chmod(0o777)  # another user could plant files there
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run)}
    wired = headless.wire("claude", "claude", "go on", ws, "t", tmp_path / "s", env=env, mcp=False)
    assert daemon.TOKEN_ENV not in wired.env and "SessionStart" not in _settings(wired)["hooks"]


CLAUDE_ECHOES_ITS_TOKEN = """
token = os.environ.get("STRICT_LOOP_HOOK_TOKEN", "none")
with open(os.environ["SPY"], "a") as fh:
    fh.write(json.dumps({"argv": sys.argv[1:], "token": token}) + "\\n")
sid = "0b9f3a52-8d7e-4b8e-9c61-1f2a3b4c5d6e"
said = "the hook token is " + token
print(json.dumps({"type": "assistant", "session_id": sid, "message": {"content": [{"type": "text", "text": said}]}}))
print(json.dumps({"type": "result", "is_error": False, "result": said, "session_id": sid}))
print(said, file=sys.stderr)
"""


def test_the_token_given_to_the_child_is_masked_in_every_file_and_supervise_hooks_command_leaves_it_out(
    task: Workspace, tmp_path: Path, monkeypatch
):
    binary = tmp_path / "claude"
    binary.write_text(f"#!{sys.executable} -S\nimport json, os, sys\n{CLAUDE_ECHOES_ITS_TOKEN}\n")
    binary.chmod(0o755)
    spy = tmp_path / "spy.jsonl"
    env = {**os.environ, "SPY": str(spy)}
    settings = {"max_invocations": 1, "heartbeat_s": 3600}
    Supervisor(
        task.root, "t", "claude", harness_bin=str(binary), env=env, stderr=io.StringIO(), overrides=settings
    ).run()
    seen = json.loads(spy.read_text())
    token = daemon.read_record(task.root, env)["token"]
    assert seen["token"] == token and not any(token in arg for arg in seen["argv"])
    folder = task.task_paths("t").supervisor
    written = {p.name: p.read_text() for p in folder.iterdir() if p.is_file()}
    assert "the hook token is ***" in written["invocation-0001.last.txt"] and written["invocation-0001.stderr.txt"]
    assert all(token not in text for text in written.values())
    assert token not in task.task_paths("t").events.read_text()
    monkeypatch.setenv("SPY", str(spy))
    run_cli(
        "supervise",
        "--task-id",
        "t",
        "--harness",
        "claude",
        "--harness-bin",
        str(binary),
        "--max-invocations",
        "1",
        "--hooks",
        "command",
        cwd=task.root,
        check=False,
    )
    seen = json.loads(spy.read_text().splitlines()[-1])
    hooks = json.loads(seen["argv"][seen["argv"].index("--settings") + 1])["hooks"]
    assert seen["token"] == "none" and "SessionStart" not in hooks  # the way back: command hooks, no token
    ends = [e for e in read_jsonl(task.task_paths("t").events) if e["kind"].startswith("supervisor.")]
    assert len([e for e in ends if e["kind"] == "supervisor.invocation"]) == 2


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the gate reads /proc where there is one")
def test_the_gate_takes_a_killed_endpoint_left_a_zombie_for_dead(tmp_path: Path):
    """Where nobody reaps it (a container whose first process does not, a subreaper that waits on something else) a
    killed endpoint stays a zombie: its pid and start time still read, yet it answers nothing; the full hook runs."""
    folder, manager = tmp_path / "run", tmp_path / ".agent-loop"
    folder.mkdir()
    manager.mkdir()
    zombie = subprocess.Popen([sys.executable, "-S", "-c", "pass"])  # not waited for until the end: a zombie
    try:
        while Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(") ", 1)[1].split()[0] != "Z":
            time.sleep(0.005)
        (folder / "state").write_text(f"{zombie.pid} {hookd.start_time(zombie.pid)}\n")
        (folder / f"{zombie.pid}-s1").touch()
        full = ["/bin/sh", "-c", "cat >/dev/null; echo FULL HOOK"]
        argv = ["/bin/sh", "-c", daemon.GATE, daemon.GATE_NAME, "post", str(manager), str(folder), *full]
        env = {"PATH": os.environ["PATH"], "CLAUDE_CODE_SESSION_ID": "s1"}
        done = subprocess.run(argv, input=b"{}", capture_output=True, env=env, check=True)
        assert done.stdout == b"FULL HOOK\n"
    finally:
        zombie.wait()
