"""The MCP adapter: each tool validates with the core's input model and calls the Workspace method of the same name.

Tools are served by the SDK's public low-level ``Server``, made for exact schemas: ``tools/list`` advertises each core
model's own JSON Schema, and ``tools/call`` hands the raw arguments to the core's validator, so bad input is reported
with the core's one-line message (field, problem, fix) in an ``isError`` result, not as a pydantic dump. Resources and
prompts are declared on an ``MCPServer`` and served through its public methods. No SDK internals are used.
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import anyio
import mcp_types as types
from mcp import MCPError, stdio_server
from mcp.server import Server, ServerRequestContext as Ctx
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, UnexpectedResourceError
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from pydantic import BaseModel, ConfigDict, Field, create_model

from strict_loop import LoopError, Workspace, __version__, summaries
from strict_loop.errors import validate_input
from strict_loop.models import StopReport, TaskState
from strict_loop.monitor import SpiralVerdict
from strict_loop.requests import (
    AppendEventInput,
    CheckStopInput,
    CompactStateInput,
    DetectSpiralInput,
    InitStateInput,
    RebuildStateInput,
    ReportStatusInput,
    ShowTaskInput,
    UpdateStateInput,
)
from strict_loop.results import (
    CompactResult,
    EventResult,
    InitResult,
    RebuildResult,
    RoundResult,
    StatusReport,
    Supervisor,
    TaskSummary,
    TaskView,
)

NAME = "strict-agent-loop"
Page = Optional[types.PaginatedRequestParams]
log = logging.getLogger("strict_loop.mcp")  # crashes are logged here; the client only sees that the call failed

INSTRUCTIONS = """\
Strict agent loop: do one small, verified task per round and keep the loop's state on disk.
Round lifecycle: append_event(kind='round.started') -> do exactly one atomic task -> verify it ->
update_state (verification_summary required) -> check_stop -> report_status. Define the contract once
with init_state. Resume from disk with list_tasks/show_task. Read the 'supervisor' field of every
result: if it says paused, stop and wait for a person."""


class NoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TaskList(BaseModel):
    tasks: list[TaskSummary]


SUPERVISOR_FIELD = (Supervisor, Field(default_factory=Supervisor, description="Whispers and pause orders from the progress monitor; obey them"))


def _with_supervisor(model: type[BaseModel]) -> type[BaseModel]:
    return create_model(f"{model.__name__}Output", __base__=model, supervisor=SUPERVISOR_FIELD)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    call: Callable[[Workspace, Any], tuple[BaseModel, str]]
    read_only: bool = False
    open_world: bool = False
    for_task: bool = True


def _specs() -> list[ToolSpec]:
    def status_text(r: StatusReport) -> str:
        return r.text

    return [
        ToolSpec("init_state", "Define a loop contract",
                 "Create a loop task: its goal, stop condition and machine-checkable stop checks. Call once before round 1; "
                 "unattended mode needs at least one stop check. Refuses to overwrite an existing task unless force=true.",
                 InitStateInput, InitResult, lambda ws, r: _pair(ws.init_state(r), summaries.init)),
        ToolSpec("append_event", "Append an event",
                 "Append one event to the task's ledger. Announce every round with kind='round.started' before doing it; "
                 "use 'note' or 'blocker' for the rest. kind='tool_call' with data = one turn {tool, args, output, error, "
                 "exit_code, thought, paths, score, ts} feeds the progress monitor, which whispers or pauses through the "
                 "supervisor field when the agent is going in circles.",
                 AppendEventInput, EventResult, lambda ws, r: _pair(ws.append_event(r), summaries.event)),
        ToolSpec("update_state", "Record a verified round",
                 "Record one verified round. verification_summary is required (no progress without evidence); "
                 "status='completed' runs the stop checks first and is refused while any fails.",
                 UpdateStateInput, RoundResult, lambda ws, r: _pair(ws.update_state(r), summaries.round_result), open_world=True),
        ToolSpec("check_stop", "Run the stop checks",
                 "Run every stop check (commands in the workspace, paths, text patterns) and the hard limits; "
                 "returns the verdict (continue, goal_met, limit_reached, completed, blocked, failed) and writes latest-stop-report.json.",
                 CheckStopInput, StopReport, lambda ws, r: _pair(ws.check_stop(r), summaries.stop_report), open_world=True),
        ToolSpec("report_status", "Broadcast progress",
                 "Refresh latest-status.txt and run-summary.md and append to status-history.jsonl: iteration k of max, "
                 "progress bar, recent round times, ETA, next task, last stop verdict.",
                 ReportStatusInput, StatusReport, lambda ws, r: _pair(ws.report_status(r), status_text)),
        ToolSpec("compact_state", "Compact the state window",
                 "Move older rounds out of state.json's rolling window (they stay in the ledgers) and trim the context snapshot.",
                 CompactStateInput, CompactResult, lambda ws, r: _pair(ws.compact_state(r), summaries.compact)),
        ToolSpec("rebuild_state", "Rebuild state from the ledgers",
                 "Reconstruct state.json from events.jsonl and iterations.jsonl after damage or a crash; reports what it fixed.",
                 RebuildStateInput, RebuildResult, lambda ws, r: _pair(ws.rebuild_state(r), summaries.rebuild)),
        ToolSpec("detect_spiral", "Check for a spiral",
                 "The progress monitor's verdict for a task: whether the agent is repeating itself without progress, the signals, "
                 "a diagnosis naming the root cause, the recent turns and what to do instead. Every turn sent with "
                 "append_event(kind='tool_call', data=<turn>) is evaluated as it arrives; this only reads the verdict. "
                 "With turns=[...] it evaluates that list from scratch and touches no state.",
                 DetectSpiralInput, SpiralVerdict, lambda ws, r: _pair(ws.detect_spiral(r), summaries.verdict), read_only=True),
        ToolSpec("list_tasks", "List loop tasks",
                 "List every loop task in the workspace with status and rounds done (including an original .codex-loop/).",
                 NoInput, TaskList, lambda ws, r: _list(ws), read_only=True, for_task=False),
        ToolSpec("show_task", "Show a task",
                 "A task's full state: contract, counters, next task, recent rounds, context snapshot and last stop report.",
                 ShowTaskInput, TaskView, lambda ws, r: _pair(ws.show_task(r), summaries.task_view), read_only=True),
    ]


def _pair(result: BaseModel, render: Callable[[Any], str]) -> tuple[BaseModel, str]:
    return result, render(result)


def _list(ws: Workspace) -> tuple[BaseModel, str]:
    tasks = ws.list_tasks()
    return TaskList(tasks=tasks), summaries.task_list(tasks)


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every local ``$ref`` replaced by its definition and ``$defs`` dropped.

    Several harnesses handle ``$ref`` poorly, and clients that re-validate
    structured results (the SDK's does, with jsonschema) pay for each lookup.
    The models are not recursive, so inlining terminates.
    """
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                merged = {**defs[ref[len("#/$defs/"):]], **{k: v for k, v in node.items() if k != "$ref"}}
                return walk(merged)
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = _inline(model.model_json_schema())
    schema.pop("title", None)
    return schema


