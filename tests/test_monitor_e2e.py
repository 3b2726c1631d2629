"""Issue 24's "Done when": the monitor's new signals through the real Claude Code and Codex binaries.

A scripted model (tests/model_servers.py) drives the real harness with the loop installed by ``strict-loop install``;
the model never calls a loop tool: only the hooks record, whisper, pause and deny. Each test reads what the hooks
recorded (``events.jsonl``), what the monitor decided (``monitor.json``, ``alerts.jsonl``, ``detect_spiral``) and
what reached the model (the requests the scripted server received).
"""

from __future__ import annotations

import json
import re
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import pytest
from conftest import read_jsonl, run_cli
from harness_rig import Harness
from model_servers import AnthropicModel, Final, ResponsesModel, Shell, strings
from test_harness_e2e import _harness, _run_detail

from strict_loop import Workspace
from strict_loop.model.settings import MonitorSettings
from strict_loop.monitor import outcomes

pytestmark = pytest.mark.slow
TASK = "spiral"
WHISPER = "[strict-loop monitor]"
TOOL_MARK = "\0tool:"
STEPS = ("spiral.whisper", "spiral.paused")


@dataclass(frozen=True)
class Tool:
    """The model calls Claude Code's tool ``name`` (Read, Edit, Write, ...) with ``input``: a step AnthropicTools
    answers with that tool_use block (the shared scripted model speaks only Bash). ``input`` may be computed from the
    request that takes the step (a path the last tool result named)."""

    name: str
    input: Union[dict[str, Any], Callable[[dict], dict[str, Any]]] = field(hash=False)
    text: str = ""

    @property
    def command(self) -> str:
        return TOOL_MARK + json.dumps({"name": self.name, "input": self.input})


class AnthropicTools(AnthropicModel):
    """The Anthropic scripted model, which also plays :class:`Tool` steps."""

    def take(self, body: dict):
        step = super().take(body)
        if isinstance(step, Tool) and callable(step.input):
            return Tool(step.name, step.input(body), step.text)
        return step

    def _block(self, kind: str, value: str) -> tuple[dict, dict]:
        if kind == "call" and value.startswith(TOOL_MARK):
            call = json.loads(value[len(TOOL_MARK) :])
            block = {"type": "tool_use", "id": self.new_id("toolu"), "name": call["name"], "input": {}}
            return block, {"type": "input_json_delta", "partial_json": json.dumps(call["input"])}
        return super()._block(kind, value)


def install(harness: Harness, work: Path, monkeypatch, goal: str) -> Workspace:
    """The loop installed for ``harness`` in ``work`` (temporary HOME), as a person does, and one running task."""
    for name, value in (
        ("HOME", harness.home),
        ("CODEX_HOME", harness.codex_home),
        ("HERMES_HOME", harness.hermes_home),
    ):
        monkeypatch.setenv(name, str(value))
    run_cli("install", harness.name, "--workspace", str(work), cwd=work)
    if harness.name == "codex":
        harness.trust_project(work)
    harness.mcp = False  # only the hooks are under test: the MCP server the install configured is not started
    ws = Workspace(work)
    ws.init_state(task_id=TASK, goal=goal, global_stop_condition="the person says it works")
    return ws


def set_up(
    name: str, tmp_path: Path, monkeypatch, goal: str, files: Union[dict[str, str], None] = None
) -> tuple[Harness, Path, Workspace]:
    """A harness, a work folder holding ``files``, and the loop installed there for one task with ``goal``."""
    harness = _harness(name, tmp_path)
    work = tmp_path / "w"
    work.mkdir()
    for file_name, text in (files or {}).items():
        (work / file_name).write_text(text)
    return harness, work, install(harness, work, monkeypatch, goal)


def ledger(ws: Workspace) -> list[dict]:
    return read_jsonl(ws.task_paths(TASK).events)


def turns_of(events: list[dict]) -> list[dict]:
    """The recorded turns (tool calls and the person's words), in order."""
    return [e["data"] for e in events if e["kind"] == "tool_call"]


