"""The real OpenCode (``opencode-ai`` 1.18.33), run headless against a scripted OpenAI-compatible model on loopback.

The loop is installed with ``strict-loop install opencode`` (our plugin in ``.opencode/plugins/``, our MCP server in
``opencode.json``) and only the plugin acts: the scripted model never calls a loop tool. An edit-thrash spiral whispers
(the text is in the model's next request), pauses and is denied; a continue answered through the page's API lets the
session go on; ``--uninstall`` gives back the person's files byte for byte. Then ``strict-loop supervise --harness
opencode`` runs a round to goal_met and stops a spiral with exit 5. Each start of OpenCode costs ~1.6 s of CPU:
three starts in all, OpenCode's folders pre-warmed and shared by both tests (tests/opencode_rig.py says where a start's
time goes).
"""

from __future__ import annotations

import io
import json
import sys
import threading
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli
from harness_rig import RUN_TIMEOUT_S, agent_calls, person_said, session_detail, supervise_detail
from model_servers import Final, Hang, Shell, strings
from opencode_rig import (
    Gate,
    OpenCode,
    OpenCodeModel,
    Tool,
    prewarm,
    provider_config,
    require_opencode,
    shared_folders,
    stream_events,
)
from test_dashboard import client, post

from strict_loop import Workspace
from strict_loop.storage import workspaces
from strict_loop.supervisor.budgets import SupervisorSettings
from strict_loop.supervisor.runner import Supervisor

pytestmark = pytest.mark.slow
TASK = "calc"
PROMPT = "Make the calculator's test pass."
CALC = "def add(a, b):\n    return a - b\n"
TEST = "python3 -B test_calc.py"  # -B: no stale bytecode when two same-size edits of calc.py land in one second
TEST_SOURCE = "from calc import add\nassert add(2, 2) == 4, f'add(2, 2) returned {add(2, 2)}'\nprint('ok')\n"
SAID = "The helper subtracts; I will make it add."
READ = Tool("read", {"filePath": "calc.py"})


def _edit(old: str, new: str, text: str = "") -> Tool:
    return Tool("edit", {"filePath": "calc.py", "oldString": old, "newString": new}, text)


PLUS, MINUS = _edit("return a - b", "return a + b", SAID), _edit("return a + b", "return a - b")


@pytest.fixture(scope="session")
def opencode_folders(tmp_path_factory) -> dict:
    """OpenCode's data, cache and state folders, one set for the session's tests."""
    return shared_folders(tmp_path_factory.mktemp("opencode"))


@pytest.fixture
def opencode(tmp_path: Path, opencode_folders: dict) -> OpenCode:
    home = tmp_path / "home"
    home.mkdir()
    return OpenCode(require_opencode(), home, opencode_folders)


