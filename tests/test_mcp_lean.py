"""Issue 27: lean MCP calls and tool list. tools/list fits its budget and still says what a first call needs; an
append_event does not load a quiet monitor again; detect_spiral reads the monitor's bounded window, never the ledgers.
"""

from __future__ import annotations

import json
import os
import typing

import pytest
from mcp_helpers import call, memory_client

from strict_loop import Workspace
from strict_loop.loop import operations
from strict_loop.loop.monitoring import TaskMonitor
from strict_loop.model.monitoring import MonitorState

pytestmark = pytest.mark.anyio

TOOLS_LIST_BUDGET = 8000
"""Characters of tools/list every agent carries in its context: the input schemas (compact JSON) and descriptions."""


async def test_tools_list_fits_the_budget_with_its_descriptions(ws_dir):
    async with memory_client(ws_dir) as client:
        tools = (await client.list_tools()).tools
    sizes = {t.name: len(json.dumps(t.input_schema, separators=(",", ":"))) + len(t.description or "") for t in tools}
    assert sum(sizes.values()) <= TOOLS_LIST_BUDGET, sizes


def _literals(model) -> dict[str, list]:
    out = {}
    for name, info in model.model_fields.items():
        kind = info.annotation
        for arg in (kind, *typing.get_args(kind)):
            if typing.get_origin(arg) is typing.Literal:
                out[name] = list(typing.get_args(arg))
    return out


async def test_the_lean_tool_list_still_says_what_a_first_call_needs(ws_dir):
    async with memory_client(ws_dir) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for op in operations.OPERATIONS:
        if op.tool is None:
            continue
        schema = tools[op.name].input_schema
        assert tools[op.name].description == op.tool
        if op.request is None:
            continue
        required = sorted(n for n, f in op.request.model_fields.items() if f.is_required())
        assert sorted(schema.get("required", [])) == required, op.name
        assert set(schema["properties"]) == set(op.request.model_fields), op.name
        for name, values in _literals(op.request).items():
            assert schema["properties"][name]["enum"] == values, (op.name, name)
        if "task_id" in schema["properties"]:
            assert schema["properties"]["task_id"]["description"], op.name
    init = tools["init_state"].input_schema["properties"]
    assert init["task_id"]["pattern"] == "^[a-z0-9][a-z0-9_-]{0,63}$"  # where an id is made, it says what one is
    assert "pattern" not in tools["show_task"].input_schema["properties"]["task_id"]
    assert init["stop_checks"]["properties"]["text_patterns"]["description"]


async def test_a_malformed_task_id_is_still_refused_with_an_example(ws_dir):
    async with memory_client(ws_dir) as client:
        is_error, _, text = await call(client, "show_task", task_id="../etc")
    assert is_error and "is not a task id" in text and "give one like fix-parser" in text


def _seeded(ws_dir, calls: int) -> Workspace:
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t", goal="g", global_stop_condition="never")
    for i in range(calls):
        ws.append_event(
            task_id="t", kind="tool_call", message="t", data={"tool": "Bash", "args": {"command": f"ls {i}"}}
        )
    return ws


async def test_an_append_event_loads_a_quiet_monitor_only_when_it_changed(ws_dir, monkeypatch):
    ws = _seeded(ws_dir, 3)
    loads = []
    real = TaskMonitor.load
    monkeypatch.setattr(TaskMonitor, "load", lambda self, **kw: loads.append(1) or real(self, **kw))
    async with memory_client(ws_dir) as client:
        for i in range(3):
            is_error, result, _ = await call(client, "append_event", task_id="t", kind="note", message=f"n{i}")
            assert not is_error and result["supervisor"] == {"paused": False, "messages": []}
        assert len(loads) == 1  # the first call read it; the file is unchanged since
        ws.append_event(task_id="t", kind="tool_call", message="t", data={"tool": "Bash", "args": {"command": "pwd"}})
        loads.clear()
        await call(client, "append_event", task_id="t", kind="note", message="after a tool call")
        assert len(loads) == 1
        monitor = ws_dir / ".agent-loop" / "tasks" / "t" / "monitor.json"
        doc = json.loads(monitor.read_text())
        monitor.write_text(json.dumps({**doc, "notice": "A person resumed the task: go on."}))  # as resume leaves it
        is_error, result, text = await call(client, "append_event", task_id="t", kind="note", message="n")
        assert [m["kind"] for m in result["supervisor"]["messages"]] == ["notice"] and "go on" in text
        _, result, _ = await call(client, "append_event", task_id="t", kind="note", message="n")  # handed over once
        assert result["supervisor"]["messages"] == []


async def test_detect_spiral_reads_the_monitor_window_and_not_the_ledgers(ws_dir, monkeypatch):
    _seeded(ws_dir, 12)
    task = ws_dir / ".agent-loop" / "tasks" / "t"
    opened = []
    real = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opened.append(os.fspath(path)) or real(path, *a, **k))
    async with memory_client(ws_dir) as client:
        opened.clear()
        is_error, result, _ = await call(client, "detect_spiral", task_id="t")
    assert not is_error and result["turns_seen"] == 12
    ours = {os.path.basename(p) for p in opened if p.startswith(str(task))}
    assert ours == {"monitor.json"}, ours


def test_monitor_json_keeps_a_turn_without_its_defaults_and_the_ladder_whole(ws_dir):
    ws = _seeded(ws_dir, 12)
    monitor = ws_dir / ".agent-loop" / "tasks" / "t" / "monitor.json"
    doc = json.loads(monitor.read_text())
    assert doc["paused"] is False and doc["level"] == 0  # the hooks' gate reads these from the raw JSON
    turns = doc["window"]
    assert len(turns) == 12 and all("refused" not in t and "forbids" not in t for t in turns)  # left at defaults
    mon = TaskMonitor(ws.task_store("t"), ws_dir).load()
    assert [f.brief for f in mon.window] == [t["brief"] for t in turns] and not any(f.refused for f in mon.window)
    assert MonitorState.model_validate_json(mon.model_dump_json()) == mon  # what is left out reads back as it was
