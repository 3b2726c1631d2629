"""The dashboard's Starlette app: the JSON API, the two HTML pages, the static files and the live stream.

Why the answers go through ``Workspace.resume``: a pause answered on the page must leave the records the CLI leaves
(``strict-loop resume``), visible at once to the CLI, MCP and the hooks. ``wait`` records nothing: keeping the task
paused is what not answering does, and a page view is not an event of the loop.

Why every handler's work runs in a worker thread (``off_loop``): the page and ``strict-loop-mcp --http`` share one
event loop, so a rollback's git run in a handler held every agent's ``/mcp`` call until it ended (issue 26).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, TypeVar

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from strict_loop.base import masking
from strict_loop.base.errors import LoopError, TaskNotFound
from strict_loop.base.jsontext import parse_json
from strict_loop.base.layout import check_task_id
from strict_loop.dashboard import compute, detail, overview, pages
from strict_loop.dashboard.guard import Access, Guard
from strict_loop.dashboard.live import Watcher
from strict_loop.dashboard.texts import shorten
from strict_loop.loop.monitoring import StaleAnswer
from strict_loop.loop.workspace import Workspace

STATIC = Path(__file__).parent / "static"
ACTIONS = ("continue", "rollback", "hand-back", "wait")
MAX_BODY_BYTES = 16_384
_WS_ID = re.compile(r"^[0-9a-f]{12}$")
T = TypeVar("T")


@dataclass
class Config:
    """What ``strict-loop dashboard`` (or ``strict-loop-mcp --http``) serves."""

    access: Access
    only: Optional[Path] = None  # --workspace: this one only
    index_dir: Optional[Path] = None  # the per-user index's folder (default: the config folder)


class Problem(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Answer(JSONResponse):
    """JSON that always renders: text that is no UTF-8 (a lone surrogate from a ``\\udc80`` escape or a file name)
    as escapes, a number that is not finite (NaN from a ledger line) as null; strict rendering made either a 500."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except ValueError:  # UnicodeEncodeError included
            return super().render(printable(content))


