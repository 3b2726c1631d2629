"""The agent-facing contract and the rest of the server, through the SDK's in-memory client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp_helpers import call, memory_client, server_env

from strict_loop import Workspace

pytestmark = pytest.mark.anyio

SNAPSHOT = Path(__file__).parent / "snapshots" / "tools_list.json"
TOOLS = [
    "init_state",
    "append_event",
    "update_state",
    "check_stop",
    "report_status",
    "compact_state",
    "rebuild_state",
    "detect_spiral",
    "list_tasks",
    "show_task",
]


def tools_snapshot(tools) -> list[dict]:
    return [
        {
            "name": t.name,
            "title": t.title,
            "description": t.description,
            "inputSchema": t.input_schema,
            "outputSchema": t.output_schema,
            "annotations": t.annotations.model_dump(mode="json", exclude_none=True, by_alias=True),
        }
        for t in tools
    ]


async def test_tools_list_matches_the_reviewed_snapshot(ws_dir):
    """Any change to what agents see (names, schemas, annotations) must show up in review as a snapshot diff.

    Regenerate after a deliberate change: STRICT_LOOP_UPDATE_SNAPSHOT=1 python -m pytest tests/test_mcp_server.py
    """
    async with memory_client(ws_dir) as client:
        current = tools_snapshot((await client.list_tools()).tools)
    if os.environ.get("STRICT_LOOP_UPDATE_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n")
    assert current == json.loads(SNAPSHOT.read_text()), "tools/list changed; review it and regenerate the snapshot"


async def test_annotations_tell_the_truth(ws_dir):
    async with memory_client(ws_dir) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(tools) == sorted(TOOLS)
    read_only = {name for name, t in tools.items() if t.annotations.read_only_hint}
    assert read_only == {"list_tasks", "show_task", "detect_spiral"}
    # init_state(force) replaces a task and rebuild_state overwrites state.json; clients ask before calling these
    assert {name for name, t in tools.items() if t.annotations.destructive_hint} == {"init_state", "rebuild_state"}
    # stop-check commands run (check_stop, update_state status='completed'); a pause may post an alert (append_event)
    assert {name for name, t in tools.items() if t.annotations.open_world_hint} == {
        "check_stop",
        "update_state",
        "append_event",
    }
    for name in TOOLS:
        assert tools[name].output_schema and tools[name].output_schema["type"] == "object"
        desc = tools[name].input_schema.get("properties", {})
        assert all(prop.get("description") for prop in desc.values()), f"{name} has an undocumented field"
    assert "supervisor" in tools["append_event"].output_schema["properties"]
    assert "supervisor" not in tools["list_tasks"].output_schema["properties"]


async def test_task_id_may_be_omitted_when_one_task_runs(ws_dir):
    async with memory_client(ws_dir) as client:
        err, _, text = await call(client, "append_event", kind="note", message="m")
        assert err and "no loop task exists" in text
        await call(client, "init_state", task_id="only", goal="g", global_stop_condition="c")
        err, out, _ = await call(client, "append_event", kind="note", message="m")
        assert not err and out["task_id"] == "only"
        await call(client, "init_state", task_id="second", goal="g", global_stop_condition="c")
        err, _, text = await call(client, "update_state", task="t", result_summary="r", verification_summary="v")
        assert err and "2 tasks are running (only, second)" in text


async def test_supervisor_field_rides_on_every_task_result(ws_dir):
    async with memory_client(ws_dir) as client:
        await call(client, "init_state", task_id="s", goal="g", global_stop_condition="c")
        for tool, args in [
            ("append_event", {"kind": "note", "message": "m"}),
            ("update_state", {"task": "t", "result_summary": "r", "verification_summary": "v"}),
            ("check_stop", {}),
            ("report_status", {}),
            ("compact_state", {}),
            ("show_task", {}),
            ("rebuild_state", {}),
        ]:
            err, out, text = await call(client, tool, task_id="s", **args)
            assert not err, text
            assert out["supervisor"] == {"paused": False, "messages": []}, tool


async def test_a_crash_is_reported_without_its_details(ws_dir, monkeypatch, caplog):
    """A bug in the core is an isError result naming only the tool; the traceback goes to the server's log."""

    def crash(self):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(Workspace, "list_tasks", crash)
    async with memory_client(ws_dir) as client:
        err, out, text = await call(client, "list_tasks")
        assert err and text == "Error executing tool list_tasks" and out is None
        err, out, _ = await call(client, "init_state", task_id="after", goal="g", global_stop_condition="c")
        assert not err and out["task_id"] == "after"
    assert "secret internals" in caplog.text


