"""Every refusal gives one clear line naming the field and the fix, and writes nothing."""

from __future__ import annotations

import pytest
from conftest import init_basic, run_script, tree_digest

from strict_loop import LoopError, Workspace

INIT = ["--goal", "g", "--global-stop-condition", "c"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--goal", "", "--global-stop-condition", "c"], "init_state.goal: String should have at least 1 character"),
        (["--goal", "   ", "--global-stop-condition", "c"], "init_state.goal: must not be blank"),
        (["--goal", "g", "--global-stop-condition", ""], "init_state.global_stop_condition"),
        (INIT + ["--operating-mode", "unattended"], "unattended mode needs at least one machine-checkable stop check"),
        (INIT + ["--task-id", "../escape"], "is not a task id"),
        (INIT + ["--task-id", "a/b"], "is not a task id"),
        (INIT + ["--task-id", "Upper"], "is not a task id"),
        (INIT + ["--goal", "x" * 4001], "init_state.goal: String should have at most 4000 characters"),
        (INIT + ["--max-iterations", "0"], "init_state.limits.max_iterations"),
        (INIT + ["--history-window", "51"], "init_state.limits.history_window"),
        (INIT + ["--require-text", "no-separator"], "needs the form PATH::TEXT"),
        (INIT + ["--require-text", "f.txt::re:(unclosed"], "bad regular expression"),
        (
            INIT + ["--stop-command", "   "],
            "init_state.stop_checks.commands: Value error, item 0 is blank".replace("Value error, ", ""),
        ),
    ],
)
def test_init_refusals(ws_dir, args, needle):
    proc = run_script("init_state", *args, cwd=ws_dir, check=False)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert not (ws_dir / ".agent-loop" / "tasks").exists() or not any((ws_dir / ".agent-loop" / "tasks").iterdir())


def test_existing_task_needs_force_and_force_moves_aside(ws_dir):
    init_basic(ws_dir, "same")
    proc = run_script("init_state", "--task-id", "same", *INIT, cwd=ws_dir, check=False)
    assert proc.returncode == 2 and "task 'same' already exists" in proc.stderr and "force" in proc.stderr
    run_script(
        "update_state",
        "--task-id",
        "same",
        "--task",
        "t",
        "--result-summary",
        "r",
        "--verification-summary",
        "v",
        cwd=ws_dir,
    )
    proc = run_script("init_state", "--task-id", "same", *INIT, "--force", cwd=ws_dir)
    assert "previous task files moved to" in proc.stdout
    aside = list((ws_dir / ".agent-loop" / "replaced").iterdir())
    assert len(aside) == 1 and (aside[0] / "iterations.jsonl").is_file()
    assert Workspace(ws_dir).show_task(task_id="same").state.counters.iteration == 0