class _Tools:
    """``tools/list`` and ``tools/call`` for the specs, bound to one workspace."""

    def __init__(self, ws: Workspace, specs: list[ToolSpec]) -> None:
        self.ws = ws
        self.specs = {spec.name: spec for spec in specs}
        self.tools = [_describe(spec) for spec in specs]
        self.schemas = {tool.name: tool.input_schema for tool in self.tools}

    async def list_tools(self, ctx: Ctx, params: Page) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools)

    async def call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = self.specs.get(params.name)
        if spec is None:
            return _failure(f"Unknown tool: {params.name}")
        try:
            return await anyio.to_thread.run_sync(functools.partial(self._run, spec, params.arguments or {}))
        except Exception:  # a bug, not bad input: the traceback stays in the server's log
            log.exception("Tool %r raised an unexpected exception", spec.name)
            return _failure(f"Error executing tool {spec.name}")

    def _run(self, spec: ToolSpec, arguments: dict[str, Any]) -> types.CallToolResult:
        ws = self.ws
        try:
            request = validate_input(spec.input_model, arguments, spec.name)
            result, text = spec.call(ws, request)
            payload = result.model_dump(mode="json")
            if spec.for_task:
                task_id = (getattr(result, "task_id", None) or getattr(getattr(result, "summary", None), "task_id", None)
                           or getattr(request, "task_id", None))
                if task_id is None and spec.name == "detect_spiral" and getattr(request, "turns", None) is None:
                    task_id = ws.resolve_task_id(None)
                supervisor = ws.supervisor(task_id)
                payload["supervisor"] = supervisor.model_dump(mode="json")
                text = _with_notes(text, supervisor)
        except LoopError as exc:  # the core maps every failure to LoopError (strict_loop.errors.boundary)
            return _failure(f"Error executing tool {spec.name}: {exc}")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=payload)


