"""The catalog of spiral signals: one row per signal, what fires it, what keeps it quiet, and the remedy whispered.

One place to read every signal (the checks are ``SpiralDetector`` methods of the same name, in ``spiral``; the
thresholds are ``SpiralThresholds``). The order is the remedy's priority when several fire at once: the most
specific pattern first. Pure data; ``monitor`` picks the remedy here and ``references/spiral.md`` mirrors the table.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass


@dataclass(frozen=True)
class SignalSpec:
    kind: str
    fires: str
    quiet: str
    remedy: str


SIGNALS: tuple[SignalSpec, ...] = (
    SignalSpec(
        "job_failure",
        "strict-loop watch: a watched job's run failed in a way no allowed remedy repairs (an unknown failure, a "
        "spent budget, the same failure after repeated retries); raised by watch, never by the agent's turns",
        "a failure an allowed remedy repairs within its budget",
        "A person looks at the job's failure (its log is in the task's watch/ folder) and answers the pause.",
    ),
    SignalSpec(
        "budget_spent",
        "a budget of the task's (tool calls, wall time, tokens, dollars) is spent; raised by the hooks' count "
        '(references/protocol.md, "Budgets"), never by a pattern in the agent\'s turns',
        "a budget not yet spent (at 80% the agent is told once)",
        "A person raises the budget (strict-loop budget, or the page), which lets the task go on, or hands it back.",
    ),
    SignalSpec(
        "stalled_poll",
        "a running job polled 10 times in a row with nothing new (whisper only; the ladder climbs after 40 "
        "polls spanning 20 minutes)",
        "a job whose output moves; a long build polled patiently",
        "The job is still running and polling it again will not make it finish sooner: wait for it with a blocking "
        "wait or a sleep with a timeout, check much less often, and check that the job is still alive (its log grows, "
        "its process exists) rather than re-reading the same status.",
    ),
    SignalSpec(
        "person_reports",
        "the person says it still fails after the agent's attempts 2 times (the same problem again in new words, "
        "pasted again, 'still', 'not fixed'; a refusal; a refused call made again), or once that it goes in circles",
        "a first report of a symptom; a question or a new request; a failure the person reports that has changed; "
        "the person's approval",
        "The person has now told you more than once that it still fails: stop claiming fixes. Reproduce what they see "
        "yourself first (run what they run, read what they pasted to its first error), find the cause, and confirm "
        "the fix with their own check before you say it works; if you cannot reproduce it, ask them.",
    ),
    SignalSpec(
        "restart_loop",
        "3 restarts, kills or redeploys with the same outcome after each (the same port conflict, the same error, "
        "the same status), or one step that hung and was cut off 3 times",
        "a restart after which a check passes; a status that changes; a person's new request",
        "Restarting again will not change the outcome: find what holds the port or which other instance is still "
        "running (lsof, ps), read the service's own log to its first error, and fix that cause; for a step that hangs, "
        "run it once with a timeout and its output visible, or ask the person.",
    ),
    SignalSpec(
        "same_failure",
        "a check (test, build, lint or type-check run, an editor's diagnostics, a person's report) "
        "failing with the same failure signature 3 times with an edit before each repeat (2 or more different edits), "
        "and no passing check of it; any other command (a plan, a deploy, a script) failing with the same error line "
        "4 times so, and not succeeding between",
        "failures that fall or change (TDD); a check that passes; a rising score",
        "Your edits have not changed this failure: stop editing and find out why it fails (read the whole error and "
        "the code it names; check that what you edit is what runs), then make one change aimed at that cause.",
    ),
    SignalSpec(
        "error_cycle",
        "one failing step retried with varied arguments whose errors come back (A, B, C, A)",
        "a success or an edit between the attempts",
        "Varying the arguments brings the same errors back in turn: read the first error of one run to its cause "
        "and fix that, or change the plan.",
    ),
    SignalSpec(
        "file_oscillation",
        "an edit undone for the 2nd time (a file back to an earlier content, or an edit that swaps "
        "an earlier one's text back); or edit/view churn on one file with the agent saying it is going wrong",
        "the first revert; steady edit-view-edit of new content",
        "You keep undoing and redoing the same change: decide which version is right with a check (run the test) "
        "before touching the file again, then write the region once, completely.",
    ),
    SignalSpec(
        "identical_calls",
        "the identical call 4 times in 6 turns with nothing new coming back",
        "polling whose output changes; lost content (never the same)",
        "Repeating the same action will give the same result: read the output once more and change the "
        "approach, not the details.",
    ),
    SignalSpec(
        "equivalent_outcomes",
        "4 actions equal after normalization with the same normalized outcome in 8 turns",
        "paging or scrolling; different edits with the same confirmation",
        "Repeating the same action will give the same result: read the output once more and change the "
        "approach, not the details.",
    ),
    SignalSpec(
        "alternation",
        "an A-B(-C...) cycle of up to 6 steps repeated without new information, over six steps at least",
        "cycles whose steps bring news",
        "You are cycling through the same steps: write down what each step showed and pick a step you have not tried.",
    ),
    SignalSpec(
        "repeated_error",
        "the same error 4 times in 10 turns through varied actions, or one command failing the same "
        "way on its last 4 runs",
        "errors that change and get fixed",
        "The error does not depend on what you keep varying: find out what causes it (read the message and the code it "
        "names) before another attempt.",
    ),
    SignalSpec(
        "monologue",
        "3 turns in a row without a tool call",
        "",
        "Take an action (run, read or edit something) instead of reasoning further without tools.",
    ),
    SignalSpec(
        "score_drop",
        "the verifier score fell twice in a row",
        "",
        "The verifier score is falling: go back to the last change that raised it.",
    ),
    SignalSpec(
        "error_rate",
        "11 of 12 turns failed and at most one brought anything new",
        "failing commands that keep teaching something",
        "Step back, state what you know and what you have tried, and choose a different approach.",
    ),
    SignalSpec(
        "self_diagnosis",
        "the agent says it is going wrong 2 times in 3 turns, with an edit between and nothing new",
        "an admission followed by a fix",
        "Step back, state what you know and what you have tried, and choose a different approach.",
    ),
)

BY_KIND: dict[str, SignalSpec] = {s.kind: s for s in SIGNALS}

FAILURE_CLASS_FIRST = frozenset(
    {
        "same_failure",
        "error_cycle",
        "repeated_error",
        "identical_calls",
        "equivalent_outcomes",
        "error_rate",
        "restart_loop",
    }
)
"""Signals about failures: a recognised failure class (missing module, timeout...) has the more precise remedy."""


OUTSIDE = {"job_failure": "[JOB FAILED]", "budget_spent": "[BUDGET SPENT]"}
"""Pauses decided outside the detector, with their alert's heading: the diagnosis is their evidence alone."""


PERSON_FIRST = frozenset({"person_reports"})
"""Signals that are the person's own verdict: after the agent was told once, the next one pauses (the second
whisper only warns of a pause, and the person has said it more than once already)."""


def remedy(kinds: AbstractSet[str]) -> str:
    """The remedy of the most specific signal among ``kinds``."""
    for spec in SIGNALS:
        if spec.kind in kinds:
            return spec.remedy
    return "Step back, state what you know and what you have tried, and choose a different approach."