def test_derived_task_id_collides_without_force(ws_dir):
    ws = Workspace(ws_dir)
    assert ws.init_state(goal="Fix the Parser!", global_stop_condition="c").task_id == "fix-the-parser"
    with pytest.raises(LoopError, match="already exists"):
        ws.init_state(goal="Fix the parser", global_stop_condition="c")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--task", "t", "--result-summary", "r", "--verification-summary", ""], "update_state.verification_summary"),
        (
            ["--task", "t", "--result-summary", "r", "--verification-summary", "  "],
            "verification_summary: must not be blank",
        ),
        (["--task", "", "--result-summary", "r", "--verification-summary", "v"], "update_state.task"),
        (
            ["--task", "t", "--result-summary", "r", "--verification-summary", "v", "--status", "blocked"],
            "update_state.stop_reason: is required when status is 'blocked'",
        ),
        (
            ["--task", "t", "--result-summary", "r", "--verification-summary", "v", "--status", "failed"],
            "update_state.stop_reason: is required when status is 'failed'",
        ),
        (
            ["--task", "t", "--result-summary", "x" * 20001, "--verification-summary", "v"],
            "update_state.result_summary: String should have at most 20000 characters",
        ),
        (
            ["--task", "t", "--result-summary", "r", "--verification-summary", "v", "--context-snapshot", "x" * 9000],
            "update_state.context_snapshot: has 9000 characters; this task's cap is 8000",
        ),
        (
            ["--task", "t", "--result-summary", "r", "--verification-summary", "v", "--status", "completed"],
            "update_state.status: cannot be 'completed' while 1 stop check(s) fail",
        ),
        (
            ["--task-id", "nope", "--task", "t", "--result-summary", "r", "--verification-summary", "v"],
            "no task 'nope'",
        ),
        (
            ["--task-id", "..", "--task", "t", "--result-summary", "r", "--verification-summary", "v"],
            "is not a task id",
        ),
    ],
)
def test_update_refusals_write_nothing(ws_dir, args, needle):
    init_basic(ws_dir)
    before = tree_digest(ws_dir)
    proc = run_script("update_state", *args, cwd=ws_dir, check=False)
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert tree_digest(ws_dir) == before


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--kind", "Bad Kind", "--message", "m"], "append_event.kind: String should match pattern"),
        (["--kind", "note", "--message", ""], "append_event.message"),
        (["--kind", "note", "--message", "m", "--data", "[1]"], "must be a JSON object"),
        (["--kind", "note", "--message", "m", "--data", "{bad"], "not valid JSON"),
        (
            ["--kind", "note", "--message", "m", "--data", '{"x": "' + "y" * 70000 + '"}'],
            "append_event.data: is 70009 bytes as JSON; the cap is 65536",
        ),
    ],
)
def test_append_refusals(ws_dir, args, needle):
    init_basic(ws_dir)
    before = tree_digest(ws_dir)
    proc = run_script("append_event", *args, cwd=ws_dir, check=False)
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
    assert tree_digest(ws_dir) == before


def test_completed_task_refuses_more_rounds(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="t")
    ws.update_state(task_id="t", task="t", result_summary="r", verification_summary="v", status="completed")
    with pytest.raises(LoopError, match="already completed at iteration 1"):
        ws.update_state(task_id="t", task="t", result_summary="r", verification_summary="v")


def test_task_id_needed_when_ambiguous(ws_dir):
    ws = Workspace(ws_dir)
    with pytest.raises(LoopError, match="no loop task exists"):
        ws.append_event(kind="note", message="m")
    ws.init_state(goal="g", global_stop_condition="c", task_id="one")
    ws.init_state(goal="g", global_stop_condition="c", task_id="two")
    with pytest.raises(LoopError, match=r"2 tasks are running \(one, two\)"):
        ws.append_event(kind="note", message="m")
    ws.update_state(
        task_id="two", task="t", result_summary="r", verification_summary="v", status="failed", stop_reason="x"
    )
    assert ws.append_event(kind="note", message="m").task_id == "one"


def test_workspace_must_exist(tmp_path):
    proc = run_script("list_tasks", "--workspace", str(tmp_path / "missing"), cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "is not an existing directory" in proc.stderr


def test_oversized_contract_is_refused(ws_dir):
    with pytest.raises(LoopError, match="the loop contract is .* bytes; the cap is 24576"):
        Workspace(ws_dir).init_state(
            goal="g", global_stop_condition="c", stop_checks={"commands": ["true " + "x" * 1990] * 14}
        )


def test_scripts_have_real_help(ws_dir):
    for name in (
        "init_state",
        "append_event",
        "update_state",
        "check_stop",
        "report_status",
        "compact_state",
        "list_tasks",
        "show_task",
        "rebuild_state",
        "detect_spiral",
        "resume",
    ):
        proc = run_script(name, "--help", cwd=ws_dir)
        assert proc.stdout.startswith(f"usage: {name}.py"), proc.stdout[:100]
        assert "--workspace" in proc.stdout and "--json" in proc.stdout
