#!/usr/bin/env python3
"""Benchmark: one ``strict-loop hook claude`` invocation, end to end, next to the bare interpreter.

A harness starts the hook as a new process for every tool call of the agent, so
the cost that matters is process start + imports + the work. In one run this
creates a workspace with a running task, then times N invocations each of:

- the venv's real interpreter doing nothing (``python -c pass``): the floor;
- the installed ``strict-loop hook claude`` with no loop in its folder;
- the hook recording a quiet turn (a PostToolUse payload on stdin);
- the hook at PreToolUse (reads the monitor's state, says nothing);
- ``strict-loop list_tasks`` (the full CLI), for comparison.

Runs are interleaved so that machine noise hits all alike; the ratios to the bare
interpreter come from this one run. The target is a hook p50 <= 100 ms.

    python bench/hook_latency.py            # 40 invocations of each
    python bench/hook_latency.py --runs 100
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


def _installed() -> tuple[str, str]:
    """The console script and the real interpreter it runs on (not a pyenv shim)."""
    here = Path(sys.executable).parent
    exe = shutil.which("strict-loop", path=f"{here}{os.pathsep}{os.environ.get('PATH', '')}")
    if not exe:
        sys.exit("the strict-loop console script is not installed: pip install -e .")
    first = Path(exe).read_text(encoding="utf-8", errors="replace").splitlines()[0]
    python = first[2:].strip() if first.startswith("#!") else sys.executable
    return exe, python


def _payload(event: str, cwd: Path, n: int) -> bytes:
    data = {"session_id": "bench", "transcript_path": "/dev/null", "cwd": str(cwd), "hook_event_name": event,
            "tool_name": "Bash", "tool_input": {"command": f"ls src/module_{n}.py", "description": "list"}, "tool_use_id": f"toolu_{n}"}
    if event == "PostToolUse":
        data["tool_response"] = {"stdout": f"src/module_{n}.py", "stderr": "", "interrupted": False}
    return json.dumps(data).encode()


def _time(cmd: list[str], stdin: bytes, cwd: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, cwd=cwd, capture_output=True, env=env)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{cmd} exited {proc.returncode}: {proc.stderr.decode()[:500]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    exe, python = _installed()
    with tempfile.TemporaryDirectory() as tmp:
        ws, empty = Path(tmp) / "ws", Path(tmp) / "empty"
        ws.mkdir()
        empty.mkdir()
        Workspace(ws).init_state(task_id="bench", goal="Benchmark the hook", global_stop_condition="never")
        cases = {
            "python -c pass": lambda n: ([python, "-c", "pass"], b"", ws),
            "hook, no loop": lambda n: ([exe, "hook", "claude"], _payload("PostToolUse", empty, n), empty),
            "hook, quiet turn recorded": lambda n: ([exe, "hook", "claude"], _payload("PostToolUse", ws, n), ws),
            "hook, PreToolUse": lambda n: ([exe, "hook", "claude"], _payload("PreToolUse", ws, n), ws),
            "strict-loop list_tasks": lambda n: ([exe, "list_tasks"], b"", ws),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for n in range(args.runs):
            for name, make in cases.items():
                times[name].append(_time(*make(n)))
        recorded = sum(1 for line in (ws / ".agent-loop/tasks/bench/events.jsonl").read_text().splitlines() if '"tool_call"' in line)
    floor = statistics.median(times["python -c pass"])
    print(f"{args.runs} invocations each, interleaved; interpreter {python}; {recorded} turns recorded")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (min is the least disturbed run)")
    print(f"{'case':28s} {'p50 ms':>8s} {'p90 ms':>8s} {'min ms':>8s} {'p50 / bare':>11s}")
    for name, values in times.items():
        ordered = sorted(values)
        p50, p90 = statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        print(f"{name:28s} {p50 * 1000:8.1f} {p90 * 1000:8.1f} {ordered[0] * 1000:8.1f} {p50 / floor:10.2f}x")


if __name__ == "__main__":
    main()
