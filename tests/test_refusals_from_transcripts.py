"""A call the person refused at the permission prompt reaches the monitor in Claude Code and Codex too.

Neither fires a post-tool hook for it (the call never ran); only the transcript every hook payload names keeps it.
The next hook (the next call's PostToolUse, or UserPromptSubmit when the person types next) records each refused call
as a turn of its own before its own turn, once. The sessions are the real captured transcripts
(tests/fixtures/hooks/<harness>_transcript.jsonl) followed by a second turn holding refusals in the pinned binaries'
own format (<harness>_refusals.jsonl; see tests/fixtures/hooks/README.md for how those lines were made).
"""

from __future__ import annotations

import copy
import json
import os
import threading
from pathlib import Path

import pytest
from conftest import read_jsonl

from strict_loop import Workspace
from strict_loop.harness import handler, payloads, readers
from strict_loop.loop.recording import record_turns

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
HARNESSES = ("claude", "codex")
CLAUDE_REFUSED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the "
    "new_string was NOT written to the file)."
)
CODEX_REFUSED = 'exec_command failed: CreateProcess { message: "Rejected(\\"rejected by user\\")" }'
EDIT = {"file_path": "WORKSPACE/app.py", "old_string": 'GREETING = "hello"', "new_string": 'GREETING = "hi"'}


def captured(harness: str) -> list[str]:
    return (FIXTURES / f"{harness}_transcript.jsonl").read_text().splitlines(keepends=True)


def refusal_lines(harness: str) -> list[str]:
    return (FIXTURES / f"{harness}_refusals.jsonl").read_text().splitlines(keepends=True)


def session(harness: str) -> list[str]:
    """The captured session, then its second turn: the person refuses calls in it."""
    return captured(harness) + refusal_lines(harness)


def upto(lines: list[str], needle: str) -> list[str]:
    """The transcript as it stood when a hook ran: through the first line holding ``needle``."""
    return lines[: next(i for i, line in enumerate(lines) if needle in line) + 1]


def claude_line(template: int, call_id: str, **block: object) -> str:
    """A line of the Claude fixture's second turn for another call: 2 a tool_use (Edit), 3 the person's refusal with
    their words, 5 a tool_use (Bash), 6 a result of a call that ran."""
    line = copy.deepcopy(json.loads(refusal_lines("claude")[template]))
    first = line["message"]["content"][0]
    first["id" if "id" in first else "tool_use_id"] = call_id
    first.update(block)
    return json.dumps(line) + "\n"


def post(harness: str, call_id: str, tool: str, args: dict, response: object) -> dict:
    """A real PostToolUse payload of the harness (the captured one) for another call."""
    base = json.loads((FIXTURES / f"{harness}_transcript_calls.json").read_text())[0]["payload"]
    return dict(base, tool_use_id=call_id, tool_name=tool, tool_input=args, tool_response=response)


def prompt(harness: str, text: str) -> dict:
    """A real UserPromptSubmit payload of the harness, in the captured session."""
    session_id = post(harness, "", "", {}, "")["session_id"]
    base = json.loads((FIXTURES / f"{harness}_user_prompt_submit.json").read_text())
    return dict(base, prompt=text, session_id=session_id)


def hook(ws: Path, harness: str, payload: dict, lines: list[str], name: str = "t.jsonl", hole: int = 0) -> str:
    """The harness's hook call on a transcript of ``lines``, after a sparse head of ``hole`` bytes (a huge file's
    size without writing it: what a bounded reader never reaches)."""
    path = ws.parent / name
    with open(path, "wb") as fh:
        fh.seek(hole)
        fh.write("".join(lines).replace("WORKSPACE", str(ws)).encode())
    body = json.loads(json.dumps(dict(payload, transcript_path=str(path))).replace("WORKSPACE", str(ws)))
    return handler.handle(harness, json.dumps(body).encode(), workspace=str(ws), env={}, daemon=False)


