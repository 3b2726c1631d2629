"""Claude Code's HTTP hooks (issue 27): what ``strict-loop install claude`` writes, the shell gate beside each HTTP hook
as Claude Code runs it, the endpoint (``python -m strict_loop.hookd http``) over real sockets and the session command
(``hookd.py session``) as a real process; and the real Claude Code against a scripted model (slow tier).

The endpoint runs in a thread of the test process (its sockets, files and answers are the real ones); it exits when
its runtime folder's ``state`` is no longer its own, which the fixture's teardown arranges.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli, tree_files

import strict_loop.entry
from strict_loop import Workspace, hookd
from strict_loop.harness import daemon, handler
from strict_loop.supervisor.lock import zombie

TASK = "t1"
SHELLS = sorted({os.path.realpath(s) for s in ("/bin/sh", shutil.which("dash"), shutil.which("bash")) if s})
"""POSIX sh as Linux has it (dash) and as macOS has it (bash)."""


@pytest.fixture
def place(tmp_path, monkeypatch) -> Path:
    """A home folder and a workspace with one running task; returns the workspace."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(daemon.TOKEN_ENV, raising=False)
    Workspace(ws).init_state(task_id=TASK, goal="Make the tests pass", global_stop_condition="pytest passes")
    return ws


def settings(ws: Path) -> dict:
    return json.loads((ws / ".claude" / "settings.json").read_text())


def events(ws: Path) -> list[dict]:
    return read_jsonl(ws / ".agent-loop" / "tasks" / TASK / "events.jsonl")


def turns(ws: Path) -> list[dict]:
    return [e["data"] for e in events(ws) if e["kind"] == "tool_call"]


PERSONS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "httpHookAllowedEnvVars": ["MY_HOOK_VAR"],
    "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "http", "url": "http://127.0.0.1:9/mine"}]}]},
}


def test_install_writes_http_hooks_and_a_private_record_and_uninstall_gives_back_the_bytes(place, user_config_dir):
    path = place / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(PERSONS, indent=2) + "\n")
    before = {
        **tree_files(place.parent / "home"),
        **{f".claude/{k}": v for k, v in tree_files(place / ".claude").items()},
    }
    run_cli("install", "claude", cwd=place)
    text, doc = path.read_text(), settings(place)
    record = daemon.read_record(place, os.environ)
    assert record and record["token"] not in text  # the token is in no settings file
    assert (daemon.record_path(place, os.environ).stat().st_mode & 0o777) == 0o600
    assert doc["httpHookAllowedEnvVars"] == ["MY_HOOK_VAR", daemon.TOKEN_ENV]
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit"):
        gate, web = doc["hooks"][event][-1]["hooks"]
        assert gate["command"] == "/bin/sh" and gate["args"][2:4] == [
            daemon.GATE_NAME,
            "pre" if "Pre" in event else "post",
        ]
        assert gate["args"][6:] == [  # the thin hook, when the daemon is not there
            sys.executable,
            "-S",
            os.path.realpath(strict_loop.entry.__file__),
            "hook",
            "claude",
            "--workspace",
            str(place),
        ]
        assert web["url"] == f"http://127.0.0.1:{record['port']}{daemon.HTTP_PATH}"
        assert web["headers"] == {daemon.TOKEN_HEADER: "${STRICT_LOOP_HOOK_TOKEN}"} and web["allowedEnvVars"] == [
            daemon.TOKEN_ENV
        ]
    assert doc["hooks"]["PostToolUse"][0] == PERSONS["hooks"]["PostToolUse"][0]
    assert [h["args"][2] for h in doc["hooks"]["SessionStart"][0]["hooks"]] == ["session"]
    assert [h["type"] for h in doc["hooks"]["Stop"][0]["hooks"]] == ["command", "command", "http"]
    installed = path.read_bytes()
    assert run_cli("install", "claude", cwd=place).stdout.startswith("nothing to change")
    assert path.read_bytes() == installed and daemon.read_record(place, os.environ) == record
    out = run_cli("install", "claude", "--uninstall", cwd=place).stdout
    assert str(daemon.record_path(place, os.environ)) in out and record["token"] not in out
    after = {
        **tree_files(place.parent / "home"),
        **{f".claude/{k}": v for k, v in tree_files(place / ".claude").items()},
    }
    assert after == before and not (user_config_dir / "hook-http").exists()  # not even the record's folder


