"""What each operation returns; adapters render these as text, JSON or MCP structured content."""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from strict_loop.model.budgets import BudgetLine
from strict_loop.model.monitoring import MonitorView, SupervisorMessage  # noqa: F401 (adapters import them from here)
from strict_loop.model.records import (
    CheckResult,
    OperatingMode,
    Progress,
    Status,
    StatusRecord,
    StopReport,
    StopVerdict,
    TaskState,
)


def SupervisorField() -> Any:
    """Every result about a task carries it, on every path (MCP, CLI text and --json), so the monitor is never out of
    sight. A field's default, not an ``Annotated`` alias: pydantic's mypy plugin sees a default only there."""
    return Field(
        default_factory=MonitorView, description="Whispers and pause orders from the progress monitor; obey them"
    )


class Result(BaseModel):
    """An operation's answer. Validators are built on first use: a CLI run answers with one of these and
    should not pay for building all of them (most of its start-up)."""

    model_config = ConfigDict(defer_build=True)


class InitResult(Result):
    task_id: str
    task_dir: str
    created_at: str
    replaced: Optional[str] = Field(None, description="Where the previous task's files were moved (force)")
    warnings: list[str] = Field(
        default_factory=list,
        description="What a person should know: an untrusted monitor-defaults.json ignored, a removed loop folder",
    )
    supervisor: MonitorView = SupervisorField()


class EventResult(Result):
    task_id: str
    seq: int
    kind: str
    ts: str
    supervisor: MonitorView = SupervisorField()


class StopBrief(Result):
    """check_stop's answer in brief: stop or continue, why, and the failing checks only (with their output)."""

    should_stop: bool
    verdict: StopVerdict
    reason: str
    passed: int = 0
    failed: int = 0
    failing: list[CheckResult] = Field(default_factory=list, description="The checks that fail, with their output")
    checks_run: bool = Field(
        True, description="False when the stop checks were skipped or refused: the verdict rests on status and limits"
    )

    @classmethod
    def of(cls, report: StopReport, checks_run: bool = True) -> StopBrief:
        return cls(
            should_stop=report.should_stop,
            verdict=report.verdict,
            reason=report.reason,
            passed=report.passed,
            failed=report.failed,
            failing=[c for c in report.checks if not c.passed],
            checks_run=checks_run,
        )


class RoundResult(Result):
    task_id: str
    iteration: int
    status: Status
    progress: Progress
    consecutive_no_progress: int
    duration_s: Optional[float]
    round_file: str
    warnings: list[str] = Field(default_factory=list)
    supervisor: MonitorView = SupervisorField()
    stop: Optional[StopBrief] = Field(
        None, description="Whether the loop goes on, decided after this round: no check_stop call needed"
    )
    status_line: str = Field(
        "", description="The status headline report_status would print (latest-status.txt is refreshed)"
    )


class StatusReport(Result):
    text: str
    record: StatusRecord
    supervisor: MonitorView = SupervisorField()


class CompactResult(Result):
    task_id: str
    kept: int
    archived: int
    state_bytes: int
    supervisor: MonitorView = SupervisorField()


class TaskSummary(Result):
    task_id: str
    goal: str = ""
    status: Optional[Status] = None
    operating_mode: Optional[OperatingMode] = None
    iteration: int = 0
    max_iterations: Optional[int] = None
    updated_at: Optional[str] = None
    needs_human_input: bool = False
    paused: bool = Field(False, description="The progress monitor paused the task: a person must answer")
    source: Literal["agent-loop", "codex-loop"] = "agent-loop"
    problem: Optional[str] = Field(None, description="Why the task's state could not be read, if it could not")


class TaskList(BaseModel):  # list_tasks as a structured result (no docstring: it would reach the tool's outputSchema)
    tasks: list[TaskSummary]
    unclaimed_calls: int = Field(0, description="Tool calls no task claimed (.agent-loop/unclaimed.jsonl)")
    warnings: list[str] = Field(default_factory=list, description="Task folders this machine saw here, now removed")


class TaskView(Result):
    summary: TaskSummary
    state: TaskState
    paths: dict[str, str]
    last_stop_report: Optional[StopReport] = None
    warnings: list[str] = Field(
        default_factory=list,
        description="The task's files against their records: changed monitor settings, a "
        "removed monitor.json, what the safeguards recorded",
    )
    supervisor: MonitorView = SupervisorField()
    budget: list[BudgetLine] = Field(default_factory=list, description="Each budget set, with what is spent of it")


class RebuildResult(Result):
    task_id: str
    iteration: int
    events: int
    repaired: list[str] = Field(default_factory=list, description="What was wrong and has been fixed")
    supervisor: MonitorView = SupervisorField()


class ResumeResult(Result):
    task_id: str
    action: str
    detail: str
    muted: list[str] = Field(default_factory=list, description="Signal kinds muted by 'continue'")
    handback_file: Optional[str] = None
    saved_commit: Optional[str] = Field(None, description="rollback: snapshot of the tree as it was before")
    restored_commit: Optional[str] = None
    supervisor: MonitorView = SupervisorField()


class TrustResult(Result):
    task_id: str
    commands: list[str] = Field(..., description="The stop commands now trusted to run on this machine")
    command_timeout_s: float
    newly_trusted: bool = Field(..., description="False if they were already trusted (or there are none)")
    monitor: list[str] = Field(
        default_factory=list, description="Monitor settings now trusted: the workspace's defaults file, the task's own"
    )
    record: str = Field(..., description="The file holding this machine's trust records")
    supervisor: MonitorView = SupervisorField()


class StatusResult(StatusRecord):
    """report_status's structured answer: the status record (its text is the tool's text, said once) and the supervisor."""  # noqa: E501 (the output schema's description: rewrapping would change it)

    supervisor: MonitorView = SupervisorField()


class StopResult(StopReport):
    """check_stop's answer: the stop report (as latest-stop-report.json holds it) and the supervisor."""

    supervisor: MonitorView = SupervisorField()
