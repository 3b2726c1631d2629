"""Separate processes that drive one task through the core API (used by the concurrency and crash tests).

    worker.py
        a parent that imports the library once and forks writer processes on request, so that a writer
        starts in milliseconds rather than the ~0.4 s of a fresh interpreter. Commands on stdin, one JSON
        object a line:
          {"start": NAME, "workspace": DIR, "task": ID, "events": N, "rounds": N or "forever", "stop": FILE}
              fork a writer, which ends early once FILE (optional) exists; prints "started NAME PID"
          {"wait": PID}
              reap it; prints "exited PID CODE" (CODE -9 after a SIGKILL)

A writer prints "ready NAME" before its first write, "event NAME I" once its note I is written,
"round NAME I ITERATION" once round I's update_state has returned (so every round it reports is on
disk), and "done NAME" at the end.
Every line goes out at once, in one write.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace  # noqa: E402


def say(line: str) -> None:
    """One line in one write(2): lines of writers running at once never mix (a pipe write this small is atomic)."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), f"{line}\n".encode())


def write(workspace: str, task_id: str, name: str, events: int, rounds: int, forever: bool, stop: str | None) -> None:
    ws = Workspace(workspace)
    say(f"ready {name}")
    i = 0
    while (forever or i < max(events, rounds)) and not (stop and os.path.exists(stop)):
        if forever or i < events:
            ws.append_event(task_id=task_id, kind="note", message=f"{name} event {i}", data={"worker": name, "i": i})
            say(f"event {name} {i}")
        if forever or i < rounds:
            ws.append_event(task_id=task_id, kind="round.started", message=f"{name} round {i}")
            result = ws.update_state(
                task_id=task_id,
                task=f"{name} round {i}",
                result_summary="r" * 300,
                verification_summary="checked",
                evidence=[f"{name}:{i}"],
                context_snapshot=f"{name} at {i}",
            )
            say(f"round {name} {i} {result.iteration}")
        i += 1
    say(f"done {name}")


def serve() -> None:
    for line in sys.stdin:
        cmd = json.loads(line)
        if "start" in cmd:
            name, rounds = cmd["start"], cmd["rounds"]
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    write(
                        cmd["workspace"],
                        cmd["task"],
                        name,
                        cmd["events"],
                        0 if rounds == "forever" else rounds,
                        rounds == "forever",
                        cmd.get("stop"),
                    )
                except BaseException:
                    traceback.print_exc()
                    code = 1
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            say(f"started {name} {pid}")
        elif "wait" in cmd:
            _, status = os.waitpid(cmd["wait"], 0)
            say(f"exited {cmd['wait']} {os.waitstatus_to_exitcode(status)}")
        else:
            raise SystemExit(f"unknown command {line!r}")


if __name__ == "__main__":
    serve()
