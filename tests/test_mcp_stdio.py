"""End to end over stdio: the SDK's client spawns the real server process."""

from __future__ import annotations

import json
import threading

import anyio
import pytest
from conftest import read_jsonl, run_script, tree_digest
from mcp_helpers import call, stdio_client

from strict_loop import Workspace

pytestmark = pytest.mark.anyio


REFUSALS = [
    ("init_state", {"goal": "", "global_stop_condition": "c"}, "init_state.goal"),
    (
        "init_state",
        {"goal": "g", "global_stop_condition": "c", "operating_mode": "unattended"},
        "needs at least one machine-checkable stop check",
    ),
    ("init_state", {"goal": "g", "global_stop_condition": "c", "task_id": "site"}, "task 'site' already exists"),
    ("init_state", {"goal": "g", "global_stop_condition": "c", "task_id": "../../etc"}, "is not a task id"),
    ("init_state", {"goal": "g"}, "init_state.global_stop_condition: Field required"),
    (
        "init_state",
        {"goal": "g", "global_stop_condition": "c", "colour": "red"},
        "init_state.colour: Extra inputs are not permitted",
    ),
    (
        "init_state",
        {"goal": ["not", "text"], "global_stop_condition": "c"},
        "init_state.goal: Input should be a valid string",
    ),
    (
        "init_state",
        {"goal": "g", "global_stop_condition": "c", "limits": {"max_iterations": "lots"}},
        "init_state.limits.max_iterations",
    ),
    (
        "init_state",
        {"goal": "x" * 5000, "global_stop_condition": "c"},
        "init_state.goal: String should have at most 4000 characters",
    ),
    (
        "update_state",
        {"task_id": "site", "task": "t", "result_summary": "r", "verification_summary": ""},
        "update_state.verification_summary",
    ),
    (
        "update_state",
        {"task_id": "site", "task": "t", "result_summary": "r", "verification_summary": "v", "status": "blocked"},
        "update_state.stop_reason: is required when status is 'blocked'",
    ),
    (
        "update_state",
        {"task_id": "site", "task": "t", "result_summary": "r", "verification_summary": "v", "status": "completed"},
        "cannot be 'completed' while 1 stop check(s) fail",
    ),
    (
        "update_state",
        {"task_id": "site", "task": "t", "result_summary": "r" * 20001, "verification_summary": "v"},
        "update_state.result_summary: String should have at most 20000 characters",
    ),
    (
        "update_state",
        {"task_id": "..", "task": "t", "result_summary": "r", "verification_summary": "v"},
        "is not a task id",
    ),
    (
        "update_state",
        {"task_id": "nope", "task": "t", "result_summary": "r", "verification_summary": "v"},
        "no task 'nope'",
    ),
    (
        "append_event",
        {"task_id": "site", "kind": "DROP TABLE", "message": "m"},
        "append_event.kind: String should match pattern",
    ),
    (
        "append_event",
        {"task_id": "site", "kind": "note", "message": "m", "data": {"x": "y" * 70000}},
        "append_event.data: is 70009 bytes",
    ),
    ("append_event", {"task_id": "site/../../x", "kind": "note", "message": "m"}, "is not a task id"),
    ("show_task", {"task_id": "a" * 65}, "is not a task id"),
    (
        "compact_state",
        {"task_id": "site", "keep": -1},
        "compact_state.keep: Input should be greater than or equal to 0",
    ),
    ("list_tasks", {"unexpected": 1}, "list_tasks.unexpected: Extra inputs are not permitted"),
]


async def _refusals(client, ws_dir) -> None:
    """Every refusal is a clear error and writes nothing; the server survives all of it (task "site")."""
    await call(
        client,
        "init_state",
        task_id="site",
        goal="g",
        global_stop_condition="c",
        stop_checks={"paths_exist": ["missing.txt"]},
    )
    digest = tree_digest(ws_dir)
    for tool, arguments, needle in REFUSALS:
        err, out, text = await call(client, tool, **arguments)
        assert err, f"{tool} {arguments} was accepted"
        assert needle in text, f"{tool}: {text}"
        assert text.count("\n") == 0 and "Traceback" not in text and "pydantic" not in text
        assert tree_digest(ws_dir) == digest, f"{tool} {needle} wrote something"
    err, out, _ = await call(client, "no_such_tool")
    assert err
    # The server survived all of it and still works.
    err, out, _ = await call(client, "append_event", task_id="site", kind="note", message="still alive")
    assert not err and out["seq"] == 2


@pytest.mark.slow  # a real server process (~0.6 s of CPU to start): full suite only
async def test_full_loop_over_stdio_after_every_refusal(ws_dir):
    """One server process: every refusal is a clear error that writes nothing, then a whole loop runs on it."""
    outside = ws_dir.parent
    before_outside = sorted(p.name for p in outside.iterdir())
    async with stdio_client(ws_dir) as client:
        await _refusals(client, ws_dir)
        await _full_loop(client, ws_dir)
    assert sorted(p.name for p in outside.iterdir()) == before_outside
    # What the server wrote is what the core reads back.
    state = Workspace(ws_dir).show_task(task_id="web").state
    assert state.counters.iteration == 4 and state.status == "completed"
    kinds = [e["kind"] for e in read_jsonl(ws_dir / ".agent-loop/tasks/web/events.jsonl")]
    assert kinds.count("round.started") == 3 and kinds.count("round.completed") == 4


