"""Who may reach the page and who may answer a pause from it (SECURITY.md, "The dashboard").

Every request: its Host must be one the server answers to and its Origin (when sent) one of those too, so that a
DNS-rebinding page or another site cannot read or drive it. With a bearer token (any bind off loopback): the token in
``Authorization``, or the HttpOnly SameSite=Strict cookie a browser got by opening ``?token=`` once. Every POST: the
per-process page token (embedded in the served HTML) in a header and a same-origin Origin, so a page elsewhere cannot
forge an answer (no CSRF), and nothing at all in read-only mode. An answer also needs the person's answer key: the
HttpOnly cookie a browser got by opening the link ``strict-loop dashboard`` printed in the person's terminal
(``?answer=``), which neither the page (``GET /``), nor the MCP token an agent's harness holds, gives away; a page
started without one (``strict-loop-mcp --http``) takes no answer.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qsl, urlencode

from strict_loop.base.errors import LoopError
from strict_loop.dashboard.texts import shorten

Scope = MutableMapping[str, Any]
ASGI = Callable[[Scope, Any, Any], Awaitable[None]]
TOKEN_ENV = "STRICT_LOOP_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
COOKIE = "strict_loop_dashboard"
ANSWER_COOKIE = "strict_loop_answer"
PAGE_HEADER = "x-strict-loop-page"
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        b"base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


@dataclass(frozen=True)
class Access:
    """What the guard checks: the Host values, the bearer token (None on loopback), read-only, the page token."""

    allowed_hosts: tuple[str, ...]
    token: Optional[str] = field(default=None, repr=False)
    read_only: bool = False
    page_token: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)
    answer_key: Optional[str] = field(default=None, repr=False)  # None: no answer is taken


def header(scope: Scope, name: str) -> Optional[str]:
    key = name.encode()
    values = [v for k, v in scope.get("headers", []) if k.lower() == key]
    return values[0].decode("latin-1") if len(values) == 1 else None


def cookie(scope: Scope, name: str) -> Optional[str]:
    raw = header(scope, "cookie") or ""
    for part in raw.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def is_loopback(host: str) -> bool:
    """Only a literal loopback address or ``localhost`` counts; any other name may resolve anywhere."""
    if host.lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or bool(mapped and mapped.is_loopback)


def read_token(token_file: Optional[str]) -> Optional[str]:
    """The token from --token-file, else from the environment (then dropped from it, so no child inherits it)."""
    where = "--token-file" if token_file else TOKEN_ENV
    raw: Optional[str]
    if token_file:
        try:
            raw = Path(token_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LoopError(
                "--token-file",
                f"cannot be read ({getattr(exc, 'strerror', None) or type(exc).__name__})",
                "name a readable file holding the token",
            ) from None
        os.environ.pop(TOKEN_ENV, None)
    else:
        raw = os.environ.pop(TOKEN_ENV, None)
        if raw is None:
            return None
    token = raw.strip()
    if len(token) < MIN_TOKEN_CHARS or not all("\x21" <= ch <= "\x7e" for ch in token):
        raise LoopError(
            where,
            f"the token must be at least {MIN_TOKEN_CHARS} printable ASCII characters without spaces",
            "generate one: python -c 'import secrets; print(secrets.token_urlsafe(32))'",
        )
    return token


def allowed_hosts(host: str, port: int, extra: list[str]) -> tuple[str, ...]:
    """Host header values to accept: the bind address and the localhost forms, with the port, plus ``extra``."""
    names = ["127.0.0.1", "localhost", "::1", *extra]
    if not _unspecified(host):  # 0.0.0.0 and :: are never a Host value; name the machine with --allow-host
        names.insert(0, host)
    values: list[str] = []
    for name in names:
        for value in host_values(name, port):
            if value not in values:
                values.append(value)
    return tuple(values)


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def host_values(name: str, port: int) -> list[str]:
    if name.startswith("[") and "]:" in name or (":" in name and name.count(":") == 1):
        return [name.lower()]  # already carries its port
    bare = name.strip("[]").lower()
    shown = f"[{bare}]" if ":" in bare else bare
    return [f"{shown}:{port}"] + ([shown] if port == 80 else [])


class Guard:
    """ASGI middleware in front of the dashboard's app."""

    def __init__(self, app: ASGI, access: Access) -> None:
        self.app = app
        self.access = access
        self.origins = {f"{s}://{h}" for h in access.allowed_hosts for s in ("http", "https")}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            if scope["method"] not in ("GET", "HEAD"):
                await drain(receive)
            await reply(send, *refusal)
            return
        if self._query_token(scope) or self._query(scope, "answer", self.access.answer_key):
            await self._set_cookie(scope, send)
            return

        async def secured(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, secured)

    def refusal(self, scope: Scope) -> Optional[tuple[int, str]]:
        """(status, message) of a request to refuse, or None."""
        host = (header(scope, "host") or "").lower()
        if host not in self.access.allowed_hosts:
            return 421, f"the Host header {shorten(host, 100)!r} is not one this server answers to (see --allow-host)"
        origin = header(scope, "origin")
        if origin is not None and origin.lower() not in self.origins:
            return 403, "cross-origin request refused"
        if self.access.token and not (self._bearer(scope) or self._query_token(scope)):
            return 401, "unauthorized: open the page once as /?token=<token>, or send Authorization: Bearer <token>"
        if scope["method"] not in ("GET", "HEAD"):
            return self._post_refusal(scope, origin, host)
        return None

    def _post_refusal(self, scope: Scope, origin: Optional[str], host: str) -> Optional[tuple[int, str]]:
        if self.access.read_only:
            return 403, "this dashboard is read-only (--read-only): answer the pause with strict-loop resume"
        if origin is None or origin.lower().partition("://")[2] != host:
            return 403, "a state-changing request must come from this page (same Origin)"
        if (header(scope, "sec-fetch-site") or "same-origin") not in ("same-origin", "none"):
            return 403, "cross-site request refused"
        presented = (header(scope, PAGE_HEADER) or "").encode()
        if not hmac.compare_digest(presented, self.access.page_token.encode()):
            return 403, f"missing or wrong {PAGE_HEADER} header: reload the page"
        if not self.access.answer_key:
            return 403, "this page takes no answers (no person's answer key): answer with strict-loop resume"
        if not hmac.compare_digest((cookie(scope, ANSWER_COOKIE) or "").encode(), self.access.answer_key.encode()):
            return 403, "answers need the person's key: open the answer link strict-loop dashboard printed, once"
        return None

    def _bearer(self, scope: Scope) -> bool:
        expected = (self.access.token or "").encode()
        auth = header(scope, "authorization") or ""
        scheme, _, presented = auth.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode(), expected):
            return True
        return hmac.compare_digest((cookie(scope, COOKIE) or "").encode(), expected)

    def _query_token(self, scope: Scope) -> bool:
        return self._query(scope, "token", self.access.token)

    def _query(self, scope: Scope, name: str, expected: Optional[str]) -> bool:
        given = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))).get(name)
        return bool(expected) and given is not None and hmac.compare_digest(given.encode(), (expected or "").encode())

    async def _set_cookie(self, scope: Scope, send: Any) -> None:
        """``?token=`` or ``?answer=`` once: the cookie, and a redirect to the same page without it in its address."""
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        rest = [(k, v) for k, v in query if k not in ("token", "answer")]
        target = scope.get("path", "/") + (f"?{urlencode(rest)}" if rest else "")
        given = [(COOKIE, self.access.token, "token"), (ANSWER_COOKIE, self.access.answer_key, "answer")]
        cookies = [
            (b"set-cookie", f"{name}={value}; HttpOnly; SameSite=Strict; Path=/".encode())
            for name, value, param in given
            if self._query(scope, param, value)
        ]
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [(b"location", target.encode()), *cookies, *SECURITY_HEADERS],
            }
        )
        await send({"type": "http.response.body", "body": b""})


