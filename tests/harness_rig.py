"""Running the real harness binaries headless against a scripted model (tests/model_servers.py).

The binaries come from ``python3 tests/harnesses/install.py`` (``<repo>/.harnesses/``), else PATH.
Every run gets the test's own HOME (with CODEX_HOME, HERMES_HOME and TMPDIR inside it), an environment
without the caller's API keys, and a wall-clock limit: Codex retries forever when its model
endpoint is down, so an unbounded run would hang the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
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


HERMES_OWN_DISCOVERY = ("memory", "context_engine", "platforms", "model-providers")
"""Bundled plugin folders Hermes's plugin loader skips (each has a discovery of its own; the custom model provider
the tests use is one): never named as disabled."""


def bundled_hermes_plugins(binary: Path) -> list[str]:
    """The plugins bundled with the Hermes of ``binary`` (its ``plugins/`` beside ``hermes_cli``), as the names its
    ``plugins.disabled`` takes. Hermes loads every bundled backend (image and video generators, browsers, web search,
    dashboard sign-in: 25 of them) at each start, ~0.15 s of CPU, though the one toolset a test uses (``-t terminal``)
    needs none of them; a person may switch them off the same way. Ours (``strict-loop``) is a user plugin: never among
    them."""
    found: set[str] = set()
    for root in (binary.resolve().parent.parent / "lib").glob("python3*/site-packages/plugins"):
        for manifest in [*root.glob("*/plugin.yaml"), *root.glob("*/*/plugin.yaml")]:
            key = manifest.parent.relative_to(root).as_posix()
            if key.split("/")[0] not in HERMES_OWN_DISCOVERY:
                found.add(key)
    return sorted(found)


def run_in_group(name: str, argv: list[str], cwd: Path, env: dict, timeout: float) -> subprocess.CompletedProcess:
    """One headless session in ``cwd``, in a process group of its own that is killed whole after ``timeout`` seconds
    (a harness that relaunches itself as a child leaves none behind); the test fails then, with both outputs' tails."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
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
        pytest.fail(f"{name} did not finish within {timeout:.0f} s\nstdout:\n{out[-3000:]}\nstderr:\n{err[-3000:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@dataclass
class Harness:
    """One harness binary, a temporary HOME and how to run it once headless."""

    name: str
    binary: Path
    home: Path
    mcp: bool = True
    """False: Claude Code and Codex start no MCP server (the one ``strict-loop install`` configures included): for a
    session whose test is about the hooks alone, as a start of ours costs ~0.7 s of CPU and is never asked."""

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    @property
    def hermes_home(self) -> Path:
        return self.home / ".hermes"

    @property
    def tmp(self) -> Path:
        """The run's TMPDIR, in the test's own folder: a Hermes ended mid-run (a pause, a wall clock) leaves its shell
        snapshot ``hermes-snap-*.sh`` there, and Claude Code its ``claude-*-cwd`` files; in the caller's TMPDIR they
        piled up in /dev/shm (issue 26)."""
        return self.home / ".tmp"

    def env(self, model_url: str, extra: Optional[dict] = None) -> dict:
        """A clean environment: PATH with the project's Node first, the temporary HOME and TMPDIR, no real
        credentials."""
        env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
        env["PATH"] = os.pathsep.join([str(NODE_BIN), str(self.binary.parent), env.get("PATH", "")])
        env.update(HOME=str(self.home), CODEX_HOME=str(self.codex_home), HERMES_HOME=str(self.hermes_home))
        self.tmp.mkdir(parents=True, exist_ok=True)
        env.update(TMPDIR=str(self.tmp))
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
            # else every start probes the toolchain for its system prompt (python3 -m pip, pip --version: ~0.6 s of
            # CPU per run, a quarter of Hermes's start-up) in a thread of its own
            data["agent"] = {**(data.get("agent") or {}), "environment_probe": False}
            plugins = data.get("plugins") if isinstance(data.get("plugins"), dict) else {}
            off = plugins.get("disabled") if isinstance(plugins.get("disabled"), list) else []
            data["plugins"] = {**plugins, "disabled": sorted({*off, *bundled_hermes_plugins(self.binary)})}
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
                *([] if self.mcp else ["--strict-mcp-config"]),  # only the servers of --mcp-config: none
            ]
        if self.name == "codex":
            # disabled (a command too, for a config that names none): no server start, configured or not
            off = ["-c", "mcp_servers.strict-loop.enabled=false", "-c", 'mcp_servers.strict-loop.command="true"']
            return [
                str(self.binary),
                "exec",
                *([] if self.mcp else off),
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

    def converse(
        self,
        prompts: Sequence[str],
        cwd: Path,
        model_url: str,
        before: Optional[Callable[[int], None]] = None,
        timeout: float = RUN_TIMEOUT_S,
    ) -> subprocess.CompletedProcess:
        """One headless Claude Code session a person talks to: each prompt goes in on stdin (``--input-format
        stream-json``) once the turn before it has ended (its ``result`` event), as a person types the next message
        after reading the answer; ``before(k)`` runs just before prompt ``k`` goes in. One start of Claude Code and of
        its session's hooks instead of one per message (resumed ``-p`` runs); the hooks see each message as its own
        UserPromptSubmit, as in a ``-p`` run."""
        assert self.name == "claude", "only Claude Code takes a conversation on stdin here"
        self.configure(model_url)
        cmd = self.command("", cwd)
        at = cmd.index("-p") + 1
        cmd[at : at + 1] = ["--input-format", "stream-json"]  # the prompts come on stdin, not after -p
        fired = threading.Event()
        with tempfile.TemporaryFile() as err:  # a file, not a pipe: unread stderr never blocks the session
            proc = subprocess.Popen(
                cmd, cwd=cwd, env=self.env(model_url), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err
            )
            stdin, stdout = proc.stdin, proc.stdout
            assert stdin is not None and stdout is not None
            watchdog = threading.Timer(timeout, lambda: (fired.set(), proc.kill()))
            watchdog.start()
            lines: list[str] = []
            try:
                for k, prompt in enumerate(prompts):
                    if before:
                        before(k)
                    stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}).encode())
                    stdin.write(b"\n")
                    stdin.flush()
                    if not _read_turn(stdout, lines):
                        break  # it ended (or was killed) before the turn did: the test reads what it said
                stdin.close()
                _read_turn(stdout, lines)  # to the end
                proc.wait()
            except OSError:  # it ended while a prompt went in
                proc.kill()
                proc.wait()
            finally:
                watchdog.cancel()
            err.seek(0)
            stderr = err.read().decode("utf-8", "replace")
        out = "".join(lines)
        if fired.is_set():
            pytest.fail(
                f"claude did not finish within {timeout:.0f} s\nstdout (tail):\n{out[-3000:]}\nstderr (tail):\n"
                f"{stderr[-3000:]}"
            )
        return subprocess.CompletedProcess(cmd, proc.returncode, out, stderr)


