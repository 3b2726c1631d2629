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

from pydantic import AfterValidator, Field, ValidationInfo, WithJsonSchema, field_validator, model_validator

from strict_loop.model.budgets import TaskBudget
from strict_loop.model.fields import (
    EVENT_KIND_PATTERN,
    MAX_JSON_DEPTH,
    Flag,
    NonBlank,
    Strict,
    TaskId,
    Text,
    check_task_id,
    too_deep,
)
from strict_loop.model.records import ContractTerms, LoopContract, RoundFields
from strict_loop.model.settings import MonitorProfile, MonitorSettings
from strict_loop.model.turns import Turn, clip_turn_data, read_turns

MAX_EVENT_DATA_BYTES = 64 * 1024

OptionalTaskId = Optional[TaskId]
TaskName = Optional[Annotated[str, AfterValidator(check_task_id)]]
"""A task's id as list_tasks names it, checked as every id is. Its pattern is in init_state's schema, where an id is
made: tools/list carries it once, not in every tool that names a task."""

TURNS_SCHEMA = {
    "type": "array",
    "maxItems": 5000,
    "items": {
        "type": "object",
        "description": "{tool, args, output, error, exit_code, thought, paths, score, ts}: see turn.schema.json",
    },
}
"""The turn format is defined once (``Turn``, published as turn.schema.json); the tool names it instead of repeating
it."""

SYSTEM_KINDS = frozenset({"round.completed"})
SYSTEM_PREFIXES = (
    "task.",
    "spiral.",
    "stop.",
    "state.",
    "snapshot.",
    "workspace.",
    "legacy.",
    "trust.",
    "supervisor.",
    "watch.",
    "monitor.",
    "loop.",
    "budget.",
)
"""Event kinds only the loop writes: a caller (an agent, perhaps prompt-injected) must not forge a pause's
answer, a new contract for rebuild_state to trust, or a recorded round."""


class TaskRef(Strict):
    task_id: TaskName = Field(None, description="Omit when one task runs")


class InitStateInput(ContractTerms):
    """init_state as an agent calls it (the MCP tool): the contract, with the monitor chosen by a profile name.

    The monitor's knobs are a person's to set (``InitStateRequest``, the workspace defaults file): an agent
    that could tune them could also switch off what watches it.
    """

    task_id: OptionalTaskId = Field(None, description="Task id; default: a slug of the goal")
    next_task: str = Field("", max_length=2000, description="The first atomic task")
    force: bool = Field(False, description="Replace an existing task (its files are moved aside)")
    monitor_profile: MonitorProfile = Field("default", description="Spiral monitor: strict fires sooner, lenient later")

    def contract(self, monitor: MonitorSettings) -> LoopContract:
        """The contract part of the request (what is stored in state.json), with the resolved monitor settings."""
        terms = self.model_dump(include=set(ContractTerms.model_fields) | {"budget"})  # the budget: a person's only
        return LoopContract.model_validate({**terms, "monitor": monitor.model_dump()})


class InitStateRequest(InitStateInput):
    """init_state as a person calls it (CLI, Python): also per-task monitor settings."""

    monitor: Annotated[MonitorSettings, Flag(json=True, note='e.g. \'{"thresholds": {"identical_repeats": 3}}\'')] = (
        Field(
            default_factory=MonitorSettings,
            description="Monitor settings that override the profile and .agent-loop/monitor-defaults.json (only those "
            "given)",
        )
    )
    budget: Annotated[TaskBudget, Flag(flatten=True, group="budgets (whispered at 80%, paused at 100%)")] = Field(
        default_factory=TaskBudget, description="What the task may spend; none by default"
    )


def _json_size(value: dict[str, Any]) -> dict[str, Any]:
    if too_deep(value):
        raise ValueError(f"is nested more than {MAX_JSON_DEPTH} levels deep; keep event data flat")
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode())
    except ValueError as exc:
        if "not JSON compliant" in str(exc):
            raise ValueError(
                "holds NaN or Infinity, which JSON does not allow: send a finite number (or a string)"
            ) from None
        raise ValueError(f"is not JSON-serializable ({exc})") from None
    except TypeError as exc:
        raise ValueError(f"is not JSON-serializable ({exc})") from None
    if size > MAX_EVENT_DATA_BYTES:
        raise ValueError(f"is {size} bytes as JSON; the cap is {MAX_EVENT_DATA_BYTES}")
    return value


