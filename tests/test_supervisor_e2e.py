"""`strict-loop supervise` against the real Claude Code, Codex and Hermes binaries and a scripted model on loopback.

The supervisor, the harness, its shell, the loop's CLI the model calls and the stop checks are all real;
only the model is scripted (tests/model_servers.py). The scenarios where the harness has a part run on all three
harnesses: goal_met over several invocations (a resumed session on Claude and Codex) beside a second task of the same
workspace (on Claude, a second supervisor runs it at once), a spiral paused by the monitor (the run's whole process
group ended mid-run, nothing of it left), failed invocations backed off and reset by a success. A hang killed at the
wall clock and SIGINT or SIGTERM through the real CLI end the run with that same ``end_group``: they run on Codex, the
quickest starter (see SUPERVISOR_ONLY). Claude (HTTP hooks into the workspace's endpoint) and Hermes get our hooks per
run (their calls reach the monitor as they run); Codex's calls reach it through its `exec --json` stream.
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
from typing import Any, Optional

import pytest
from conftest import read_jsonl
from harness_rig import Harness, require_binary, supervise_detail
from model_servers import AnthropicModel, ChatModel, Final, Hang, HttpError, ResponsesModel, Shell, Stall, strings

from strict_loop import Workspace, hookd
from strict_loop.harness import daemon
from strict_loop.supervisor.budgets import SupervisorSettings
from strict_loop.supervisor.runner import Supervisor

pytestmark = pytest.mark.slow
MODELS = {"claude": AnthropicModel, "codex": ResponsesModel, "hermes": ChatModel}
HARNESSES = list(MODELS)
EXTRA = {"hermes": ["-t", "terminal"]}  # the one toolset the script uses; the others only cost start-up time
LOOP = f"{sys.executable} -m strict_loop"
FAST = {"heartbeat_s": 0.5, "backoff_base_s": 0.1, "backoff_max_s": 0.2}


def _harness(name: str, tmp_path: Path) -> Harness:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Harness(name, require_binary(name), home)


def _task(work: Path, task_id: str, goal_file: str) -> Workspace:
    ws = Workspace(work)
    ws.init_state(
        task_id=task_id,
        goal=f"Create {goal_file} one step at a time",
        global_stop_condition=f"{goal_file} exists",
        stop_checks={"paths_exist": [goal_file]},
        next_task="Create step1.txt",
    )
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
    return [
        Shell(f"{loop} append_event --workspace {work} --task-id {task_id} --kind round.started --message 'Round {k}'"),
        Shell(f"echo {k} > {work}/step{k}.txt"),
        Shell(
            f"{loop} update_state --workspace {work} --task-id {task_id} --task 'Create step{k}.txt' "
            f"--result-summary 'step{k}.txt written' --verification-summary 'cat step{k}.txt shows {k}' --progress "
            f"made --next-task 'Create step{k + 1}.txt'"
        ),
        Final(f"Round {k} recorded."),
    ]


def _supervisor(
    h: Harness,
    work: Path,
    task_id: str,
    url: str,
    err: io.StringIO,
    mcp: bool = False,
    env: Optional[dict] = None,
    **settings,
) -> Supervisor:
    """A supervisor with fast budgets; without the MCP server unless asked: the scripted model uses the CLI, and a
    server start costs ~1.4 s of CPU per invocation. Claude's spiral run wires it in and checks it connected."""
    h.configure(url)
    return Supervisor(
        work,
        task_id,
        h.name,
        settings=SupervisorSettings(**{**FAST, **settings}),
        harness_bin=str(h.binary),
        extra_args=EXTRA.get(h.name, []),
        env=h.env(url, env),
        stderr=err,
        kill_grace_s=1.0,
        mcp=mcp,
    )


INVOCATIONS = {"codex": 2, "claude": 2, "hermes": 1}
"""Claude and Codex resume the first good invocation's session once (the session id each resumed run reports must be
the stored one: a drifting id fails there already, so a third invocation, ~0.8 s of CPU on Codex, proves nothing more);
Hermes (no resume, the slowest start) runs one: together they stay within the suite's time budget."""
FAILURES = {"codex": 2, "claude": 1, "hermes": 1}
"""Refused runs before the first good one. Two on Codex show the backoff growing and reset; one on the slower starters
shows their own failure read, counted, backed off and reset (the growth is the supervisor's, not the harness's:
also tests/test_budgets.py)."""


