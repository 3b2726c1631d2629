"""Issue 24: the agent's own words before a tool call reach the monitor in live use, as the turn's ``thought``.

Claude Code and Codex keep them in the transcript every hook payload names; the readers are tested on real
transcripts and payloads captured from the pinned binaries (tests/capture_transcripts.py): at each call the file
holds what it held when that call's hook ran. Hermes's plugin passes them beside the call.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from capture_transcripts import WORDS
from conftest import read_jsonl
from test_hermes_plugin import load

from strict_loop import Workspace
from strict_loop.base import skillfiles
from strict_loop.harness import handler, payloads, readers, registry
from strict_loop.model.monitoring import MonitorState

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
HARNESSES = ("claude", "codex")


def transcript(harness: str) -> list[str]:
    return (FIXTURES / f"{harness}_transcript.jsonl").read_text().splitlines(keepends=True)


def captured_calls(harness: str) -> list[dict]:
    return json.loads((FIXTURES / f"{harness}_transcript_calls.json").read_text())


def words(harness: str, payload: dict, path: Path) -> str:
    event = payloads.parse_event(harness, dict(payload, transcript_path=str(path)))
    return payloads.agent_words(event)


def write(path: Path, lines: list[str], tail: bytes = b"") -> Path:
    path.write_bytes("".join(lines).encode() + tail)
    return path


CASES = [(h, i) for h in HARNESSES for i in range(len(captured_calls(h)))]


@pytest.mark.parametrize(("harness", "index"), CASES, ids=[f"{h}-{captured_calls(h)[i]['command']}" for h, i in CASES])
def test_a_call_gets_the_text_written_since_the_call_before_it_as_the_file_stood_at_its_hook(harness, index, tmp_path):
    """Text before a call, none, two calls in one response each after its own text, two parallel calls without."""
    call = captured_calls(harness)[index]
    path = write(tmp_path / "t.jsonl", transcript(harness)[: call["lines"]])
    assert words(harness, call["payload"], path) == WORDS[call["command"]]


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_words_are_the_same_once_the_transcript_has_grown_past_the_call(harness, tmp_path):
    path = write(tmp_path / "t.jsonl", transcript(harness))
    assert {c["command"]: words(harness, c["payload"], path) for c in captured_calls(harness)} == WORDS


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_tail_that_starts_mid_line_and_a_torn_last_line_still_give_the_words(harness, tmp_path):
    call = next(c for c in captured_calls(harness) if c["command"] == "echo e")
    lines = transcript(harness)[: call["lines"]]
    filler = json.dumps({"type": "user", "message": {"content": "x" * readers.MAX_TAIL_BYTES}}) + "\n"
    torn = lines[-1].encode()[: len(lines[-1]) // 2]  # a line being appended while the hook reads
    path = write(tmp_path / "t.jsonl", [filler, *lines], tail=torn + b"\x00\xff{garbage")
    assert path.stat().st_size > readers.MAX_TAIL_BYTES  # the window starts inside the filler: that line is cut
    assert words(harness, call["payload"], path) == WORDS["echo e"]


def test_a_50_mb_transcript_is_read_only_at_its_tail(tmp_path, monkeypatch):
    call = next(c for c in captured_calls("claude") if c["command"] == "echo one")
    line = json.dumps({"type": "attachment", "attachment": {"type": "filler", "text": "y" * 4000}}) + "\n"
    path = tmp_path / "big.jsonl"
    with path.open("w") as f:
        f.writelines([line] * (50_000_000 // len(line)))
        f.writelines(transcript("claude")[: call["lines"]])
    read: list[int] = []
    real = readers.read_tail
    monkeypatch.setattr(readers, "read_tail", lambda p, cap: read.append(cap) or _counted(real(p, cap), read))
    assert path.stat().st_size > 50_000_000
    assert words("claude", call["payload"], path) == WORDS["echo one"]
    assert read == [readers.MAX_TAIL_BYTES, readers.MAX_TAIL_BYTES]  # asked for, and got: one window of the end


def _counted(result: tuple[bytes, bool], read: list[int]) -> tuple[bytes, bool]:
    read.append(len(result[0]))
    return result


def test_an_earlier_calls_words_are_read_by_its_id(tmp_path):
    """``agent_words(event, call_id)``: the words before another call of the transcript, as its own hook reads them."""
    path = write(tmp_path / "t.jsonl", transcript("claude"))
    later = next(c for c in captured_calls("claude") if c["command"] == "echo e")["payload"]
    event = payloads.parse_event("claude", dict(later, transcript_path=str(path)))
    assert payloads.agent_words(event, "toolu_0001") == WORDS["echo one"]
    assert payloads.agent_words(event) == WORDS["echo e"]


def test_words_claude_code_writes_down_after_the_calls_hook_count_at_the_sessions_next_call(ws_dir, tmp_path):
    """Claude Code 2.1.332 writes its transcript in batches, 100 ms after a line is queued, so a call faster than that
    reaches its hook before its own line and the words before it (seen through the real binary on an idle machine:
    the words were lost). At the session's next call they are there: the judged turn stays as recorded, and the
    monitor counts what they say of going wrong ("I keep going in circles") from then on."""
    Workspace(ws_dir).init_state(task_id="t1", goal="g", global_stop_condition="s")
    call = next(c for c in captured_calls("claude") if c["command"] == "echo e")
    lines = transcript("claude")[: call["lines"]]
    said = next(i for i, line in enumerate(lines) if "I keep going in circles" in line)
    path = write(tmp_path / "t.jsonl", lines[:said])  # the call's batch not yet written

    def hook(payload: dict) -> None:
        payload = json.loads(json.dumps(payload).replace("WORKSPACE", str(ws_dir)))
        payload["transcript_path"] = str(path)
        assert handler.handle("claude", json.dumps(payload).encode(), workspace=str(ws_dir), env={}, daemon=False) == ""

    def talk() -> dict[int, bool]:
        mon = MonitorState.model_validate_json((ws_dir / ".agent-loop/tasks/t1/monitor.json").read_bytes())
        return {f.i: f.talk for f in mon.window}

    hook(call["payload"])
    assert talk() == {0: False}  # judged without its words: they were not written yet
    write(path, lines)  # the batch comes
    later = dict(call["payload"], tool_use_id="toolu_0099", tool_input={"command": "echo f"})
    hook(later)
    turns = [e["data"] for e in read_jsonl(ws_dir / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"]
    assert [t.get("thought", "") for t in turns] == ["", ""]  # the ledger keeps each turn as it was recorded
    assert talk() == {0: True, 1: False}
    hook(dict(later, tool_use_id="toolu_0100"))  # toolu_0099 has no words in the transcript: nothing changes
    assert talk() == {0: True, 1: False, 2: False}


def test_a_fifo_a_device_link_a_folder_or_a_missing_file_at_the_path_gives_no_words(tmp_path):
    call = captured_calls("claude")[0]
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # opened, a FIFO with no writer would block the hook: it is never opened
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    (tmp_path / "dir.jsonl").mkdir()
    for path in (fifo, link, tmp_path / "dir.jsonl", tmp_path / "missing.jsonl"):
        assert words("claude", call["payload"], path) == "", path


def test_only_an_absolute_jsonl_path_naming_the_call_is_read(tmp_path, monkeypatch):
    call = captured_calls("claude")[0]
    path = write(tmp_path / "t.jsonl", transcript("claude"))
    other = write(tmp_path / "t.txt", transcript("claude"))
    monkeypatch.chdir(tmp_path)
    assert words("claude", call["payload"], path) == WORDS["echo one"]
    assert words("claude", call["payload"], other) == ""  # not a transcript's name
    assert words("claude", call["payload"], Path("t.jsonl")) == ""  # relative
    assert words("claude", dict(call["payload"], tool_use_id="toolu_unknown"), path) == ""  # not in the tail
    assert words("claude", {k: v for k, v in call["payload"].items() if k != "tool_use_id"}, path) == ""
    garbage = write(tmp_path / "g.jsonl", ['{"type": "assistant", "message": [1, 2]}\n', "[[[[\n", "not json\n"])
    assert words("claude", call["payload"], garbage) == ""


def test_a_subagents_lines_and_thinking_are_not_the_agents_words(tmp_path):
    """Claude: a ``thinking`` block is not shown text; a sidechain line is a subagent's."""
    call = next(c for c in captured_calls("claude") if c["command"] == "echo one")
    lines = transcript("claude")[: call["lines"]]
    at = next(i for i, line in enumerate(lines) if '"toolu_0001"' in line and '"tool_use"' in line)
    first = json.loads(lines[at])
    thinking = dict(first, message=dict(first["message"], content=[{"type": "thinking", "thinking": "hmm, private"}]))
    side = dict(first, isSidechain=True, message=dict(first["message"], content=[{"type": "text", "text": "sub"}]))
    lines[at:at] = [json.dumps(thinking) + "\n", json.dumps(side) + "\n"]
    path = write(tmp_path / "t.jsonl", lines)
    assert words("claude", call["payload"], path) == WORDS["echo one"]


