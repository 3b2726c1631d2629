"""Each documented registration (harness commands and config snippets) starts a working server.

The harness CLIs themselves are not installed here, so each command or config
entry is parsed the way the harness would read it, and each distinct server
command they name is started over stdio with the official client.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_helpers import server_env

from strict_loop.harness import registry

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "references" / "harnesses.md"
PLACEHOLDER = "/abs/path/to/repo"

pytestmark = pytest.mark.anyio


def _blocks(lang: str, path: Path = DOC) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", path.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)


def _from_command(line: str) -> tuple[str, list[str]] | None:
    words = shlex.split(line)
    if words[:3] in (["claude", "mcp", "add"], ["codex", "mcp", "add"]) and "--" in words:
        rest = words[words.index("--") + 1 :]
        return rest[0], rest[1:]
    if words[:3] == ["gemini", "mcp", "add"] and "--" in words:  # NAME COMMAND -- ARGS
        return words[4], words[words.index("--") + 1 :]
    if words[:3] == ["hermes", "mcp", "add"] and "--command" in words:
        i = words.index("--command")
        args = words[words.index("--args") + 1 :] if "--args" in words else []
        return words[i + 1], args
    return None


def registrations() -> list[tuple[str, str, list[str]]]:
    found = []
    for path in (DOC, REPO / "README.md"):
        for block in _blocks("text", path):
            for line in block.splitlines():
                parsed = (
                    _from_command(line) if line.split()[:1] in (["claude"], ["codex"], ["hermes"], ["gemini"]) else None
                )
                if parsed:
                    found.append((f"{path.name}: {line.split()[0]} mcp add", *parsed))
    claude, gemini, opencode = _blocks("json")
    for name, block in (("claude .mcp.json", claude), ("gemini settings.json", gemini)):
        server = json.loads(block)["mcpServers"]["strict-loop"]
        found.append((name, server["command"], server["args"]))
    command = json.loads(opencode)["mcp"]["strict-loop"]["command"]  # OpenCode's: one list
    found.append(("opencode opencode.json", command[0], command[1:]))
    if sys.version_info >= (3, 11):
        import tomllib

        server = tomllib.loads(_blocks("toml")[0])["mcp_servers"]["strict-loop"]
        found.append(("codex config.toml", server["command"], server["args"]))
    server = yaml.safe_load(_blocks("yaml")[0])["mcp_servers"]["strict-loop"]
    found.append(("hermes config.yaml", server["command"], server["args"]))
    return found


def test_every_harness_is_documented():
    names = {name.split(":")[-1].strip() for name, _, _ in registrations()}
    assert {"claude mcp add", "codex mcp add", "hermes mcp add", "claude .mcp.json", "hermes config.yaml"} <= names
    assert {"gemini mcp add", "gemini settings.json", "opencode opencode.json"} <= names


def _executable(command: str) -> str | None:
    return shutil.which(command, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.mark.parametrize("name, command, args", registrations(), ids=[r[0] for r in registrations()])
def test_documented_registration_names_an_installed_server_and_the_workspace(name, command, args):
    assert _executable(command), f"{command} is not installed by this package"
    assert PLACEHOLDER in args, f"{name} does not name the workspace"


def server_commands() -> dict[tuple[str, tuple[str, ...]], list[str]]:
    """Each distinct documented server command, with the registrations that use it (most use the same one)."""
    commands: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for name, command, args in registrations():
        commands.setdefault((command, tuple(args)), []).append(name)
    return commands


@pytest.mark.parametrize(
    "command, args", list(server_commands()), ids=[" ".join([c, *a]) for c, a in server_commands()]
)
@pytest.mark.slow  # a real server process or seconds of waiting: full suite only
async def test_documented_server_command_starts_the_server(command, args, tmp_path):
    exe = _executable(command)
    assert exe, f"{command} is not installed by this package"
    args = [str(tmp_path) if a == PLACEHOLDER else a for a in args]
    assert str(tmp_path) in args, f"{command} {args} does not name the workspace"
    async with Client(StdioServerParameters(command=exe, args=args, cwd=str(tmp_path), env=server_env())) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("init_state", {"goal": "g", "global_stop_condition": "c", "task_id": "reg"})
        assert not result.is_error
    assert {"init_state", "update_state", "check_stop"} <= tools
    assert (tmp_path / ".agent-loop" / "tasks" / "reg" / "state.json").is_file()


def install_commands() -> list[tuple[str, list[str]]]:
    """Each documented ``strict-loop install ...`` line (README.md and this doc), as argv."""
    found = []
    for path in (DOC, REPO / "README.md"):
        for block in _blocks("text", path):
            found += [
                (path.name, shlex.split(line)[1:])
                for line in block.splitlines()
                if line.startswith("strict-loop install ")
            ]
    return found


def test_every_harness_has_a_documented_install_command():
    for doc in (DOC.name, "README.md"):
        assert {args[1] for name, args in install_commands() if name == doc} == set(registry.names()), doc


@pytest.mark.parametrize("doc, args", install_commands(), ids=[" ".join(a) for _, a in install_commands()])
def test_documented_install_command_runs(doc, args, tmp_path, monkeypatch):
    from conftest import run_cli

    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    for name, value in (("HOME", home), ("CODEX_HOME", home / ".codex"), ("HERMES_HOME", home / ".hermes")):
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    args = [str(ws) if a == PLACEHOLDER else a for a in args]
    out = run_cli(*args, "--dry-run", cwd=ws).stdout
    assert "+++ " in out and "would copy" in out and not any(tmp_path.rglob("*.json"))
    run_cli(*args, cwd=ws)
    assert any(p.name == "SKILL.md" for p in tmp_path.rglob("SKILL.md"))
