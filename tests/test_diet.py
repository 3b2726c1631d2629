"""Issue 7, part 4: the protocol diet. A round is two loop calls (announce, update_state), whose answer says
whether to go on; tools/list stays small; results do not say the same thing twice."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import run_cli, run_json, run_script
from mcp_helpers import call, memory_client, stdio_client

from strict_loop import LoopError, Workspace
from strict_loop.storage.trust import TrustStore

INPUT_SCHEMA_BUDGET = 8000
"""Characters of tools/list input schemas an agent pays for at every turn of its session."""

ROUND = ["--task", "t", "--result-summary", "r", "--verification-summary", "v"]


@pytest.mark.anyio
async def test_tools_list_input_schemas_fit_the_budget(ws_dir):
    async with memory_client(ws_dir) as client:
        tools = (await client.list_tools()).tools
    sizes = {t.name: len(json.dumps(t.input_schema)) for t in tools}
    assert sum(sizes.values()) <= INPUT_SCHEMA_BUDGET, sizes
    assert (
        "monitor" not in tools[0].input_schema["properties"]
        and "monitor_profile" in tools[0].input_schema["properties"]
    )


class CountingClient:
    """The agent's side of the loop: every tool call it makes is counted."""

    def __init__(self, client) -> None:
        self.client, self.calls = client, 0

    async def __call__(self, name: str, **arguments):
        self.calls += 1
        return await call(self.client, name, **arguments)


@pytest.mark.slow  # a real server process over stdio
@pytest.mark.anyio
async def test_a_quiet_round_is_two_loop_calls_and_says_whether_to_go_on(ws_dir):
    async with stdio_client(ws_dir) as client:
        err, _, text = await call(
            client,
            "init_state",
            task_id="count",
            goal="Count to 3 in n.txt",
            global_stop_condition="n.txt says 3",
            stop_checks={"commands": ["grep -qx 3 n.txt"]},
            limits={"max_iterations": 10},
        )
        assert not err, text
        agent = CountingClient(client)
        for n in range(1, 10):
            err, out, text = await agent("append_event", kind="round.started", message=f"Round {n}: write {n}")
            assert not err, text
            (ws_dir / "n.txt").write_text(f"{n}\n")
            err, out, text = await agent(
                "update_state",
                task=f"write {n}",
                result_summary=f"n.txt is {n}",
                verification_summary=f"cat n.txt: {n}",
            )
            assert not err, text
            status = "completed" if out["stop"]["verdict"] == "goal_met" else "running"  # goal_met completes the task
            assert out["status_line"].startswith(f"[strict-loop] count | {status} | iteration {n} of 10")
            assert out["status"] == status
            assert out["status_line"] in text
            if out["stop"]["should_stop"]:
                break
            assert out["stop"]["verdict"] == "continue" and [c["target"] for c in out["stop"]["failing"]] == [
                "grep -qx 3 n.txt"
            ]
        assert (n, agent.calls) == (3, 6)
        assert out["stop"] == {
            "should_stop": True,
            "verdict": "goal_met",
            "reason": "all 1 stop checks pass",
            "passed": 1,
            "failed": 0,
            "failing": [],
            "checks_run": True,
        }
    task = ws_dir / ".agent-loop" / "tasks" / "count"
    assert (task / "latest-status.txt").read_text().startswith(out["status_line"])
    assert json.loads((task / "latest-stop-report.json").read_text())["verdict"] == "goal_met"


