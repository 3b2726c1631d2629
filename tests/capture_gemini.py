"""Capture what the real Gemini CLI sends its hooks and prints, as fixtures: tests/fixtures/hooks/gemini_hooks.json
(every hook payload of one run, in order, each with how many lines of its transcript the file held when the hook ran),
gemini_transcript.jsonl (that transcript at the end) and tests/fixtures/streams/gemini-*.jsonl (what ``gemini -p
--output-format stream-json`` printed: a run of every kind of call, a run whose API request is refused, a run that is
not signed in).

Run ``python3 tests/capture_gemini.py`` after ``python3 tests/harnesses/install.py`` (or when the pinned version
changes). The run (``STEPS``) reads, writes and edits a file, runs a failing and a succeeding command, two commands in
one response, a tool that does not exist, and ends its turn; the AfterAgent hook refuses that end once (Gemini CLI then
sends its reason as the next prompt, through BeforeAgent) and the model does one more call. Lines over
``MAX_LINE_BYTES`` are left out of the transcript; folders are ``WORKSPACE`` / ``HOME``, ``transcript_path``
``TRANSCRIPT``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gemini_rig import BINARY, Gemini, GeminiModel, Tool  # noqa: E402
from model_servers import Calls, Final, HttpError, Shell  # noqa: E402

OUT = Path(__file__).resolve().parent / "fixtures" / "hooks"
STREAMS = OUT.parent / "streams"
PROBE = "ls /nonexistent-strict-loop-probe"
AGAIN = "Go on: run the check once more."
STEPS = [
    Tool("read_file", {"file_path": "calc.py"}, "First I will read the helper."),
    Tool("write_file", {"file_path": "NOTES.md", "content": "notes\n"}),
    Tool("replace", {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b", "instruction": "add"}),
    Shell(PROBE, text="Now the probe."),
    Shell("echo ok"),
    Calls((Shell("echo a", text="Two at once."), Shell("echo b; exit 3"))),
    Tool("nonexistent_tool", {"x": 1}),
    Final("Done."),
    Shell("echo again"),
    Final("Done now."),
]
EVENTS = ("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent")
MAX_LINE_BYTES = 2048
DUMP = """import json, os, sys
payload = json.loads(sys.stdin.read())
path = payload.get("transcript_path") or ""
lines = open(path, "rb").read().count(b"\\n") if os.path.isfile(path) else -1
with open(os.environ["CAPTURE_FILE"], "a") as f:
    f.write(json.dumps({"payload": payload, "lines": lines}) + "\\n")
marker = os.environ["CAPTURE_FILE"] + ".blocked"
if payload["hook_event_name"] == "AfterAgent" and not os.path.exists(marker):
    open(marker, "w").close()
    print(json.dumps({"decision": "block", "reason": os.environ["CAPTURE_AGAIN"]}))
"""


def clean(text: str, folders: dict[str, str]) -> str:
    for folder, word in sorted(folders.items(), key=lambda item: -len(item[0])):
        text = text.replace(folder, word)
    return text


def run(root: Path, steps: list, signed_in: bool = True, hooks: bool = False):
    home, work, seen = root / "home", root / "w", root / "seen.jsonl"
    home.mkdir()
    work.mkdir()
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    gemini = Gemini(BINARY, home)
    gemini.trust(work)
    if hooks:
        (root / "dump.py").write_text(DUMP)
        entry = [{"matcher": "*", "hooks": [{"type": "command", "command": f"{sys.executable} {root / 'dump.py'}"}]}]
        (work / ".gemini").mkdir()
        (work / ".gemini" / "settings.json").write_text(json.dumps({"hooks": dict.fromkeys(EVENTS, entry)}))
    with GeminiModel(steps) as model:
        extra = (
            {"CAPTURE_FILE": str(seen), "CAPTURE_AGAIN": AGAIN}
            if signed_in
            else {"GEMINI_API_KEY": "", "GOOGLE_GEMINI_BASE_URL": ""}
        )
        if signed_in:
            proc = gemini.run("Fix the helper.", work, model.url, extra)
        else:
            proc = gemini_unsigned(gemini, work, model.url, extra)
    folders = {str(work.resolve()): "WORKSPACE", str(work): "WORKSPACE", str(home): "HOME", str(root): "TMP"}
    return proc, folders, seen


def gemini_unsigned(gemini: Gemini, work: Path, url: str, extra: dict):
    """A run with no sign-in: no API key, and settings that choose none."""
    import subprocess

    return subprocess.run(
        gemini.command("Fix the helper."), cwd=work, env=gemini.env(url, extra), capture_output=True, text=True,
        timeout=90, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def stream(name: str, proc, folders: dict[str, str]) -> None:
    (STREAMS / f"gemini-{name}.jsonl").write_text(clean(proc.stdout, folders))
    (STREAMS / f"gemini-{name}.meta.json").write_text(json.dumps({"exit_code": proc.returncode, "timed_out": False}))
    if name == "signedout":
        (STREAMS / "gemini-signedout.stderr.txt").write_text(clean(proc.stderr, folders)[-4000:])


def main() -> None:
    if not BINARY.exists():
        raise SystemExit("Gemini CLI is not installed: run python3 tests/harnesses/install.py")
    with tempfile.TemporaryDirectory() as tmp:
        proc, folders, seen = run(Path(tmp), STEPS, hooks=True)
        calls = [json.loads(line) for line in seen.read_text().splitlines()]
        if proc.returncode != 0 or not calls:
            raise SystemExit(f"rc={proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        lines = Path(calls[-1]["payload"]["transcript_path"]).read_bytes().split(b"\n")[:-1]
        kept = [i for i, line in enumerate(lines) if len(line) <= MAX_LINE_BYTES]
        (OUT / "gemini_transcript.jsonl").write_text("\n".join(clean(lines[i].decode(), folders) for i in kept) + "\n")
        rows = [
            {
                "lines": len([i for i in kept if i < c["lines"]]),
                "payload": dict(c["payload"], transcript_path="TRANSCRIPT"),
            }
            for c in calls
        ]
        (OUT / "gemini_hooks.json").write_text(clean(json.dumps(rows, indent=1), folders) + "\n")
        stream("ok", proc, folders)
        print(f"gemini: {len(rows)} hook calls, {len(kept)} of {len(lines)} transcript lines")
    with tempfile.TemporaryDirectory() as tmp:
        stream("http400", *run(Path(tmp), [HttpError(400)])[:2])
    with tempfile.TemporaryDirectory() as tmp:
        stream("signedout", *run(Path(tmp), [Final("never")], signed_in=False)[:2])


if __name__ == "__main__":
    main()
