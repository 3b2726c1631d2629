"""The supervisor's parts that need no harness: its per-task lock, the dedupe of recorded tool calls, its refusals.

The harness runs themselves are in test_supervisor_e2e.py (slow).
"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

import pytest
from conftest import finished_pid, read_jsonl, run_cli

from strict_loop import Workspace
from strict_loop.base.errors import LoopError
from strict_loop.headless.streambase import ToolCall
from strict_loop.loop.recording import record_turn
from strict_loop.supervisor.lock import SeenIds, SupervisorLock, alive, process_start, zombie
from strict_loop.supervisor.runner import Supervisor

TURN = {"tool": "Bash", "args": {"command": "ls"}, "output": "a.txt\n", "error": False, "exit_code": 0}


def test_a_live_holder_refuses_a_second_supervisor(tmp_path: Path):
    lock = SupervisorLock(tmp_path, "t")
    assert lock.acquire("claude", None) is None
    with pytest.raises(LoopError) as err:
        SupervisorLock(tmp_path, "t").acquire("codex", None)
    assert "already supervised by pid" in str(err.value) and "kill -INT" in str(err.value)
    lock.release()
    assert not lock.path.exists()


def test_a_dead_holders_lock_is_taken_over(tmp_path: Path):
    lock = SupervisorLock(tmp_path, "t")
    dead = {"pid": finished_pid(), "start": "1", "harness": "codex", "started_at": "then"}
    lock.path.write_text(json.dumps(dead))
    assert not alive(dead)
    assert lock.acquire("claude", "sess-1") == dead
    assert lock.holder()["pid"] != dead["pid"] and lock.holder()["session_id"] == "sess-1"


def test_a_reused_pid_with_another_start_time_is_stale(tmp_path: Path):
    """Our own pid, alive, but recorded with another start time: a crashed holder whose pid came back."""
    import os

    mine = process_start(os.getpid())
    if mine is None:
        pytest.skip("no /proc here: the start time is unknown")
    recycled = {"pid": os.getpid(), "start": str(int(mine) + 1)}
    assert not alive(recycled) and alive({"pid": os.getpid(), "start": mine})
    lock = SupervisorLock(tmp_path, "t")
    lock.path.write_text(json.dumps(recycled))
    assert lock.acquire("claude", None) == recycled


def test_a_killed_holder_not_yet_reaped_is_not_alive(tmp_path: Path):
    """Reviewer: a supervisor killed but not yet reaped by its parent (a zombie) still held the task."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", "import time; time.sleep(60)"])
    holder = {"pid": proc.pid, "start": process_start(proc.pid)}
    assert alive(holder)
    proc.kill()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not zombie(proc.pid):
        time.sleep(0.02)
    try:
        assert zombie(proc.pid) and not alive(holder)
        lock = SupervisorLock(tmp_path, "t")
        lock.path.write_text(json.dumps(holder))
        assert lock.acquire("claude", None) == holder  # taken over, not "already supervised"
    finally:
        proc.wait()


def test_a_torn_lock_file_is_stale_and_release_spares_a_successor(tmp_path: Path):
    lock = SupervisorLock(tmp_path, "t")
    lock.path.write_text('{"pid": 12')  # a crash mid-write
    assert lock.acquire("hermes", None) == {}
    successor = {"pid": 1, "start": None, "harness": "codex"}
    lock.path.write_text(json.dumps(successor))  # someone took over while we ran (we were thought dead)
    lock.release()
    assert json.loads(lock.path.read_text()) == successor


def test_seen_ids_are_bounded_and_rebuilt_from_events():
    seen = SeenIds(cap=3)
    for i in range(5):
        seen.add(f"id{i}")
    assert len(seen) == 3 and "id0" not in seen and "id4" in seen
    seen.absorb(
        [
            {"kind": "tool_call", "data": {"hook": {"tool_use_id": "toolu_9"}}},
            {"kind": "tool_call", "data": {"hook": {"call_id": "2:item_1"}}},
            {"kind": "note", "data": {"hook": {"tool_use_id": "not-a-call"}}},
        ]
    )
    assert "toolu_9" in seen and "2:item_1" in seen and "not-a-call" not in seen


def _supervisor(ws: Workspace) -> Supervisor:
    return Supervisor(ws.root, "t", "claude", harness_bin=sys.executable, stderr=io.StringIO())


def test_a_call_a_hook_recorded_is_not_recorded_again(task: Workspace):
    store = task.task_store("t")
    record_turn(store, task.root, "hook", TURN, meta={"harness": "claude", "tool_use_id": "toolu_1"})
    sup = _supervisor(task)
    assert sup._record(ToolCall("toolu_1", TURN), 1) is False  # the hook's
    sup._record(ToolCall("toolu_2", TURN), 1)
    sup._record(ToolCall("toolu_2", TURN), 1)  # a line seen twice
    fresh = _supervisor(task)  # a restarted supervisor rebuilds what it saw from the events
    fresh._record(ToolCall("toolu_2", TURN), 1)
    calls = [e for e in read_jsonl(task.task_paths("t").events) if e["kind"] == "tool_call"]
    assert [c["data"]["hook"].get("tool_use_id") or c["data"]["hook"]["call_id"] for c in calls] == [
        "toolu_1",
        "1:toolu_2",
    ]
    fresh._record(ToolCall("toolu_2", TURN), 2)  # a per-session id (Codex's item_N) in a later invocation is a new call
    assert len([e for e in read_jsonl(task.task_paths("t").events) if e["kind"] == "tool_call"]) == 3


def test_the_invocation_counter_continues_from_disk(task: Workspace):
    folder = task.task_paths("t").supervisor
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "invocation-0007.prompt.txt").write_text("p")
    assert _supervisor(task)._next_invocation() == 8


