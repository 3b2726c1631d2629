"""The real Claude Code, Codex and Hermes binaries, run headless against a scripted model on loopback.

The smoke test per harness needs no product code (the scripted model makes the harness run a
command, and its file appears): when it fails, the rig or the harness changed, not the loop. The
loop test installs the loop with ``strict-loop install <harness>`` and lets only the hooks record,
whisper, pause and deny: the scripted model never calls a loop tool.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli
from harness_rig import Harness, require_binary, settle_tasks
from model_servers import AnthropicModel, ChatModel, Final, ResponsesModel, Shell, strings
from person_rig import person_key

from strict_loop import Workspace
from strict_loop.harness import registry
from strict_loop.model.monitoring import MonitorState

pytestmark = pytest.mark.slow
HARNESS_NAMES = ["claude", "codex", "hermes"]
MODELS = {"claude": AnthropicModel, "codex": ResponsesModel, "hermes": ChatModel}


PROMPT = "List the probe folder until it appears, then create the marker."


def _run_detail(proc, model) -> str:
    """What a failed assertion shows: the harness's exit code and output tails, and how far the script got."""
    return (
        f"rc={proc.returncode}\nstdout (tail):\n{proc.stdout[-2500:]}\nstderr (tail):\n{proc.stderr[-2500:]}\n"
        f"steps used: {model.steps_used}; paths asked: {[r['path'] for r in model.requests]}"
    )


def _harness(name: str, tmp_path: Path) -> Harness:
    home = tmp_path / "home"
    home.mkdir()
    return Harness(name, require_binary(name), home)


@pytest.fixture(params=HARNESS_NAMES)
def harness(request, tmp_path: Path) -> Harness:
    return _harness(request.param, tmp_path)


@pytest.fixture(params=["claude", "codex"])
def quick_harness(request, tmp_path: Path) -> Harness:
    """Claude Code and Codex: Hermes (~4 s of CPU per start) is driven through the shell by every test below and by the
    supervisor's tests, which is what this smoke test checks first for the quicker starters."""
    return _harness(request.param, tmp_path)


def test_smoke_scripted_model_drives_the_harness_shell(quick_harness: Harness, tmp_path: Path):
    harness = quick_harness
    work = tmp_path / "w"
    work.mkdir()
    steps = [Shell("touch smoke-marker"), Final("Created the marker.")]
    with MODELS[harness.name](steps) as model:
        proc = harness.run("Create the smoke marker file.", work, model.url)
    detail = _run_detail(proc, model)
    assert (work / "smoke-marker").is_file(), detail
    assert model.steps_used == 2, detail
    assert any("smoke-marker" in text for text in strings(model.model_requests[1])), (
        "the second request carries the tool call"
    )


TASK = "probe"
PROBE = "ls /nonexistent-strict-loop-probe"  # fails the same way every time: "No such file or directory", exit 2
FAILURES = 7  # with the default thresholds the 4th identical failure whispers, the 5th whispers again, the 6th pauses
# (the 7th and the touch after it are refused: two commands denied before they ran)
SAID = "The probe folder is still missing; I keep going in circles, so I will list it once more."
HOOKED_SHELL = {"claude": "Bash", "codex": "Bash", "hermes": "terminal"}  # Codex's exec_command reaches hooks as Bash


@pytest.fixture
def workspace(harness: Harness, tmp_path: Path, monkeypatch) -> Path:
    """A workspace W with the loop installed for ``harness`` (temporary HOME) and one running task."""
    work = tmp_path / "w"
    work.mkdir()
    for name, value in (
        ("HOME", harness.home),
        ("CODEX_HOME", harness.codex_home),
        ("HERMES_HOME", harness.hermes_home),
    ):
        monkeypatch.setenv(name, str(value))
    run_cli("install", harness.name, "--workspace", str(work), cwd=work)  # each harness's default scope
    if harness.name == "codex":  # Codex reads W/.codex only in a trusted project: what a person answers when Codex asks
        harness.trust_project(work)
    # Only Claude's session is checked for the MCP server the install configured: Codex starts it for nothing (~0.6 s of
    # CPU), so it is off there; the hooks under test are the same either way.
    harness.mcp = harness.name == "claude"
    Workspace(work).init_state(
        task_id=TASK,
        goal="Find out why the probe folder is missing",
        global_stop_condition="probe.txt exists",
        stop_checks={"paths_exist": ["probe.txt"]},
    )
    settle_tasks(work)
    return work


