"""build_prompt on a real workspace: what an unattended invocation is told, from disk only, and how long it gets."""

from __future__ import annotations

import shlex
from pathlib import Path

from conftest import run_cli

from strict_loop import Workspace
from strict_loop.supervisor.prompt import MAX_PROMPT_CHARS, build_prompt

TASK = "fix-parser"
PROBE = {
    "tool": "Bash",
    "args": {"command": "ls /nonexistent-strict-loop-probe"},
    "output": "No such file or directory",
    "error": True,
    "exit_code": 2,
}


def _task(root: Path) -> Workspace:
    ws = Workspace(root)
    ws.init_state(
        task_id=TASK,
        goal="Make the parser accept trailing commas",
        global_stop_condition="parser.ok exists",
        stop_checks={"paths_exist": ["parser.ok"]},
        next_task="Write a failing test for trailing commas",
    )
    return ws


def _round(ws: Workspace, n: int, **extra) -> None:
    fields = {
        "task_id": TASK,
        "task": f"Round {n} task: step {n} of the parser fix",
        "result_summary": f"result of round {n}",
        "verification_summary": f"pytest -q: {n} passed",
        "next_task": f"Step {n + 1}: handle nested lists",
    }
    ws.update_state(**{**fields, **extra})


def test_the_prompt_holds_the_contract_next_task_rounds_stop_check_and_protocol(ws_dir: Path):
    ws = _task(ws_dir)
    for n in range(1, 4):
        _round(ws, n)
    prompt = build_prompt(ws_dir, TASK)
    assert "Make the parser accept trailing commas" in prompt and "parser.ok exists" in prompt
    assert "Next task: Step 4: handle nested lists" in prompt
    assert all(f"#{n} [made] Round {n} task" in prompt for n in (1, 2, 3))
    assert (
        "Last stop check (round 3): continue" in prompt and "parser.ok" in prompt.split("Last stop check")[1]
    )  # the check that fails
    where = f"--workspace {shlex.quote(str(ws_dir))} --task-id {TASK}"
    assert f"strict-loop append_event {where} --kind round.started" in prompt
    assert f"strict-loop update_state {where} --task" in prompt
    assert "at most 5 round(s)" in prompt  # the contract's max_rounds_per_invocation
    assert "at most 2 round(s)" in build_prompt(ws_dir, TASK, rounds=2)
    assert "PAUSED" not in prompt and "Progress monitor" not in prompt


def test_the_protocol_commands_run_as_printed(ws_dir: Path):
    """The agent copies the commands: with the placeholders filled in they must work from any folder."""
    _task(ws_dir)
    lines = build_prompt(ws_dir, TASK).splitlines()
    announce = (
        next(line for line in lines if "append_event" in line)
        .split(": ", 1)[1]
        .replace("Round N: <the task>", "Round 1: test")
    )
    record = next(line for line in lines if "update_state" in line).split(": ", 1)[1]
    record = record.replace("made|none", "made")
    for placeholder in ("<the task>", "<what changed>", "<the command and what it showed>", "<the next atomic task>"):
        record = record.replace(placeholder, "filled in")
    for command in (announce, record):
        words = shlex.split(command)
        assert words[0] == "strict-loop"
        run = run_cli(*words[1:], cwd=ws_dir.parent)
        assert run.returncode == 0, run.stderr
    assert Workspace(ws_dir).show_task(task_id=TASK).state.counters.iteration == 1


def test_whispers_then_the_pause_and_a_persons_note_reach_the_prompt(ws_dir: Path):
    ws = _task(ws_dir)
    for _ in range(4):
        ws.append_event(task_id=TASK, kind="tool_call", message="probe", data=PROBE)
    whispered = build_prompt(ws_dir, TASK)
    assert "Progress monitor:" in whispered and "PAUSED" not in whispered
    for _ in range(4):
        ws.append_event(task_id=TASK, kind="tool_call", message="probe", data=PROBE)
    assert ws.supervisor(TASK).paused
    paused = build_prompt(ws_dir, TASK)
    assert (
        paused.startswith("You are continuing")
        and "PAUSED by the progress monitor" in paused
        and "end this session now" in paused
    )
    assert "strict-loop resume" in paused  # what the person must run
    ws.resume(task_id=TASK, action="continue", note="Create parser.ok by hand first, the probe folder is gone for good")
    resumed = build_prompt(ws_dir, TASK)
    assert "PAUSED" not in resumed and "A person resumed the task" in resumed
    assert "Create parser.ok by hand first" in resumed
    assert "A person resumed the task" in build_prompt(
        ws_dir, TASK
    )  # building a prompt hands nothing over: still pending


def test_the_prompt_stays_short_however_long_the_history(ws_dir: Path):
    ws = _task(ws_dir)
    long = "x" * 1900
    for n in range(1, 16):
        _round(
            ws,
            n,
            task=f"{n} {long}",
            result_summary=long * 5,
            verification_summary=long,
            next_task=long,
            context_snapshot="c" * 8000,
        )
    for _ in range(8):
        ws.append_event(task_id=TASK, kind="tool_call", message="probe", data=PROBE)
    prompt = build_prompt(ws_dir, TASK)
    assert len(prompt) <= MAX_PROMPT_CHARS
    assert "#15 [made]" in prompt and "#10 [made]" not in prompt  # only the last five rounds
    assert "PAUSED by the progress monitor" in prompt
    assert prompt.rstrip().endswith("or to stop.")  # the protocol is never what gets clipped