def test_installed_plugin_records_whispers_pauses_denies_a_page_continue_goes_on_and_uninstall_restores(
    opencode: OpenCode, tmp_path: Path, monkeypatch
):
    """Run 1: the agent reads calc.py, then flips add() back and forth with the ``edit`` tool, running the test
    between: a whisper rides back on a tool's output into the model's next request, the monitor pauses the task at the
    9th call (the edits of calc.py are known by their text, so each revert is seen) and the next edit is refused before
    it runs (OpenCode gives the model our reason as the tool's error). While the model's next request waits, a person
    answers continue on the page; then the same session's next edit runs and is recorded. Every call that ran is in
    the ledger with its real payload, and so is what the person typed; then the uninstall leaves the person's files as
    they were. One session: each start costs seconds."""
    work = tmp_path / "w"
    prewarm(work / ".opencode")  # a project OpenCode has run in before: its plugin package in place
    (work / "calc.py").write_text(CALC)
    (work / "test_calc.py").write_text(TEST_SOURCE)
    monkeypatch.setenv("HOME", str(opencode.home))
    opencode.mcp = False  # the model never calls a loop tool: our MCP server would start for nothing
    gate = Gate()
    spiral = [READ, *[PLUS, Shell(TEST), MINUS, Shell(TEST)] * 2, PLUS]
    with OpenCodeModel([*spiral, gate, PLUS, Final("Done.")]) as model:
        (work / "opencode.json").write_text(json.dumps(provider_config(model.url), indent=2) + "\n")
        before = (work / "opencode.json").read_bytes()
        run_cli("install", "opencode", "--workspace", str(work), cwd=work)
        ws = Workspace(work)
        ws.init_state(
            task_id=TASK, goal="Make add() add", global_stop_condition="test_calc.py passes",
            stop_checks={"commands": [TEST]}, next_task="fix add() in calc.py",
        )  # fmt: skip
        done: list = []
        session = threading.Thread(target=lambda: done.append(opencode.run(PROMPT, work)))
        session.start()
        reached = gate.reached.wait(RUN_TIMEOUT_S)
        events = read_jsonl(ws.task_paths(TASK).events)
        requests = list(model.model_requests)
        paused, calc = ws.supervisor(TASK).paused, (work / "calc.py").read_text()
        answered = post(client(), workspaces.workspace_id(work), TASK, {"action": "continue"})
        gate.opened.set()
        session.join(RUN_TIMEOUT_S)
    proc = done[0]
    detail = session_detail(proc, model, events)
    assert reached and paused and calc == CALC, detail  # the 10th call (an edit) was refused: it never ran
    assert answered.status_code == 200, answered.text
    assert person_said(events) == [f'"{PROMPT}"'], (
        detail
    )  # chat.message: what the person typed (`opencode run` quotes it)
    calls = agent_calls(events)
    assert [c["tool"] for c in calls] == ["read", *["edit", "bash"] * 4], detail  # every call that ran
    read, edit, test = calls[:3]
    assert read["args"] == READ.args and "return a - b" in read["output"], detail
    assert edit["args"] == PLUS.args and edit["output"] == "Edit applied successfully.", detail
    assert (test["args"]["command"], test["output"].strip(), test["exit_code"], test["error"]) == (TEST, "ok", 0, False)
    assert [c["exit_code"] for c in calls[2::2]] == [0, 1, 0, 1], detail  # the real outcomes, flipping too
    assert "add(2, 2) returned 0" in calls[4]["output"], detail
    assert [c.get("thought", "") for c in calls[:3]] == ["", SAID, ""], detail  # the words before a call
    assert all(c["hook"]["harness"] == "opencode" and c["hook"]["tool_use_id"] for c in calls), detail

    whispers = [e for e in events if e["kind"] == "spiral.whisper"]
    assert whispers, detail
    asked = [i for i, body in enumerate(requests) if any(whispers[0]["message"] in s for s in strings(body))]
    assert asked and asked[0] == whispers[0]["data"]["turn"], detail  # turn k (the prompt is 0): the request after it
    assert len([e for e in events if e["kind"] == "spiral.paused"]) == 1, detail
    denied = [s for s in strings(requests[-1]) if "PAUSED by the strict-loop progress monitor" in s]
    assert denied and "strict-loop resume" in denied[0], detail  # the refusal's reason reached the model

    later = read_jsonl(ws.task_paths(TASK).events)[len(events) :]
    detail = session_detail(proc, model, later)
    assert [c["tool"] for c in agent_calls(later)] == ["edit"], detail  # after the continue, the same session goes on
    assert "return a + b" in (work / "calc.py").read_text() and proc.returncode == 0, detail
    assert stream_events(proc)[-1]["part"]["reason"] == "stop", detail

    run_cli("install", "opencode", "--workspace", str(work), "--uninstall", cwd=work)
    assert (work / "opencode.json").read_bytes() == before
    assert not (work / ".opencode" / "plugins").exists() and not (work / ".opencode" / "skills").exists()


LOOP = f"{sys.executable} -m strict_loop"
FAST = {"heartbeat_s": 0.5, "backoff_base_s": 0.1, "backoff_max_s": 0.2}
PROBE = "ls /nonexistent-strict-loop-probe"