def describe(events: list[dict]) -> str:
    """The ledger as a failed assertion shows it: each event's kind and message, each turn's gist."""
    rows = []
    for e in events:
        data = e.get("data") or {}
        if e["kind"] == "tool_call":
            rows.append(
                f"turn {data.get('actor', 'agent')} {data.get('tool')} {json.dumps(data.get('args'))[:100]} -> "
                f"{str(data.get('output', ''))[:120]!r} error={data.get('error')} exit={data.get('exit_code')}"
            )
        else:
            rows.append(f"{e['kind']}: {str(e.get('message', ''))[:300]}")
    return "\n".join(rows)


def received(model, text: str) -> list[int]:
    """The model requests (by index) whose body carries ``text`` anywhere."""
    return [i for i, body in enumerate(model.model_requests) if any(text in s for s in strings(body))]


def spiral_verdict(work: Path) -> dict:
    return json.loads(run_cli("detect_spiral", "--task-id", TASK, "--json", cwd=work).stdout)


# -- 1. Claude Code: the person reports the same bug again after each claimed fix --------------------------------

APP = "export function List({ items }) {\n  return items.map((item) => item.name);\n}\n"
REPORTS = [
    "the page is blank, console says TypeError: Cannot read properties of undefined (reading 'map')",
    "still the same error",
    "nope, still broken: TypeError: Cannot read properties of undefined (reading 'map')",
    "still the same TypeError",
]
FIXES = [
    ("items.map(", "(items || []).map("),
    ("(items || []).map(", "(items ?? []).map("),
    ("(items ?? []).map(", "Array.from(items || []).map("),
]


def _attempt(work: Path, old: str, new: str, k: int) -> list:
    """One claimed fix: read the file, edit it, say it is fixed."""
    path = str(work / "app.js")
    return [
        *([Tool("Read", {"file_path": path})] if k == 1 else []),
        Tool("Edit", {"file_path": path, "old_string": old, "new_string": new}),
        Final(f"Fixed (attempt {k}): the list now copes with undefined items. Reload the page."),
    ]


def test_claude_person_reports_the_same_bug_after_each_fix_whispers_then_pauses(tmp_path: Path, monkeypatch):
    """One headless Claude Code session the person writes to four times (each message once the turn before it ended):
    the first reports the bug, each later one says it still fails after the scripted model edited app.js and claimed
    a fix. The second report after an attempt whispers (the model receives it beside that very prompt), the third
    pauses the task with a diagnosis that quotes the person, and the model's next tool call is refused."""
    harness, work, ws = set_up("claude", tmp_path, monkeypatch, "Fix the blank page", {"app.js": APP})
    steps = [step for k, (old, new) in enumerate(FIXES, 1) for step in _attempt(work, old, new, k)]
    steps += [Shell("touch after-pause"), Final("Stopping: the loop is paused.")]
    asked: list[int] = []  # the index of the first model request after each message
    with AnthropicTools(steps) as model:
        proc = harness.converse(REPORTS, work, model.url, before=lambda _: asked.append(len(model.model_requests)))
    events = ledger(ws)
    detail = _run_detail(proc, model) + "\nledger:\n" + describe(events)
    assert len(asked) == len(REPORTS) and proc.returncode == 0, detail

    # The hooks recorded the person's four messages and the model's calls; the Bash call after the pause never ran.
    turns = turns_of(events)
    assert [t["output"] for t in turns if t.get("actor") == "person"] == REPORTS, detail
    assert [t["tool"] for t in turns if t.get("actor") != "person"] == ["Read", "Edit", "Edit", "Edit"], detail
    assert (work / "app.js").read_text() != APP and not (work / "after-pause").exists(), detail
    person_turns = [i for i, t in enumerate(turns) if t.get("actor") == "person"]

    # The third report (the second after an attempt) whispered; the model got it with that prompt.
    whispers = [e for e in events if e["kind"] == "spiral.whisper"]
    assert [(w["data"]["turn"], w["data"]["signals"][0]["kind"]) for w in whispers] == [
        (person_turns[2], "person_reports")
    ], detail
    told = f"{WHISPER} {whispers[0]['message']}"
    assert received(model, told)[:1] == [asked[2]], detail

    # The fourth report paused the task: monitor.json, one alert whose diagnosis quotes the person.
    paused = [e for e in events if e["kind"] == "spiral.paused"]
    assert [e["data"]["turn"] for e in paused] == [person_turns[3]], detail
    assert json.loads(ws.task_paths(TASK).monitor.read_text())["paused"] is True, detail
    alerts = read_jsonl(ws.task_paths(TASK).alerts)
    assert len(alerts) == 1 and alerts[0]["signals"][0]["kind"] == "person_reports", detail
    for quoted in ("“still the same error”", "“still the same TypeError”", "“nope, still broken: TypeError"):
        assert quoted in alerts[0]["diagnosis"], detail

    # The model was told of the pause with the prompt, and its next call was refused before it ran.
    assert received(model, "PAUSED by the progress monitor")[:1] == [asked[3]], detail
    refused = received(model, "PAUSED by the strict-loop progress monitor")
    assert refused and refused[0] == len(model.model_requests) - 1, detail
    verdict = spiral_verdict(work)
    assert verdict["paused"] and verdict["signals"][0]["kind"] == "person_reports", verdict


