"""The harnesses' hook formats (pure mapping): payload -> turn fields and the loop's answers -> each harness's JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strict_loop.harness import payloads
from strict_loop.model.turns import Turn

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"


def payload(name: str, **changes) -> dict:
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    data.update(changes)
    return data


def event(harness: str, name: str, **changes) -> payloads.HookEvent:
    return payloads.parse_event(harness, payload(name, **changes))


def test_a_command_claude_code_moved_to_the_background_past_its_timeout_says_it_was_cut_off():
    """Claude Code 2.1 moves a foreground command that hits its timeout to the background (its model-facing result:
    "Command did not complete within its 120s timeout and was moved to the background"); its hook's response has
    only ``timedOutAfterMs`` to say so. The turn says it, so the monitor reads a hang, as it does in a transcript."""
    from strict_loop.monitor import outcomes

    response = {"stdout": "Running migrations...", "stderr": "", "interrupted": False, "backgroundTaskId": "b8x2k1q"}
    cut = payloads.turn_fields(
        event("claude", "claude_post_tool_use", tool_response={**response, "timedOutAfterMs": 120000})
    )
    assert cut["output"] == "Command did not complete within its 120s timeout\nRunning migrations..."
    assert outcomes.hung(cut["output"], "alembic upgrade head")
    started = payloads.turn_fields(event("claude", "claude_post_tool_use", tool_response=response))
    # a command run in the background from the start: its task's id as the model is told it (its hook has no text)
    assert started["output"] == "Command running in background with ID: b8x2k1q\nRunning migrations..."
    assert not outcomes.hung(started["output"])


def test_claude_post_tool_use_maps_bash_stdout_and_stderr():
    e = event("claude", "claude_post_tool_use", tool_response={"stdout": "out", "stderr": "warn", "interrupted": False})
    assert e.phase == "post" and e.session_id.startswith("3f1c0a52")
    fields = payloads.turn_fields(e)
    assert fields == {
        "tool": "Bash",
        "args": {"command": "echo hi", "description": "Print hi"},
        "output": "out\nwarn",
        "error": False,
    }
    Turn.model_validate(fields)
    assert e.meta == {
        "harness": "claude",
        "event": "PostToolUse",
        "session_id": e.session_id,
        "tool_use_id": "toolu_01ABCDEF",
        "duration_ms": 31,
    }


def test_the_tools_own_time_is_kept_when_the_harness_reports_a_believable_one():
    assert event("hermes", "hermes_post_tool_call").meta["duration_ms"] == 10  # Hermes: in ``extra``
    for bad in (-1, float("nan"), float("inf"), 10**15, "31", True):
        assert "duration_ms" not in event("claude", "claude_post_tool_use", duration_ms=bad).meta


@pytest.mark.parametrize(
    ("tool", "response", "output"),
    [
        ("Read", {"type": "text", "file": {"filePath": "a.py", "content": "x = 1\n"}}, "x = 1\n"),
        (
            "Edit",
            {"filePath": "a.py", "oldString": "1", "newString": "2", "originalFile": "x = 1\n" * 500},
            "The file a.py has been updated.",
        ),
        (
            "Write",
            {"type": "create", "filePath": "b.py", "content": "y", "structuredPatch": []},
            "The file b.py has been created.",
        ),
        ("Glob", {"filenames": ["a.py", "b.py"], "numFiles": 2, "durationMs": 3}, "a.py\nb.py"),
        ("Grep", {"mode": "content", "content": "a.py:1:x = 1", "numFiles": 1, "numLines": 1}, "a.py:1:x = 1"),
        ("WebFetch", {"code": 200, "result": "ok"}, '{"code":200,"result":"ok"}'),
    ],
)
def test_claude_tool_output_is_what_the_agent_read_never_the_whole_file_an_edit_carries(tool, response, output):
    e = event(
        "claude", "claude_post_tool_use", tool_name=tool, tool_input={"file_path": "a.py"}, tool_response=response
    )
    assert payloads.turn_fields(e)["output"] == output


def test_claude_failure_carries_only_an_error_string():
    fields = payloads.turn_fields(event("claude", "claude_post_tool_use_failure"))
    assert (fields["output"], fields["error"], fields["exit_code"]) == ("Exit code 1", True, 1)
    other = payloads.turn_fields(event("claude", "claude_post_tool_use_failure", error="File does not exist."))
    assert (other["error"], other["exit_code"]) == (True, None)


def test_codex_post_tool_use_has_output_text_and_no_exit_code():
    fields = payloads.turn_fields(event("codex", "codex_post_tool_use"))
    assert fields == {"tool": "Bash", "args": {"command": "echo hi"}, "output": "hi\n"}
    turn = Turn.model_validate(fields)
    assert turn.exit_code is None and turn.error is None


def test_hermes_post_tool_call_reads_the_result_json_string():
    fields = payloads.turn_fields(event("hermes", "hermes_post_tool_call"))
    assert fields == {"tool": "terminal", "args": {"command": "false"}, "output": "", "exit_code": 1, "error": True}
    ok = payloads.turn_fields(
        event("hermes", "hermes_post_tool_call", extra={"result": '{"output": "hi", "exit_code": 0, "error": null}'})
    )
    assert (ok["output"], ok["exit_code"], ok["error"]) == ("hi", 0, False)
    broken_tool = payloads.turn_fields(
        event("hermes", "hermes_post_tool_call", extra={"result": "not json", "status": "error"})
    )
    assert (broken_tool["output"], broken_tool["error"]) == ("not json", True)
    with_error = payloads.turn_fields(
        event(
            "hermes",
            "hermes_post_tool_call",
            extra={"result": '{"output": "", "exit_code": null, "error": "timed out"}'},
        )
    )
    assert (with_error["output"], with_error["error"], with_error["exit_code"]) == ("timed out", True, None)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("mcp__strict-loop__append_event", "append_event"),
        ("mcp__strict_loop__report_status", "report_status"),
        ("mcp__plugin_strict-loop_strict-loop__show_task", "show_task"),
        ("mcp_strict_loop_list_tasks", "list_tasks"),
        ("mcp__other__report_status", None),
        ("Bash", None),
        ("strict-loop", None),
    ],
)
def test_the_loops_own_tools_are_recognised(name, expected):
    assert payloads.own_tool(name) == expected


@pytest.mark.parametrize(
    "command, allowed",
    [
        ("strict-loop show_task --task-id t1", True),
        ("strict-loop list-tasks", True),
        ("strict-loop report_status --workspace /w/x --json", True),
        ("strict-loop check_stop", False),  # it runs the contract's commands: not a read
        ("strict-loop update_state --task x", False),
        ("strict-loop resume --action continue", False),
        ("strict-loop", False),
        ("strict-loop show_task; rm -rf x", False),
        ("strict-loop show_task && touch marker", False),
        ("strict-loop show_task\ntouch marker", False),
        ("strict-loop show_task | sh", False),
        ("strict-loop show_task $(touch marker)", False),
        ("strict-loop show_task `touch marker`", False),
        ("strict-loop show_task > state.json", False),
        ("strict-loop 'show_task'", False),
        ("PATH=/tmp strict-loop show_task", False),
        ("/tmp/evil/strict-loop show_task", False),
        ("echo strict-loop show_task", False),
    ],
)
def test_only_plain_read_commands_pass_while_paused(command, allowed):
    e = event("claude", "claude_pre_tool_use", tool_input={"command": command})
    assert payloads.reads_loop_state(e) is allowed
    assert (
        payloads.reads_loop_state(event("hermes", "hermes_pre_tool_call", tool_input={"command": command})) is allowed
    )


def test_read_checks_for_tools_and_the_own_executable():
    assert payloads.reads_loop_state(
        event("claude", "claude_pre_tool_use", tool_name="mcp__strict-loop__report_status", tool_input={})
    )
    assert not payloads.reads_loop_state(
        event("claude", "claude_pre_tool_use", tool_name="mcp__strict-loop__update_state", tool_input={})
    )
    assert not payloads.reads_loop_state(
        event("claude", "claude_pre_tool_use", tool_name="Write", tool_input={"command": "strict-loop show_task"})
    )
    assert not payloads.reads_loop_state(
        event("codex", "claude_pre_tool_use", tool_input={"command": ["strict-loop", "show_task"]})
    )
    own = event("claude", "claude_pre_tool_use", tool_input={"command": "/opt/venv/bin/strict-loop show_task"})
    assert payloads.reads_loop_state(own, "/opt/venv/bin/strict-loop") and not payloads.reads_loop_state(own, None)


def test_each_harness_gets_its_own_answer_shape():
    post = event("codex", "codex_post_tool_use")
    assert payloads.context_output(post, "w") == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "w"}
    }
    fail = event("claude", "claude_post_tool_use_failure")
    assert payloads.context_output(fail, "w")["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    assert payloads.context_output(event("hermes", "hermes_post_tool_call"), "w") == {"whisper": "w"}
    assert payloads.deny_output(event("claude", "claude_pre_tool_use"), "r") == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "r",
        }
    }
    assert payloads.deny_output(event("hermes", "hermes_pre_tool_call"), "r") == {"decision": "block", "reason": "r"}
    assert payloads.block_stop_output("r") == {"decision": "block", "reason": "r"}
    assert [
        event(h, n).phase
        for h, n in [
            ("claude", "claude_stop"),
            ("codex", "codex_stop"),
            ("hermes", "hermes_pre_verify"),
            ("hermes", "hermes_pre_tool_call"),
        ]
    ] == ["stop", "stop", "stop", "pre"]
    assert payloads.parse_event("claude", {"hook_event_name": "SessionStart"}).phase == "other"


def test_reasons_name_the_resume_command_and_the_next_task():
    reason = payloads.pause_reason(
        "Stuck: x" * 200, "strict-loop resume --workspace '/w s' --task t1 --action continue"
    )
    assert reason.endswith("A person must run: strict-loop resume --workspace '/w s' --task t1 --action continue")
    assert len(reason) < 1000
    assert "Next task: write done.txt" in payloads.continue_reason("t1", "write done.txt", "1 check failing")


def test_big_arguments_are_clipped_to_fit_an_event_line():
    big = "x" * 1_000_000
    args = payloads.turn_fields(
        event("claude", "claude_post_tool_use", tool_name="Write", tool_input={"file_path": "src/a.py", "content": big})
    )["args"]
    assert (
        args["file_path"] == "src/a.py"
        and len(args["content"]) < 2100
        and "[clipped 998048 characters]" in args["content"]
    )
    many = {f"k{i}": "y" * 1500 for i in range(100)}
    clipped = payloads.bounded_args(many)
    assert list(clipped) == ["clipped"] and len(clipped["clipped"]) < payloads.MAX_ARGS_CHARS + 100
    small = {"command": "echo hi"}
    assert payloads.bounded_args(small) is small


def test_our_own_tools_are_matched_exactly_and_are_the_operations_tools():
    from strict_loop.loop.operations import OPERATIONS

    assert {op.name for op in OPERATIONS if op.tool is not None} == payloads.OWN_TOOLS
    assert payloads.own_tool("mcp__strict-loop__report_status") == "report_status"
    assert payloads.own_tool("mcp__plugin_strict-loop_strict-loop__show_task") == "show_task"
    assert payloads.own_tool("mcp_strict_loop_list_tasks") == "list_tasks"
    for forged in (
        "mcp__strict-loop__x__report_status",
        "mcp_strict_loop_fs_read",
        "mcp__strict-loop__rm",
        "mcp__strict-loopy__show_task",
        "mcp__evil__mcp__strict-loop__show_task",
    ):
        assert payloads.own_tool(forged) is None, forged