def printable(node: Any) -> Any:
    if isinstance(node, str):
        return node.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(node, float) and not math.isfinite(node):
        return None
    if isinstance(node, dict):
        return {printable(str(k)): printable(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [printable(v) for v in node]
    return node


async def off_loop(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` in a worker thread: a file read, a git run (a rollback, a preview) or a large answer's rendering
    never holds the event loop, which every other request of the process waits on (``strict-loop-mcp --http``: every
    agent's ``/mcp`` call)."""
    return await anyio.to_thread.run_sync(functools.partial(work, *args))


def answer(data: Any, status: int = 200, headers: Optional[dict[str, str]] = None) -> JSONResponse:
    """Every JSON answer masked: no secret of this environment leaves the server."""
    return Answer(masking.mask_tree(data), status_code=status, headers=headers)


async def read_capped(request: Request, cap: int) -> bytes:
    """The body, read no further than ``cap`` bytes: a larger one, declared or chunked, is a 413 at once (and the
    connection closed), never held in memory whole first."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise Problem(413, f"the answer is over {cap} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise Problem(413, f"the answer is over {cap} bytes")
    return bytes(body)


class Dashboard:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.watcher = Watcher(self.roots)

    def roots(self) -> dict[str, Path]:
        return overview.roots(self.config.only, self.config.index_dir)

    def locate(self, ws: str, task: str) -> tuple[Path, str]:
        if not _WS_ID.fullmatch(ws):
            raise Problem(404, f"no workspace {shorten(ws, 40)!r}: use a link from the overview")
        try:
            check_task_id(task)
        except ValueError as exc:
            raise Problem(404, str(exc)) from None
        root = self.roots().get(ws)
        if root is None:
            lost = overview.gone(self.config.only, self.config.index_dir).get(ws)
            raise Problem(404, overview.shown(lost.describe()) if lost else f"no workspace {ws!r} in the index")
        return root, task

    async def page_overview(self, request: Request) -> Response:
        return HTMLResponse(pages.overview(self.config.access))

    async def page_task(self, request: Request) -> Response:
        ws, task = request.path_params["ws"], request.path_params["task"]
        await off_loop(self.locate, ws, task)
        return HTMLResponse(pages.task(self.config.access, ws, task))

    async def api_overview(self, request: Request) -> Response:
        return await off_loop(self.overview_json)

    def overview_json(self) -> Response:
        data = overview.overview(self.config.only, self.config.index_dir)
        return answer({**data, "read_only": self.config.access.read_only})

    async def api_task(self, request: Request) -> Response:
        return await off_loop(self.task_json, request.path_params["ws"], request.path_params["task"])

    def task_json(self, ws: str, task: str) -> Response:
        root, task = self.locate(ws, task)
        return answer({**detail.task(ws, root, task), "read_only": self.config.access.read_only})

    async def api_preview(self, request: Request) -> Response:
        try:
            to = int(request.path_params["n"])
        except ValueError:
            raise Problem(400, "the round must be a whole number") from None
        return await off_loop(self.preview_json, request.path_params["ws"], request.path_params["task"], to)

    def preview_json(self, ws: str, task: str, to: int) -> Response:
        root, task = self.locate(ws, task)
        return answer(detail.rollback_preview(root, task, to))

    async def api_answer(self, request: Request) -> Response:
        root, task = await off_loop(self.locate, request.path_params["ws"], request.path_params["task"])
        body = await read_capped(request, MAX_BODY_BYTES)
        try:
            req = parse_json(body or b"{}")  # depth-capped, no NaN: a hostile body is a 400, never a 500
        except ValueError as exc:
            raise Problem(400, f'the body {exc}; send JSON: {{"action": ..., "note": ..., "to": ...}}') from None
        if not isinstance(req, dict) or req.get("action") not in ACTIONS:
            raise Problem(400, f"action: must be one of {', '.join(ACTIONS)}")
        note = req.get("note", "")
        if not isinstance(note, str):
            raise Problem(400, "note: must be text")
        if req["action"] == "wait":
            return answer({"task_id": task, "action": "wait", "detail": "nothing recorded: the task stays paused"})
        if not isinstance(req.get("pause"), str):  # bound to the pause shown: a second tab's answer is stale (409)
            raise Problem(400, "pause: the id of the pause this answers, as the page shows it (reload the page)")
        params: dict[str, Any] = {"task_id": task, "action": req["action"], "note": note, "pause_id": req["pause"]}
        if req.get("to") is not None:
            if type(req["to"]) is not int:  # true is not round 1
                raise Problem(400, "to: must be a round number")
            params["to"] = req["to"]
        return await off_loop(self.resume, root, params)

    def resume(self, root: Path, params: dict[str, Any]) -> Response:
        try:
            result = Workspace(root).resume(**params)  # a rollback: git over the whole tree
        except StaleAnswer as exc:
            raise Problem(409, f"{exc.problem}: reload the page") from None
        return answer(result.model_dump(mode="json"))

    async def api_budget(self, request: Request) -> Response:
        """A person's raise of the task's budgets (the guard let only a POST with the answer key through): the body
        holds ``strict-loop budget``'s fields; a task its budget paused goes on when none is spent any more."""
        root, task = await off_loop(self.locate, request.path_params["ws"], request.path_params["task"])
        body = await read_capped(request, MAX_BODY_BYTES)
        try:
            req = parse_json(body or b"{}")
        except ValueError as exc:
            raise Problem(
                400, f'the body {exc}; send JSON: {{"max_tool_calls": ..., "max_wall_time_s": ...}}'
            ) from None
        if not isinstance(req, dict):
            raise Problem(400, 'send a JSON object: {"max_tool_calls": ..., "max_wall_time_s": ...}')
        return await off_loop(self.raise_budget, root, {**req, "task_id": task})

    def raise_budget(self, root: Path, params: dict[str, Any]) -> Response:
        from strict_loop.harness.spend import raise_budget
        from strict_loop.model.budgets import BudgetInput
        from strict_loop.model.validation import validate_input

        req = validate_input(BudgetInput, params, "budget")
        work = Workspace(root)
        result = raise_budget(work.task_store(req.task_id), work.root, req, "a person (the page)")
        return answer(result.model_dump(mode="json"))

    async def api_compute(self, request: Request) -> Response:
        where = self.config.only or Path.home()
        rep = await off_loop(compute.report, where, 3.0)
        return answer(rep.model_dump(mode="json"))

    async def events(self, request: Request) -> Response:
        return StreamingResponse(
            self.watcher.stream(), media_type="text/event-stream", headers={"x-accel-buffering": "no"}
        )


async def _problem(request: Request, exc: Exception) -> Response:
    if isinstance(exc, Problem):  # after a 413 the rest of the body is not read: the connection ends with it
        return answer({"error": str(exc)}, exc.status, {"connection": "close"} if exc.status == 413 else None)
    if isinstance(exc, TaskNotFound):
        return answer({"error": str(exc)}, 404)
    assert isinstance(exc, LoopError)
    return answer({"error": str(exc), "field": exc.field, "fix": exc.fix}, 400)


def build(config: Config) -> Any:
    """The app behind its guard (Host, Origin, token, page token, read-only)."""
    d = Dashboard(config)
    routes = [
        Route("/", d.page_overview),
        Route("/task/{ws}/{task}", d.page_task),
        Route("/api/overview", d.api_overview),
        Route("/api/compute", d.api_compute),
        Route("/api/task/{ws}/{task}", d.api_task),
        Route("/api/task/{ws}/{task}/rollback/{n}", d.api_preview),
        Route("/api/task/{ws}/{task}/answer", d.api_answer, methods=["POST"]),
        Route("/api/task/{ws}/{task}/budget", d.api_budget, methods=["POST"]),
        Route("/events", d.events),
        Route("/favicon.ico", pages.favicon),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={Problem: _problem, LoopError: _problem})
    app.state.dashboard = d
    return Guard(app, config.access)