def _second_task(work: Path, ws: Workspace) -> list:
    """A second task in the same workspace, done in one round, and its script."""
    ws.init_state(
        task_id="two",
        goal="Create done2.txt",
        global_stop_condition="done2.txt exists",
        stop_checks={"paths_exist": ["done2.txt"]},
    )
    return [
        Shell(f"{LOOP} append_event --workspace {work} --task-id two --kind round.started --message 'Round 1'"),
        Shell(f"touch {work}/done2.txt"),
        Shell(
            f"{LOOP} update_state --workspace {work} --task-id two --task 'Create done2.txt' --result-summary done "
            "--verification-summary 'ls shows done2.txt' --progress made"
        ),
        Final("Round 1 recorded."),
    ]


CONCURRENT = "claude"
"""The harness whose run of task ``steps`` has a second supervisor beside it, running task ``two`` at once: the two
supervisors' concurrency is the supervisor's (one lock, ledger and stream per task, whatever the harness), and
Claude's is the case where it meets the harness's wiring most (both sessions' hooks go to the workspace's HTTP
endpoint, each call to its own task). On Codex and Hermes task ``two`` is registered and idle: their hooks (Hermes)
and stream (Codex) must still put each call under ``steps``, and a second harness start (Hermes's is ~1.5 s of CPU)
would prove nothing more."""


def _run_all(sups: dict[str, Supervisor]) -> dict[str, Any]:
    """Run the supervisors at once (threads of this process) and return each one's result."""
    results: dict[str, Any] = {}
    threads = [threading.Thread(target=lambda t=t: results.__setitem__(t, sups[t].run())) for t in sups]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


REFUSED = {"claude": 500, "codex": 400, "hermes": 400}
NO_RETRY = {"claude": {"CLAUDE_CODE_MAX_RETRIES": "0"}}
"""An API error each harness gives up on at once: Codex and Hermes on a 400; Claude Code retries within the run unless
told not to, and a 400 even then (it was seen to), so it gets a 500 with no retries."""


