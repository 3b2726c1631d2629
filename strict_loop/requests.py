"""One typed input model per operation, derived from the stored models.

The Workspace methods, the CLI (whose flags are generated from these), the
scripts and the MCP tools all validate through them, so a parameter has one
name, one rule and one description everywhere. ``InitStateInput`` is the
loop contract plus the few request-only fields; ``UpdateStateInput`` is the
agent's part of an iteration record.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Optional

from pydantic import Field, ValidationInfo, field_validator

from .fields import EVENT_KIND_PATTERN, MAX_JSON_DEPTH, Flag, NonBlank, Strict, TaskId, Text, too_deep
from .models import LoopContract, RoundFields
from .turns import Turn, read_turns

MAX_EVENT_DATA_BYTES = 64 * 1024

OptionalTaskId = Optional[TaskId]

SYSTEM_KINDS = frozenset({"round.completed"})
SYSTEM_PREFIXES = ("task.", "spiral.", "stop.", "state.", "snapshot.", "workspace.", "legacy.", "trust.")
"""Event kinds only the loop writes: a caller (an agent, perhaps prompt-injected) must not forge a pause's
answer, a new contract for rebuild_state to trust, or a recorded round."""


class TaskRef(Strict):
    task_id: OptionalTaskId = Field(None, description="Task id; may be omitted when exactly one task is running")


class InitStateInput(LoopContract):
    task_id: OptionalTaskId = Field(None, description="Task id slug; derived from the goal when omitted")
    next_task: str = Field("", max_length=2000, description="The first atomic task")
    force: bool = Field(False, description="Replace an existing task of the same id (its files are moved aside, not deleted)")

    def contract(self) -> LoopContract:
        """The contract part of the request (what is stored in state.json)."""
        return LoopContract.model_validate(self.model_dump(include=set(LoopContract.model_fields)))


def _json_size(value: dict[str, Any]) -> dict[str, Any]:
    if too_deep(value):
        raise ValueError(f"is nested more than {MAX_JSON_DEPTH} levels deep; keep event data flat")
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode())
    except ValueError as exc:
        if "not JSON compliant" in str(exc):
            raise ValueError("holds NaN or Infinity, which JSON does not allow: send a finite number (or a string)") from None
        raise ValueError(f"is not JSON-serializable ({exc})") from None
    except TypeError as exc:
        raise ValueError(f"is not JSON-serializable ({exc})") from None
    if size > MAX_EVENT_DATA_BYTES:
        raise ValueError(f"is {size} bytes as JSON; the cap is {MAX_EVENT_DATA_BYTES}")
    return value


class AppendEventInput(TaskRef):
    kind: str = Field(
        ..., max_length=64, pattern=EVENT_KIND_PATTERN,
        description="Dotted lowercase kind, e.g. round.started, round.completed, note, blocker, tool_call",
    )
    message: NonBlank = Text(8000, "What happened, in one or a few sentences", required=True)
    data: Annotated[dict[str, Any], Flag(json=True)] = Field(
        default_factory=dict, description="Structured details (a JSON object, at most 64 KiB)")

    _data_size = field_validator("data")(_json_size)

    @field_validator("kind")
    @classmethod
    def _not_a_system_kind(cls, kind: str) -> str:
        if kind in SYSTEM_KINDS or kind.startswith(SYSTEM_PREFIXES):
            raise ValueError(f"'{kind}' is written by strict-loop itself, not by callers: use round.started, note, blocker, "
                             "tool_call or a kind of your own (e.g. test.run)")
        return kind


class UpdateStateInput(RoundFields, TaskRef):
    @field_validator("stop_reason")
    @classmethod
    def _reason_for_stop(cls, reason: str, info: ValidationInfo) -> str:
        status = info.data.get("status")
        if status in ("blocked", "failed") and not reason.strip():
            raise ValueError(f"is required when status is '{status}': say why the loop stops")
        return reason


class CheckStopInput(TaskRef):
    pass


class TrustInput(TaskRef):
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
    turns: Annotated[Optional[list[Turn]], Flag(metavar="FILE.jsonl", load=read_turns, note="a JSONL file, one turn per line")] = Field(
        None, max_length=5000, description="Evaluate these turns from scratch instead (nothing is read or written)")


class ResumeInput(TaskRef):
    action: Literal["continue", "rollback", "hand-back"] = Field(
        ..., description="continue (mute the signals for a while), rollback (restore the workspace to round `to`), hand-back (end as blocked)")
    to: Optional[int] = Field(None, ge=0, validate_default=True,
                              description="Round to roll back to (0 = as it was at init_state); required for rollback")
    note: str = Field("", max_length=2000, description="What the person decided, for the record")

    @field_validator("to")
    @classmethod
    def _to_for_rollback(cls, to: Optional[int], info: ValidationInfo) -> Optional[int]:
        # validate_default: runs when `to` is left out too; fields are validated in declaration order, so `action` is known
        if info.data.get("action") == "rollback" and to is None:
            raise ValueError("is required for rollback: the round number to restore (0 = before round 1)")
        return to