def _describe(spec: ToolSpec) -> types.Tool:
    output_model = _with_supervisor(spec.output_model) if spec.for_task else spec.output_model
    return types.Tool(
        name=spec.name, title=spec.title, description=spec.description,
        input_schema=_input_schema(spec.input_model), output_schema=_inline(output_model.model_json_schema()),
        annotations=types.ToolAnnotations(title=spec.title, read_only_hint=spec.read_only, destructive_hint=False,
                                          idempotent_hint=spec.read_only, open_world_hint=spec.open_world),
    )


def _failure(text: str) -> types.CallToolResult:
    """A result the agent reads and can act on; the text is one line, as the harness shows it."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _with_notes(text: str, supervisor: Supervisor) -> str:
    if supervisor.paused:
        text = "PAUSED by the supervisor: stop working and wait for a person.\n" + text
    for msg in supervisor.messages:
        text += f"\n[supervisor {msg.kind}] {msg.text}"
    return text


def build_server(workspace: str | Path = ".") -> Server:
    """A server bound to one workspace; nothing it writes leaves ``<workspace>/.agent-loop``."""
    ws = Workspace(workspace)
    content = MCPServer(name=NAME, version=__version__)  # declares the resources and prompts; never run itself
    _add_resources(content, ws)
    _add_prompts(content, ws)
    tools = _Tools(ws, _specs())
    return Server(NAME, version=__version__, instructions=INSTRUCTIONS, get_tool_input_schema=tools.schemas.get,
                  on_list_tools=tools.list_tools, on_call_tool=tools.call_tool, **_content_handlers(content),
                  on_subscriptions_listen=ListenHandler(InMemorySubscriptionBus()))  # as MCPServer serves by default


def _content_handlers(content: MCPServer) -> dict[str, Any]:
    """Low-level handlers serving the resources and prompts ``content`` declares, through its public methods."""

    async def list_resources(ctx: Ctx, params: Page) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=await content.list_resources())

    async def list_templates(ctx: Ctx, params: Page) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=await content.list_resource_templates())

    async def read_resource(ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult | types.InputRequiredResult:
        try:
            items = await content.read_resource(params.uri)
        except ResourceError as err:  # what MCPServer's own handler does: the message reaches the client
            if isinstance(err, UnexpectedResourceError):
                log.error("Resource %r raised an unexpected exception", str(params.uri), exc_info=err.__cause__)
            code = types.INVALID_PARAMS if isinstance(err, ResourceNotFoundError) else types.INTERNAL_ERROR
            raise MCPError(code=code, message=str(err), data={"uri": str(params.uri)}) from None
        if isinstance(items, types.InputRequiredResult):
            return items
        return types.ReadResourceResult(contents=[_resource_contents(params.uri, item) for item in items])

    async def list_prompts(ctx: Ctx, params: Page) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=await content.list_prompts())

    async def get_prompt(ctx: Ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult | types.InputRequiredResult:
        return await content.get_prompt(params.name, params.arguments)

    return {"on_list_resources": list_resources, "on_list_resource_templates": list_templates,
            "on_read_resource": read_resource, "on_list_prompts": list_prompts, "on_get_prompt": get_prompt}


def _resource_contents(uri: str, item: Any) -> types.TextResourceContents | types.BlobResourceContents:
    """One item from ``MCPServer.read_resource`` on the wire, as MCPServer's own handler renders it."""
    if isinstance(item.content, str):
        return types.TextResourceContents(uri=uri, text=item.content, mime_type=item.mime_type or "text/plain", _meta=item.meta)
    return types.BlobResourceContents(uri=uri, blob=base64.b64encode(item.content).decode(),
                                      mime_type=item.mime_type or "application/octet-stream", _meta=item.meta)


def _guard(read: Callable[[], str]) -> str:
    """Turn a refused read into a ResourceError whose message reaches the client."""
    try:
        return read()
    except LoopError as exc:
        raise ResourceError(str(exc)) from None


