"""A full loop driven through the scripts as separate processes, checked by loading what they wrote."""

from __future__ import annotations

import functools
import json

import jsonschema
import pytest
from conftest import read_jsonl, run_json, run_script

from strict_loop import LoopError, Workspace
from strict_loop.cli import schemas
from strict_loop.model.records import IterationRecord, StatusRecord, StopReport, TaskState


@functools.cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    """The shipped schema's validator, made (and the schema checked) once per name: each generation builds every
    document's schema (~20 ms), and ``jsonschema.validate`` checks the schema again on every call."""
    schema = schemas.generate()[f"{name}.schema.json"]
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _validate(instance: object, name: str) -> None:
    _validator(name).validate(instance)


def test_full_lifecycle_through_scripts(ws_dir):
    out = run_json(
        "init_state",
        "--task-id",
        "notes",
        "--goal",
        "Write notes.md with three facts",
        "--global-stop-condition",
        "notes.md has a 'done' line",
        "--success-evidence",
        "notes.md exists",
        "--stop-command",
        "test -f notes.md",
        "--require-path",
        "notes.md",
        "--require-text",
        "notes.md::re:^done$",
        "--max-iterations",
        "10",
        "--next-task",
        "fact 1",
        cwd=ws_dir,
    )
    assert out["task_id"] == "notes"
    task = ws_dir / ".agent-loop" / "tasks" / "notes"

    for i in range(1, 4):
        ev = run_json(
            "append_event",
            "--task-id",
            "notes",
            "--kind",
            "round.started",
            "--message",
            f"Round {i}: fact {i}",
            cwd=ws_dir,
        )
        assert ev["kind"] == "round.started"
        with open(ws_dir / "notes.md", "a") as fh:
            fh.write(f"fact {i}\n")
        rnd = run_json(
            "update_state",
            "--task-id",
            "notes",
            "--task",
            f"fact {i}",
            "--result-summary",
            f"added fact {i}",
            "--verification-summary",
            f"notes.md has {i} lines",
            "--evidence",
            "wc -l notes.md",
            "--artifacts",
            "notes.md",
            "--next-task",
            f"fact {i + 1}",
            cwd=ws_dir,
        )
        assert rnd["iteration"] == i and rnd["warnings"] == [] and rnd["duration_s"] is not None

    stop = run_json("check_stop", "--task-id", "notes", cwd=ws_dir)
    assert stop["verdict"] == "continue" and stop["should_stop"] is False
    assert [c["passed"] for c in stop["checks"]] == [True, True, False]
    assert run_script("check_stop", "--task-id", "notes", "--exit-status", cwd=ws_dir, check=False).returncode == 3

    # Completing while a check fails is refused and writes nothing.
    before = (task / "state.json").read_bytes()
    refused = run_script(
        "update_state",
        "--task-id",
        "notes",
        "--task",
        "finish",
        "--result-summary",
        "r",
        "--verification-summary",
        "v",
        "--status",
        "completed",
        cwd=ws_dir,
        check=False,
    )
    assert refused.returncode == 2 and "stop check(s) fail" in refused.stderr
    assert (task / "state.json").read_bytes() == before

    (ws_dir / "notes.md").write_text("fact 1\nfact 2\nfact 3\ndone\n")
    run_script(
        "append_event", "--kind", "round.started", "--message", "Round 4: finish", cwd=ws_dir
    )  # only task: id optional
    done = run_json(
        "update_state",
        "--task",
        "finish",
        "--result-summary",
        "done line",
        "--verification-summary",
        "check_stop: goal_met",
        "--status",
        "completed",
        cwd=ws_dir,
    )
    assert done["status"] == "completed"
    final = run_json("check_stop", "--task-id", "notes", cwd=ws_dir)
    assert final["verdict"] == "goal_met" and final["should_stop"] is True
    assert run_script("check_stop", "--exit-status", cwd=ws_dir, check=False).returncode == 0

    status = run_json("report_status", "--task-id", "notes", "--label", "final", cwd=ws_dir)
    assert status["record"]["iteration"] == 4 and status["record"]["status"] == "completed"
    assert "iteration 4 of 10" in status["text"]

    listed = run_json("list_tasks", cwd=ws_dir)
    assert [(t["task_id"], t["status"], t["iteration"]) for t in listed] == [("notes", "completed", 4)]
    shown = run_json("show_task", "--task-id", "notes", cwd=ws_dir)
    assert [r["iteration"] for r in shown["state"]["recent_rounds"]] == [1, 2, 3, 4]
    assert shown["last_stop_report"]["verdict"] == "goal_met"

    # Every file the scripts wrote loads and validates against the shipped schemas.
    events = read_jsonl(task / "events.jsonl")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    for e in events:
        _validate(e, "event")
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "task.initialized" and kinds.count("round.started") == 4 and kinds.count("round.completed") == 4
    iterations = [IterationRecord.model_validate(r) for r in read_jsonl(task / "iterations.jsonl")]
    assert [r.iteration for r in iterations] == [1, 2, 3, 4]
    assert iterations[0].evidence == ["wc -l notes.md"] and iterations[0].artifacts == ["notes.md"]
    assert sorted(p.name for p in (task / "rounds").iterdir()) == [f"iteration-000{i}.md" for i in range(1, 5)]
    state = TaskState.model_validate_json((task / "state.json").read_bytes())
    _validate(json.loads((task / "state.json").read_text()), "state")
    assert state.counters.iteration == 4 and state.counters.progress_rounds == 4 and state.counters.timed_rounds == 4
    assert state.next_task == "fact 4"
    StopReport.model_validate_json((task / "latest-stop-report.json").read_bytes())
    history = [StatusRecord.model_validate(r) for r in read_jsonl(task / "status-history.jsonl")]
    assert history[-1].label == "final"
    assert "Run summary: notes" in (task / "run-summary.md").read_text()
    assert (task / "latest-status.txt").read_text() == status["text"]
    registry = json.loads((ws_dir / ".agent-loop" / "registry.json").read_text())
    _validate(registry, "registry")
    assert registry["tasks"]["notes"]["status"] == "completed"


