"""Every real turn is accepted: a tool_call's data is clipped (head and tail, with a marker) before validation,
on every path that records turns; other event kinds keep a clear size error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli
from mcp_helpers import call, stdio_client

from strict_loop import LoopError, Workspace
from strict_loop.base.clipping import MAX_TURN_TEXT, clip, clip_turn_data
from strict_loop.harness import handler
from strict_loop.loop.recording import record_turns
from strict_loop.model.turns import Turn

BIG = (
    "".join(f"tests/test_{n % 97}.py::test_case_{n} PASSED\n" for n in range(4100))
    + "FAILED tests/test_x.py::test_y - AssertionError: 3 != 4\n"
)
assert len(BIG) > 160_000


def big_turn(**extra) -> dict:
    return {"tool": "bash", "args": {"command": "pytest -v"}, "output": BIG, "exit_code": 1, **extra}


def start(root: Path) -> Workspace:
    ws = Workspace(root)
    ws.init_state(task_id="t", goal="Make the tests pass", global_stop_condition="pytest passes")
    return ws


def recorded_outputs(root: Path) -> list[str]:
    return [
        e["data"]["output"]
        for e in read_jsonl(root / ".agent-loop" / "tasks" / "t" / "events.jsonl")
        if e["kind"] == "tool_call"
    ]


def assert_clipped(output: str) -> None:
    """Head and tail kept, the cut said in numbers, and the error at the end still there."""
    cut = len(BIG) - (MAX_TURN_TEXT - 48)
    assert (
        output.startswith(BIG[:200]) and output.endswith(BIG[-200:]) and f"...[clipped {cut} characters]..." in output
    )
    assert len(output) <= MAX_TURN_TEXT and clip(output) == output


def test_clip_keeps_head_and_tail_and_says_how_much_was_cut():
    text = "A" * 100 + "B" * 1000 + "C" * 100
    out = clip(text, 248)
    assert (
        out.startswith("A" * 50) and out.endswith("C" * 100) and "[clipped 1000 characters]" in out and len(out) <= 248
    )
    assert clip("short", 200) == "short"


def test_a_recorded_turn_keeps_the_words_of_a_coloured_output_and_none_of_its_terminal_codes():
    """Colours, a window title and a link a tool printed for a terminal are never recorded: not in the ledger (a person
    reading it in a terminal would run them), not in the turn the monitor reads."""
    coloured = "\x1b[1m\x1b[31mError:\x1b[0m boom \x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b[2K"
    data = clip_turn_data({"tool": "Bash", "output": coloured, "thought": "\x1b[32mok\x1b[0m"})
    assert (data["output"], data["thought"]) == ("Error: boom link ", "ok")
    assert Turn(tool="Bash", output=coloured).output == "Error: boom link "


def test_turn_data_that_grows_as_json_still_fits():
    """Control characters become six bytes each as JSON, wide characters four: the clip halves until it fits."""
    for text in ("\x01" * 200_000, "\U0001f600" * 200_000):
        data = clip_turn_data(
            {"tool": "bash", "output": text, "thought": text, "args": {"content": text}, "note": text}
        )
        assert len(json.dumps(data, ensure_ascii=False).encode()) < 64 * 1024


def test_a_160kb_output_is_accepted_in_process_and_by_the_cli(ws_dir):
    ws = start(ws_dir)
    res = ws.append_event(task_id="t", kind="tool_call", message="ran the tests", data=big_turn())
    assert res.kind == "tool_call"
    (ws_dir / "turn.json").write_text(json.dumps(big_turn()))
    run_cli(
        "append_event",
        "--task-id",
        "t",
        "--kind",
        "tool_call",
        "--message",
        "again",
        "--data",
        f"@{ws_dir / 'turn.json'}",
        "--workspace",
        str(ws_dir),
        cwd=ws_dir,
    )
    outputs = recorded_outputs(ws_dir)
    assert len(outputs) == 2
    for output in outputs:
        assert_clipped(output)


def test_other_event_kinds_keep_a_clear_size_error(ws_dir):
    ws = start(ws_dir)
    with pytest.raises(LoopError) as caught:
        ws.append_event(task_id="t", kind="note", message="a big note", data={"blob": BIG})
    assert "append_event.data" in str(caught.value) and "the cap is 65536" in str(caught.value)


def test_hooks_and_record_turns_keep_a_huge_turn(ws_dir):
    start(ws_dir)
    payload = {
        "session_id": "s1",
        "hook_event_name": "PostToolUse",
        "cwd": str(ws_dir),
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -v"},
        "tool_response": {"stdout": BIG, "stderr": "", "interrupted": False},
    }
    handler.handle("claude", json.dumps(payload), env={}, cwd=str(ws_dir))
    ws = Workspace(ws_dir)
    record_turns(ws.index.store("t"), ws.root, [("batch", big_turn(), None)])
    outputs = recorded_outputs(ws_dir)
    assert len(outputs) == 2
    for output in outputs:
        assert_clipped(output)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_160kb_output_is_accepted_over_the_real_mcp_server(ws_dir):
    async with stdio_client(ws_dir) as client:
        err, _, text = await call(
            client, "init_state", task_id="t", goal="Make the tests pass", global_stop_condition="pytest passes"
        )
        assert not err, text
        err, out, text = await call(
            client, "append_event", task_id="t", kind="tool_call", message="ran the tests", data=big_turn()
        )
        assert not err and out["kind"] == "tool_call", text
        err, _, text = await call(
            client, "append_event", task_id="t", kind="note", message="big note", data={"blob": BIG}
        )
        assert err and "append_event.data" in text and "the cap is 65536" in text
    (output,) = recorded_outputs(ws_dir)
    assert_clipped(output)
