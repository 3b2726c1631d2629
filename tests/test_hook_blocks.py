"""A call a PreToolUse hook of another program denies (a guard the person installed: a policy, a constraint monitor)
reaches the monitor in Claude Code and Codex: neither fires a post-tool hook for it (it never ran), and only the
transcript keeps it. The next hook records each blocked call as a turn of its own (failed, the guard's reason as its
output) before its own turn, as it records the person's refusals; a call our own hooks denied (a pause) is not
recorded again. The transcripts are real: Claude Code 2.1.332 and Codex 0.171 ran against a scripted model with a
guard denying two calls (tests/capture_blocks.py, tests/fixtures/hooks/<harness>_blocked.jsonl)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conftest import read_jsonl

from strict_loop import Workspace
from strict_loop.harness import handler, payloads, readers

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
REASON = "CONSTRAINT VIOLATION: commands that touch guarded/ are blocked by the project's policy"
BLOCKED = {"claude": f"PreToolUse:Bash hook error: {REASON}", "codex": f"Command blocked by PreToolUse hook: {REASON}"}


def captured(harness: str) -> tuple[list[str], dict]:
    """The transcript as it stood when the hook of the call that ran (``ls``) ran, and that hook's payload."""
    row = json.loads((FIXTURES / f"{harness}_blocked_call.json").read_text())
    lines = (FIXTURES / f"{harness}_blocked.jsonl").read_text().splitlines(keepends=True)
    return lines[: row["lines"]], row["payload"]


def hook(ws: Path, harness: str, payload: dict, lines: list[str]) -> str:
    path = ws.parent / "t.jsonl"
    path.write_text("".join(lines).replace("WORKSPACE", str(ws)))
    body = json.loads(json.dumps(dict(payload, transcript_path=str(path), cwd=str(ws))).replace("WORKSPACE", str(ws)))
    return handler.handle(harness, json.dumps(body).encode(), workspace=str(ws), env={}, daemon=False)


def events(ws: Path) -> list[dict]:
    return [e for e in read_jsonl(ws / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"]


@pytest.fixture
def ws(ws_dir: Path) -> Path:
    Workspace(ws_dir).init_state(task_id="t1", goal="g", global_stop_condition="s")
    return ws_dir


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_the_calls_a_guard_blocked_are_recorded_as_failed_turns_before_the_call_that_ran(harness, ws):
    lines, payload = captured(harness)
    assert hook(ws, harness, payload, lines) == ""
    got = events(ws)
    assert [(e["data"]["tool"], e["data"]["args"].get("command")) for e in got] == [
        ("Bash", "rm -rf guarded/cache"), ("Bash", "rm -r guarded/cache"), ("Bash", "ls"),
    ]  # fmt: skip
    blocked = got[:2]
    assert [e["data"]["output"] for e in blocked] == [BLOCKED[harness]] * 2  # Codex's ". Command: ..." left out
    assert all(e["data"]["error"] and e["data"]["hook"]["source"] == "transcript" for e in blocked)
    assert all("blocked by a hook" in e["message"] and "person" not in e["message"] for e in blocked)
    assert "error" not in got[2]["data"] or not got[2]["data"]["error"]
    if harness == "claude":
        assert blocked[0]["data"]["thought"] == "I will clear the cache folder."  # the agent's words before it


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_call_our_own_hook_denied_is_not_recorded_again(harness, ws):
    """While paused our PreToolUse hook denies calls; the transcript then holds them as any guard's: not the agent's
    failures (the monitor would count its own pause), so only the call that ran is recorded."""
    lines, payload = captured(harness)
    ours = payloads.pause_reason("the same error 4 times", "strict-loop resume --task t1 --action continue")
    own = [line.replace(REASON, json.dumps(ours)[1:-1]) for line in lines]
    assert hook(ws, harness, payload, own) == ""
    assert [e["data"]["args"].get("command") for e in events(ws)] == ["ls"]


@pytest.mark.parametrize("command", ["rm -rf .agent-loop", "strict-loop resume --task t1 --action continue"])
def test_every_reason_our_hooks_deny_a_call_with_names_us(command, ws):
    """What keeps our own denials out of the record (``readers.OWN_DENIAL``) is in each reason we give: a pause's,
    and a refused write to the loop's folder or answer to a pause, as the real PreToolUse hook gives them."""
    resume = "strict-loop resume --task t1 --action continue"
    reasons = [payloads.pause_reason("diagnosis", resume), payloads.pause_reminder(resume)]
    reasons.append(payloads.unreadable_reason(["t1"], "why", resume))
    pre = json.loads((FIXTURES / "claude_pre_tool_use.json").read_text())
    body = dict(pre, cwd=str(ws), tool_input={"command": command})
    said = json.loads(handler.handle("claude", json.dumps(body).encode(), workspace=str(ws), env={}, daemon=False))
    reasons.append(said["hookSpecificOutput"]["permissionDecisionReason"])
    assert all(readers.OWN_DENIAL in r for r in reasons)


def blocked_again(lines: list[str], count: int, first: int) -> list[str]:
    """``count`` more tries of the second blocked call (its tool_use and its result lines), each with its own id."""
    call, result = (json.loads(lines[i]) for i in (20, 21))
    out = []
    for k in range(first, first + count):
        use, res = copy.deepcopy(call), copy.deepcopy(result)
        use["message"]["content"][0]["id"] = res["message"]["content"][0]["tool_use_id"] = f"toolu_r{k}"
        out += [json.dumps(use) + "\n", json.dumps(res) + "\n"]
    return out


def test_the_same_blocked_call_made_again_and_again_fires_with_the_guards_reason(ws):
    """The agent retries the call the guard blocks, four times, nothing between: the monitor fires on the turns it
    recorded from the transcript, and its diagnosis quotes the guard's words, never as the person's."""
    lines, payload = captured("claude")
    hook(ws, "claude", payload, lines[:22] + blocked_again(lines, 4, 0) + lines[22:])
    verdict = Workspace(ws).detect_spiral(task_id="t1")
    assert verdict.fired_at is not None and verdict.fired_at <= 5
    assert "guarded/" in verdict.diagnosis and "person" not in verdict.diagnosis


def test_a_burst_recorded_by_one_hook_takes_one_step_of_the_ladder(ws):
    """Six tries of a blocked call reach the monitor at one hook (the next call that runs): the agent hears it all at
    once, so it gets a whisper, not a pause that says it was told before. Each later burst climbs one more step:
    a stronger whisper, then the pause."""
    lines, payload = captured("claude")
    whole = (FIXTURES / "claude_blocked.jsonl").read_text().splitlines(keepends=True)
    ran, result = whole[23], whole[26]  # the call that ran (ls), and its result
    transcript, said = lines[:22], []
    for burst in range(3):
        call_id = f"toolu_ls{burst}"
        transcript += blocked_again(lines, 6, 6 * burst) + [ran.replace("toolu_0005", call_id)]
        said.append(hook(ws, "claude", dict(payload, tool_use_id=call_id), transcript))
        transcript.append(result.replace("toolu_0005", call_id))
    assert len(events(ws)) == 3 * 7 + 2  # each burst once, before its own call (and the first two blocked calls)
    texts = [json.loads(s)["hookSpecificOutput"]["additionalContext"] for s in said]
    assert [t.startswith("[strict-loop monitor]") for t in texts] == [True, True, False]
    assert "PAUSED" not in texts[0] + texts[1] and texts[2].startswith("PAUSED")
    assert "Already suggested 2 time(s)" in texts[2]  # true: two whispers, each heard at a hook before
