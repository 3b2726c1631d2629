"""Sending one alert to one channel, once: the JSON webhook (our payload), Apprise, or an IRC NOTICE.

Only the outbox worker imports this module (Apprise and ``irc`` are imported on
first use, never on an agent's tool call). Each send either returns or raises
``SendError`` with a one-line reason in which no part of the channel's URL appears.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any, Optional

from strict_loop.alerts.channels import Channel, Message, irc_target

UNKNOWN_URL = "Apprise does not recognise this URL (see https://github.com/caronc/apprise/wiki)"


def url_problem(channel: Channel) -> Optional[str]:
    """Why Apprise could not send to this channel's URL at all (a mistyped scheme, a missing part), else None: said
    when a person looks at the channels, not first at 3 AM when a pause is to be delivered."""
    if channel.kind != "apprise":
        return None
    import apprise

    return None if apprise.Apprise.instantiate(channel.url) is not None else UNKNOWN_URL


class SendError(Exception):
    """A failed attempt; ``final`` when retrying cannot help (the request itself was refused)."""

    def __init__(self, reason: str, final: bool = False) -> None:
        super().__init__(reason)
        self.final = final


def send(channel: Channel, msg: Message, payload: Mapping[str, Any], timeout: float) -> str:
    """Deliver once; returns a short outcome ("HTTP 200", "notice sent"). Reasons are scrubbed of the URL."""
    try:
        if channel.kind == "webhook":
            return _webhook(channel.url, payload, timeout)
        if channel.kind == "irc":
            return _irc(channel.url, msg, timeout)
        return _apprise(channel.url, msg, timeout)
    except SendError as exc:
        raise SendError(scrub(str(exc), channel.url), exc.final) from None
    except Exception as exc:  # a library's surprise must not end the worker: it is this attempt's outcome
        raise SendError(scrub(f"{type(exc).__name__}: {exc}", channel.url)) from None


def _webhook(url: str, payload: Mapping[str, Any], timeout: float) -> str:
    body = json.dumps(payload, ensure_ascii=False).encode()
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json", "User-Agent": "strict-agent-loop"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (http(s) checked by alerts.channels)
            return f"HTTP {response.status}"
    except urllib.error.HTTPError as exc:
        raise SendError(f"HTTP {exc.code}", final=400 <= exc.code < 500 and exc.code != 429) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SendError(f"{type(reason).__name__}: {reason}") from None


def _apprise(url: str, msg: Message, timeout: float) -> str:
    import logging

    import apprise

    plugin = apprise.Apprise.instantiate(url)
    if plugin is None:
        raise SendError(UNKNOWN_URL, final=True)
    plugin.socket_connect_timeout = plugin.socket_read_timeout = (
        timeout  # a hanging service costs one attempt, not forever
    )
    obj = apprise.Apprise()
    obj.add(plugin)
    with apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as logs:
        ok = obj.notify(title=msg.headline, body="\n".join(msg.lines()))
        captured = logs.getvalue()
    if not ok:
        last = [line for line in captured.splitlines() if line.strip()][-1:] or ["the service refused the notification"]
        raise SendError(last[0])
    return "sent"


def _irc(url: str, msg: Message, timeout: float) -> str:
    """Connect, join the channel, send the NOTICEs, quit: seed 000's ``[SPIRALING]`` server-style notice."""
    import irc.client
    import irc.connection

    target = irc_target(url)
    if target is None:
        raise SendError("not an IRC URL with a host and a channel", final=True)
    host, port, nick, channel, tls, password = target
    if tls:
        import functools
        import ssl

        factory = irc.connection.Factory(
            wrapper=functools.partial(ssl.create_default_context().wrap_socket, server_hostname=host)
        )
    else:
        factory = irc.connection.Factory()
    reactor = irc.client.Reactor()
    done, errors = threading.Event(), []

    def joined(conn, event):
        if irc.client.NickMask(event.source).nick == conn.get_nickname():
            for line in msg.lines():  # an IRC line is at most 512 bytes with its prefix: cut on a character boundary
                conn.notice(channel, line.encode()[:400].decode(errors="ignore"))
            conn.quit("alert delivered")
            done.set()

    def refused(conn, event):
        errors.append(f"{event.type}: {' '.join(str(a) for a in event.arguments)}"[:200])

    reactor.add_global_handler("welcome", lambda conn, event: conn.join(channel))
    reactor.add_global_handler("join", joined)
    reactor.add_global_handler("nicknameinuse", lambda conn, event: conn.nick(conn.get_nickname() + "_"))
    for kind in ("error", "bannedfromchan", "inviteonlychan", "badchannelkey", "channelisfull", "passwdmismatch"):
        reactor.add_global_handler(kind, refused)
    try:
        conn = reactor.server().connect(host, port, nick, password=password, connect_factory=factory)
    except irc.client.ServerConnectionError as exc:
        raise SendError(f"cannot connect: {exc}") from None
    deadline = time.monotonic() + timeout
    try:
        while not done.is_set() and not errors and time.monotonic() < deadline and conn.is_connected():
            reactor.process_once(0.1)
    finally:
        if done.is_set():
            reactor.process_once(0.2)  # let the NOTICEs and QUIT leave the socket
        conn.close()
    if done.is_set():
        return f"notice sent to {channel}"
    raise SendError(
        errors[0] if errors else ("timed out" if time.monotonic() >= deadline else "the server closed the connection")
    )


def scrub(text: str, url: str) -> str:
    """``text`` without the URL or any of its parts (host, path, query, credentials). A part of three characters
    or fewer is left (it hides nothing and would garble the reason: "T" in slack://T/B/X), but never a password."""
    secrets = {url}
    try:
        parts = urllib.parse.urlsplit(url)
        pieces = [parts.netloc, parts.hostname, parts.username, parts.query, parts.fragment]
        pieces += [parts.path if len(parts.path) > 1 else ""] + [p for p in parts.path.split("/") if len(p) >= 6]
        secrets |= {p for p in pieces if p and len(p) > 3} | ({parts.password} if parts.password else set())
    except ValueError:
        pass
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "<channel>")
    return " ".join(text.split())[:300]
