#!/usr/bin/env python3
"""Benchmark: does recording round 100,000 cost the same as round 100, and does state.json stay bounded?

Records N rounds (default 100,000) through ``Workspace.update_state`` on one task,
timing each call, and prints the ratio of the median cost of the last 1,000 rounds
to the first 1,000 (measured in this one run, so machine noise mostly cancels) and
the largest state.json seen. It also prints the CPU-time ratio, which excludes
waiting on fsync (on a shared disk that wait is most of the noise). The original skill's ever-growing state.json went
from 6 ms at round 200 to 36 ms at round 1,000 (a ratio of ~6x).

    python bench/record_rounds.py              # 100,000 rounds (several minutes)
    python bench/record_rounds.py --rounds 5000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace  # noqa: E402
from strict_loop.model.records import MAX_STATE_BYTES  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=100_000)
    p.add_argument("--window", type=int, default=1000, help="rounds in each compared slice")
    p.add_argument("--workspace", help="folder to use (default: a temporary one)")
    a = p.parse_args()
    window = min(a.window, a.rounds // 2)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(a.workspace or tmp)
        ws = Workspace(root)
        ws.init_state(
            goal="benchmark",
            global_stop_condition="never",
            task_id="bench",
            limits={"max_iterations": a.rounds, "history_window": 10},
        )
        state_file = ws.task_paths("bench").state
        costs: list[float] = []
        cpu: list[float] = []
        max_size = 0
        started = time.perf_counter()
        for i in range(1, a.rounds + 1):
            t0, c0 = time.perf_counter(), time.process_time()
            ws.update_state(
                task_id="bench",
                task=f"round {i}: compute the next value",
                result_summary=f"value {i * 7919 % 10007}",
                verification_summary="recomputed independently; matches",
                evidence=[f"check {i}"],
                next_task=f"round {i + 1}",
                context_snapshot=f"at round {i}",
            )
            costs.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            max_size = max(max_size, state_file.stat().st_size)
            if i % 10_000 == 0:
                print(
                    f"  {i} rounds, {time.perf_counter() - started:.0f}s elapsed, median of last 1000: "
                    f"{statistics.median(costs[-1000:]) * 1000:.2f} ms",
                    file=sys.stderr,
                    flush=True,
                )
        first = statistics.median(costs[:window])
        last = statistics.median(costs[-window:])
        cpu_first = statistics.mean(cpu[:window])
        cpu_last = statistics.mean(cpu[-window:])
        ledger = ws.task_paths("bench").iterations.stat().st_size
    print(f"rounds recorded:                   {a.rounds}")
    print(f"median cost, first {window}:        {first * 1000:.3f} ms")
    print(f"median cost, last {window}:         {last * 1000:.3f} ms")
    print(f"ratio last/first (wall):           {last / first:.3f}")
    print(f"mean CPU time, first/last {window}:  {cpu_first * 1000:.3f} / {cpu_last * 1000:.3f} ms")
    print(
        f"ratio last/first (CPU):            {cpu_last / cpu_first:.3f}   (wall includes fsync latency, which "
        "is disk noise)"
    )
    print(f"largest state.json seen:           {max_size} bytes (cap {MAX_STATE_BYTES})")
    print(f"iterations.jsonl at the end:       {ledger / 1e6:.1f} MB")
    return 0 if max_size <= MAX_STATE_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
