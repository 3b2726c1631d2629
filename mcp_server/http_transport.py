"""Streamable HTTP: who may reach the server, and how many sessions it keeps.

Per the MCP spec's transport rules (validate Origin, bind to localhost, authenticate): every request's Host and Origin
are checked whatever the bind address (the SDK's ``TransportSecuritySettings``), an address outside loopback is refused
at start unless a bearer token is set, and with a token every request without it gets 401. Sessions expire when idle,
and their number is capped by closing the least recently used idle one, so a client that never closes its sessions
cannot lock everyone else out.
"""

from __future__ import annotations

import argparse
import hmac
import logging
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Optional

import anyio
from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings

from strict_loop import LoopError
from strict_loop.dashboard.guard import (
    MIN_TOKEN_CHARS,
    TOKEN_ENV,
    Access,
    allowed_hosts,
    host_values,
    is_loopback,
    listen,
    read_token,
    serve_on,
)

__all__ = ["TOKEN_ENV", "allowed_hosts", "is_loopback"]

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # one request body; the stdio transport caps a line the same
SESSION_HEADER = "mcp-session-id"
log = logging.getLogger("strict_loop.mcp")

Scope = dict[str, Any]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="HTTP bind address (default 127.0.0.1: loopback only); "
        f"any other address needs a token ({TOKEN_ENV} or --token-file)",
    )
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help=f"file holding the bearer token every request must carry "
        f"(instead of {TOKEN_ENV}); at least {MIN_TOKEN_CHARS} characters",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="another Host header value to accept besides the bind address and localhost (repeatable)",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=100,
        metavar="N",
        help="open HTTP sessions kept at once; a new one closes the least recently used idle one (default 100)",
    )
    p.add_argument(
        "--session-idle-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="an HTTP session with no request for this long is closed (default 600)",
    )


@dataclass(frozen=True)
class HttpSettings:
    host: str
    port: int
    token: Optional[str] = field(repr=False)  # never printed
    allowed_hosts: tuple[str, ...]
    max_sessions: int
    idle_timeout: float


def settings(args: argparse.Namespace) -> HttpSettings:
    """Validate the HTTP options; refuses (LoopError) before anything binds."""
    if not 1 <= args.port <= 65535:
        raise LoopError("--port", f"{args.port} is not a TCP port", "give a port from 1 to 65535")
    if args.max_sessions < 1:
        raise LoopError("--max-sessions", f"must be at least 1, not {args.max_sessions}", "give a positive number")
    if not 0 < args.session_idle_timeout < float("inf"):
        raise LoopError(
            "--session-idle-timeout",
            f"must be a positive number of seconds, not {args.session_idle_timeout}",
            "give e.g. 600",
        )
    token = read_token(args.token_file)
    if token is None and not is_loopback(args.host):
        raise LoopError(
            "--host",
            f"{args.host} is reachable from other machines and no token is set",
            f"bind 127.0.0.1, or set {TOKEN_ENV} (or --token-file FILE) to a secret of at least "
            f"{MIN_TOKEN_CHARS} characters that clients send as 'Authorization: Bearer <token>'",
        )
    return HttpSettings(
        args.host,
        args.port,
        token,
        allowed_hosts(args.host, args.port, args.allow_host),
        args.max_sessions,
        args.session_idle_timeout,
    )


def build_app(server: Server, http: HttpSettings) -> Any:
    """The SDK's streamable HTTP app with Host/Origin checks for every bind address, inside our session cap and auth."""
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(http.allowed_hosts),
        allowed_origins=[f"{scheme}://{value}" for value in http.allowed_hosts for scheme in ("http", "https")],
    )
    sdk_app = server.streamable_http_app(
        host=http.host,
        transport_security=security,
        max_request_body_size=MAX_MESSAGE_BYTES,
        session_idle_timeout=http.idle_timeout,
        max_sessions=2 * http.max_sessions,
    )
    app = SessionCap(sdk_app, http.max_sessions, http.idle_timeout)
    mcp_app = BearerAuth(app, http.token) if http.token else app
    from strict_loop.dashboard import server as dashboard

    page = dashboard.build(dashboard.Config(Access(http.allowed_hosts, http.token)))
    return BesideMcp(mcp_app, page)


class BesideMcp:
    """``/mcp`` (and the lifespan, which runs the SDK's session manager) to the MCP app, every other path to the
    dashboard (its own guard: Host, Origin, the token by header or cookie, the page token for answers)."""

    def __init__(self, mcp_app: Any, page: Any) -> None:
        self.mcp_app, self.page = mcp_app, page

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == "/mcp" or path.startswith("/mcp/"):
            await self.mcp_app(scope, receive, send)
        else:
            await self.page(scope, receive, send)