def test_codex_reasoning_summaries_are_not_the_agents_words(tmp_path):
    call = next(c for c in captured_calls("codex") if c["command"] == "echo e")
    lines = transcript("codex")[: call["lines"]]
    at = next(i for i, line in enumerate(lines) if '"call_0023"' in line and '"function_call"' in line)
    reasoning = {
        "type": "response_item",
        "payload": {"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking aloud"}]},
    }
    lines.insert(at, json.dumps(reasoning) + "\n")
    assert words("codex", call["payload"], write(tmp_path / "t.jsonl", lines)) == WORDS["echo e"]


def test_a_reader_that_raises_costs_the_words_not_the_turn(monkeypatch):
    monkeypatch.setattr(readers, "claude_words", lambda event: 1 / 0)
    event = payloads.parse_event("claude", captured_calls("claude")[0]["payload"])
    fields = payloads.turn_fields(event)
    assert "thought" not in fields and fields["tool"] == "Bash"


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_hook_records_the_words_as_the_turns_thought_masked(harness, ws_dir, tmp_path):
    Workspace(ws_dir).init_state(task_id="t1", goal="g", global_stop_condition="s")
    call = next(c for c in captured_calls(harness) if c["command"] == "echo e")
    secret = "hunter2-very-secret"
    lines = [line.replace("I keep going in circles", f"I keep going in circles with {secret}") for line in
             transcript(harness)[: call["lines"]]]  # fmt: skip
    path = write(tmp_path / "t.jsonl", lines)
    payload = json.loads(json.dumps(call["payload"]).replace("WORKSPACE", str(ws_dir)))
    payload["transcript_path"] = str(path)
    out = handler.handle(
        harness, json.dumps(payload).encode(), workspace=str(ws_dir), env={"API_TOKEN": secret}, daemon=False
    )
    assert out == ""
    turns = [e for e in read_jsonl(ws_dir / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"]
    assert [t["data"]["thought"] for t in turns] == ["Same error again, I keep going in circles with ***."]
    assert secret not in (ws_dir / ".agent-loop/tasks/t1/events.jsonl").read_text()


def test_every_harness_row_names_a_words_reader_that_exists():
    for row in registry.HARNESSES.values():
        assert callable(registry.resolve(row.words_fn)), row.name


def test_hermes_records_the_words_the_plugin_passed_beside_the_call(ws_dir):
    Workspace(ws_dir).init_state(task_id="t1", goal="g", global_stop_condition="s")
    payload = json.loads((FIXTURES / "hermes_post_tool_call.json").read_text().replace("WORKSPACE", str(ws_dir)))
    payload["extra"]["assistant_text"] = "Checking the probe again."
    handler.handle("hermes", json.dumps(payload).encode(), workspace=str(ws_dir), env={})
    turns = [e for e in read_jsonl(ws_dir / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"]
    assert [t["data"]["thought"] for t in turns] == ["Checking the probe again."]


def test_the_hermes_plugin_gives_a_responses_text_to_its_first_call_only(monkeypatch):
    """Hermes 0.19 fires post_api_request after each model response, before its tools run, with the provider's
    assistant message: its text goes with the first call's post_tool_call (as in Claude's and Codex's transcripts,
    where a text block sits before the call it introduces)."""
    monkeypatch.setattr("sys.dont_write_bytecode", True)
    module, hooks = load(skillfiles.hermes_plugin_dir() / "__init__.py")
    sent: list[dict] = []
    monkeypatch.setattr(
        module, "_ask", lambda event, kwargs, timeout: sent.append(module._payload(event, kwargs)) or {}
    )
    calls = [SimpleNamespace(id="call_1"), {"id": "call_2"}]
    hooks["post_api_request"](assistant_message=SimpleNamespace(content="Two checks at once.", tool_calls=calls))
    hooks["post_api_request"](assistant_message={"content": "No tools here.", "tool_calls": None})
    for call_id in ("call_1", "call_2", "call_1"):
        hooks["post_tool_call"](tool_name="terminal", args={"command": "true"}, result="{}", tool_call_id=call_id)
    hooks["on_session_end"](session_id="s1", completed=True, interrupted=False)  # recordings run in the background
    assert [p["extra"].get("assistant_text") for p in sent] == ["Two checks at once.", None, None]
    assert hooks["post_api_request"](assistant_message=object()) is None  # never raises into Hermes


STREAMS = Path(__file__).parent / "fixtures" / "streams"


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_supervised_runs_stream_gives_each_call_the_words_before_it(harness):
    """Under ``strict-loop supervise`` the calls of a Codex run come from what it prints: the words ride along.
    Codex prints a response's messages before any of its calls starts (item ids, not call ids, in its stream), so
    two calls in one response share their words on the first; Claude prints each block in order, as its transcript."""
    from strict_loop.headless.streams import adapter_for

    adapter = adapter_for(harness)
    calls = [c for line in (STREAMS / f"{harness}-words.jsonl").read_text().splitlines() for c in adapter.feed(line)]
    got = {c.turn["args"]["command"]: c.turn.get("thought", "") for c in calls}
    expected = dict(WORDS)
    if harness == "codex":
        expected.update({"echo a": "Now two at once: a\nand b", "echo b": ""})
    assert got == expected
