"""The supervisor's per-run wiring, hardened (issue 19): what a run may write, what its child gets, what it keeps.

Fast: the harness is a fake (a Python script, or only the wiring is built); the real harnesses are in
test_supervisor_e2e.py.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import finished_pid, read_jsonl

from strict_loop import Workspace
from strict_loop.base.errors import LoopError
from strict_loop.headless import wiring as headless
from strict_loop.supervisor.runner import Supervisor, SupervisorResult


def _tree_digest(root: Path) -> dict[str, str]:
    """Every regular file under ``root`` (links followed) by relative path, with its bytes' digest."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _dotfiles_home(tmp_path: Path) -> tuple[Path, Path]:
    """A HOME whose ~/.hermes/config.yaml and plugins/ are links into a dotfiles checkout (HOME, dotfiles)."""
    home, dots = tmp_path / "home", tmp_path / "dotfiles"
    (dots / "plugins" / "theirs").mkdir(parents=True)
    (dots / "plugins" / "theirs" / "plugin.yaml").write_text("name: theirs\n")
    (dots / "plugins" / "strict-loop").mkdir()  # an old install of ours: the copy replaces it, never the original
    (dots / "plugins" / "strict-loop" / "__init__.py").write_text("# the user's own\n")
    (dots / "config.yaml").write_text("model: x\nplugins:\n  enabled: [theirs]\n")
    (home / ".hermes").mkdir(parents=True)
    (home / ".hermes" / "config.yaml").symlink_to(dots / "config.yaml")
    (home / ".hermes" / "plugins").symlink_to(dots / "plugins", target_is_directory=True)
    (home / ".hermes" / ".env").write_text("OPENAI_API_KEY=sk-test-123456\n")
    return home, dots


def test_the_hermes_home_copy_never_writes_through_the_users_links(tmp_path: Path):
    home, dots = _dotfiles_home(tmp_path)
    before = _tree_digest(dots)
    ws, scratch = tmp_path / "ws", tmp_path / "scratch"
    ws.mkdir()
    scratch.mkdir()
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    wiring = headless.wire("hermes", sys.executable, "do it", ws, "t", scratch, env=env)
    copy = Path(wiring.env["HERMES_HOME"])
    assert _tree_digest(dots) == before  # the real config and plugins are byte-identical
    assert not any(p.is_symlink() for p in copy.rglob("*"))  # real copies: nothing in it leads back
    assert "strict-loop" in (copy / "config.yaml").read_text() and "model: x" in (copy / "config.yaml").read_text()
    assert (copy / "plugins" / "theirs" / "plugin.yaml").read_text() == "name: theirs\n"
    wiring.cleanup()
    assert _tree_digest(dots) == before and (home / ".hermes" / "config.yaml").is_symlink()


def _fake(tmp_path: Path, name: str, body: str) -> Path:
    """A fake harness binary: a Python script run by this interpreter."""
    path = tmp_path / name
    path.write_text(f"#!{sys.executable} -S\nimport json, os, sys\n{body}\n")  # -S: no site, ~20 ms less a start
    path.chmod(0o755)
    return path


def _supervise(ws: Workspace, harness: str, binary: Path, env: dict[str, str], **kw) -> SupervisorResult:
    settings = {"max_invocations": 1, "heartbeat_s": 3600, **kw.pop("overrides", {})}
    sup = Supervisor(
        ws.root, "t", harness, harness_bin=str(binary), env=env, stderr=io.StringIO(), overrides=settings, **kw
    )
    return sup.run()


HERMES_SPY = """
home = os.environ["HERMES_HOME"]
with open(sys.argv[sys.argv.index("--usage-file") + 1], "w") as fh:
    json.dump({"completed": True, "failed": False}, fh)
with open(os.environ["SPY"], "w") as fh:
    mode = os.stat(os.path.dirname(home)).st_mode & 0o777
    json.dump({"home": home, "env_file": open(os.path.join(home, ".env")).read(), "mode": mode}, fh)
"""


