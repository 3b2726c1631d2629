"""The MCP adapter: each tool validates with the core's input model and calls the Workspace method of the same name.

Tools are served by the SDK's public low-level ``Server``, made for exact schemas: ``tools/list`` advertises each core
model's own JSON Schema (written down in ``tool_schemas.json``: ``toolschemas.py``), and ``tools/call`` hands the raw
arguments to the core's validator, so bad input is reported with the core's one-line message (field, problem, fix) in
an ``isError`` result, not as a pydantic dump. Resources and prompts are declared on an ``MCPServer`` and served
through its public methods (``content.py``); the transports are ``stdio_transport.py`` and ``http_transport.py``. No
SDK internals are used.
"""

from __future__ import annotations

import argparse
import functools
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server import ServerRequestContext as Ctx
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from pydantic import BaseModel, ConfigDict

from strict_loop import LoopError, Workspace, __version__
from strict_loop.base.layout import find_root
from strict_loop.loop import operations
from strict_loop.loop.operations import Operation
from strict_loop.model.validation import validate_input

from . import http_transport, stdio_transport
from .content import add_prompts, add_resources, handlers

NAME = "strict-agent-loop"
Page = Optional[types.PaginatedRequestParams]
log = logging.getLogger("strict_loop.mcp")  # crashes are logged here; the client only sees that the call failed
MAX_STOP_CHECKS = 4  # tool calls running stop-check commands at once; more wait their turn
WRITE_THREADS, READ_THREADS = 16, 8  # threads for the other tools, reads apart so they are never starved

INSTRUCTIONS = """\
Strict agent loop: one small, verified task per round; the loop's state lives on disk.
A round: append_event(kind='round.started') -> do one atomic task -> verify it -> update_state, whose result
says whether to stop (stop.should_stop) and the status line. Define the contract once with init_state;
resume with list_tasks/show_task. Read every result's 'supervisor' field: if paused, stop and wait for a person."""


class NoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: an operation of the core's table (``strict_loop.loop.operations``) as the server serves it."""

    name: str
    title: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    call: Callable[[Workspace, Any], tuple[BaseModel, str]]
    read_only: bool = False
    destructive: bool = False  # may replace or discard what is there (clients ask before calling)
    open_world: bool = False  # reaches beyond the workspace files: runs the contract's commands, posts alerts
    runs_checks: Callable[[dict[str, Any]], bool] = lambda arguments: False  # these arguments run stop-check commands


def tool_specs() -> list[ToolSpec]:
    """The tools: every operation of the table that has a tool description; every result about a task carries the
    core's ``supervisor`` field, and its text the monitor's lines."""
    return [
        ToolSpec(
            op.name,
            op.title,
            op.tool,
            op.request or NoInput,
            op.result,
            functools.partial(_answer, op),
            read_only=op.read_only,
            destructive=op.destructive,
            open_world=op.open_world,
            runs_checks=op.runs_checks,
        )
        for op in operations.OPERATIONS
        if op.tool is not None
    ]


def _answer(op: Operation, ws: Workspace, request: Any) -> tuple[BaseModel, str]:
    """The structured result and its text for one call (list_tasks takes no request)."""
    result = op.call(ws, request)
    return op.structured(result), op.answer(result)