def test_hooks_record_whisper_pause_deny_then_resume(harness: Harness, workspace: Path):
    """One session: the probes whisper, pause and are refused; the person resumes while the model is asked for its
    next step, and the agent goes on in the same session, its calls recorded again (one start of each harness)."""
    work, ws = workspace, Workspace(workspace)
    steps = [Shell(PROBE)] * FAILURES + [Shell("touch paused-marker")]
    # Issue 24, after the resume: the agent's own text before a call is the turn's thought in live use, read from the
    # transcript's tail (Claude Code, Codex) or passed on by the plugin (Hermes); a call with no text before it has
    # none (the probes, and the call after the one with text).
    steps2 = [Shell("touch resumed-marker", text=SAID), Shell("echo quiet"), Final("Created the marker.")]
    asked, answered = threading.Event(), threading.Event()

    base: type = MODELS[harness.name]

    class Model(base):
        def take(self, body: dict):
            if self.steps_used == len(steps) and not asked.is_set():  # the request after the last refusal
                asked.set()
                answered.wait(60)  # the person answers meanwhile (below)
            return super().take(body)

    done: list = []
    with Model(steps + steps2) as model:
        session = threading.Thread(target=lambda: done.append(harness.run(PROMPT, work, model.url)))
        session.start()
        while session.is_alive() and not asked.wait(0.05):
            pass
        paused, marker = ws.supervisor(TASK).paused, (work / "paused-marker").exists()
        if asked.is_set():
            key = person_key()
            run_cli(
                "resume", "--workspace", str(work), "--task-id", TASK, "--action", "continue", "--person-key", key,
                cwd=work,
            )  # fmt: skip
        answered.set()
        session.join()
    assert done, "the session did not end (see the captured output)"
    proc = done[0]
    ledger = read_jsonl(ws.task_paths(TASK).events)
    cut = next((i for i, e in enumerate(ledger) if e["kind"] == "spiral.resumed"), len(ledger))
    events, later = ledger[:cut], ledger[cut + 1 :]
    detail = (
        _run_detail(proc, model) + "\nevents: " + json.dumps([(e["kind"], e.get("message", "")[:80]) for e in ledger])
    )
    assert asked.is_set() and cut < len(ledger), detail

    # Every command the harness ran reached the ledger as a turn, though the model never called a loop tool.
    turns = [e for e in events if e["kind"] == "tool_call"]
    said = [e for e in turns if e["data"].get("actor") == "person"]  # what the person typed is a turn of its own
    assert [e["data"]["output"] for e in said] == [PROMPT], detail
    if harness.name == "claude":  # Claude Code read the MCP server the install wrote into .mcp.json and started it
        out = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        init: dict = next((e for e in out if (e.get("type"), e.get("subtype")) == ("system", "init")), {})
        ours = [(m["source"], m["status"]) for m in init.get("mcp_servers", []) if m.get("name") == "strict-loop"]
        # connected, or still connecting on a loaded machine (a -p session does not wait for a project's server)
        assert ours in ([("project", "connected")], [("project", "pending")]), detail
    calls = [e for e in turns if e not in said]
    assert calls and all(PROBE in json.dumps(e["data"]["args"]) for e in calls), detail
    assert {e["data"]["tool"] for e in calls} == {HOOKED_SHELL[harness.name]}, (
        detail
    )  # the tool as the harness's hook names it
    pauses = [e for e in events if e["kind"] == "spiral.paused"]
    assert len(pauses) == 1 and pauses[0]["data"]["turn"] == len(turns) - 1, (
        detail
    )  # the last command that ran paused the task
    assert len(calls) < FAILURES, detail  # the probes after the pause never ran (a command that runs is recorded)

    # The whisper rode back to the model with a tool result: a later request carries its text.
    whispers = [e for e in events if e["kind"] == "spiral.whisper"]
    assert whispers, detail
    first = whispers[0]["message"]
    asked_after = [i for i, body in enumerate(model.model_requests) if any(first in s for s in strings(body))]
    agent_turn = whispers[0]["data"]["turn"] - len(said)  # the person's prompt was turn 0
    assert asked_after and asked_after[0] >= agent_turn + 1, detail

    # Paused: the next commands were denied before they ran, and the model was told why and what the person runs.
    assert paused and not marker and not (work / "paused-marker").exists(), detail
    told = [s for s in strings(model.model_requests[len(steps)]) if "strict-loop resume" in s]
    assert told, detail

    # Resumed: the agent went on in the same session to the final text, and its calls were recorded again.
    assert not ws.supervisor(TASK).paused and model.steps_used == len(steps) + len(steps2), detail
    after = [e["data"] for e in later if e["kind"] == "tool_call" and e["data"].get("actor") != "person"]
    detail2 = detail + "\nturns: " + json.dumps(after)[:3000]
    assert (work / "resumed-marker").is_file(), detail2
    assert ["resumed-marker" in json.dumps(c["args"]) for c in after] == [True, False], detail2
    said = [c.get("thought", "") for c in after]
    if not said[0] and registry.get(harness.name).late_words:  # written after the call's hook: read at the next call
        mon = MonitorState.model_validate_json((work / ".agent-loop" / "tasks" / TASK / "monitor.json").read_bytes())
        said[0] = SAID if {f.i: f.talk for f in mon.window}.get(after[0]["turn"]) else "(lost)"
    assert said == [SAID, ""], detail2
    assert [e["data"].get("thought", "") for e in calls] == [""] * len(calls), detail