async def _full_loop(client, ws_dir) -> None:
    """A task from init_state to goal_met through every tool (task "web"; "site" is the refusals')."""
    err, out, text = await call(
        client,
        "init_state",
        task_id="web",
        goal="Build index.html with a title",
        global_stop_condition="index.html has a <title>",
        stop_checks={"paths_exist": ["index.html"], "text_patterns": ["index.html::<title>"]},
        limits={"max_iterations": 20},
        next_task="create index.html",
    )
    assert not err and out["task_id"] == "web" and out["supervisor"] == {"paused": False, "messages": []}
    assert "initialized task 'web'" in text
    for i in range(1, 4):
        err, out, _ = await call(client, "append_event", task_id="web", kind="round.started", message=f"Round {i}")
        assert not err and out["kind"] == "round.started"
        (ws_dir / "index.html").write_text(f"<html>{i}</html>")
        err, out, text = await call(
            client,
            "update_state",
            task_id="web",
            task=f"step {i}",
            result_summary=f"wrote v{i}",
            verification_summary=f"cat index.html shows {i}",
            evidence=["cat index.html"],
        )
        assert not err and out["iteration"] == i and out["warnings"] == [], text
        # the answer says whether to go on (failing checks only) and what report_status would say
        assert out["stop"]["should_stop"] is False and out["stop"]["verdict"] == "continue"
        assert [c["target"] for c in out["stop"]["failing"]] == ["index.html::<title>"] and out["stop"]["passed"] == 1
        assert (
            out["status_line"].startswith(f"[strict-loop] web | running | iteration {i} of 20")
            and out["status_line"] in text
        )
    err, out, text = await call(client, "check_stop", task_id="web")
    assert not err and out["verdict"] == "continue" and out["passed"] == 1 and out["failed"] == 1
    assert "index.html lacks '<title>'" in text
    (ws_dir / "index.html").write_text("<html><title>t</title></html>")
    err, out, _ = await call(
        client,
        "update_state",
        task_id="web",
        task="add title",
        result_summary="title added",
        verification_summary="grep title index.html",
        status="completed",
    )
    assert (
        not err and out["status"] == "completed" and out["stop"]["verdict"] == "goal_met" and out["stop"]["should_stop"]
    )
    err, out, _ = await call(client, "check_stop", task_id="web")
    assert out["verdict"] == "goal_met" and out["should_stop"] is True
    err, out, text = await call(client, "report_status", task_id="web")
    assert not err and out["iteration"] == 4 and "iteration 4 of 20" in text and "text" not in out
    err, out, _ = await call(client, "list_tasks")
    assert not err and {t["task_id"]: t["status"] for t in out["tasks"]} == {"site": "running", "web": "completed"}
    err, out, _ = await call(client, "show_task", task_id="web")
    assert [r["iteration"] for r in out["state"]["recent_rounds"]] == [1, 2, 3, 4]


@pytest.mark.slow  # real server processes (~1.4 s of CPU each to start): full suite only
async def test_two_servers_and_a_script_write_one_task(ws_dir):
    Workspace(ws_dir).init_state(goal="g", global_stop_condition="c", task_id="shared", limits={"max_iterations": 1000})
    per_writer = 25

    servers_writing = {"s1": threading.Event(), "s2": threading.Event()}
    script_writing = threading.Event()

    async def server_writer(name: str) -> None:
        async with stdio_client(ws_dir) as client:
            for i in range(per_writer):
                err, _, text = await call(
                    client, "append_event", task_id="shared", kind="note", message=f"{name} {i}", data={"writer": name}
                )
                assert not err, text
                if i % 5 == 0:
                    err, _, text = await call(
                        client,
                        "update_state",
                        task_id="shared",
                        task=f"{name} {i}",
                        result_summary="r",
                        verification_summary="v",
                    )
                    assert not err, text
                servers_writing[name].set()
                if i == per_writer // 2:  # the second half only once the script writes too: all three interleave
                    assert await anyio.to_thread.run_sync(script_writing.wait, 60)

    def script_writer() -> None:  # the scripts run in this process: a third process writing the task
        assert all(event.wait(60) for event in servers_writing.values())
        for i in range(8):
            run_script(
                "append_event",
                "--task-id",
                "shared",
                "--kind",
                "note",
                "--message",
                f"script {i}",
                "--data",
                json.dumps({"writer": "script"}),
                cwd=ws_dir,
            )
            script_writing.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(server_writer, "s1")
        tg.start_soon(server_writer, "s2")
        tg.start_soon(anyio.to_thread.run_sync, script_writer)
    events = read_jsonl(ws_dir / ".agent-loop/tasks/shared/events.jsonl")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    writers = [e["data"].get("writer") for e in events if e["kind"] == "note"]
    assert writers.count("s1") == per_writer and writers.count("s2") == per_writer and writers.count("script") == 8
    for server in servers_writing:  # each server wrote before and after the script's first note
        assert writers.index(server) < writers.index("script") < len(writers) - 1 - writers[::-1].index(server)
    rounds = read_jsonl(ws_dir / ".agent-loop/tasks/shared/iterations.jsonl")
    assert [r["iteration"] for r in rounds] == list(range(1, 11))
    assert Workspace(ws_dir).show_task(task_id="shared").state.counters.iteration == 10


def test_server_refuses_a_missing_workspace(tmp_path, capsys):
    from mcp_server.server import main  # what `python -m mcp_server` and `strict-loop-mcp` run

    with pytest.raises(SystemExit) as exited:
        main(["--workspace", str(tmp_path / "nope")])
    assert exited.value.code == 2 and "is not an existing directory" in capsys.readouterr().err
