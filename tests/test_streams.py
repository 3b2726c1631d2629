"""The stream adapters on what the real harnesses printed (tests/fixtures/streams/, from tests/capture_streams.py).

Each fixture is one headless run against a scripted model: a failing command (``ls`` of a missing
folder, exit 2), a succeeding one (``echo hello > out.txt && cat out.txt``) and a final text; or an
endpoint answering HTTP 400 or 429. The adapters must turn them into the same tool calls the hooks
would record, and a verdict that does not trust the exit code alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strict_loop.headless.streambase import ToolCall
from strict_loop.headless.streams import adapter_for
from strict_loop.model.turns import MAX_TURN_TEXT, Turn

FIXTURES = Path(__file__).parent / "fixtures" / "streams"
PROBE = "ls /nonexistent-strict-loop-probe"
WRITE = "echo hello > out.txt && cat out.txt"


def first_line(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text().splitlines()[0])


def replay(harness: str, case: str, timeout_s=None):
    """Feed a captured run through a fresh adapter: (tool calls, outcome)."""
    meta = json.loads((FIXTURES / f"{harness}-{case}.meta.json").read_text())
    stdout = FIXTURES / f"{harness}-{case}.{'txt' if harness == 'hermes' else 'jsonl'}"
    usage_file = FIXTURES / f"{harness}-{case}.usage.json"
    adapter = adapter_for(harness)
    calls: list[ToolCall] = []
    for line in stdout.read_text().splitlines():
        calls += adapter.feed(line)
    usage = json.loads(usage_file.read_text()) if usage_file.exists() else None
    return calls, adapter.finish(meta["exit_code"], meta["timed_out"], usage, timeout_s=timeout_s)


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_completed_run_gives_both_commands_with_ids_outputs_and_exit_codes(harness):
    calls, outcome = replay(harness, "ok")
    assert [c.turn["args"]["command"] for c in calls] == [PROBE, WRITE]
    assert len({c.call_id for c in calls}) == 2 and all(c.call_id for c in calls)
    failed, passed = (c.turn for c in calls)
    assert failed["tool"] == passed["tool"] == "Bash"  # as the hooks name it, so both sources look alike to the monitor
    assert failed["error"] is True and failed["exit_code"] == 2 and "No such file or directory" in failed["output"]
    assert passed["error"] is False and passed["exit_code"] == 0 and passed["output"].strip() == "hello"
    for call in calls:
        Turn.model_validate(call.turn)  # ready to record
    assert outcome.ok and outcome.reason == "completed"
    assert outcome.session_id and outcome.last_text == "Wrote out.txt."
    assert (outcome.input_tokens, outcome.output_tokens) == (300, 30)
    assert not outcome.rate_limited


def test_claude_ids_are_its_tool_use_ids_and_its_cost_is_reported():
    calls, outcome = replay("claude", "ok")
    assert [c.call_id for c in calls] == ["toolu_0001", "toolu_0003"]
    assert outcome.cost_usd == pytest.approx(0.0018)
    assert outcome.session_id == first_line("claude-ok.jsonl")["session_id"]  # system/init, repeated on every line


def test_codex_ids_are_item_ids_its_thread_is_the_session_and_it_has_no_cost():
    calls, outcome = replay("codex", "ok")
    assert [c.call_id for c in calls] == ["item_3", "item_4"]  # its warning items (type error) are no tool calls
    assert outcome.session_id == first_line("codex-ok.jsonl")["thread_id"] and outcome.session_id
    assert outcome.cost_usd is None


def test_hermes_has_no_stream_and_its_usage_file_decides():
    calls, outcome = replay("hermes", "ok")
    assert calls == []
    assert (
        outcome.ok and outcome.session_id == json.loads((FIXTURES / "hermes-ok.usage.json").read_text())["session_id"]
    )
    assert (outcome.input_tokens, outcome.output_tokens, outcome.cost_usd) == (300, 30, 0.0)
    assert outcome.last_text == "Wrote out.txt."


@pytest.mark.parametrize("harness", ["claude", "codex", "hermes"])
def test_an_api_400_is_a_failed_invocation_whatever_the_exit_code(harness):
    calls, outcome = replay(harness, "http400")
    assert calls == []
    assert not outcome.ok and not outcome.rate_limited
    assert "scripted HTTP 400" in outcome.reason and "\n" not in outcome.reason
    if harness == "hermes":  # exits 0 after the API error: only the usage file tells
        assert json.loads((FIXTURES / "hermes-http400.meta.json").read_text())["exit_code"] == 0
    if harness == "claude":
        assert outcome.reason.startswith("api error 400")


@pytest.mark.parametrize("harness", ["claude", "codex", "hermes"])
def test_an_api_429_is_a_failed_rate_limited_invocation(harness):
    calls, outcome = replay(harness, "http429")
    assert calls == [] and not outcome.ok and outcome.rate_limited, outcome


def test_claude_killed_while_retrying_a_429_is_timed_out_and_rate_limited():
    _, outcome = replay("claude", "http429-killed", timeout_s=12)
    assert not outcome.ok and outcome.rate_limited
    assert outcome.reason.startswith("timed out after 12 s")
    assert outcome.session_id  # from system/init: a later invocation may resume it


def test_a_stream_that_ends_without_its_result_is_a_failure():
    lines = (FIXTURES / "claude-ok.jsonl").read_text().splitlines()[:-1]  # the run died before its result line
    claude = adapter_for("claude")
    for line in lines:
        claude.feed(line)
    outcome = claude.finish(137, False)
    assert not outcome.ok and outcome.reason == "exit 137 with no result"
    codex = adapter_for("codex")
    for line in (FIXTURES / "codex-ok.jsonl").read_text().splitlines()[:-1]:
        codex.feed(line)
    assert codex.finish(0, False).reason == "exit 0 with no turn.completed"


def test_hermes_without_a_usage_file_is_not_taken_as_success():
    hermes = adapter_for("hermes")
    hermes.feed("Wrote out.txt.")
    outcome = hermes.finish(0, False, None)
    assert not outcome.ok and "no usage file" in outcome.reason


@pytest.mark.parametrize(
    "line",
    [
        "",
        "not json",
        "[1, 2]",
        '{"type": "user", "message": 5}',
        "{" * 100000,
        '{"type": "item.completed", "item": ["x"]}',
        "\x00\xff",
        "1e999999",
        '{"type": "assistant", "message": {"content": [{"type": "tool_use", "id": 5}]}}',
    ],
)
@pytest.mark.parametrize("harness", ["claude", "codex", "hermes", "gemini", "opencode"])
def test_malformed_lines_are_skipped_and_never_raise(harness, line):
    adapter = adapter_for(harness)
    assert adapter.feed(line) == []
    assert adapter.finish(None, False, {"completed": "yes"} if harness == "hermes" else None).ok is False


def test_the_loops_own_tools_are_not_forwarded():
    claude = adapter_for("claude")
    use = {
        "type": "assistant",
        "message": {
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_own",
                    "name": "mcp__strict-loop__update_state",
                    "input": {"task": "x"},
                },
                {"type": "tool_use", "id": "toolu_mine", "name": "Read", "input": {"file_path": "a.py"}},
            ]
        },
    }
    result = {
        "type": "user",
        "message": {
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_own", "content": "recorded", "is_error": False},
                {"type": "tool_result", "tool_use_id": "toolu_mine", "content": [{"type": "text", "text": "print(1)"}]},
            ]
        },
    }
    assert claude.feed(json.dumps(use)) == []
    calls = claude.feed(json.dumps(result))
    assert [(c.call_id, c.turn["tool"], c.turn["output"], c.turn["exit_code"]) for c in calls] == [
        ("toolu_mine", "Read", "print(1)", None)
    ]
    codex = adapter_for("codex")
    item = {
        "type": "item.completed",
        "item": {
            "id": "item_9",
            "type": "mcp_tool_call",
            "server": "strict-loop",
            "tool": "check_stop",
            "arguments": {},
            "result": {"content": [{"type": "text", "text": "continue"}]},
            "status": "completed",
        },
    }
    assert codex.feed(json.dumps(item)) == []
    other = dict(
        item,
        item=dict(item["item"], id="item_10", server="docs", tool="search", status="failed", error={"message": "boom"}),
    )
    [call] = codex.feed(json.dumps(other))
    assert (
        call.turn["tool"] == "mcp__docs__search"
        and call.turn["error"] is True
        and call.turn["output"] == "continue\nboom"
    )


def test_codex_file_changes_become_turns_with_their_paths():
    codex = adapter_for("codex")
    item = {
        "type": "item.completed",
        "item": {
            "id": "item_7",
            "type": "file_change",
            "status": "completed",
            "changes": [{"path": "src/a.py", "kind": "update"}, {"path": "b.txt", "kind": "add"}],
        },
    }
    [call] = codex.feed(json.dumps(item))
    assert call.call_id == "item_7" and call.turn["paths"] == ["src/a.py", "b.txt"] and call.turn["error"] is False
    assert Turn.model_validate(call.turn).paths == ["src/a.py", "b.txt"]


def test_sizes_are_bounded_however_large_the_stream():
    claude = adapter_for("claude")
    for n in range(3000):  # tool uses that never get a result
        claude.feed(
            json.dumps(
                {
                    "type": "assistant",
                    "message": {"content": [{"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {}}]},
                }
            )
        )
    assert len(claude.pending) <= 1000
    huge = "x" * 200_000
    claude.feed(
        json.dumps(
            {
                "type": "assistant",
                "message": {
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "big" * 100,
                            "name": "Write",
                            "input": {"file_path": "f", "content": huge},
                        }
                    ]
                },
            }
        )
    )
    [call] = claude.feed(
        json.dumps(
            {
                "type": "user",
                "message": {
                    "content": [{"type": "tool_result", "tool_use_id": "big" * 100, "content": huge, "is_error": True}]
                },
            }
        )
    )
    assert len(call.call_id) <= 200 and len(call.turn["output"]) <= MAX_TURN_TEXT
    assert len(json.dumps(call.turn["args"])) < 20_000
    claude.feed(json.dumps({"type": "result", "is_error": True, "result": huge, "subtype": "error_during_execution"}))
    outcome = claude.finish(1, False)
    assert len(outcome.reason) <= 500 and len(outcome.last_text) <= 4100


def test_an_unknown_harness_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown harness 'goose'"):
        adapter_for("goose")  # type: ignore[arg-type]