# -- 2. Claude Code: kill and restart a server whose port another process holds ----------------------------------

SERVER = """import argparse, os, socket
parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
port = parser.parse_args().port
sock = socket.socket()
sock.bind(("127.0.0.1", port))
sock.listen()
open("myserver.pid", "w").write(str(os.getpid()))
print("serving on", port, flush=True)
sock.accept()
"""
KILLS = [
    "kill $(cat myserver.pid 2>/dev/null) 2>/dev/null",
    "pkill -F myserver.pid 2>/dev/null",
    "kill -9 $(cat myserver.pid 2>/dev/null) 2>/dev/null",
    "pkill -TERM -F myserver.pid 2>/dev/null",
]
"""Kills varied the ways an agent varies them. None kills by name: the pid file is written only once the port is
bound, which never happens here, so nothing else on the machine can be hit."""


def _restart(k: int, port: int) -> str:
    """The k-th kill-and-restart: in the foreground, or in the background and waited for (the crash still shows)."""
    start = f"python3 myserver.py --port {port}"
    return f"{KILLS[k % len(KILLS)]}; " + (f"nohup {start} 2>&1 & wait $!" if k % 3 == 2 else start)


def test_claude_restart_loop_with_an_unchanged_port_conflict_whispers_then_pauses(tmp_path: Path, monkeypatch):
    """The scripted model kills and restarts myserver.py again and again while a socket of the test holds its port:
    each run really fails with "Address already in use". The restarts whisper (the model receives the whisper with
    the next tool result), whisper again, then pause; the restart after the pause is refused before it runs."""
    harness, work, ws = set_up("claude", tmp_path, monkeypatch, "Get the server running", {"myserver.py": SERVER})
    settings = MonitorSettings()
    fire = settings.thresholds.restart_repeats  # the restart that whispers first
    pause = fire + settings.second_whisper_after + settings.pause_after  # the restart that pauses
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        restarts = [_restart(k, port) for k in range(pause + 1)]  # one more: refused
        steps = [Shell(c, text="The server is down; restarting it.") for c in restarts] + [Final("Stopping.")]
        with AnthropicTools(steps) as model:
            proc = harness.run(f"Start the server: python3 myserver.py --port {port}", work, model.url)
    events = ledger(ws)
    detail = _run_detail(proc, model) + "\nledger:\n" + describe(events)

    # Every restart that ran was recorded as a failed command with the port conflict; the last one never ran.
    calls = [t for t in turns_of(events) if t.get("actor") != "person"]
    assert [c["args"]["command"] for c in calls] == restarts[:pause], detail
    assert all(c["error"] and "Address already in use" in c["output"] for c in calls), detail

    # A whisper at the restart that makes the loop, a second one at the next, then the pause (turn 0 is the prompt).
    ladder = [(e["kind"], e["data"]["turn"], e["data"]["signals"][0]["kind"]) for e in events if e["kind"] in STEPS]
    assert ladder == [
        ("spiral.whisper", fire, "restart_loop"),
        ("spiral.whisper", fire + 1, "restart_loop"),
        ("spiral.paused", pause, "restart_loop"),
    ], detail
    whisper = next(e["message"] for e in events if e["kind"] == "spiral.whisper")
    assert "Address already in use" in whisper, detail
    assert received(model, f"{WHISPER} {whisper}")[:1] == [fire], detail  # request k carries the result of call k
    assert json.loads(ws.task_paths(TASK).monitor.read_text())["paused"] is True, detail
    alerts = read_jsonl(ws.task_paths(TASK).alerts)
    assert [a["signals"][0]["kind"] for a in alerts] == ["restart_loop"], detail
    assert "Address already in use" in alerts[0]["diagnosis"], detail

    # The restart after the pause was refused: the model got the refusal instead of a result.
    refused = received(model, "PAUSED by the strict-loop progress monitor")
    assert refused == [len(model.model_requests) - 1], detail
    verdict = spiral_verdict(work)
    assert verdict["paused"] and verdict["signals"][0]["kind"] == "restart_loop", verdict


