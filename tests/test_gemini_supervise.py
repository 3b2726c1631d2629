"""`strict-loop supervise --harness gemini` against the real Gemini CLI and a scripted Gemini API on loopback.

The supervisor wires our hooks and MCP server into each run through a per-run copy of the person's ``~/.gemini``
(``GEMINI_CLI_HOME``; the original untouched): the hooks record each call as it runs, the stream gives the session, the
tokens and the verdict. A round reaches goal_met; a spiral is paused by the monitor, the child ended and the run stops
with exit 5.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from conftest import read_jsonl
from gemini_rig import Gemini, GeminiModel, require_gemini
from harness_rig import supervise_detail
from model_servers import Final, Hang, Shell

from strict_loop import Workspace
from strict_loop.supervisor.budgets import SupervisorSettings
from strict_loop.supervisor.runner import Supervisor

pytestmark = pytest.mark.slow
LOOP = f"{sys.executable} -m strict_loop"
FAST = {"heartbeat_s": 0.5, "backoff_base_s": 0.1, "backoff_max_s": 0.2}


def _setup(tmp_path: Path, task_id: str, goal_file: str) -> tuple[Path, Gemini, Workspace]:
    work, home = tmp_path / "w", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    ws = Workspace(work)
    ws.init_state(
        task_id=task_id,
        goal=f"Create {goal_file} one step at a time",
        global_stop_condition=f"{goal_file} exists",
        stop_checks={"paths_exist": [goal_file]},
        next_task="Create step1.txt",
    )
    return work, Gemini(require_gemini(), home), ws


def _supervisor(g: Gemini, work: Path, task_id: str, url: str, err: io.StringIO, **settings) -> Supervisor:
    g.configure(url)
    return Supervisor(
        work,
        task_id,
        "gemini",
        settings=SupervisorSettings(**{**FAST, **settings}),
        harness_bin=str(g.binary),
        env=g.env(url),
        stderr=err,
        kill_grace_s=1.0,
        mcp=False,
    )


def _round(work: Path, task_id: str, k: int) -> list:
    """One scripted round through the shell: announce, edit, record (the two-call protocol), then end the turn."""
    return [
        Shell(f"{LOOP} append_event --workspace {work} --task-id {task_id} --kind round.started --message 'Round {k}'"),
        Shell(f"echo {k} > {work}/step{k}.txt"),
        Shell(
            f"{LOOP} update_state --workspace {work} --task-id {task_id} --task 'Create step{k}.txt' "
            f"--result-summary 'step{k}.txt written' --verification-summary 'cat step{k}.txt shows {k}' --progress "
            f"made --next-task 'Create step{k + 1}.txt'"
        ),
        Final(f"Round {k} recorded."),
    ]


def test_a_round_reaches_goal_met_recorded_by_the_hooks_wired_into_the_run(tmp_path: Path):
    work, g, ws = _setup(tmp_path, "steps", "step1.txt")
    err = io.StringIO()
    with GeminiModel(_round(work, "steps", 1)) as model:
        sup = _supervisor(g, work, "steps", model.url, err)
        before = (g.home / ".gemini" / "settings.json").read_bytes()
        result = sup.run()
    detail = supervise_detail(work, "steps", err)
    assert (result.exit_code, result.action, result.invocations) == (0, "stop", 1), detail
    runs = [e["data"] for e in read_jsonl(ws.task_paths("steps").events) if e["kind"] == "supervisor.invocation"]
    assert runs[0]["ok"] and runs[0]["session_id"], detail
    assert (runs[0]["input_tokens"], runs[0]["output_tokens"]) == (500, 50), detail  # 5 requests (the router's too)
    assert ws.show_task(task_id="steps").last_stop_report.verdict == "goal_met", detail
    calls = [e["data"] for e in read_jsonl(ws.task_paths("steps").events) if e["kind"] == "tool_call"]
    # each call once, by the AfterTool hook wired into the run (none by the stream: it shares no id with the hook), and
    # the supervisor's prompt is no person's
    assert len(calls) == 3 and all(c["hook"]["event"] == "AfterTool" for c in calls), detail
    assert not any(c.get("actor") == "person" for c in calls), detail
    last = (ws.task_paths("steps").supervisor / "invocation-0001.last.txt").read_text()
    assert last.strip() == "Round 1 recorded.", detail
    assert (g.home / ".gemini" / "settings.json").read_bytes() == before, detail  # the person's: untouched
    assert not list(g.home.glob(".gemini/tmp/*/chats/*.jsonl")), detail  # the run's session lived in its copy


PROBE = "ls /nonexistent-strict-loop-probe"


def test_a_spiral_is_paused_the_child_ended_and_the_run_exits_5(tmp_path: Path):
    """Identical failing probes, each after a short wait (a real model takes seconds): the hooks record them, the
    monitor pauses the task at the 6th, the next call is denied and the supervisor ends the child: exit 5. Gemini
    CLI's own guard would have stepped in at the 5th identical call: its loop detection is off here, to show ours."""
    work, g, ws = _setup(tmp_path, "spiral", "never.txt")
    script = [Shell(PROBE)] + [Hang(0.3), Shell(PROBE)] * 9 + [Final("Giving up.")]
    err = io.StringIO()
    with GeminiModel(script) as model:
        sup = _supervisor(g, work, "spiral", model.url, err)
        settings = json.loads((g.home / ".gemini" / "settings.json").read_text())
        settings["model"] = {"disableLoopDetection": True}
        (g.home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        result = sup.run()
        used = model.steps_used
    detail = supervise_detail(work, "spiral", err)
    assert (result.exit_code, result.action, result.invocations) == (5, "pause", 1), detail
    kinds = [e["kind"] for e in read_jsonl(ws.task_paths("spiral").events)]
    assert ws.supervisor("spiral").paused and "spiral.paused" in kinds, detail
    assert kinds.count("tool_call") == 6 and used < len(script) - 1, detail  # ended: the rest never ran