def test_agents_cannot_write_supervisor_events(task: Workspace):
    r = run_cli(
        "append_event",
        "--workspace",
        str(task.root),
        "--task-id",
        "t",
        "--kind",
        "supervisor.interrupted",
        "--message",
        "forged",
        cwd=task.root,
        check=False,
    )
    assert r.returncode == 2 and "written by strict-loop itself" in r.stderr


def test_supervise_refuses_bad_input_before_launching(task: Workspace, tmp_path: Path, monkeypatch):
    root = str(task.root)
    r = run_cli(
        "supervise",
        "--workspace",
        root,
        "--task-id",
        "nope",
        "--harness",
        "claude",
        "--harness-bin",
        sys.executable,
        cwd=task.root,
        check=False,
    )
    assert r.returncode == 2 and "nope" in r.stderr
    r = run_cli(
        "supervise",
        "--workspace",
        root,
        "--task-id",
        "t",
        "--harness",
        "codex",
        "--harness-bin",
        str(tmp_path / "missing"),
        cwd=task.root,
        check=False,
    )
    assert r.returncode == 2 and "--harness-bin" in r.stderr
    r = run_cli(
        "supervise",
        "--workspace",
        root,
        "--task-id",
        "t",
        "--harness",
        "codex",
        "--harness-bin",
        sys.executable,
        "--max-cost-usd",
        "1",
        cwd=task.root,
        check=False,
    )
    assert r.returncode == 2 and "usd_per_mtok_in" in r.stderr
    r = run_cli(
        "supervise",
        "--workspace",
        root,
        "--task-id",
        "t",
        "--harness",
        "claude",
        "--harness-bin",
        sys.executable,
        "--max-invocations",
        "0",
        cwd=task.root,
        check=False,
    )
    assert r.returncode == 2 and "max_invocations" in r.stderr
    assert not task.task_paths("t").supervisor.exists() or not list(
        task.task_paths("t").supervisor.glob("invocation-*")
    )


def test_supervise_launches_nothing_for_untrusted_stop_commands(ws_dir: Path, tmp_path: Path, monkeypatch):
    ws = Workspace(ws_dir)
    ws.init_state(
        task_id="u", goal="Pass the tests", global_stop_condition="tests pass", stop_checks={"commands": ["true"]}
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another-machine"))  # this machine never trusted the contract
    r = run_cli(
        "supervise",
        "--workspace",
        str(ws_dir),
        "--task-id",
        "u",
        "--harness",
        "claude",
        "--harness-bin",
        sys.executable,
        cwd=ws_dir,
        check=False,
    )
    assert r.returncode == 2 and "strict-loop trust --task-id u" in r.stderr
    assert not list(ws.task_paths("u").supervisor.glob("invocation-*"))


def test_supervise_launches_nothing_for_a_task_without_a_machine_stop_check(ws_dir: Path):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="nc", goal="Make it nicer", global_stop_condition="the agent thinks so")
    r = run_cli(
        "supervise",
        "--workspace",
        str(ws_dir),
        "--task-id",
        "nc",
        "--harness",
        "claude",
        "--harness-bin",
        sys.executable,
        cwd=ws_dir,
        check=False,
    )
    assert r.returncode == 2 and "no machine stop check" in r.stderr and "--stop-command" in r.stderr
    assert "Traceback" not in r.stderr
    assert not list(ws.task_paths("nc").supervisor.glob("invocation-*"))


def test_the_heartbeat_line_has_round_pace_and_eta():
    from strict_loop.supervisor.heartbeat import status_line

    line = status_line("t", rounds=12, max_rounds=100, rounds_at_start=2, invocation=3, elapsed_s=3600)
    assert "round 12/100" in line and "invocation 3" in line and "elapsed 1:00:00" in line
    assert "10.0 rounds/h" in line and "ETA 8:48:00" in line
    assert "ETA unknown" in status_line("t", 2, 100, 2, 1, 30)  # no round yet: no pace, no guess


def test_the_heartbeat_writes_latest_status_and_stderr_without_a_bar_off_a_terminal(task: Workspace):
    from strict_loop.supervisor.heartbeat import Heartbeat

    out = io.StringIO()
    heart = Heartbeat(task.task_store("t"), lambda: task.supervisor("t"), interval_s=3600, stream=out)
    assert heart.beat(1) is not None and heart.beat(1) is None  # the first is due; the next waits its interval
    assert heart.beat(2, force=True)
    text = task.task_paths("t").latest_status.read_text()
    assert "[supervisor] t | round 0/100 | invocation 2" in text
    assert out.getvalue().count("[supervisor] t") == 2 and heart._bar is None
    heart.close()


def test_on_a_terminal_the_heartbeat_draws_rich_s_progress_bar(task: Workspace):
    """A real pseudo-terminal: the bar (rounds done of the task's max) and the status line reach it."""
    import os
    import pty

    from strict_loop.supervisor.heartbeat import Heartbeat

    master, slave = pty.openpty()
    term = os.fdopen(slave, "w", encoding="utf-8")
    try:
        heart = Heartbeat(task.task_store("t"), lambda: task.supervisor("t"), interval_s=3600, stream=term)
        assert heart._bar is not None
        heart.beat(1, force=True)
        heart.close()
        term.flush()
        shown = b""
        while True:  # what the terminal received so far (no more once a read would block)
            import select

            if not select.select([master], [], [], 0.2)[0]:
                break
            shown += os.read(master, 65536)
    finally:
        term.close()
        os.close(master)
    text = shown.decode("utf-8", "replace")
    assert "t rounds" in text and "0/100" in text and "[supervisor] t | round 0/100 | invocation 1" in text
    assert "━" in text or "─" in text  # the bar itself
