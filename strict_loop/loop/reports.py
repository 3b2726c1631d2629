"""The progress broadcasts: status line, run summary, hand-back; rendered by pure functions, written by
``write_status``.

Why here and not in storage: the store writes what the loop decides; the texts carry the monitor's view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from strict_loop.base.fsio import append_line, atomic_write, dumps_line
from strict_loop.base.layout import TaskPaths
from strict_loop.base.timefmt import human_duration, now_iso
from strict_loop.model.monitoring import MonitorState, MonitorView
from strict_loop.model.records import StatusRecord, StopReport, TaskState
from strict_loop.monitor.ladder import diagnosis, supervisor_lines
from strict_loop.storage.store import TaskStore

if TYPE_CHECKING:
    from strict_loop.model.results import StatusReport

BAR_WIDTH = 24


def progress_bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    total = max(total, 1)
    filled = min(width, round(width * min(done, total) / total))
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def recent_durations(state: TaskState, count: int = 5) -> list[float]:
    return [r.duration_s for r in state.recent_rounds if r.duration_s is not None][-count:]


def status_record(state: TaskState, ts: str, label: Optional[str], sup: Optional[MonitorView] = None) -> StatusRecord:
    lim, cnt = state.contract.limits, state.counters
    recent = recent_durations(state)
    avg = sum(recent) / len(recent) if recent else None
    remaining = max(0, lim.max_iterations - cnt.iteration)
    running = state.status == "running"
    return StatusRecord(
        ts=ts,
        task_id=state.task_id,
        label=label,
        status=state.status,
        iteration=cnt.iteration,
        max_iterations=lim.max_iterations,
        percent=round(100.0 * min(cnt.iteration, lim.max_iterations) / lim.max_iterations, 1),
        recent_round_s=[round(d, 1) for d in recent],
        avg_round_s=None if avg is None else round(avg, 1),
        eta_s=None if (avg is None or not running) else round(avg * remaining, 1),
        consecutive_no_progress=cnt.consecutive_no_progress,
        next_task=state.next_task,
        stop_verdict=state.last_stop.verdict if state.last_stop else None,
        paused=bool(sup and sup.paused),
        monitor=sup.messages[0].text[:1000] if sup and sup.messages else None,
    )


def status_text(state: TaskState, rec: StatusRecord, sup: Optional[MonitorView] = None) -> str:
    lim = state.contract.limits
    tag = f" ({rec.label})" if rec.label else ""
    head, tail = supervisor_lines(sup or MonitorView())
    lines = head + [
        f"[strict-loop] {state.task_id}{tag} | {'PAUSED' if rec.paused else state.status} | iteration "
        f"{rec.iteration} of {rec.max_iterations} {progress_bar(rec.iteration, rec.max_iterations)} {rec.percent:g}%",
    ]
    if rec.recent_round_s:
        times = " ".join(human_duration(d) for d in rec.recent_round_s)
        eta = (
            f"ETA <= {human_duration(rec.eta_s)} ({rec.max_iterations - rec.iteration} rounds left at most)"
            if rec.eta_s is not None
            else "ETA n/a"
        )
        lines.append(f"recent rounds: {times} | avg {human_duration(rec.avg_round_s)} | {eta}")
    else:
        lines.append("recent rounds: none timed yet | ETA n/a")
    lines.append(f"no-progress streak: {rec.consecutive_no_progress} of {lim.max_no_progress_rounds}")
    if state.current_round:
        lines.append(
            f"in progress: round {state.current_round.iteration} announced "
            f"{state.current_round.announced_at}: {state.current_round.message}"
        )
    lines.append(f"next task: {state.next_task or '(not set)'}")
    if state.last_stop:
        s = state.last_stop
        lines.append(f"last stop check: {s.verdict} ({s.passed} pass, {s.failed} fail) at {s.checked_at}: {s.reason}")
    else:
        lines.append("last stop check: never run")
    if state.status != "running" and state.stop_reason:
        lines.append(f"stop reason: {state.stop_reason}")
    if state.needs_human_input:
        lines.append("NEEDS HUMAN INPUT")
    return "\n".join(lines + tail) + "\n"


def run_summary(state: TaskState, status: str, report: Optional[StopReport]) -> str:
    c = state.contract
    a = state.archive
    lines = [
        f"# Run summary: {state.task_id}",
        "",
        "```",
        status.rstrip(),
        "```",
        "",
        "## Contract",
        f"- goal: {c.goal}",
        f"- global stop condition: {c.global_stop_condition}",
        f"- mode: {c.operating_mode}",
        f"- blocker definition: {c.blocker_definition}",
        "- success evidence: " + ("; ".join(c.success_evidence) or "(none)"),
        f"- limits: {c.limits.max_iterations} rounds, {c.limits.max_no_progress_rounds} no-progress rounds in a row",
        "- stop checks: "
        + (", ".join(c.stop_checks.commands + c.stop_checks.paths_exist + c.stop_checks.text_patterns) or "(none)"),
        "",
        "## Counters",
        f"- rounds recorded: {state.counters.iteration} ({state.counters.progress_rounds} with progress, "
        f"{state.counters.no_progress_rounds} without)",
        f"- measured round time: {human_duration(state.counters.total_round_seconds)} over "
        f"{state.counters.timed_rounds} rounds",
    ]
    if a.rounds:
        lines += [
            "",
            "## Archived rounds",
            f"{a.rounds} rounds (#{a.first_iteration} to #{a.last_iteration}) are in iterations.jsonl and "
            "rounds/; latest:",
        ] + [f"- {h}" for h in a.headlines]
    lines += ["", "## Recent rounds"]
    if state.recent_rounds:
        for r in state.recent_rounds:
            lines.append(f"- #{r.iteration} [{r.progress}, {r.status}, {human_duration(r.duration_s)}] {r.task}")
            if r.result:
                lines.append(f"  - result: {r.result}")
            if r.verification:
                lines.append(f"  - verified: {r.verification}")
    else:
        lines.append("- (none yet)")
    if state.context_snapshot:
        lines += ["", "## Context snapshot", state.context_snapshot]
    if report:
        lines += ["", f"## Last stop report ({report.checked_at})", f"verdict: {report.verdict} -- {report.reason}"]
        lines += [f"- [{'x' if ch.passed else ' '}] {ch.kind}: {ch.target} ({ch.detail})" for ch in report.checks]
        lines += [f"- limit {lim.name}: {lim.value}/{lim.limit}{' HIT' if lim.hit else ''}" for lim in report.limits]
    return "\n".join(lines) + "\n"


def handback_markdown(state: TaskState, mon: MonitorState, note: str, paths: TaskPaths) -> str:
    """handback.md: why the monitor stopped the loop, the last turns and the hints given, for the person taking over."""
    lines = [
        f"# Handed back: {state.task_id}",
        "",
        f"Goal: {state.contract.goal}",
        "",
        f"Rounds recorded: {state.counters.iteration}. Next task was: {state.next_task or '(not set)'}",
        "",
        "## Why the loop stopped",
        diagnosis(mon),
        "",
        "## Last turns",
    ]
    lines += [f"- {f.brief}" for f in mon.window[-8:]] or ["- (none recorded)"]
    lines += ["", "## Hints given"] + (
        [
            f"- turn {w.turn} (level {w.level}, {'adopted' if w.adopted else 'not adopted'}): {w.text}"
            for w in mon.whispers
        ]
        or ["- (none)"]
    )
    if note:
        lines += ["", "## Note from the person", note]
    lines += ["", f"Full history: {paths.events} and {paths.iterations}.", ""]
    return "\n".join(lines)


def write_status(
    store: TaskStore,
    state: TaskState,
    label: Optional[str],
    *,
    record: bool,
    sup: Optional[MonitorView] = None,
    sync: bool = True,
) -> StatusReport:
    """latest-status.txt and run-summary.md (with the monitor's pause or whispers); with ``record``, also a line in
    status-history.jsonl. ``sync`` off: both files are derived from state.json and rewritten every round, so a
    power cut may only bring back the previous version."""
    from strict_loop.model.results import StatusReport

    sup = sup or MonitorView()
    rec = status_record(state, now_iso(), label, sup)
    text = status_text(state, rec, sup)
    paths = store.paths
    atomic_write(paths.latest_status, text.encode(), sync=sync)
    if record:
        append_line(paths.status_history, dumps_line(rec.model_dump(mode="json")))
    atomic_write(paths.run_summary, run_summary(state, text, store.last_stop_report()).encode(), sync=sync)
    return StatusReport(text=text, record=rec, supervisor=sup)