def test_the_dry_run_never_prints_the_token_and_command_hooks_remain_a_choice(place):
    run_cli("install", "claude", cwd=place)
    token = daemon.read_record(place, os.environ)["token"]
    out = run_cli("install", "claude", "--hooks", "command", "--dry-run", cwd=place).stdout
    assert token not in out and "would remove" in out
    run_cli("install", "claude", "--hooks", "command", cwd=place)
    hooks = settings(place)["hooks"]
    assert all(
        h["type"] == "command" and "args" not in h for groups in hooks.values() for g in groups for h in g["hooks"]
    )
    assert "SessionStart" not in hooks and "httpHookAllowedEnvVars" not in settings(place)
    assert daemon.read_record(place, os.environ) is None
    refused = run_cli("install", "codex", "--hooks", "http", cwd=place, check=False)
    assert refused.returncode == 2 and "--hooks" in refused.stderr
    out = run_cli("install", "claude", "--scope", "user", cwd=place).stdout  # no workspace: no endpoint to reach
    assert "Command hooks were written" in out
    user = json.loads((place.parent / "home" / ".claude" / "settings.json").read_text())["hooks"]
    assert all(
        h["type"] == "command" and "args" not in h for groups in user.values() for g in groups for h in g["hooks"]
    )


# ---------------------------------------------------------------- the gate, as Claude Code runs it


@pytest.fixture
def gate_place(tmp_path) -> tuple[Path, Path]:
    manager, folder = tmp_path / ".agent-loop", tmp_path / "run"
    manager.mkdir()
    folder.mkdir()
    return manager, folder


def run_gate(shell: str, kind: str, manager: Path, folder: Path, session: str = "s1") -> str:
    fallback = ["/bin/sh", "-c", "cat >/dev/null; echo FULL HOOK"]  # where the full hook reads the event
    argv = [shell, "-c", daemon.GATE, daemon.GATE_NAME, kind, str(manager), str(folder), *fallback]
    env = {"PATH": os.environ["PATH"], "CLAUDE_CODE_SESSION_ID": session}
    done = subprocess.run(argv, input=b'{"hook_event_name": "PreToolUse"}' * 5000, capture_output=True, env=env)
    assert done.returncode == 0 and done.stderr == b""
    return done.stdout.decode().strip()


@pytest.mark.parametrize("shell", SHELLS)
def test_the_gate_runs_the_full_hook_unless_a_live_endpoint_serves_the_session_and_nothing_is_paused(shell, gate_place):
    manager, folder = gate_place
    assert run_gate(shell, "post", manager, folder) == "FULL HOOK"  # no endpoint
    (folder / "state").write_text(f"{os.getpid()} {hookd.start_time(os.getpid())}\n")
    assert run_gate(shell, "post", manager, folder) == "FULL HOOK"  # a live endpoint, this session not registered
    (folder / f"{os.getpid()}-s1").touch()
    assert run_gate(shell, "pre", manager, folder) == run_gate(shell, "post", manager, folder) == ""
    assert run_gate(shell, "post", manager, folder, session="s2") == "FULL HOOK"
    (manager / "paused").mkdir()
    (manager / "paused" / TASK).touch()
    assert run_gate(shell, "pre", manager, folder) == "FULL HOOK" and run_gate(shell, "post", manager, folder) == ""
    (manager / "paused" / TASK).unlink()
    (folder / "state").write_text(f"{os.getpid()} 1\n")  # the pid now names another process (reused)
    assert run_gate(shell, "post", manager, folder) == "FULL HOOK"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (folder / "state").write_text(f"{dead.pid} {hookd.start_time(os.getpid())}\n")
    (folder / f"{dead.pid}-s1").touch()
    assert run_gate(shell, "post", manager, folder) == "FULL HOOK"  # killed


# ---------------------------------------------------------------- the endpoint and the session command


