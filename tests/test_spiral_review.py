"""Scenarios a reviewer wrote as a Claude Code user would produce them (tests/fixtures/scenarios/, not the labeled
corpora): healthy work the monitor must leave alone, and the spiral of a person saying "still the same error" in
their own words. Each scenario's failure must be named by the error itself, never by a summary line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from spiral_claims import check_claims, play, window_of

SCENARIOS = Path(__file__).parent / "fixtures" / "scenarios"


def turns_of(name: str) -> list[dict]:
    return [json.loads(line) for line in (SCENARIOS / f"{name}.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    "name",
    [
        "A_green_refactor",  # a green suite re-run after each rename: every pass after an edit is news
        "B_cargo_changing",  # E0308 -> E0599 -> E0425 -> E0061: test-driven work whose error moves on
        "C_jest_changing",  # a different failing test each run
        "D_tsc_changing",  # TS2339 -> TS2322 -> TS7006
        "E_go_changing",  # a different failing Go test each run
        "F_pods_pending_then_running",  # a pod Pending ~95 s (autoscaler), polled with sleep, then Running
        "G_quiet_compile_tail",  # `sleep 60 && tail build.log` through a quiet rustc step
    ],
)
def test_healthy_work_is_left_alone(name):
    verdict, _ = play(turns_of(name))
    assert verdict.fired_at is None, verdict.diagnosis


@pytest.mark.parametrize("name", ["B_cargo_changing", "D_tsc_changing", "E_go_changing"])
def test_a_failure_is_named_by_its_error_not_by_the_summary_line(name):
    named = [f.ftext or "" for f in window_of(turns_of(name)) if f.verdict == "fail"]
    assert named and not any(s in n for n in named for s in ("could not compile", "Found 1 error", "no output")), named
    assert len(set(named)) == len(named)  # each run's own error


def test_a_person_saying_still_the_same_error_in_their_own_words_is_a_spiral():
    turns = turns_of("H_person_still_same_error")
    verdict, steps = play(turns)
    assert verdict.fired_at is not None and steps[0][2][0].kind == "person_reports"
    first, _ = play(turns[: verdict.fired_at + 1])
    assert "still the same error, TypeError" in first.diagnosis  # quoted as the person said it
    check_claims(first, turns[: verdict.fired_at + 1])


def test_a_mypy_error_keeps_its_code_whole():
    from strict_loop.monitor import fingerprint as fp

    line = 'src/app.py:12: error: Incompatible return value type (got "str", expected "int")  [return-value]'
    assert fp.readable(line).endswith("[return-value]")  # it read "[return-value"
    assert fp.readable("[ERROR] Failed to execute goal") == "[ERROR] Failed to execute goal"


def test_installs_that_succeed_between_the_same_failures_are_named():
    """Reviewer: the wrong-environment spiral said 'no file changed between them' and hid the three pip installs that
    succeeded, the one fact a person needs (they went into another environment)."""
    fail = {
        "tool": "Bash",
        "args": {"command": "python main.py"},
        "output": 'Traceback (most recent call last):\n  File "main.py", line 1, in <module>\n    import requests\n'
        "ModuleNotFoundError: No module named 'requests'",
        "exit_code": 1,
    }
    pip = {
        "tool": "Bash",
        "args": {"command": "pip install requests"},
        "output": "Requirement already satisfied: requests in /usr/lib/python3/dist-packages (2.31.0)",
        "exit_code": 0,
    }
    turns = [fail, pip, fail, {**pip, "args": {"command": "pip3 install requests"}}, fail, pip, fail]
    verdict, _ = play(turns)
    assert verdict.fired_at is not None
    first, _ = play(turns[: verdict.fired_at + 1])
    said = " ".join(s.evidence for s in first.signals) + first.diagnosis
    assert "succeeded between them (`Bash pip install requests`)" in said and "module requests" in said
    check_claims(first, turns[: verdict.fired_at + 1])
