#!/usr/bin/env python3
"""Benchmark the spiral detector on labeled real trajectories, and its cost per turn.

Every labeled run is replayed turn by turn through the same path the MCP tools
use: ``append_event(kind="tool_call", data=<turn>)`` on a real task in a fresh
workspace (which evaluates the turn and advances the ladder), then
``detect_spiral(task_id)``. A run is scored on the first turn the monitor fires
(its first whisper): a hit inside a labeled stuck stretch, a false alarm on a
progress run or outside every stretch (see the corpus README).

    python bench/spiral_bench.py                        # ../shared/corpus/dev and ../shared/corpus/interactive
    python bench/spiral_bench.py --corpus DIR --corpus DIR2 --cost-turns 10000
    python bench/spiral_bench.py --skip-cost --profile strict   # score a monitor profile (default, strict, lenient)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace  # noqa: E402
from strict_loop.model.monitoring import MonitorState
from strict_loop.model.settings import MONITOR_PROFILES, MonitorSettings  # noqa: E402
from strict_loop.model.turns import Turn  # noqa: E402
from strict_loop.monitor.ladder import observe  # noqa: E402

DEFAULT_CORPORA = [Path(__file__).resolve().parents[2] / "shared" / "corpus" / name for name in ("dev", "interactive")]
GOALS = {
    "dev": "recall >= 0.95, false alarms <= 0.03, median delay <= 1 turn",
    "interactive": "recall >= 0.80, false alarms <= 0.05",
}


def first_firing(turns: list[dict], root: Path, profile: str = "default") -> tuple[int | None, list[str]]:
    ws = Workspace(root)
    ws.init_state(
        task_id="replay",
        goal="replay a recorded run",
        global_stop_condition="never",
        limits={"max_iterations": 1000},
        monitor_profile=profile,
    )
    for d in turns:
        ws.append_event(task_id="replay", kind="tool_call", message=f"{d.get('tool')} turn {d.get('turn')}", data=d)
        verdict = ws.detect_spiral(task_id="replay")
        if verdict.detected:
            return d.get("turn"), [s.kind for s in verdict.signals]
    return None, []


def score(corpus: Path, profile: str = "default") -> None:
    labels = [json.loads(line) for line in (corpus / "labels.jsonl").read_text().splitlines() if line.strip()]
    stats: dict[str, dict] = defaultdict(
        lambda: {"spirals": 0, "hits": 0, "progress": 0, "fa_progress": 0, "fa_spiral": 0, "delays": []}
    )
    misses = []
    started = time.perf_counter()
    for label in labels:
        turns = [
            json.loads(line)
            for line in (corpus / label["source"] / f"{label['traj_id']}.jsonl").read_text().splitlines()
            if line.strip()
        ]
        with tempfile.TemporaryDirectory() as tmp:
            fired, kinds = first_firing(turns, Path(tmp), profile)
        for key in (label["source"], "ALL"):
            s = stats[key]
            if label["label"] == "spiral":
                s["spirals"] += 1
                if fired is not None and any(a <= fired <= e for a, _, e in label["stretches"]):
                    s["hits"] += 1
                    s["delays"].append(fired - label["detectable_turn"])
                elif fired is not None:
                    s["fa_spiral"] += 1
            else:
                s["progress"] += 1
                s["fa_progress"] += fired is not None
        spiral = label["label"] == "spiral"
        ok = (fired is not None and any(a <= fired <= e for a, _, e in label["stretches"])) if spiral else fired is None
        if not ok:
            misses.append(
                f"  {'missed spiral' if spiral else 'false alarm  '} {label['source']}/{label['traj_id']}: "
                f"fired at {fired} ({', '.join(kinds) or 'never'}), labeled {label.get('stretches') or 'progress'}"
            )
    print(
        f"== corpus {corpus.name}: replayed {len(labels)} runs through append_event + detect_spiral (monitor profile "
        f"'{profile}') in {time.perf_counter() - started:.0f}s\n"
    )
    header = f"{'source':36}{'spirals':>8}{'recall':>8}{'progress':>9}{'FA rate':>8}{'F1':>6}{'median delay':>14}"
    print(header)
    print("-" * len(header))
    for key in sorted(stats, key=lambda k: (k == "ALL", k)):
        s = stats[key]
        tp, fn = s["hits"], s["spirals"] - s["hits"]
        fp = s["fa_progress"] + s["fa_spiral"]
        recall = tp / s["spirals"] if s["spirals"] else float("nan")
        fa_rate = s["fa_progress"] / s["progress"] if s["progress"] else float("nan")
        f1 = 2 * tp / (2 * tp + fp + fn) if (tp + fp + fn) else float("nan")
        delay = statistics.median(s["delays"]) if s["delays"] else float("nan")
        print(f"{key:36}{s['spirals']:>8}{recall:>8.2f}{s['progress']:>9}{fa_rate:>8.3f}{f1:>6.2f}{delay:>14.1f}")
    print("\nnot as labeled:\n" + ("\n".join(misses) if misses else "  (none)"))
    print(f"\ngoals on {corpus.name}: {GOALS.get(corpus.name, 'as on dev')}\n")


def cost(corpora: list[Path], total: int) -> None:
    """Per-turn cost at ~100 and ~`total` recorded turns: the pure evaluation and the whole append_event."""
    everything = []
    for corpus in corpora:
        for path in sorted(corpus.glob("*/*.jsonl")):
            everything += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    samples = 300
    # A fixed block of turns from across the corpus, repeated: both measured stretches see the same turns.
    pool = everything[:: max(1, len(everything) // samples)][:samples]
    total = (total // samples) * samples + 100
    settings = MonitorSettings()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(tmp)
        ws.init_state(
            task_id="cost",
            goal="cost",
            global_stop_condition="never",
            monitor={
                "thresholds": {
                    "identical_repeats": 20,
                    "equivalent_repeats": 20,
                    "error_repeats": 20,
                    "command_repeats": 20,
                    "self_talk_hits": 10,
                    "score_drops": 10,
                    "monologue_turns": 20,
                    "error_rate": 1.0,
                    "failure_repeats": 20,
                    "poll_whisper": 500,
                }
            },
        )
        eval_ms: dict[int, list[float]] = defaultdict(list)
        append_ms: dict[int, list[float]] = defaultdict(list)
        state = MonitorState()
        for n in range(total):
            turn_dict = pool[n % len(pool)]
            turn = Turn.model_validate(turn_dict)
            t0 = time.perf_counter()
            state, _, _ = observe(state, turn, settings)
            t1 = time.perf_counter()
            ws.append_event(task_id="cost", kind="tool_call", message="turn", data=turn_dict)
            t2 = time.perf_counter()
            bucket = 100 if 100 <= n < 100 + samples else total if n >= total - samples else None
            if bucket:
                eval_ms[bucket].append((t1 - t0) * 1000)
                append_ms[bucket].append((t2 - t1) * 1000)
    print(
        f"\ncost per turn (median over the same {samples} corpus turns at both points; ladder kept quiet so "
        "every turn is fully evaluated):"
    )
    for label, data in (
        ("evaluation (facts + signals + ladder)", eval_ms),
        ("append_event(tool_call) end to end", append_ms),
    ):
        a, b = statistics.median(data[100]), statistics.median(data[total])
        print(f"  {label:40} at ~100 turns {a:.3f} ms | at ~{total} turns {b:.3f} ms | ratio {b / a:.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--corpus",
        type=Path,
        action="append",
        help="a labeled corpus folder (repeatable; default: dev and interactive)",
    )
    p.add_argument("--cost-turns", type=int, default=10_000)
    p.add_argument("--skip-cost", action="store_true")
    p.add_argument(
        "--profile", choices=sorted(MONITOR_PROFILES), default="default", help="the monitor profile to score"
    )
    a = p.parse_args()
    corpora = a.corpus or DEFAULT_CORPORA
    for corpus in corpora:
        if not (corpus / "labels.jsonl").is_file():
            raise SystemExit(f"no labels.jsonl under {corpus}")
    for corpus in corpora:
        score(corpus, a.profile)
    if not a.skip_cost:
        cost(corpora, a.cost_turns)


if __name__ == "__main__":
    main()