def test_the_hermes_home_lives_in_a_private_runtime_folder_and_stale_ones_are_removed(task: Workspace, tmp_path: Path):
    home, _ = _dotfiles_home(tmp_path)
    runs = Path(os.environ["XDG_RUNTIME_DIR"]) / "strict-loop" / "runs"
    runs.parent.mkdir(mode=0o700)
    runs.mkdir(mode=0o700)
    stale = runs / f"{finished_pid()}-12345-0001-abc"  # a supervisor killed with -9: its pid is gone
    (stale / "hermes-home").mkdir(parents=True)
    (stale / "hermes-home" / ".env").write_text("OPENAI_API_KEY=sk-old\n")
    spy = tmp_path / "spy.json"
    env = {**os.environ, "HOME": str(home), "SPY": str(spy)}
    _supervise(task, "hermes", _fake(tmp_path, "hermes", HERMES_SPY), env)
    seen = json.loads(spy.read_text())
    assert "sk-test-123456" in seen["env_file"]  # the copy was there for the run
    used = Path(seen["home"])
    assert not used.is_relative_to(task.root) and used.is_relative_to(runs)
    assert seen["mode"] == 0o700 and (runs.stat().st_mode & 0o777) == 0o700
    assert not used.exists() and not stale.exists()  # removed after the run; the dead run's at start-up
    leftovers = [p for p in task.root.rglob("*") if "hermes-home" in p.name or p.name == ".env"]
    assert leftovers == []


API_KEY = "sk-ant-api03-SECRETVALUE42"
ALERT_URL = "https://hooks.slack.com/services/T0AAAA/B0BBBB/tok3nSECRETtok3n"
ALERT_ENV = {
    "ANTHROPIC_API_KEY": API_KEY,
    "STRICT_LOOP_ALERT_URLS": ALERT_URL,
    "APPRISE_URLS": "tgram://1234567:apprisebottoken/987",
    "STRICT_LOOP_WEBHOOK_URL": "https://user:hookpass@example.invalid/hook",
    "STRICT_LOOP_IRC": "ircs://bot:ircpassword@irc.example.invalid/#ops",
    "STRICT_LOOP_MCP_TOKEN": "mcp-token-0123456789",
}
CLAUDE_LEAKY = f"""
with open(os.environ["SPY"], "w") as fh:
    json.dump(dict(os.environ), fh)
sid = "0b9f3a52-8d7e-4b8e-9c61-1f2a3b4c5d6e"
said = "key {API_KEY} and {ALERT_URL} and https://me:pw123456@x.invalid/"
print(json.dumps({{"type": "system", "subtype": "init", "session_id": sid}}))
text = {{"content": [{{"type": "text", "text": said}}]}}
print(json.dumps({{"type": "assistant", "session_id": sid, "message": text}}))
print(json.dumps({{"type": "result", "is_error": False, "result": said, "session_id": sid, "total_cost_usd": 0.01}}))
print("stderr too: " + said, file=sys.stderr)
"""


def test_supervise_masks_every_file_and_the_agent_never_gets_alert_secrets(task: Workspace, tmp_path: Path):
    spy = tmp_path / "env.json"
    env = {**os.environ, **ALERT_ENV, "SPY": str(spy), "STRICT_LOOP_HOOKD": "0"}
    _supervise(task, "claude", _fake(tmp_path, "claude", CLAUDE_LEAKY), env)
    child = json.loads(spy.read_text())
    assert child["ANTHROPIC_API_KEY"] == API_KEY  # the agent's own key it needs
    assert not {k for k in child if k.startswith("APPRISE_")} and not (
        {"STRICT_LOOP_ALERT_URLS", "STRICT_LOOP_WEBHOOK_URL", "STRICT_LOOP_IRC", "STRICT_LOOP_MCP_TOKEN"} & set(child)
    )
    assert (
        child["STRICT_LOOP_TASK"] == "t"
        and child["STRICT_LOOP_SUPERVISOR"] == "1"
        and child["STRICT_LOOP_HOOKD"] == "0"
    )
    folder = task.task_paths("t").supervisor
    written = {p.name: p.read_text() for p in folder.iterdir() if p.is_file()}
    assert {"invocation-0001.jsonl", "invocation-0001.last.txt", "invocation-0001.stderr.txt"} <= set(written)
    assert "***" in written["invocation-0001.last.txt"] and "stderr too" in written["invocation-0001.stderr.txt"]
    events = task.task_paths("t").events.read_text()
    for secret in (API_KEY, ALERT_URL, "tok3nSECRETtok3n", "pw123456"):
        assert all(secret not in text for text in written.values()), secret
        assert secret not in events, secret


