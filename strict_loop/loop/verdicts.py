"""The stop verdict around a round: the checks before a 'completed' round, and the verdict that ``update_state`` answers
with.

Why a module of its own: a quiet round costs the agent two calls (announce, ``update_state``), so
``update_state`` runs the stop checks after recording and answers with their verdict and the status
line. The checks run outside the task's lock (they may take minutes) and only for a contract this
machine trusts (``trust.py``); the round stands whatever fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import atomic_write, dumps_doc
from strict_loop.base.timefmt import now_iso
from strict_loop.loop import reports, stopchecks
from strict_loop.loop.monitoring import TaskMonitor
from strict_loop.model.records import StopReport, StopSummary, TaskState
from strict_loop.model.requests import UpdateStateInput
from strict_loop.model.results import RoundResult, StatusReport, StopBrief
from strict_loop.storage import rounds, trust
from strict_loop.storage.store import TaskStore
from strict_loop.storage.trust import TrustStore


def stop_report(trust_store: TrustStore, root: Path, state: TaskState, operation: str) -> StopReport:
    """Run the checks, if this machine trusts the contract's commands (see ``trust.py``)."""
    if not trust_store.is_trusted(root, state.task_id, state.contract.stop_checks):
        raise trust.refusal(state.task_id, state.contract.stop_checks, operation)
    checks = stopchecks.run_checks(state.contract.stop_checks, root)
    return stopchecks.report(state, checks, now_iso())


def checks_due(state: TaskState, report: Optional[StopReport]) -> bool:
    """Whether the verdict after a round hangs on the stop checks: the contract has some, the task is not blocked
    or failed, and they did not just run (before a 'completed' round)."""
    return report is None and state.status in ("running", "completed") and state.contract.stop_checks.count() > 0


def record_stop(store: TaskStore, report: StopReport) -> StopReport:
    """latest-stop-report.json, state.last_stop and the stop.checked event (caller holds the lock)."""
    state = store.load_current()
    report = report.model_copy(update={"iteration": state.counters.iteration, "status": state.status})
    atomic_write(store.paths.stop_report, dumps_doc(report.model_dump(mode="json")))
    state.last_stop = StopSummary.of(report)
    store.save(state)
    store.append_event(
        "stop.checked",
        f"stop check: {report.verdict} ({report.reason[:200]})",
        {"verdict": report.verdict, "passed": report.passed, "failed": report.failed},
    )
    return report


def complete(store: TaskStore, iteration: int, reason: str) -> None:
    """A running task whose stop checks say goal_met after round ``iteration`` is completed (caller holds the lock).

    Why: following the protocol literally (stop when should_stop) must not leave a finished task running, where it
    would make a second running task ambiguous for the hooks."""
    state = store.load_current()
    if state.status != "running" or state.counters.iteration != iteration:
        return  # a later round or a person got there first
    state.status, state.stop_reason = "completed", f"goal met: {reason}"[:2000]
    state.updated_at = now_iso()
    store.save(state)
    store.append_event("task.completed", f"goal met after round {iteration}: {reason[:200]}", {"iteration": iteration})


def before_completed(
    trust_store: TrustStore, root: Path, store: TaskStore, req: UpdateStateInput
) -> Optional[StopReport]:
    """Before recording a 'completed' round, run the checks (outside the lock: they may take minutes); refuse while any
    fails."""
    state = store.load()
    if store.retried_round(state, req) is not None:
        return None
    rounds.check_round_input(state, req)
    if not state.contract.stop_checks.count():
        return None
    report = stop_report(trust_store, root, state, "update_state.status")
    failing = [c for c in report.checks if not c.passed]
    if failing:
        detail = "; ".join(f"{c.kind} {c.target[:60]!r}: {c.detail}" for c in failing[:3])
        raise LoopError(
            "update_state.status",
            f"cannot be 'completed' while {len(failing)} stop check(s) fail ({detail})",
            "fix what the checks report, or record this round with status 'running'",
        )
    return report


def after_round(
    trust_store: TrustStore,
    sup: TaskMonitor,
    state: TaskState,
    req: UpdateStateInput,
    report: Optional[StopReport],
    result: RoundResult,
    status: Optional[StatusReport],
) -> RoundResult:
    """The verdict after the round (checks run unless skipped; an untrusted contract's refusal becomes its reason)
    and the status line."""
    store = sup.store
    not_run, fresh = "", False
    if checks_due(state, report):
        if req.skip_checks:
            not_run = "stop checks skipped this round (skip_checks): the verdict rests on status and limits"
        else:
            try:
                report, fresh = stop_report(trust_store, sup.root, state, "update_state"), True  # outside the lock
            except LoopError as exc:  # the trust refusal: the person must run `strict-loop trust`
                not_run = str(exc)
    verdict = stopchecks.report(
        state, report.checks if report else [], report.checked_at if report else now_iso(), not_run
    )
    shown = [status] if status is not None else []
    steps: list[tuple[str, Any]] = [("recording the stop check", lambda: record_stop(store, verdict))] if fresh else []
    completed = verdict.verdict == "goal_met" and state.status == "running"
    if completed:
        steps.append(("completing the task", lambda: complete(store, result.iteration, verdict.reason)))
        status = None  # the status line must say completed
    if status is None:
        steps.append(
            (
                "writing latest-status.txt",
                lambda: shown.append(
                    reports.write_status(store, store.load_current(), None, record=False, sup=sup.view(), sync=False)
                ),
            )
        )
    try:
        problems = store.settle_locked(result.iteration, steps) if steps else []
    except LoopError as exc:
        problems = [
            f"round {result.iteration} is recorded, but the stop check and status were not saved ({str(exc)[:200]})"
        ]
    line = shown[0].text.splitlines()[0] if shown else ""
    return result.model_copy(
        update={
            "stop": StopBrief.of(verdict, checks_run=not not_run),
            "status": "completed" if completed and not problems else result.status,
            "status_line": line,
            "warnings": result.warnings + problems,
        }
    )
