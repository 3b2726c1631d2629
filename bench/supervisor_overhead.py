#!/usr/bin/env python3
"""Benchmark: the unattended supervisor's own cost per invocation, excluding the harness (goal: <= 50 ms median).

Per simulated invocation on a real workspace: build the prompt from disk (``build_prompt``), feed a
realistic stream through the harness's adapter (``--lines`` lines of the captured real run in
tests/fixtures/streams/, repeated, each command made distinct so the progress monitor sees work and
not a spiral), record the tool calls the adapter returns through ``recording.record_turn`` (the
path hooks take), then the bookkeeping after the run: the adapter's verdict, the task's rounds and
pause from disk, and ``budgets.decide``. No harness process runs. Each harness runs in three modes: the
hooks have recorded every call already (the supervisor dedupes them: Claude Code, Hermes, Codex with
trusted hooks); the supervisor records them all one by one (``record_turn``, as a hook does); or in
batches (``record_turns``: monitor.json written once per batch). Prints the median and p90 per
invocation, the share of each part, and the ratio of the median to the 50 ms goal, measured in this
one run.

    python bench/supervisor_overhead.py                       # claude and codex streams, 200 lines, 60 invocations
    python bench/supervisor_overhead.py --harness codex --lines 400
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace  # noqa: E402
from strict_loop.headless.streams import adapter_for  # noqa: E402
from strict_loop.loop.recording import record_turn, record_turns  # noqa: E402
from strict_loop.supervisor.budgets import SupervisorSettings, Tally, decide  # noqa: E402
from strict_loop.supervisor.prompt import build_prompt  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "streams"
GOAL_S = 0.050
TASK = "bench"
PARTS = ("prompt", "stream", "record", "decide")
PROBE, WRITE = "ls /nonexistent-strict-loop-probe", "echo hello > out.txt && cat out.txt"
MODULES = sorted(p.stem for p in (Path(__file__).resolve().parent.parent / "strict_loop").glob("*.py"))
WORDS = (
    "parse",
    "load",
    "save",
    "check",
    "render",
    "merge",
    "clip",
    "lock",
    "flush",
    "index",
    "replay",
    "decide",
    "mask",
)


def stream_lines(harness: str, count: int, invocation: int) -> list[str]:
    """``count`` lines of the captured run, repeated; each repetition runs other commands with other outputs and ids
    (as a working agent does: the same two commands over and over would be a spiral, and the monitor would pause)."""
    base = (FIXTURES / f"{harness}-ok.jsonl").read_text().splitlines()
    final = ("result", "turn.completed")  # the run's last line: once, at the end
    body = [line for line in base if json.loads(line).get("type") not in final]
    tail = [line for line in base if json.loads(line).get("type") in final]
    out: list[str] = []
    rep = 0
    while len(out) < count - len(tail):
        mod, word, tag = MODULES[rep % len(MODULES)], WORDS[(rep * 7 + invocation) % len(WORDS)], f"{invocation}-{rep}"
        for line in body:
            out.append(
                line.replace(PROBE, f"python -m pytest -q tests/test_{mod}.py -k {word}")
                .replace(
                    "No such file or directory",
                    f"FAILED tests/test_{mod}.py::test_{word} - assert {rep} == {invocation}",
                )
                .replace(WRITE, f"grep -n {word} strict_loop/{mod}.py")
                .replace('"hello', f'"{rep}: def {word}_{mod}()')
                .replace("toolu_", f"toolu_{tag}_")
                .replace('"item_', f'"item_{tag}_')
            )
        rep += 1
    return out[: count - len(tail)] + tail


def one_invocation(
    ws: Workspace, harness: str, lines: list[str], settings: SupervisorSettings, tally: Tally, mode: str, batch: int
) -> tuple[dict, Tally, int]:
    store = ws.index.store(TASK)
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    prompt = build_prompt(ws.root, TASK)
    t1 = time.perf_counter()
    adapter = adapter_for(harness)
    calls = [call for line in lines for call in adapter.feed(line)]
    t2 = time.perf_counter()
    turns = [
        (
            f"{c.turn['tool']} ({harness} stream)",
            c.turn,
            {"harness": harness, "source": "stream", "tool_use_id": c.call_id},
        )
        for c in calls
    ]
    if mode == "single":
        for message, data, meta in turns:
            record_turn(store, ws.root, message, data, meta)
    elif mode == "batch":
        for start in range(0, len(turns), batch):
            record_turns(store, ws.root, turns[start : start + batch])
    t3 = time.perf_counter()
    outcome = adapter.finish(0, False)
    state = store.load()
    paused = ws.supervisor(TASK).paused
    decision = decide(settings, tally, outcome, state.counters.iteration, False, paused)
    t4 = time.perf_counter()
    assert prompt and outcome.ok, outcome
    times.update(prompt=t1 - t0, stream=t2 - t1, record=t3 - t2, decide=t4 - t3, total=t4 - t0)
    return times, decision.tally or tally, len(calls)


def run(harness: str, a: argparse.Namespace, root: Path, mode: str) -> None:
    ws = Workspace(root)
    ws.init_state(
        task_id=TASK,
        goal="benchmark the supervisor",
        global_stop_condition="never",
        next_task="keep going",
        stop_checks={"paths_exist": ["never-there"]},
    )
    settings = SupervisorSettings(max_invocations=100_000, max_consecutive_failures=100)
    tally, samples, calls, pauses = Tally(), [], 0, 0
    for i in range(a.warmup + a.invocations):
        lines = stream_lines(harness, a.lines, i)  # prepared outside the timed part: the harness would print them
        times, tally, calls = one_invocation(ws, harness, lines, settings, tally, mode, a.batch)
        if i >= a.warmup:
            samples.append(times)
        if ws.supervisor(TASK).paused:  # the monitor saw a pattern anyway: a person's answer, outside the timed part
            pauses += 1
            ws.resume(task_id=TASK, action="continue", note="benchmark")
        ws.update_state(
            task_id=TASK, task=f"round {i}", result_summary="done", verification_summary="checked", skip_checks=True
        )
    totals = sorted(s["total"] for s in samples)
    median, p90 = statistics.median(totals), totals[int(0.9 * (len(totals) - 1))]
    shares = {p: statistics.median(s[p] for s in samples) for p in PARTS}
    per_call = statistics.median(s["record"] / calls for s in samples) if calls else 0.0
    how = {
        "hooks": f"{calls} tool calls seen, all already recorded by hooks",
        "single": f"{calls} tool calls recorded one by one (record_turn)",
        "batch": f"{calls} tool calls recorded in batches of {a.batch} (record_turns)",
    }[mode]
    print(f"{harness}: {a.lines} stream lines, {how}, per invocation; {len(samples)} invocations, {pauses} pause(s)")
    print(f"  median {median * 1000:.1f} ms   p90 {p90 * 1000:.1f} ms   median / 50 ms goal = {median / GOAL_S:.2f}")
    per_call_text = f"   (record per tool call {per_call * 1000:.2f} ms)" if mode != "hooks" else ""
    print("  median parts: " + ", ".join(f"{p} {shares[p] * 1000:.2f} ms" for p in PARTS) + per_call_text)
    print(
        "  "
        + json.dumps(
            {
                "harness": harness,
                "mode": mode,
                "median_ms": round(median * 1000, 2),
                "p90_ms": round(p90 * 1000, 2),
                "ratio_to_goal": round(median / GOAL_S, 3),
                "recorded_calls": calls if mode != "hooks" else 0,
            }
        )
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--harness",
        choices=["claude", "codex", "all"],
        default="all",
        help="hermes prints no stream: its overhead is the prompt and decide parts alone",
    )
    p.add_argument("--lines", type=int, default=200, help="stream lines per invocation")
    p.add_argument("--invocations", type=int, default=60)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=10, help="tool calls per record_turns call in the batch mode")
    p.add_argument("--workspace", help="parent folder for the workspaces (default: a temporary one)")
    a = p.parse_args()
    for harness in ["claude", "codex"] if a.harness == "all" else [a.harness]:
        for mode in ("hooks", "single", "batch"):
            with tempfile.TemporaryDirectory(dir=a.workspace) as tmp:
                run(harness, a, Path(tmp), mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
