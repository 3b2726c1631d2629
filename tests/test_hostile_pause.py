"""Issue 25, items 2, 9 and 10: an agent prepared before its pause cannot answer it, and answers are bound and recorded
first.

Item 2: (a) ``strict-loop resume`` from a background job answers nothing (a terminal, which shows the pause and asks,
or the person's key is needed); (b) whatever listens on the hook daemon's socket never hears of a paused task's calls,
and no hook request carries the environment; (c) a local process cannot answer on the page with what ``GET /`` or
the MCP token gives it. Item 9: an answer names its pause, and one for a pause answered meanwhile is refused (exit 2,
409). Item 10: an answer is recorded before monitor.json is written; a kill between the two leaves the record, which
is applied, and never a lifted pause without one.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
from conftest import read_jsonl, run_cli
from person_rig import person_key

from strict_loop import Workspace
from strict_loop.harness import client

EXE = shutil.which("strict-loop", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
pytestmark = pytest.mark.skipif(EXE is None, reason="the strict-loop console script is not installed: pip install -e .")
FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
FAILED = {"tool": "Bash", "args": {"command": "pytest -q"}, "output": "FAILED test_x - assert 1 == 2", "error": True}


def pause(ws: Path, task: str = "t1") -> str:
    """Pause ``task`` (made if it is not there) with repeated failures; the pause's id, as its event records it."""
    w = Workspace(ws)
    if not (ws / ".agent-loop" / "tasks" / task).is_dir():
        w.init_state(task_id=task, goal="Make the tests pass", global_stop_condition="pytest passes")
    for _ in range(12):
        if w.supervisor(task).paused:
            break
        w.append_event(task_id=task, kind="tool_call", message="pytest", data=FAILED)
    assert w.supervisor(task).paused
    return events(ws, "spiral.paused", task)[-1]["data"].get("pause")


def events(ws: Path, kind: str, task: str = "t1") -> list[dict]:
    return [e for e in read_jsonl(ws / ".agent-loop" / "tasks" / task / "events.jsonl") if e["kind"] == kind]


def status(ws: Path, task: str = "t1") -> str:
    return json.loads((ws / ".agent-loop" / "tasks" / task / "state.json").read_text())["status"]


# ---------------------------------------------------------------- item 2 (a): resume wants a person


@pytest.mark.parametrize("stdin_tty", [False, True], ids=["background", "stdout-piped"])
def test_resume_from_a_background_job_answers_nothing(ws_dir, stdin_tty):
    pause(ws_dir)
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            [EXE, "resume", "--task", "t1", "--action", "continue"],
            stdin=slave if stdin_tty else subprocess.DEVNULL,  # a terminal to read from, but stdout is a pipe
            capture_output=True,
            cwd=ws_dir,
            text=True,
            timeout=60,
        )
    finally:
        os.close(master), os.close(slave)
    assert proc.returncode == 2 and "no terminal is attached" in proc.stderr
    assert Workspace(ws_dir).supervisor("t1").paused and events(ws_dir, "spiral.resumed") == []


