"""Capture the real transcripts Claude Code and Codex write, with the hook payloads that name them, as fixtures for the
reader of the agent's words (tests/fixtures/hooks/<harness>_transcript.jsonl and <harness>_transcript_calls.json).

Run ``python3 tests/capture_transcripts.py`` after ``python3 tests/harnesses/install.py`` (or when a pinned harness
version changes). Each harness runs once against a scripted model on loopback (``STEPS``: a call after text, a call
without text, two calls in one response each after its own text, two without, a call after words of trouble, a
final text), with a hook that saves every PostToolUse payload and counts the transcript's lines at that moment.
Saved: the transcript as it stood at the end, its lines over ``MAX_LINE_BYTES`` (system prompts, tool listings)
left out, folders replaced by ``WORKSPACE`` / ``HOME``; per call its command, its payload (``transcript_path``
``TRANSCRIPT``) and how many of the saved lines the file held when the hook ran; and what the run printed
(``tests/fixtures/streams/<harness>-words.jsonl``: the stream a supervised run's calls are read from).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness_rig import Harness, find_binary  # noqa: E402
from model_servers import AnthropicModel, Calls, Final, ResponsesModel, Shell  # noqa: E402

OUT = Path(__file__).resolve().parent / "fixtures" / "hooks"
STREAMS = OUT.parent / "streams"
MODELS = {"claude": AnthropicModel, "codex": ResponsesModel}
PROBE = "ls /nonexistent-strict-loop-probe"
STEPS = [
    Shell("echo one", text="First I will list the folder to see what is there."),
    Shell(PROBE),
    Calls((Shell("echo a", text="Now two at once: a"), Shell("echo b", text="and b"))),
    Calls((Shell("echo c"), Shell("echo d"))),
    Shell("echo e", text="Same error again, I keep going in circles."),
    Final("Done now."),
]
WORDS = {
    "echo one": "First I will list the folder to see what is there.",
    PROBE: "",
    "echo a": "Now two at once: a",
    "echo b": "and b",
    "echo c": "",
    "echo d": "",
    "echo e": "Same error again, I keep going in circles.",
}
"""What the reader must find for each command: the text the model wrote since the call before it."""
MAX_LINE_BYTES = 2048
DUMP = """import json, os, sys
raw = sys.stdin.read()
payload = json.loads(raw)
path = payload.get("transcript_path") or ""
lines = open(path, "rb").read().count(b"\\n") if os.path.isfile(path) else -1
with open(os.environ["CAPTURE_FILE"], "a") as f:
    f.write(json.dumps({"payload": payload, "lines": lines}) + "\\n")
"""


def hooks_file(harness: str, hook: str) -> tuple[str, dict]:
    """Where the harness reads project hooks, and the hooks: the dump program after every tool call."""
    entry = [{"hooks": [{"type": "command", "command": hook}]}]
    if harness == "claude":
        events = ("PostToolUse", "PostToolUseFailure")
        return ".claude/settings.json", {"hooks": {e: [{"matcher": "*", **entry[0]}] for e in events}}
    return ".codex/hooks.json", {"hooks": {"PostToolUse": entry}}


Saver = Callable[[list[dict], dict[str, str], subprocess.CompletedProcess], None]


def run_captured(name: str, steps: list, prompt: str, programs: dict[str, str], hooks_for: Any, save: Saver) -> None:
    """One run of harness ``name`` against a scripted model (``steps``) in a temporary HOME and project, with the hook
    programs ``programs`` (file name: source; ``dump.py``, which saves each payload, among them) configured by
    ``hooks_for`` (the programs' command lines by file name -> where the harness reads project hooks, and the hooks).
    ``save`` gets the saved payloads, the folders to write as ``WORKSPACE`` / ``HOME`` / ``PROJECT``, and the run."""
    binary = find_binary(name)
    if binary is None:
        print(f"{name}: not installed, skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, work, seen = root / "home", root / "w", root / "seen.jsonl"
        home.mkdir()
        work.mkdir()
        for file, source in programs.items():
            (root / file).write_text(source)
        where, hooks = hooks_for({file: f"{sys.executable} {root / file}" for file in programs})
        (work / where).parent.mkdir(parents=True)
        (work / where).write_text(json.dumps(hooks))
        harness = Harness(name, binary, home)
        if name == "codex":
            harness.trust_project(work)
        with MODELS[name](steps) as model:
            proc = harness.run(prompt, work, model.url, extra_env={"CAPTURE_FILE": str(seen)})
        calls = [json.loads(line) for line in seen.read_text().splitlines()] if seen.exists() else []
        if proc.returncode != 0 or not calls:
            raise SystemExit(f"{name}: rc={proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        folders = {str(work.resolve()): "WORKSPACE", str(work): "WORKSPACE", str(home): "HOME", tmp: "TMP"}
        folders[re.sub(r"[^A-Za-z0-9]", "-", str(work))] = "PROJECT"  # Claude's folder for the project's sessions
        save(calls, folders, proc)


def capture(name: str) -> None:
    def saved(calls: list[dict], folders: dict[str, str], proc: subprocess.CompletedProcess) -> None:
        save(name, calls, folders)
        (STREAMS / f"{name}-words.jsonl").write_text(clean(proc.stdout, folders))

    hooks = lambda commands: hooks_file(name, commands["dump.py"])  # noqa: E731
    run_captured(name, STEPS, "Do the things.", {"dump.py": DUMP}, hooks, saved)


def clean(text: str, folders: dict[str, str]) -> str:
    for folder, word in sorted(folders.items(), key=lambda item: -len(item[0])):
        text = text.replace(folder, word)
    return text


def save(name: str, calls: list[dict], folders: dict[str, str]) -> None:
    """The transcript (as it stood at the end) without its long lines, and per call how much of it the hook saw."""
    lines = Path(calls[0]["payload"]["transcript_path"]).read_bytes().split(b"\n")[:-1]
    kept = [i for i, line in enumerate(lines) if len(line) <= MAX_LINE_BYTES]
    out = [clean(lines[i].decode(), folders) for i in kept]
    (OUT / f"{name}_transcript.jsonl").write_text("\n".join(out) + "\n")
    rows = []
    for call in calls:
        payload = dict(call["payload"], transcript_path="TRANSCRIPT")
        command = payload["tool_input"].get("command") or payload["tool_input"].get("cmd")
        seen = len([i for i in kept if i < call["lines"]])
        rows.append({"command": command, "lines": seen, "payload": json.loads(clean(json.dumps(payload), folders))})
    (OUT / f"{name}_transcript_calls.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"{name}: {len(out)} of {len(lines)} lines, {len(rows)} calls")


if __name__ == "__main__":
    for harness_name in sys.argv[1:] or list(MODELS):
        capture(harness_name)
