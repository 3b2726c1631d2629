"""A separate process that drives one task through the core API (used by the concurrency and crash tests)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("workspace")
    p.add_argument("task_id")
    p.add_argument("name")
    p.add_argument("--events", type=int, default=0)
    p.add_argument("--rounds", type=int, default=0)
    p.add_argument("--forever", action="store_true")
    a = p.parse_args()
    ws = Workspace(a.workspace)
    print("ready", flush=True)
    i = 0
    while a.forever or i < max(a.events, a.rounds):
        if a.forever or i < a.events:
            ws.append_event(task_id=a.task_id, kind="note", message=f"{a.name} event {i}", data={"worker": a.name, "i": i})
        if a.forever or i < a.rounds:
            ws.append_event(task_id=a.task_id, kind="round.started", message=f"{a.name} round {i}")
            ws.update_state(task_id=a.task_id, task=f"{a.name} round {i}", result_summary="r" * 300,
                            verification_summary="checked", evidence=[f"{a.name}:{i}"], context_snapshot=f"{a.name} at {i}")
        i += 1
    print("done", flush=True)


if __name__ == "__main__":
    main()