def test_no_progress_streak_and_limits(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(
        goal="g", global_stop_condition="c", task_id="slow", limits={"max_no_progress_rounds": 2, "max_iterations": 5}
    )
    ws.update_state(task_id="slow", task="t1", result_summary="r", verification_summary="v", progress="none")
    r = ws.update_state(task_id="slow", task="t2", result_summary="r", verification_summary="v", progress="none")
    assert r.consecutive_no_progress == 2 and any("max_no_progress_rounds" in w for w in r.warnings)
    report = ws.check_stop(task_id="slow")
    assert report.verdict == "limit_reached" and "max_no_progress_rounds reached (2/2)" in report.reason
    ws.update_state(task_id="slow", task="t3", result_summary="r", verification_summary="v", progress="made")
    assert ws.check_stop(task_id="slow").verdict == "continue"
    for i in range(2):
        ws.update_state(task_id="slow", task=f"t{4 + i}", result_summary="r", verification_summary="v")
    report = ws.check_stop(task_id="slow")
    assert report.verdict == "limit_reached" and report.limits[0].hit


def test_round_duration_comes_from_the_announcement(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="timed")
    ws.append_event(task_id="timed", kind="round.started", message="Round 1")
    state = ws.show_task(task_id="timed").state
    assert state.current_round and state.current_round.iteration == 1
    r = ws.update_state(task_id="timed", task="t", result_summary="r", verification_summary="v")
    assert r.warnings == [] and r.duration_s is not None and r.duration_s < 30
    assert ws.show_task(task_id="timed").state.current_round is None
    r2 = ws.update_state(task_id="timed", task="t2", result_summary="r", verification_summary="v")
    assert any("not announced" in w for w in r2.warnings)


def test_blocked_then_resumed(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="b")
    ws.update_state(
        task_id="b",
        task="t",
        result_summary="r",
        verification_summary="v",
        status="blocked",
        stop_reason="needs an API key",
        needs_human_input=True,
    )
    report = ws.check_stop(task_id="b")
    assert report.verdict == "blocked" and report.reason == "needs an API key"
    assert ws.list_tasks()[0].needs_human_input is True
    ws.update_state(task_id="b", task="t2", result_summary="key added", verification_summary="env shows key")
    assert ws.check_stop(task_id="b").verdict == "continue"


def test_compact_keeps_ledgers_whole(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="c", limits={"history_window": 6})
    for i in range(9):
        ws.update_state(task_id="c", task=f"task {i + 1}", result_summary="r", verification_summary="v")
    state = ws.show_task(task_id="c").state
    assert len(state.recent_rounds) == 6 and state.archive.rounds == 3
    res = ws.compact_state(task_id="c", keep=2)
    assert (res.kept, res.archived) == (2, 4)
    state = ws.show_task(task_id="c").state
    assert [r.iteration for r in state.recent_rounds] == [8, 9]
    assert state.archive.rounds == 7 and state.archive.first_iteration == 1 and state.archive.last_iteration == 7
    assert state.archive.headlines[-1] == "#7 task 7"
    assert len(read_jsonl(ws.task_paths("c").iterations)) == 9


def test_a_round_whose_checks_say_goal_met_completes_the_task(ws_dir):
    """Following the protocol literally (record 'running', stop when should_stop) leaves no finished task running."""
    ws = Workspace(ws_dir)
    ws.init_state(
        task_id="t", goal="g", global_stop_condition="notes.md exists", stop_checks={"paths_exist": ["notes.md"]}
    )
    ws.append_event(task_id="t", kind="round.started", message="Round 1: not yet")
    first = ws.update_state(task_id="t", task="a", result_summary="r", verification_summary="v", status="running")
    assert first.status == "running" and not first.stop.should_stop
    ws.append_event(task_id="t", kind="round.started", message="Round 2: write notes.md")
    (ws_dir / "notes.md").write_text("# Summary\n")
    done = ws.update_state(task_id="t", task="b", result_summary="r", verification_summary="v", status="running")
    assert done.stop.should_stop and done.stop.verdict == "goal_met" and done.status == "completed"
    assert ws.show_task(task_id="t").state.status == "completed"
    events = read_jsonl(ws_dir / ".agent-loop/tasks/t/events.jsonl")
    assert [e["data"]["iteration"] for e in events if e["kind"] == "task.completed"] == [2]
    assert "completed" in (ws_dir / ".agent-loop/tasks/t/latest-status.txt").read_text()


def test_round_started_on_a_task_that_is_not_running_is_refused_with_the_way_forward(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t", goal="g", global_stop_condition="s")
    ws.update_state(task_id="t", task="a", result_summary="r", verification_summary="v", status="completed")
    with pytest.raises(LoopError) as refused:
        ws.append_event(task_id="t", kind="round.started", message="Round 2: more")
    assert "which is completed after round 1" in str(refused.value) and "init_state with a new task_id" in str(
        refused.value
    )
    events = read_jsonl(ws_dir / ".agent-loop/tasks/t/events.jsonl")
    assert not [e for e in events if e["kind"] == "round.started" and e["message"] == "Round 2: more"]
    ws.append_event(task_id="t", kind="note", message="a note is still fine")


def test_a_rebuild_from_the_ledgers_keeps_a_completion_after_the_last_round(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t", goal="g", global_stop_condition="done", stop_checks={"paths_exist": ["done.txt"]})
    (ws_dir / "done.txt").write_text("ok\n")
    ws.append_event(task_id="t", kind="round.started", message="Round 1")
    assert ws.update_state(task_id="t", task="a", result_summary="r", verification_summary="v").status == "completed"
    (ws_dir / ".agent-loop/tasks/t/state.json").write_text("{damaged")
    rebuilt = ws.rebuild_state(task_id="t")
    assert ws.show_task(task_id="t").state.status == "completed", rebuilt


def test_the_state_folder_says_what_git_must_never_take_and_a_persons_own_file_is_kept(ws_dir):
    """Issue 19, item 18: nothing said whether .agent-loop/ belongs in git."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(ws_dir)], check=True)
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t", goal="g", global_stop_condition="s")
    task = ws_dir / ".agent-loop/tasks/t"
    for path in (
        task / "supervisor/invocation-0001.jsonl",
        task / "watch/run-0001.log",
        task / "hook-errors.log",
        ws_dir / ".agent-loop/snapshots.git/HEAD",
        ws_dir / ".agent-loop/unclaimed.jsonl",
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    listed = subprocess.run(
        ["git", "-C", str(ws_dir), "ls-files", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert ".agent-loop/tasks/t/state.json" in listed and ".agent-loop/tasks/t/events.jsonl" in listed
    assert not [
        p
        for p in listed
        if "/supervisor/" in p
        or "/watch/" in p
        or "snapshots.git" in p
        or p.endswith(("hook-errors.log", "unclaimed.jsonl", ".lock"))
    ]
    (ws_dir / ".agent-loop/.gitignore").write_text("# mine\n")
    ws.init_state(task_id="u", goal="g", global_stop_condition="s")
    assert (ws_dir / ".agent-loop/.gitignore").read_text() == "# mine\n"