@pytest.mark.slow  # starts processes and waits on them
def test_the_per_run_mcp_server_is_ours_never_a_repositorys_mcp_server_package(tmp_path: Path):
    ws = tmp_path / "ws"
    (ws / "mcp_server").mkdir(parents=True)
    marker = tmp_path / "the-repository-ran"
    (ws / "mcp_server" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('pwned')\n")
    (ws / "mcp_server" / "__main__.py").write_text("")
    argv = headless.mcp_command(ws)
    assert argv[0] == sys.executable and "-m" not in argv
    r = subprocess.run(argv + ["--help"], cwd=ws, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert not marker.exists(), r.stderr
    assert r.returncode == 0 and "--workspace" in r.stdout


ARGV_SPY = """
with open(os.environ["SPY"], "a") as fh:
    fh.write(json.dumps(sys.argv[1:]) + "\\n")
"""
GOOD_ID = "0b9f3a52-8d7e-4b8e-9c61-1f2a3b4c5d6e"


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_session_id_not_in_the_harness_format_never_reaches_the_command_line(
    task: Workspace, tmp_path: Path, harness: str
):
    folder = task.task_paths("t").supervisor
    folder.mkdir(parents=True, exist_ok=True)
    forged = '--settings={"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}'
    (folder / "session.json").write_text(json.dumps({"harness": harness, "session_id": forged}))
    spy = tmp_path / "argv.jsonl"
    binary = _fake(tmp_path, harness, ARGV_SPY)
    _supervise(task, harness, binary, {**os.environ, "SPY": str(spy)})
    argv = json.loads(spy.read_text().splitlines()[0])
    assert forged not in argv and "--resume" not in argv and "resume" not in argv
    assert not (folder / "session.json").exists()
    started = [e for e in read_jsonl(task.task_paths("t").events) if e["kind"] == "supervisor.started"][-1]
    assert "not a " + harness + " session id" in started["data"]["session_refused"]
    (folder / "session.json").write_text(json.dumps({"harness": harness, "session_id": GOOD_ID}))
    _supervise(task, harness, binary, {**os.environ, "SPY": str(spy)})
    assert GOOD_ID in json.loads(spy.read_text().splitlines()[1])  # a real id is still resumed


def test_the_registry_knows_each_harness_session_id_format(tmp_path: Path):
    from strict_loop.harness import registry
    from strict_loop.supervisor.lock import SessionFile

    assert registry.session_id_problem("codex", "0199a213-81c0-7800-8aa1-bbab2a035a53") == ""
    assert registry.session_id_problem("claude", GOOD_ID.upper()) == ""
    for bad in ("--settings={}", GOOD_ID + " x", "", None, "-" + GOOD_ID, GOOD_ID + "\n"):
        assert registry.session_id_problem("claude", bad), bad
    with pytest.raises(LoopError):
        headless.wire("claude", sys.executable, "p", tmp_path, "t", tmp_path, session_id="--settings={}", env={})
    files = SessionFile(tmp_path, "claude", "t")
    files.keep(None, True, "--model=evil")  # a stream's id of another shape is not kept
    assert files.get() is None and not files.path.exists()


CLAUDE_LEAVES_A_GRANDCHILD = """
import subprocess
sid = "0b9f3a52-8d7e-4b8e-9c61-1f2a3b4c5d6e"
print(json.dumps({"type": "result", "is_error": False, "result": "done", "session_id": sid}), flush=True)
child = subprocess.Popen([sys.executable, "-I", "-S", "-c", "import time; time.sleep(120)"])  # inherits stdout
open(os.environ["SPY"], "w").write(str(child.pid))
"""


@pytest.mark.slow  # starts processes and waits on them
def test_supervise_ends_the_run_when_the_harness_exits_though_a_grandchild_holds_stdout(
    task: Workspace, tmp_path: Path
):
    spy = tmp_path / "grandchild.pid"
    binary = _fake(tmp_path, "claude", CLAUDE_LEAVES_A_GRANDCHILD)
    started = time.monotonic()
    result = _supervise(task, "claude", binary, {**os.environ, "SPY": str(spy)}, overrides={"invocation_timeout_s": 60})
    assert time.monotonic() - started < 20  # not the grandchild's 120 s, nor the 60 s wall clock
    assert result.exit_code == 3 and "max_invocations" in result.reason  # the run itself succeeded
    pid = int(spy.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)  # the group was killed with it


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return "Z"


SLOW_HARNESS = """
import time
open(os.environ["SPY"], "w").write(str(os.getpid()))
time.sleep(120)
"""


NO_PARENT_DEATH_SIGNAL = """
import ctypes, sys
if sys.platform.startswith("linux"):  # as on macOS: no parent-death signal (PR_SET_PDEATHSIG 0)
    ctypes.CDLL(None).prctl(1, ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
"""
SURVIVES_ITS_PARENT = NO_PARENT_DEATH_SIGNAL + SLOW_HARNESS


def _killed_minus_9(argv: list[str], cwd: Path, spy: Path, record: Path) -> int:
    """Start ``python -m strict_loop ARGV``, wait until its child wrote its pid to ``spy``, SIGKILL its watchdog (named
    in the child ``record``), then it; the child's pid (still running: it has its own session, and clears its
    parent-death signal). The case a restart covers: every other guard gone (tests/test_hostile_process.py)."""
    env = {**os.environ, "SPY": str(spy), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "strict_loop", *argv], cwd=cwd, env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (spy.exists() and spy.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(json.loads(record.read_text())["watchdog"], signal.SIGKILL)
    proc.kill()
    proc.wait()
    pid = int(spy.read_text())
    assert _state(pid) not in ("Z", "X")  # left running by the killed parent
    return pid


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _state(pid) not in ("Z", "X"):
        time.sleep(0.05)
    return _state(pid) in ("Z", "X")


@pytest.mark.slow  # starts a server process or waits seconds on one
def test_a_restart_after_kill_9_of_supervise_kills_the_harness_it_left_running(task: Workspace, tmp_path: Path):
    spy = tmp_path / "harness.pid"
    slow = _fake(tmp_path, "claude", SURVIVES_ITS_PARENT)
    argv = ["supervise", "--task-id", "t", "--harness", "claude", "--harness-bin", str(slow), "--heartbeat", "3600"]
    record = task.task_paths("t").supervisor / "child.json"
    old = _killed_minus_9([*argv, "--workspace", str(task.root)], task.root, spy, record)
    quick = _fake(tmp_path, "quick", 'print(json.dumps({"type": "result", "is_error": False, "result": "ok"}))')
    _supervise(task, "claude", quick, dict(os.environ))
    assert _gone(old)
    started = [e for e in read_jsonl(task.task_paths("t").events) if e["kind"] == "supervisor.started"][-1]
    assert started["data"]["killed_orphan"]["pgid"] == old
    assert not (task.task_paths("t").supervisor / "child.json").exists()


@pytest.mark.slow  # starts a server process or waits seconds on one
def test_a_restart_after_kill_9_of_watch_kills_the_job_it_left_running(task: Workspace, tmp_path: Path):
    from strict_loop.experiments.watch import Watch

    spy = tmp_path / "job.pid"
    (tmp_path / "job.py").write_text("import os\n" + SURVIVES_ITS_PARENT)
    argv = ["watch", "--task-id", "t", "--workspace", str(task.root), "--heartbeat-s", "3600", "--"]
    record = task.task_paths("t").root / "watch" / "child.json"
    old = _killed_minus_9([*argv, sys.executable, str(tmp_path / "job.py")], task.root, spy, record)
    result = Watch(
        task.root, "t", [sys.executable, "-I", "-S", "-c", "pass"], {"heartbeat_s": 3600}, stream=io.StringIO()
    ).run()
    assert result.exit_code == 0 and _gone(old)
    started = [e for e in read_jsonl(task.task_paths("t").events) if e["kind"] == "watch.started"][-1]
    assert started["data"]["killed_orphan"]["pgid"] == old


SEES_ITS_RECORD = """#!/bin/sh
echo $$ > "$SPY.pid"
cat "$RECORD" > "$SPY" 2>/dev/null
echo '{"type": "result", "is_error": false, "result": "ok"}'
"""


def test_a_job_or_harness_runs_nothing_before_its_group_is_recorded_and_watched(
    task: Workspace, tmp_path: Path, monkeypatch
):
    """Issue 26, item 10: the group was recorded (and its watchdog started) only after Popen returned, so the child
    ran unknown meanwhile and a kill -9 then left it where no restart finds it (the test above failed under load:
    the job wrote its pid before child.json existed). The watchdog is slowed here, as on a loaded machine."""
    from strict_loop.experiments.watch import Watch
    from strict_loop.supervisor.orphans import ChildRecord

    real = ChildRecord.started
    monkeypatch.setattr(ChildRecord, "started", lambda self, pid: (time.sleep(0.2), real(self, pid))[1])
    script = tmp_path / "claude"
    script.write_text(SEES_ITS_RECORD)
    script.chmod(0o755)
    for name, record, run in (
        ("watch", task.task_paths("t").root / "watch" / "child.json", None),
        ("supervise", task.task_paths("t").supervisor / "child.json", script),
    ):
        spy = tmp_path / f"{name}.seen"
        env = {**os.environ, "SPY": str(spy), "RECORD": str(record)}
        if run is None:
            Watch(task.root, "t", [str(script)], {"heartbeat_s": 3600}, env=env, stream=io.StringIO()).run()
        else:
            _supervise(task, "claude", run, env)
        seen = json.loads(spy.read_text() or "{}")  # what the child found the moment it started
        assert seen.get("pgid") == int(Path(f"{spy}.pid").read_text()) and seen.get("watchdog"), name
        assert not record.exists()  # and the record went when the child ended


def test_a_child_record_naming_another_process_sends_no_signal(tmp_path: Path):
    from strict_loop.supervisor.orphans import ChildRecord

    other = subprocess.Popen([sys.executable, "-I", "-S", "-c", "import time; time.sleep(30)"])  # not a session leader
    try:
        record = ChildRecord(tmp_path)
        record.started(other.pid)  # its real start time, but not a group of ours
        assert record.reap() is None and other.poll() is None
        (tmp_path / "child.json").write_text(json.dumps({"pgid": os.getpid(), "start": "1", "owner": finished_pid()}))
        assert record.reap() is None  # a forged start time: nothing is killed
    finally:
        other.kill()
        other.wait()


SIGNED_OUT = {
    "claude": 'print(json.dumps({"type": "result", "subtype": "success", "is_error": True, '
    '"result": "Invalid API key \\u00b7 Please run /login"}))',
    "codex": 'print(json.dumps({"type": "thread.started", "thread_id": "01a2086f-f746-7021-8eba-78b83862a37c"}))\n'
    'print(json.dumps({"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized"}}))',
    "codex-stderr": 'sys.exit("Error: Not logged in. Run codex login.")',
    "hermes": 'json.dump({"completed": False, "failed": True, "failure": "HTTP 401: Incorrect API key provided"}, '
    'open(sys.argv[sys.argv.index("--usage-file") + 1], "w"))',
}


@pytest.mark.parametrize("case", list(SIGNED_OUT))
def test_a_harness_that_is_not_signed_in_stops_the_run_at_once_naming_the_fix(
    task: Workspace, tmp_path: Path, case: str
):
    harness = case.split("-")[0]
    binary = _fake(tmp_path, harness, SIGNED_OUT[case])
    overrides = {"max_invocations": 3, "backoff_base_s": 0, "max_consecutive_failures": 3}
    result = _supervise(task, harness, binary, dict(os.environ), overrides=overrides)
    fix = {"claude": "claude /login", "codex": "codex login", "hermes": "API key"}[harness]
    assert (result.exit_code, result.action, result.invocations) == (2, "fail", 1), result.reason
    assert "is not signed in" in result.reason and fix in result.reason
    failed = [e for e in read_jsonl(task.task_paths("t").events) if e["kind"] == "supervisor.failed"]
    assert len(failed) == 1 and failed[0]["data"]["exit_code"] == 2


def test_only_an_authentication_failure_counts_as_signed_out():
    from strict_loop.headless.streambase import Outcome, signed_out

    assert signed_out(Outcome(False, "api error 401: Invalid API key"))
    assert signed_out(Outcome(False, "exit 1 with no turn.completed"), "Error: Not logged in")
    assert not signed_out(Outcome(False, "api error 500: overloaded"))
    assert not signed_out(Outcome(False, "api error 429: rate limit"))
    assert not signed_out(Outcome(True, "completed", last_text="fixed the 401 handler"))


def _when_spied(spy: Path, then) -> threading.Thread:
    """Run ``then()`` in a thread once the fake harness wrote its pid to ``spy``."""

    def wait_then() -> None:
        deadline = time.monotonic() + 30
        while not (spy.exists() and spy.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        then()

    thread = threading.Thread(target=wait_then, daemon=True)
    thread.start()
    return thread


def test_an_error_while_the_harness_runs_ends_its_group_too(task: Workspace, tmp_path: Path):
    """Reviewer: a state.json damaged mid-run (the agent may write one) ended supervise with exit 2 and left the harness
    running with no supervisor and no wall clock."""
    spy = tmp_path / "harness.pid"
    slow = _fake(tmp_path, "claude", SLOW_HARNESS)
    state = task.task_paths("t").state

    def damage() -> None:
        doc = json.loads(state.read_text())
        doc["counters"]["iteration"] = -3
        state.write_text(json.dumps(doc))

    _when_spied(spy, damage)
    with pytest.raises(LoopError, match="counters.iteration"):
        _supervise(task, "claude", slow, {**os.environ, "SPY": str(spy)}, overrides={"invocation_timeout_s": 60})
    assert _gone(int(spy.read_text()))


@pytest.mark.slow  # about a second or more of waiting on processes: the fast tier stays under 30 s
@pytest.mark.parametrize("sig", ["SIGHUP", "SIGTERM"])
def test_a_hang_up_ends_the_run_like_a_terminate(task: Workspace, tmp_path: Path, sig: str):
    """Reviewer: a closed terminal or a dropped ssh session (SIGHUP) killed supervise outright and left the harness."""
    spy = tmp_path / "harness.pid"
    _fake(tmp_path, "claude", SLOW_HARNESS)
    argv = ["supervise", "--task-id", "t", "--harness", "claude", "--harness-bin", str(tmp_path / "claude")]
    env = {**os.environ, "SPY": str(spy), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "strict_loop", *argv, "--workspace", str(task.root), "--heartbeat", "3600"],
        cwd=task.root,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not (spy.exists() and spy.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(getattr(signal, sig))
    assert proc.wait(30) == {"SIGHUP": 129, "SIGTERM": 143}[sig]
    assert _gone(int(spy.read_text()))
    kinds = [e["kind"] for e in read_jsonl(task.task_paths("t").events)]
    assert "supervisor.interrupted" in kinds and not (task.task_paths("t").supervisor / "supervisor.lock").exists()


def test_a_harness_that_floods_its_output_is_recorded_within_bounds(task: Workspace, tmp_path: Path, monkeypatch):
    from strict_loop.supervisor import invocation

    monkeypatch.setattr(invocation, "MAX_RECORD_CHARS", 100_000)
    monkeypatch.setattr(invocation, "MAX_LINE_CHARS", 10_000)
    flood = _fake(
        tmp_path,
        "claude",
        'sys.stdout.write("x" * 3_000_000 + "\\n")\n'
        'for _ in range(2000): print(json.dumps({"type": "noise", "pad": "y" * 500}))\n'
        'print(json.dumps({"type": "result", "is_error": False, "result": "ok"}))',
    )
    result = _supervise(task, "claude", flood, dict(os.environ))
    assert result.exit_code == 3  # the run itself went on to its result
    [record] = task.task_paths("t").supervisor.glob("invocation-*.jsonl")
    text = record.read_text()
    assert len(text) < 120_000 and text.rstrip().endswith('(over 64 MiB)"}')


@pytest.mark.slow  # starts processes and waits on them
def test_a_second_watch_or_supervise_on_a_watched_task_is_refused(task: Workspace, tmp_path: Path):
    """Reviewer: two watches on one task ran two copies of the job side by side, and the second's end removed the
    first's child record (a kill -9 of the first then left its job for good)."""
    spy = tmp_path / "job.pid"
    (tmp_path / "job.py").write_text("import os\n" + SLOW_HARNESS)
    env = {**os.environ, "SPY": str(spy), "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-m", "strict_loop", "watch", "--task-id", "t", "--workspace", str(task.root)]
    first = subprocess.Popen([*argv, "--heartbeat-s", "3600", "--", sys.executable, str(tmp_path / "job.py")], env=env)
    try:
        deadline = time.monotonic() + 30
        while not (spy.exists() and spy.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        second = subprocess.run(
            [*argv, "--", sys.executable, "-I", "-S", "-c", "pass"], env=env, capture_output=True, text=True
        )
        assert second.returncode == 2 and "is already supervised by pid" in second.stderr
        slow = _fake(tmp_path, "claude", SLOW_HARNESS)
        with pytest.raises(LoopError, match="already supervised"):
            _supervise(task, "claude", slow, dict(os.environ))
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(30) == 143
    assert _gone(int(spy.read_text())) and not (task.task_paths("t").supervisor / "supervisor.lock").exists()