def at_terminal(args: list[str], cwd: Path, answer: bytes) -> tuple[int, str]:
    """Run ``strict-loop ARGS`` on a terminal (stdin, stdout and stderr a pseudo-terminal), typing ``answer`` when it
    asks; its exit code and all it wrote."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([EXE, *args], stdin=slave, stdout=slave, stderr=slave, cwd=cwd, close_fds=True)
    os.close(slave)
    out, asked = b"", False
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's other side is closed
                break
            if not chunk:
                break
            out += chunk
            if not asked and b"[y/N]" in out:
                os.write(master, answer)
                asked = True
    finally:
        os.close(master)
    return proc.wait(30), out.decode("utf-8", "replace")


def test_at_a_terminal_resume_shows_the_pause_asks_and_answers_only_yes(ws_dir):
    pid = pause(ws_dir)
    code, out = at_terminal(
        ["resume", "t1", "--action", "continue", "--note", "use the vendored parser"], ws_dir, b"\n"
    )
    assert code == 2 and f"pause {pid}" in out and "[y/N]" in out and "not confirmed" in out
    assert Workspace(ws_dir).supervisor("t1").paused
    code, out = at_terminal(
        ["resume", "t1", "--action", "continue", "--note", "use the vendored parser"], ws_dir, b"y\n"
    )
    assert code == 0 and "resumed" in out
    (answered,) = events(ws_dir, "spiral.resumed")
    assert answered["data"]["pause"] == pid and not Workspace(ws_dir).supervisor("t1").paused


def test_the_person_key_answers_without_a_terminal_and_nothing_else_does(ws_dir, tmp_path):
    made = subprocess.run([EXE, "person-key"], capture_output=True, text=True, cwd=ws_dir, timeout=60)
    key = Path(made.stdout.strip())
    assert made.returncode == 0 and key.stat().st_mode & 0o777 == 0o600
    pause(ws_dir)
    planted = ws_dir / "key"  # the agent's copy, in the workspace it writes
    shutil.copy(key, planted)
    os.chmod(planted, 0o600)
    readable = tmp_path / "readable.key"
    shutil.copy(key, readable)
    os.chmod(readable, 0o644)
    other = tmp_path / "other.key"
    other.write_text("x" * 40 + "\n")
    os.chmod(other, 0o600)
    for given, said in (
        (planted, "inside the workspace"),
        (readable, "not a file only you can read"),
        (other, "does not hold this machine's person key"),
    ):
        out = run_cli("resume", "t1", "--action", "continue", "--person-key", str(given), cwd=ws_dir, check=False)
        assert out.returncode == 2 and said in out.stderr, (given, out.stderr)
    assert Workspace(ws_dir).supervisor("t1").paused and events(ws_dir, "spiral.resumed") == []
    proc = subprocess.run(
        [EXE, "resume", "t1", "--action", "continue", "--person-key", str(key)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=ws_dir,
        timeout=60,
    )
    assert proc.returncode == 0 and not Workspace(ws_dir).supervisor("t1").paused


# ---------------------------------------------------------------- item 2 (b): the hook and the daemon's socket


class Listener:
    """What a prepared agent leaves on the hook daemon's socket: it takes every request, says go, answers nothing
    (which lets a PreToolUse through), and keeps every byte it was sent."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.sock.settimeout(0.05)
        self.received: list[bytes] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:  # the timeout, or closed
                continue
            with conn:
                conn.settimeout(5)
                head = client.read_exactly(conn, client.HEADER.size)
                sizes = client.HEADER.unpack(head) if len(head) == client.HEADER.size else (0, 0)
                self.received.append(head + client.read_exactly(conn, sum(sizes)))
                conn.sendall(client.ACK)
                conn.recv(1)
                conn.sendall(client.ANSWERED)

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        self.sock.close()


def hook_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
    return {**env, "STRICT_LOOP_HOOKD": "1", **extra}


def run_hook(ws: Path, name: str, env: dict[str, str]) -> str:
    """``strict-loop hook claude`` as the harness runs it: the event's JSON on stdin."""
    data = (FIXTURES / f"{name}.json").read_text().replace("WORKSPACE", str(ws))
    proc = subprocess.run(
        [EXE, "hook", "claude"], input=data, capture_output=True, text=True, cwd="/", env=env, timeout=60
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    return proc.stdout


@contextmanager
def listening(ws: Path, env: dict[str, str]) -> Iterator[Listener]:
    listener = Listener(client.socket_path(ws.resolve(), env))
    try:
        yield listener
    finally:
        listener.close()


def test_a_paused_tasks_calls_are_decided_by_the_hook_never_by_a_listener_on_the_socket(ws_dir):
    pause(ws_dir)
    env = hook_env()
    with listening(ws_dir, env) as listener:
        before = run_hook(ws_dir, "claude_pre_tool_use", env)
        run_hook(ws_dir, "claude_post_tool_use", env)
    decision = json.loads(before)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny" and "PAUSED" in decision["permissionDecisionReason"]
    assert listener.received == []  # not a byte: not the call, not the environment
    assert Workspace(ws_dir).supervisor("t1").paused


def test_a_hook_request_carries_no_environment_only_the_task_it_names(ws_dir):
    Workspace(ws_dir).init_state(task_id="t1", goal="Make the tests pass", global_stop_condition="pytest passes")
    secrets = {"DEPLOY_TOKEN": "s3cr3t-deploy-value", "STRICT_LOOP_WEBHOOK_URL": "https://hooks.example/s3cr3t-path"}
    env = hook_env(STRICT_LOOP_TASK="t1", **secrets)
    with listening(ws_dir, env) as listener:
        run_hook(ws_dir, "claude_post_tool_use", env)
    (request,) = listener.received
    size = client.HEADER.unpack(request[: client.HEADER.size])[0]
    header = json.loads(request[client.HEADER.size : client.HEADER.size + size])
    assert header["env"] == {"STRICT_LOOP_TASK": "t1"}
    assert not any(value.encode() in request for value in secrets.values())


# ---------------------------------------------------------------- item 2 (c) and item 9: the page


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def dashboard(ws: Path) -> Iterator[tuple[str, list[str]]]:
    """``strict-loop dashboard`` for ``ws`` as a person starts it: its URL, and what it told the person (stderr). A
    port another test took meanwhile (two suites at once) makes the page exit: it starts again on another."""
    for _ in range(3):
        port = free_port()
        cmd = [EXE, "dashboard", "--port", str(port), "--workspace", str(ws)]
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, bufsize=0)  # unbuffered: select sees every line
        said: list[str] = []
        while not said or (len(said) < 2 and select.select([proc.stderr], [], [], 1.0)[0]):
            line = proc.stderr.readline()
            if not line:
                break
            said.append(line.decode())
        if proc.poll() is None and _listening(port):
            break
        proc.terminate()
        proc.wait(15)
    try:
        yield f"http://127.0.0.1:{port}", said
    finally:
        proc.terminate()
        proc.wait(15)