class _Tools:
    """``tools/list`` and ``tools/call`` for the specs, bound to one workspace.

    Tools run in worker threads, in three lanes of bounded size: calls that run stop-check commands (which may take
    minutes), other writes, and reads. A burst of slow checks then queues in its own lane instead of taking every
    thread, so ``list_tasks`` and ``show_task`` always have one.
    """

    def __init__(self, ws: Workspace, specs: list[ToolSpec], max_stop_checks: int = MAX_STOP_CHECKS) -> None:
        self.ws = ws
        self.specs = {spec.name: spec for spec in specs}
        from . import toolschemas  # here: `python -m mcp_server.toolschemas` runs it before anything imports it

        known = toolschemas.load()  # the schemas as data: making them from the models costs every start
        self.tools = [_describe(spec, toolschemas.schemas(spec, known)) for spec in specs]
        self.schemas = {tool.name: tool.input_schema for tool in self.tools}
        self.checks, self.writes, self.reads = (
            anyio.CapacityLimiter(n) for n in (max_stop_checks, WRITE_THREADS, READ_THREADS)
        )

    def _lane(self, spec: ToolSpec, arguments: dict[str, Any]) -> anyio.CapacityLimiter:
        if spec.read_only:
            return self.reads
        return self.checks if spec.runs_checks(arguments) else self.writes

    async def list_tools(self, ctx: Ctx, params: Page) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools)

    async def call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = self.specs.get(params.name)
        if spec is None:
            return _failure(f"Unknown tool: {params.name}")
        arguments = params.arguments or {}
        try:
            return await anyio.to_thread.run_sync(
                functools.partial(self._run, spec, arguments), limiter=self._lane(spec, arguments)
            )
        except Exception:  # a bug, not bad input: the traceback stays in the server's log
            log.exception("Tool %r raised an unexpected exception", spec.name)
            return _failure(f"Error executing tool {spec.name}")

    def _run(self, spec: ToolSpec, arguments: dict[str, Any]) -> types.CallToolResult:
        ws = self.ws
        try:
            request = validate_input(spec.input_model, arguments, spec.name)
            result, text = spec.call(ws, request)
            payload = result.model_dump(mode="json")
        except LoopError as exc:  # the core maps every failure to LoopError (strict_loop.base.errors.boundary)
            return _failure(f"Error executing tool {spec.name}: {exc}")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=payload)


def _describe(spec: ToolSpec, schemas: tuple[dict[str, Any], dict[str, Any]]) -> types.Tool:
    input_schema, output_schema = schemas
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.read_only,
            open_world_hint=spec.open_world,
        ),
    )


def _failure(text: str) -> types.CallToolResult:
    """A result the agent reads and can act on; the text is one line, as the harness shows it."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def build_server(workspace: str | Path = ".", *, max_stop_checks: int = MAX_STOP_CHECKS) -> Server:
    """A server bound to one workspace; nothing it writes leaves ``<workspace>/.agent-loop``."""
    ws = Workspace(workspace)
    content = MCPServer(name=NAME, version=__version__)  # declares the resources and prompts; never run itself
    add_resources(content, ws)
    add_prompts(content, ws)
    tools = _Tools(ws, tool_specs(), max_stop_checks)
    return Server(
        NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=tools.schemas.get,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
        **handlers(content),
        on_subscriptions_listen=ListenHandler(InMemorySubscriptionBus()),
    )  # as MCPServer serves by default


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="strict-loop-mcp", description="MCP server for strict-agent-loop (stdio by default)."
    )
    p.add_argument(
        "--workspace",
        metavar="DIR",
        help="workspace root holding .agent-loop/ (default: the nearest folder at or above the current directory "
        "holding .agent-loop/, as the hook finds it; else the current directory)",
    )
    p.add_argument(
        "--max-stop-checks",
        type=_positive,
        default=MAX_STOP_CHECKS,
        metavar="N",
        help=f"tool calls that run stop-check commands at once; the rest wait (default {MAX_STOP_CHECKS})",
    )
    http_transport.add_arguments(p)
    p.add_argument("--version", action="version", version=f"strict-agent-loop {__version__}")
    args = p.parse_args(argv)
    if args.workspace is None:  # started in a subfolder of a workspace: serve that workspace, as the hook and CLI do
        args.workspace = str(find_root(Path.cwd()) or ".")
    return args


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main(argv: Optional[list[str]] = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        http = http_transport.settings(args) if args.http else None  # refuses an unsafe start before anything is built
        server = build_server(args.workspace, max_stop_checks=args.max_stop_checks)
    except LoopError as exc:
        print(f"strict-loop-mcp: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    from strict_loop.alerts import outbox

    outbox.kick(Path(args.workspace).resolve())  # an alert a dead process left pending goes out now
    from strict_loop.telemetry import export

    export.start(Path(args.workspace).resolve())  # OTLP telemetry of the loop, when OTEL_* configures it
    if http is not None:
        try:
            http_transport.serve(server, http)
        except LoopError as exc:  # the port is taken: said before anything is announced
            print(f"strict-loop-mcp: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    else:
        anyio.run(stdio_transport.serve, server)