class AppendEventInput(TaskRef):
    kind: str = Field(
        ...,
        max_length=64,
        pattern=EVENT_KIND_PATTERN,
        description="round.started, note, blocker, tool_call, or your own dotted kind",
    )
    message: NonBlank = Text(8000, "What happened, in one or a few sentences", required=True)
    data: Annotated[dict[str, Any], Flag(json=True)] = Field(
        default_factory=dict,
        description="Details, at most 64 KiB; for tool_call, one turn (clipped to fit, never refused)",
    )

    _data_size = field_validator("data")(_json_size)

    @model_validator(mode="before")
    @classmethod
    def _clip_turn(cls, values: Any) -> Any:
        """A turn is clipped (head and tail of its output) before the size cap is checked: a real turn is never
        refused."""
        if isinstance(values, dict) and values.get("kind") == "tool_call" and isinstance(values.get("data"), dict):
            return {**values, "data": clip_turn_data(values["data"])}
        return values

    @field_validator("kind")
    @classmethod
    def _not_a_system_kind(cls, kind: str) -> str:
        if kind in SYSTEM_KINDS or kind.startswith(SYSTEM_PREFIXES):
            raise ValueError(
                f"'{kind}' is written by strict-loop itself, not by callers: use round.started, note, blocker, "
                "tool_call or a kind of your own (e.g. test.run)"
            )
        return kind


class UpdateStateInput(RoundFields, TaskRef):
    skip_checks: bool = Field(False, description="Don't run the stop checks now ('completed' always runs them)")

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
    label: Optional[str] = Field(None, max_length=100, description="A tag, e.g. 'heartbeat'")


class CompactStateInput(TaskRef):
    keep: Optional[int] = Field(None, ge=0, le=50, description="Rounds to keep (default: half the history window)")


class ShowTaskInput(TaskRef):
    pass


class RebuildStateInput(TaskRef):
    pass


class DetectSpiralInput(Strict):
    task_id: TaskName = Field(None, description="Omit when one task runs")
    turns: Annotated[
        Optional[list[Turn]],
        Flag(metavar="FILE.jsonl", load=read_turns, note="a JSONL file, one turn per line"),
        WithJsonSchema(TURNS_SCHEMA),
    ] = Field(None, max_length=5000, description="Evaluate these turns instead (writes nothing)")


class ResumeInput(TaskRef):
    action: Literal["continue", "rollback", "hand-back"] = Field(
        ...,
        description=(
            "continue (mute the signals for a while), rollback (restore the workspace to round `to`), "
            "hand-back (end as blocked)"
        ),
    )
    to: Optional[int] = Field(
        None,
        ge=0,
        validate_default=True,
        description="Round to roll back to (0 = as it was at init_state); required for rollback",
    )
    note: str = Field("", max_length=2000, description="What the person decided, for the record")
    pause_id: Optional[str] = Field(
        None,
        max_length=64,
        pattern=r"^[0-9]+@[0-9A-Za-z]+$",
        description="The pause this answers (as shown, e.g. 3@41); refused if that pause is over",
    )

    @field_validator("note")
    @classmethod
    def _printable_note(cls, note: str) -> str:
        # the note reaches the agent's context, handback.md and a terminal: no escape sequence, no NUL
        note = note.replace("\r\n", "\n")
        if any(ord(c) < 32 and c not in "\n\t" or 127 <= ord(c) < 160 for c in note):
            raise ValueError("holds control characters: write plain text (new lines and tabs are fine)")
        return note

    @field_validator("to")
    @classmethod
    def _to_for_rollback(cls, to: Optional[int], info: ValidationInfo) -> Optional[int]:
        # validate_default: runs when `to` is left out too; fields are validated in declaration order, so `action` is
        # known
        if info.data.get("action") == "rollback" and to is None:
            raise ValueError("is required for rollback: the round number to restore (0 = before round 1)")
        return to
