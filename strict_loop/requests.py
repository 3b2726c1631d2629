"""One typed input model per operation.

The Workspace methods, the CLI, the scripts and the MCP tools all validate
through these, so a parameter has one name and one rule everywhere.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field, ValidationInfo, field_validator

from .turns import Turn
from .models import (
    DEFAULT_BLOCKER,
    EVENT_KIND_PATTERN,
    Limits,
    MonitorSettings,
    OperatingMode,
    Progress,
    Status,
    Strict,
    StopChecks,
    TaskId,
    Text,
    TextList,
    UnattendedSettings,
    _item_cap,
    _not_blank,
)

MAX_EVENT_DATA_BYTES = 64 * 1024

OptionalTaskId = Optional[TaskId]
TASK_ID_FIELD = Field(None, description="Task id; may be omitted when exactly one task is running")


class InitStateInput(Strict):
    goal: str = Text(4000, "The overall goal of the loop", required=True)
    global_stop_condition: str = Text(4000, "When the whole loop may stop, in words", required=True)
    task_id: OptionalTaskId = Field(None, description="Task id slug; derived from the goal when omitted")
    success_evidence: list[str] = TextList(20, 500, "Evidence that must exist when the goal is met")
    blocker_definition: str = Field(DEFAULT_BLOCKER, max_length=2000, description="What counts as a real blocker")
    operating_mode: OperatingMode = Field("interactive", description="'interactive' or 'unattended' (needs at least one stop check)")
    stop_checks: StopChecks = Field(default_factory=StopChecks, validate_default=True, description="Machine-checkable stop rules")
    limits: Limits = Field(default_factory=Limits, description="Hard limits")
    unattended: UnattendedSettings = Field(default_factory=UnattendedSettings, description="Unattended supervisor budgets")
    monitor: MonitorSettings = Field(default_factory=MonitorSettings, description="Spiral detection thresholds and the escalation ladder")
    next_task: str = Field("", max_length=2000, description="The first atomic task")
    force: bool = Field(False, description="Replace an existing task of the same id (its files are moved aside, not deleted)")

    _blank = field_validator("goal", "global_stop_condition")(_not_blank)
    _evidence = field_validator("success_evidence")(_item_cap(500))

    @field_validator("stop_checks")
    @classmethod
    def _unattended_needs_checks(cls, checks: StopChecks, info: ValidationInfo) -> StopChecks:
        if info.data.get("operating_mode") == "unattended" and checks.count() == 0:
            raise ValueError(
                "unattended mode needs at least one machine-checkable stop check: add "
                "stop_checks.commands (e.g. 'pytest -q'), stop_checks.paths_exist or stop_checks.text_patterns"
            )
        return checks


class AppendEventInput(Strict):
    task_id: OptionalTaskId = TASK_ID_FIELD
    kind: str = Field(
        ...,
        max_length=64,
        pattern=EVENT_KIND_PATTERN,
        description="Dotted lowercase kind, e.g. round.started, round.completed, note, blocker, tool_call",
    )
    message: str = Text(8000, "What happened, in one or a few sentences", required=True)
    data: dict[str, Any] = Field(default_factory=dict, description="Structured details (JSON object, at most 64 KiB)")

    _blank = field_validator("message")(_not_blank)

    @field_validator("data")
    @classmethod
    def _data_size(cls, value: dict[str, Any]) -> dict[str, Any]:
        import json

        try:
            size = len(json.dumps(value, ensure_ascii=False).encode())
        except (TypeError, ValueError) as exc:
            raise ValueError(f"is not JSON-serializable ({exc})") from None
        if size > MAX_EVENT_DATA_BYTES:
            raise ValueError(f"is {size} bytes as JSON; the cap is {MAX_EVENT_DATA_BYTES}")
        return value


class UpdateStateInput(Strict):
    task_id: OptionalTaskId = TASK_ID_FIELD
    task: str = Text(2000, "The one atomic task this round did", required=True)
    local_done_condition: str = Field("", max_length=2000, description="How this round's task counts as done")
    result_summary: str = Text(20000, "What the round produced", required=True)
    verification_summary: str = Text(
        20000, "The evidence that the result is real (command run and its outcome); required", required=True
    )
    progress: Progress = Field("made", description="'made' if the round moved the goal forward, else 'none'")
    status: Status = Field("running", description="running, completed (only when stop checks pass), blocked or failed")
    stop_reason: str = Field("", max_length=2000, validate_default=True, description="Why the loop stops; required for blocked or failed")
    needs_human_input: bool = Field(False, description="True when a person must act before the loop can go on")
    evidence: list[str] = TextList(50, 1000, "Evidence items: commands, outputs, file paths")
    artifacts: list[str] = TextList(50, 1000, "Files this round produced or changed")
    next_task: Optional[str] = Field(None, max_length=2000, description="The next atomic task (omit to keep the current one)")
    context_snapshot: Optional[str] = Field(
        None, max_length=20000, description="Compact summary a fresh session needs to resume (omit to keep)"
    )

    _blank = field_validator("task", "result_summary", "verification_summary")(_not_blank)
    _items = field_validator("evidence", "artifacts")(_item_cap(1000))

    @field_validator("stop_reason")
    @classmethod
    def _reason_for_stop(cls, reason: str, info: ValidationInfo) -> str:
        status = info.data.get("status")
        if status in ("blocked", "failed") and not reason.strip():
            raise ValueError(f"is required when status is '{status}': say why the loop stops")
        return reason


class TaskRef(Strict):
    task_id: OptionalTaskId = TASK_ID_FIELD


class CheckStopInput(TaskRef):
    pass


class ReportStatusInput(TaskRef):
    label: Optional[str] = Field(None, max_length=100, description="Optional tag for this broadcast, e.g. 'heartbeat'")


class CompactStateInput(TaskRef):
    keep: Optional[int] = Field(
        None, ge=0, le=50, description="Rounds to keep in the window (default: half of limits.history_window)"
    )


class ShowTaskInput(TaskRef):
    pass


class RebuildStateInput(TaskRef):
    pass


class DetectSpiralInput(Strict):
    task_id: OptionalTaskId = Field(None, description="Task whose current verdict to read (default: the only running task)")
    turns: Optional[list[Turn]] = Field(
        None, max_length=5000, description="Evaluate these turns from scratch instead (nothing is read or written)")


class ResumeInput(Strict):
    task_id: OptionalTaskId = TASK_ID_FIELD
    action: Literal["continue", "rollback", "hand-back"] = Field(
        ..., description="continue (mute the signals for a while), rollback (restore the workspace to round `to`), hand-back (end as blocked)")
    to: Optional[int] = Field(None, ge=0, description="Round to roll back to (0 = as it was at init_state); required for rollback")
    note: str = Field("", max_length=2000, description="What the person decided, for the record")

    @field_validator("to")
    @classmethod
    def _to_for_rollback(cls, to: Optional[int], info: ValidationInfo) -> Optional[int]:
        if info.data.get("action") == "rollback" and to is None:
            raise ValueError("is required for rollback: the round number to restore (0 = before round 1)")
        return to
