#!/usr/bin/env python3
"""Benchmark: one ``strict-loop hook claude`` invocation, end to end, next to the bare interpreter.

A harness starts the hook as a new process for every tool call of the agent, so
the cost that matters is process start + imports + the work. In one run this
creates a workspace with a running task, then times N invocations each of:

- the venv's real interpreter doing nothing (``python -c pass``): the floor;
- the installed ``strict-loop hook claude`` with no loop in its folder;
- the hook recording a quiet turn (a PostToolUse payload on stdin);
- the hook at PreToolUse (reads the monitor's state, says nothing);
- the hook at PreToolUse on a paused task (builds the deny);
- each of the last three once in-process (``STRICT_LOOP_HOOKD=0``) and once with a warm
  hook daemon (``hookd``) of the workspace answering;
- ``strict-loop list_tasks`` (the full CLI), for comparison.

Runs are interleaved so that machine noise hits all alike; the ratios to the bare
interpreter come from this one run. The target is a hook p50 <= 100 ms.

    python bench/hook_latency.py            # 40 invocations of each
    python bench/hook_latency.py --runs 100
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace
from strict_loop.harness import daemon as hookd
from strict_loop.harness import handler  # noqa: E402


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
    data = {
        "session_id": "bench",
        "transcript_path": "/dev/null",
        "cwd": str(cwd),
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": f"ls src/module_{n}.py", "description": "list"},
        "tool_use_id": f"toolu_{n}",
    }
    if event == "PostToolUse":
        data["tool_response"] = {"stdout": f"src/module_{n}.py", "stderr": "", "interrupted": False}
    return json.dumps(data).encode()


def _time(cmd: list[str], stdin: bytes, cwd: Path, daemon: bool = False) -> float:
    env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
    env["STRICT_LOOP_HOOKD"] = "1" if daemon else "0"
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, cwd=cwd, capture_output=True, env=env)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{cmd} exited {proc.returncode}: {proc.stderr.decode()[:500]}")
    return elapsed


def _workspaces(tmp: Path) -> dict[str, Path]:
    """An empty folder, and a running task in-process, with a daemon, and paused (once each way)."""
    found = {name: tmp / name for name in ("empty", "inproc", "daemon", "paused-inproc", "paused-daemon")}
    for name, ws in found.items():
        ws.mkdir()
        if name != "empty":
            Workspace(ws).init_state(task_id="bench", goal="Benchmark the hook", global_stop_condition="never")
    for name in ("paused-inproc", "paused-daemon"):
        failed = dict(
            json.loads(_payload("PostToolUse", found[name], 0)),
            hook_event_name="PostToolUseFailure",
            error="Exit code 1",
        )
        for _ in range(8):
            handler.handle("claude", json.dumps(failed), env={}, cwd=str(found[name]))
    return found


def _warm(exe: str, ws: Path) -> int:
    """Start the workspace's daemon (the first hook call does) and wait until it answers; its pid."""
    _time([exe, "hook", "claude"], _payload("PostToolUse", ws, -1), ws, daemon=True)
    for _ in range(100):
        found = hookd.status(str(ws))
        if found:
            return int(found["pid"])
        time.sleep(0.1)
    sys.exit(f"no hook daemon answered for {ws}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    exe, python = _installed()
    with tempfile.TemporaryDirectory(prefix="hookbench-") as tmp:
        os.environ["XDG_RUNTIME_DIR"] = tmp  # the daemons' sockets, removed with the folder
        ws = _workspaces(Path(tmp))
        # a paused task's calls are decided by the hook itself, never by a daemon: only the running one has one
        pids = [_warm(exe, ws["daemon"])]
        try:
            times = _run(args.runs, exe, python, ws)
            served = [hookd.status(str(ws["daemon"]))]
        finally:
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)
        recorded = {
            name: sum(
                '"tool_call"' in line
                for line in (ws[name] / ".agent-loop/tasks/bench/events.jsonl").read_text().splitlines()
            )
            for name in ("inproc", "daemon")
        }
    floor = statistics.median(times["python -c pass"])
    print(f"{args.runs} invocations each, interleaved; interpreter {python}")
    print(
        f"turns recorded: in-process {recorded['inproc']}, with the daemon {recorded['daemon']} "
        f"(daemons served {[s and s['served'] for s in served]} requests)"
    )
    print(
        f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (min is the least disturbed run)"
    )
    print(f"{'case':34s} {'p50 ms':>8s} {'p90 ms':>8s} {'min ms':>8s} {'p50 / bare':>11s} {'in-proc / daemon':>17s}")
    for name, values in times.items():
        ordered = sorted(values)
        p50, p90 = statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        twin = times.get(name.replace("daemon", "in-process")) if "daemon" in name else None
        ratio = f"{statistics.median(twin) / p50:16.2f}x" if twin else ""
        print(f"{name:34s} {p50 * 1000:8.1f} {p90 * 1000:8.1f} {ordered[0] * 1000:8.1f} {p50 / floor:10.2f}x {ratio}")


def _run(runs: int, exe: str, python: str, ws: dict[str, Path]) -> dict[str, list[float]]:
    hook = [exe, "hook", "claude"]
    cases = {
        "python -c pass": lambda n: ([python, "-c", "pass"], b"", ws["empty"]),
        "hook, no loop": lambda n: (hook, _payload("PostToolUse", ws["empty"], n), ws["empty"]),
    }
    for way, daemon in (("in-process", False), ("daemon", True)):
        plain, paused = ws["daemon" if daemon else "inproc"], ws[f"paused-{'daemon' if daemon else 'inproc'}"]
        cases.update(
            {
                f"hook {way}, quiet turn recorded": lambda n, w=plain, d=daemon: (
                    hook,
                    _payload("PostToolUse", w, n),
                    w,
                    d,
                ),
                f"hook {way}, PreToolUse": lambda n, w=plain, d=daemon: (hook, _payload("PreToolUse", w, n), w, d),
                f"hook {way}, PreToolUse paused": lambda n, w=paused, d=daemon: (
                    hook,
                    _payload("PreToolUse", w, n),
                    w,
                    d,
                ),
            }
        )
    cases["strict-loop list_tasks"] = lambda n: ([exe, "list_tasks"], b"", ws["inproc"])
    times: dict[str, list[float]] = {name: [] for name in cases}
    for n in range(runs):
        for name, make in cases.items():
            times[name].append(_time(*make(n)))
    return times


if __name__ == "__main__":
    main()
