"""The hook daemon (``hookd``): real ``strict-loop hook claude`` processes, real sockets, real files.

Every test runs in its own ``$XDG_RUNTIME_DIR`` (conftest's ``hook_daemon_dir``), whose daemons are
killed at teardown. That a call was served by a daemon is shown by the daemon's own count of the
requests it served (``python -m strict_loop.harness.daemon status``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import hook_daemon_pids, read_jsonl

from strict_loop import Workspace
from strict_loop.harness import client, daemon, handler

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
EXE = shutil.which("strict-loop", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
pytestmark = pytest.mark.skipif(EXE is None, reason="the strict-loop console script is not installed: pip install -e .")


def payload(name: str, ws: Path, **changes) -> str:
    data = json.loads((FIXTURES / f"{name}.json").read_text().replace("WORKSPACE", str(ws)))
    data.update(changes)
    return json.dumps(data)


def run_hook(ws: Path, name: str, daemon: bool = True, extra_env: dict | None = None, **changes) -> str:
    env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
    env.update({"STRICT_LOOP_HOOKD": "1" if daemon else "0", **(extra_env or {})})
    proc = subprocess.run(
        [EXE, "hook", "claude"],
        input=payload(name, ws, **changes),
        capture_output=True,
        text=True,
        cwd="/",
        env=env,
        timeout=60,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    return proc.stdout


def fail(ws: Path, daemon: bool = True, **kw) -> str:
    return run_hook(ws, "claude_post_tool_use_failure", daemon, tool_input={"command": "pytest -q"}, **kw)


def answer_in_process(ws: Path, name: str, **changes) -> str:
    """What ``strict-loop hook claude`` with the daemon off prints, in this process: handler.main's own steps.

    For the reference side of a comparison; the processes, the daemon and the off switch are tested as processes.
    """
    env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
    env["STRICT_LOOP_HOOKD"] = "0"
    out = handler.handle("claude", payload(name, ws, **changes), env=env, cwd="/")
    return out + "\n" if out else ""


def start(ws: Path) -> None:
    ws.mkdir(exist_ok=True)
    Workspace(ws).init_state(task_id="t1", goal="Make the tests pass", global_stop_condition="pytest passes")


def status(ws: Path, wait: float = 10.0) -> dict | None:
    """The workspace's daemon status, waiting up to ``wait`` s for one to answer (a hook starts it in the
    background)."""
    deadline = time.monotonic() + wait
    while True:
        found = daemon.status(str(ws))
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def events(ws: Path) -> list[dict]:
    return read_jsonl(ws / ".agent-loop/tasks/t1/events.jsonl")


def comparable(ws: Path) -> list[tuple]:
    """The event ledger without what differs between two runs (times, the workspace's path)."""
    return [
        (e["kind"], e["message"].replace(str(ws), "W"), json.dumps(e["data"], sort_keys=True).replace(str(ws), "W"))
        for e in events(ws)
        if e["kind"] != "task.initialized"
    ]  # its data holds the time of creation


def gone(pid: int, wait: float = 8.0) -> bool:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True  # exited; its parent (the hook that started it, long gone) does not reap it
        except (OSError, IndexError):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
def test_with_and_without_the_daemon_the_answers_and_the_ledger_are_the_same(tmp_path):
    alone, served = tmp_path / "alone", tmp_path / "served"
    start(alone)
    start(served)
    failed = {"tool_input": {"command": "pytest -q"}}
    said = [answer_in_process(alone, "claude_post_tool_use_failure", **failed) for _ in range(8)]
    outputs = {alone: [*said, answer_in_process(alone, "claude_pre_tool_use")]}
    said = [fail(served)]
    assert status(served)["served"] == 0  # the first call worked in-process, then started the daemon
    said += [fail(served) for _ in range(7)]
    outputs[served] = [*said, run_hook(served, "claude_pre_tool_use")]
    outputs = {ws: [out.replace(str(ws), "W") for out in said] for ws, said in outputs.items()}
    assert outputs[alone] == outputs[served]
    texts = [json.loads(out)["hookSpecificOutput"] if out else None for out in outputs[served]]
    assert [i for i, t in enumerate(texts[:8]) if t] == [3, 4, 5]  # two whispers, each said once, then the pause
    assert "PAUSED" in texts[5]["additionalContext"] and texts[8]["permissionDecision"] == "deny"
    assert comparable(alone) == comparable(served)
    assert status(served)["served"] == 5  # calls 2..6: once the sixth paused the task, the hook decides in-process
    assert hook_daemon_pids(Path(os.environ["XDG_RUNTIME_DIR"]) / "strict-loop") == [status(served)["pid"]]


@pytest.mark.slow
def test_a_secret_in_the_hooks_environment_is_masked_though_the_daemon_never_had_it(ws_dir):
    start(ws_dir)
    fail(ws_dir)
    pid = status(ws_dir)["pid"]
    run_hook(
        ws_dir,
        "claude_post_tool_use",
        extra_env={"DEPLOY_TOKEN": "s3cr3t-value-123", "NOT_UTF8": "caf\udce9"},
        tool_response={"stdout": "deploying with s3cr3t-value-123", "stderr": ""},
    )
    assert status(ws_dir)["served"] == 0  # another secret, another daemon's socket: this one never hears of it
    assert b"s3cr3t-value-123" not in Path(f"/proc/{pid}/environ").read_bytes()
    ledger = (ws_dir / ".agent-loop/tasks/t1/events.jsonl").read_text()
    assert "s3cr3t-value-123" not in ledger and events(ws_dir)[-1]["data"]["output"] == "deploying with ***"


LEAN = """
import json, sys
from strict_loop.harness import handler
data = json.dumps({"hook_event_name": sys.argv[2], "cwd": sys.argv[1], "tool_name": "Bash",
                   "tool_input": {"command": "ls"}, "tool_response": {"stdout": "x"}})
out = handler.handle("claude", data, env={"STRICT_LOOP_HOOKD": "0"}, cwd="/")
print(json.dumps([out, "pydantic" in sys.modules]))
"""


@pytest.mark.parametrize(
    ("where", "event", "heavy"),
    [("empty", "PostToolUse", False), ("ws", "PreToolUse", False), ("ws", "PostToolUse", True)],
)
def test_no_loop_and_a_pretooluse_on_a_running_task_never_import_pydantic(tmp_path, where, event, heavy):
    """The two calls a harness makes most without anything to record stay on the lean path; recording does not."""
    start(tmp_path / "ws")
    (tmp_path / "empty").mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", LEAN, str(tmp_path / where), event], capture_output=True, text=True, check=True
    )
    assert json.loads(proc.stdout) == ["", heavy]