# -- 2b. Claude Code: the same server started in the background, its task's output read back --------------------

_WRITTEN_TO = re.compile(r"Output is being written to: (\S+\.output)")


def _task_output(body: dict) -> dict[str, Any]:
    """Read's input for the output file Claude Code named for the newest background task in this request."""
    paths = [m.group(1) for text in strings(body) for m in _WRITTEN_TO.finditer(text)]
    return {"file_path": paths[-1] if paths else "/nonexistent.output"}


def test_claude_server_restarted_in_the_background_that_dies_the_same_way_whispers(tmp_path: Path, monkeypatch):
    """Claude Code 2.1 runs a command in the background for the model (``run_in_background``) and names the file its
    output goes to; the model reads that file. The server started that way dies on the port a socket of the test holds,
    each time: after the third start whose output shows the same conflict, the monitor whispers a restart loop. The
    starts are recorded as calls, none of them a failure or a passed check (they only started)."""
    harness, work, ws = set_up("claude", tmp_path, monkeypatch, "Get the server running", {"myserver.py": SERVER})
    fire = MonitorSettings().thresholds.restart_repeats
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        start = {
            "command": f"python3 myserver.py --port {port}",
            "description": "Start the server",
            "run_in_background": True,
        }
        steps: list = []
        for _ in range(fire):
            steps += [Tool("Bash", start, text="Starting the server in the background."), Shell("sleep 1")]
            steps += [Tool("Read", _task_output, text="Checking its output.")]
        with AnthropicTools([*steps, Final("Stopping.")]) as model:
            proc = harness.run(f"Start the server: python3 myserver.py --port {port}", work, model.url)
    events = ledger(ws)
    detail = _run_detail(proc, model) + "\nledger:\n" + describe(events)

    calls = [t for t in turns_of(events) if t.get("actor") != "person"]
    starts = [c for c in calls if c["tool"] == "Bash" and c["args"].get("run_in_background") is True]
    reads = [c for c in calls if c["tool"] == "Read"]
    assert len(starts) == fire and not any(c.get("error") for c in starts), detail
    assert len(reads) == fire and all("Address already in use" in c["output"] for c in reads), detail
    # Claude Code tells the model each task's end in a message of the person's: recorded, never read as the person's
    notices = [t for t in turns_of(events) if t.get("actor") == "person" and "<task-notification>" in t["output"]]
    assert all("/tasks/" in c["args"]["file_path"] for c in reads), detail
    ladder = [(e["kind"], e["data"]["signals"][0]["kind"]) for e in events if e["kind"] in STEPS]
    assert notices and ladder[:1] == [("spiral.whisper", "restart_loop")], detail
    assert not any(kind == "person_reports" for _, kind in ladder), detail
    whisper = next(e["message"] for e in events if e["kind"] == "spiral.whisper")
    assert "Address already in use" in whisper or "port" in whisper, detail


