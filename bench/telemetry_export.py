#!/usr/bin/env python3
"""Benchmark: does exporting an event cost the same at round 10,000 as at round 100 (issue 26)?

The exporter tells which round a tool call belongs to from the task's rounds ledger (``iterations.jsonl``). It
used to read the whole ledger for every event (57 ms per event at 10,000 rounds); it now reads it once per process
and then only what was appended. For each ledger size this writes a task with that many rounds (lines shaped like
``update_state``'s), then, with the real exporter (``telemetry.export.Telemetry``: spool, ledger check, converter,
SDK; in-memory exporters in place of the network), times:

- the first batch of a process: one tool call, so one read of the whole ledger (paid once per exporting process,
  and once per short-lived CLI command that exports);
- steady state: ``--events`` tool calls spooled and exported in one batch, each new round between batches
  appended to the ledger, as a long-lived exporter (watch, the MCP server, the hook daemon) sees them.

It prints the per-event cost at each size and the ratio of the largest to the smallest (flat: close to 1).

    python bench/telemetry_export.py                     # 100 vs 10,000 rounds, 500 events
    python bench/telemetry_export.py --rounds 100 10000 50000 --events 1000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ.setdefault("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")  # spooling on; nothing leaves

from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from strict_loop import Workspace  # noqa: E402
from strict_loop.base.fsio import append_line, dumps_line  # noqa: E402
from strict_loop.telemetry import export, spool  # noqa: E402

TASK = "bench"
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _ts(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _round(i: int) -> bytes:
    """A ledger line as ``update_state`` writes it (about 600 bytes)."""
    return dumps_line(
        {
            "iteration": i,
            "recorded_at": _ts(i * 60),
            "started_at": _ts(i * 60 - 50),
            "duration_s": 50.0,
            "task": f"round {i}: compute the next value",
            "local_done_condition": "the value is recomputed and matches",
            "result_summary": f"value {i * 7919 % 10007}",
            "verification_summary": "recomputed independently; matches",
            "progress": "made",
            "status": "running",
            "stop_reason": "",
            "needs_human_input": False,
            "evidence": [f"check {i}", "python3 verify.py exited 0"],
            "artifacts": [f"out/value-{i}.txt"],
            "next_task": f"round {i + 1}",
            "context_snapshot": f"at round {i}: the values so far agree with the reference table",
        }
    )


class Task:
    """A task with ``rounds`` rounds in its ledger, and the means to record tool calls and rounds after them."""

    def __init__(self, root: Path, rounds: int) -> None:
        ws = Workspace(root)
        ws.init_state(task_id=TASK, goal="benchmark", global_stop_condition="never")
        self.paths = ws.task_paths(TASK)
        self.manager = root / ".agent-loop"
        with self.paths.iterations.open("wb") as fh:
            fh.writelines(_round(i) for i in range(1, rounds + 1))
        self.rounds = rounds
        self.seq = sum(1 for _ in self.paths.events.open("rb"))
        spool.drain(self.manager)  # init_state's own events: not part of the measure

    def tool_calls(self, count: int) -> None:
        """``count`` tool calls of the round in progress: ledger lines, then their spool copies."""
        for n in range(count):
            self.seq += 1
            event = {
                "seq": self.seq,
                "ts": _ts(self.rounds * 60 + 1 + n * 0.01),
                "kind": "tool_call",
                "message": "Bash",
                "data": {"turn": self.seq, "tool": "Bash", "args": {"command": f"echo {n}"}, "hook": {}},
            }
            append_line(self.paths.events, dumps_line(event))
            spool.offer(self.paths.root, TASK, event)

    def next_round(self) -> None:
        self.rounds += 1
        append_line(self.paths.iterations, _round(self.rounds))


def measure(rounds: int, events: int, batches: int) -> tuple[float, float]:
    """(first batch in ms, steady-state cost per event in ms, the median of ``batches`` batches)."""
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None  # the ledgers' fsyncs are not what is measured
    with tempfile.TemporaryDirectory(dir=shm) as tmp:
        task = Task(Path(tmp), rounds)
        telemetry = export.Telemetry(
            os.environ,
            span_exporter=InMemorySpanExporter(),
            metric_reader=InMemoryMetricReader(),
            log_exporter=InMemoryLogRecordExporter(),
        )
        task.tool_calls(1)
        began = time.perf_counter()
        assert telemetry.drain(task.manager) == 1
        first = (time.perf_counter() - began) * 1000
        per_event = []
        for _ in range(batches):
            task.next_round()
            task.tool_calls(events)
            began = time.perf_counter()
            assert telemetry.drain(task.manager) == events
            per_event.append((time.perf_counter() - began) * 1000 / events)
        telemetry.shutdown()
        return first, statistics.median(per_event)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, nargs="+", default=[100, 10_000], help="ledger sizes to compare")
    p.add_argument("--events", type=int, default=500, help="tool calls per batch")
    p.add_argument("--batches", type=int, default=5, help="batches per size (the median is shown)")
    a = p.parse_args()
    results = {n: measure(n, a.events, a.batches) for n in a.rounds}
    print(f"{'rounds':>8}  {'first batch (one ledger read)':>30}  {'per event, steady state':>24}")
    for n, (first, each) in results.items():
        print(f"{n:>8}  {first:>27.1f} ms  {each:>21.3f} ms")
    low, high = results[min(a.rounds)][1], results[max(a.rounds)][1]
    print(f"ratio per event, {max(a.rounds)} vs {min(a.rounds)} rounds: {high / low:.2f}x   (flat: ~1)")
    print(json.dumps({str(n): {"first_ms": r[0], "per_event_ms": r[1]} for n, r in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
