"""The one HTTP server of the page and of ``strict-loop-mcp --http``: uvicorn, bounded (issue 25, items 6 and 7).

Why: uvicorn alone waits for a request's head forever and takes every connection it is offered, so half-sent requests
held every connection (and, by the thousand, every file descriptor the page needs to read a task); and it stops only
once every response has ended, which a page's live stream never does: Ctrl-C and SIGTERM did nothing while a page was
open. Here a request's head must arrive within ``HEAD_TIMEOUT_S`` (else 408 and the connection closed), connections
past ``connection_cap()`` are refused at once (503), the live streams end as shutdown begins, and whatever still runs
``SHUTDOWN_S`` later is cancelled.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any, Optional

from strict_loop.dashboard import live

HEAD_TIMEOUT_S = 10.0
"""From a connection's start, or the end of its last response, to the end of the next request's head."""
MAX_CONNECTIONS = 256
"""Open connections at most (the page's live streams included); fewer when file descriptors are scarce."""
SHUTDOWN_S = 3
"""How long in-flight requests may finish after Ctrl-C or SIGTERM before they are cancelled."""


def connection_cap() -> int:
    """``MAX_CONNECTIONS``, or half this process's file descriptors when that is fewer (macOS allows 256 by default):
    the other half stays for the files the page reads."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return MAX_CONNECTIONS
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return MAX_CONNECTIONS
    return max(16, min(MAX_CONNECTIONS, soft // 2))


def _refuse(transport: Any, status: bytes, text: bytes) -> None:
    """A last word written straight to the socket (the request, if any, was never parsed), then the close."""
    head = b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    transport.write(head + b"content-length: " + str(len(text)).encode() + b"\r\n\r\n" + text)
    transport.close()


def protocol(head_timeout: float, cap: int) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a deadline on every request's head and a cap on open connections."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Bounded(H11Protocol):
        head_timer: Optional[asyncio.TimerHandle] = None
        awaited: Any = None  # the cycle (request) in progress when the deadline was set: still it means no new head

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > cap:
                self.connections.discard(self)
                _refuse(transport, b"503 Service Unavailable", b"too many connections: try again in a moment\n")
                return
            self.expect_head()

        def expect_head(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
            self.awaited = self.cycle
            self.head_timer = self.loop.call_later(head_timeout, self.head_late)

        def head_late(self) -> None:
            self.head_timer = None
            if self.cycle is self.awaited and not self.transport.is_closing():
                self.connections.discard(self)
                _refuse(self.transport, b"408 Request Timeout", b"the request's head did not arrive in time\n")

        def on_response_complete(self) -> None:
            self.expect_head()  # before uvicorn goes on to a pipelined request, which counts as arrived
            super().on_response_complete()

        def handle_websocket_upgrade(self, event: Any) -> None:
            self.stop_deadline()  # the head arrived; the connection is another protocol's from now on
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Optional[Exception]) -> None:
            self.stop_deadline()
            super().connection_lost(exc)

        def stop_deadline(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

    return Bounded


def server(
    app: Any,
    log_level: str,
    *,
    head_timeout: float = HEAD_TIMEOUT_S,
    cap: Optional[int] = None,
    shutdown_s: int = SHUTDOWN_S,
) -> Any:  # a uvicorn.Server
    """A uvicorn server for ``app`` that ends the page's live streams when it shuts down and gives in-flight requests
    ``shutdown_s`` to finish (the other limits: the module's docstring)."""
    import uvicorn

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Optional[list[socket.socket]] = None) -> None:
            live.end_streams()  # else "Waiting for connections to close" lasts as long as a page stays open
            await super().shutdown(sockets)

    config = uvicorn.Config(
        app,
        log_level=log_level,
        http=protocol(head_timeout, connection_cap() if cap is None else cap),
        timeout_graceful_shutdown=shutdown_s,
    )
    return Server(config)
