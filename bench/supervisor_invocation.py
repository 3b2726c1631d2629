#!/usr/bin/env python3
"""Benchmark: one whole supervisor invocation (Supervisor._invoke with a real child, check_stop, decide), next to the
bare child.

bench/supervisor_overhead.py times the pure parts in detail; this one runs the supervisor's real step end to end.

One invocation of ``strict-loop supervise`` is: build the prompt from disk, start the harness, read
its stream line by line (raw file, stream adapter, each tool call recorded as a turn with dedupe),
write the last text and the session, run ``check_stop``, decide, record the invocation event and
beat. To measure that without a model, the "harness" here is a shell script that prints a real
Claude Code stream (tests/fixtures/streams/claude-ok.jsonl, captured from the real binary) and exits.

In one run this times, interleaved so machine noise hits both alike:
- ``bare``: the script alone (subprocess start + cat): the floor no supervisor can go below;
- ``invocation``: the supervisor's full step around the same script.

The overhead is ``invocation - bare`` (median); the target is <= 50 ms. Most of it is the loop's own
fsyncs (each recorded turn, the stop report, events): ``--dir /dev/shm`` shows the cost without them.

    python bench/supervisor_invocation.py            # 40 invocations
    python bench/supervisor_invocation.py --runs 100 --dir /dev/shm
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from strict_loop import Workspace  # noqa: E402
from strict_loop.supervisor.budgets import SupervisorSettings, decide  # noqa: E402
from strict_loop.supervisor.runner import Supervisor  # noqa: E402

STREAM = REPO / "tests" / "fixtures" / "streams" / "claude-ok.jsonl"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=40)
    p.add_argument(
        "--dir", help="where the workspace goes (default: the temp dir; /dev/shm shows the cost without disk syncs)"
    )
    a = p.parse_args()
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        root = Path(tmp) / "w"
        root.mkdir()
        fake = Path(tmp) / "fake-claude"
        fake.write_text(f"#!/bin/sh\ncat '{STREAM}'\n")
        fake.chmod(0o755)
        ws = Workspace(root)
        ws.init_state(
            task_id="bench",
            goal="benchmark the supervisor",
            global_stop_condition="never.txt exists",
            stop_checks={"paths_exist": ["never.txt"]},
            limits={"max_iterations": 100_000},
        )
        sup = Supervisor(
            root,
            "bench",
            "claude",
            settings=SupervisorSettings(max_invocations=100_000, heartbeat_s=3600),
            harness_bin=str(fake),
            stderr=io.StringIO(),
        )
        sup.lock.acquire("claude", None)
        from strict_loop.supervisor.heartbeat import Heartbeat

        sup._heart = Heartbeat(sup.store, sup._view, 3600, io.StringIO())
        bare: list[float] = []
        full: list[float] = []
        try:
            for _ in range(a.runs):
                t0 = time.perf_counter()
                subprocess.run([str(fake)], stdout=subprocess.PIPE, check=True)
                bare.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                n = sup._next_invocation()
                outcome = sup._invoke(n)
                should_stop, _ = sup._check_stop()
                decision = decide(
                    sup.settings,
                    sup.tally,
                    outcome,
                    sup.store.load().counters.iteration,
                    bool(should_stop),
                    sup._paused(),
                )
                sup.tally = decision.tally or sup.tally
                sup._event("supervisor.invocation", f"invocation {n}", {"invocation": n, "ok": outcome.ok})
                sup._heart_beat(force=True)
                full.append(time.perf_counter() - t0)
        finally:
            sup.lock.release()
        calls = sum(1 for e in ws.recent_events("bench", 10_000) if '"tool_call"' in e)
    b, f = statistics.median(bare) * 1000, statistics.median(full) * 1000
    print(
        f"{a.runs} invocations of a scripted Claude stream ({calls} tool calls recorded in all), workspace in "
        f"{a.dir or tempfile.gettempdir()}"
    )
    print(f"  bare child (start + cat):      median {b:7.2f} ms")
    print(f"  supervisor invocation:         median {f:7.2f} ms  ({f / b:.1f}x the bare child)")
    print(f"  overhead (invocation - bare):  median {f - b:7.2f} ms  (target <= 50 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
