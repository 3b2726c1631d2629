"""OpenCode, run headless (``opencode run --format json``) against a scripted OpenAI-compatible model on loopback.

OpenCode takes a custom provider from its config (``provider.<id>.npm = "@ai-sdk/openai-compatible"`` with a
``baseURL``; that SDK is bundled in the binary): the project's ``opencode.json`` names it here, beside whatever
``strict-loop install opencode`` writes there. The server speaks chat completions (``model_servers.ChatModel``'s
format) with OpenCode's tool names: ``bash`` (``command`` and ``description``), ``edit``, ``write``, ``read``. A
request that offers no tools is a side call (the session's title) and takes no step.

The harness gets a HOME and TMPDIR of its own, no models.dev fetch, no autoupdate, and only loopback reachable.
OpenCode's data (its session database), cache and state folders are one set per test session (:func:`shared_folders`),
as a person's are kept between runs; its global config folder is ``$XDG_CONFIG_HOME/opencode``, the test's own (it is
strict-loop's config folder too; OpenCode reads it even when ``OPENCODE_CONFIG_DIR`` names another). Where each start of
OpenCode (~1.6 s of CPU with the switches below, ~2.6 s without) goes, measured on 1.18.33:

- With no models.dev catalog file (none is fetched), it builds every provider of the snapshot it carries (~1 s of
  CPU); ``OPENCODE_MODELS_PATH`` names an empty one instead: the scripted provider is the config's own.

- Every config folder it reads (its global one, each ``.opencode/`` from the project up) gets ``@opencode-ai/plugin``
  installed with npm's Arborist before any plugin loads (~0.3-0.5 s of CPU each, ~1.5 s of wall; offline it fails,
  at once with ``npm_config_offline``, else after npm's retries, ~70 s). It skips a folder whose ``node_modules/``
  exists and whose ``package-lock.json`` lists the package, as after a person's first run online: :func:`prewarm`,
  for the global folder on every run, for a project's ``.opencode/`` by the test.
- An MCP server named in the config is started with the session (ours: a Python start, ~0.7 s of CPU), asked or not:
  ``OpenCode.mcp`` off disables it for the run.
- Its file finder (``fff``, a Rust library inside the binary) is written out to ``$TMPDIR`` as a 5.5 MB
  ``.<hash>-00000000.so`` on each start and never removed: TMPDIR is the test's own folder, never /tmp.
- No update check (``opencode run`` has none), no git snapshot outside a git repository, no LSP or formatter start
  (none configured), no network but the model's with the switches below; the rest is the Bun runtime itself (~0.5 s
  of CPU to start the binary) and OpenCode's own work per step.
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
from harness_rig import CLOSED_PROXY, INSTALL_COMMAND, KEPT_ENV, NODE_BIN, RUN_TIMEOUT_S, run_in_group
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


PLUGIN_PACKAGE = "@opencode-ai/plugin"
"""What OpenCode installs into each of its config folders before loading plugins (ours needs none of it)."""


def prewarm(folder: Path) -> Path:
    """Make ``folder`` an OpenCode config folder whose plugin package is in place, as OpenCode leaves it after its
    install: ``node_modules/`` and a ``package-lock.json`` that lists the package. OpenCode then skips the install
    (its check reads just these two) instead of loading npm's Arborist to fail offline: ~0.4 s of CPU per folder and
    start."""
    (folder / "node_modules").mkdir(parents=True, exist_ok=True)
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": {PLUGIN_PACKAGE: "*"}}}}
    (folder / "package-lock.json").write_text(json.dumps(lock) + "\n")
    return folder


def shared_folders(root: Path) -> dict:
    """The environment naming OpenCode's data (the session database), cache and state folders under ``root`` (a test
    session's): strict-loop reads none of these XDG folders, so its hooks in the session are not moved."""
    folders = {name: root / name for name in ("data", "cache", "state")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    return {
        "XDG_DATA_HOME": str(folders["data"]),
        "XDG_CACHE_HOME": str(folders["cache"]),
        "XDG_STATE_HOME": str(folders["state"]),
    }


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
    """The OpenCode binary, a temporary HOME, OpenCode's shared folders, and how to run it once headless."""

    binary: Path
    home: Path
    folders: dict = field(default_factory=dict)
    """From :func:`shared_folders`; empty: OpenCode's folders are the ones under HOME and ``$XDG_CONFIG_HOME``."""
    mcp: bool = True
    """False: the MCP server ``strict-loop install opencode`` configures is disabled for the run (never started), for a
    session whose test is about the plugin alone."""
    name: str = "opencode"

    @property
    def tmp(self) -> Path:
        """The run's TMPDIR, in the test's own folder: OpenCode leaves a 5.5 MB library there on every start."""
        return self.home / ".tmp"

    def env(self, extra: Optional[dict] = None) -> dict:
        env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}  # XDG_CONFIG_HOME: strict-loop's, the test's
        env["PATH"] = os.pathsep.join([str(NODE_BIN), env.get("PATH", "")])
        self.tmp.mkdir(parents=True, exist_ok=True)
        env.update(self.folders, HOME=str(self.home), TMPDIR=str(self.tmp), NO_COLOR="1")
        prewarm(Path(env.get("XDG_CONFIG_HOME") or self.home / ".config") / "opencode")
        env.update(OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1")
        # an empty models.dev catalog: the scripted provider is the config's own, and without a catalog file OpenCode
        # builds every provider of the snapshot it carries, ~1 s of CPU per start
        catalog = self.home / "models-dev.json"
        if not catalog.exists():
            catalog.write_text("{}\n")
        env.update(OPENCODE_MODELS_PATH=str(catalog))
        # JavaScriptCore's two optimizing JIT tiers (DFG, FTL) off: they compile hot code on threads of their own for
        # later, which a run of seconds never reaches: ~0.3 s (FTL) and ~0.15 s (DFG) of CPU less per run, the same wall
        # time (Bun reads BUN_JSC_<option>)
        env.update(BUN_JSC_useFTLJIT="0", BUN_JSC_useDFGJIT="0")
        if not self.mcp:
            from strict_loop.harness.configedit import SERVER

            off = {"mcp": {SERVER: {"type": "local", "command": ["true"], "enabled": False}}}
            env["OPENCODE_CONFIG_CONTENT"] = json.dumps(off)
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
        return run_in_group("opencode", self.command(prompt), cwd, self.env(extra_env), timeout)


def stream_events(proc: subprocess.CompletedProcess) -> list[dict]:
    """The JSON lines of a ``--format json`` run."""
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
