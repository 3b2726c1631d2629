"""The unattended supervisor's budgets and its one decision after each invocation: pure, no I/O.

Loop runners without caps have run 6,239 iterations overnight; every budget here has a safe default,
and ``decide`` is the single place that says whether to launch the harness again, wait first, or
end with a documented exit code (references/supervisor.md).
"""

from __future__ import annotations

from typing import Literal, NamedTuple, Optional

from pydantic import Field, model_validator

from strict_loop.headless.streambase import Outcome
from strict_loop.model.fields import Strict

EXIT_STOP = 0
"""The stop checks say stop (goal met, completed, or the task's own limit/blocker verdict)."""
EXIT_BAD_INPUT = 2
EXIT_LIMIT = 3
"""A supervisor budget or hard limit was reached."""
EXIT_PAUSED = 5
"""The progress monitor paused the task (as detect_spiral's paused)."""
EXIT_FAILURES = 6
"""Too many consecutive failed invocations."""
# SIGINT and SIGTERM end a run with 130 and 143: see base.interrupts; a usage limit beyond max_limit_wait_s with 7:
# see limits.

Action = Literal["continue", "stop", "pause", "fail", "limit"]


class SupervisorSettings(Strict):
    """Budgets of one ``strict-loop supervise`` run."""

    max_invocations: int = Field(20, ge=1, le=100_000, description="Harness invocations in this run")
    max_rounds_per_invocation: int = Field(
        5, ge=1, le=1000, description="Rounds one invocation may record before it is ended"
    )
    max_consecutive_failures: int = Field(
        3, ge=1, le=100, description="Failed invocations in a row (no new round) that end the run"
    )
    invocation_timeout_s: float = Field(
        1800, gt=0, le=86_400, description="Wall clock per invocation; the harness is killed after it"
    )
    max_cost_usd: Optional[float] = Field(
        None, gt=0, le=1_000_000, description="Total cost of this run (none: no cost cap)"
    )
    usd_per_mtok_in: Optional[float] = Field(
        None, ge=0, le=10_000, description="USD per million input tokens, for harnesses that report no cost"
    )
    usd_per_mtok_out: Optional[float] = Field(
        None, ge=0, le=10_000, description="USD per million output tokens, likewise"
    )
    heartbeat_s: float = Field(30, gt=0, le=3600, description="Seconds between status lines")
    backoff_base_s: float = Field(
        5, ge=0, le=3600, description="First wait after a failed or rate-limited invocation; doubles each time"
    )
    backoff_max_s: float = Field(300, ge=0, le=86_400, description="Longest wait between invocations")
    max_limit_wait_s: float = Field(
        21_600,
        ge=0,
        le=31 * 86_400,
        description="Longest wait for a plan's usage limit to reset; a later reset ends the run (exit 7) with an alert",
    )

    @model_validator(mode="after")
    def _rates_together(self) -> SupervisorSettings:
        if (self.usd_per_mtok_in is None) != (self.usd_per_mtok_out is None):
            raise ValueError(
                "give both usd_per_mtok_in and usd_per_mtok_out (token rates price input and output apart), or neither"
            )
        return self


class Tally(Strict):
    """What this run has used so far; small and serialisable, so a restarted supervisor continues from disk."""

    invocations: int = Field(0, ge=0, description="Invocations that have finished")
    consecutive_failures: int = Field(0, ge=0, description="Failed invocations in a row; progress resets it")
    consecutive_rate_limits: int = Field(0, ge=0, description="Rate-limited invocations in a row")
    cost_usd: float = Field(0.0, ge=0)
    cost_unknown: int = Field(
        0, ge=0, description="Invocations whose cost could not be priced (no cost reported, no token rates)"
    )
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)
    rounds_at_start: int = Field(0, ge=0, description="Rounds the task had recorded when the last invocation started")


class Decision(NamedTuple):
    """What to do after an invocation (or before the first): ``exit_code`` matters when ``action`` is not continue."""

    action: Action
    reason: str
    sleep_s: float = 0.0
    exit_code: int = EXIT_STOP
    tally: Optional[Tally] = None
    """The tally with this invocation counted: keep it for the next decision (and on disk)."""


def cost_of(settings: SupervisorSettings, outcome: Outcome) -> Optional[float]:
    """The invocation's cost: as the harness reported it, else its tokens at the configured rates, else None."""
    if outcome.cost_usd is not None:
        return outcome.cost_usd
    if settings.usd_per_mtok_in is None or settings.usd_per_mtok_out is None:
        return None
    return (
        outcome.input_tokens * settings.usd_per_mtok_in + outcome.output_tokens * settings.usd_per_mtok_out
    ) / 1_000_000