@pytest.mark.parametrize("name", HARNESSES)
def test_failures_then_invocations_reach_goal_met_beside_a_second_supervisor(name: str, tmp_path: Path):
    """Task ``steps``: the API refuses (each harness's failed run: Claude's is_error result, Codex's turn.failed,
    Hermes's usage file: each failure counted and backed off longer; twice on Codex, once elsewhere), then n rounds
    over n invocations: the first success resets the count, the later ones resume its session, and the checks stop
    the run at goal_met. The workspace has a second running task, ``two``; on Claude (CONCURRENT) a second supervisor
    runs it meanwhile (its own HOME and model): each task's turns stay in its own ledger, and an idle ``two`` gets
    none. One test, so each harness starts as few times as the scenarios need."""
    n, f = INVOCATIONS[name], FAILURES[name]
    work, h, ws = _setup(tmp_path, name, "steps", f"step{n}.txt")
    second = _second_task(work, ws)
    (tmp_path / "second").mkdir()
    steps = [HttpError(REFUSED[name])] * f + [step for k in range(1, n + 1) for step in _round(work, "steps", k)]
    err, err2 = io.StringIO(), io.StringIO()
    with MODELS[name](steps) as model, MODELS[name](second) as model2:
        sups = {
            "steps": _supervisor(
                h,
                work,
                "steps",
                model.url,
                err,
                env=NO_RETRY.get(name),
                max_invocations=n + f + 1,
                max_consecutive_failures=3,
            )
        }
        if name == CONCURRENT:
            sups["two"] = _supervisor(_harness(name, tmp_path / "second"), work, "two", model2.url, err2)
        results = _run_all(sups)
    detail = supervise_detail(work, "steps", err) + supervise_detail(work, "two", err2)
    result = results["steps"]
    two_calls = [
        json.dumps(e["data"]["args"]) for e in read_jsonl(ws.task_paths("two").events) if e["kind"] == "tool_call"
    ]
    if name == CONCURRENT:
        assert results["two"].exit_code == 0, detail
        assert len(two_calls) == 3 and all("--task-id two" in c or "done2.txt" in c for c in two_calls), detail
    else:  # idle: none of the calls of ``steps`` strayed into it
        assert two_calls == [] and not model2.model_requests, detail
    runs = _invocations(ws, "steps")
    assert [r["ok"] for r in runs] == [False] * f + [True] * n, detail
    assert all("scripted API error" in r["reason"] for r in runs[:f]), detail
    waits = [r["decision"]["sleep_s"] for r in runs]
    assert waits[: f + 1] == pytest.approx([0.1, 0.2][:f] + [0]), detail  # longer each time; reset by the success
    assert (result.exit_code, result.action, result.invocations) == (0, "stop", n + f), detail
    state = ws.show_task(task_id="steps").state
    assert state.counters.iteration == n and (work / f"step{n}.txt").read_text().strip() == str(n), detail
    assert ws.show_task(task_id="steps").last_stop_report.verdict == "goal_met", detail
    folder = ws.task_paths("steps").supervisor
    for k in range(1, n + 1):
        assert "steps" in (folder / f"invocation-{k + f:04d}.prompt.txt").read_text(), detail
        assert (folder / f"invocation-{k + f:04d}.last.txt").read_text().strip() == f"Round {k} recorded.", detail
    events = read_jsonl(ws.task_paths("steps").events)
    assert [r["decision"]["action"] for r in runs] == ["continue"] * (n + f - 1) + ["stop"], detail
    sessions = [r["session_id"] for r in runs[f:]]
    if name != "hermes":  # the later invocations resumed the first good one's session (hermes -z cannot resume)
        assert sessions[0] and sessions == [sessions[0]] * n, detail
    calls = [e for e in events if e["kind"] == "tool_call"]
    assert not any(
        "done2.txt" in json.dumps(e["data"]["args"]) or "task-id two" in json.dumps(e["data"]["args"]) for e in calls
    )
    # each call once, recorded by whichever saw it first: our hooks (Claude, Hermes: wired in per run) or the stream
    # (Codex)
    metas = [e["data"]["hook"] for e in calls]
    assert len({m.get("call_id") or m.get("tool_use_id") for m in metas}) == len(calls) == 3 * n, detail
    if name == "codex":  # `codex exec` runs no hook it was not told to trust: the stream is the record
        assert all(m["source"] == "supervisor" for m in metas), detail
    # the hooks wired in per run recorded each call as it ran (the harness's own ids), before the stream showed it
    else:
        assert all(m["event"] in ("PostToolUse", "post_tool_call") and m["tool_use_id"] for m in metas), detail
    assert f"[supervisor] steps | round {n}/100" in (ws.task_paths("steps").latest_status.read_text()), detail
    assert not (folder / "supervisor.lock").exists()


def _procs_mentioning(text: str) -> list[str]:
    """Live processes whose command line names ``text`` (a test's own folder): a killed group leaves none. The hook
    daemons are not the child's: they serve the workspace's hooks across sessions (idle exit; stopped at the test's
    end): ``strict-loop hook``'s and the endpoint of Claude Code's HTTP hooks (``strict_loop.hookd http``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
            except OSError:
                continue
            ours = "strict_loop.harness.daemon" in cmd or "strict_loop.hookd" in cmd
            if text in cmd and state != "Z" and not ours:
                found.append(f"{entry.name}: {cmd[:200]}")
    return found


PROBE = "ls /nonexistent-strict-loop-probe"  # fails the same way every time


def _kills_the_endpoint_once_paused(work: Path, seen: dict, monkeypatch) -> type:
    """Claude's model, which at the first request after the pause SIGKILLs the workspace's HTTP hook endpoint (it served
    the calls so far) and notes a later request that carries the pause's denial; meanwhile the supervisor's own check
    of the pause holds back (15 s at most), so that the agent's next call meets the gate with the endpoint gone."""
    folder, flag = daemon.http_dir(work, os.environ), work / ".agent-loop" / "paused" / "spiral"
    paused = Supervisor._paused
    monkeypatch.setattr(Supervisor, "_paused", lambda sup: paused(sup) and ("denied" in seen or _late(seen)))

    class Model(AnthropicModel):
        def take(self, body: dict) -> Any:
            if flag.exists() and "killed" not in seen:
                seen["served"] = (hookd.ask(folder, {"op": "status"}) or {}).get("served", 0)
                seen["killed"] = pid = hookd.endpoint_pid(folder)
                if pid:
                    os.kill(pid, signal.SIGKILL)
                while pid and not _dead(pid):
                    time.sleep(0.01)
            elif "killed" in seen and any(s.startswith("PreToolUse:Bash hook error") for s in strings(body)):
                seen["denied"] = [s for s in strings(body) if s.startswith("PreToolUse:Bash hook error")]
            return super().take(body)

    return Model


