"""Capture what the real harnesses print headless, as fixtures for the stream adapters (tests/fixtures/streams/).

Run ``python3 tests/capture_streams.py`` after ``python3 tests/harnesses/install.py`` (or when a pinned harness
version changes). Each harness runs once against a scripted model on loopback that makes it run a failing
command, then a succeeding one, then answers with a final text ("ok"), and once against an endpoint that
answers every model request with HTTP 400 ("http400") and 429 ("http429"; for Claude also "http429-killed":
killed while it retries, as the supervisor's wall clock kills a run). stdout is saved as
``<harness>-<case>.jsonl`` (Hermes prints no stream: its ``--usage-file`` is saved as ``hermes-<case>.usage.json``
and its stdout as ``hermes-<case>.txt``), with the exit code in ``<harness>-<case>.meta.json``. A harness that
keeps retrying is killed after ``ERROR_TIMEOUT_S`` and saved as it stood (``timed_out`` in the meta file).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness_rig import Harness, find_binary  # noqa: E402
from model_servers import AnthropicModel, ChatModel, Final, ResponsesModel, Shell, _json  # noqa: E402

OUT = Path(__file__).resolve().parent / "fixtures" / "streams"
MODELS = {"claude": AnthropicModel, "codex": ResponsesModel, "hermes": ChatModel}
STEPS = [
    Shell("ls /nonexistent-strict-loop-probe"),
    Shell("echo hello > out.txt && cat out.txt"),
    Final("Wrote out.txt."),
]
PROMPT = "List the probe folder, then write hello to out.txt."
OK_TIMEOUT_S = 120.0
ERROR_TIMEOUT_S = 45.0
KILLED_TIMEOUT_S = 12.0


def failing_model(base: type, status: int) -> type:
    """``base`` whose model requests (the ones that would take a step) all answer HTTP ``status``."""

    class Failing(base):  # type: ignore[misc, valid-type]
        def respond(self, method: str, path: str, body: dict):
            model_request = method == "POST" and path.endswith(("/messages", "/responses", "/chat/completions"))
            if model_request and (body.get("tools") or status == 400):
                kind = "rate_limit_error" if status == 429 else "invalid_request_error"
                if base is AnthropicModel:
                    return _json(
                        {"type": "error", "error": {"type": kind, "message": f"scripted HTTP {status}"}}, status
                    )
                return _json({"error": {"message": f"scripted HTTP {status}", "type": kind, "code": kind}}, status)
            return super().respond(method, path, body)

    return Failing


def command(harness: Harness, work: Path, usage: Path) -> list[str]:
    if harness.name == "hermes":  # one-shot mode: the supervisor's Hermes command, with the usage file
        return [str(harness.binary), "-z", PROMPT, "-t", "terminal", "--usage-file", str(usage)]
    return harness.command(PROMPT, work)


def capture(name: str, case: str, model_class: type, timeout: float, extra_env: Optional[dict] = None) -> None:
    binary = find_binary(name)
    if binary is None:
        print(f"skip {name}: not installed", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "w"
        home.mkdir()
        work.mkdir()
        harness = Harness(name, binary, home)
        usage = Path(tmp) / "usage.json"
        with model_class(STEPS) as model:
            harness.configure(model.url)
            timed_out, rc = False, None
            try:
                proc = subprocess.run(
                    command(harness, work, usage),
                    cwd=work,
                    env=harness.env(model.url, extra_env),
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    stdin=subprocess.DEVNULL,
                )
                out, rc = proc.stdout, proc.returncode
            except subprocess.TimeoutExpired as exc:
                raw = exc.stdout or b""
                out, timed_out = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw, True
        stem = f"{name}-{case}"
        (OUT / (stem + (".txt" if name == "hermes" else ".jsonl"))).write_text(out.replace(tmp, "/tmp/capture"))
        if usage.exists():
            (OUT / f"{stem}.usage.json").write_text(usage.read_text().replace(tmp, "/tmp/capture"))
        (OUT / f"{stem}.meta.json").write_text(json.dumps({"exit_code": rc, "timed_out": timed_out}) + "\n")
        print(f"{stem}: rc={rc} timed_out={timed_out} lines={len(out.splitlines())}", file=sys.stderr)


def main(argv: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    names = argv or list(MODELS)
    for name in names:
        capture(name, "ok", MODELS[name], OK_TIMEOUT_S)
        for status in (
            400,
            429,
        ):  # Claude retries a 429 ten times over minutes: here once, and once more killed mid-retries
            capture(
                name,
                f"http{status}",
                failing_model(MODELS[name], status),
                ERROR_TIMEOUT_S,
                {"CLAUDE_CODE_MAX_RETRIES": "1"},
            )
        if name == "claude":
            capture(name, "http429-killed", failing_model(MODELS[name], 429), KILLED_TIMEOUT_S)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
