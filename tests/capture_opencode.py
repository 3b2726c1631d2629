"""Capture what our OpenCode plugin hands ``strict-loop hook opencode`` and what ``opencode run --format json`` prints,
against the real binary, as fixtures: tests/fixtures/hooks/opencode_hooks.json (every hook payload of one run, in
order) and tests/fixtures/streams/opencode-*.jsonl, each with its exit code in ``*.meta.json`` (a run of every kind of
call, a run whose API request is refused).

Run ``python3 tests/capture_opencode.py`` after ``python3 tests/harnesses/install.py`` (or when the pinned version
changes). The plugin is the shipped one (integrations/opencode/strict-loop.js) with a dump program in place of
``strict-loop``: it records each payload, refuses the call whose command holds ``REFUSE`` and whispers after the
call whose command holds ``WHISPER``. The run (``STEPS``) reads, writes and edits a file, makes an edit whose old text
is not there (a failed call no tool.execute.after sees), runs a failing and a succeeding command, two commands in one
response, the refused one, a tool that does not exist, and ends. Folders are ``WORKSPACE`` / ``HOME``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from model_servers import Calls, Final, HttpError, Shell  # noqa: E402
from opencode_rig import BINARY, OpenCode, OpenCodeModel, Tool, write_provider  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "fixtures" / "hooks"
STREAMS = OUT.parent / "streams"
PLUGIN = REPO / "integrations" / "opencode" / "strict-loop.js"
STEPS = [
    Tool("read", {"filePath": "calc.py"}, "First I will read the helper."),
    Tool("write", {"filePath": "NOTES.md", "content": "notes\n"}),
    Tool("edit", {"filePath": "calc.py", "oldString": "a - b", "newString": "a + b"}),
    Tool("edit", {"filePath": "calc.py", "oldString": "not there", "newString": "x"}, "Again."),
    Shell("ls /nonexistent-strict-loop-probe", text="Now the probe."),
    Shell("echo WHISPER ok"),
    Calls((Shell("echo a", text="Two at once."), Shell("echo b; exit 3"))),
    Shell("echo REFUSE me"),
    Tool("nonexistent_tool", {"x": 1}),
    Final("Done."),
]
DUMP = """#!/usr/bin/env python3
import json, os, sys
payload = json.loads(sys.stdin.read())
with open(os.environ["CAPTURE_FILE"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "payload": payload}) + "\\n")
command = str((payload.get("tool_input") or {}).get("command", ""))
if payload["hook_event_name"] == "PreToolUse" and "REFUSE" in command:
    print(json.dumps({"decision": "block", "reason": "CAPTURE: refused"}))
elif payload["hook_event_name"] == "PostToolUse" and "WHISPER" in command:
    print(json.dumps({"whisper": "CAPTURE: a whisper"}))
"""


def clean(text: str, folders: dict[str, str]) -> str:
    for folder, word in sorted(folders.items(), key=lambda item: -len(item[0])):
        text = text.replace(folder, word)
    return text


def plugin_with(program: str) -> str:
    return PLUGIN.read_text().replace(
        'const STRICT_LOOP = "strict-loop";', f"const STRICT_LOOP = {json.dumps(program)};"
    )


def main() -> int:
    if not BINARY.exists():
        print(f"no OpenCode at {BINARY}: run python3 tests/harnesses/install.py", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        home, work = base / "home", base / "work"
        home.mkdir()
        (work / ".opencode" / "plugins").mkdir(parents=True)
        (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        dump = base / "dump.py"
        dump.write_text(DUMP)
        dump.chmod(0o755)
        (work / ".opencode" / "plugins" / "strict-loop.js").write_text(plugin_with(str(dump)))
        folders = {str(work): "WORKSPACE", str(home): "HOME", str(base): "BASE"}
        capture = base / "capture.jsonl"
        harness = OpenCode(BINARY, home)
        with OpenCodeModel(STEPS) as model:
            write_provider(work, model.url)
            proc = harness.run("Fix calc.py", work, {"CAPTURE_FILE": str(capture)})
        print(f"opencode exit {proc.returncode}", file=sys.stderr)
        rows = [json.loads(clean(line, folders)) for line in capture.read_text().splitlines()]
        (OUT / "opencode_hooks.json").write_text(json.dumps(rows, indent=1) + "\n")
        (STREAMS / "opencode-calls.jsonl").write_text(clean(proc.stdout, folders))
        (STREAMS / "opencode-calls.meta.json").write_text(
            json.dumps({"exit_code": proc.returncode, "timed_out": False})
        )
        with OpenCodeModel([HttpError(400, "scripted API error")]) as model:
            write_provider(work, model.url)
            failed = harness.run("Fail", work, {"CAPTURE_FILE": str(capture)})
        print(f"opencode exit {failed.returncode} (refused request)", file=sys.stderr)
        (STREAMS / "opencode-api-error.jsonl").write_text(clean(failed.stdout, folders))
        meta = {"exit_code": failed.returncode, "timed_out": False}
        (STREAMS / "opencode-api-error.meta.json").write_text(json.dumps(meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
