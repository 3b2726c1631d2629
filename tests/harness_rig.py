"""Running the real harness binaries headless against a scripted model (tests/model_servers.py).

The binaries come from ``python3 tests/harnesses/install.py`` (``<repo>/.harnesses/``), else PATH.
Every run gets the test's own HOME (with CODEX_HOME and HERMES_HOME inside it), an environment
without the caller's API keys, and a wall-clock limit: Codex retries forever when its model
endpoint is down, so an unbounded run would hang the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

REPO = Path(__file__).resolve().parent.parent
HARNESSES = REPO / ".harnesses"
NODE_BIN = HARNESSES / "node" / "node_modules" / ".bin"
INSTALL_COMMAND = "python3 tests/harnesses/install.py"
RUN_TIMEOUT_S = 90.0  # a loaded 2-core machine runs the longest session here in ~25 s
CLOSED_PROXY = "http://127.0.0.1:9"  # the discard port, closed here: a refused connection, never a remote host
KEPT_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "PYTHONPATH",
    "XDG_CONFIG_HOME",
    "XDG_RUNTIME_DIR",
    "SSL_CERT_FILE",
    "TERM",
)
"""XDG_RUNTIME_DIR: the hook daemons the harness's hooks start live in the test's own folder, stopped at teardown."""
BINARIES = {
    "claude": NODE_BIN / "claude",
    "codex": NODE_BIN / "codex",
    "hermes": HARNESSES / "hermes-venv" / "bin" / "hermes",
}


def find_binary(name: str) -> Optional[Path]:
    """The project's installed copy of a harness, else the one on PATH, else None."""
    own = BINARIES[name]
    if own.exists():
        return own
    found = shutil.which(name)
    return Path(found) if found else None


def require_binary(name: str) -> Path:
    path = find_binary(name)
    if path is None:
        pytest.skip(
            f"{name} is not installed: run `{INSTALL_COMMAND}` (the README's test command does) to run the "
            f"{name} end-to-end tests"
        )
    return path


@dataclass
class Harness:
    """One harness binary, a temporary HOME and how to run it once headless."""

    name: str
    binary: Path
    home: Path

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    @property
    def hermes_home(self) -> Path:
        return self.home / ".hermes"

    def env(self, model_url: str, extra: Optional[dict] = None) -> dict:
        """A clean environment: PATH with the project's Node first, the temporary HOME, no real credentials."""
        env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
        env["PATH"] = os.pathsep.join([str(NODE_BIN), str(self.binary.parent), env.get("PATH", "")])
        env.update(HOME=str(self.home), CODEX_HOME=str(self.codex_home), HERMES_HOME=str(self.hermes_home))
        env.update(
            ANTHROPIC_BASE_URL=model_url,
            ANTHROPIC_API_KEY="sk-scripted-model",
            IS_SANDBOX="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            MOCK_API_KEY="scripted-model",
            HERMES_ACCEPT_HOOKS="1",
            NO_COLOR="1",
        )
        # Only loopback is reachable: anything a harness would fetch from elsewhere (update checks, model
        # catalogues, tool downloads) goes to a closed port on this machine and fails at once.
        env.update(
            dict.fromkeys(
                ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"), CLOSED_PROXY
            )
        )
        env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
        env.update(extra or {})
        return env

    def configure(self, model_url: str) -> None:
        """Point the harness at the scripted model (Claude takes it from the environment)."""
        if self.name == "codex":
            import tomlkit

            self.codex_home.mkdir(parents=True, exist_ok=True)
            config = self.codex_home / "config.toml"
            doc = tomlkit.parse(config.read_text() if config.exists() else "")
            doc["model"], doc["model_provider"] = "mock-model", "mock"
            providers = doc.setdefault("model_providers", tomlkit.table(is_super_table=True))
            providers["mock"] = {
                "name": "scripted",
                "base_url": f"{model_url}/v1",
                "wire_api": "responses",
                "env_key": "MOCK_API_KEY",
            }
            config.write_text(tomlkit.dumps(doc))
        elif self.name == "hermes":
            import yaml

            self.hermes_home.mkdir(parents=True, exist_ok=True)
            config = self.hermes_home / "config.yaml"
            data = (yaml.safe_load(config.read_text()) if config.exists() else None) or {}
            data["model"] = {
                "default": "mock-model",
                "provider": "custom",
                "base_url": f"{model_url}/v1",
                "api_key": "scripted-model",
                "context_length": 128000,
            }  # known: Hermes skips probing the endpoint for it
            data["hooks_auto_accept"] = True
            data["security"] = {**(data.get("security") or {}), "tirith_enabled": False}  # else it downloads a scanner
            config.write_text(yaml.safe_dump(data, sort_keys=False))

    def trust_project(self, folder: Path) -> None:
        """Mark ``folder`` trusted in Codex's config, as Codex records a person's answer to its trust question."""
        import tomlkit

        self.codex_home.mkdir(parents=True, exist_ok=True)
        config = self.codex_home / "config.toml"
        doc = tomlkit.parse(config.read_text() if config.exists() else "")
        projects = doc.setdefault("projects", tomlkit.table(is_super_table=True))
        projects[str(folder.resolve())] = {"trust_level": "trusted"}
        config.write_text(tomlkit.dumps(doc))

    def command(self, prompt: str, cwd: Path) -> list[str]:
        if self.name == "claude":
            return [
                str(self.binary),
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "bypassPermissions",
                "--max-turns",
                "40",
            ]
        if self.name == "codex":
            return [
                str(self.binary),
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-C",
                str(cwd),
                "--dangerously-bypass-approvals-and-sandbox",
                "--dangerously-bypass-hook-trust",
                prompt,
            ]
        # -t terminal: the one toolset the script uses; the others only cost start-up time
        return [
            str(self.binary),
            "chat",
            "-q",
            prompt,
            "-Q",
            "--yolo",
            "--accept-hooks",
            "--max-turns",
            "40",
            "-t",
            "terminal",
        ]

    def run(
        self, prompt: str, cwd: Path, model_url: str, extra_env: Optional[dict] = None, timeout: float = RUN_TIMEOUT_S
    ) -> subprocess.CompletedProcess:
        """One headless session in ``cwd``, killed after ``timeout`` seconds (the test then fails with its output)."""
        self.configure(model_url)
        cmd = self.command(prompt, cwd)
        try:
            return subprocess.run(
                cmd,
                cwd=cwd,
                env=self.env(model_url, extra_env),
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            out = (
                (exc.stdout or b"").decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            )
            err = (
                (exc.stderr or b"").decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
            )
            pytest.fail(
                f"{self.name} did not finish within {timeout:.0f} s\nstdout (tail):\n{out[-3000:]}\nstderr "
                f"(tail):\n{err[-3000:]}"
            )