def _dead(pid: int) -> bool:
    """Gone, or a zombie (where nobody reaps it at once, as under a measuring subreaper)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _late(seen: dict) -> bool:
    seen.setdefault("paused_at", time.monotonic())
    return time.monotonic() - seen["paused_at"] > 15


@pytest.mark.parametrize("name", HARNESSES)
def test_a_spiralling_run_is_paused_alerts_and_launches_nothing_more(name: str, tmp_path: Path, monkeypatch):
    """The calls reach the monitor (Claude, Hermes: the per-run hooks; Codex: its stream), whose pause ends the child
    at once and the run with exit 5; started again, the supervisor launches nothing while the task stays paused.
    Claude's hooks are HTTP hooks into the workspace's endpoint: it is killed once the task is paused, and the next
    call of the run is still denied (the gate runs the full hook)."""
    work, h, ws = _setup(tmp_path, name, "spiral", "never.txt")
    err, seen = io.StringIO(), {}
    # A real model takes seconds per turn; an instant one would let the child run every call before the
    # supervisor (which records the stream's calls in batches, at most 0.2 s late) could end it.
    script = [Shell(PROBE)] + [Hang(0.4), Shell(PROBE)] * 9 + [Final("Giving up.")]
    model_type = _kills_the_endpoint_once_paused(work, seen, monkeypatch) if name == "claude" else MODELS[name]
    with model_type(script) as model:
        result = _supervisor(h, work, "spiral", model.url, err, mcp=name == "claude").run()
        model.settle()  # the request the ended child left held (a Hang step) takes its step now, not during `again`
        used = model.steps_used
        again = _supervisor(h, work, "spiral", model.url, err).run()  # a restart launches nothing while paused
        assert model.steps_used == used
    detail = supervise_detail(work, "spiral", err)
    assert (result.exit_code, result.action, result.invocations) == (5, "pause", 1), detail
    assert (again.exit_code, again.invocations) == (5, 0), detail
    kinds = [e["kind"] for e in read_jsonl(ws.task_paths("spiral").events)]
    # the child was ended at the pause (the 6th identical call): the rest of the script never ran
    assert ws.supervisor("spiral").paused and used < len(script) - 1 and kinds.count("tool_call") < 10, detail
    assert "spiral.paused" in kinds and "spiral.alert" in kinds and kinds.count("supervisor.paused") == 2, detail
    assert read_jsonl(ws.task_paths("spiral").alerts), detail
    assert not _procs_mentioning(str(work)), detail
    if name == "hermes":  # ended at the pause, Hermes leaves its shell snapshot: in the test's folder, not /dev/shm
        assert list(h.tmp.glob("hermes-snap-*.sh")), detail
    if name == "claude":  # over HTTP until the endpoint was killed; then the gate's full hook denied the next call
        assert seen["served"] >= 6 and seen["killed"] and "strict-loop resume" in seen["denied"][0], detail
        whisper = next(
            e["message"] for e in read_jsonl(ws.task_paths("spiral").events) if e["kind"] == "spiral.whisper"
        )
        assert any(whisper in s for body in model.model_requests for s in strings(body)), detail  # said over HTTP
        # the per-run MCP wiring: Claude reports the server it connected at start
        lines = (ws.task_paths("spiral").supervisor / "invocation-0001.jsonl").read_text().splitlines()
        init = next(e for e in map(json.loads, lines) if e.get("subtype") == "init")  # after the SessionStart hook's
        assert {"name": "strict-loop", "status": "connected"}.items() <= next(
            (m for m in init["mcp_servers"] if m["name"] == "strict-loop"), {}
        ).items(), detail


SUPERVISOR_ONLY = "codex"
"""The harness of the scenarios that are the supervisor's alone: the wall clock and a signal end the child with the same
``end_group`` (SIGTERM to its whole process group, then SIGKILL) as the pause does, which the spiral test checks on
every harness, mid-run, down to the last process of the group; what differs (the reason recorded, the exit code, the
state and lock left behind) is the supervisor's. On Claude and Hermes these runs cost ~5 s of CPU and ~14 s of waiting
and proved nothing more (the harness may even be still starting when the wall clock strikes, see below)."""
WALL_CLOCK = {SUPERVISOR_ONLY: 2}
"""Seconds an invocation may take: past the harness's usual start-up, so the model hangs."""