def serve(server: Server, http: HttpSettings) -> None:
    """Bind (a port in use is a LoopError: exit 2), announce, then serve until interrupted."""
    sock = listen(http.host, http.port)
    auth = "a bearer token is required" if http.token else "no token (loopback only)"
    print(
        f"strict-loop-mcp: serving http://{host_values(http.host, http.port)[0]}/mcp (and the dashboard at /); {auth}; "
        f"accepted Host values: {', '.join(http.allowed_hosts)} (add more with --allow-host)",
        file=sys.stderr,
    )
    serve_on(sock, build_app(server, http), "info")


class BearerAuth:
    """401 for every request that does not carry ``Authorization: Bearer <token>``; compared in constant time."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = token.encode("ascii")

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket" and not self._authorized(scope):
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] == "http" and not self._authorized(scope):
            body = b'{"error":"unauthorized: send the header Authorization: Bearer <token>"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="strict-loop-mcp"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        values = [v for k, v in scope.get("headers", []) if k == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, presented = values[0].partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(presented.strip(), self.expected)


@dataclass
class _Seen:
    busy: int
    last: float
    streams: int = 0  # of the requests in flight, the GET streams that only listen


class SessionCap:
    """Keeps at most ``cap`` sessions: when a new one pushes past it, the least recently used idle one is closed.

    The SDK alone refuses every new session (503) once its limit is reached, until old ones idle out; a client that
    opens sessions and never closes them would lock everyone out for the idle timeout. Sessions are closed the way a
    client closes one (a DELETE through the app), and only after the new one was accepted (its Host, Origin and
    initialize passed), so a refused request never costs anyone a session. A session with a call in flight is never
    closed; one whose only requests in flight are GET streams (listening, not working) is closed after the idle ones,
    least recently used first, so held streams cannot lock new sessions out. The SDK's own limit, set at twice
    ``cap``, stays as the backstop.
    """

    def __init__(self, app: Any, cap: int, idle_timeout: float) -> None:
        self.app = app
        self.cap = cap
        self.idle_timeout = idle_timeout
        self.sessions: OrderedDict[str, _Seen] = OrderedDict()  # least recently used first

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sid = _header(scope.get("headers", []), SESSION_HEADER)
        if sid is None:
            await self._open(scope, receive, send)
            return
        seen = self.sessions.get(sid)
        status: list[int] = []

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        listening = scope["method"] == "GET"
        if seen:
            seen.busy += 1
            seen.streams += listening
            self.sessions.move_to_end(sid)
        try:
            await self.app(scope, receive, watch)
        finally:
            if seen:
                seen.streams -= listening
                self._release(sid, seen)
            if status and (status[0] == 404 or (scope["method"] == "DELETE" and status[0] < 400)):
                self.sessions.pop(sid, None)  # ended or unknown to the SDK

    async def _open(self, scope: Scope, receive: Any, send: Any) -> None:
        opened: list[tuple[str, _Seen]] = []

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                sid = _header(message.get("headers", []), SESSION_HEADER)
                if sid is not None:
                    seen = self.sessions[sid] = _Seen(busy=1, last=anyio.current_time())
                    opened.append((sid, seen))
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            for sid, seen in opened:
                self._release(sid, seen)
        if opened:
            await self._shrink(scope, keep=opened[0][0])

    def _release(self, sid: str, seen: _Seen) -> None:
        seen.busy -= 1
        seen.last = anyio.current_time()
        if sid in self.sessions:
            self.sessions.move_to_end(sid)

    async def _shrink(self, scope: Scope, keep: str) -> None:
        """Close sessions until at most ``cap`` are left, never ``keep`` (the one just opened)."""
        now = anyio.current_time()
        for sid, seen in list(self.sessions.items()):
            if not seen.busy and now - seen.last > self.idle_timeout:
                del self.sessions[sid]  # the SDK has closed it already
        while len(self.sessions) > self.cap:
            others = [(sid, seen) for sid, seen in self.sessions.items() if sid != keep]
            victim = next((sid for sid, seen in others if not seen.busy), None)
            if victim is None:  # then a session that only listens: its stream ends with it
                victim = next((sid for sid, seen in others if seen.busy == seen.streams), None)
            if victim is None:
                return
            del self.sessions[victim]
            await self._close(scope, victim)
            log.info("closed the least recently used idle HTTP session to stay within --max-sessions %d", self.cap)

    async def _close(self, scope: Scope, sid: str) -> None:
        """DELETE the session through the app, with the Host and Origin of the request that was just accepted."""
        headers = [(k, v) for k, v in scope["headers"] if k in (b"host", b"origin")] + [
            (SESSION_HEADER.encode(), sid.encode())
        ]
        request = {**scope, "method": "DELETE", "headers": headers, "query_string": b""}
        messages = [{"type": "http.request", "body": b"", "more_body": False}]

        async def receive() -> dict[str, Any]:
            return messages.pop() if messages else {"type": "http.disconnect"}

        async def discard(message: dict[str, Any]) -> None:
            pass

        with anyio.CancelScope(shield=True):
            await self.app(request, receive, discard)


def _header(headers: list[tuple[bytes, bytes]], name: str) -> Optional[str]:
    key = name.encode()
    return next((v.decode("latin-1") for k, v in headers if k.lower() == key), None)