def account(settings: SupervisorSettings, tally: Tally, outcome: Outcome, rounds_done: int) -> Tally:
    """``tally`` with one finished invocation counted.

    An invocation fails when its outcome is not ok or it recorded no new round; a new round resets
    the failure count (progress, even from a run that later crashed). A rate limit is not the
    agent's failure: it is counted apart and only makes the next wait longer.
    """
    progressed = rounds_done > tally.rounds_at_start
    cost = cost_of(settings, outcome)
    limited = outcome.rate_limited and not progressed
    failed = not progressed and not limited
    return tally.model_copy(
        update={
            "invocations": tally.invocations + 1,
            "consecutive_failures": 0 if progressed else tally.consecutive_failures + failed,
            "consecutive_rate_limits": tally.consecutive_rate_limits + 1 if limited else 0,
            "cost_usd": tally.cost_usd + (cost or 0.0),
            "cost_unknown": tally.cost_unknown + (cost is None),
            "input_tokens": tally.input_tokens + outcome.input_tokens,
            "output_tokens": tally.output_tokens + outcome.output_tokens,
            "rounds_at_start": max(rounds_done, tally.rounds_at_start),
        }
    )


def backoff(settings: SupervisorSettings, count: int) -> float:
    """The wait after ``count`` misses in a row: base, 2 x base, 4 x base, ... capped at backoff_max_s."""
    if count <= 0:
        return 0.0
    return min(settings.backoff_max_s, settings.backoff_base_s * 2.0 ** min(count - 1, 60))


def decide(
    settings: SupervisorSettings,
    tally: Tally,
    outcome: Optional[Outcome],
    rounds_done: int,
    stop_should_stop: bool,
    paused: bool,
) -> Decision:
    """Launch again, wait first, or end, after ``outcome`` (None: before the first launch, nothing to count).

    ``rounds_done``: the task's recorded rounds now; ``stop_should_stop``: check_stop's answer;
    ``paused``: the progress monitor's. Order: a pause wins (a person must look; nothing more is
    launched), then the stop checks, then the budgets: cost, invocations, consecutive failures.
    """
    now = account(settings, tally, outcome, rounds_done) if outcome is not None else tally
    said = _why_failed(outcome, rounds_done > tally.rounds_at_start)
    if paused:
        return Decision("pause", "the progress monitor paused the task: a person must resume it", 0.0, EXIT_PAUSED, now)
    if stop_should_stop:
        return Decision("stop", "the stop checks say stop", 0.0, EXIT_STOP, now)
    limit = _limit_reached(settings, now)
    if limit is not None:
        return limit
    if now.consecutive_failures >= settings.max_consecutive_failures:
        return Decision(
            "fail", f"{now.consecutive_failures} failed invocations in a row{said}", 0.0, EXIT_FAILURES, now
        )
    if now.consecutive_rate_limits:
        wait = backoff(settings, now.consecutive_rate_limits)
        return Decision(
            "continue",
            f"rate limited {now.consecutive_rate_limits} time(s) in a row: waiting {wait:g} s",
            wait,
            EXIT_STOP,
            now,
        )
    if now.consecutive_failures:
        wait = backoff(settings, now.consecutive_failures)
        return Decision(
            "continue",
            f"{now.consecutive_failures} failed invocation(s) in a row{said}: waiting {wait:g} s",
            wait,
            EXIT_STOP,
            now,
        )
    return Decision(
        "continue", "launching" if outcome is None else "progress made: launching again", 0.0, EXIT_STOP, now
    )


def _limit_reached(settings: SupervisorSettings, now: Tally) -> Optional[Decision]:
    """The budget a run has used up (cost, an unknown cost under a cost cap, invocations), as the decision to end."""
    if settings.max_cost_usd is not None and now.cost_usd >= settings.max_cost_usd:
        return Decision(
            "limit", f"cost ${now.cost_usd:.4f} reached max_cost_usd ${settings.max_cost_usd:g}", 0.0, EXIT_LIMIT, now
        )
    if settings.max_cost_usd is not None and now.cost_unknown:
        return Decision(
            "limit",
            "max_cost_usd is set but an invocation reported no cost: set usd_per_mtok_in and usd_per_mtok_out",
            0.0,
            EXIT_LIMIT,
            now,
        )
    if now.invocations >= settings.max_invocations:
        return Decision(
            "limit",
            f"{now.invocations} invocations reached max_invocations {settings.max_invocations}",
            0.0,
            EXIT_LIMIT,
            now,
        )
    return None


def cost_problem(settings: SupervisorSettings, harness: str) -> Optional[str]:
    """Why ``max_cost_usd`` cannot be enforced for ``harness`` (Codex reports tokens only), else None: check before
    launching."""
    from strict_loop.harness import registry

    if (
        settings.max_cost_usd is not None
        and not registry.get(harness).reports_cost
        and settings.usd_per_mtok_in is None
    ):
        return f"{harness} reports no cost, only tokens: give usd_per_mtok_in and usd_per_mtok_out with max_cost_usd"
    return None


def _why_failed(outcome: Optional[Outcome], progressed: bool) -> str:
    if outcome is None or progressed:
        return ""
    return f" (last: {outcome.reason})" if not outcome.ok else " (last: it exited without recording a round)"


def rounds_left(settings: SupervisorSettings, tally: Tally, rounds_done: int) -> int:
    """Rounds the running invocation may still record before the supervisor ends it (0: end it now)."""
    return max(0, settings.max_rounds_per_invocation - (rounds_done - tally.rounds_at_start))
