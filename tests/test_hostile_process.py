"""Processes under hostile conditions (issue 25, items 19 and 20): a ``kill -9`` of ``strict-loop watch`` or
``strict-loop supervise`` leaves nothing it started running unwatched, and on a system without ``/proc`` (macOS)
process identity, reaping and memory still work, through psutil.

The real CLI runs in a process of its own for the kills; the ``/proc`` tests hide ``/proc`` from every reader that
goes through ``os`` or ``pathlib`` (as on macOS) while psutil, which opens its files itself, still answers."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from conftest import finished_pid, run_cli

from strict_loop import Workspace
from strict_loop.base.errors import LoopError
from strict_loop.supervisor import lock
from strict_loop.supervisor.orphans import ChildRecord

JOB = """
import ctypes, json, os, subprocess, sys, time
if sys.argv[-1] == "no-parent-death-signal" and sys.platform.startswith("linux"):  # as on macOS: the watchdog alone
    ctypes.CDLL(None).prctl(1, ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
grandchild = subprocess.Popen(["sleep", "300"])  # in the child's process group
spy = os.environ["SPY"]
with open(spy + ".tmp", "w") as fh:
    json.dump({"child": os.getpid(), "grandchild": grandchild.pid}, fh)
os.replace(spy + ".tmp", spy)
time.sleep(300)
"""


def gone(pid: int, within: float = 5.0) -> bool:
    """Whether ``pid`` ended (a zombie nobody reaped yet counts as ended) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            if psutil.Process(pid).status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def kill_9(argv: list[str], cwd: Path, spy: Path, record: Path, first_the_watchdog: bool = False) -> dict:
    """Run ``python -m strict_loop ARGV`` until its child reported, then ``kill -9`` it (and its watchdog first, if
    asked); the child's and grandchild's pids."""
    env = {**os.environ, "SPY": str(spy), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "strict_loop", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not spy.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    if not spy.exists():
        proc.kill()
        pytest.fail(f"the child never started: {proc.communicate()[1][-2000:]!r}")
    pids = json.loads(spy.read_text())
    with cleanup(pids, on_error_only=True):
        try:
            if first_the_watchdog:
                os.kill(json.loads(record.read_text())["watchdog"], signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
    return pids


@contextlib.contextmanager
def cleanup(pids: dict, on_error_only: bool = False):
    """SIGKILL the job's processes when the block ends (when it fails, with ``on_error_only``): none is left behind."""
    try:
        yield
    except BaseException:
        on_error_only = False
        raise
    finally:
        for pid in pids.values() if not on_error_only else ():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("guard", ["kernel and watchdog", "watchdog alone"])
def test_a_kill_9_of_watch_ends_its_job_and_the_jobs_whole_group_at_once(task: Workspace, tmp_path: Path, guard):
    job = tmp_path / "job.py"
    job.write_text(JOB)
    mode = "no-parent-death-signal" if guard == "watchdog alone" else "-"
    argv = ["watch", "--task-id", "t", "--workspace", str(task.root), "--heartbeat-s", "3600", "--"]
    record = task.task_paths("t").root / "watch" / "child.json"
    pids = kill_9([*argv, sys.executable, str(job), mode], task.root, tmp_path / "spy.json", record)
    with cleanup(pids):
        assert gone(pids["child"]), "the job outlived the killed watch"
        assert gone(pids["grandchild"]), "a process of the job's group outlived the killed watch"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_with_the_watchdog_killed_too_the_kernel_still_ends_the_job(task: Workspace, tmp_path: Path):
    job = tmp_path / "job.py"
    job.write_text(JOB)
    argv = ["watch", "--task-id", "t", "--workspace", str(task.root), "--heartbeat-s", "3600", "--"]
    record = task.task_paths("t").root / "watch" / "child.json"
    pids = kill_9([*argv, sys.executable, str(job), "-"], task.root, tmp_path / "spy.json", record, True)
    with cleanup(pids):
        assert gone(pids["child"]), "the job outlived the killed watch and its watchdog"


def test_a_kill_9_of_supervise_ends_the_harness_and_its_whole_group_at_once(task: Workspace, tmp_path: Path):
    harness = tmp_path / "claude"
    harness.write_text(f"#!{sys.executable} -S\n{JOB}")
    harness.chmod(0o755)
    argv = ["supervise", "--task-id", "t", "--harness", "claude", "--harness-bin", str(harness), "--heartbeat", "3600"]
    record = task.task_paths("t").supervisor / "child.json"
    pids = kill_9([*argv, "--workspace", str(task.root)], task.root, tmp_path / "spy.json", record)
    with cleanup(pids):
        assert gone(pids["child"]), "the harness outlived the killed supervisor"
        assert gone(pids["grandchild"]), "a process the harness started outlived the killed supervisor"


def test_a_child_that_ends_under_our_eyes_stands_its_watchdog_down_without_a_signal(tmp_path: Path):
    sleeper = subprocess.Popen(["sleep", "30"], start_new_session=True)  # its group id may be reused once it ends
    try:
        record = ChildRecord(tmp_path)
        record.started(sleeper.pid)
        watchdog = json.loads((tmp_path / "child.json").read_text())["watchdog"]
        record.ended()
        assert gone(watchdog, 2) and not (tmp_path / "child.json").exists()
        time.sleep(0.1)
        assert sleeper.poll() is None  # the watchdog sent nothing on its way out
    finally:
        sleeper.kill()
        sleeper.wait()


# ---------------------------------------------------------------- no /proc (item 20)


@pytest.fixture
def no_proc(monkeypatch):
    """/proc hidden from every reader that goes through os or pathlib, as on macOS (psutil still answers)."""

    def hidden(path) -> bool:
        try:
            text = os.fsdecode(path)
        except TypeError:  # a file descriptor
            return False
        return text == "/proc" or text.startswith("/proc/")

    def refuse(path) -> None:
        raise FileNotFoundError(2, "No such file or directory (no /proc here)", os.fsdecode(path))

    for module, name in ((os, "stat"), (os, "lstat"), (os, "open"), (os, "listdir"), (os, "scandir")):
        real = getattr(module, name)

        def spy(path=".", *args, _real=real, **kwargs):
            if hidden(path):
                refuse(path)
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    for name in ("read_text", "read_bytes", "open"):
        real = getattr(pathlib.Path, name)

        def method(self, *args, _real=real, **kwargs):
            if hidden(self):
                refuse(self)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(pathlib.Path, name, method)
    assert not Path("/proc/self/stat").exists()


def test_without_proc_a_reused_pid_is_no_live_lock_holder_and_a_zombie_holds_nothing(tmp_path: Path, no_proc):
    holder = subprocess.Popen(["sleep", "30"])
    try:
        supervisor_lock = lock.SupervisorLock(tmp_path, "t")
        reused = {"pid": holder.pid, "start": "12345", "harness": "claude", "started_at": "then"}
        (tmp_path / "supervisor.lock").write_text(json.dumps(reused))  # its pid, another process's start time
        assert supervisor_lock.acquire("claude", None) == reused  # taken over, not refused
        supervisor_lock.release()
        same = {**reused, "start": lock.process_start(holder.pid)}
        (tmp_path / "supervisor.lock").write_text(json.dumps(same))  # the very process: refused while it runs
        with pytest.raises(LoopError, match="already supervised"):
            supervisor_lock.acquire("claude", None)
        holder.kill()
        time.sleep(0.1)  # killed, not yet reaped: a zombie
        assert not lock.alive(same)
    finally:
        holder.kill()
        holder.wait()


def test_without_proc_the_group_a_killed_supervisor_left_is_reaped(tmp_path: Path, no_proc):
    left = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        start = lock.process_start(left.pid)
        record = {"pgid": left.pid, "start": start, "owner": finished_pid(), "owner_start": "1", "started_at": "x"}
        (tmp_path / "child.json").write_text(json.dumps(record))
        waiter = threading.Thread(target=left.wait)  # reaped the moment it ends: the group is gone at once
        waiter.start()
        reaped = ChildRecord(tmp_path).reap()
        waiter.join(5)
        assert reaped is not None and reaped["pgid"] == left.pid and left.returncode == -signal.SIGTERM
    finally:
        left.kill()
        left.wait()


def test_without_proc_compute_still_knows_the_memory(ws_dir: Path, no_proc):
    report = json.loads(run_cli("compute", "--json", "--workspace", str(ws_dir), cwd=ws_dir).stdout)
    assert report["memory_total_mb"] and report["memory_total_mb"] >= report["memory_available_mb"] > 0
    assert round(report["memory_total_mb"]) == round(psutil.virtual_memory().total / 2**20)
    assert not [note for note in report["notes"] if "memory" in note]