@pytest.fixture
def endpoint(place, monkeypatch):
    """The workspace's endpoint, installed and running (in a thread); yields (record, runtime folder)."""
    monkeypatch.setattr(hookd, "POLL_S", 0.05)
    run_cli("install", "claude", cwd=place)
    record, folder = daemon.read_record(place, os.environ), daemon.http_dir(place, os.environ)
    thread = threading.Thread(target=hookd.serve, args=(str(place),), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while hookd.endpoint_pid(folder) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    yield record, folder
    (folder / "state").write_text("1 -\n")  # no longer its own: it exits
    thread.join(5)
    assert not thread.is_alive()


def session_command(ws: Path, session: str, event: str = "SessionStart", token: str = "", pid: int = 0, real=False):
    """``hookd.py session --workspace WS`` with the event on stdin: as Claude Code runs it (``real``), or its ``main``
    in this process (a tenth of the time)."""
    env = {**os.environ, daemon.TOKEN_ENV: token, "CLAUDE_PID": str(pid or os.getpid())}
    data = json.dumps({"session_id": session, "hook_event_name": event, "cwd": str(ws)}).encode()
    args = ["session", "--workspace", str(ws)]
    if real:
        done = subprocess.run([sys.executable, "-S", hookd.__file__, *args], input=data, capture_output=True, env=env)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "environ", env)
        patch.setattr(sys, "stdin", type("Stdin", (), {"buffer": __import__("io").BytesIO(data)})())
        assert hookd.main(args) == 0


def post(port: int, event: dict, token: str, **headers: str) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    sent = {"Content-Type": "application/json", daemon.TOKEN_HEADER: token, **headers}
    conn.request("POST", daemon.HTTP_PATH, body=json.dumps(event), headers=sent)
    answer = conn.getresponse()
    status, body = answer.status, json.loads(answer.read())
    conn.close()
    return status, body


def failure(ws: Path, session: str, n: int) -> dict:
    return {
        "session_id": session,
        "transcript_path": "/dev/null",
        "cwd": str(ws),
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q"},
        "tool_use_id": f"toolu_{n}",
        "error": "Exit code 1\n3 failed, 2 passed in 0.1s",
    }


def test_a_registered_session_is_served_over_http_each_answer_in_one_write(place, endpoint, monkeypatch):
    record, folder = endpoint
    session = str(uuid.uuid4())
    session_command(place, session, token=record["token"], real=True)
    assert (folder / f"{os.getpid()}-{session}").exists()  # the gate of this session now lets the HTTP hook serve
    writes: list[int] = []
    real_sendall = socket.socket.sendall

    def counted(sock, data, *args):
        if sock.family == socket.AF_INET and sock.getsockname()[1] == record["port"]:
            writes.append(len(data))
        return real_sendall(sock, data, *args)

    monkeypatch.setattr(socket.socket, "sendall", counted)
    answers = [post(record["port"], failure(place, session, n), record["token"]) for n in range(5)]
    assert len(writes) == 5  # one write per answer: status line, headers and body together
    said = [body["hookSpecificOutput"]["additionalContext"] for _, body in answers if body]
    assert [status for status, _ in answers] == [200] * 5 and len(said) == 2 and "[strict-loop monitor]" in said[0]
    assert [t["hook"]["tool_use_id"] for t in turns(place)] == [f"toolu_{n}" for n in range(5)]
    assert hookd.ask(folder, {"op": "status"})["served"] == 5


def test_requests_without_the_token_from_a_browser_or_an_unregistered_session_change_nothing(place, endpoint):
    record, folder = endpoint
    session = str(uuid.uuid4())
    port = record["port"]
    assert post(port, failure(place, session, 0), record["token"]) == (200, {})  # not registered: its gate serves it
    session_command(place, session, token="wrong-token-" * 4)  # a session without the right token registers nothing
    assert not (folder / f"{os.getpid()}-{session}").exists()
    session_command(place, session, token=record["token"])
    assert post(port, failure(place, session, 1), "not-the-token")[0] == 403
    assert post(port, failure(place, session, 2), record["token"], Origin="http://evil.example")[0] == 403
    assert post(port, failure(place, session, 3), record["token"], Host=f"evil.example:{port}")[0] == 403
    assert turns(place) == []
    assert post(port, failure(place, session, 4), "") == (200, {})  # its token no longer arrives: let go
    assert not (folder / f"{os.getpid()}-{session}").exists() and turns(place) == []


