"""OpenCode, run headless (``opencode run --format json``) against a scripted OpenAI-compatible model on loopback.

OpenCode takes a custom provider from its config (``provider.<id>.npm = "@ai-sdk/openai-compatible"`` with a
``baseURL``; that SDK is bundled in the binary): the project's ``opencode.json`` names it here, beside whatever
``strict-loop install opencode`` writes there. The server speaks chat completions (``model_servers.ChatModel``'s
format) with OpenCode's tool names: ``bash`` (``command`` and ``description``), ``edit``, ``write``, ``read``. A
request that offers no tools is a side call (the session's title) and takes no step.

The harness gets a HOME of its own (its config, data, cache and state folders inside it), no models.dev fetch, no
autoupdate, and only loopback reachable. OpenCode installs ``@opencode-ai/plugin`` into each config folder it reads
(``.opencode/``, ``~/.config/opencode``) before it loads plugins; offline that install fails, at once with
``npm_config_offline`` (else after npm's retries, ~70 s), and OpenCode goes on without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest
from harness_rig import CLOSED_PROXY, INSTALL_COMMAND, KEPT_ENV, NODE_BIN, RUN_TIMEOUT_S
from model_servers import SIDE_TEXT, Calls, ChatModel, Final, Shell, _json, _sse

BINARY = NODE_BIN / "opencode"
PROVIDER, MODEL = "scripted", "mock-model"


@dataclass(frozen=True)
class Tool:
    """The model calls any OpenCode tool (``edit``, ``write``, ``read``, ...) with these arguments, after ``text``."""

    name: str
    args: dict = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True)
class Gate:
    """The request that reaches this step waits until the test opens the gate (``opened``), then takes the next step:
    what a person does meanwhile (answering a pause) lands while the session is still running. ``reached`` says the
    request is waiting."""

    reached: threading.Event = field(default_factory=threading.Event)
    opened: threading.Event = field(default_factory=threading.Event)


class OpenCodeModel(ChatModel):
    """Chat completions (streamed, as OpenCode's AI SDK asks) whose calls use OpenCode's tool names."""

    shell_tool = "bash"

    def respond(self, method: str, path: str, body: dict) -> tuple[int, str, bytes]:
        if method != "POST" or not path.endswith("/chat/completions"):
            return super().respond(method, path, body)
        step = self.take(body) if body.get("tools") else Final(SIDE_TEXT)
        while isinstance(step, Gate):
            step.reached.set()
            step.opened.wait(RUN_TIMEOUT_S)
            with self._lock:
                step = self._advance()
        message: dict = {"role": "assistant", "content": None}
        calls = [] if isinstance(step, Final) else list(step.calls if isinstance(step, Calls) else (step,))  # type: ignore[union-attr]
        texts = [step.text] if isinstance(step, Final) else [c.text for c in calls if c.text]
        if texts:
            message["content"] = "\n\n".join(texts)
        if calls:
            message["tool_calls"] = [
                {"index": i, "id": self.new_id("call"), "type": "function", "function": self._function(c)}
                for i, c in enumerate(calls)
            ]
        base = {"id": self.new_id("chatcmpl"), "created": int(time.time()), "model": body.get("model", MODEL)}
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            done = {"index": 0, "message": message, "finish_reason": finish}
            return _json(dict(base, object="chat.completion", usage=usage, choices=[done]))
        chunk = dict(base, object="chat.completion.chunk")
        events = [
            (None, dict(chunk, choices=[{"index": 0, "delta": message, "finish_reason": None}])),
            (None, dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": finish}], usage=usage)),
        ]
        return 200, "text/event-stream", _sse(events) + b"data: [DONE]\n\n"

    @staticmethod
    def _function(call: object) -> dict:
        if isinstance(call, Shell):
            return {"name": "bash", "arguments": json.dumps({"command": call.command, "description": "Run it"})}
        return {"name": call.name, "arguments": json.dumps(call.args)}  # type: ignore[attr-defined]


def require_opencode() -> Path:
    if not BINARY.exists():
        pytest.skip(f"OpenCode is not installed: run `{INSTALL_COMMAND}` to run the OpenCode end-to-end tests")
    return BINARY


def provider_config(model_url: str) -> dict:
    """The project config naming the scripted model as OpenCode's provider and default model."""
    options = {"baseURL": f"{model_url}/v1", "apiKey": "scripted-key"}
    models = {MODEL: {"name": "Scripted", "tool_call": True}}
    return {
        "$schema": "https://opencode.ai/config.json",  # else OpenCode writes it into the file when it starts
        "provider": {
            PROVIDER: {"npm": "@ai-sdk/openai-compatible", "name": "Scripted", "options": options, "models": models}
        },
        "model": f"{PROVIDER}/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
    }


def write_provider(workspace: Path, model_url: str) -> None:
    """Add the scripted provider to the workspace's opencode.json (keeping what is there)."""
    path = workspace / "opencode.json"
    doc = json.loads(path.read_text()) if path.exists() else {}
    doc.update(provider_config(model_url))
    path.write_text(json.dumps(doc, indent=2) + "\n")


@dataclass
class OpenCode:
    """The OpenCode binary, a temporary HOME, and how to run it once headless."""

    binary: Path
    home: Path
    name: str = "opencode"

    def env(self, extra: Optional[dict] = None) -> dict:
        env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}  # its config folder: $XDG_CONFIG_HOME/opencode
        env["PATH"] = os.pathsep.join([str(NODE_BIN), env.get("PATH", "")])
        env.update(
            HOME=str(self.home), NO_COLOR="1", OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1"
        )
        env.update(npm_config_offline="true", npm_config_fetch_retries="0")  # no 70 s of retries for its plugin package
        env.update(dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"), CLOSED_PROXY))
        env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
        env.update(extra or {})
        return env

    def command(self, prompt: str) -> list[str]:
        return [str(self.binary), "run", "--format", "json", "--auto", prompt]

    def run(
        self, prompt: str, cwd: Path, extra_env: Optional[dict] = None, timeout: float = RUN_TIMEOUT_S
    ) -> subprocess.CompletedProcess:
        """One headless session in ``cwd`` (its own process group, killed whole after ``timeout`` seconds)."""
        proc = subprocess.Popen(
            self.command(prompt),
            cwd=cwd,
            env=self.env(extra_env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
            pytest.fail(
                f"opencode did not finish within {timeout:.0f} s\nstdout:\n{out[-3000:]}\nstderr:\n{err[-3000:]}"
            )
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def stream_events(proc: subprocess.CompletedProcess) -> list[dict]:
    """The JSON lines of a ``--format json`` run."""
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
