#!/usr/bin/env python3
"""Benchmark: what a PreToolUse costs with 1 task folder in the workspace and with 500 (issue 25, item 16).

A workspace keeps every task it ever ran; a hook runs before every tool call of the agent. Each workspace here
has one running task; the larger one also holds 499 completed tasks (copies of the first, marked completed).
It times the hook's answer at PreToolUse (nothing to say: the task runs and is not paused) in-process
(``handler.handle``, the hook's whole work) and end to end (the installed ``strict-loop hook claude``, a process per
call as a harness runs it), interleaved, and prints each median and the ratio 500 : 1. The ratio is the point
(about 1.0 when the hook's work does not grow with the tasks); the times depend on the machine.

    python bench/hook_task_count.py               # 300 in-process calls and 20 processes of each
    python bench/hook_task_count.py --tasks 2000 --runs 100 --processes 10
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace  # noqa: E402
from strict_loop.harness import handler  # noqa: E402


def workspace(root: Path, tasks: int) -> Path:
    """A workspace with one running task and ``tasks - 1`` completed ones; its tasks/ folder dated 10 s back (a
    folder changed within the last 2 s is scanned again on every call, on purpose)."""
    root.mkdir()
    Workspace(root).init_state(task_id="live", goal="Make the tests pass", global_stop_condition="pytest passes")
    folder = root / ".agent-loop/tasks"
    for i in range(tasks - 1):
        copy = folder / f"done-{i:04d}"
        shutil.copytree(folder / "live", copy, ignore=shutil.ignore_patterns(".lock"))
        state = json.loads((copy / "state.json").read_text())
        state.update(task_id=copy.name, status="completed")
        (copy / "state.json").write_text(json.dumps(state))
    past = time.time() - 10
    os.utime(folder, (past, past))
    return root


def payload(root: Path, n: int) -> str:
    return json.dumps(
        {
            "session_id": "bench",
            "transcript_path": "/dev/null",
            "cwd": str(root),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": f"ls src/module_{n}.py"},
            "tool_use_id": f"toolu_{n}",
        }
    )


def in_process(root: Path, n: int) -> float:
    t0 = time.perf_counter()
    out = handler.handle("claude", payload(root, n), env={}, cwd="/")
    elapsed = time.perf_counter() - t0
    if out:
        sys.exit(f"the hook said something at PreToolUse: {out[:300]}")
    return elapsed


def as_process(exe: str, root: Path, n: int) -> float:
    env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
    env["STRICT_LOOP_HOOKD"] = "0"
    t0 = time.perf_counter()
    proc = subprocess.run([exe, "hook", "claude"], input=payload(root, n).encode(), capture_output=True, env=env)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or proc.stdout.strip():
        sys.exit(f"the hook failed or spoke: {proc.returncode} {proc.stdout[:300]!r} {proc.stderr[:300]!r}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--runs", type=int, default=300, help="in-process calls of each")
    ap.add_argument("--processes", type=int, default=20, help="hook processes of each (0: none)")
    args = ap.parse_args()
    exe = shutil.which("strict-loop", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    with tempfile.TemporaryDirectory() as tmp:
        one = workspace(Path(tmp, "one"), 1)
        many = workspace(Path(tmp, "many"), args.tasks)
        for root in (one, many):  # the first call of each builds the index: not what is measured
            in_process(root, 0)
        times: dict[str, list[float]] = {"one": [], "many": []}
        for n in range(args.runs):
            times["one"].append(in_process(one, n))
            times["many"].append(in_process(many, n))
        procs: dict[str, list[float]] = {"one": [], "many": []}
        for n in range(args.processes if exe else 0):
            procs["one"].append(as_process(exe or "", one, n))
            procs["many"].append(as_process(exe or "", many, n))
    report("in-process", times, args.tasks)
    if procs["one"]:
        report("hook process", procs, args.tasks)
    elif args.processes:
        print("hook process: skipped (the strict-loop console script is not installed: pip install -e .)")


def report(what: str, times: dict[str, list[float]], tasks: int) -> None:
    one, many = statistics.median(times["one"]), statistics.median(times["many"])
    print(
        f"{what:>12}: PreToolUse p50 {one * 1e3:7.2f} ms with 1 task, {many * 1e3:7.2f} ms with {tasks} tasks; "
        f"ratio {many / one:.2f} ({len(times['one'])} calls each)"
    )


if __name__ == "__main__":
    main()
