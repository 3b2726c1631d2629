"""supervise waits out a plan's usage limit (issue 29): read from the harness's own fields only, slept until the reset
without counting a failure or an invocation, the same session resumed, kept across a restart, bounded by
--max-limit-wait (exit 7 and an alert).

The harness is a stand-in (a Python script printing Claude Code's or Codex's real event shapes, with their real limit
messages); the supervisor, its CLI, the ledger, the page and the alert delivery are the real ones.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx2
import pytest
from alert_rig import FAST, receiver, settled, wait_until
from conftest import read_jsonl
from test_dashboard import serving_page

from strict_loop import Workspace
from strict_loop.storage import workspaces
from strict_loop.supervisor import limits
from strict_loop.supervisor.runner import Supervisor, SupervisorResult

SESSION = "3f0c9a52-8e7b-4d0e-9a41-6f1f2b7c9d10"
LIMITED_SETTINGS = {"max_consecutive_failures": 1, "backoff_base_s": 0.05, "backoff_max_s": 0.1, "heartbeat_s": 0.2}

# A stand-in Claude Code: while the run count in $STANDIN_DIR is below $LIMITED_RUNS it answers as Claude Code does
# at a plan's limit (the API-error message with its rate_limit_info, the errored result, exit 1), else it does the
# task. Each run's argv and start time are kept.
CLAUDE = """
import json, os, sys, time
box = os.environ["STANDIN_DIR"]
n = len(os.listdir(box))
json.dump({"argv": sys.argv, "at": time.time()}, open(os.path.join(box, f"run{n}.json"), "w"))
def say(event):
    print(json.dumps({**event, "session_id": SESSION}), flush=True)
say({"type": "system", "subtype": "init"})
if n < int(os.environ["LIMITED_RUNS"]):
    reset = int(os.environ["RESET"])
    text = os.environ.get("LIMIT_TEXT", "You've hit your session limit · resets 3pm (Europe/Berlin)")
    info = {"status": "rejected", "resetsAt": reset, "rateLimitType": "five_hour"}
    say({"type": "rate_limit_event", "rate_limit_info": info})
    say({"type": "assistant", "message": {"model": "<synthetic>", "role": "assistant",
         "content": [{"type": "text", "text": text}]}, "error": "rate_limit", "is_api_error_message": True,
         "api_error_status": 429, "api_error": "usage_limit_reached", "api_error_params": {"rate_limit_info": info}})
    say({"type": "result", "subtype": "success", "is_error": True, "api_error_status": 429,
         "terminal_reason": "api_error", "result": text, "total_cost_usd": 0.01})
    sys.exit(1)
open(os.environ["DONE"], "w").write("done")
say({"type": "result", "subtype": "success", "is_error": False, "result": "done.txt written", "total_cost_usd": 0.02})
"""

# A stand-in Codex: `codex exec --json` at a plan's limit (its error event and turn.failed, exit 1), then the task.
CODEX = """
import json, os, sys, time
box = os.environ["STANDIN_DIR"]
n = len(os.listdir(box))
json.dump({"argv": sys.argv, "at": time.time()}, open(os.path.join(box, f"run{n}.json"), "w"))
say = lambda event: print(json.dumps(event), flush=True)
say({"type": "thread.started", "thread_id": SESSION})
say({"type": "turn.started"})
if n < int(os.environ["LIMITED_RUNS"]):
    message = os.environ["LIMIT_TEXT"]
    say({"type": "error", "message": message})
    say({"type": "turn.failed", "error": {"message": message}})
    sys.exit(1)
