"""The real Gemini CLI (``@google/gemini-cli`` 0.61.0), run headless against a scripted Gemini API on loopback.

The loop is installed with ``strict-loop install gemini`` and only its hooks act: the scripted model never calls a loop
tool. An edit-thrash spiral whispers (the text is in the model's next request), pauses and is denied; a continue
answered with the person key lets it go on, and a healthy loop follows, kept going by the AfterAgent hook until its
stop checks say stop; every call is recorded with its real payload, as are the person's prompts and the agent's words.
One test, two runs: each start of Gemini CLI costs seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli
from gemini_rig import Gemini, GeminiModel, Tool, require_gemini, stream_events
from harness_rig import agent_calls, person_said, session_detail
from model_servers import Final, Shell, strings
from person_rig import person_key

from strict_loop import Workspace

pytestmark = pytest.mark.slow
TASK = "calc"
PROMPT = "Make the calculator's test pass."
CALC = "def add(a, b):\n    return a - b\n"
TEST = "python3 -B test_calc.py"  # -B: no stale bytecode when two same-size edits of calc.py land in one second
TEST_SOURCE = "from calc import add\nassert add(2, 2) == 4, f'add(2, 2) returned {add(2, 2)}'\nprint('ok')\n"
SAID = "The helper subtracts; I will make it add."


def _edit(old: str, new: str, text: str = "") -> Tool:
    return Tool("replace", {"file_path": "calc.py", "old_string": old, "new_string": new, "instruction": "fix"}, text)


PLUS, MINUS = _edit("return a - b", "return a + b", SAID), _edit("return a + b", "return a - b")


@pytest.fixture
def gemini(tmp_path: Path) -> Gemini:
    home = tmp_path / "home"
    home.mkdir()
    return Gemini(require_gemini(), home)


@pytest.fixture
def workspace(gemini: Gemini, tmp_path: Path, monkeypatch) -> Path:
    """W with the loop installed for Gemini CLI (project scope), trusted as a person would, and one running task."""
    work = tmp_path / "w"
    work.mkdir()
    (work / "calc.py").write_text(CALC)
    (work / "test_calc.py").write_text(TEST_SOURCE)
    monkeypatch.setenv("HOME", str(gemini.home))
    run_cli("install", "gemini", "--workspace", str(work), cwd=work)
    gemini.trust(work)
    Workspace(work).init_state(
        task_id=TASK,
        goal="Make add() add",
        global_stop_condition="test_calc.py passes",
        operating_mode="unattended",
        stop_checks={"commands": [TEST]},
        next_task="fix add() in calc.py",
    )
    return work


def test_a_spiral_whispers_pauses_is_denied_then_a_continue_and_after_agent_carry_a_healthy_loop_to_its_goal(
    gemini: Gemini, workspace: Path
):
    """Run 1: the agent flips add() back and forth, running the test between: the 2nd revert whispers (its text rides
    back with that call's result), the 3rd pauses (the monitor's file_oscillation) and the next edit is denied before
    it runs; Gemini CLI's own loop guard sees no repeated call (each is followed by a different one). A person answers
    continue. Run 2, a healthy loop: the model ends its turn too early and AfterAgent (Gemini CLI's Stop) denies it
    while the stop check fails, its reason the model's next prompt; the fix passes and the run ends. Every call that
    ran is in the ledger with its real payload, and so is each prompt the person typed."""
    ws = Workspace(workspace)
    spiral = [PLUS, Shell(TEST), MINUS, Shell(TEST)] * 2
    steps = [*spiral, PLUS, Final("Stopping: the loop is paused.")]
    with GeminiModel(steps) as model:
        proc = gemini.run(PROMPT, workspace, model.url)
    events = read_jsonl(ws.task_paths(TASK).events)
    detail = session_detail(proc, model, events)
    assert person_said(events) == [PROMPT], detail  # BeforeAgent: what the person typed, a turn of its own
    calls = agent_calls(events)
    assert [c["tool"] for c in calls] == ["replace", "run_shell_command"] * 4, detail  # every call that ran
    edit, test = calls[0], calls[1]
    assert edit["args"] == PLUS.args and "Successfully modified file" in edit["output"], detail
    assert (test["args"]["command"], test["output"], test["exit_code"], test["error"]) == (TEST, "ok", 0, False), detail
    assert [c["exit_code"] for c in calls[1::2]] == [0, 1, 0, 1], detail  # the real outcomes, flipping too
    assert "add(2, 2) returned 0" in calls[3]["output"], detail
    assert [c["thought"] for c in calls[:3]] == [SAID, "", ""], detail  # the words before a call, from the transcript
    assert all(c["hook"]["harness"] == "gemini" and c["hook"]["event"] == "AfterTool" for c in calls), detail

    whispers = [e for e in events if e["kind"] == "spiral.whisper"]
    assert whispers, detail
    asked = [
        i for i, body in enumerate(model.model_requests) if any(whispers[0]["message"] in s for s in strings(body))
    ]
    assert asked and asked[0] == whispers[0]["data"]["turn"], detail  # turn k (the prompt is 0): the request after it
    assert len([e for e in events if e["kind"] == "spiral.paused"]) == 1 and ws.supervisor(TASK).paused, detail
    assert (workspace / "calc.py").read_text() == CALC, detail  # the 9th call (an edit) was denied: it never ran
    denied = [s for s in strings(model.model_requests[-1]) if "PAUSED by the strict-loop progress monitor" in s]
    assert denied and "strict-loop resume" in denied[0], detail
    assert model.steps_used == len(steps) and proc.returncode == 0, detail
    assert not [e for e in events if e["kind"] == "stop.checked"], detail  # a paused task's end of turn is not held
    offered = {d["name"] for t in model.model_requests[0]["tools"] for d in t.get("functionDeclarations", [])}
    assert {"mcp_strict-loop_append_event", "mcp_strict-loop_check_stop"} <= offered, detail  # the install's server

    run_cli(
        "resume", "--workspace", str(workspace), "--task-id", TASK, "--action", "continue",
        "--person-key", person_key(), cwd=workspace,
    )  # fmt: skip
    assert not ws.supervisor(TASK).paused
    notes = Tool("write_file", {"file_path": "NOTES.md", "content": "add() fixed\n"})
    healthy = [Tool("read_file", {"file_path": "calc.py"}), Final("I think it is done."), PLUS, notes, Final("Done.")]
    gemini.mcp = False  # run 1 showed the install's MCP server: this run is about the hooks alone
    with GeminiModel(healthy) as model2:
        proc2 = gemini.run("Go on.", workspace, model2.url)
    later = read_jsonl(ws.task_paths(TASK).events)[len(events) :]
    detail = session_detail(proc2, model2, later)
    assert person_said(later) == ["Go on."], detail
    assert [c["tool"] for c in agent_calls(later)] == ["read_file", "replace", "write_file"], detail
    read, _, write = agent_calls(later)
    assert read["args"] == {"file_path": "calc.py"} and read["output"] == CALC.strip(), detail
    assert write["args"]["content"] == "add() fixed\n" and "NOTES.md" in write["output"], detail
    asked = [s for s in strings(model2.model_requests[2]) if "check_stop says continue" in s]
    assert asked and "Next task: fix add() in calc.py" in asked[0], detail  # the denied end's reason: the next prompt
    assert [e["data"]["verdict"] for e in later if e["kind"] == "stop.checked"] == ["continue", "goal_met"], detail
    assert model2.steps_used == len(healthy) and stream_events(proc2)[-1]["status"] == "success", detail