def test_update_state_on_the_cli_answers_with_the_verdict_and_the_status_line(ws_dir):
    run_script(
        "init_state",
        "--task-id",
        "t",
        "--goal",
        "g",
        "--global-stop-condition",
        "c",
        "--stop-command",
        "echo checked >> runs.txt; echo out-of-the-check; exit 4",
        "--require-path",
        "done.txt",
        cwd=ws_dir,
    )
    out = run_json("update_state", *ROUND, cwd=ws_dir)
    stop = out["stop"]
    assert (stop["should_stop"], stop["verdict"], stop["passed"], stop["failed"], stop["checks_run"]) == (
        False,
        "continue",
        0,
        2,
        True,
    )
    assert [c["detail"] for c in stop["failing"]] == ["exit code 4", "missing"]
    assert "out-of-the-check" in stop["failing"][0]["output_tail"]
    assert out["status_line"].startswith("[strict-loop] t | running | iteration 1 of 100")
    assert (ws_dir / "runs.txt").read_text() == "checked\n"
    text = run_cli("update_state", *ROUND[:1], "t2", *ROUND[2:], cwd=ws_dir).stdout.splitlines()
    assert text[1].startswith("continue -- 2 of 2 stop checks fail")  # the verdict said once (issue 19, item 19)
    assert text[2:4] == [
        "  [FAIL] command echo checked >> runs.txt; echo out-of-the-check; exit 4: exit code 4",
        "  [FAIL] path done.txt: missing",
    ]
    assert text[4].startswith("[strict-loop] t | running | iteration 2 of 100")
    # what the verdict found is recorded as a check_stop would record it
    assert Workspace(ws_dir).show_task(task_id="t").state.last_stop.failed == 2


def test_skip_checks_runs_no_command_and_says_so(ws_dir):
    run_script(
        "init_state",
        "--task-id",
        "t",
        "--goal",
        "g",
        "--global-stop-condition",
        "c",
        "--stop-command",
        "touch ran.txt",
        "--max-iterations",
        "1",
        cwd=ws_dir,
    )
    out = run_json("update_state", *ROUND, "--skip-checks", cwd=ws_dir)
    assert not (ws_dir / "ran.txt").exists()
    # limits still decide: the one allowed round is used up
    assert out["stop"]["should_stop"] and out["stop"]["verdict"] == "limit_reached" and not out["stop"]["checks_run"]


def test_skipped_checks_leave_a_continue_with_the_reason(ws_dir):
    run_script(
        "init_state",
        "--task-id",
        "t",
        "--goal",
        "g",
        "--global-stop-condition",
        "c",
        "--stop-command",
        "touch ran.txt",
        cwd=ws_dir,
    )
    stop = run_json("update_state", *ROUND, "--skip-checks", cwd=ws_dir)["stop"]
    assert (stop["verdict"], stop["checks_run"]) == ("continue", False) and "skip_checks" in stop["reason"]
    assert not (ws_dir / "ran.txt").exists()


def test_an_untrusted_contract_runs_nothing_and_the_refusal_is_the_reason(ws_dir, tmp_path, monkeypatch):
    Workspace(ws_dir).init_state(
        task_id="t", goal="g", global_stop_condition="c", stop_checks={"commands": ["touch ran.txt"]}
    )
    clone = tmp_path / "clone"
    shutil.copytree(ws_dir, clone)  # a repository carrying .agent-loop/: its contract was not written on this machine
    result = Workspace(clone).update_state(task_id="t", task="x", result_summary="r", verification_summary="v")
    assert result.iteration == 1 and not (clone / "ran.txt").exists()
    assert not result.stop.should_stop and not result.stop.checks_run
    assert "not trusted" in result.stop.reason and "strict-loop trust --task-id t" in result.stop.reason
    assert not (clone / ".agent-loop" / "tasks" / "t" / "latest-stop-report.json").exists()


def test_a_contract_without_checks_answers_at_no_cost(ws_dir):
    stop = Workspace(ws_dir)
    stop.init_state(task_id="t", goal="g", global_stop_condition="c")
    result = stop.update_state(task_id="t", task="x", result_summary="r", verification_summary="v")
    assert (result.stop.verdict, result.stop.should_stop) == (
        "continue",
        False,
    ) and "no machine stop checks" in result.stop.reason
    done = stop.update_state(task_id="t", task="y", result_summary="r", verification_summary="v", status="completed")
    assert (done.stop.verdict, done.stop.should_stop) == ("completed", True)


