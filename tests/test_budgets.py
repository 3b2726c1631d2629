"""budgets.decide, branch by branch: the supervisor's one decision after each invocation (pure, so table-driven)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from strict_loop.headless.streambase import Outcome
from strict_loop.supervisor.budgets import (
    EXIT_FAILURES,
    EXIT_LIMIT,
    EXIT_PAUSED,
    EXIT_STOP,
    SupervisorSettings,
    Tally,
    account,
    backoff,
    cost_of,
    cost_problem,
    decide,
    rounds_left,
)

OK = Outcome(ok=True, reason="completed")
FAILED = Outcome(ok=False, reason="api error 400: bad request")
LIMITED = Outcome(ok=False, reason="api error 429: rate limited", rate_limited=True)
DEFAULTS = SupervisorSettings()


def test_defaults_are_the_documented_safe_ones():
    s = DEFAULTS
    assert (s.max_invocations, s.max_rounds_per_invocation, s.max_consecutive_failures, s.invocation_timeout_s) == (
        20,
        5,
        3,
        1800,
    )
    assert (s.max_cost_usd, s.usd_per_mtok_in, s.usd_per_mtok_out) == (None, None, None)
    assert (s.heartbeat_s, s.backoff_base_s, s.backoff_max_s) == (30, 5, 300)


@pytest.mark.parametrize(
    "name, tally, outcome, rounds, stop, paused, action, code",
    [
        ("before the first launch", Tally(), None, 0, False, False, "continue", EXIT_STOP),
        ("progress, not done", Tally(rounds_at_start=2), OK, 3, False, False, "continue", EXIT_STOP),
        ("stop checks say stop", Tally(), OK, 1, True, False, "stop", EXIT_STOP),
        ("already done before launching", Tally(), None, 4, True, False, "stop", EXIT_STOP),
        ("paused by the monitor", Tally(), OK, 1, False, True, "pause", EXIT_PAUSED),
        ("paused wins over stop", Tally(), OK, 1, True, True, "pause", EXIT_PAUSED),
        ("stop wins over a spent budget", Tally(invocations=19), OK, 1, True, False, "stop", EXIT_STOP),
        ("last invocation of the budget", Tally(invocations=19), OK, 1, False, False, "limit", EXIT_LIMIT),
        ("failures in a row", Tally(consecutive_failures=2), FAILED, 0, False, False, "fail", EXIT_FAILURES),
        ("ok but no round, third time", Tally(consecutive_failures=2), OK, 0, False, False, "fail", EXIT_FAILURES),
        (
            "a failure with progress resets",
            Tally(consecutive_failures=2),
            FAILED,
            1,
            False,
            False,
            "continue",
            EXIT_STOP,
        ),
        (
            "rate limits are no failures",
            Tally(consecutive_failures=2, consecutive_rate_limits=5),
            LIMITED,
            0,
            False,
            False,
            "continue",
            EXIT_STOP,
        ),
    ],
)
def test_decide(name, tally, outcome, rounds, stop, paused, action, code):
    decision = decide(DEFAULTS, tally, outcome, rounds, stop, paused)
    assert (decision.action, decision.exit_code) == (action, code), (name, decision)
    assert decision.reason and "\n" not in decision.reason


def test_the_tally_counts_the_invocation_and_resets_failures_on_progress():
    t = decide(DEFAULTS, Tally(), FAILED, 0, False, False).tally
    assert (t.invocations, t.consecutive_failures) == (1, 1)
    t = decide(DEFAULTS, t, FAILED, 0, False, False).tally
    assert (t.invocations, t.consecutive_failures) == (2, 2)
    t = decide(DEFAULTS, t, OK, 2, False, False).tally
    assert (t.invocations, t.consecutive_failures, t.rounds_at_start) == (3, 0, 2)
    assert decide(DEFAULTS, t, None, 2, False, False).tally == t  # nothing ran: nothing counted


def test_failures_back_off_exponentially_up_to_the_cap():
    settings = SupervisorSettings(backoff_base_s=5, backoff_max_s=30, max_consecutive_failures=10)
    tally, waits = Tally(), []
    for _ in range(6):
        decision = decide(settings, tally, FAILED, 0, False, False)
        tally = decision.tally
        waits.append(decision.sleep_s)
    assert waits == [5, 10, 20, 30, 30, 30]
    assert "bad request" in decision.reason
    assert decide(settings, tally, OK, 1, False, False).sleep_s == 0  # progress: launch at once


def test_rate_limits_back_off_on_their_own_count():
    settings = SupervisorSettings(backoff_base_s=2, backoff_max_s=100)
    tally, waits = Tally(), []
    for _ in range(4):
        decision = decide(settings, tally, LIMITED, 0, False, False)
        tally = decision.tally
        waits.append(decision.sleep_s)
    assert waits == [2, 4, 8, 16] and tally.consecutive_failures == 0 and "rate limited 4" in decision.reason
    after = decide(settings, tally, OK, 1, False, False)
    assert after.tally.consecutive_rate_limits == 0 and after.sleep_s == 0
    assert backoff(settings, 0) == 0 and backoff(settings, 1000) == 100


def test_the_invocation_budget_still_ends_a_run_that_is_only_rate_limited():
    settings = SupervisorSettings(max_invocations=3)
    tally = Tally()
    actions = []
    for _ in range(3):
        decision = decide(settings, tally, LIMITED, 0, False, False)
        tally = decision.tally
        actions.append(decision.action)
    assert actions == ["continue", "continue", "limit"] and "max_invocations 3" in decision.reason


def test_cost_limit_with_reported_cost():
    settings = SupervisorSettings(max_cost_usd=1.0)
    spent = Outcome(ok=True, reason="completed", cost_usd=0.6)
    first = decide(settings, Tally(), spent, 1, False, False)
    assert first.action == "continue" and first.tally.cost_usd == pytest.approx(0.6)
    second = decide(settings, first.tally, spent, 2, False, False)
    assert (second.action, second.exit_code) == ("limit", EXIT_LIMIT) and "max_cost_usd" in second.reason


def test_cost_limit_with_token_rates_for_a_token_only_harness():
    settings = SupervisorSettings(max_cost_usd=0.05, usd_per_mtok_in=3.0, usd_per_mtok_out=15.0)
    tokens = Outcome(ok=True, reason="completed", input_tokens=10_000, output_tokens=1_000)  # 0.03 + 0.015
    assert cost_of(settings, tokens) == pytest.approx(0.045)
    first = decide(settings, Tally(), tokens, 1, False, False)
    assert first.action == "continue" and first.tally.input_tokens == 10_000
    assert decide(settings, first.tally, tokens, 2, False, False).action == "limit"


def test_a_cost_cap_that_cannot_be_priced_is_a_limit_not_a_blind_run():
    settings = SupervisorSettings(max_cost_usd=5)
    unpriced = Outcome(ok=True, reason="completed", input_tokens=100, output_tokens=10)
    decision = decide(settings, Tally(), unpriced, 1, False, False)
    assert decision.action == "limit" and "usd_per_mtok_in" in decision.reason
    assert "usd_per_mtok" in (cost_problem(settings, "codex") or "")
    assert cost_problem(settings, "claude") is None and cost_problem(DEFAULTS, "codex") is None
    assert (
        decide(DEFAULTS, Tally(), unpriced, 1, False, False).tally.cost_unknown == 1
    )  # counted, but no cap to enforce


def test_rounds_per_invocation():
    tally = account(DEFAULTS, Tally(), OK, 7)
    assert (
        rounds_left(DEFAULTS, tally, 7) == 5
        and rounds_left(DEFAULTS, tally, 11) == 1
        and rounds_left(DEFAULTS, tally, 20) == 0
    )


@pytest.mark.parametrize(
    "fields, named",
    [
        ({"max_invocations": 0}, "max_invocations"),
        ({"invocation_timeout_s": -1}, "invocation_timeout_s"),
        ({"usd_per_mtok_in": 1.0}, "usd_per_mtok_out"),
        ({"max_invocatons": 3}, "max_invocatons"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(fields, named):
    with pytest.raises(ValidationError, match=named):
        SupervisorSettings(**fields)


def test_the_tally_round_trips_through_json():
    tally = decide(
        DEFAULTS, Tally(), Outcome(ok=True, reason="completed", cost_usd=0.25, input_tokens=3), 1, False, False
    ).tally
    assert Tally.model_validate_json(tally.model_dump_json()) == tally