async def test_resources(ws_dir):
    async with memory_client(ws_dir) as client:
        await call(client, "init_state", task_id="res", goal="Resource goal", global_stop_condition="c")
        await call(client, "append_event", task_id="res", kind="note", message="hello events")
        await call(client, "report_status", task_id="res")
        listed = json.loads((await client.read_resource("loop://tasks")).contents[0].text)
        assert [t["task_id"] for t in listed] == ["res"]
        state = json.loads((await client.read_resource("loop://tasks/res/state")).contents[0].text)
        assert state["contract"]["goal"] == "Resource goal"
        summary = (await client.read_resource("loop://tasks/res/summary")).contents[0].text
        assert summary.startswith("# Run summary: res")
        lines = (await client.read_resource("loop://tasks/res/events")).contents[0].text.splitlines()
        assert json.loads(lines[-1])["message"] == "hello events"
        with pytest.raises(Exception, match="Unknown resource"):  # the SDK's path-safety check
            await client.read_resource("loop://tasks/..%2F..%2Fetc/state")
        with pytest.raises(Exception, match="is not a task id"):
            await client.read_resource("loop://tasks/Bad.Id/state")
        with pytest.raises(Exception, match="no task 'ghost'"):
            await client.read_resource("loop://tasks/ghost/summary")
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {
            "loop://tasks/{task_id}/state",
            "loop://tasks/{task_id}/summary",
            "loop://tasks/{task_id}/events",
        }


async def test_prompts(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(
        task_id="p",
        goal="Port the parser",
        global_stop_condition="tests pass",
        next_task="read parser.py",
        stop_checks={"commands": ["pytest -q tests/test_parser.py"]},
    )
    ws.update_state(
        task_id="p",
        task="read the code",
        result_summary="found the bug",
        verification_summary="line 42",
        context_snapshot="bug is in tokenize()",
        skip_checks=True,
    )
    ws.append_event(task_id="p", kind="round.started", message="Round 2: fix tokenize")
    async with memory_client(ws_dir) as client:
        names = {p.name for p in (await client.list_prompts()).prompts}
        assert names == {"strict_round", "resume_task"}
        text = (await client.get_prompt("strict_round", {"task_id": "p"})).messages[0].content.text
        assert "Goal: Port the parser" in text and "pytest -q tests/test_parser.py" in text and "round.started" in text
        text = (await client.get_prompt("resume_task", {"task_id": "p"})).messages[0].content.text
        assert "bug is in tokenize()" in text and "#1 [made, running] read the code" in text
        assert "Round 2 was announced but never recorded" in text


async def test_streamable_http_on_loopback(ws_dir):
    """The SDK's HTTP client against the app `strict-loop-mcp --http` serves, on a loopback port (in a thread: the
    server's own process is tests/test_hostile_http.py's ``served``)."""
    from test_hostile_http import served_here

    with served_here(ws_dir) as s:
        async with Client(s.url) as client:
            err, out, _ = await call(client, "init_state", task_id="web", goal="g", global_stop_condition="c")
            assert not err and out["task_id"] == "web"
            err, out, _ = await call(client, "list_tasks")
            assert [t["task_id"] for t in out["tasks"]] == ["web"]
    assert (ws_dir / ".agent-loop/tasks/web/state.json").is_file()


@pytest.mark.slow  # npx fetches and starts the Inspector (Node): ~30 s
@pytest.mark.skipif(
    shutil.which("npx") is None, reason="npx is not on this machine, so the MCP Inspector CLI cannot run"
)
def test_mcp_inspector_cli_lists_the_tools(ws_dir):
    proc = subprocess.run(
        [
            "npx",
            "-y",
            "@modelcontextprotocol/inspector",
            "--cli",
            sys.executable,
            "-m",
            "mcp_server",
            "--workspace",
            str(ws_dir),
            "--method",
            "tools/list",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ws_dir,
    )
    if proc.returncode != 0 and ("ENOTFOUND" in proc.stderr or "EAI_AGAIN" in proc.stderr):
        pytest.skip("the npm registry is not reachable from here")
    assert proc.returncode == 0, proc.stderr[-2000:]
    listed = json.loads(proc.stdout)
    assert sorted(t["name"] for t in listed["tools"]) == sorted(TOOLS)


@pytest.mark.slow  # a real server process or seconds of waiting: full suite only
async def test_server_json_manifest_launches_what_it_names(ws_dir):
    """server.json (MCP registry manifest) names this PyPI package; `uvx <identifier>` runs the console
    script of that name, so that script must start this server and the versions must agree."""
    from mcp.client.stdio import StdioServerParameters

    tomllib = pytest.importorskip("tomllib")

    repo = Path(__file__).resolve().parent.parent
    manifest = json.loads((repo / "server.json").read_text())
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    (package,) = manifest["packages"]
    assert package["registryType"] == "pypi" and package["transport"] == {"type": "stdio"}
    assert package["identifier"] == project["name"] and package["version"] == manifest["version"] == project["version"]
    assert project["scripts"][package["identifier"]] == "mcp_server.server:main"
    assert f"mcp-name: {manifest['name']}" in (repo / "README.md").read_text()  # the registry's ownership check
    exe = shutil.which(
        package["identifier"], path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    )
    (arg,) = package["packageArguments"]
    async with Client(StdioServerParameters(command=exe, args=[arg["name"], str(ws_dir)], env=server_env())) as client:
        assert {t.name for t in (await client.list_tools()).tools} == set(TOOLS)
