"""One turn: an agent's action and what came back, or a person's word. Published as a model and JSON Schema.

Turns reach the progress monitor through ``append_event(kind="tool_call", data=<turn>)``. A person's message is a
turn too (``actor="person"``, ``tool="user_prompt"``, ``output`` = the person's text, masked like any output): the
person often says the verdict ("still the same error"), and the monitor counts it as an outcome, never as progress.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

# Re-exported (``X as X``): the turn's callers import them from here.
from strict_loop.base.clipping import MAX_THOUGHT_TEXT as MAX_THOUGHT_TEXT
from strict_loop.base.clipping import MAX_TURN_TEXT as MAX_TURN_TEXT
from strict_loop.base.clipping import clip as clip
from strict_loop.base.clipping import clip_turn_data as clip_turn_data
from strict_loop.base.clipping import plain
from strict_loop.base.errors import LoopError
from strict_loop.model.fields import parse_json


class Turn(BaseModel):
    """One agent action and its result, or one message of a person (``actor="person"``)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    tool: str = Field("message", max_length=200, description="Tool name; 'message' for a turn without one")
    args: dict[str, Any] = Field(default_factory=dict, description="Its arguments")
    output: str = Field("", description="What came back (clipped to head and tail)")
    error: Optional[bool] = Field(None, description="Whether it failed")
    exit_code: Optional[int] = Field(None, description="A command's exit code")
    thought: str = Field("", description="The agent's text around it")
    paths: Optional[list[str]] = Field(None, description="Files touched (default: from args)")
    score: Optional[float] = Field(None, description="A verifier score; higher is better")
    ts: Optional[str] = Field(None, description="ISO 8601 time")
    actor: Literal["agent", "person"] = Field(
        "agent",
        description="Who spoke: 'agent' for a tool call; 'person' for a person's message (tool 'user_prompt', output = "
        "the text)",
    )

    def model_post_init(self, context: Any, /) -> None:
        self.output = clip(plain(self.output))
        self.thought = clip(plain(self.thought), MAX_THOUGHT_TEXT)


def one_line(text: str, cap: int, tail: int = 0) -> str:
    """``text`` on one line within ``cap`` characters (whitespace runs become one space); ``tail`` keeps
    that many characters of the end too, where a resume command or an error sits."""
    one = " ".join(str(text).split())
    if len(one) <= cap:
        return one
    head = _words(one, cap - tail - 5 if tail else cap - 3)
    return head + " ... " + one[len(one) - tail :] if tail else head + "..."


def _words(text: str, cap: int) -> str:
    """At most ``cap`` characters of ``text``, ending at a word's end when one is near (no word cut in two)."""
    cut = text[: max(cap, 0)]
    space = cut.rfind(" ")
    return cut[:space].rstrip(" ,;:") if space > cap * 0.7 else cut


def read_turns(path: str | Path) -> list[dict[str, Any]]:
    """The turns of a JSONL trajectory file (one turn object per line; blank lines skipped)."""
    path = Path(path)
    try:
        text = _read_regular(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LoopError(
            str(path), f"cannot be read ({getattr(exc, 'strerror', None) or exc})", "give a readable JSONL file"
        ) from None
    turns = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                value = parse_json(line)
            except ValueError as exc:
                raise LoopError(f"{path.name} line {number}", str(exc), "one JSON object per line") from None
            if not isinstance(value, dict):
                raise LoopError(f"{path.name} line {number}", "is not a JSON object", "one turn object per line")
            turns.append(value)
    return turns


MAX_TURNS_FILE_BYTES = 256 << 20


def _read_regular(path: Path) -> bytes:
    """A regular file's bytes (at most 256 MiB). A FIFO, a device or a socket is refused before anything is read
    from it: opened without blocking, checked by fstat, as the ledgers are."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a socket is never read)")
        if info.st_size > MAX_TURNS_FILE_BYTES:
            raise OSError(errno.EFBIG, f"larger than {MAX_TURNS_FILE_BYTES >> 20} MiB")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(MAX_TURNS_FILE_BYTES + 1)
    finally:
        os.close(fd)
