"""`strict-loop supervise` against the real Claude Code, Codex and Hermes binaries and a scripted model on loopback.

The supervisor, the harness, its shell, the loop's CLI the model calls and the stop checks are all real;
only the model is scripted (tests/model_servers.py). The goal_met scenario runs on all three harnesses (three
invocations on Codex, fewer on the slower starters); the other scenarios run on one harness each: mostly Claude Code, whose stream carries the most
(session, cost, tool results), except the failure test on Codex (Claude retries an API 400 itself): the supervisor's per-harness code is its
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
FAST = {"heartbeat_s": 0.5, "backoff_base_s": 0.1, "backoff_max_s": 0.2}


def _harness(name: str, tmp_path: Path) -> Harness:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Harness(name, require_binary(name), home)


def _task(work: Path, task_id: str, goal_file: str) -> Workspace:
    ws = Workspace(work)
    ws.init_state(task_id=task_id, goal=f"Create {goal_file} one step at a time", global_stop_condition=f"{goal_file} exists",
                  stop_checks={"paths_exist": [goal_file]}, next_task="Create step1.txt")
    return ws


def _setup(tmp_path: Path, harness: str, task_id: str, goal_file: str) -> tuple[Path, Harness, Workspace]:
    """The workspace folder ``w``, the harness with its temporary HOME, and the task in it."""
    work = tmp_path / "w"
    work.mkdir()
    return work, _harness(harness, tmp_path), _task(work, task_id, goal_file)


def _invocations(ws: Workspace, task_id: str) -> list[dict]:
    """The data of each ``supervisor.invocation`` event, in order."""
    return [e["data"] for e in read_jsonl(ws.task_paths(task_id).events) if e["kind"] == "supervisor.invocation"]


def _round(work: Path, task_id: str, k: int) -> list:
    """One scripted round through the shell: announce, edit, record (the two-call protocol), then end the turn."""
    loop = LOOP
    return [Shell(f"{loop} append_event --workspace {work} --task-id {task_id} --kind round.started --message 'Round {k}'"),
            Shell(f"echo {k} > {work}/step{k}.txt"),
            Shell(f"{loop} update_state --workspace {work} --task-id {task_id} --task 'Create step{k}.txt' "
                  f"--result-summary 'step{k}.txt written' --verification-summary 'cat step{k}.txt shows {k}' --progress made "
                  f"--next-task 'Create step{k + 1}.txt'"),
            Final(f"Round {k} recorded.")]


def _supervisor(h: Harness, work: Path, task_id: str, url: str, err: io.StringIO, mcp: bool = False, **settings) -> Supervisor:
    """A supervisor with fast budgets; without the MCP server unless asked (one server start less per invocation:
    the scripted model uses the CLI; the goal_met test wires it in on every harness)."""
    h.configure(url)
    return Supervisor(work, task_id, h.name, settings=SupervisorSettings(**{**FAST, **settings}), harness_bin=str(h.binary),
                      extra_args=EXTRA.get(h.name, []), env=h.env(url), stderr=err, kill_grace_s=1.0, mcp=mcp)


def _detail(work: Path, task_id: str, err: io.StringIO) -> str:
    events = read_jsonl(Workspace(work).task_paths(task_id).events)
    sup = Workspace(work).task_paths(task_id).supervisor
    tails = {p.name: p.read_text(errors="replace")[-1500:] for p in sorted(sup.glob("invocation-*")) if p.suffix in (".txt", ".jsonl")}
    return (f"stderr:\n{err.getvalue()[-3000:]}\nevents: {json.dumps([(e['kind'], e.get('message', '')[:100]) for e in events])}\n"
            f"files: {json.dumps(tails)[-6000:]}")


INVOCATIONS = {"codex": 3, "claude": 2, "hermes": 1}
"""The full three-invocation run on Codex (the fastest to start); Claude resumes its session once; Hermes (no resume,
the slowest start) runs one: together they stay within the suite's time budget."""