@pytest.mark.parametrize("name", list(WALL_CLOCK))
def test_an_invocation_hanging_past_its_wall_clock_is_killed_and_counted(name: str, tmp_path: Path):
    """The model never answers in time; the whole process group is killed; one failure ends the run (exit 6)."""
    work, h, ws = _setup(tmp_path, name, "hang", "never.txt")
    err = io.StringIO()
    with MODELS[name]([Stall(WALL_CLOCK[name] + 30)]) as model:
        result = _supervisor(
            h, work, "hang", model.url, err, invocation_timeout_s=WALL_CLOCK[name], max_consecutive_failures=1
        ).run()
    detail = supervise_detail(work, "hang", err)
    # (on a quiet machine the harness is waiting on the model by then; under heavy load it may still be starting:
    # either way the invocation outlived its wall clock, and that is what is under test)
    assert (result.exit_code, result.action, result.invocations) == (6, "fail", 1), detail
    assert f"timed out after {WALL_CLOCK[name]} s" in _invocations(ws, "hang")[0]["reason"], detail
    assert not _procs_mentioning(str(work)), detail


@pytest.mark.parametrize(("name", "sig"), [(SUPERVISOR_ONLY, signal.SIGINT), (SUPERVISOR_ONLY, signal.SIGTERM)])
def test_a_signal_mid_invocation_kills_the_group_exits_130_or_143_and_state_loads(name: str, sig: int, tmp_path: Path):
    """Through the real CLI process: SIGINT or SIGTERM while the model hangs."""
    work, h, ws = _setup(tmp_path, name, "intr", "step1.txt")
    folder = ws.task_paths("intr").supervisor
    with MODELS[name]([Hang(60), Final("too late")]) as model:
        h.configure(model.url)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "strict_loop",
                "supervise",
                "--workspace",
                str(work),
                "--task-id",
                "intr",
                "--harness",
                name,
                "--harness-bin",
                str(h.binary),
                "--heartbeat",
                "1",
                "--no-mcp",
                *(f"--harness-arg={a}" for a in EXTRA.get(name, [])),
            ],
            env=h.env(model.url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while not model.model_requests and time.monotonic() < deadline:  # the harness is waiting on the model
            time.sleep(0.1)
        proc.send_signal(sig)
        out, err_text = proc.communicate(timeout=20)
    detail = f"stdout: {out}\nstderr: {err_text}"
    assert model.model_requests, detail
    assert proc.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[sig], detail
    assert not _procs_mentioning(str(work)), detail
    events = read_jsonl(ws.task_paths("intr").events)
    assert [e["data"]["invocation"] for e in events if e["kind"] == "supervisor.interrupted"] == [1], detail
    assert ws.show_task(task_id="intr").state.counters.iteration == 0 and not (folder / "supervisor.lock").exists()
    again = _supervisor(
        h, work, "intr", model.url, io.StringIO()
    )  # started again, it continues from disk: invocation 2
    assert again._next_invocation() == 2 and again.lock.acquire(name, None) is None  # no stale lock was left behind
    again.lock.release()


def test_max_rounds_per_invocation_ends_a_live_run_and_the_next_one_goes_on(tmp_path: Path):
    """Codex: the model goes on to a second round in one session; at the cap (one round) the child is ended while
    it waits on the model, and the next invocation does the second round."""
    work, h, ws = _setup(tmp_path, "codex", "capped", "step2.txt")
    err = io.StringIO()
    first = _round(work, "capped", 1)[:-1] + [Stall(3)]
    with ResponsesModel(first + _round(work, "capped", 2)) as model:
        result = _supervisor(h, work, "capped", model.url, err, max_rounds_per_invocation=1).run()
    detail = supervise_detail(work, "capped", err)
    assert (result.exit_code, result.invocations, result.rounds) == (0, 2, 2), detail
    runs = _invocations(ws, "capped")
    assert runs[0]["reason"].startswith("ended after max_rounds_per_invocation (1) rounds"), detail
    assert [r["decision"]["action"] for r in runs] == ["continue", "stop"], detail
