"""What every replay in bench/replay.py shares: the replay's workspace and transcript file (``Live``), and the
replay of a session whose harness has no hooks of ours (``append_turns``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strict_loop import Workspace
from strict_loop.harness.handler import handle

TASK_ID = "replay"
SESSION = "5e55a0e0-0000-4000-8000-000000000001"


@dataclass
class Live:
    """One replay's workspace, its transcript file and the session's running memory (a todo list, an id count)."""

    root: Path
    ws: Workspace
    transcript: Path
    memo: dict[str, Any] = field(default_factory=dict)
    lines: int = 0

    def hook(self, harness: str, payload: dict[str, Any]) -> None:
        body = {"session_id": SESSION, "transcript_path": str(self.transcript), "cwd": str(self.root), **payload}
        handle(harness, json.dumps(body).encode(), workspace=str(self.root), env={"PATH": "/usr/bin:/bin"})

    def write(self, line: dict[str, Any]) -> None:
        with self.transcript.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")  # as the harnesses write it
        self.lines += 1

    def stamp(self) -> str:
        return f"2026-01-01T00:{self.lines // 60 % 60:02d}:{self.lines % 60:02d}.000Z"


Feed = Iterator[tuple[int, bool]]
"""A replay yields, after each corpus line, its turn number and whether it reached the monitor."""


def append_turns(live: Live, turns: list[dict[str, Any]]) -> Feed:
    """A harness without our hooks: ``append_event``, the agent's words left out (nothing carries them live)."""
    for d in turns:
        data = {k: v for k, v in d.items() if k != "thought"}
        live.ws.append_event(
            task_id=TASK_ID, kind="tool_call", message=f"{d.get('tool')} turn {d.get('turn')}", data=data
        )
        yield d.get("turn", 0), True