@pytest.mark.parametrize("name", ["claude", "codex", "hermes"])
def test_invocations_reach_goal_met_through_real_edits(name: str, tmp_path: Path):
    n = INVOCATIONS[name]
    work, h, ws = _setup(tmp_path, name, "steps", f"step{n}.txt")
    steps = [step for k in range(1, n + 1) for step in _round(work, "steps", k)]
    err = io.StringIO()
    with MODELS[name](steps) as model:
        result = _supervisor(h, work, "steps", model.url, err, mcp=True, max_invocations=5).run()
    detail = _detail(work, "steps", err)
    assert (result.exit_code, result.action, result.invocations) == (0, "stop", n), detail
    state = ws.show_task(task_id="steps").state
    assert state.counters.iteration == n and (work / f"step{n}.txt").read_text().strip() == str(n), detail
    assert ws.show_task(task_id="steps").last_stop_report.verdict == "goal_met", detail
    folder = ws.task_paths("steps").supervisor
    for k in range(1, n + 1):
        assert "steps" in (folder / f"invocation-{k:04d}.prompt.txt").read_text(), detail
        assert (folder / f"invocation-{k:04d}.last.txt").read_text().strip() == f"Round {k} recorded.", detail
    events = read_jsonl(ws.task_paths("steps").events)
    runs = _invocations(ws, "steps")
    assert [r["decision"]["action"] for r in runs] == ["continue"] * (n - 1) + ["stop"]
    sessions = [r["session_id"] for r in runs]
    if name != "hermes":  # the later invocations resumed the first one's session (hermes -z cannot resume)
        assert sessions[0] and sessions == [sessions[0]] * n, detail
    calls = [e for e in events if e["kind"] == "tool_call"]
    if name != "hermes":  # Hermes prints no event stream: its calls reach the ledger through its hooks only (none installed here)
        assert len(calls) == 3 * n and all(e["data"]["hook"]["source"] == "supervisor" for e in calls), detail
        assert len({e["data"]["hook"]["call_id"] for e in calls}) == 3 * n, detail  # each once
    assert f"[supervisor] steps | round {n}/100" in (ws.task_paths("steps").latest_status.read_text()), detail
    assert not (folder / "supervisor.lock").exists()
    if name == "claude":  # the per-run MCP wiring: Claude reports the server it connected at start
        init = json.loads((folder / "invocation-0001.jsonl").read_text().splitlines()[0])
        assert {"name": "strict-loop", "status": "connected"}.items() <= next(
            (m for m in init["mcp_servers"] if m["name"] == "strict-loop"), {}).items(), detail


def _procs_mentioning(text: str) -> list[str]:
    """Live processes whose command line names ``text`` (a test's own folder): a killed group leaves none."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
            except OSError:
                continue
            if text in cmd and state != "Z":
                found.append(f"{entry.name}: {cmd[:200]}")
    return found


PROBE = "ls /nonexistent-strict-loop-probe"  # fails the same way every time


def test_a_spiralling_run_is_paused_alerts_and_launches_nothing_more(tmp_path: Path):
    """Claude only (costly scenario): the stream's calls reach the monitor, whose pause ends the run with exit 5."""
    work, h, ws = _setup(tmp_path, "claude", "spiral", "never.txt")
    err = io.StringIO()
    # A real model takes seconds per turn; an instant one would let the child run every call before the
    # supervisor (which records the stream's calls in batches, at most 0.2 s late) could end it.
    script = [Shell(PROBE)] + [Hang(0.4), Shell(PROBE)] * 9 + [Final("Giving up.")]
    with AnthropicModel(script) as model:
        sup = _supervisor(h, work, "spiral", model.url, err)
        result = sup.run()
        used = model.steps_used
        again = _supervisor(h, work, "spiral", model.url, err).run()  # a restart launches nothing while paused
        assert model.steps_used == used
    detail = _detail(work, "spiral", err)
    assert (result.exit_code, result.action, result.invocations) == (5, "pause", 1), detail
    assert (again.exit_code, again.invocations) == (5, 0), detail
    kinds = [e["kind"] for e in read_jsonl(ws.task_paths("spiral").events)]
    # the child was ended at the pause (the 6th identical call): the rest of the script never ran
    assert ws.supervisor("spiral").paused and used < len(script) - 1 and kinds.count("tool_call") < 10, detail
    assert "spiral.paused" in kinds and "spiral.alert" in kinds and kinds.count("supervisor.paused") == 2, detail
    assert read_jsonl(ws.task_paths("spiral").alerts), detail
    assert not _procs_mentioning(str(work)), detail


def test_failures_are_counted_backed_off_and_reset_by_success(tmp_path: Path):
    """Codex only (Claude retries a 400 within the run): two API 400s (turn.failed, exit 1), then a round."""
    work, h, ws = _setup(tmp_path, "codex", "flaky", "step1.txt")
    err = io.StringIO()
    with ResponsesModel([HttpError(400), HttpError(400)] + _round(work, "flaky", 1)) as model:
        result = _supervisor(h, work, "flaky", model.url, err, max_consecutive_failures=3).run()
    detail = _detail(work, "flaky", err)
    assert (result.exit_code, result.invocations) == (0, 3), detail
    runs = _invocations(ws, "flaky")
    assert [r["ok"] for r in runs] == [False, False, True], detail
    assert "scripted API error" in runs[0]["reason"], detail
    waits = [r["decision"]["sleep_s"] for r in runs]
    assert waits[0] == pytest.approx(0.1) and waits[1] == pytest.approx(0.2) and runs[2]["decision"]["action"] == "stop", detail