open(os.environ["DONE"], "w").write("done")
say({"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 5}})
"""


def _standin(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable} -S\nSESSION = {SESSION!r}\n{body}")  # -S: no site, ~20 ms less a start
    path.chmod(0o755)
    (tmp_path / "runs").mkdir()
    return path


def _env(task: Workspace, tmp_path: Path, reset: float, limited_runs: int = 1, **more: str) -> dict[str, str]:
    return {
        **os.environ,
        "STANDIN_DIR": str(tmp_path / "runs"),
        "RESET": str(int(reset)),
        "LIMITED_RUNS": str(limited_runs),
        "DONE": str(task.root / "done.txt"),
        **more,
    }


def _runs(tmp_path: Path) -> list[dict]:
    return [
        json.loads((tmp_path / "runs" / f"run{i}.json").read_text()) for i in range(len(os.listdir(tmp_path / "runs")))
    ]


def _events(task: Workspace, kind: str) -> list[dict]:
    return [e for e in read_jsonl(task.task_paths("t").events) if e["kind"] == kind]


def _supervise(task: Workspace, harness: str, binary: Path, env: dict[str, str], **settings) -> SupervisorResult:
    overrides = {**LIMITED_SETTINGS, **settings}
    sup = Supervisor(
        task.root, "t", harness, harness_bin=str(binary), env=env, stderr=io.StringIO(), overrides=overrides
    )
    return sup.run()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("You've hit your limit · resets 3pm (Europe/Berlin)", "2026-11-27T15:00:00+01:00"),
        ("You've hit your session limit · resets 3:30am (Asia/Kolkata)", "2026-11-27T23:00:00+01:00"),
        ("Limit reached · resets Nov 28, 3pm (Europe/Berlin)", "2026-11-28T15:00:00+01:00"),
        ("You've hit your limit · resets 11am (Europe/Berlin)", "2026-11-28T11:00:00+01:00"),  # passed today: tomorrow
        ("Claude AI usage limit reached|1796220000", "2026-12-02T15:00:00+01:00"),
        ("Claude usage limit reached. Your limit will reset at 15:00", "2026-11-27T15:00:00+01:00"),
        (
            "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), or try again at 3:05 PM.",
            "2026-11-27T15:05:00+01:00",
        ),
        ("You've hit your usage limit. Try again at Dec 2nd, 2026 3:05 PM.", "2026-12-02T15:05:00+01:00"),
        (
            "API call failed after 3 retries: HTTP 429: Rate limit reached. Please try again in 6m0s.",
            "2026-11-27T12:53:00+01:00",
        ),
        (
            "You have exhausted your capacity on this model. Your quota will reset after 2h13m.",
            "2026-11-27T15:00:00+01:00",
        ),
        ("You will regain access on 2026-12-01 at 00:00 UTC.", "2026-12-01T01:00:00+01:00"),
        ("usage limit · resets in 2 hours", "2026-11-27T14:47:00+01:00"),
        ("usage limit · resets 3", None),  # no time of day
        ("Claude AI usage limit reached|1700000000", None),  # long past
    ],
)
def test_the_reset_is_read_from_each_harness_s_words_with_its_time_zone(text: str, expected: str | None):
    berlin = ZoneInfo("Europe/Berlin")
    at = datetime(2026, 11, 27, 12, 47, tzinfo=berlin).timestamp()
    found = limits.reset_time(text, at, berlin)
    assert (datetime.fromtimestamp(found, berlin).isoformat() if found else None) == expected
    if found and ("at 15:00" in text or "PM." in text):
        other = limits.reset_time(text, at, ZoneInfo("America/New_York"))  # a local time: the harness's zone says
        assert other is not None and other != found


FIXTURES = Path(__file__).parent / "fixtures" / "streams"


@pytest.mark.parametrize(
    ("harness", "lines", "usage", "reset_in"),
    [
        (
            "hermes",
            ["API call failed after 3 retries: HTTP 429: Rate limit reached. Please try again in 6m0s."],
            {"completed": False, "failed": True},
            360,
        ),
        (
            "gemini",
            [
                json.dumps(
                    {
                        "type": "result",
                        "status": "error",
                        "error": {
                            "type": "quota",
                            "message": "You have exhausted your capacity. Your quota will reset after 2h13m.",
                        },
                    }
                )
            ],
            None,
            7980,
        ),
        ("claude", (FIXTURES / "claude-http429.jsonl").read_text().splitlines(), None, None),  # a passing 429
        ("codex", (FIXTURES / "codex-http429.jsonl").read_text().splitlines(), None, None),
        ("hermes", ["Done. The limit resets in 2h."], {"completed": True, "failed": False}, None),  # the agent's words
    ],
)
def test_each_harness_s_own_limit_fields_give_the_reset_and_a_passing_429_none(
    harness: str, lines: list[str], usage: dict | None, reset_in: float | None
):
    from strict_loop.headless.streams import adapter_for

    adapter = adapter_for(harness)
    for line in lines:
        adapter.feed(line)
    outcome = adapter.finish(0, False, usage)
    found = limits.found(adapter, outcome, usage, {"TZ": "UTC"}, at=1_800_000_000.0)
    assert (found.reset_at - 1_800_000_000.0 if found else None) == reset_in


def _opencode(lines: list[str], exit_code: int = 1, **headers: str) -> tuple[float, limits.UsageLimit | None]:
    """What the usage-limit reader finds in an ``opencode run --format json`` stream (its last error's response headers
    replaced by ``headers`` when given), half a second after that error was printed."""
    from strict_loop.headless.streams import adapter_for

    adapter, printed = adapter_for("opencode"), 0.0
    for line in lines:
        event = json.loads(line)
        if event.get("type") == "error":
            printed = event["timestamp"] / 1000
            if headers:
                event["error"]["data"]["responseHeaders"] = headers
        adapter.feed(json.dumps(event))
    outcome = adapter.finish(exit_code, False, None)
    return printed, limits.found(adapter, outcome, None, {"TZ": "UTC"}, at=(printed or 1_800_000_000.0) + 0.5)


@pytest.mark.parametrize(
    ("case", "headers", "reset_in"),
    [
        ("http429", {}, 2.0),  # Retry-After: 2 (its message says "try again in 2s" too)
        ("http429", {"retry-after-ms": "1500", "retry-after": "2"}, 1.5),
        ("http429", {"retry-after": "Fri, 27 Nov 2026 15:51:26 GMT"}, 3599.674),  # an HTTP date
        ("http429-quota", {}, None),  # OpenAI's out-of-credits 429 names no reset: the ordinary back-off
        ("api-error", {"retry-after": "30"}, None),  # a 400 with a Retry-After is no usage limit
    ],
)
def test_opencode_s_429_resets_when_its_provider_s_retry_after_says(case: str, headers: dict, reset_in: float | None):
    """Captured from opencode-ai 1.18.33 (tests/capture_opencode_limits.py): OpenCode retries a 429 five times itself,
    each after the provider's Retry-After, then prints one ``error`` event carrying the provider's headers."""
    printed, found = _opencode((FIXTURES / f"opencode-{case}.jsonl").read_text().splitlines(), **headers)
    assert (round(found.reset_at - printed, 3) if found else None) == reset_in
    assert found is None or found.message.startswith("APIError 429: Rate limit reached for requests per min")


def test_limit_words_an_opencode_agent_printed_suspend_nothing():
    """The agent's text and a tool's output saying a 429 with a retry time, in a run that then failed: no wait."""
    said = "APIError 429: usage limit reached. Retry-After: 2. Please try again in 2s."
    lines = (FIXTURES / "opencode-calls.jsonl").read_text().splitlines()
    session = json.loads(lines[0])["sessionID"]
    lines.append(json.dumps({"type": "text", "sessionID": session, "part": {"type": "text", "text": said}}))
    assert _opencode(lines, exit_code=1) == (0.0, None)


@pytest.mark.slow  # about a second or more of waiting on processes: the fast tier stays under 30 s
def test_claude_code_s_limit_is_waited_out_and_the_same_session_resumed(task: Workspace, tmp_path: Path):
    binary = _standin(tmp_path, "claude", CLAUDE)
    reset = int(time.time()) + 2  # one to two seconds ahead (an epoch in whole seconds, as Claude Code says it)
    result = _supervise(task, "claude", binary, _env(task, tmp_path, reset))
    assert (result.exit_code, result.action, result.invocations) == (0, "stop", 2), result.reason
    first, second = _runs(tmp_path)
    assert second["at"] >= int(reset)  # nothing launched before the reset
    assert second["argv"][second["argv"].index("--resume") + 1] == SESSION and "--resume" not in first["argv"]
    [wait] = _events(task, limits.WAIT_KIND)
    assert wait["data"]["reset_epoch"] == int(reset) and wait["data"]["resumed"] is False
    assert wait["message"].startswith("waiting for the usage limit to reset at ")
    calls = [e["data"] for e in _events(task, "supervisor.invocation")]
    assert calls[0]["limit_reset_at"] == int(reset) and calls[0]["decision"]["action"] == "continue"
    assert calls[1]["stop"].startswith("goal_met") and result.cost_usd == pytest.approx(0.03)  # the cost still counts


@pytest.mark.slow  # about a second or more of waiting on processes: the fast tier stays under 30 s
def test_codex_s_limit_message_is_waited_out(task: Workspace, tmp_path: Path, monkeypatch):
    """Codex says a local time to the minute (``Try again at 3:05 PM.``): the supervisor's clock is moved to just
    before that minute, so the test waits a second, not a minute."""
    binary = _standin(tmp_path, "codex", CODEX)
    utc = timezone.utc
    minute = datetime.now(utc).replace(second=0, microsecond=0) + timedelta(minutes=1)
    said = (
        minute.strftime("%-I:%M %p")
        if minute.date() == datetime.now(utc).date()
        else minute.strftime("%b %-d, %Y %-I:%M %p")
    )
    shift = minute.timestamp() - 0.8 - time.time()
    monkeypatch.setattr(limits, "now", lambda: time.time() + shift)
    text = f"You've hit your usage limit. Upgrade to Plus to continue using Codex, or try again at {said}."
    env = _env(task, tmp_path, 0, LIMIT_TEXT=text, TZ="UTC")
    began = time.monotonic()
    result = _supervise(task, "codex", binary, env)
    assert (result.exit_code, result.invocations) == (0, 2), result.reason
    assert time.monotonic() - began < 10
    [wait] = _events(task, limits.WAIT_KIND)
    assert wait["data"]["reset_epoch"] == minute.timestamp()
    first, second = _runs(tmp_path)
    assert second["argv"][1:3] == ["exec", "resume"] and SESSION in second["argv"]  # the same thread


@pytest.mark.slow  # the real CLI in a subprocess, the page over HTTP, and a wait of seconds
def test_a_restart_during_the_wait_keeps_waiting_and_the_page_says_so(task: Workspace, tmp_path: Path):
    binary = _standin(tmp_path, "claude", CLAUDE)
    reset = time.time() + 6  # room for a slow, busy machine to record the wait and answer Ctrl-C before it
    env = {**_env(task, tmp_path, reset), "PYTHONPATH": str(Path(__file__).parents[1])}
    argv = [sys.executable, "-m", "strict_loop", "supervise", "--workspace", str(task.root), "--task-id", "t"]
    argv += [
        "--harness",
        "claude",
        "--harness-bin",
        str(binary),
        "--max-consecutive-failures",
        "1",
        "--heartbeat",
        "0.2",
    ]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: _events(task, limits.WAIT_KIND), 15, "the wait to be recorded")
        status = wait_until(
            lambda: "waiting for the usage limit" in task.task_paths("t").latest_status.read_text(), 5, ""
        )
        assert status
        workspaces.remember(task.root)
        with serving_page() as url:
            [row] = httpx2.get(f"{url}/api/overview").json()["tasks"]
        assert row["attention"].startswith("waiting for the usage limit to reset at ") and "(in " in row["attention"]
        proc.send_signal(signal.SIGINT)  # Ctrl-C during the wait
        _, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert len(_runs(tmp_path)) == 1 and time.time() < reset
    result = _supervise(task, "claude", binary, _env(task, tmp_path, reset))  # the same command again
    assert (result.exit_code, result.invocations) == (0, 1), result.reason
    first, second = _runs(tmp_path)
    assert second["at"] >= int(reset)
    waits = _events(task, limits.WAIT_KIND)
    assert [w["data"]["resumed"] for w in waits] == [False, True]
    assert [w["data"]["reset_epoch"] for w in waits] == [int(reset)] * 2


def test_a_reset_beyond_max_limit_wait_ends_the_run_with_exit_7_and_alerts(task: Workspace, tmp_path: Path):
    binary = _standin(tmp_path, "claude", CLAUDE)
    with receiver() as http:
        env = _env(task, tmp_path, time.time() + 3 * 3600, **FAST, STRICT_LOOP_WEBHOOK_URL=http.url("/ok/hook"))
        result = _supervise(task, "claude", binary, env, max_limit_wait_s=3600)
        wait_until(lambda: http.received, 10, "the alert")
        settled(task.task_paths("t").alerts)
    assert (result.exit_code, result.action, result.invocations) == (7, "limit", 1), result.reason
    assert "beyond max_limit_wait_s 3600" in result.reason and not _events(task, limits.WAIT_KIND)
    [sent] = http.received
    assert sent["body"]["text"].startswith("[USAGE LIMIT] t: supervise ended: the usage limit resets at ")
    [ended] = _events(task, "supervisor.limit")
    assert ended["data"]["exit_code"] == 7 and ended["data"]["delivery"] == {"webhook": "pending"}


AGENT_SAYS = """
import json, os, sys
n = len(os.listdir(os.environ["STANDIN_DIR"]))
open(os.path.join(os.environ["STANDIN_DIR"], f"run{n}.json"), "w").write(json.dumps({"argv": sys.argv, "at": 0}))
text = f"Claude AI usage limit reached|{os.environ['RESET']} You've hit your limit · resets 3pm (Europe/Berlin)"
def say(event):
    print(json.dumps({**event, "session_id": SESSION}), flush=True)
say({"type": "system", "subtype": "init"})
warning = {"status": "allowed_warning", "resetsAt": int(os.environ["RESET"])}  # a warning, no rejection
say({"type": "rate_limit_event", "rate_limit_info": warning})
say({"type": "assistant", "message": {"model": "claude", "content": [{"type": "text", "text": text}]}})
say({"type": "assistant", "message": {"model": "claude", "content": [
    {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo limit"}}]}})
say({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": text}]}})
errored = os.environ.get("ERRORED") == "1"
say({"type": "result", "subtype": "error_max_turns" if errored else "success", "is_error": errored, "result": text})
sys.exit(1 if errored else 0)
"""


@pytest.mark.parametrize("errored", [False, True])
def test_limit_words_the_agent_printed_suspend_nothing(task: Workspace, tmp_path: Path, errored: bool):
    binary = _standin(tmp_path, "claude", AGENT_SAYS)
    env = _env(task, tmp_path, time.time() + 3600, ERRORED="1" if errored else "0")
    began = time.monotonic()
    result = _supervise(task, "claude", binary, env, max_consecutive_failures=2, backoff_base_s=0)
    assert time.monotonic() - began < 5
    assert (result.exit_code, result.action, result.invocations) == (6, "fail", 2), result.reason
    assert not _events(task, limits.WAIT_KIND)
    assert [e["data"]["limit_reset_at"] for e in _events(task, "supervisor.invocation")] == [None, None]
