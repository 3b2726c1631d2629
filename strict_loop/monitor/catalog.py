"""The catalog of spiral signals: one row per signal, what fires it, what keeps it quiet, and the remedy whispered.

One place to read every signal (the checks are ``SpiralDetector`` methods of the same name, in ``spiral``; the
thresholds are ``SpiralThresholds``). The order is the remedy's priority when several fire at once: the most
specific pattern first. Pure data; ``monitor`` picks the remedy here and ``references/spiral.md`` mirrors the table.
"""

from __future__ import annotations

import re
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
        "a running job polled 10 times in a row with nothing new, or 3 looks after a wait with nothing new once the "
        "agent's own sleeps add up to 30 minutes (whisper only; the ladder climbs after 40 polls spanning 20 minutes)",
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
        "3 restarts, kills, redeploys or CI reruns with the same outcome after each (the same port conflict, the same "
        "error, the same status), one step that hung and was cut off 3 times, or pods or containers a status read "
        "shows failing read 4 times with nothing edited or restarted between",
        "a restart after which a check passes; a status that changes; a person's new request",
        "Restarting, rerunning or waiting again will not change the outcome: find what holds the port or which other "
        "instance is still running (lsof, ps), read the service's own log (or `kubectl describe` and its events) to "
        "its first error, and fix that cause; for a step that hangs, run it once with a timeout and its output "
        "visible, or ask the person.",
    ),
    SignalSpec(
        "same_failure",
        "a check (test, build, lint or type-check run, an editor's diagnostics, a person's report, a CI run read "
        "back, pods or containers a status read shows failing, a folder's listing lacking files just written into it) "
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
        "nothing_found",
        "5 of the agent's last 8 calls looked for something and found nothing (a search with no match, a listing or "
        "read of no such file, a count of 0), with no edit and no passing run among them",
        "a search that finds what it looks for; lookups between edits and runs",
        "Your lookups keep finding nothing: you are likely looking in the wrong place. Check where you are (`pwd`) "
        "and where the thing is said to be (the person's words, the path in the config, a variable or `~` expanded), "
        "look there once, or ask the person where it is, before you conclude it does not exist.",
    ),
    SignalSpec(
        "no_effect",
        "one report (a query plan's timings, a benchmark, a memory sample) printed 4 times with a change before each "
        "(an edit, a setting, an index, the command's own flags), its numbers within 5% each time",
        "numbers that move after a change; a check that passes (a benchmark passes whatever its timings: not it); "
        "a failing run (the failure signals judge it)",
        "Your changes have not moved what you are measuring: stop trying settings. Find where the time or memory "
        "actually goes (a profile, the query plan, a heap snapshot, the slowest step's own log), then make one change "
        "aimed at that.",
    ),
    SignalSpec(
        "identical_calls",
        "the identical call 4 times in 6 turns with nothing new coming back; or 6 of the agent's last 10 calls reads "
        "and searches made before with the same result, no edit among them",
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


BREACH_REMEDY = (
    "The person said not to do this, or a rule of theirs denies it: do not do it another way (a wrapper such as "
    "`bash -c`, a script, another tool or command). Stop, say what you need and why, and let them decide."
)
"""The remedy when what the person reported includes a call made against their word (a ban, a deny rule)."""


PERSON_FIRST = frozenset({"person_reports"})
"""Signals that are the person's own verdict: after the agent was told once, the next one pauses (the second
whisper only warns of a pause, and the person has said it more than once already)."""


def remedy(kinds: AbstractSet[str]) -> str:
    """The remedy of the most specific signal among ``kinds``."""
    for spec in SIGNALS:
        if spec.kind in kinds:
            return spec.remedy
    return "Step back, state what you know and what you have tried, and choose a different approach."


@dataclass(frozen=True)
class FailureClass:
    name: str
    remedy: str


FAILURES: list[tuple[str, re.Pattern[str], str, tuple[str, ...]]] = [  # name, pattern, remedy, gates: lowercase
    # literals one of which the pattern cannot match without, read in C before it
    (
        # Claude Code's PreToolUse denial, and Codex's: the harness's own words, whatever the hook's reason
        "blocked by a hook",
        re.compile(r"^PreToolUse:[\w.:-]{1,120} hook error: |^Command blocked by PreToolUse hook: ", re.M),
        "a hook blocks this on purpose: read its reason and do what it says; the same change made another way (another "
        "tool, sed, a copy, a script) is blocked too, or goes around a guard the person set",
        ("pretooluse",),
    ),
    (
        "CUDA out of memory",
        re.compile(r"CUDA out of memory|CUBLAS_STATUS_ALLOC_FAILED|OutOfMemoryError", re.I),
        "reduce the batch size or sequence length, enable gradient checkpointing or mixed precision, or move "
        "to a larger GPU",
        ("cuda out of memory", "cublas_status_alloc_failed", "outofmemoryerror"),
    ),
    (
        "NaN loss",
        re.compile(r"\bloss[^\n]{0,20}\bnan\b|\bnan loss\b|detected nan|inf or nan", re.I),
        "lower the learning rate, clip gradients, check the input data for NaN/inf, and check for log(0) or "
        "division by zero",
        ("nan",),
    ),
    (
        "circular dependency",
        re.compile(
            r"circular (?:dependency|import)|dependency cycle|cyclic dependency|partially initialized module", re.I
        ),
        "reordering cannot break a cycle: split the build into stages (e.g. a multi-stage build) or break the "
        "import cycle by moving the shared piece",
        ("circular ", "dependency cycle", "cyclic dependency", "partially initialized module"),
    ),
    (
        "missing module",
        re.compile(r"ModuleNotFoundError|ImportError|No module named|cannot import name", re.I),
        "install the missing package into the interpreter that runs the code, or fix the import path (check "
        "which python and sys.path)",
        ("modulenotfounderror", "importerror", "no module named", "cannot import name"),
    ),
    (
        "disk full",
        re.compile(r"No space left on device|disk quota exceeded|ENOSPC", re.I),
        "free disk space (caches, build artifacts, checkpoints) or write to another volume",
        ("no space left on device", "disk quota exceeded", "enospc"),
    ),
    (
        "untrusted certificate",
        re.compile(
            r"certificate verify failed|unable to get local issuer certificate|UNABLE_TO_GET_ISSUER_CERT|"
            r"self[-_ ]signed[-_ ]cert(?:ificate)?[-_ ]in[-_ ](?:certificate[-_ ])?chain|certificate signed by unknown "
            r"authority|SSL certificate problem|UnknownIssuer|certificate has expired|CERT_HAS_EXPIRED",
            re.I,
        ),
        "the TLS chain is not trusted (a proxy's or a private CA, an expired certificate): check it once with "
        "`openssl s_client -connect HOST:443 -CAfile BUNDLE`, then point every tool at that one bundle "
        "(SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS, pip --cert); another tool meets the same chain",
        ("certificate", "unable_to_get_issuer_cert", "self-signed", "self_signed", "self signed", "unknownissuer")
        + ("cert_has_expired",),
    ),
    (
        "timeout",
        # and Go's network errors as Docker, kubectl and go itself print them ("net/http: TLS handshake timeout",
        # "dial tcp 10.0.0.5:443: i/o timeout", "(Client.Timeout exceeded while awaiting headers)")
        re.compile(
            r"timed out|timeout expired|TimeoutError|deadline exceeded|handshake timeout|i/o timeout|"
            r"Timeout exceeded",
            re.I,
        ),
        "find why it hangs (a prompt for input, a lock, the network) or raise the timeout deliberately; do "
        "not just retry",
        ("timed out", "timeout expired", "timeouterror", "deadline exceeded", "handshake timeout", "i/o timeout")
        + ("timeout exceeded",),
    ),
    (
        "authentication failed",
        re.compile(
            r"authentication failed|failed authentication|invalid credentials|bad credentials|\bWRONGPASS\b|\bNOAUTH\b|"
            r"Access denied for user|\b401 Unauthorized\b|HTTP/[\d.]+ 401\b|invalid[_ ](?:api[_ ]key|token|client)\b|"
            r"InvalidClientTokenId|ExpiredToken|SignatureDoesNotMatch|Permission denied \(publickey",
            re.I,
        ),
        "the failing side sends credentials the other side does not accept: print what the failing process actually "
        "uses (its environment or effective config, not the file edited), compare it with what the server expects",
        ("authentication", "invalid credentials", "bad credentials", "wrongpass", "noauth", "access denied for user")
        + ("401", "invalid_", "invalid ", "invalidclienttokenid", "expiredtoken", "signaturedoesnotmatch", "publickey"),
    ),
    (
        "permission denied",
        re.compile(r"Permission denied|EACCES|Operation not permitted|EPERM", re.I),
        "check the file's owner and mode, or write somewhere the agent may write; do not retry the same path",
        ("permission denied", "eacces", "operation not permitted", "eperm"),
    ),
    (
        "connection refused",
        re.compile(r"Connection refused|ECONNREFUSED|Failed to establish a new connection|Could not connect", re.I),
        "start the service or fix its host/port first; retrying the client will not help",
        ("connection refused", "econnrefused", "failed to establish a new connection", "could not"),
    ),
    (
        "port in use",
        re.compile(r"Address already in use|EADDRINUSE|port \d{1,5} is (?:already )?in use|bind\(\) failed", re.I),
        "find what holds the port (lsof -i :PORT or ss -ltnp) and stop that process or use another port; restarting "
        "will not free it",
        (" in use", "eaddrinuse", "bind() failed"),
    ),
    (
        "rate limit",
        re.compile(r"rate limit|Too Many Requests|\b429\b|quota exceeded", re.I),
        "back off with increasing delays or lower the request rate; immediate retries make it worse",
        ("rate limit", "too many requests", "429", "quota exceeded"),
    ),
    (
        "context window",
        re.compile(r"context (?:length|window)|maximum context|too many tokens|prompt is too long", re.I),
        "send less: summarize, paginate or filter output before reading it, and compact the loop state",
        ("context", "too many tokens", "prompt is too long"),
    ),
    (
        "syntax error",
        re.compile(r"SyntaxError|IndentationError|syntax error|unexpected EOF|unexpected token|E999", re.I),
        "re-read the exact lines around the reported position and rewrite the whole block once, checking "
        "indentation and quoting",
        ("syntaxerror", "indentationerror", "syntax error", "unexpected eof", "unexpected token", "e999"),
    ),
    (
        "command not found",
        re.compile(r"command not found|not recognized as an internal|No such file or directory", re.I),
        "check that the program or path exists from the folder the command runs in (pwd, which, ls) before running "
        "it again; install it or use the right path",
        ("command not found", "not recognized as an internal", "no such file or directory"),
    ),
]


SPECIFIC_CLASSES = frozenset(
    {
        "blocked by a hook",
        "CUDA out of memory",
        "NaN loss",
        "circular dependency",
        "disk full",
        "timeout",
        "permission denied",
        "authentication failed",
        "connection refused",
        "untrusted certificate",
        "port in use",
        "rate limit",
        "context window",
    }
)
"""Failure classes specific enough that two different messages of the class are 'the same error'."""