def test_an_invocation_hanging_past_its_wall_clock_is_killed_and_counted(tmp_path: Path):
    """Claude only: the model never answers in time; the whole process group is killed; one failure ends the run (exit 6)."""
    work, h, ws = _setup(tmp_path, "claude", "hang", "never.txt")
    err = io.StringIO()
    with AnthropicModel([Hang(60), Final("too late")]) as model:
        started = time.monotonic()
        result = _supervisor(h, work, "hang", model.url, err, invocation_timeout_s=3, max_consecutive_failures=1).run()
        took = time.monotonic() - started
    detail = _detail(work, "hang", err)
    assert (result.exit_code, result.action, result.invocations) == (6, "fail", 1), detail
    assert took < 20, detail
    runs = _invocations(ws, "hang")
    assert "timed out after 3 s" in runs[0]["reason"], detail
    assert not _procs_mentioning(str(work)), detail


def test_sigint_mid_invocation_kills_the_group_exits_130_and_state_loads(tmp_path: Path):
    """Claude only, through the real CLI process: SIGINT while the model hangs."""
    work, h, ws = _setup(tmp_path, "claude", "intr", "step1.txt")
    folder = ws.task_paths("intr").supervisor
    with AnthropicModel([Hang(60), Final("too late")]) as model:
        h.configure(model.url)
        proc = subprocess.Popen([sys.executable, "-m", "strict_loop", "supervise", "--workspace", str(work), "--task-id", "intr",
                                 "--harness", "claude", "--harness-bin", str(h.binary), "--heartbeat", "1", "--no-mcp"],
                                env=h.env(model.url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while not model.model_requests and time.monotonic() < deadline:  # the harness is waiting on the model
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, err_text = proc.communicate(timeout=20)
    detail = f"stdout: {out}\nstderr: {err_text}"
    assert model.model_requests, detail
    assert proc.returncode == 130, detail
    assert not _procs_mentioning(str(work)), detail
    events = read_jsonl(ws.task_paths("intr").events)
    assert [e["data"]["invocation"] for e in events if e["kind"] == "supervisor.interrupted"] == [1], detail
    assert ws.show_task(task_id="intr").state.counters.iteration == 0 and not (folder / "supervisor.lock").exists()
    again = _supervisor(h, work, "intr", model.url, io.StringIO())  # started again, it continues from disk: invocation 2
    assert again._next_invocation() == 2 and again.lock.acquire("claude", None) is None  # no stale lock was left behind
    again.lock.release()


def test_two_supervisors_on_two_tasks_of_one_workspace_keep_apart(tmp_path: Path):
    """Codex only (the fastest start): two tasks, two supervisors at once (threads of one process), each task's turns in its own ledger."""
    work = tmp_path / "w"
    work.mkdir()
    homes = {t: tmp_path / t for t in ("one", "two")}  # Codex reads its model's URL from its HOME: one each
    for folder in homes.values():
        folder.mkdir()
    ws = _task(work, "one", "step1.txt")
    ws.init_state(task_id="two", goal="Create done2.txt", global_stop_condition="done2.txt exists",
                  stop_checks={"paths_exist": ["done2.txt"]})
    results: dict[str, object] = {}
    second = [Shell(f"{LOOP} append_event --workspace {work} --task-id two --kind round.started --message 'Round 1'"),
              Shell(f"touch {work}/done2.txt"),
              Shell(f"{LOOP} update_state --workspace {work} --task-id two --task 'Create done2.txt' --result-summary done "
                    "--verification-summary 'ls shows done2.txt' --progress made"),
              Final("Round 1 recorded.")]
    errs = {"one": io.StringIO(), "two": io.StringIO()}
    with ResponsesModel(_round(work, "one", 1)) as m1, ResponsesModel(second) as m2:
        sups = {t: _supervisor(_harness("codex", homes[t]), work, t, m.url, errs[t]) for t, m in (("one", m1), ("two", m2))}
        threads = [threading.Thread(target=lambda t=t: results.__setitem__(t, sups[t].run())) for t in sups]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    for task in ("one", "two"):
        detail = _detail(work, task, errs[task])
        assert results[task].exit_code == 0, detail  # type: ignore[attr-defined]
        calls = [e for e in read_jsonl(ws.task_paths(task).events) if e["kind"] == "tool_call"]
        assert len(calls) == 3 and all(f"--task-id {task}" in json.dumps(e["data"]["args"]) or "touch" in json.dumps(e["data"]["args"])
                                       or "echo" in json.dumps(e["data"]["args"]) for e in calls), detail