def test_check_stop_keeps_output_for_failing_checks_only(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(
        task_id="t",
        goal="g",
        global_stop_condition="c",
        stop_checks={"commands": ["echo passing-output", "echo failing-output; exit 1"]},
    )
    report = ws.check_stop(task_id="t")
    assert [(c.passed, c.output_tail) for c in report.checks] == [(True, ""), (False, "failing-output\n")]
    stored = json.loads((ws_dir / ".agent-loop" / "tasks" / "t" / "latest-stop-report.json").read_text())
    assert [c["output_tail"] for c in stored["checks"]] == ["", "failing-output\n"]


@pytest.mark.anyio
async def test_report_status_says_its_text_once(ws_dir):
    async with memory_client(ws_dir) as client:
        await call(client, "init_state", task_id="t", goal="g", global_stop_condition="c")
        err, out, text = await call(client, "report_status", task_id="t")
    assert not err and text.startswith("[strict-loop] t | running | iteration 0 of 100")
    assert out["iteration"] == 0 and out["task_id"] == "t" and "text" not in out
    assert text.splitlines()[0] not in json.dumps(out)


@pytest.mark.anyio
async def test_the_monitor_profile_and_the_workspace_defaults_reach_a_new_task(ws_dir):
    defaults = ws_dir / ".agent-loop" / "monitor-defaults.json"
    async with memory_client(ws_dir) as client:
        err, _, text = await call(client, "init_state", task_id="plain", goal="g", global_stop_condition="c")
        err, _, text = await call(
            client, "init_state", task_id="strict", goal="g", global_stop_condition="c", monitor_profile="strict"
        )
        assert not err, text
        err, _, text = await call(
            client, "init_state", task_id="knobs", goal="g", global_stop_condition="c", monitor={"enabled": False}
        )
        assert err and "init_state.monitor: Extra inputs are not permitted" in text  # the knobs are a person's
        defaults.write_text(json.dumps({"thresholds": {"identical_repeats": 5}, "cooldown_turns": 7}))
        TrustStore().record_defaults(ws_dir, defaults.read_bytes())  # a person trusted it
        err, _, text = await call(
            client, "init_state", task_id="pinned", goal="g", global_stop_condition="c", monitor_profile="strict"
        )
        assert not err, text
    run_script(
        "init_state",
        "--task-id",
        "person",
        "--goal",
        "g",
        "--global-stop-condition",
        "c",
        "--monitor-profile",
        "lenient",
        "--monitor",
        '{"cooldown_turns": 2}',
        cwd=ws_dir,
    )
    ws = Workspace(ws_dir)
    monitor = {t: ws.show_task(task_id=t).state.contract.monitor for t in ("plain", "strict", "pinned", "person")}
    assert monitor["plain"].thresholds.identical_repeats == 4 and monitor["plain"].pause_after == 1
    assert (monitor["strict"].thresholds.identical_repeats, monitor["strict"].reset_after) == (3, 10)
    # what a person wrote in the workspace wins over the preset the agent picked; the preset fills the rest
    assert (monitor["pinned"].thresholds.identical_repeats, monitor["pinned"].reset_after) == (5, 10)
    assert monitor["pinned"].cooldown_turns == 7
    assert (
        monitor["person"].thresholds.identical_repeats,
        monitor["person"].pause_after,
        monitor["person"].cooldown_turns,
    ) == (5, 2, 2)
    stuck = {"tool": "bash", "args": {"command": "make"}, "output": "error: cycle", "error": True}
    for task in ("plain", "strict"):
        for _ in range(3):
            ws.append_event(task_id=task, kind="tool_call", message="make", data=stuck)
    assert ws.detect_spiral(task_id="strict").detected and not ws.detect_spiral(task_id="plain").detected


def test_an_unknown_profile_is_refused_with_the_choices(ws_dir):
    with pytest.raises(
        LoopError, match=r"init_state\.monitor_profile: Input should be 'default', 'strict' or 'lenient'"
    ):
        Workspace(ws_dir).init_state(task_id="t", goal="g", global_stop_condition="c", monitor_profile="paranoid")
