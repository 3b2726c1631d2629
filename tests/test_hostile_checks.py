"""Issue 13, items 8, 10 and 11: stop commands get none of the project's secrets and every secret-looking
value is masked in what is kept; a stop command's whole process group ends with it (Ctrl-C included) and
its output is capped without touching the disk; text and path checks read only regular files inside the
workspace, capped in size, and a check that points elsewhere is refused at init_state."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import run_script, tree_digest
from test_stopchecks import _alive

from strict_loop import Workspace
from strict_loop.base import masking
from strict_loop.loop.stopchecks import MAX_TEXT_BYTES, run_command

WEBHOOK = "https://hooks.example/T0/B0/webhook-secret-123"
MCP_TOKEN = "mcp-token-abcdef-987"
API_KEY = "sk-live-api-key-4242"


def _init(ws_dir: Path, task: str = "t", **checks) -> Workspace:
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id=task, stop_checks=checks)
    return ws


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _wait_for(path: Path, within: float = 10.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path.name} never appeared")


# --- item 8: secrets ------------------------------------------------------------------------------


def test_stop_commands_lack_the_projects_secrets_and_every_secret_is_masked(ws_dir, monkeypatch):
    monkeypatch.setenv("STRICT_LOOP_WEBHOOK_URL", WEBHOOK)
    monkeypatch.setenv("STRICT_LOOP_MCP_TOKEN", MCP_TOKEN)
    monkeypatch.setenv("APPRISE_URLS", "json://alerts.example/a1b2c3d4, mailto://u:pw123456@mail.example")
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("FEATURE_KEY_ENABLED", "true")  # too short to be a secret: left readable
    (ws_dir / "key.txt").write_text(API_KEY)
    received = (
        '[ -z "$STRICT_LOOP_WEBHOOK_URL$STRICT_LOOP_MCP_TOKEN$APPRISE_URLS" ] && [ "$OPENAI_API_KEY" = "$(cat '
        'key.txt)" ]'
    )
    # the project's secrets are not in the command's environment, but may still reach its output (a config file, a log)
    (ws_dir / "leak.txt").write_text(
        f"{WEBHOOK} {MCP_TOKEN}\nhttps://bob:hunter2222@db.example/x\njson://alerts.example/a1b2c3d4\n"
    )
    ws = _init(ws_dir, commands=[received, "env; cat leak.txt; exit 1"])
    report = ws.check_stop(task_id="t")
    assert report.checks[0].passed, "the project's secrets reached the stop command, or the API key did not"
    tail = report.checks[1].output_tail
    assert f"OPENAI_API_KEY={masking.MASK}" in tail and "FEATURE_KEY_ENABLED=true" in tail
    assert f"https://{masking.MASK}@db.example/x" in tail and "STRICT_LOOP_WEBHOOK_URL" not in tail
    stored = b"".join(p.read_bytes() for p in (ws_dir / ".agent-loop").rglob("*") if p.is_file())
    returned = report.model_dump_json().encode()
    for secret in (WEBHOOK, MCP_TOKEN, API_KEY, "hunter2222", "a1b2c3d4", "pw123456"):
        assert secret.encode() not in stored and secret.encode() not in returned, secret


def test_mask_rules():
    env = {
        "GITHUB_TOKEN": "ghp_abcdefgh",
        "MY_PAT": "pat-123456",
        "DB_PASSWORD": "pw",
        "HOME": "/home/someone-long",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
        "TOKEN_PREFIX": "ghp_abcdefgh-and-more",
    }
    text = (
        "ghp_abcdefgh-and-more ghp_abcdefgh pat-123456 pw /home/someone-long /tmp/ssh-agent.sock git+ssh://git@host/x"
    )
    assert masking.mask(text, env) == "*** *** *** pw /home/someone-long /tmp/ssh-agent.sock git+ssh://***@host/x"
    assert masking.command_env({"STRICT_LOOP_X": "1", "apprise_urls": "x", "API_KEY": "k"}) == {"API_KEY": "k"}


# --- item 10: process groups and output caps -------------------------------------------------------


def test_a_background_child_does_not_outlive_check_stop(ws_dir):
    ws = _init(ws_dir, commands=["sleep 300 & echo $! > bg.pid; echo started"])
    started = time.monotonic()
    report = ws.check_stop(task_id="t")
    assert report.checks[0].passed and report.checks[0].output_tail == ""  # a passing check keeps no output
    assert time.monotonic() - started < 10
    assert _gone(_wait_for(ws_dir / "bg.pid")), "the backgrounded sleep outlived check_stop"


@pytest.mark.slow  # a real server process or seconds of waiting: full suite only
def test_a_process_that_leaves_the_group_cannot_hold_check_stop(tmp_path):
    started = time.monotonic()
    result = run_command("setsid sleep 300 & echo $! > esc.pid; sleep 0.3; echo done", tmp_path, 30, 100)
    escaped = _wait_for(tmp_path / "esc.pid")
    try:
        assert result.passed and result.output_tail == "done\n"
        assert time.monotonic() - started < 5, "check_stop waited on a pipe held by a process outside the group"
    finally:
        os.kill(escaped, signal.SIGKILL)


_YES = """
import json, os, resource, sys, time
from pathlib import Path
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))  # a file past 1 MiB kills its writer
from strict_loop.loop.stopchecks import run_command

