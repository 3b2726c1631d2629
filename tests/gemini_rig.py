"""Gemini CLI, run headless against a scripted Gemini API on loopback: the model server and the harness runner.

The server speaks what ``@google/gemini-cli`` 0.61.0 asks of ``GOOGLE_GEMINI_BASE_URL`` with an API key
(``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``, ``:generateContent``, ``:countTokens``): a request that
offers tools takes the next scripted step (``model_servers``' steps, and ``Tool`` for any other tool); one that offers
none is a side call (the model router's classifier, a title), answered with the JSON its schema asks for, or a text.
The harness gets a HOME of its own whose settings choose API-key sign-in, the project's folder trusted there as a
person's answer to Gemini CLI's trust question records it, and only loopback reachable.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest
from harness_rig import CLOSED_PROXY, INSTALL_COMMAND, KEPT_ENV, NODE_BIN, RUN_TIMEOUT_S, run_in_group
from model_servers import SIDE_TEXT, Calls, Final, ScriptedModel, Shell, _json

BINARY = NODE_BIN / "gemini"
API_KEY = "scripted-gemini-key"


@dataclass(frozen=True)
class Tool:
    """The model calls any tool (``replace``, ``write_file``, ...) with these arguments, after writing ``text``."""

    name: str
    args: dict = field(default_factory=dict)
    text: str = ""


def _fill(schema: dict) -> object:
    """A value of the JSON schema's shape: what a side call's ``responseJsonSchema`` asks for."""
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        return {k: _fill(v) for k, v in (schema.get("properties") or {}).items() if isinstance(v, dict)}
    if kind in ("number", "integer"):
        return 1
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    return (schema.get("enum") or ["user"])[0] if "enum" in schema else "scripted"


class GeminiModel(ScriptedModel):
    """The Gemini API's generateContent (streamed as SSE, or not), as Gemini CLI uses it."""

    shell_tool = "run_shell_command"

    def respond(self, method: str, path: str, body: dict) -> tuple[int, str, bytes]:
        if path.endswith(":countTokens"):
            return _json({"totalTokens": 100})
        if method != "POST" or not path.endswith(("GenerateContent", "generateContent")):
            return _json({"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}}, 404)
        if body.get("tools"):
            parts = self._parts(self.take(body))
        else:
            config = body.get("generationConfig") or {}
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            parts = [{"text": json.dumps(_fill(schema)) if isinstance(schema, dict) else SIDE_TEXT}]
        answer = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
            "modelVersion": "scripted",
        }
        if "streamGenerateContent" in path:
            return 200, "text/event-stream", f"data: {json.dumps(answer)}\r\n\r\n".encode()
        return _json(answer)

    def _parts(self, step: object) -> list[dict]:
        """A step as the model response's parts: its text, then its function calls."""
        if isinstance(step, Final):
            return [{"text": step.text}]
        calls = step.calls if isinstance(step, Calls) else (step,)
        parts: list[dict] = []
        for call in calls:
            if isinstance(call, Shell):
                name, args = self.shell_tool, {"command": call.command, "description": "Run a command"}
            else:
                name, args = call.name, call.args  # type: ignore[union-attr]
            parts += ([{"text": call.text}] if call.text else []) + [{"functionCall": {"name": name, "args": args}}]
        return parts


def require_gemini() -> Path:
    if not BINARY.exists():
        pytest.skip(f"Gemini CLI is not installed: run `{INSTALL_COMMAND}` to run the Gemini CLI end-to-end tests")
    return BINARY


@dataclass
class Gemini:
    """The Gemini CLI binary, a temporary HOME, and how to run it once headless."""

    binary: Path
    home: Path
    name: str = "gemini"
    mcp: bool = True
    """False: no MCP server starts (the install's included: ~0.7 s of CPU), for a run whose test is about the hooks."""

    def env(self, model_url: str, extra: Optional[dict] = None) -> dict:
        env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
        env["PATH"] = os.pathsep.join([str(NODE_BIN), env.get("PATH", "")])
        env.update(HOME=str(self.home), GEMINI_API_KEY=API_KEY, GOOGLE_GEMINI_BASE_URL=model_url, NO_COLOR="1")
        env["GEMINI_CLI_NO_RELAUNCH"] = "true"  # no second start of itself with a larger heap: ~2 s less per run here
        env.update(dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"), CLOSED_PROXY))
        env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
        env.update(extra or {})
        return env

    def configure(self, model_url: str = "") -> None:
        """API-key sign-in (what `gemini`'s auth dialog records), telemetry and update checks off."""
        folder = self.home / ".gemini"
        folder.mkdir(parents=True, exist_ok=True)
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        }
        (folder / "settings.json").write_text(json.dumps(settings, indent=2))

    def trust(self, folder: Path) -> None:
        """Trust ``folder`` as a person's answer to Gemini CLI's trust question records it."""
        path = self.home / ".gemini" / "trustedFolders.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        trusted = json.loads(path.read_text()) if path.exists() else {}
        trusted[str(folder.resolve())] = "TRUST_FOLDER"
        path.write_text(json.dumps(trusted))

    def command(self, prompt: str) -> list[str]:
        only = [] if self.mcp else ["--allowed-mcp-server-names", "none"]  # a name no server has: none starts
        return [str(self.binary), "-p", prompt, "--output-format", "stream-json", "--approval-mode", "yolo", *only]

    def run(
        self, prompt: str, cwd: Path, model_url: str, extra_env: Optional[dict] = None, timeout: float = RUN_TIMEOUT_S
    ) -> subprocess.CompletedProcess:
        """One headless session in ``cwd`` (its own process group, killed whole after ``timeout`` seconds: Gemini CLI
        relaunches itself as a child)."""
        self.configure(model_url)
        return run_in_group("gemini", self.command(prompt), cwd, self.env(model_url, extra_env), timeout)


def stream_events(proc: subprocess.CompletedProcess) -> list[dict]:
    """The JSON lines of a ``--output-format stream-json`` run."""
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
