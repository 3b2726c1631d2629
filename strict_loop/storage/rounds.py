"""Pure folding of recorded rounds into the bounded state.

``update_state`` folds one new record; ``rebuild_state`` folds the whole
ledger through the same function, so the counters it derives are the ones a
clean run would have produced.
"""

from __future__ import annotations

import json
from typing import Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.timefmt import human_duration
from strict_loop.model.records import (
    MAX_ROUNDS,
    MAX_SECONDS,
    MAX_STATE_BYTES,
    ArchiveDigest,
    IterationRecord,
    RoundBrief,
    RoundFields,
    TaskState,
)
from strict_loop.model.turns import one_line

HEADLINES = 10


def brief(rec: IterationRecord) -> RoundBrief:
    return RoundBrief(
        iteration=rec.iteration,
        recorded_at=rec.recorded_at,
        duration_s=rec.duration_s,
        task=one_line(rec.task, 300),
        result=one_line(rec.result_summary, 500),
        verification=one_line(rec.verification_summary, 300),
        progress=rec.progress,
        status=rec.status,
    )


def archive_round(archive: ArchiveDigest, r: RoundBrief) -> ArchiveDigest:
    return ArchiveDigest(
        rounds=archive.rounds + 1,
        first_iteration=archive.first_iteration or r.iteration,
        last_iteration=r.iteration,
        progress_rounds=archive.progress_rounds + (r.progress == "made"),
        no_progress_rounds=archive.no_progress_rounds + (r.progress == "none"),
        total_round_seconds=archive.total_round_seconds + (r.duration_s or 0.0),
        headlines=(archive.headlines + [one_line(f"#{r.iteration} {r.task}", 120)])[-HEADLINES:],
    )


def shrink_window(state: TaskState, keep: int) -> int:
    """Move the oldest window rounds into the archive until ``keep`` remain; returns how many moved."""
    moved = 0
    while len(state.recent_rounds) > keep:
        state.archive = archive_round(state.archive, state.recent_rounds.pop(0))
        moved += 1
    return moved


def fold(state: TaskState, rec: IterationRecord) -> None:
    """Apply one verified round to ``state`` in place."""
    c = state.counters
    c.iteration = rec.iteration
    if rec.progress == "made":
        c.progress_rounds += 1
        c.consecutive_no_progress = 0
    else:
        c.no_progress_rounds += 1
        c.consecutive_no_progress += 1
    if rec.duration_s is not None:
        c.timed_rounds += 1
        c.total_round_seconds = min(round(c.total_round_seconds + rec.duration_s, 3), MAX_SECONDS)
    state.status = rec.status
    state.stop_reason = rec.stop_reason
    state.needs_human_input = rec.needs_human_input
    if rec.next_task is not None:
        state.next_task = rec.next_task
    if rec.context_snapshot is not None:
        state.context_snapshot = rec.context_snapshot[: state.contract.limits.max_context_chars]
    if state.current_round and state.current_round.iteration <= rec.iteration:
        state.current_round = None
    state.recent_rounds.append(brief(rec))
    shrink_window(state, state.contract.limits.history_window)
    state.updated_at = rec.recorded_at


def serialize(state: TaskState) -> bytes:
    return (json.dumps(state.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n").encode()


def fit(state: TaskState) -> bytes:
    """Serialize, archiving window rounds (then trimming the snapshot) until under 64 KiB."""
    data = serialize(state)
    while len(data) > MAX_STATE_BYTES and state.recent_rounds:
        shrink_window(state, len(state.recent_rounds) - 1)
        data = serialize(state)
    while len(data) > MAX_STATE_BYTES and state.context_snapshot:
        state.context_snapshot = state.context_snapshot[: len(state.context_snapshot) // 2]
        data = serialize(state)
    return data


def refuse_new_round(state: TaskState) -> None:
    """A round can start only on a running task: a completed, blocked or failed one takes no more rounds."""
    if state.status != "running":
        why = f": {state.stop_reason[:200]}" if state.stop_reason else ""
        raise LoopError(
            "append_event.kind",
            f"round.started on task '{state.task_id}', which is {state.status} "
            f"after round {state.counters.iteration}{why}",
            "start new work as a new task: init_state with a new task_id (this task's record stays as it is)",
        )


def check_round_input(state: TaskState, req: RoundFields) -> None:
    """Refuse a round the task cannot take: it is completed, or the snapshot is over this task's cap."""
    if state.status == "completed":
        raise LoopError(
            "update_state",
            f"task '{state.task_id}' is already completed at iteration {state.counters.iteration}",
            "start new work with init_state (a new task_id, or force=true)",
        )
    if state.counters.iteration >= MAX_ROUNDS:
        raise LoopError(
            "update_state",
            f"task '{state.task_id}' has used round numbers up to {state.counters.iteration}, more than any real run",
            "start new work with init_state (a new task_id, or force=true)",
        )
    cap = state.contract.limits.max_context_chars
    if req.context_snapshot is not None and len(req.context_snapshot) > cap:
        raise LoopError(
            "update_state.context_snapshot",
            f"has {len(req.context_snapshot)} characters; this task's cap is {cap}",
            "shorten it to the facts a fresh session needs (the ledgers keep the rest)",
        )


def previous_end(state: TaskState) -> Optional[str]:
    """When an unannounced round began: the end of the previous round, or init for round 1."""
    if state.recent_rounds:
        return state.recent_rounds[-1].recorded_at
    return state.created_at if state.counters.iteration == 0 else None


def warnings(state: TaskState, announced: bool) -> list[str]:
    """What the agent should hear after recording a round (state already folded)."""
    out = []
    if not announced:
        out.append("this round was not announced: call append_event(kind='round.started') before the work")
    lim, cnt = state.contract.limits, state.counters
    if cnt.consecutive_no_progress >= lim.max_no_progress_rounds:
        out.append(
            f"{cnt.consecutive_no_progress} rounds in a row without progress: the max_no_progress_rounds "
            "limit is reached; stop and rethink"
        )
    if cnt.iteration >= lim.max_iterations:
        out.append(f"iteration limit reached ({cnt.iteration}/{lim.max_iterations})")
    return out


def round_markdown(rec: IterationRecord, task_id: str) -> str:
    def bullets(items: list[str]) -> str:
        return "\n".join(f"- {item}" for item in items) if items else "- (none)"

    parts = [
        f"# {task_id}: iteration {rec.iteration}",
        "",
        f"- recorded: {rec.recorded_at}",
        f"- duration: {human_duration(rec.duration_s)}",
        f"- progress: {rec.progress}",
        f"- status: {rec.status}",
    ]
    if rec.stop_reason:
        parts.append(f"- stop reason: {rec.stop_reason}")
    if rec.needs_human_input:
        parts.append("- needs human input: yes")
    parts += [
        "",
        "## Task",
        rec.task,
        "",
        "## Done when",
        rec.local_done_condition or "(not stated)",
        "",
        "## Result",
        rec.result_summary,
        "",
        "## Verification",
        rec.verification_summary,
        "",
        "## Evidence",
        bullets(rec.evidence),
        "",
        "## Artifacts",
        bullets(rec.artifacts),
        "",
        "## Next task",
        rec.next_task or "(unchanged)",
        "",
    ]
    return "\n".join(parts)