def test_while_paused_the_endpoint_leaves_pretooluse_to_the_gate_and_the_flag_follows_the_pause(place, endpoint):
    record, folder = endpoint
    session = str(uuid.uuid4())
    session_command(place, session, token=record["token"])
    flag = place / ".agent-loop" / "paused" / TASK
    for n in range(6):
        post(record["port"], failure(place, session, n), record["token"])
    assert Workspace(place).supervisor(TASK).paused and flag.exists()
    pre = {**failure(place, session, 9), "hook_event_name": "PreToolUse", "tool_input": {"command": "touch x"}}
    del pre["error"]
    assert post(record["port"], pre, record["token"]) == (200, {})  # the gate's full hook denies it
    denied = json.loads(handler.handle("claude", json.dumps(pre), env={"STRICT_LOOP_HOOKD": "0"}, cwd="/"))
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    post(record["port"], failure(place, session, 7), record["token"])
    assert len(turns(place)) == 7  # a call that ran while paused is still recorded
    from person_rig import person_key

    run_cli("resume", "--task-id", TASK, "--action", "continue", "--person-key", person_key(), cwd=place)
    assert not flag.exists()


def test_each_stop_checks_that_the_sessions_requests_arrive_and_an_ended_claude_lets_its_session_go(
    place, endpoint, monkeypatch
):
    monkeypatch.setattr(hookd, "PROOF_WAIT_S", 0.2)
    record, folder = endpoint
    kept, lost, ended = (str(uuid.uuid4()) for _ in range(3))
    for session in (kept, lost):
        session_command(place, session, token=record["token"])
    post(record["port"], {"session_id": kept, "hook_event_name": "Stop", "cwd": str(place)}, record["token"])
    for session in (kept, lost):
        session_command(place, session, "Stop", token=record["token"])
    assert (folder / f"{os.getpid()}-{kept}").exists() and not (folder / f"{os.getpid()}-{lost}").exists()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    session_command(place, ended, token=record["token"], pid=gone.pid)
    deadline = time.monotonic() + 5
    while (folder / f"{os.getpid()}-{ended}").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not (folder / f"{os.getpid()}-{ended}").exists()


# ---------------------------------------------------------------- the real Claude Code (slow tier)

PROBE = "ls /nonexistent-strict-loop-probe"