def turns(ws: Path) -> list[dict]:
    return [e["data"] for e in read_jsonl(ws / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"]


@pytest.fixture
def ws(ws_dir: Path) -> Path:
    Workspace(ws_dir).init_state(task_id="t1", goal="g", global_stop_condition="s")
    return ws_dir


SCENES = {
    "claude": [  # (the transcript through this line, the hook's payload)
        ('"id":"toolu_0105"', post("claude", "toolu_0105", "Bash", {"command": "cat test_app.py"}, {"stdout": "x"})),
        ("[Request interrupted by user for tool use]", prompt("claude", "stop editing app.py")),
        ('"id":"toolu_0109"', post("claude", "toolu_0109", "Bash", {"command": "pytest -q"}, {"stdout": "1 passed"})),
    ],
    "codex": [
        ('"id":"fc_0106"', post("codex", "call_0107", "Bash", {"command": "ls build"}, "app.o\n")),
        ('"id":"fco_call_0109"', prompt("codex", "do not delete anything")),
        ('"id":"fc_0110"', post("codex", "call_0111", "Bash", {"command": "ls"}, "app.py\n")),
    ],
}
EXPECTED = {  # (tool, the call's id, its command or file, what the agent wrote before it) of each turn, in order
    "claude": [
        ("Edit", "toolu_0103", "app.py", "I will shorten the greeting in app.py."),
        ("Bash", "toolu_0105", "cat test_app.py", "Understood, I will read the test first."),
        ("Edit", "toolu_0107", "app.py", ""),
        ("user_prompt", None, None, ""),
        ("Bash", "toolu_0109", "pytest -q", ""),
    ],
    "codex": [
        ("Bash", "call_0104", "rm -rf build", "I will remove the build folder."),
        ("Bash", "call_0107", "ls build", "The removal was declined; I will list the folder instead."),
        ("Bash", "call_0109", "rm -rf build", ""),
        ("user_prompt", None, None, ""),
        ("Bash", "call_0111", "ls", ""),
    ],
}


def _what(turn: dict) -> tuple:
    args = turn["args"]
    target = args.get("command") or (Path(args["file_path"]).name if "file_path" in args else None)
    return turn["tool"], turn.get("hook", {}).get("tool_use_id"), target, turn.get("thought", "")


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_refused_call_is_recorded_once_before_the_next_turn_by_the_next_hook(harness, ws):
    """The next call's PostToolUse records the refusal before its own turn, the person's next message (the usual
    next hook after a refusal in Claude Code, which stops the turn) records the second one before the person's words,
    and the hook after that finds the second one again in the transcript and does not record it twice."""
    lines = session(harness)
    for needle, payload in SCENES[harness]:
        assert hook(ws, harness, payload, upto(lines, needle)) == ""
    got = turns(ws)
    assert [_what(t) for t in got] == EXPECTED[harness]
    refused = [t for t in got if t["hook"].get("source") == "transcript"]
    assert [t["error"] for t in refused] == [True, True]
    assert [t["hook"]["event"] for t in refused] == ["PostToolUse", "UserPromptSubmit"]
    assert {t["hook"]["harness"] for t in refused} == {harness}
    if harness == "claude":
        assert refused[0]["args"] == {k: v.replace("WORKSPACE", str(ws)) for k, v in EDIT.items()}
        assert refused[0]["output"].startswith(CLAUDE_REFUSED)  # with what the person typed
        assert refused[0]["output"].endswith("the user said:\nno, keep hello: the test expects it")
        assert refused[1]["output"].endswith(
            "STOP what you are doing and wait for the user to tell you how to proceed."
        )
    else:
        assert [t["output"] for t in refused] == [CODEX_REFUSED, CODEX_REFUSED]


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_transcript_without_a_refusal_records_nothing_more(harness, ws):
    """Every captured call (each hook run as the file stood at it), then the person's next message: one turn each."""
    calls = json.loads((FIXTURES / f"{harness}_transcript_calls.json").read_text())
    for call in calls:
        hook(ws, harness, call["payload"], captured(harness)[: call["lines"]])
    hook(ws, harness, prompt(harness, "thanks"), captured(harness))
    got = turns(ws)
    assert [t["hook"].get("tool_use_id") for t in got] == [c["payload"]["tool_use_id"] for c in calls] + [None]
    assert not any(t["hook"].get("source") for t in got)


def test_the_hooks_of_two_calls_made_at_once_record_the_refusal_before_them_once(ws):
    """Both hooks find the same refusal in the transcript; the check and the write are under the task lock."""
    sibling = claude_line(5, "toolu_0106", input={"command": "ls"})
    path = ws.parent / "t.jsonl"
    path.write_text("".join([*upto(session("claude"), '"id":"toolu_0105"'), sibling]).replace("WORKSPACE", str(ws)))
    calls = [SCENES["claude"][0][1], post("claude", "toolu_0106", "Bash", {"command": "ls"}, {"stdout": "app.py"})]
    start = threading.Barrier(len(calls))

    def run(payload: dict) -> None:
        body = json.dumps(dict(payload, transcript_path=str(path))).encode()
        start.wait()
        handler.handle("claude", body, workspace=str(ws), env={}, daemon=False)

    threads = [threading.Thread(target=run, args=(payload,)) for payload in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = [t["hook"]["tool_use_id"] for t in turns(ws)]
    assert ids[0] == "toolu_0103" and sorted(ids[1:]) == ["toolu_0105", "toolu_0106"]


def test_recording_once_skips_a_call_already_on_record(ws):
    path = ws.parent / "t.jsonl"
    path.write_text("".join(upto(session("codex"), '"id":"fc_0106"')))
    event = payloads.parse_event("codex", dict(SCENES["codex"][0][1], transcript_path=str(path)))
    refused = payloads.refused_turns(event)
    assert [meta["tool_use_id"] for _, _, meta in refused] == ["call_0104"]
    task = Workspace(ws).task_store("t1")
    assert [len(record_turns(task, ws, refused, once=True)) for _ in range(2)] == [1, 0]


def _counting(monkeypatch) -> list[int]:
    read: list[int] = []
    real = readers.read_tail
    monkeypatch.setattr(readers, "read_tail", lambda p, cap: read.append(cap) or real(p, cap))
    return read


def test_one_read_of_the_tail_serves_the_words_and_the_refusals_of_a_huge_transcript(ws, monkeypatch):
    filler = json.dumps({"type": "attachment", "attachment": {"type": "filler", "text": "y" * 4000}}) + "\n"
    # 50 MB: twice the read window of filler lines at the end, after a hole no bounded read comes near
    lines = [filler] * (2 * readers.MAX_TAIL_BYTES // len(filler)) + upto(session("claude"), '"id":"toolu_0105"')
    read = _counting(monkeypatch)
    hook(ws, "claude", SCENES["claude"][0][1], lines, "big.jsonl", hole=50_000_000)
    assert (ws.parent / "big.jsonl").stat().st_size > 50_000_000
    assert read == [readers.MAX_TAIL_BYTES]  # one window of the end, for both
    assert [_what(t) for t in turns(ws)] == EXPECTED["claude"][:2]


def test_a_refusal_before_the_tail_is_not_looked_for(ws):
    """Bounded: a refused call whose lines lie before the last MAX_TAIL_BYTES is not found (and costs nothing)."""
    head = upto(session("claude"), "the user said")  # the refusal, then 300 KiB of other lines, then the next call
    filler = json.dumps({"type": "attachment", "attachment": {"type": "filler", "text": "y" * 4000}}) + "\n"
    rest = session("claude")[len(head) : len(upto(session("claude"), '"id":"toolu_0105"'))]
    hook(ws, "claude", SCENES["claude"][0][1], head + [filler] * 80 + rest)
    assert [_what(t)[:2] for t in turns(ws)] == [("Bash", "toolu_0105")]


@pytest.mark.parametrize("kind", ["fifo", "missing", "folder", "device link"])
def test_a_fifo_a_missing_file_or_other_non_file_at_the_path_costs_nothing(kind, ws, tmp_path):
    """A FIFO with no writer would block a hook that opened it: it is never opened; the call's turn is recorded."""
    path = tmp_path / "elsewhere" / "t.jsonl"
    path.parent.mkdir()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "device link":
        path.symlink_to("/dev/zero")
    payload = dict(SCENES["claude"][0][1], transcript_path=str(path), cwd=str(ws))
    assert handler.handle("claude", json.dumps(payload).encode(), workspace=str(ws), env={}, daemon=False) == ""
    assert [_what(t)[:2] for t in turns(ws)] == [("Bash", "toolu_0105")]


def test_the_monitor_counts_the_same_call_refused_again_as_the_persons_failed_check(ws):
    """An edit that ran (an attempt), then the person refuses the same edit three times, saying why (the turn goes on:
    the next call's hook finds all three). A first refusal is no report by itself; the same call refused again is one,
    and again a second: two reports after an attempt, and person_reports fires at the third refusal."""
    attempt = dict(EDIT, new_string='GREETING = "hey"')
    lines = captured("claude") + refusal_lines("claude")[:2] + [claude_line(2, "toolu_e1", input=attempt)]
    response = {"filePath": "WORKSPACE/app.py", "oldString": 'GREETING = "hello"', "structuredPatch": []}
    assert hook(ws, "claude", post("claude", "toolu_e1", "Edit", attempt, response), lines) == ""
    lines.append(claude_line(6, "toolu_e1", content="The file WORKSPACE/app.py has been updated."))
    for k in (2, 3, 4):
        lines += [claude_line(2, f"toolu_e{k}"), claude_line(3, f"toolu_e{k}")]
    lines.append(claude_line(5, "toolu_e5"))
    said = hook(
        ws, "claude", post("claude", "toolu_e5", "Bash", {"command": "cat test_app.py"}, {"stdout": "x"}), lines
    )
    got = turns(ws)
    assert [(t["tool"], t["hook"]["tool_use_id"]) for t in got] == [
        ("Edit", "toolu_e1"), ("Edit", "toolu_e2"), ("Edit", "toolu_e3"), ("Edit", "toolu_e4"), ("Bash", "toolu_e5"),
    ]  # fmt: skip
    verdict = Workspace(ws).detect_spiral(task_id="t1")
    assert verdict.fired_at == 3 and "person_reports" in [s.kind for s in verdict.signals]  # at the third refusal
    assert "no, keep hello: the test expects it" in verdict.diagnosis
    assert "[strict-loop monitor]" in json.loads(said)["hookSpecificOutput"]["additionalContext"]  # told at once