def _listening(port: int, within: float = 10.0) -> bool:
    """Whether something accepts connections on ``port`` within ``within`` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def page_token(html: str) -> str:
    return re.search(r'name="page-token" content="([^"]+)"', html).group(1)


def answer(c: httpx2.Client, base: str, ws_id: str, body: dict) -> httpx2.Response:
    token = page_token(c.get(base + "/").text)
    return c.post(
        f"{base}/api/task/{ws_id}/t1/answer", json=body, headers={"origin": base, "x-strict-loop-page": token}
    )


def shown_pause(c: httpx2.Client, base: str, ws_id: str) -> object:
    return c.get(f"{base}/api/task/{ws_id}/t1").json()["ladder"].get("pause_id")


def test_a_local_process_cannot_answer_on_the_dashboard_with_what_the_page_gives_it(ws_dir):
    pause(ws_dir)
    from strict_loop.storage.workspaces import workspace_id

    ws_id = workspace_id(ws_dir)
    with dashboard(ws_dir) as (base, _), httpx2.Client(timeout=30) as c:
        r = answer(c, base, ws_id, {"action": "continue", "pause": shown_pause(c, base, ws_id)})
    assert r.status_code == 403 and "person's key" in r.json()["error"]
    assert Workspace(ws_dir).supervisor("t1").paused and events(ws_dir, "spiral.resumed") == []


@pytest.mark.slow  # about a second or more of waiting on processes: the fast tier stays under 30 s
def test_the_persons_browser_answers_and_a_second_tabs_answer_to_the_same_pause_is_a_409(ws_dir):
    pid = pause(ws_dir)
    from strict_loop.storage.workspaces import workspace_id

    ws_id = workspace_id(ws_dir)
    with dashboard(ws_dir) as (base, said), httpx2.Client(timeout=30) as one, httpx2.Client(timeout=30) as two:
        link = re.search(r"(http://\S+\?answer=\S+)", "".join(said)).group(1)
        for tab in (one, two):  # the person's browser: both tabs share its cookie
            opened = tab.get(link, follow_redirects=False)
            assert opened.status_code == 303 and "?answer" not in opened.headers["location"]
        assert shown_pause(one, base, ws_id) == shown_pause(two, base, ws_id) == pid
        first = answer(one, base, ws_id, {"action": "continue", "note": "go on", "pause": pid})
        late = answer(two, base, ws_id, {"action": "hand-back", "note": "I take it", "pause": pid})
    assert first.status_code == 200, first.text
    assert late.status_code == 409 and f"pause {pid}" in late.json()["error"]
    assert status(ws_dir) == "running" and not Workspace(ws_dir).supervisor("t1").paused
    assert len(events(ws_dir, "spiral.resumed")) == 1 and events(ws_dir, "task.handed_back") == []


def test_the_mcp_token_an_agents_harness_holds_answers_nothing_on_the_mcp_servers_page(ws_dir, monkeypatch):
    """The app `strict-loop-mcp --http` serves with a token (in a thread; the process: tests/test_hostile_http.py)."""
    from test_hostile_http import served_here

    from strict_loop.storage.workspaces import workspace_id

    pause(ws_dir)
    token = "the-mcp-bearer-token-the-harness-holds"
    monkeypatch.setenv("STRICT_LOOP_MCP_TOKEN", token)  # read (and taken out of the environment) as the server starts
    with served_here(ws_dir) as s:
        base = s.url.rsplit("/mcp", 1)[0]
        bearer = {"authorization": f"Bearer {token}"}
        html = s.client.get(base + "/", headers=bearer).text
        ws_id = workspace_id(ws_dir)
        pid = s.client.get(f"{base}/api/task/{ws_id}/t1", headers=bearer).json()["ladder"].get("pause_id")
        headers = {**bearer, "origin": base, "x-strict-loop-page": page_token(html)}
        body = {"action": "continue", "pause": pid}
        r = s.client.post(f"{base}/api/task/{ws_id}/t1/answer", json=body, headers=headers)
    assert r.status_code == 403 and "takes no answers" in r.json()["error"]
    assert 'name="read-only" content="1"' in html  # and it shows no answer buttons
    assert Workspace(ws_dir).supervisor("t1").paused and events(ws_dir, "spiral.resumed") == []


# ---------------------------------------------------------------- item 9: the command line


def test_a_cli_answer_for_a_pause_answered_meanwhile_is_refused_and_changes_nothing(ws_dir):
    first = pause(ws_dir)
    key = person_key()
    run_cli("resume", "t1", "--action", "continue", "--pause-id", first, "--person-key", key, cwd=ws_dir)
    late = run_cli(
        "resume", "t1", "--action", "hand-back", "--pause-id", first, "--person-key", key, cwd=ws_dir, check=False
    )
    assert late.returncode == 2 and f"pause {first} of task 't1' is over" in late.stderr
    assert status(ws_dir) == "running" and not Workspace(ws_dir).supervisor("t1").paused
    second = pause(ws_dir)
    assert second != first
    late = run_cli(
        "resume", "t1", "--action", "continue", "--pause-id", first, "--person-key", key, cwd=ws_dir, check=False
    )
    assert late.returncode == 2 and f"in pause {second} now" in late.stderr
    assert Workspace(ws_dir).supervisor("t1").paused and len(events(ws_dir, "spiral.resumed")) == 1


# ---------------------------------------------------------------- item 10: recorded first, rolled forward


KILLED_AT = """
import os, signal, sys
from pathlib import Path
from strict_loop import Workspace
import strict_loop.loop.monitoring as monitoring, strict_loop.storage.store as store