def test_a_runtime_folder_open_to_others_means_no_daemon_and_the_same_records(ws_dir, hook_daemon_dir):
    start(ws_dir)
    hook_daemon_dir.mkdir(mode=0o700)
    os.chmod(hook_daemon_dir, 0o777)
    assert client.socket_path(ws_dir, os.environ) is None
    fail(ws_dir)
    time.sleep(0.2)  # a daemon, had one been started, would have bound its socket by now
    assert list(hook_daemon_dir.iterdir()) == [] and daemon.status(str(ws_dir)) is None
    assert [e["data"]["turn"] for e in events(ws_dir) if e["kind"] == "tool_call"] == [0]


@pytest.mark.slow
def test_a_stale_socket_file_is_replaced_by_a_live_daemon(ws_dir):
    start(ws_dir)
    path = client.socket_path(ws_dir, os.environ)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(path))  # a socket file nobody listens on: what a killed daemon leaves behind
    stale = path.stat().st_ino
    fail(ws_dir)  # refused: handled in-process, and a daemon is started
    assert status(ws_dir)["served"] == 0 and path.stat().st_ino != stale
    fail(ws_dir)
    assert status(ws_dir)["served"] == 1
    assert [e["data"]["turn"] for e in events(ws_dir) if e["kind"] == "tool_call"] == [0, 1]


@pytest.mark.slow
def test_a_killed_daemon_loses_nothing_and_is_started_again(ws_dir):
    start(ws_dir)
    fail(ws_dir)
    first = status(ws_dir)["pid"]
    os.kill(first, signal.SIGKILL)
    assert gone(first)
    fail(ws_dir)  # the socket file is still there, nobody answers: in-process
    fail(ws_dir)
    assert [e["data"]["turn"] for e in events(ws_dir) if e["kind"] == "tool_call"] == [0, 1, 2]
    again = status(ws_dir)
    assert again["pid"] != first