DRAIN_BYTES, DRAIN_S = 16 << 10, 1.0
"""What of a refused request's body is read before the refusal, at most: a connection closed with the body unread
is reset by the kernel, and the client then sees the reset, not the refusal's reason. More, or slower, is not."""


async def drain(receive: Any) -> None:
    """Read (and drop) the body a refused request sends, up to ``DRAIN_BYTES`` within ``DRAIN_S``."""
    import anyio

    got = 0
    with anyio.move_on_after(DRAIN_S):
        while got <= DRAIN_BYTES:
            message = await receive()
            got += len(message.get("body", b""))
            if message.get("type") != "http.request" or not message.get("more_body"):
                return


async def reply(send: Any, status: int, message: str) -> None:
    """A refusal; the connection ends with it (a body the request sends past ``drain`` is never read or waited for)."""
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound and listening before anything is announced: a port in use is bad input
    (LoopError), not a server that says it serves and then exits (uvicorn binds only once it runs)."""
    host = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)  # connections made once it is announced wait for the server instead of being refused
    except OSError as exc:
        sock.close()
        raise LoopError(
            "--port", f"cannot listen on {host}:{port} ({exc.strerror or exc})", "choose another --port or --host"
        ) from None
    return sock


def serve_on(sock: socket.socket, app: Any, log_level: str) -> None:
    """Serve ``app`` on the bound ``sock`` until Ctrl-C or SIGTERM (``serving``: the limits and the shutdown)."""
    from strict_loop.dashboard import serving

    try:
        serving.server(app, log_level).run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C, re-raised by uvicorn once it has shut down: the usual exit, no traceback
        raise SystemExit(130) from None
