"""Issue 27: hooks near the floor. Codex's installed hook is the thin hook (``python -S .../strict_loop/entry.py hook
codex``): it loads no module of the package but ``harness/client.py`` when the daemon answers, decides a paused task's
calls in process, and hands anything it cannot tell to the full hook. The Hermes plugin records in the background:
only the gate is on the model's path.

Each thin hook here is the command ``strict-loop install codex`` writes, run as Codex runs it (the event on stdin);
a daemon is either the real one or a stand-in on the real socket that misbehaves on cue.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import hook_daemon_pids, read_jsonl, run_cli
from harness_rig import settle_tasks

import strict_loop.entry
from strict_loop import Workspace
from strict_loop.base import masking
from strict_loop.harness import client, configedit, daemon, handler, payloads, registry
from strict_loop.storage import sessions

THIN = client.hook_words("strict-loop", "codex")
ENTRY = os.path.realpath(strict_loop.entry.__file__)
LOOP_WRITE = "rm -rf .agent-loop/tasks"
HEAVY = ("strict_loop", "typing", "json", "re", "enum", "pathlib", "subprocess", "pydantic")


def event(ws: Path, name: str, command: str = "echo hi", output: str = "hi\n", n: int = 0) -> str:
    data = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(ws), "hook_event_name": name}
    if name in ("UserPromptSubmit", "Stop"):  # Codex's: the prompt, or the last message
        return json.dumps({**data, "prompt": command, "stop_hook_active": False, "last_assistant_message": output})
    data.update(tool_name="Bash", tool_input={"command": command}, tool_use_id=f"call_{n}")
    return json.dumps({**data, "tool_response": output} if name == "PostToolUse" else data)


def thin(ws: Path, name: str, *, importtime: bool = False, **kw) -> subprocess.CompletedProcess:
    """The installed thin hook, as Codex runs it: from another folder, the event on stdin."""
    env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
    argv = [*THIN[:2], "-X", "importtime", *THIN[2:]] if importtime else THIN
    proc = subprocess.run(argv, input=event(ws, name, **kw), capture_output=True, text=True, cwd="/", env=env)
    assert proc.returncode == 0 and (importtime or proc.stderr == ""), proc.stderr[-2000:]
    return proc


def start(ws: Path, **contract) -> Workspace:
    w = Workspace(ws)
    w.init_state(
        **{"task_id": "t1", "goal": "Make the tests pass", "global_stop_condition": "pytest passes", **contract}
    )
    settle_tasks(ws)  # a task started a while ago: its index of running tasks is kept (not a racy scan)
    return w


def turns(ws: Path) -> list[dict]:
    return [e["data"] for e in read_jsonl(ws / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"]


def imported(stderr: str) -> set[str]:
    """The modules ``-X importtime`` reports."""
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


class StandIn:
    """Something listening on the workspace's daemon socket: answers ``answer``, or takes the request and dies."""

    def __init__(self, ws: Path, answer: bytes | None) -> None:
        env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
        self.path = client.socket_file(ws.resolve(), env)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(4)
        self.sock.settimeout(0.05)
        self.answer, self.received, self.done = answer, [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                header, payload = daemon.read_request(conn)
                self.received.append((header, json.loads(payload)))
                conn.sendall(client.ACK)
                conn.recv(1)
                if self.answer is not None:
                    conn.sendall(client.ANSWERED + self.answer)

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join(5)
        self.sock.close()


def test_the_thin_hook_loads_only_the_client_and_hands_the_call_to_the_daemon(ws_dir, tmp_path):
    start(ws_dir)
    names = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"]
    with StandIn(ws_dir, b'{"said": "by the daemon"}') as daemon_:
        done = [thin(ws_dir, name, importtime=True) for name in names]
    assert [proc.stdout for proc in done] == ['{"said": "by the daemon"}\n'] * 3 + [""]  # an attended task's Stop: ''
    assert [(h["op"], h["harness"], h["workspace"], h["env"]) for h, _ in daemon_.received] == [
        ("hook", "codex", str(ws_dir.resolve()), {})
    ] * 3
    assert [p["hook_event_name"] for _, p in daemon_.received] == names[:3]
    for proc in done:
        assert "client" in imported(proc.stderr) and not imported(proc.stderr) & set(HEAVY), imported(proc.stderr)
    (tmp_path / "plain").mkdir()  # no loop here: nothing said, nothing loaded
    nothing = thin(tmp_path / "plain", "PostToolUse", importtime=True)
    assert nothing.stdout == "" and not imported(nothing.stderr) & set(HEAVY)


def test_a_paused_tasks_calls_never_reach_the_socket_from_the_thin_hook(ws_dir):
    w = start(ws_dir)
    for n in range(8):
        handler.handle("codex", event(ws_dir, "PostToolUse", "pytest -q", "FAILED test_x", n), env={}, cwd="/")
    assert w.supervisor("t1").paused
    with StandIn(ws_dir, b"") as daemon_:
        pre = thin(ws_dir, "PreToolUse", command="touch x").stdout
    decision = json.loads(pre)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny" and "PAUSED" in decision["permissionDecisionReason"]
    assert daemon_.received == []


def test_a_daemon_that_dies_after_taking_a_call_never_lets_a_loop_write_through(ws_dir):
    """Taken, then no answer: a PreToolUse is decided again in process (the loop's folder is refused); a PostToolUse
    says nothing and is not recorded again (the daemon may have recorded it)."""
    start(ws_dir)
    with StandIn(ws_dir, None) as daemon_:
        pre = thin(ws_dir, "PreToolUse", command=LOOP_WRITE).stdout
        post = thin(ws_dir, "PostToolUse").stdout
    assert len(daemon_.received) == 2
    decision = json.loads(pre)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny" and ".agent-loop" in decision["permissionDecisionReason"]
    assert post == "" and turns(ws_dir) == []


def test_with_the_daemon_off_or_no_daemon_the_thin_hook_records_in_process(ws_dir, hook_daemon_dir, monkeypatch):
    start(ws_dir)
    monkeypatch.setenv("STRICT_LOOP_HOOKD", "0")
    thin(ws_dir, "PostToolUse", n=1)
    time.sleep(0.2)  # a daemon, had one been started, would have bound its socket by now
    assert [t["args"] for t in turns(ws_dir)] == [{"command": "echo hi"}]
    assert not list(hook_daemon_dir.glob("*.sock")) and hook_daemon_pids(hook_daemon_dir) == []


def test_what_the_thin_hook_copies_is_kept_in_step_with_the_package():
    names = ["DEPLOY_TOKEN", "github_pat", "PAT", "SSH_AUTH_SOCK", "HOME", "PATH", "STRICT_LOOP_X", "apprise_urls"]
    names += ["KEYTIMEOUT", "MY_DSN", "PATH_PAT", "PATTERN", "cookie_jar", "Auth", "X_PATX", "LANG"]
    assert [client.secret_name(n) for n in names] == [masking.looks_secret(n) for n in names]
    assert client.secret_name("ſECRET") and client.secret_name("ÜBER")  # any name that is not ASCII: its own daemon
    assert client.AGENT_KEEPS == masking.AGENT_KEEPS and client.LIVE_RESCAN_S == sessions.LIVE_RESCAN_S
    assert client.MAX_PAYLOAD_BYTES == handler.MAX_STDIN_BYTES
    for name, phase in client.THIN_PHASES.items():
        assert payloads.parse_event("codex", {"hook_event_name": name}).phase == phase
    codex = {e for e, _, _ in registry.get("codex").hook_events}
    tools = {e for e in codex if payloads.parse_event("codex", {"hook_event_name": e}).phase in ("pre", "post")}
    assert tools | {"pre_tool_call", "post_tool_call"} <= set(client.THIN_PHASES)  # Codex's and the Hermes plugin's


def test_install_writes_the_thin_hook_and_takes_the_place_of_an_old_one(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    (ws / ".codex").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    old = {"type": "command", "command": "/old/venv/bin/strict-loop hook codex", "timeout": 30}
    (ws / ".codex/hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [old]}]}}))
    run_cli("install", "codex", cwd=ws)
    hooks = json.loads((ws / ".codex/hooks.json").read_text())["hooks"]
    commands = [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]
    assert len(commands) == len(registry.get("codex").hook_events) and {tuple(shlex.split(c)) for c in commands} == {
        (sys.executable, "-S", ENTRY, "hook", "codex", "--workspace", str(ws))
    }
    assert all(configedit.is_our_command(c, "codex") and not configedit.is_our_command(c, "claude") for c in commands)
    run_cli("install", "codex", "--uninstall", cwd=ws)
    assert not (ws / ".codex/hooks.json").exists()


def test_in_a_virtual_environment_the_thin_hook_names_the_daemon_a_site_hook_names(tmp_path):
    """``python -S`` leaves a virtual environment's sys.prefix at its base: the names must not part ways."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    code = (
        f"import sys; sys.path.insert(0, {os.path.dirname(client.__file__)!r}); import client; "
        f"print(client.socket_file({str(tmp_path)!r}, {{'XDG_RUNTIME_DIR': {os.environ['XDG_RUNTIME_DIR']!r}}}))"
    )
    python = str(tmp_path / "venv" / "bin" / "python")
    names = [
        subprocess.run([python, *flag, "-c", code], capture_output=True, text=True, check=True).stdout
        for flag in ([], ["-S"])
    ]
    base = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert names[0] == names[1] != base and names[0].endswith(".sock\n")


# ---------------------------------------------------------------- through the real daemon


def wait_status(ws: Path, wait: float = 15.0) -> dict:
    deadline = time.monotonic() + wait
    while (found := daemon.status(str(ws))) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert found, "no hook daemon answered"
    return found


@pytest.mark.slow  # a real daemon starts (~1 s of imports)
def test_the_thin_hook_records_whispers_refuses_and_pauses_through_the_real_daemon(ws_dir, tmp_path):
    w = start(ws_dir)
    assert thin(ws_dir, "UserPromptSubmit", command="Make the tests pass").stdout == ""
    assert wait_status(ws_dir)["served"] == 0  # the first call was recorded here, and started the daemon
    refused = json.loads(thin(ws_dir, "PreToolUse", command=LOOP_WRITE).stdout)["hookSpecificOutput"]
    assert refused["permissionDecision"] == "deny" and wait_status(ws_dir)["served"] == 1
    assert thin(ws_dir, "UserPromptSubmit", command="Go on").stdout == "" and wait_status(ws_dir)["served"] == 2
    said = []
    for n in range(8):
        if not w.supervisor("t1").paused:
            said.append(thin(ws_dir, "PostToolUse", command="pytest -q", output="FAILED test_x", n=n).stdout)
    texts = [json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else "" for out in said]
    assert [i for i, t in enumerate(texts) if t] == [3, 4, 5] and "PAUSED" in texts[5]
    assert [t.get("actor") for t in turns(ws_dir)] == ["person"] * 2 + ["agent"] * 6
    assert wait_status(ws_dir)["served"] == 8  # the refusal, the second prompt and the six calls up to the pause
    denied = json.loads(thin(ws_dir, "PreToolUse", command="touch x").stdout)["hookSpecificOutput"]
    assert denied["permissionDecision"] == "deny" and "PAUSED" in denied["permissionDecisionReason"]
    assert thin(ws_dir, "Stop").stdout == "" and wait_status(ws_dir)["served"] == 8  # decided in process
    unattended = tmp_path / "unattended"  # a Stop the full hook decides: the stop check says go on
    unattended.mkdir()
    checks = {"global_stop_condition": "done.txt exists", "stop_checks": {"paths_exist": ["done.txt"]}}
    start(unattended, **checks, operating_mode="unattended", next_task="write done.txt")
    assert json.loads(thin(unattended, "Stop").stdout)["decision"] == "block"


@pytest.mark.slow  # a real daemon starts twice
def test_a_killed_daemon_costs_the_thin_hook_no_turn(ws_dir):
    start(ws_dir)
    thin(ws_dir, "PostToolUse", command="ls a", output="a", n=0)
    first = wait_status(ws_dir)["pid"]
    thin(ws_dir, "PostToolUse", command="ls b", output="b", n=1)
    os.kill(first, signal.SIGKILL)
    thin(ws_dir, "PostToolUse", command="ls c", output="c", n=2)  # nobody answers on the socket: in process
    again = wait_status(ws_dir)
    thin(ws_dir, "PostToolUse", command="ls d", output="d", n=3)
    assert again["pid"] != first and wait_status(ws_dir)["served"] == 1
    assert [t["args"]["command"] for t in turns(ws_dir)] == ["ls a", "ls b", "ls c", "ls d"]


# ---------------------------------------------------------------- Hermes: recording off the model's path

DELAY_S = 0.6


def hermes_call(i: int) -> dict:
    common = {"tool_name": "terminal", "args": {"command": f"ls src/m{i}.py"}, "task_id": "", "session_id": "s1"}
    return {**common, "tool_call_id": f"call_{i}", "turn_id": "turn1", "api_request_id": ""}


def slow_program(tmp_path: Path, real: str, log: Path) -> str:
    """``real`` (the hook program), except that a post_tool_call takes ``DELAY_S`` longer; each event's start and end
    logged."""
    program = tmp_path / "slow-strict-loop"
    program.write_text(
        '#!/bin/sh\ninput=$(cat)\nevent=$(printf \'%s\' "$input" | grep -o \'"hook_event_name": "[a-z_]*"\')\n'
        f'echo "start $event" >> {log}\n'
        f'case "$event" in *post_tool_call*) sleep {DELAY_S};; esac\n'
        f'printf \'%s\' "$input" | {real} "$@"\necho "end $event" >> {log}\n'
    )
    program.chmod(0o755)
    return str(program)


@pytest.mark.slow  # about a second or more of waiting on processes: the fast tier stays under 30 s
def test_a_slow_recording_does_not_delay_the_hermes_tool_call_but_the_next_gate_waits_for_it(tmp_path, ws_dir):
    """The plugin as Hermes calls it, its program a stand-in that prints nothing: the tool's result goes back to the
    model at once; the next pre_tool_call asks only after the recording is done (a pause it caused is seen)."""
    from test_hermes_plugin import load

    module, hooks = load(Path(__file__).parent.parent / "integrations/hermes/strict-loop/__init__.py")
    log = tmp_path / "log"
    module.STRICT_LOOP = slow_program(tmp_path, "cat >/dev/null; true", log)
    began = time.monotonic()
    hooks["post_tool_call"](**hermes_call(1), result="ok", status="ok", duration_ms=3)
    assert hooks["transform_tool_result"](**hermes_call(1), result="ok", status="ok") is None
    assert time.monotonic() - began < DELAY_S / 2
    assert hooks["pre_tool_call"](**hermes_call(2)) is None
    assert time.monotonic() - began >= DELAY_S
    hooks["on_session_end"](session_id="s1", completed=True)
    assert log.read_text().split("\n")[:4] == [
        'start "hook_event_name": "post_tool_call"',
        'end "hook_event_name": "post_tool_call"',
        'start "hook_event_name": "pre_tool_call"',
        'end "hook_event_name": "pre_tool_call"',
    ]


@pytest.mark.slow  # real `strict-loop hook hermes` processes, one of them slowed down on purpose
def test_a_slow_recording_by_the_real_hook_is_recorded_before_the_next_gate(tmp_path, ws_dir, monkeypatch):
    from test_hermes_plugin import load

    start(ws_dir)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home" / ".hermes"))
    monkeypatch.delenv("STRICT_LOOP_TASK", raising=False)
    run_cli("install", "hermes", "--workspace", str(ws_dir), cwd=tmp_path)
    module, hooks = load(tmp_path / "home/.hermes/plugins/strict-loop/__init__.py")
    module.STRICT_LOOP = slow_program(tmp_path, shlex.join(module.HOOK), tmp_path / "log")  # the thin hook, slowed
    module.HOOK = []
    began = time.monotonic()
    hooks["post_tool_call"](**hermes_call(1), result='{"output": "m1", "exit_code": 0}', status="ok")
    hooks["transform_tool_result"](**hermes_call(1), result='{"output": "m1", "exit_code": 0}', status="ok")
    assert time.monotonic() - began < DELAY_S / 2 and turns(ws_dir) == []  # the model has its result already
    assert hooks["pre_tool_call"](**hermes_call(2)) is None
    assert [t["args"] for t in turns(ws_dir)] == [{"command": "ls src/m1.py"}]


@pytest.mark.slow  # a real Codex session against the scripted model
def test_a_codex_session_records_every_call_though_its_hook_daemon_is_killed_midway(tmp_path, monkeypatch):
    from harness_rig import Harness, require_binary
    from model_servers import Final, ResponsesModel, Shell

    harness = Harness("codex", require_binary("codex"), tmp_path / "home", mcp=False)  # the hooks alone
    work = tmp_path / "w"
    work.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(harness.home))
    monkeypatch.setenv("CODEX_HOME", str(harness.codex_home))
    run_cli("install", "codex", "--workspace", str(work), cwd=work)
    harness.trust_project(work)
    start(work)
    runtime = Path(os.environ["XDG_RUNTIME_DIR"]) / "strict-loop"
    held, gone = threading.Event(), threading.Event()

    class Model(ResponsesModel):
        def take(self, body):  # the request after the second call waits until the test has killed the daemon
            if self.steps_used == 2:
                held.set()
                gone.wait(60)
            return super().take(body)

    steps = [Shell("ls -a"), Shell("echo one"), Shell("echo two"), Shell("echo three"), Final("Done.")]
    with Model(steps) as model:
        done: list = []
        session = threading.Thread(target=lambda: done.append(harness.run("Run the commands.", work, model.url)))
        session.start()
        deadline = time.monotonic() + 60
        while not (held.is_set() and hook_daemon_pids(runtime)) and time.monotonic() < deadline:
            time.sleep(0.05)  # the session waits on the model once its daemon is up
        killed = hook_daemon_pids(runtime)
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        gone.set()
        session.join(120)
    assert killed and done and done[0].returncode == 0, done and done[0].stderr[-2000:]
    calls = [t["args"]["command"] for t in turns(work) if t.get("actor") != "person"]
    assert [c.split()[-1] for c in calls] == ["-a", "one", "two", "three"], calls
