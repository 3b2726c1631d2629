"""Resources and prompts: declared on an ``MCPServer`` and served by the low-level ``Server`` through its public
methods.

The ``MCPServer`` is never run itself; it only renders what it declares, as its own handlers would.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable
from typing import Any, Optional

import mcp_types as types
from mcp import MCPError
from mcp.server import ServerRequestContext as Ctx
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, UnexpectedResourceError

from strict_loop import LoopError, Workspace
from strict_loop.model.records import TaskState

Page = Optional[types.PaginatedRequestParams]
log = logging.getLogger("strict_loop.mcp")


def handlers(content: MCPServer) -> dict[str, Any]:
    """Low-level handlers serving the resources and prompts ``content`` declares, through its public methods."""

    async def list_resources(ctx: Ctx, params: Page) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=await content.list_resources())

    async def list_templates(ctx: Ctx, params: Page) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=await content.list_resource_templates())

    async def read_resource(
        ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
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

    async def get_prompt(
        ctx: Ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        return await content.get_prompt(params.name, params.arguments)

    return {
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_templates,
        "on_read_resource": read_resource,
        "on_list_prompts": list_prompts,
        "on_get_prompt": get_prompt,
    }


def _resource_contents(uri: str, item: Any) -> types.TextResourceContents | types.BlobResourceContents:
    """One item from ``MCPServer.read_resource`` on the wire, as MCPServer's own handler renders it."""
    if isinstance(item.content, str):
        return types.TextResourceContents(
            uri=uri, text=item.content, mime_type=item.mime_type or "text/plain", meta=item.meta
        )
    return types.BlobResourceContents(
        uri=uri,
        blob=base64.b64encode(item.content).decode(),
        mime_type=item.mime_type or "application/octet-stream",
        meta=item.meta,
    )


def _guard(read: Callable[[], str]) -> str:
    """Turn a refused read into a ResourceError whose message reaches the client."""
    try:
        return read()
    except LoopError as exc:
        raise ResourceError(str(exc)) from None


def add_resources(server: MCPServer, ws: Workspace) -> None:
    @server.resource("loop://tasks", name="tasks", title="Loop tasks", mime_type="application/json")
    def tasks() -> str:
        """Every loop task in the workspace, with status and rounds done."""
        return _guard(lambda: json.dumps([t.model_dump(mode="json") for t in ws.list_tasks()], indent=2))

    @server.resource(
        "loop://tasks/{task_id}/state", name="task-state", title="Task state", mime_type="application/json"
    )
    def state(task_id: str) -> str:
        """A task's state.json (contract, counters, recent rounds, next task)."""
        return _guard(lambda: ws.show_task(task_id=task_id).state.model_dump_json(indent=2))

    @server.resource(
        "loop://tasks/{task_id}/summary", name="task-summary", title="Run summary", mime_type="text/markdown"
    )
    def summary(task_id: str) -> str:
        """A task's run-summary.md, as of its last report_status."""
        return _guard(lambda: ws.run_summary(task_id) or "(no run summary yet: call report_status)")

    @server.resource(
        "loop://tasks/{task_id}/events", name="task-events", title="Recent events", mime_type="application/x-ndjson"
    )
    def events(task_id: str) -> str:
        """The last 50 lines of a task's events.jsonl."""
        return _guard(lambda: "\n".join(ws.recent_events(task_id, 50)) + "\n")

    @server.resource("loop://compute", name="compute", title="This machine's compute", mime_type="application/json")
    def compute_report() -> str:
        """GPUs (name, memory, use), CPU, memory, disk free in the workspace, the container runtime and whether it
        reaches a GPU: know the machine before planning a run. No GPU or Docker is an answer, not an error."""
        from strict_loop.dashboard import compute

        return _guard(lambda: compute.report(ws.root).model_dump_json(indent=2))


def add_prompts(server: MCPServer, ws: Workspace) -> None:
    def contract_lines(state: TaskState) -> str:
        c = state.contract
        checks = c.stop_checks.commands + c.stop_checks.paths_exist + c.stop_checks.text_patterns
        return (
            f"Goal: {c.goal}\nGlobal stop condition: {c.global_stop_condition}\n"
            f"Stop checks: {', '.join(checks) or '(none: completion is your recorded word)'}\n"
            f"Rounds done: {state.counters.iteration} of at most {c.limits.max_iterations}\n"
            f"Next task: {state.next_task or '(choose the smallest next step)'}"
        )

    @server.prompt(name="strict_round", title="Run one strict round")
    def strict_round(task_id: str) -> str:
        """Run exactly one strict round of a loop task."""
        state = ws.show_task(task_id=task_id).state
        return (
            f"Run exactly one round of the strict loop for task '{state.task_id}'.\n\n{contract_lines(state)}\n\n"
            "1. Announce: call append_event with kind='round.started' and a message naming the round number, the "
            "one task and its done condition.\n2. Do exactly that one atomic task; nothing else.\n3. Verify it with "
            "evidence: run a command and read its output.\n4. Call update_state with task, result_summary, "
            "verification_summary (the command and what it printed), progress ('none' if the goal did not move), "
            "next_task and a short context_snapshot. If its stop.should_stop is true, stop and report the verdict.\n"
            "If any result's supervisor field says paused, stop and wait."
        )

    @server.prompt(name="resume_task", title="Resume a task from disk")
    def resume_task(task_id: str) -> str:
        """Resume a loop task from its state on disk after lost context or a new session."""
        view = ws.show_task(task_id=task_id)
        state = view.state
        recent = (
            "\n".join(f"- #{r.iteration} [{r.progress}, {r.status}] {r.task}: {r.result}" for r in state.recent_rounds)
            or "- (none)"
        )
        pending = (
            (
                f"\nRound {state.current_round.iteration} was announced but never recorded: "
                f"'{state.current_round.message}'. Check whether its work was done before redoing it."
            )
            if state.current_round
            else ""
        )
        return (
            f"Resume loop task '{state.task_id}' from disk; do not rely on memory and do not call init_state "
            "again.\n\n"
            f"{contract_lines(state)}\nStatus: {state.status}\n\nContext snapshot:\n"
            f"{state.context_snapshot or '(none)'}\n\n"
            f"Recent rounds:\n{recent}{pending}\n\nFull summary: {view.paths['run_summary']}\n"
            "Continue with the next task as a new round (round numbering continues)."
        )
