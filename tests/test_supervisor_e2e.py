"""`strict-loop supervise` against the real Claude Code, Codex and Hermes binaries and a scripted model on loopback.

The supervisor, the harness, its shell, the loop's CLI the model calls and the stop checks are all real;
only the model is scripted (tests/model_servers.py). The cheap scenario runs on all three harnesses; the
costly ones (each needs several harness start-ups) run on Claude Code only, whose stream carries the most
(session, cost, tool results) and which starts fastest here: the supervisor's per-harness code is its
wiring (covered by the three-harness test) and the stream adapter (helper module, unit-tested).
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import read_jsonl
from strict_loop import Workspace
from strict_loop.budgets import SupervisorSettings
from strict_loop.supervisor import Supervisor

from harness_rig import Harness, require_binary
from model_servers import AnthropicModel, ChatModel, Final, Hang, HttpError, ResponsesModel, Shell

pytestmark = pytest.mark.slow
MODELS = {"claude": AnthropicModel, "codex": ResponsesModel, "hermes": ChatModel}
EXTRA = {"hermes": ["-t", "terminal"]}  # the one toolset the script uses; the others only cost start-up time
LOOP = f"{sys.executable} -m strict_loop"
FAST = dict(heartbeat_s=0.5, backoff_base_s=0.1, backoff_max_s=0.2)


def _harness(name: str, tmp_path: Path) -> Harness:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Harness(name, require_binary(name), home)


def _task(work: Path, task_id: str, goal_file: str) -> Workspace:
    ws = Workspace(work)
    ws.init_state(task_id=task_id, goal=f"Create {goal_file} one step at a time", global_stop_condition=f"{goal_file} exists",
                  stop_checks={"paths_exist": [goal_file]}, next_task="Create step1.txt")
    return ws


def _round(work: Path, task_id: str, k: int) -> list:
    """One scripted round through the shell: announce, edit, record (the two-call protocol), then end the turn."""
    loop = LOOP
    return [Shell(f"{loop} append_event --workspace {work} --task-id {task_id} --kind round.started --message 'Round {k}'"),
            Shell(f"echo {k} > {work}/step{k}.txt"),
            Shell(f"{loop} update_state --workspace {work} --task-id {task_id} --task 'Create step{k}.txt' "
                  f"--result-summary 'step{k}.txt written' --verification-summary 'cat step{k}.txt shows {k}' --progress made "
                  f"--next-task 'Create step{k + 1}.txt'"),
            Final(f"Round {k} recorded.")]


def _supervisor(h: Harness, work: Path, task_id: str, url: str, err: io.StringIO, **settings) -> Supervisor:
    h.configure(url)
    return Supervisor(work, task_id, h.name, settings=SupervisorSettings(**{**FAST, **settings}), harness_bin=str(h.binary),
                      extra_args=EXTRA.get(h.name, []), env=h.env(url), stderr=err, kill_grace_s=1.0)


def _detail(work: Path, task_id: str, err: io.StringIO) -> str:
    events = read_jsonl(Workspace(work).task_paths(task_id).events)
    sup = Workspace(work).task_paths(task_id).supervisor
    tails = {p.name: p.read_text(errors="replace")[-1500:] for p in sorted(sup.glob("invocation-*")) if p.suffix in (".txt", ".jsonl")}
    return (f"stderr:\n{err.getvalue()[-3000:]}\nevents: {json.dumps([(e['kind'], e.get('message', '')[:100]) for e in events])}\n"
            f"files: {json.dumps(tails)[-6000:]}")


@pytest.mark.parametrize("name", ["claude", "codex", "hermes"])
def test_three_invocations_reach_goal_met_through_real_edits(name: str, tmp_path: Path):
    work = tmp_path / "w"
    work.mkdir()
    h = _harness(name, tmp_path)
    ws = _task(work, "steps", "step3.txt")
    steps = _round(work, "steps", 1) + _round(work, "steps", 2) + _round(work, "steps", 3)
    err = io.StringIO()
    with MODELS[name](steps) as model:
        result = _supervisor(h, work, "steps", model.url, err, max_invocations=5).run()
    detail = _detail(work, "steps", err)
    assert (result.exit_code, result.action, result.invocations) == (0, "stop", 3), detail
    state = ws.show_task(task_id="steps").state
    assert state.counters.iteration == 3 and (work / "step3.txt").read_text().strip() == "3", detail
    assert ws.show_task(task_id="steps").last_stop_report.verdict == "goal_met", detail
    folder = ws.task_paths("steps").supervisor
    for n in (1, 2, 3):
        assert "steps" in (folder / f"invocation-{n:04d}.prompt.txt").read_text(), detail
        assert (folder / f"invocation-{n:04d}.last.txt").read_text().strip() == f"Round {n} recorded.", detail
    events = read_jsonl(ws.task_paths("steps").events)
    assert [e["data"]["decision"]["action"] for e in events if e["kind"] == "supervisor.invocation"] == ["continue", "continue", "stop"]
    calls = [e for e in events if e["kind"] == "tool_call"]
    if name != "hermes":  # Hermes prints no event stream: its calls reach the ledger through its hooks only (none installed here)
        assert len(calls) == 9 and all(e["data"]["hook"]["source"] == "supervisor" for e in calls), detail
        assert len({e["data"]["hook"]["call_id"] for e in calls}) == 9, detail  # each once
    assert "[supervisor] steps | round 3/100" in (ws.task_paths("steps").latest_status.read_text()), detail
    assert not (folder / "supervisor.lock").exists()
