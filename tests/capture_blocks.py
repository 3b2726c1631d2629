"""Capture what Claude Code and Codex write to their transcripts when a PreToolUse hook of another program (a guard
the person installed) denies a call, as fixtures for the reader of calls that never ran
(tests/fixtures/hooks/<harness>_blocked.jsonl and <harness>_blocked_call.json).

Run ``python3 tests/capture_blocks.py`` after ``python3 tests/harnesses/install.py`` (or when a pinned harness
version changes). Each harness runs once against a scripted model on loopback (``STEPS``: two calls the guard denies,
then one it lets run), with the guard (``GUARD``: denies any call whose input says "guarded") and a hook that saves
the PostToolUse payload of the call that ran. Saved: the transcript as it stood at the end without its lines over
``MAX_LINE_BYTES``, folders replaced by ``WORKSPACE`` / ``HOME``, and that payload (``transcript_path``
``TRANSCRIPT``) with how many of the saved lines the file held when its hook ran.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from capture_transcripts import DUMP, MAX_LINE_BYTES, MODELS, OUT, clean, run_captured  # noqa: E402
from model_servers import Final, Shell  # noqa: E402

GUARD = """import json, sys
call = json.dumps(json.load(sys.stdin).get("tool_input"))
if "guarded" in call:
    reason = "CONSTRAINT VIOLATION: commands that touch guarded/ are blocked by the project's policy"
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                      "permissionDecisionReason": reason}}))
"""
STEPS = [
    Shell("rm -rf guarded/cache", text="I will clear the cache folder."),
    Shell("rm -r guarded/cache"),
    Shell("ls"),
    Final("Done."),
]


def hooks(guard: str, dump: str, harness: str) -> tuple[str, dict]:
    def entry(command: str) -> dict:
        return {"hooks": [{"type": "command", "command": command}]}

    if harness == "claude":
        pre, post = {"matcher": "*", **entry(guard)}, {"matcher": "*", **entry(dump)}
        return ".claude/settings.json", {"hooks": {"PreToolUse": [pre], "PostToolUse": [post]}}
    return ".codex/hooks.json", {"hooks": {"PreToolUse": [entry(guard)], "PostToolUse": [entry(dump)]}}


def capture(name: str) -> None:
    def saved(calls: list[dict], folders: dict[str, str], proc: subprocess.CompletedProcess) -> None:
        if len(calls) != 1:
            raise SystemExit(f"{name}: {len(calls)} calls ran, not 1\n{proc.stdout[-2000:]}")
        lines = Path(calls[0]["payload"]["transcript_path"]).read_bytes().split(b"\n")[:-1]
        kept = [i for i, line in enumerate(lines) if len(line) <= MAX_LINE_BYTES]
        (OUT / f"{name}_blocked.jsonl").write_text("\n".join(clean(lines[i].decode(), folders) for i in kept) + "\n")
        payload = json.loads(clean(json.dumps(dict(calls[0]["payload"], transcript_path="TRANSCRIPT")), folders))
        row = {"lines": len([i for i in kept if i < calls[0]["lines"]]), "payload": payload}
        (OUT / f"{name}_blocked_call.json").write_text(json.dumps(row, indent=1) + "\n")
        print(f"{name}: {len(kept)} of {len(lines)} lines")

    hooks_of = lambda commands: hooks(commands["guard.py"], commands["dump.py"], name)  # noqa: E731
    run_captured(name, STEPS, "Clear the cache.", {"guard.py": GUARD, "dump.py": DUMP}, hooks_of, saved)


if __name__ == "__main__":
    for harness_name in sys.argv[1:] or list(MODELS):
        capture(harness_name)
