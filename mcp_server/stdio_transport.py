"""stdio: one JSON-RPC message per line, every line bounded, every malformed line answered.

The SDK's ``stdio_server`` reads a line of any length and drops a malformed one silently, so a client waiting on that
request waits forever. This transport reads stdin in chunks, drops a line longer than ``MAX_LINE_BYTES`` without
keeping it, and answers a line that is not JSON (-32700) or not a JSON-RPC message (-32600) with an error that carries
the line's id when one can be read. It hands ``Server.run`` the streams the SDK's transport does (``SessionMessage``
items, plain anyio memory streams) and, like it, points fd 0 and fd 1 away from the wire while serving, so stop
commands and stray prints can neither read nor corrupt protocol bytes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Optional, Union

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server import Server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from .http_transport import MAX_MESSAGE_BYTES

MAX_LINE_BYTES = MAX_MESSAGE_BYTES  # one message, as over HTTP
CHUNK = 64 * 1024
PREFIX = 4096  # of an over-long or unparsable line, kept to find its id
RequestId = Union[str, int, None]


async def serve(server: Server) -> None:
    async with stdio_streams() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[MemoryObjectReceiveStream, MemoryObjectSendStream]]:
    """The server's read and write streams over this process's stdin and stdout."""
    wire_in = _divert(0, os.open(os.devnull, os.O_RDONLY))
    wire_out = _divert(1, _stray_output())
    try:
        read_send, read_recv = anyio.create_memory_object_stream[Union[SessionMessage, Exception]](0)
        write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read, wire_in, read_send, write_send.clone())
            tg.start_soon(_write, wire_out, write_recv)
            try:
                yield read_recv, write_send
            finally:
                await write_send.aclose()
    finally:
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)


def _stray_output() -> int:
    """Where stray writes to fd 1 go while serving: stderr, else nowhere."""
    try:
        return os.dup(2)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY)


def _divert(fd: int, replacement: int) -> int:
    """Point ``fd`` at ``replacement``; return a private, non-inheritable duplicate of the wire it was.

    The duplicate is never closed: a worker thread may still be blocked reading it when serving ends.
    """
    wire = os.dup(fd)
    os.dup2(replacement, fd)
    os.close(replacement)
    return wire


async def _read(wire: int, messages: MemoryObjectSendStream, replies: MemoryObjectSendStream) -> None:
    """Split stdin into lines of at most MAX_LINE_BYTES; a longer line is skipped to its end, keeping only a prefix."""
    stdin = anyio.wrap_file(os.fdopen(wire, "rb", buffering=0, closefd=False))
    line, dropped = bytearray(), None  # dropped: the prefix of a line over the limit
    async with messages, replies:
        while chunk := await stdin.read(CHUNK):
            start = 0
            while start <= len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if dropped is None and len(line) + len(piece) > MAX_LINE_BYTES:
                    dropped, line = bytes(line[:PREFIX] + piece[:PREFIX])[:PREFIX], bytearray()
                elif dropped is None:
                    line += piece
                if end < 0:
                    break
                await _dispatch(bytes(line), dropped, messages, replies)
                line, dropped, start = bytearray(), None, end + 1
        if line.strip() or dropped is not None:  # a last line without its newline
            await _dispatch(bytes(line), dropped, messages, replies)


async def _dispatch(
    line: bytes, dropped: Optional[bytes], messages: MemoryObjectSendStream, replies: MemoryObjectSendStream
) -> None:
    if dropped is not None:
        await replies.send(
            _error(
                _prefix_id(dropped.decode("utf-8", errors="replace")),
                types.INVALID_REQUEST,
                f"Invalid Request: the message is longer than {MAX_LINE_BYTES} bytes and was dropped unread; "
                "send smaller arguments",
            )
        )
        return
    text = line.decode("utf-8", errors="replace")
    if not text.strip():
        return
    try:
        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except (ValidationError, ValueError, RecursionError):
        await replies.send(_diagnose(text))
        return
    await messages.send(SessionMessage(message))


def _diagnose(text: str) -> SessionMessage:
    """The error for a line the message model refused: not JSON at all (-32700), or JSON but not JSON-RPC (-32600)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return _error(
            _prefix_id(text[:PREFIX]),
            types.PARSE_ERROR,
            "Parse error: the line is not valid JSON "
            "(send one JSON-RPC message per line, UTF-8, no raw newlines inside)",
        )
    ident = _request_id(value) if isinstance(value, dict) else None
    return _error(
        ident,
        types.INVALID_REQUEST,
        "Invalid Request: not a JSON-RPC 2.0 message (an object with "
        "jsonrpc '2.0' and a string method, an optional id of string or integer, and object params)",
    )


def _request_id(fields: dict[str, Any]) -> RequestId:
    """The id to answer, if the message looks like a request: a reply to a malformed response would look like an
    answer to one of the client's own requests, so a response gets id null."""
    ident = fields.get("id")
    if "result" in fields or "error" in fields:
        return None
    return ident if isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool)) else None


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def _prefix_id(prefix: str) -> RequestId:
    """The top-level id of a message that cannot be parsed whole (cut off, or broken further on), if it shows early."""
    tokens = _TOKEN.findall(prefix)
    if not tokens or tokens[0] != "{":
        return None
    depth, fields = 0, {}
    for i, token in enumerate(tokens):
        if token in ("{", "["):
            depth += 1
        elif token in ("}", "]"):
            depth -= 1
        elif depth == 1 and token.startswith('"') and tokens[i + 1 : i + 2] == [":"] and tokens[i - 1] in ("{", ","):
            fields[_literal(token)] = _literal(tokens[i + 2]) if i + 2 < len(tokens) else None
    return _request_id(fields)


def _literal(token: str) -> Any:
    """A JSON scalar token's value; None for anything else (a nested value, a cut-off or broken one)."""
    try:
        return json.loads(token)
    except ValueError:
        return None


def _error(ident: RequestId, code: int, message: str) -> SessionMessage:
    return SessionMessage(
        types.JSONRPCError(jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message))
    )


async def _write(wire: int, outgoing: MemoryObjectReceiveStream) -> None:
    stdout = anyio.wrap_file(os.fdopen(wire, "wb", closefd=False))
    async with outgoing:
        async for item in outgoing:
            await stdout.write(item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")
            await stdout.flush()