_TASK_ID = re.compile(r"running in background with ID: ([\w-]+)")
HANGING_TEST = "import time\n\n\ndef test_numbering_under_load():\n    time.sleep(120)\n"


def _task_id(body: dict) -> dict[str, Any]:
    """TaskStop's input for the newest background task Claude Code named in this request."""
    ids = [m.group(1) for text in strings(body) for m in _TASK_ID.finditer(text)]
    return {"task_id": ids[-1] if ids else "none"}


def test_claude_a_test_run_in_the_background_stopped_each_time_it_hangs_whispers(tmp_path: Path, monkeypatch):
    """A test that never returns, run in the background with other flags each time: its output file read twice shows
    nothing new, and the model stops the task (``TaskStop``). Each stop cuts a hung check off, as a timeout would: the
    third whispers a hang loop named by the command that hung, not by the stop."""
    harness, work, ws = set_up(
        "claude", tmp_path, monkeypatch, "Make the numbering test pass", {"test_numbering.py": HANGING_TEST}
    )
    fire = MonitorSettings().thresholds.restart_repeats
    flags = ["-q", "-x", "-p no:randomly"][:fire]
    steps: list = []
    for flag in flags:
        run = {"command": f"python3 -m pytest {flag} test_numbering.py", "description": "Run the test"}
        steps += [Tool("Bash", {**run, "run_in_background": True}, text="Running the test in the background.")]
        steps += [Shell("sleep 1"), Tool("Read", _task_output), Shell("sleep 1"), Tool("Read", _task_output)]
        steps += [Tool("TaskStop", _task_id, text="It seems stuck; stopping it.")]
    with AnthropicTools([*steps, Final("Stopping.")]) as model:
        proc = harness.run("Make the numbering test pass", work, model.url)
    events = ledger(ws)
    detail = _run_detail(proc, model) + "\nledger:\n" + describe(events)

    calls = [t for t in turns_of(events) if t.get("actor") != "person"]
    stops = [c for c in calls if c["tool"] == "TaskStop"]
    assert len(stops) == fire and all(c["args"].get("task_id") not in (None, "none") for c in stops), detail
    ladder = [(e["kind"], e["data"]["signals"][0]["kind"]) for e in events if e["kind"] in STEPS]
    assert ladder[:1] == [("spiral.whisper", "restart_loop")], detail
    whisper = next(e["message"] for e in events if e["kind"] == "spiral.whisper")
    assert "hung and was cut off 3 times" in whisper and "pytest" in whisper, detail


def test_claude_a_command_past_its_timeout_is_recorded_as_cut_off(tmp_path: Path, monkeypatch):
    """A command that hits the timeout Claude Code's Bash was given is cut off, and the recorded turn says so (a hang to
    the monitor). Headless, Claude Code 2.1.332 kills it ("Command timed out after 1s", exit 143); in a session it may
    move it to the background instead, which its hook says only by ``timedOutAfterMs`` (tests/test_hookmap.py)."""
    harness, work, ws = set_up("claude", tmp_path, monkeypatch, "Run the migration")
    steps = [Tool("Bash", {"command": "sleep 4; echo migrated", "description": "Run the migration", "timeout": 1000})]
    with AnthropicTools([*steps, Final("Stopping.")]) as model:
        proc = harness.run("Run the migration", work, model.url)
    events = ledger(ws)
    detail = _run_detail(proc, model) + "\nledger:\n" + describe(events)
    calls = [t for t in turns_of(events) if t.get("actor") != "person" and t["tool"] == "Bash"]
    assert calls and calls[0]["error"] and outcomes.hung(calls[0]["output"], calls[0]["args"]["command"]), detail


# -- 3. Codex: edits through the shell between checks that fail the same way -------------------------------------

CALC = "def add(a, b):\n    return a - b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 3) == 4\n"
SHELL_EDITS = [
    "sed -i 's/return a - b/return (a - b)/' calc.py",
    "cat > calc.py <<'EOF'\ndef add(a, b):\n    result = a - b\n    return result\nEOF",
    "python3 -c \"open('calc.py', 'w').write('def add(a, b):\\n    return -(b - a)\\n')\"",
    "printf 'def add(a, b):\\n    return a + -b\\n' > calc.py",
    "sed -i 's/a + -b/a - (b)/' calc.py",
]
"""Five different edits of calc.py through the shell, none of which fixes the sign."""