def _read_turn(stream, lines: list[str]) -> bool:
    """Read stream-json lines into ``lines`` up to a turn's ``result`` event (True) or the end of output (False)."""
    for raw in stream:
        line = raw.decode("utf-8", "replace")
        lines.append(line)
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "result":
            return True
    return False


def settle_tasks(work: Path) -> None:
    """Date the workspace's tasks folder 10 s back and build its index of running tasks, as in live use, where a task
    is set up a while before the agent's session: within 2 s of a change the index is racy (``sessions.RACY_S``), and
    each hook call of that first stretch of a session, which has no ``STRICT_LOOP_TASK`` (no supervisor), was handed to
    the full hook in process (~0.1 s of CPU each) instead of the workspace's daemon."""
    from strict_loop import Workspace
    from strict_loop.storage import sessions

    layout = Workspace(work).layout
    past = time.time() - 10
    os.utime(layout.tasks, (past, past))
    sessions.live_tasks(layout)


# -- what a failed end-to-end test prints: one form for every harness's tests ------------------------------------------


def session_detail(proc: subprocess.CompletedProcess, model, events: list[dict]) -> str:
    """A harness run's exit, output tails, the scripted model's steps used and the task's events, for an assertion."""
    return (
        f"rc={proc.returncode}\nstdout (tail):\n{proc.stdout[-2500:]}\nstderr (tail):\n{proc.stderr[-2500:]}\n"
        f"steps used: {model.steps_used}\nevents: "
        + json.dumps([(e["kind"], e.get("message", "")[:80]) for e in events])
    )


def supervise_detail(work: Path, task_id: str, err) -> str:
    """A supervised run's stderr (``err``: a StringIO), the task's events and its invocations' files, for an
    assertion."""
    from conftest import read_jsonl

    from strict_loop import Workspace

    paths = Workspace(work).task_paths(task_id)
    events = read_jsonl(paths.events)
    tails = {
        p.name: p.read_text(errors="replace")[-1500:]
        for p in sorted(paths.supervisor.glob("invocation-*"))
        if p.is_file()
    }
    return (
        f"stderr:\n{err.getvalue()[-3000:]}\nevents: "
        f"{json.dumps([(e['kind'], e.get('message', '')[:100]) for e in events])}\nfiles: {json.dumps(tails)[-6000:]}"
    )


def agent_calls(events: list[dict]) -> list[dict]:
    """The recorded tool calls of the agent (not the person's turns)."""
    return [e["data"] for e in events if e["kind"] == "tool_call" and e["data"].get("actor") != "person"]


def person_said(events: list[dict]) -> list[str]:
    """What the person typed, as recorded."""
    return [e["data"]["output"] for e in events if e["kind"] == "tool_call" and e["data"].get("actor") == "person"]
