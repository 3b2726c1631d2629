"""Capture the real Notification payload of Claude Code's permission prompt, with the transcript as it stood when the
hook ran, as a fixture (tests/fixtures/hooks/claude_notification_permission.json).

Run ``python3 tests/capture_notifications.py`` after ``python3 tests/harnesses/install.py`` (or when the pinned Claude
Code changes). Claude Code runs headless as an SDK host drives it (``--input-format stream-json``,
``--permission-prompt-tool stdio``, no permission mode that allows the call): the scripted model asks for a shell
command, Claude Code asks the host (``control_request`` ``can_use_tool``) and, after 6 s without an answer, fires the
``Notification`` hook (``permission_prompt``) as it does in a terminal; the capture then allows the call. Saved: the
payload (``cwd`` ``WORKSPACE``, ``transcript_path`` ``TRANSCRIPT``) and the transcript's lines at that moment (those
over ``MAX_LINE_BYTES`` left out).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness_rig import Harness, find_binary  # noqa: E402
from model_servers import AnthropicModel, Final, Shell  # noqa: E402

OUT = Path(__file__).resolve().parent / "fixtures" / "hooks" / "claude_notification_permission.json"
COMMAND = "touch permission-marker"
MAX_LINE_BYTES = 2048  # system prompts and tool listings left out
DUMP = """import json, os, sys
payload = json.loads(sys.stdin.read())
path = payload.get("transcript_path") or ""
lines = open(path, encoding="utf-8").read().splitlines() if os.path.isfile(path) else []
with open(os.environ["CAPTURE_FILE"], "a") as f:
    f.write(json.dumps({"payload": payload, "transcript": lines}) + "\\n")
"""


def sdk_command(binary: Path) -> list[str]:
    """Claude Code as an SDK host runs it: prompts and permission answers on stdin, events on stdout."""
    return [
        str(binary),
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-prompt-tool",
        "stdio",
        "--max-turns",
        "5",
    ]


def main() -> int:
    binary = find_binary("claude")
    if binary is None:
        print("claude is not installed: run python3 tests/harnesses/install.py", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        home, work, dump = Path(tmp) / "home", Path(tmp) / "w", Path(tmp) / "dump.jsonl"
        (work / ".claude").mkdir(parents=True)
        home.mkdir()
        (Path(tmp) / "dump.py").write_text(DUMP)
        hook = {"type": "command", "command": f"{sys.executable} {Path(tmp) / 'dump.py'}"}
        (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Notification": [{"hooks": [hook]}]}}))
        harness = Harness("claude", binary, home)
        with AnthropicModel([Shell(COMMAND), Final("Done.")]) as model:
            harness.configure(model.url)
            env = harness.env(model.url, {"CAPTURE_FILE": str(dump)})
            proc = subprocess.Popen(
                sdk_command(binary), cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": "Go."}}).encode())
            proc.stdin.write(b"\n")
            proc.stdin.flush()
            for line in proc.stdout:
                event = json.loads(line)
                if event.get("type") == "control_request":
                    deadline = time.monotonic() + 30
                    while not dump.exists() and time.monotonic() < deadline:
                        time.sleep(0.2)
                    request = event["request"]
                    allow = {"behavior": "allow", "updatedInput": request["input"]}
                    answer = {"subtype": "success", "request_id": event["request_id"], "response": allow}
                    proc.stdin.write(json.dumps({"type": "control_response", "response": answer}).encode() + b"\n")
                    proc.stdin.flush()
                elif event.get("type") == "result":
                    proc.stdin.close()
            proc.wait(30)
        seen = [json.loads(line) for line in dump.read_text().splitlines()]
        found = seen[0]
        found["transcript"] = [line for line in found["transcript"] if len(line.encode()) <= MAX_LINE_BYTES]
        payload, path = found["payload"], found["payload"]["transcript_path"]
        text = json.dumps(found).replace(path, "TRANSCRIPT").replace(str(work), "WORKSPACE").replace(str(home), "HOME")
        OUT.write_text(json.dumps(json.loads(text), indent=2) + "\n")
        print(f"{OUT}: {payload['notification_type']}: {payload['message']}")
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
