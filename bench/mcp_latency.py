#!/usr/bin/env python3
"""Benchmark: the cost of a strict-loop tool call over stdio, next to a no-op tool on the same SDK.

Both servers run as real processes spoken to by the official client. The task
already has 10,000 recorded rounds; a second one has 300 recorded tool calls (a monitor.json, as hooks leave it).
Calls are interleaved (no-op, append_event of a note to each task, append_event of a round.started announcement,
update_state, repeat) so that machine noise hits all of them alike; the printed ratios come from this one
run. A note is written without a per-call fsync; the announcement (which also
rewrites state.json) and the round record are fsynced before the call returns. Also times process start to the first
tools/list answer for both servers. ``--baseline DIR`` also times the notes on the server of another checkout (before
and after a change, in one run).

    python bench/mcp_latency.py               # 2,000 calls of each
    python bench/mcp_latency.py --calls 300 --rounds 1000
    python bench/mcp_latency.py --spiral-only      # detect_spiral at 100 and 10,000 recorded tool calls
    git archive HEAD | tar -x -C /tmp/before && python bench/mcp_latency.py --baseline /tmp/before
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Optional

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from strict_loop import Workspace  # noqa: E402

HERE = Path(__file__).resolve().parent


def _params(workspace: Path, noop: bool, baseline: Optional[str] = None) -> StdioServerParameters:
    """The no-op server, ours, or (``baseline``: another checkout's folder) ours as that checkout has it."""
    args = [str(HERE / "noop_server.py")] if noop else ["-m", "mcp_server", "--workspace", str(workspace)]
    if baseline:
        return StdioServerParameters(command=sys.executable, args=args, cwd=baseline, env={"PYTHONPATH": baseline})
    return StdioServerParameters(command=sys.executable, args=args, cwd=str(HERE.parent))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def _startup(workspace: Path, noop: bool, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        async with Client(_params(workspace, noop)) as client:
            await client.list_tools()
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def _seed(ws: Workspace, rounds: int, calls: int) -> None:
    """``bench`` with ``rounds`` recorded rounds, and ``watched`` with 300 recorded tool calls (its monitor.json: the
    window of turns every result's supervisor is read from), as a loop driven by harness hooks has."""
    ws.init_state(
        goal="bench", global_stop_condition="never", task_id="bench", limits={"max_iterations": rounds + 10 * calls}
    )
    ws.init_state(goal="bench", global_stop_condition="never", task_id="watched", monitor=QUIET)
    t0 = time.perf_counter()
    for i in range(rounds):
        ws.update_state(task_id="bench", task=f"seed {i}", result_summary="r", verification_summary="v")
    for k in range(300):
        ws.append_event(task_id="watched", kind="tool_call", message="t", data=SAMPLE[k % len(SAMPLE)])
    print(f"seeded {rounds} rounds and 300 tool calls in {time.perf_counter() - t0:.0f}s")


def _calls(i: int) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(row, server, tool, arguments) of one pass, in order."""
    note = {"task_id": "bench", "kind": "note", "message": f"event {i}"}
    watched = {"task_id": "watched", "kind": "note", "message": f"event {i}"}
    rounds = [
        ("round.started", "loop", "append_event", {"task_id": "bench", "kind": "round.started", "message": f"r {i}"}),
        (
            "update_state",
            "loop",
            "update_state",
            {"task_id": "bench", "task": f"round {i}", "result_summary": "r", "verification_summary": "v"},
        ),
    ]
    out = [("noop", "noop", "noop", {}), ("append_event", "loop", "append_event", note)]
    out += [("append_event (monitored)", "loop", "append_event", watched)]
    out += [("  baseline append_event", "base", "append_event", note)]
    out += [("  baseline (monitored)", "base", "append_event", watched)]
    return out + rounds


async def run(calls: int, rounds: int, workspace: Path, baseline: Optional[str]) -> None:
    _seed(Workspace(workspace), rounds, calls)
    timings: dict[str, list[float]] = {}
    async with AsyncExitStack() as stack:
        clients = {
            name: await stack.enter_async_context(Client(_params(workspace, name == "noop", base)))
            for name, base in (("noop", None), ("loop", None), ("base", baseline))
            if name != "base" or baseline
        }
        for i in range(calls + 50):
            for row, server, tool, args in _calls(i):
                if server not in clients:
                    continue
                t = time.perf_counter()
                result = await clients[server].call_tool(tool, args)
                elapsed = time.perf_counter() - t
                if result.is_error:
                    raise SystemExit(f"{tool} failed: {result.content}")
                if i >= 50:
                    timings.setdefault(row, []).append(elapsed)
    base = _pct(timings["noop"], 0.5)
    print(f"{'call':<26}{'p50 ms':>9}{'p99 ms':>9}{'p50 / no-op':>13}")
    for name, values in timings.items():
        print(f"{name:<26}{_pct(values, 0.5):>9.3f}{_pct(values, 0.99):>9.3f}{_pct(values, 0.5) / base:>13.2f}")
    ours, theirs = await _startup(workspace, False, 5), await _startup(workspace, True, 5)
    print(f"start to first tools/list: strict-loop {ours:.0f} ms, no-op server {theirs:.0f} ms (median of 5)")
    worst = max(_pct(timings[row], 0.5) for row in ("append_event", "append_event (monitored)"))
    print(f"goal append_event p50 <= 1.25 x no-op: {'met' if worst <= 1.25 * base else 'NOT met'} ({worst / base:.2f})")


SAMPLE = [
    {
        "tool": "Bash",
        "args": {"command": f"pytest -q tests/test_{k % 7}.py"},
        "output": f"{k % 3} failed",
        "exit_code": 1,
    }
    if k % 2
    else {"tool": "Edit", "args": {"file_path": f"src/m{k % 5}.py", "old_string": f"a{k}", "new_string": f"b{k}"}}
    for k in range(10)
]
"""Turns that repeat now and then: the monitor evaluates each one."""
QUIET = {"thresholds": {"identical_repeats": 20, "equivalent_repeats": 20, "error_repeats": 20, "command_repeats": 20}}
"""The monitor evaluates every turn but never pauses the seeded task (a paused one refuses nothing we call, but the
window a real task keeps is what detect_spiral reads)."""


async def spiral(turns: int, calls: int, workspace: Path) -> None:
    """``detect_spiral`` over stdio on a task with 100 recorded tool calls and one with ``turns``, next to the no-op
    tool: its extra cost per call, and whether it grows with the task's length (it reads a bounded window)."""
    ws = Workspace(workspace)
    t0 = time.perf_counter()
    for task, n in (("short", 100), ("long", turns)):
        ws.init_state(task_id=task, goal="bench", global_stop_condition="never", monitor=QUIET)
        for k in range(n):
            ws.append_event(task_id=task, kind="tool_call", message="t", data=SAMPLE[k % len(SAMPLE)])
    print(f"seeded 100 and {turns} tool calls in {time.perf_counter() - t0:.0f}s")
    timings: dict[str, list[float]] = {"noop": [], "detect_spiral (100)": [], f"detect_spiral ({turns})": []}
    async with Client(_params(workspace, True)) as noop, Client(_params(workspace, False)) as loop:
        rows = [
            ("noop", noop, "noop", {}),
            ("detect_spiral (100)", loop, "detect_spiral", {"task_id": "short"}),
            (f"detect_spiral ({turns})", loop, "detect_spiral", {"task_id": "long"}),
        ]
        for i in range(calls + 30):
            for name, client, tool, args in rows[i % 3 :] + rows[: i % 3]:  # each first in turn: a call after the
                # other server's is slower (its thread woke from idle), so no row always pays that
                t = time.perf_counter()
                result = await client.call_tool(tool, args)
                if result.is_error:
                    raise SystemExit(f"{tool} failed: {result.content}")
                if i >= 30:
                    timings[name].append(time.perf_counter() - t)
    base = _pct(timings["noop"], 0.5)
    for name, values in timings.items():
        print(f"{name:<24}{_pct(values, 0.5):>9.3f} ms p50{_pct(values, 0.5) - base:>+9.3f} ms over the no-op")
    short, long = _pct(timings["detect_spiral (100)"], 0.5), _pct(timings[f"detect_spiral ({turns})"], 0.5)
    print(f"detect_spiral at {turns} turns / at 100 turns: {long / short:.2f} (goal <= 1.2; over the no-op <= 1 ms)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=10_000, help="rounds recorded before measuring")
    p.add_argument("--spiral-turns", type=int, default=10_000, help="tool calls on the long task detect_spiral reads")
    p.add_argument("--spiral-only", action="store_true", help="measure detect_spiral only")
    p.add_argument("--baseline", metavar="DIR", help="another checkout (git archive HEAD) whose server is timed beside")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not a.spiral_only:
            anyio.run(run, a.calls, a.rounds, Path(tmp), a.baseline)
    with tempfile.TemporaryDirectory() as tmp:
        anyio.run(spiral, a.spiral_turns, min(a.calls, 500), Path(tmp))


if __name__ == "__main__":
    main()