def _peak_kib():  # VmHWM is this program's own peak (ru_maxrss carries the forking parent's peak across exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

started = time.monotonic()
r = run_command("yes", Path(sys.argv[1]), 0.5, 3000)  # 0.4-1.5 GB of y in 0.5 s (measured): kept, 4-15x the bound
print(json.dumps({"s": time.monotonic() - started, "timed_out": r.timed_out, "tail": len(r.output_tail),
                  "rss_kib": _peak_kib(), "only_y": set(r.output_tail) <= set("y\\n")}))
"""


@pytest.mark.slow  # a real server process or seconds of waiting: full suite only
def test_yes_is_capped_in_memory_and_writes_nothing_to_disk(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    proc = subprocess.run(
        [sys.executable, "-c", _YES, str(tmp_path)], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # `yes` ran until the timeout: had its output gone to a file, the 1 MiB file-size limit would have killed it
    assert out["timed_out"] and out["s"] < 6 and out["tail"] == 3000 and out["only_y"]
    assert out["rss_kib"] < 100_000, "the output was kept in memory beyond the cap"  # capped: ~27 MB
    assert list(tmpdir.iterdir()) == [] and sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file()) < 1 << 20


_RUNNER = "import sys\nfrom strict_loop.cli.app import main\nsys.exit(main(['check_stop', '--task-id', 't']))\n"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_interrupting_check_stop_ends_the_commands_group(ws_dir, sig):
    _init(ws_dir, commands=["echo $$ > leader.pid; sleep 300 & echo $! > bg.pid; sleep 300"])
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUNNER],
        cwd=ws_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        background, leader = _wait_for(ws_dir / "bg.pid"), _wait_for(ws_dir / "leader.pid")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
    detail = f"exit {proc.returncode}\nstdout: {out[-2000:]!r}\nstderr: {err[-3000:]!r}"
    assert proc.returncode != 0, detail
    assert _gone(leader) and _gone(background), "the stop command's group outlived an interrupted check_stop: " + detail


_THREADED = """
import sys, threading, time
from pathlib import Path
from strict_loop.loop.stopchecks import run_command
threading.Thread(target=run_command, args=(sys.argv[1], Path("."), 300, 100), daemon=True).start()
while not Path("bg.pid").exists():
    time.sleep(0.02)