def test_codex_thrash_through_shell_edits_is_diagnosed_with_the_edits(tmp_path: Path, monkeypatch):
    """Codex edits calc.py only through the shell (sed -i, a heredoc, python -c, printf >) and runs the test after
    each edit; the test fails the same way every time, and Codex's PostToolUse carries no exit code, so the failure
    is read from what pytest printed. The thrash whispers, whispers again and pauses, with a diagnosis that names the
    edits to calc.py and never calls them "the identical action"; the next call is refused."""
    harness, work, ws = set_up(
        "codex", tmp_path, monkeypatch, "Make test_calc pass", {"calc.py": CALC, "test_calc.py": TEST_CALC}
    )
    settings = MonitorSettings()
    fire = max(settings.thresholds.failure_repeats, settings.thresholds.failure_edits + 1)  # the check that whispers
    checks = fire + settings.second_whisper_after + settings.pause_after  # the check that pauses
    check = f"{sys.executable} -m pytest -q -p no:cacheprovider test_calc.py"  # the harness's python3 may lack pytest
    commands = [check]
    for k in range(checks - 1):
        commands += [SHELL_EDITS[k % len(SHELL_EDITS)], check]
    denied = SHELL_EDITS[(checks - 1) % len(SHELL_EDITS)]
    # The checks' pytest loads no plugins of this machine's (hypothesis, xdist, playwright, ...: ~0.4 s of CPU per
    # check); what it prints of the failure is the same.
    quiet = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    with ResponsesModel([Shell(c) for c in [*commands, denied]] + [Final("Stopping.")]) as model:
        proc = harness.run("Make test_calc.py pass.", work, model.url, extra_env=quiet)
    events = ledger(ws)
    detail = _run_detail(proc, model) + "\nledger:\n" + describe(events)

    # Every command that ran was recorded, with no exit code: the checks' failure is in their output only.
    calls = [t for t in turns_of(events) if t.get("actor") != "person"]
    assert [c["args"]["command"] for c in calls] == commands, detail
    runs = [c for c in calls if c["args"]["command"] == check]
    assert all(c.get("exit_code") is None and not c.get("error") and "1 failed" in c["output"] for c in runs), detail

    # Whispers at the check that closes the thrash and the next one, then the pause (check k is turn 2k - 1).
    ladder = [(e["kind"], e["data"]["turn"], e["data"]["signals"][0]["kind"]) for e in events if e["kind"] in STEPS]
    assert ladder == [
        ("spiral.whisper", 2 * fire - 1, "same_failure"),
        ("spiral.whisper", 2 * fire + 1, "same_failure"),
        ("spiral.paused", 2 * checks - 1, "same_failure"),
    ], detail
    whisper = next(e["message"] for e in events if e["kind"] == "spiral.whisper")
    assert received(model, f"{WHISPER} {whisper}")[:1] == [2 * fire - 1], detail
    assert json.loads(ws.task_paths(TASK).monitor.read_text())["paused"] is True, detail

    # The diagnosis names the edits and the failure that did not change, never "the identical action".
    alerts = read_jsonl(ws.task_paths(TASK).alerts)
    assert [a["signals"][0]["kind"] for a in alerts] == ["same_failure"], detail
    said = alerts[0]["diagnosis"]
    assert f"{checks - 1} edit(s) to calc.py" in said and "FAILED test_calc.py::test_add - assert -2 == 4" in said, said
    told = [e["message"] for e in events if e["kind"] in STEPS] + [said]
    assert not any("identical action" in text for text in told), told

    # The edit after the pause was refused before it ran.
    refused = received(model, "PAUSED by the strict-loop progress monitor")
    assert refused == [len(commands) + 1], detail
    verdict = spiral_verdict(work)
    assert verdict["paused"] and verdict["signals"][0]["kind"] == "same_failure", verdict
