"""The loop contract's settings: stop checks, limits, supervisor budgets, spiral thresholds.

They sit below both the stored models and the detector, so every import points
down: ``models`` and ``spiral`` import from here, never from each other.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationInfo

from strict_loop.model.fields import Flag, Items500, Items1000, Items2000, Strict, TextList


def parse_text_pattern(spec: str) -> tuple[str, str, bool]:
    """``path::text`` -> (path, text, False); ``path::re:REGEX`` -> (path, REGEX, True)."""
    if "::" not in spec:
        raise ValueError(f"{spec[:80]!r} needs the form PATH::TEXT or PATH::re:REGEX")
    path, pattern = spec.split("::", 1)
    if not path.strip() or not pattern:
        raise ValueError(f"{spec[:80]!r} needs both a path and a pattern")
    if pattern.startswith("re:"):
        try:
            re.compile(pattern[3:])
        except re.error as exc:
            raise ValueError(f"{spec[:80]!r}: bad regular expression ({exc})") from None
        return path.strip(), pattern[3:], True
    return path.strip(), pattern, False


STORED = {"stored": True}
"""Validation context for files already on disk: rules added since a file was written
(e.g. relative stop-check paths) must not make an older task unreadable; such a check
is refused when it runs instead (``stopchecks``)."""


def workspace_path_problem(path: str) -> str:
    """Why ``path`` is not a plain path relative to the workspace root ('' when it is)."""
    if "\0" in path:
        return "contains a NUL byte"
    if path.startswith("~"):
        return "starts with '~'"
    if path.startswith(("/", "\\")) or re.match(r"[A-Za-z]:[/\\]", path):
        return "is absolute"
    if ".." in re.split(r"[/\\]", path):
        return "has a '..' component"
    return ""


def _relative(path: str, info: ValidationInfo) -> None:
    problem = "" if (info.context or {}).get("stored") else workspace_path_problem(path)
    if problem:
        raise ValueError(
            f"{path[:80]!r} {problem}; stop-check paths are relative to the workspace root and stay inside it, "
            "e.g. 'docs/report.md'"
        )


def _paths(items: list[str], info: ValidationInfo) -> list[str]:
    for item in items:
        _relative(item, info)
    return items


def _text_patterns(items: list[str], info: ValidationInfo) -> list[str]:
    for item in items:
        _relative(parse_text_pattern(item)[0], info)
    return items


class StopChecks(Strict):
    """Machine-checkable stop rules; all must pass for the goal to count as met."""

    commands: Annotated[Items2000, Flag(("--stop-command",), metavar="CMD")] = TextList(
        20, 2000, "Shell commands run in the workspace; each passes on exit 0"
    )
    paths_exist: Annotated[Items500, AfterValidator(_paths), Flag(("--require-path",), metavar="PATH")] = TextList(
        50, 500, "Workspace-relative paths that must exist"
    )
    text_patterns: Annotated[
        Items1000, AfterValidator(_text_patterns), Flag(("--require-text",), metavar="PATH::TEXT")
    ] = TextList(50, 1000, "'PATH::TEXT' (substring) or 'PATH::re:REGEX' (regex search)")
    command_timeout_s: Annotated[float, Flag(("--command-timeout",), metavar="SECONDS")] = Field(
        600.0, gt=0, le=86400, description="Seconds before a stop command is killed"
    )
    output_tail_chars: Annotated[int, Flag(metavar="N")] = Field(
        4000, ge=0, le=20000, description="Output kept per failing command"
    )

    def count(self) -> int:
        return len(self.commands) + len(self.paths_exist) + len(self.text_patterns)


class Limits(Strict):
    """Hard limits that stop the loop even when the goal is not met."""

    max_iterations: int = Field(100, ge=1, le=1_000_000, description="Most rounds to record")
    max_no_progress_rounds: int = Field(3, ge=1, le=1000, description="No-progress rounds in a row that stop the loop")
    history_window: int = Field(10, ge=1, le=50, description="Recent rounds kept in state.json")
    max_context_chars: int = Field(8000, ge=200, le=20000, description="Cap on context_snapshot length")


class UnattendedSettings(Strict):
    """Budgets for the unattended supervisor."""

    max_rounds_per_invocation: int = Field(5, ge=1, le=1000, description="Rounds per agent invocation")
    max_consecutive_failures: int = Field(3, ge=1, le=100, description="Failed invocations in a row that end the loop")


class SpiralThresholds(Strict):
    """When each signal fires; every value can be overridden in the loop contract."""

    identical_repeats: int = Field(4, ge=2, le=20, description="Identical calls (tool + arguments) ...")
    identical_window: int = Field(6, ge=2, le=50, description="... within this many turns")
    reread_repeats: int = Field(
        6, ge=2, le=50, description="Reads and searches made before, each getting back what it did then ..."
    )
    reread_window: int = Field(10, ge=2, le=50, description="... among the agent's last this many calls, none an edit")
    dry_repeats: int = Field(5, ge=2, le=50, description="Lookups that found nothing (no match, no such file) ...")
    dry_window: int = Field(8, ge=2, le=50, description="... of the agent's last this many calls, none an edit or pass")
    equivalent_repeats: int = Field(
        4, ge=2, le=20, description="Equivalent action + equivalent outcome, after normalization ..."
    )
    equivalent_window: int = Field(8, ge=2, le=50, description="... within this many turns")
    unmoved_repeats: int = Field(
        4, ge=3, le=20, description="Runs of one measuring command, a change before each, its numbers unmoved ..."
    )
    unmoved_window: int = Field(14, ge=4, le=50, description="... within this many turns")
    unmoved_tolerance: float = Field(
        0.05, gt=0, lt=1, description="... where unmoved is within this share of its size (and most numbers so)"
    )
    error_repeats: int = Field(4, ge=2, le=20, description="The same error fingerprint through varied actions ...")
    command_repeats: int = Field(
        4, ge=2, le=20, description="The same command failing the same way on each of its last N runs ..."
    )
    command_window: int = Field(20, ge=2, le=50, description="... within this many turns")
    error_relax: bool = Field(
        False, description="One repeat less is enough when nothing at all succeeded since the error first came back"
    )
    error_window: int = Field(10, ge=2, le=50, description="... within this many turns")
    churn_edits: int = Field(
        3, ge=2, le=20, description="Edits of one file with views between, within the churn window ..."
    )
    churn_window: int = Field(
        6, ge=3, le=50, description="... of this many turns (needs self-talk or a file returning to an earlier state)"
    )
    max_cycle: int = Field(
        6, ge=2, le=12, description="Longest A-B(-C...) cycle looked for; it must repeat twice without new information"
    )
    monologue_turns: int = Field(3, ge=2, le=20, description="Turns in a row without a tool call")
    error_rate: float = Field(0.9, gt=0, le=1, description="Share of failed turns in the error-rate window ...")
    error_rate_window: int = Field(12, ge=3, le=50, description="... of this many turns, with no progress in it")
    self_talk_hits: int = Field(2, ge=1, le=10, description="Turns whose thought admits trouble ...")
    self_talk_window: int = Field(3, ge=1, le=20, description="... within this many turns")
    score_drops: int = Field(2, ge=1, le=10, description="Verifier score drops in a row")
    failure_repeats: int = Field(
        3,
        ge=2,
        le=20,
        description="A check (test, build, lint, diagnostics, a person) failing the same way this many times ...",
    )
    failure_edits: int = Field(
        2, ge=1, le=20, description="... with at least this many different edits between the first and the last ..."
    )
    failure_window: int = Field(28, ge=4, le=50, description="... within this many turns, and no passing check between")
    remote_window: int = Field(
        42, ge=4, le=60, description="... or this many turns for a CI run read back (push, wait and read take turns)"
    )
    poll_whisper: int = Field(
        10, ge=2, le=500, description="Unchanged polls of a running job in a row before a whisper (wait advice)"
    )
    poll_pause: int = Field(
        40, ge=2, le=5000, description="Unchanged polls in a row before the ladder may climb past the whisper ..."
    )
    poll_pause_s: float = Field(
        1200.0, ge=0, le=604800, description="... and seconds they must span too (when turns carry ts)"
    )
    poll_wait_s: float = Field(
        1800.0, ge=0, le=604800, description="Or three looks with nothing new after the agent slept this long for them"
    )
    person_repeats: int = Field(
        2,
        ge=1,
        le=20,
        description="The person saying it still fails after attempts, this many times (going in circles counts 2)",
    )
    person_window: int = Field(
        42,
        ge=4,
        le=60,
        description="... within this many turns (a person reports at their pace: a fix, a restart, a look at it)",
    )
    restart_repeats: int = Field(
        3, ge=2, le=20, description="Restarts with the same outcome after each, or hangs of one step, in a row"
    )
    oscillation_reverts: int = Field(
        2, ge=1, le=20, description="Edits that undo an earlier edit of one file (or restore an earlier content)"
    )


MonitorProfile = Literal["default", "strict", "lenient"]

MONITOR_PROFILES: dict[str, dict[str, Any]] = {
    "default": {},
    "strict": {"thresholds": {"identical_repeats": 3}, "reset_after": 10},
    "lenient": {
        "thresholds": {
            "identical_repeats": 6,
            "identical_window": 9,
            "equivalent_repeats": 6,
            "equivalent_window": 12,
            "error_repeats": 6,
            "error_window": 15,
            "command_repeats": 6,
            "churn_edits": 4,
            "churn_window": 8,
            "dry_repeats": 7,
            "unmoved_repeats": 6,
            "unmoved_window": 20,
            "monologue_turns": 5,
            "failure_repeats": 4,
            "poll_whisper": 20,
        },
        "second_whisper_after": 2,
        "pause_after": 2,
        "reset_after": 4,
    },
}
"""Named presets over the defaults: 'strict' fires on fewer repeats, 'lenient' needs more and climbs the ladder slower.
A task's monitor settings are these, then the workspace's monitor-defaults.json, then a person's overrides. On the dev
corpus (bench/spiral_bench.py --profile): default recall 0.97 / false alarms 0.013 / delay 1; strict 0.95 / 0.039 / 0
(fires earlier, sometimes before the labeled stretch); lenient 0.74 / 0.000 / 3."""


class MonitorSettings(Strict):
    """Spiral detection and the escalation ladder; part of the loop contract."""

    enabled: bool = Field(True, description="Evaluate every tool_call turn")
    thresholds: SpiralThresholds = Field(default_factory=SpiralThresholds, description="When each signal fires")
    second_whisper_after: int = Field(
        1, ge=1, le=50, description="Further firings after the first whisper before the second"
    )
    pause_after: int = Field(1, ge=1, le=50, description="Further firings after the second whisper before pausing")
    reset_after: int = Field(
        6, ge=1, le=100, description="Quiet turns after which the ladder resets (the whisper counts as adopted)"
    )
    whisper_ttl: int = Field(3, ge=1, le=50, description="Turns a whisper keeps riding on tool results")
    cooldown_turns: int = Field(
        10, ge=0, le=1000, description="After 'resume --action continue', turns the resumed signals stay muted"
    )
    snapshots: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Snapshot the workspace after every round (private git refs) for rollback; 'auto' = when the "
        "workspace is a git repository",
    )
    snapshot_max_file_mb: float = Field(
        10.0,
        gt=0,
        le=100_000,
        description="Files larger than this (MB) are left out of snapshots, so a rollback never touches them; each "
        "snapshot event lists them",
    )
    snapshot_keep: int = Field(
        50,
        ge=1,
        le=100_000,
        description=(
            "Round snapshots kept per task (the newest); round 0 and every before-rollback save are always kept"
        ),
    )