"""


def test_a_command_run_by_a_worker_thread_ends_when_the_interpreter_does(tmp_path):
    """An MCP server runs check_stop in worker threads: leaving the interpreter must not leave the command behind."""
    command = "echo $$ > leader.pid; sleep 300 & echo $! > bg.pid; sleep 300"
    subprocess.run([sys.executable, "-c", _THREADED, command], cwd=tmp_path, timeout=30, check=True)
    leader, background = _wait_for(tmp_path / "leader.pid"), _wait_for(tmp_path / "bg.pid")
    assert _gone(leader) and _gone(background), "a stop command outlived the process that started it"


# --- item 11: where text and path checks may look --------------------------------------------------


@pytest.mark.parametrize(
    "flag, value, field",
    [
        ("--require-path", "/etc/hostname", "paths_exist"),
        ("--require-path", "../outside.txt", "paths_exist"),
        ("--require-path", "docs/../../outside.txt", "paths_exist"),
        ("--require-path", "~/notes.md", "paths_exist"),
        ("--require-text", "/dev/zero::x", "text_patterns"),
        ("--require-text", "../secret.txt::re:.", "text_patterns"),
        ("--require-text", "~/.ssh/id_rsa::KEY", "text_patterns"),
    ],
)
def test_init_state_refuses_checks_outside_the_workspace(ws_dir, flag, value, field):
    before = tree_digest(ws_dir)
    run = run_script(
        "init_state",
        "--task-id",
        "t",
        "--goal",
        "g",
        "--global-stop-condition",
        "c",
        flag,
        value,
        cwd=ws_dir,
        check=False,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1
    assert f"init_state.stop_checks.{field}" in run.stderr and "relative to the workspace root" in run.stderr
    assert tree_digest(ws_dir) == before and not (ws_dir / ".agent-loop").exists()


def _checked_within(ws: Workspace, seconds: float):
    """check_stop in a thread: a check that blocks fails the test instead of hanging the suite."""
    box: dict = {}
    worker = threading.Thread(target=lambda: box.update(report=ws.check_stop(task_id="t")), daemon=True)
    worker.start()
    worker.join(seconds)
    return box.get("report")


def test_special_files_and_symlinks_out_of_the_workspace_fail_without_being_opened(ws_dir, tmp_path):
    os.mkfifo(ws_dir / "pipe")
    (ws_dir / "zero").symlink_to("/dev/zero")
    (tmp_path / "outside.txt").write_text("secret")
    (ws_dir / "out").symlink_to(tmp_path / "outside.txt")
    (ws_dir / "docs").mkdir()
    (ws_dir / "docs" / "real.md").write_text("done\n")
    (ws_dir / "in").symlink_to("docs/real.md")
    ws = _init(
        ws_dir,
        paths_exist=["pipe", "zero", "out", "docs", "in"],
        text_patterns=["pipe::x", "zero::x", "out::secret", "docs::x", "in::done"],
    )
    try:
        report = _checked_within(ws, 10)
    finally:  # unblock a reader stuck on the FIFO, so a failure cannot hang the worker
        fd = os.open(ws_dir / "pipe", os.O_WRONLY | os.O_NONBLOCK) if report is None else None
        if fd is not None:
            os.close(fd)
    assert report is not None, "check_stop blocked on a FIFO or an endless device"
    details = {(c.kind, c.target): (c.passed, c.detail) for c in report.checks}
    assert details[("path", "pipe")] == (False, "is a FIFO, not a regular file or directory")
    assert details[("text", "pipe::x")] == (False, "pipe cannot be read: it is a FIFO, not a regular file")
    for target in ("zero", "out"):
        assert "resolves (through a symlink) outside the workspace root" in details[("path", target)][1]
    for spec in ("zero::x", "out::secret"):
        passed, detail = details[("text", spec)]
        assert not passed and "outside the workspace root" in detail
    assert details[("path", "docs")] == (True, "exists") and details[("path", "in")] == (True, "exists")
    assert details[("text", "docs::x")] == (False, "docs cannot be read: it is a directory, not a regular file")
    assert details[("text", "in::done")] == (True, "in contains 'done'")


def test_a_file_beyond_the_cap_fails_the_text_check_promptly(ws_dir):
    with open(ws_dir / "huge.log", "wb") as fh:
        fh.truncate(MAX_TEXT_BYTES + 1)  # sparse: costs no disk
    (ws_dir / "edge.log").write_bytes(b"x" * (MAX_TEXT_BYTES - 4) + b"DONE")
    ws = _init(ws_dir, text_patterns=["huge.log::x", "edge.log::DONE"])
    started = time.monotonic()
    huge, edge = ws.check_stop(task_id="t").checks
    assert time.monotonic() - started < 10
    assert (
        not huge.passed
        and huge.detail == "huge.log is larger than 16 MiB, the cap for text checks; check a smaller file"
    )
    assert edge.passed


def test_a_stored_contract_with_an_absolute_path_still_loads_and_its_check_is_refused(ws_dir):
    """A 0.1.0 task (or a hand edit) may carry such a path: the task stays readable; the check fails, reading
    nothing."""
    ws = _init(ws_dir, paths_exist=["notes.md"])
    state_file = ws.task_paths("t").state
    state = json.loads(state_file.read_text())
    state["contract"]["stop_checks"]["paths_exist"] = ["/etc/hostname"]
    state["contract"]["stop_checks"]["text_patterns"] = ["/etc/hostname::re:."]
    state_file.write_text(json.dumps(state))
    view = Workspace(ws_dir).show_task(task_id="t")
    assert view.state.contract.stop_checks.paths_exist == ["/etc/hostname"]
    path, text = Workspace(ws_dir).check_stop(task_id="t").checks
    assert (
        not path.passed
        and path.detail == "/etc/hostname refused: it is absolute; stop-check paths are relative to the workspace root"
    )
    assert not text.passed and text.detail.startswith("/etc/hostname refused: it is absolute")


def test_a_legacy_contract_with_absolute_paths_keeps_the_task_readable(ws_dir):
    root = ws_dir / ".codex-loop" / "tasks" / "old"
    root.mkdir(parents=True)
    (root / "state.json").write_text(
        json.dumps(
            {
                "goal": "port it",
                "global_stop_condition": "done",
                "workspace_root": "/somewhere/it/used/to/live",
                "counters": {"iteration": 0},
                "status": "running",
                "stop_checks": {
                    "paths_exist": [
                        {"path": str(ws_dir / "docs" / "a.md")},
                        {"path": "/somewhere/it/used/to/live/b.md"},
                        {"path": "/etc/passwd"},
                        {"path": "c.md"},
                    ],
                    "text_patterns": [
                        {"path": "/etc/shadow", "pattern": "root"},
                        {"path": str(ws_dir / "d.md"), "pattern": "x"},
                    ],
                },
            }
        )
    )
    ws = Workspace(ws_dir)
    checks = ws.show_task(task_id="old").state.contract.stop_checks
    assert checks.paths_exist == ["docs/a.md", "b.md", "c.md"] and checks.text_patterns == ["d.md::x"]
    ws.append_event(task_id="old", kind="note", message="first write: the task is migrated")
    events = [json.loads(line) for line in ws.task_paths("old").events.read_text().splitlines()]
    migrated = next(e for e in events if e["kind"] == "task.migrated")
    assert migrated["data"]["dropped_stop_checks"] == ["/etc/shadow::root", "/etc/passwd"]
    assert "dropped 2 stop check(s) whose path leaves the workspace" in migrated["message"]


def test_secrets_in_what_the_agent_reports_are_masked_before_storage(ws_dir, monkeypatch):
    from strict_loop import Workspace

    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-0123456789")
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="m")
    ws.append_event(
        task_id="m",
        kind="tool_call",
        message="ran env with sk-live-0123456789",
        data={
            "tool": "bash",
            "args": {"command": "curl https://bob:hunter22@example.test/x"},
            "output": "OPENAI_API_KEY=sk-live-0123456789\n",
            "exit_code": 0,
        },
    )
    ws.append_event(task_id="m", kind="note", message="note", data={"nested": ["key sk-live-0123456789"]})
    stored = b"".join(p.read_bytes() for p in (ws_dir / ".agent-loop").rglob("*") if p.is_file())
    assert b"sk-live-0123456789" not in stored and b"hunter22" not in stored
    assert b"OPENAI_API_KEY=***" in stored and b"https://***@example.test/x" in stored
