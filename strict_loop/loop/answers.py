"""One-paragraph text renderings of operation results, for people and agents.

The CLI prints these; the MCP server sends them as the text part of tool results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from strict_loop.base.timefmt import human_duration

if TYPE_CHECKING:  # the renderers read attributes only: the CLI's model-free reads (cli.reads) use them too
    from strict_loop.model.monitoring import MonitorView, SpiralVerdict
    from strict_loop.model.results import (
        CompactResult,
        EventResult,
        InitResult,
        RebuildResult,
        ResumeResult,
        RoundResult,
        StatusReport,
        StopResult,
        TaskList,
        TaskView,
        TrustResult,
    )

R = TypeVar("R")


def with_supervisor(text: str, sup: MonitorView) -> str:
    """``text`` with the monitor's pause order on top and its whispers and notices below; unchanged when it is quiet."""
    if not sup.messages:  # a quiet monitor (and the ladder is not loaded for it)
        return text
    from strict_loop.monitor.ladder import supervisor_lines

    head, tail = supervisor_lines(sup)
    return "\n".join(head + [text] + tail)


def supervised(render: Callable[[R], str]) -> Callable[[R], str]:
    """A renderer whose text also carries the result's ``supervisor``: no path hides a whisper or a pause."""

    @functools.wraps(render)
    def wrapped(result: Any) -> str:
        return with_supervisor(render(result), result.supervisor)

    return wrapped


def status(r: StatusReport) -> str:
    """The status broadcast as written to latest-status.txt (which already shows the monitor)."""
    return r.text.rstrip()


@supervised
def init(r: InitResult) -> str:
    out = f"initialized task '{r.task_id}' in {r.task_dir}"
    out += f"\nprevious task files moved to {r.replaced}" if r.replaced else ""
    return "\n".join([out] + [f"warning: {w}" for w in r.warnings])


@supervised
def event(r: EventResult) -> str:
    return f"event #{r.seq} {r.kind} recorded for '{r.task_id}' at {r.ts}"


@supervised
def round_result(r: RoundResult) -> str:
    lines = [
        f"recorded round {r.iteration} of '{r.task_id}': progress {r.progress}, status {r.status}, "
        f"took {human_duration(r.duration_s)}; notes in {r.round_file}"
    ]
    if r.stop is not None:
        said = f"STOP ({r.stop.verdict})" if r.stop.should_stop else "continue"  # the verdict once, not twice
        lines.append(f"{said} -- {r.stop.reason}")
        lines += [f"  [FAIL] {c.kind} {c.target}: {c.detail}" for c in r.stop.failing]
    if r.status_line:
        lines.append(r.status_line)
    lines += [f"warning: {w}" for w in r.warnings]
    return "\n".join(lines)


@supervised
def stop_report(r: StopResult) -> str:
    said = f"stop ({r.verdict})" if r.should_stop else "continue"
    lines = [f"{r.task_id}: {said} -- {r.reason}"]
    for c in r.checks:
        lines.append(f"  [{'pass' if c.passed else 'FAIL'}] {c.kind} {c.target}: {c.detail}")
    for lim in r.limits:
        lines.append(f"  [{'HIT ' if lim.hit else 'ok  '}] {lim.name}: {lim.value}/{lim.limit}")
    return "\n".join(lines)


@supervised
def compact(r: CompactResult) -> str:
    return (
        f"'{r.task_id}': kept {r.kept} rounds in state.json, archived {r.archived}; state.json is {r.state_bytes} bytes"
    )


def task_list(listing: TaskList) -> str:
    tasks = listing.tasks
    said = [f"warning: {w}" for w in listing.warnings]
    if not tasks:
        return "\n".join(["no tasks (create one with init_state)"] + said)
    lines = []
    for t in tasks:
        if t.problem:
            lines.append(f"{t.task_id:<32} DAMAGED   {t.problem}")
            continue
        src = " [.codex-loop]" if t.source == "codex-loop" else ""
        flag = " NEEDS HUMAN INPUT" if t.needs_human_input else ""
        status = "PAUSED" if t.paused and t.status == "running" else t.status
        lines.append(f"{t.task_id:<32} {status:<9} {t.iteration:>5}/{t.max_iterations:<6} {t.goal[:60]}{src}{flag}")
    if listing.unclaimed_calls:
        lines.append(
            f"{listing.unclaimed_calls} tool call(s) claimed by no task (.agent-loop/unclaimed.jsonl): several "
            "tasks run and a session named none; a loop call naming a task_id binds its session"
        )
    return "\n".join(lines + said)


@supervised
def task_view(v: TaskView) -> str:
    s = v.state
    lines = [
        f"task {s.task_id} ({v.summary.source}): {s.status}, "
        f"{s.counters.iteration}/{s.contract.limits.max_iterations} rounds",
        f"goal: {s.contract.goal}",
        f"stop when: {s.contract.global_stop_condition}",
        f"next task: {s.next_task or '(not set)'}",
    ]
    checks = s.contract.stop_checks
    lines += [f"stop command: $ {c}" for c in checks.commands]  # what `trust` would let run, shown before it is asked
    lines += [f"stop check: {p} exists" for p in checks.paths_exist]
    lines += [f"stop check: {p} contains the text" for p in checks.text_patterns]
    for r in s.recent_rounds:
        lines.append(f"  #{r.iteration} [{r.progress}, {r.status}] {r.task}")
    if s.last_stop:
        lines.append(f"last stop check: {s.last_stop.verdict} -- {s.last_stop.reason}")
    lines += [f"budget: {b.text}" for b in getattr(v, "budget", [])]  # the fast read defers a task with a budget
    lines.append(f"files: {v.paths['state']}")
    return "\n".join(lines + [f"warning: {w}" for w in v.warnings])


@supervised
def rebuild(r: RebuildResult) -> str:
    lines = [f"rebuilt '{r.task_id}': {r.iteration} rounds, {r.events} events"]
    lines += [f"  fixed: {note}" for note in r.repaired] or ["  nothing needed fixing"]
    return "\n".join(lines)


@supervised
def verdict(v: SpiralVerdict) -> str:
    if not v.detected:
        return f"no spiral: {v.turns_seen} turns seen, nothing repeating without progress"
    head = {1: "whispered once", 2: "whispered twice", 3: "PAUSED"}.get(v.level, "detected")
    lines = [f"spiral detected ({head}): {v.diagnosis}"]
    lines += [
        f"  signal {s.kind}" + (f" (turns {', '.join(map(str, s.turns))})" if s.turns else "") + f": {s.evidence}"
        for s in v.signals
    ]
    lines += ["  recent:"] + [f"    {r}" for r in v.recent]
    lines.append(f"  recommended: {v.recommended_action}")
    return "\n".join(lines)


@supervised
def resume(r: ResumeResult) -> str:
    return f"'{r.task_id}': {r.action}: {r.detail}"


@supervised
def trust(r: TrustResult) -> str:
    monitor = [f"trusted: {m}" for m in r.monitor]
    if not r.commands:
        return "\n".join(monitor or [f"'{r.task_id}' runs no stop command; nothing to trust"])
    lines = monitor + [
        f"{'trusted' if r.newly_trusted else 'already trusted'}: the stop commands of '{r.task_id}' "
        f"(each killed after {r.command_timeout_s:g}s), recorded in {r.record}:"
    ]
    lines += [f"  $ {c}" for c in r.commands]
    return "\n".join(lines)