def _add_resources(server: MCPServer, ws: Workspace) -> None:
    @server.resource("loop://tasks", name="tasks", title="Loop tasks", mime_type="application/json")
    def tasks() -> str:
        """Every loop task in the workspace, with status and rounds done."""
        return _guard(lambda: json.dumps([t.model_dump(mode="json") for t in ws.list_tasks()], indent=2))

    @server.resource("loop://tasks/{task_id}/state", name="task-state", title="Task state", mime_type="application/json")
    def state(task_id: str) -> str:
        """A task's state.json (contract, counters, recent rounds, next task)."""
        return _guard(lambda: ws.show_task(task_id=task_id).state.model_dump_json(indent=2))

    @server.resource("loop://tasks/{task_id}/summary", name="task-summary", title="Run summary", mime_type="text/markdown")
    def summary(task_id: str) -> str:
        """A task's run-summary.md, as of its last report_status."""
        return _guard(lambda: ws.run_summary(task_id) or "(no run summary yet: call report_status)")

    @server.resource("loop://tasks/{task_id}/events", name="task-events", title="Recent events", mime_type="application/x-ndjson")
    def events(task_id: str) -> str:
        """The last 50 lines of a task's events.jsonl."""
        return _guard(lambda: "\n".join(ws.recent_events(task_id, 50)) + "\n")


def _add_prompts(server: MCPServer, ws: Workspace) -> None:
    def contract_lines(state: TaskState) -> str:
        c = state.contract
        checks = c.stop_checks.commands + c.stop_checks.paths_exist + c.stop_checks.text_patterns
        return (f"Goal: {c.goal}\nGlobal stop condition: {c.global_stop_condition}\n"
                f"Stop checks: {', '.join(checks) or '(none: completion is your recorded word)'}\n"
                f"Rounds done: {state.counters.iteration} of at most {c.limits.max_iterations}\n"
                f"Next task: {state.next_task or '(choose the smallest next step)'}")

    @server.prompt(name="strict_round", title="Run one strict round")
    def strict_round(task_id: str) -> str:
        """Run exactly one strict round of a loop task."""
        state = ws.show_task(task_id=task_id).state
        return (f"Run exactly one round of the strict loop for task '{state.task_id}'.\n\n{contract_lines(state)}\n\n"
                "1. Announce: call append_event with kind='round.started' and a message naming the round number, the one task "
                "and its done condition.\n2. Do exactly that one atomic task; nothing else.\n3. Verify it with evidence: run a "
                "command and read its output.\n4. Call update_state with task, result_summary, verification_summary (the command "
                "and what it printed), progress ('none' if the goal did not move), next_task and a short context_snapshot.\n"
                "5. Call check_stop; if should_stop is true, stop and report the verdict.\n6. Call report_status.\n"
                "If any result's supervisor field says paused, stop and wait.")

    @server.prompt(name="resume_task", title="Resume a task from disk")
    def resume_task(task_id: str) -> str:
        """Resume a loop task from its state on disk after lost context or a new session."""
        view = ws.show_task(task_id=task_id)
        state = view.state
        recent = "\n".join(f"- #{r.iteration} [{r.progress}, {r.status}] {r.task}: {r.result}" for r in state.recent_rounds) or "- (none)"
        pending = (f"\nRound {state.current_round.iteration} was announced but never recorded: '{state.current_round.message}'. "
                   "Check whether its work was done before redoing it.") if state.current_round else ""
        return (f"Resume loop task '{state.task_id}' from disk; do not rely on memory and do not call init_state again.\n\n"
                f"{contract_lines(state)}\nStatus: {state.status}\n\nContext snapshot:\n{state.context_snapshot or '(none)'}\n\n"
                f"Recent rounds:\n{recent}{pending}\n\nFull summary: {view.paths['run_summary']}\n"
                "Continue with the next task as a new round (round numbering continues).")


def _parse(argv: Optional[list[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="strict-loop-mcp", description="MCP server for strict-agent-loop (stdio by default).")
    p.add_argument("--workspace", default=".", metavar="DIR", help="workspace root holding .agent-loop/ (default: the current directory)")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1: loopback only)")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    p.add_argument("--version", action="version", version=f"strict-agent-loop {__version__}")
    return p.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> None:
    args = _parse(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        server = build_server(args.workspace)
    except LoopError as exc:
        print(f"strict-loop-mcp: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if args.http:
        import uvicorn

        uvicorn.run(server.streamable_http_app(host=args.host), host=args.host, port=args.port, log_level="info")
    else:
        anyio.run(_serve_stdio, server)


async def _serve_stdio(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