def _supervisor(oc: OpenCode, work: Path, task_id: str, err: io.StringIO) -> Supervisor:
    settings = SupervisorSettings(**FAST)
    return Supervisor(
        work, task_id, "opencode", settings=settings, harness_bin=str(oc.binary), env=oc.env(), stderr=err,
        kill_grace_s=1.0, mcp=False,
    )  # fmt: skip


def test_supervise_runs_a_round_to_goal_met_and_stops_a_spiral_with_exit_5(opencode: OpenCode, tmp_path: Path):
    """``opencode run`` under the supervisor, our plugin wired in for the run only: a round through the shell reaches
    goal_met, each call recorded once (by the plugin first; the stream's copy of it shares its id), tokens from the
    stream; then identical failing probes are paused by the monitor, the next call refused, the child ended: exit 5."""
    work = tmp_path / "w"
    work.mkdir()
    ws = Workspace(work)
    ws.init_state(
        task_id="steps", goal="Create step1.txt", global_stop_condition="step1.txt exists",
        stop_checks={"paths_exist": ["step1.txt"]}, next_task="Create step1.txt",
    )  # fmt: skip
    update = (
        f"{LOOP} update_state --workspace {work} --task-id steps --task 'Create step1.txt' --result-summary 'written' "
        "--verification-summary 'cat step1.txt shows 1' --progress made --next-task 'none'"
    )
    rounds = [
        Shell(f"{LOOP} append_event --workspace {work} --task-id steps --kind round.started --message 'Round 1'"),
        Shell(f"echo 1 > {work}/step1.txt"),
        Shell(update),
        Final("Round 1 recorded."),
    ]
    err = io.StringIO()
    with OpenCodeModel(rounds) as model:
        (work / "opencode.json").write_text(json.dumps(provider_config(model.url)))
        result = _supervisor(opencode, work, "steps", err).run()
    detail = supervise_detail(work, "steps", err)
    assert (result.exit_code, result.action, result.invocations) == (0, "stop", 1), detail
    events = read_jsonl(ws.task_paths("steps").events)
    runs = [e["data"] for e in events if e["kind"] == "supervisor.invocation"]
    assert runs[0]["ok"] and runs[0]["session_id"].startswith("ses_"), detail
    assert (runs[0]["input_tokens"], runs[0]["output_tokens"]) == (400, 40), detail  # 4 requests, from step_finish
    assert ws.show_task(task_id="steps").last_stop_report.verdict == "goal_met", detail
    calls = [e["data"] for e in events if e["kind"] == "tool_call"]
    assert len(calls) == 3 and all(c["hook"]["event"] == "PostToolUse" for c in calls), detail  # the plugin's, once
    assert not any(c.get("actor") == "person" for c in calls), detail  # the supervisor's prompt is no person's

    ws.init_state(task_id="spiral", goal="Create never.txt", global_stop_condition="never.txt exists",
                  stop_checks={"paths_exist": ["never.txt"]})  # fmt: skip
    # the 6th probe pauses the task; each request after it is held a while, so that the supervisor ends the child
    # (its heartbeat: 0.5 s) before the script runs out
    script = [Shell(PROBE)] * 6 + [Hang(0.3), Shell(PROBE)] * 4 + [Final("Giving up.")]
    err = io.StringIO()
    with OpenCodeModel(script) as model:
        (work / "opencode.json").write_text(json.dumps(provider_config(model.url)))
        result = _supervisor(opencode, work, "spiral", err).run()
        used = model.steps_used
    detail = supervise_detail(work, "spiral", err)
    assert (result.exit_code, result.action, result.invocations) == (5, "pause", 1), detail
    kinds = [e["kind"] for e in read_jsonl(ws.task_paths("spiral").events)]
    assert ws.supervisor("spiral").paused and "spiral.paused" in kinds, detail
    assert kinds.count("tool_call") == 6 and used < len(script) - 1, detail  # ended: the rest never ran