@pytest.mark.slow
def test_the_daemon_exits_when_the_workspace_is_deleted(ws_dir):
    start(ws_dir)
    fail(ws_dir)
    found = status(ws_dir)
    path = client.socket_path(ws_dir, os.environ)
    shutil.rmtree(ws_dir / ".agent-loop")
    assert gone(found["pid"]) and not path.exists()


@pytest.mark.slow
def test_the_daemon_exits_when_idle(ws_dir):
    start(ws_dir)
    fail(ws_dir, extra_env={"STRICT_LOOP_HOOKD_IDLE": "1"})
    found = status(ws_dir)
    assert gone(found["pid"]) and daemon.status(str(ws_dir)) is None


@pytest.mark.slow
def test_a_terminated_daemon_removes_its_socket_and_lock(ws_dir, hook_daemon_dir):
    start(ws_dir)
    fail(ws_dir)
    pid = status(ws_dir)["pid"]
    os.kill(pid, signal.SIGTERM)
    assert gone(pid) and list(hook_daemon_dir.iterdir()) == []


@pytest.mark.slow
def test_a_stop_event_is_never_sent_to_the_daemon(ws_dir):
    start(ws_dir)
    fail(ws_dir)
    status(ws_dir)
    assert run_hook(ws_dir, "claude_stop") == ""
    assert status(ws_dir)["served"] == 0


def test_off_switch_starts_no_daemon(ws_dir, hook_daemon_dir):
    start(ws_dir)
    fail(ws_dir, daemon=False)
    time.sleep(0.2)
    assert daemon.status(str(ws_dir)) is None and not list(hook_daemon_dir.glob("*.sock"))


class Server:
    """A stand-in daemon on a real socket that misbehaves on cue, to pin down the client's commit rule."""

    def __init__(self, path: Path, behaviour: str) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(1)
        self.behaviour = behaviour
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            daemon.read_request(conn)
            if self.behaviour == "no-ack":
                time.sleep(0.5)
                return
            conn.sendall(client.ACK)
            assert conn.recv(1) == client.GO
            if self.behaviour == "answer":
                conn.sendall(client.ANSWERED + b'{"ok": 1}')

    def close(self) -> None:
        self.thread.join(5)
        self.listener.close()


@pytest.mark.parametrize(
    ("behaviour", "outcome"), [("no-ack", "not served"), ("die-after-go", "unanswered"), ("answer", '{"ok": 1}')]
)
def test_the_client_falls_back_only_before_the_daemon_took_the_request(tmp_path, monkeypatch, behaviour, outcome):
    monkeypatch.setattr(client, "ACK_TIMEOUT_S", 0.3)
    path = tmp_path / "d.sock"
    server = Server(path, behaviour)
    try:
        got = client.ask(path, {"op": "hook"}, b"{}")
    except client.NotServed:
        got = "not served"
    except client.Unanswered:  # taken, then nothing: the hook must not read that as 'nothing to say'
        got = "unanswered"
    server.close()
    assert got == outcome
    with pytest.raises(client.NotServed):
        client.ask(tmp_path / "nobody.sock", {"op": "hook"}, b"{}")


def test_a_paused_tasks_pre_tool_call_never_reaches_the_daemon_socket(ws_dir):
    """Issue 19, item 2 (a daemon's silence after GO let the call run) and issue 25, item 2 (whatever listens on the
    socket answered a paused task's calls): while paused, the hook decides itself and asks no daemon."""
    start(ws_dir)
    for _ in range(8):
        answer_in_process(ws_dir, "claude_post_tool_use_failure", tool_input={"command": "pytest -q"})
    assert Workspace(ws_dir).supervisor("t1").paused
    env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(client.socket_path(ws_dir.resolve(), env)))
        listener.listen(1)
        listener.setblocking(False)
        out = handler.handle("claude", payload("claude_pre_tool_use", ws_dir), env=env, cwd="/", daemon=True)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    decision = json.loads(out)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny" and "PAUSED" in decision["permissionDecisionReason"]
