#!/usr/bin/env python3
"""Benchmark: the dashboard over 50 tasks of 10,000 rounds each.

- the overview's answer time (``overview.overview``, what GET /api/overview computes): p50 and p95;
- a task page's answer time (``detail.task``) on one of those tasks;
- what an open page costs the writer: the median time of ``append_event`` with the page's poller running
  (polling every 0.25 s, as a live page makes it) against without, in alternating blocks; printed as a ratio;
- how live the page is: from ``append_event`` returning to the server-sent ``change`` naming that task, over all
  the tasks; printed as p50 and max, and as a share of the poll interval (the browser test shows the same end to end).

The tasks are built fast by writing their ledgers directly (one task made by ``init_state``, its state and
ledgers grown to 10,000 rounds, then copied), in 5 workspaces of 10 tasks, all in the per-user index.

    python bench/dashboard_bench.py
    python bench/dashboard_bench.py --tasks 10 --rounds 1000   # quicker
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace  # noqa: E402
from strict_loop.dashboard import detail, live, overview  # noqa: E402
from strict_loop.storage import workspaces  # noqa: E402


def grow(ws: Path, rounds: int) -> None:
    """One task with ``rounds`` rounds in its ledgers (three tool calls and a round's events per round)."""
    Workspace(ws).init_state(task_id="t0", goal="benchmark the dashboard", global_stop_condition="never")
    folder = ws / ".agent-loop" / "tasks" / "t0"
    state = json.loads((folder / "state.json").read_text())
    state["counters"]["iteration"] = rounds
    state["contract"]["limits"]["max_iterations"] = rounds * 2
    (folder / "state.json").write_text(json.dumps(state))
    ts = state["created_at"]
    with open(folder / "iterations.jsonl", "a") as it, open(folder / "events.jsonl", "a") as ev:
        seq = 2
        for n in range(1, rounds + 1):
            rec = {
                "iteration": n,
                "recorded_at": ts,
                "task": f"round {n}",
                "result_summary": "did it",
                "verification_summary": "pytest -q: ok",
                "progress": "made",
                "status": "running",
            }
            it.write(json.dumps(rec) + "\n")
            lines = (
                [("round.started", {"iteration": n})]
                + [
                    ("tool_call", {"tool": "Bash", "args": {"command": "pytest -q"}, "output": "ok", "turn": 3 * n + k})
                    for k in range(3)
                ]
                + [("round.completed", {"iteration": n})]
            )
            for kind, data in lines:
                ev.write(json.dumps({"seq": seq, "ts": ts, "kind": kind, "message": "", "data": data}) + "\n")
                seq += 1


def build(base: Path, tasks: int, rounds: int) -> list[Path]:
    template = base / "template"
    template.mkdir()
    grow(template, rounds)
    roots = []
    for w in range(5):
        root = base / f"ws{w}"
        (root / ".agent-loop" / "tasks").mkdir(parents=True)
        for t in range(tasks // 5):
            shutil.copytree(template / ".agent-loop" / "tasks" / "t0", root / ".agent-loop" / "tasks" / f"t{t}")
        workspaces.remember(root)
        roots.append(root)
    shutil.rmtree(template)  # pruned from the index on the next read
    return roots


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def page(roots: list[str], stop) -> None:
    """The page's poller in a process of its own, as the dashboard's server is: one listener, every 0.25 s."""
    watcher = live.Watcher(lambda: {workspaces.workspace_id(r): Path(r) for r in roots})

    async def main() -> None:
        stream = watcher.stream()
        task = asyncio.ensure_future(stream.__anext__())
        while not stop.is_set():
            await asyncio.sleep(0.05)
        task.cancel()

    asyncio.run(main())


def writer_cost(roots: list[Path], blocks: int, per_block: int) -> tuple[float, float]:
    ws = Workspace(roots[0])
    quiet, watched = [], []

    def block(into: list[float]) -> None:
        for _ in range(per_block):
            start = time.perf_counter()
            ws.append_event(task_id="t0", kind="note", message="a note")
            into.append((time.perf_counter() - start) * 1000)

    for _ in range(blocks):
        block(quiet)
        stop = multiprocessing.Event()
        proc = multiprocessing.Process(target=page, args=([str(r) for r in roots], stop))
        proc.start()
        time.sleep(0.5)
        block(watched)
        stop.set()
        proc.join()
    return statistics.median(quiet), statistics.median(watched)


def live_latency(roots: list[Path], samples: int) -> list[float]:
    """Milliseconds from a recorded event to the SSE ``change`` that names its task, ``samples`` times."""
    watcher = live.Watcher(lambda: {workspaces.workspace_id(r): r for r in roots})
    mine = f"{workspaces.workspace_id(roots[0])}/t0"
    ws = Workspace(roots[0])

    async def main() -> list[float]:
        stream = watcher.stream()
        await stream.__anext__()  # the retry line; the poller has started
        await asyncio.sleep(live.POLL_S * 2)  # its first scan is the baseline
        out = []
        for _ in range(samples):
            await asyncio.sleep(random.uniform(0, live.POLL_S))  # not in step with the poller
            await asyncio.to_thread(ws.append_event, task_id="t0", kind="note", message="a note")
            written = time.perf_counter()
            while mine not in await stream.__anext__():
                pass
            out.append((time.perf_counter() - written) * 1000)
        await stream.aclose()
        return out

    return asyncio.run(main())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", type=int, default=50)
    p.add_argument("--rounds", type=int, default=10_000)
    p.add_argument("--runs", type=int, default=30)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="dashboard-bench-") as tmp:
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")
        start = time.perf_counter()
        roots = build(Path(tmp), a.tasks, a.rounds)
        events = (roots[0] / ".agent-loop" / "tasks" / "t0" / "events.jsonl").read_bytes().count(b"\n")
        print(
            f"built {a.tasks} tasks of {a.rounds} rounds ({events} events each) in {time.perf_counter() - start:.1f} s"
        )
        rows = overview.overview()["tasks"]
        assert len(rows) == a.tasks and rows[0]["round"] == a.rounds, rows[:1]
        ms = sorted(timed(overview.overview, a.runs))
        p95 = ms[int(len(ms) * 0.95) - 1]
        print(f"overview ({len(rows)} rows): p50 {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms (target <= 200 ms)")
        ws_id = workspaces.workspace_id(roots[0])
        ms = sorted(timed(lambda: detail.task(ws_id, roots[0], "t0"), max(5, a.runs // 3)))
        print(f"task page (one task of {a.rounds} rounds): p50 {statistics.median(ms):.1f} ms")
        quiet, watched = writer_cost(roots, blocks=4, per_block=200)
        print(
            f"append_event median: {quiet:.3f} ms without a page, {watched:.3f} ms with the page's poller running: "
            f"ratio {watched / quiet:.2f}"
        )
        ms = sorted(live_latency(roots, samples=20))
        poll = live.POLL_S * 1000
        print(
            f"live: a recorded event reaches the page's stream after p50 {statistics.median(ms):.0f} ms, max "
            f"{ms[-1]:.0f} ms ({statistics.median(ms) / poll:.2f} and {ms[-1] / poll:.2f} poll intervals; goal <= 1 s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