@pytest.mark.slow
def test_a_claude_session_over_http_records_every_call_whispers_and_denies_once_paused(place):
    """Calls and whispers go over HTTP from the session's start; the endpoint is killed and the next call is recorded
    by the full hook (the gate finds no live endpoint), and pauses the task; a new endpoint is killed while the task is
    paused: the next call is denied; an impostor that looks alive answers garbage on the port: the next call is denied
    too (only the pause flag can tell the gate)."""
    from harness_rig import Harness, require_binary
    from model_servers import AnthropicModel, Final, Shell, strings

    run_cli("install", "claude", cwd=place)
    record, folder = daemon.read_record(place, os.environ), daemon.http_dir(place, os.environ)
    home = place.parent / "home"
    done: dict[int, object] = {}

    class Model(AnthropicModel):
        def take(self, body):  # the request after call N, before the model's next call
            step = self.steps_used
            if step == 5 and step not in done:
                done[5] = _kill_endpoint(folder, 11)  # the session it served
            elif step == 6 and step not in done:
                done[6] = _restart_and_kill(place, folder)
            elif step == 7 and step not in done:
                done[7] = _impostor(folder, record["port"], str(done[5]))
            return super().take(body)

    steps = [Shell(PROBE)] * 7 + [Shell("touch paused-marker"), Final("Stopping as the loop asks.")]
    extra = {daemon.TOKEN_ENV: record["token"], "HOME": str(home), "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}
    try:
        with Model(steps) as model:
            claude = Harness("claude", require_binary("claude"), home, mcp=False)  # the hooks alone: no MCP server
            proc = claude.run(PROBE, place, model.url, extra_env=extra)
    finally:
        if isinstance(done.get(7), socket.socket):
            done[7].close()  # type: ignore[union-attr]
    detail = f"rc={proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
    calls = [t for t in turns(place) if t.get("actor") != "person"]
    assert sorted(done) == [5, 6, 7] and model.steps_used == len(steps), detail
    assert len(calls) == 6 and all(PROBE in json.dumps(t["args"]) for t in calls), detail  # each once, none after
    whisper = next(e["message"] for e in events(place) if e["kind"] == "spiral.whisper")
    assert any(whisper in s for body in model.model_requests for s in strings(body)), detail
    assert not (place / "paused-marker").exists() and Workspace(place).supervisor(TASK).paused, detail
    told = [s for s in strings(model.model_requests[-1]) if s.startswith("PreToolUse:Bash hook error")]
    assert len(told) == 2 and "strict-loop resume" in told[0], detail  # the seventh and eighth calls, refused


def _kill_endpoint(folder: Path, served: int) -> str:
    """SIGKILL the live endpoint (which served ``served`` requests at least); the session it served, if any."""
    pid = hookd.endpoint_pid(folder)
    assert pid is not None and hookd.ask(folder, {"op": "status"})["served"] >= served  # so far, all over HTTP
    session = next((p.name.split("-", 1)[1] for p in folder.iterdir() if p.name.startswith(f"{pid}-")), "")
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while hookd.endpoint_pid(folder) is not None and not _ended(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return session


def _ended(pid: int) -> bool:
    """Dead as the gate judges it, and its port free: a zombie (which its parent, maybe init, reaps when it will) whose
    threads have all exited (the last one out closes the sockets)."""
    try:
        return zombie(pid) and len(os.listdir(f"/proc/{pid}/task")) <= 1
    except OSError:  # reaped meanwhile, or no /proc
        return zombie(pid) or not os.path.exists(f"/proc/{pid}")


def _restart_and_kill(ws: Path, folder: Path) -> str:
    """The task is paused now (the full hook recorded the sixth call): a new endpoint starts, and is killed."""
    assert (ws / ".agent-loop" / "paused" / TASK).exists()
    cwd = Path(hookd.__file__).parent.parent
    argv = [sys.executable, "-m", "strict_loop.hookd", "http", str(ws)]
    proc = subprocess.Popen(argv, cwd=cwd, start_new_session=True)
    deadline = time.monotonic() + 30  # the killed endpoint, a zombie until reaped, may still be named in ``state``
    while hookd.endpoint_pid(folder) != proc.pid and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        return _kill_endpoint(folder, 0)
    finally:
        proc.wait(5)  # ours to reap: its port is free then


def _impostor(folder: Path, port: int, session: str) -> socket.socket:
    """A server on the endpoint's port announced as a live endpoint serving ``session`` (this process's pid and start
    time), answering every request with garbage."""
    assert session
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(8)
    (folder / f"{os.getpid()}-{session}").touch()
    (folder / "state").write_text(f"{os.getpid()} {hookd.start_time(os.getpid())}\n")

    def answer() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(1 << 20)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\n<garbage>")

    threading.Thread(target=answer, daemon=True).start()
    return server


def test_a_zombie_endpoint_is_none_so_the_next_session_starts_a_new_one(tmp_path):
    """The gate takes a zombie endpoint (dead, not yet collected by its parent) for dead and sends every call to the
    full hook; ``endpoint_pid`` took it for alive, so no session started a new endpoint while it stayed a zombie."""
    proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", "pass"])  # ours, not waited for: a zombie once done
    stat = Path(f"/proc/{proc.pid}/stat")
    if not stat.exists():
        proc.wait()
        pytest.skip("no /proc: a zombie's state is not read there")
    started = stat.read_bytes().rsplit(b") ", 1)[1].split()[19].decode()
    folder = tmp_path / "hook-http"
    folder.mkdir()
    (folder / "state").write_text(f"{proc.pid} {started}")
    try:
        deadline = time.monotonic() + 10
        while not zombie(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert zombie(proc.pid)
        assert hookd.endpoint_pid(folder) is None
    finally:
        proc.wait()
    assert hookd.endpoint_pid(folder) is None
    live = subprocess.Popen([sys.executable, "-I", "-S", "-c", "import time; time.sleep(30)"])
    try:
        (folder / "state").write_text(f"{live.pid} {hookd.start_time(live.pid)}")
        assert hookd.endpoint_pid(folder) == live.pid  # a live one still counts
    finally:
        live.kill()
        live.wait()
