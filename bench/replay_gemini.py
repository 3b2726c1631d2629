"""Gemini CLI's side of a replay (bench/replay.py): the payloads Gemini CLI 0.61.0 sends its hooks (``BeforeAgent``
with the person's prompt; ``AfterTool`` after a call, with what the model reads: ``llmContent``, a shell's as
``Output: ...`` and ``Exit Code: N``, and a failed tool's ``error``) and the chat file lines it writes, the model's
message before its call runs (shapes from tests/fixtures/hooks/gemini_hooks.json and gemini_transcript.jsonl)."""

from __future__ import annotations

from typing import Any

from replay_live import SESSION, Feed, Live

SHELL = "run_shell_command"


def gemini_response(d: dict[str, Any]) -> dict[str, Any]:
    """AfterTool's ``tool_response`` for the recorded call ``d``: a shell's output in Gemini CLI's sections (its exit
    code named when not 0: the turn's, else 1 for a call that failed), another tool's text, with an ``error`` when it
    failed."""
    output = str(d.get("output") or "")
    code = d.get("exit_code") if isinstance(d.get("exit_code"), int) else int(bool(d.get("error")))
    if d.get("tool") == SHELL:
        sections = [
            f"Output: {output or '(empty)'}",
            *([f"Exit Code: {code}"] if code else []),
            "Process Group PGID: 1",
        ]
        return {
            "llmContent": "<untrusted_context>\n" + "\n".join(sections) + "\n</untrusted_context>",
            "returnDisplay": output,
        }
    response: dict[str, Any] = {"llmContent": output, "returnDisplay": output}
    return {**response, "error": {"message": output, "type": "execution_failed"}} if d.get("error") else response


def _line(live: Live, kind: str, **fields: Any) -> None:
    live.write({"id": f"00000000-0000-4000-8000-{live.lines:012d}", "timestamp": live.stamp(), "type": kind, **fields})


def gemini_turns(live: Live, turns: list[dict[str, Any]]) -> Feed:
    """Gemini CLI: BeforeAgent for a person's line, AfterTool for a call; the chat file gets the model's message (its
    words, then its call) before the hook runs, and the call's result after it."""
    live.write({"sessionId": SESSION, "projectHash": "0" * 64, "startTime": live.stamp(), "kind": "main"})
    for i, d in enumerate(turns):
        number, output = d.get("turn", 0), str(d.get("output") or "")
        if d.get("actor") == "person":
            _line(live, "user", content=[{"text": output}])
            live.hook("gemini", {"hook_event_name": "BeforeAgent", "prompt": output})
            yield number, True
            continue
        words = str(d.get("thought") or "")
        if d.get("tool") == "message":  # words without a call: no hook
            _line(live, "gemini", content=words)
            yield number, False
            continue
        args = d.get("args") if isinstance(d.get("args"), dict) else {}
        call = {"id": f"call_{i:05d}", "name": d.get("tool"), "args": args}
        _line(live, "gemini", content=words, toolCalls=[call])
        post = {"hook_event_name": "AfterTool", "tool_name": d.get("tool"), "tool_input": args}
        live.hook("gemini", {**post, "tool_response": gemini_response(d)})
        result = {"functionResponse": {"id": call["id"], "name": d.get("tool"), "response": {"output": output}}}
        _line(live, "user", content=[result])
        yield number, True