where, ws = sys.argv[1], sys.argv[2]
write, append = monitoring.atomic_write, store.append_line

def killed_write(path, data, *args, **kwargs):
    if where == "monitor.json" and Path(path).name == "monitor.json":
        os.kill(os.getpid(), signal.SIGKILL)
    return write(path, data, *args, **kwargs)

def killed_append(path, line, *args, **kwargs):
    if where == "spiral.resumed" and b'"spiral.resumed"' in line:
        os.kill(os.getpid(), signal.SIGKILL)
    return append(path, line, *args, **kwargs)

monitoring.atomic_write, store.append_line = killed_write, killed_append
Workspace(ws).resume(task_id="t1", action="continue", note="go on with the vendored parser")
"""


def killed_answering(ws: Path, where: str) -> None:
    """A person's answer (the code path of `strict-loop resume` and the page), killed at ``where``."""
    proc = subprocess.run([sys.executable, "-c", KILLED_AT, where, str(ws)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def test_a_kill_before_the_record_lifts_no_pause(ws_dir):
    pause(ws_dir)
    killed_answering(ws_dir, "spiral.resumed")
    assert Workspace(ws_dir).supervisor("t1").paused and events(ws_dir, "spiral.resumed") == []
    assert json.loads((ws_dir / ".agent-loop" / "tasks" / "t1" / "monitor.json").read_text())["paused"]


def test_a_kill_after_the_record_is_rolled_forward_and_only_for_its_pause(ws_dir):
    pid = pause(ws_dir)
    killed_answering(ws_dir, "monitor.json")
    (answered,) = events(ws_dir, "spiral.resumed")
    assert answered["data"]["pause"] == pid
    ws = Workspace(ws_dir)
    assert not ws.supervisor("t1").paused  # the recorded answer is applied
    assert run_hook(ws_dir, "claude_pre_tool_use", hook_env(STRICT_LOOP_HOOKD="0")) == ""  # the agent goes on
    told = ws.append_event(task_id="t1", kind="note", message="back at it").supervisor  # hands the note over, once
    assert any("vendored parser" in m.text for m in told.messages)
    assert not json.loads((ws_dir / ".agent-loop" / "tasks" / "t1" / "monitor.json").read_text())["paused"]
    assert pause(ws_dir) != pid  # a later pause: the old answer does not lift it
    assert ws.supervisor("t1").paused and len(events(ws_dir, "spiral.resumed")) == 1
