"""A fourth harness and a new operation each need one table row: the hook, install, headless run, stream, CLI and
MCP server all follow the tables (strict_loop.harness.registry, strict_loop.loop.operations)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import call, memory_client
from pydantic import BaseModel, ConfigDict, Field

from strict_loop import Workspace
from strict_loop.cli import app
from strict_loop.harness import install, registry
from strict_loop.harness.install import Plan
from strict_loop.headless import wiring as headless
from strict_loop.headless.streams import ClaudeAdapter, adapter_for
from strict_loop.headless.wiring import Wiring
from strict_loop.loop import operations
from strict_loop.loop.operations import Operation

ME = "test_tables:"  # this module, importable by name (tests/ is on sys.path), for the row's function references
FAKE = registry.Harness(
    name="fake", title="A fake harness", hook_events=(("BeforeTool", "*", 30), ("AfterTool", "*", 30)),
    turn_fn="strict_loop.harness.readers:claude_turn", words_fn=ME + "words", refusals_fn=ME + "refusals",
    prompt_fn="strict_loop.harness.readers:prompt_field",
    context_fn="strict_loop.harness.payloads:hook_specific_context", deny_fn=ME + "deny",
    plan_fn=ME + "plan", default_scope="project", argv_fn=ME + "argv",
    stream_fn="strict_loop.headless.streams:ClaudeAdapter",
    stop_restarts_on_new_turn=False, resumes_sessions=False, reports_cost=False, hooks_in_headless=False,
)  # fmt: skip


def words(event: Any) -> str:
    """The fake harness says what its agent wrote before the call in the payload itself."""
    return event.payload.get("llm_content", "")


def refusals(event: Any) -> list[Any]:
    """The fake harness names the calls its person refused in the payload too (call id, tool, input, result)."""
    return [(*refused, "", False) for refused in event.payload.get("refused", [])]  # readers.Refusal's fields


def deny(event: Any, reason: str) -> dict[str, Any]:
    return {"decision": "deny", "reason": reason}


def plan(scope: str, workspace: Path, install_it: bool) -> Plan:
    out = Plan(workspace)
    out.notes.append(f"fake plan: {scope} {workspace.name} install={install_it}")
    return out


def argv(run: headless.Run) -> Wiring:
    return Wiring([run.binary, "--prompt", run.prompt], run.env)


@pytest.fixture
def fake():
    registry.register(FAKE)
    try:
        yield FAKE
    finally:
        registry.HARNESSES.pop("fake")


def test_a_new_harness_is_one_row_of_the_registry(fake, tmp_path, monkeypatch):
    from strict_loop.harness import handler

    ws = Workspace(tmp_path)
    ws.init_state(task_id="t", goal="g", global_stop_condition="s", limits={"max_iterations": 5})
    payload = {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q"},
        "tool_response": {"stdout": "1 failed"},
        "llm_content": "Running the tests once more.",
        "refused": [["g-1", "Bash", {"command": "rm -rf build"}, "rejected by user"]],
        "session_id": "s1",
        "cwd": str(tmp_path),
    }
    handler.handle("fake", json.dumps(payload), env={}, cwd=str(tmp_path))
    events = [json.loads(line) for line in (tmp_path / ".agent-loop/tasks/t/events.jsonl").read_text().splitlines()]
    turns = [e for e in events if e["kind"] == "tool_call"]
    assert turns and turns[-1]["data"]["output"] == "1 failed" and turns[-1]["data"]["hook"]["harness"] == "fake"
    assert turns[-1]["data"]["thought"] == "Running the tests once more."  # the row's words_fn gave the agent's words
    assert [t["data"]["args"] for t in turns] == [{"command": "rm -rf build"}, {"command": "pytest -q"}]  # refusals_fn

    assert install.plan("fake", None, tmp_path).notes == [f"fake plan: project {tmp_path.name} install=True"]
    wiring = headless.wire("fake", "fake-bin", "do it", tmp_path, "t", tmp_path / "scratch", env={})
    assert wiring.argv == ["fake-bin", "--prompt", "do it"] and wiring.env["STRICT_LOOP_TASK"] == "t"
    assert isinstance(adapter_for("fake"), ClaudeAdapter)

    _, parsers = app.build_parser()
    assert parsers["install"].parse_args(["fake"]).harness == "fake"
    assert parsers["supervise"].parse_args(["--task-id", "t", "--harness", "fake"]).harness == "fake"


def test_an_unknown_harness_is_refused_with_the_known_ones():
    with pytest.raises(KeyError, match="known: claude, codex, hermes, gemini, opencode"):
        registry.get("goose")


@pytest.mark.parametrize("name", registry.names())
def test_every_row_names_functions_that_exist_and_the_cli_takes_it(name):
    """Gemini CLI and OpenCode came in as rows and the functions they name, as this file's fake one does."""
    row = registry.get(name)
    refs = [row.turn_fn, row.words_fn, row.refusals_fn, row.prompt_fn, row.context_fn, row.deny_fn, row.plan_fn]
    assert all(callable(registry.resolve(ref)) for ref in [*refs, row.argv_fn] if ref), name
    assert adapter_for(name).harness == name
    _, parsers = app.build_parser()
    assert parsers["install"].parse_args([name]).harness == name
    assert parsers["supervise"].parse_args(["--task-id", "t", "--harness", name]).harness == name


class EchoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task_id: str = Field(..., description="The task")
    word: str = Field(..., description="What to echo")


class EchoResult(BaseModel):
    task_id: str
    echoed: str


def test_a_new_operation_is_one_row_of_the_table(tmp_path, monkeypatch, capsys):
    row = Operation(
        "echo_word",
        "echo a word",
        "Echo a word back.",
        EchoInput,
        EchoResult,
        lambda r: f"{r.task_id}: {r.echoed}",
        title="Echo",
        tool="Echo a word back.",
        read_only=True,
    )
    monkeypatch.setattr(operations, "OPERATIONS", (*operations.OPERATIONS, row))
    monkeypatch.setattr(
        Workspace,
        "echo_word",
        lambda self, request=None, /, **params: EchoResult(
            task_id=(request or EchoInput(**params)).task_id, echoed=(request or EchoInput(**params)).word.upper()
        ),
        raising=False,
    )

    assert app.main(["echo-word", "--workspace", str(tmp_path), "--task-id", "t", "--word", "hi"]) == 0
    assert capsys.readouterr().out.strip() == "t: HI"

    import anyio

    async def over_mcp() -> tuple[list[str], Any]:
        async with memory_client(tmp_path) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            return names, await call(client, "echo_word", task_id="t", word="yo")

    names, (is_error, structured, text) = anyio.run(over_mcp)
    assert "echo_word" in names and not is_error
    assert structured == {"task_id": "t", "echoed": "YO"} and text == "t: YO"
