"""Running one harness invocation headless: its command line, its per-run wiring, its process group.

Why a module of its own: the supervisor's loop (``supervisor.py``) decides; this file knows each
harness's flags and how to start, read and stop a child without touching the user's config.
Per-run wiring only: Claude gets ``--mcp-config`` + ``--strict-mcp-config`` and our hooks through
``--settings``; Codex gets ``-c mcp_servers.strict-loop.*`` (``exec`` prints every command with its exit
code, so its stream is enough); Hermes, which prints no stream, gets a temporary HERMES_HOME copied from
the user's (the original is never edited) with the MCP server and our plugin (its hooks: the thin hook) in the
copy, and Gemini CLI a temporary ``GEMINI_CLI_HOME`` in the same way, our hooks and MCP server in its settings.json.
The hooks let the monitor see each call as it happens and whisper to the agent within the run.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Optional

from strict_loop.base import masking
from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import atomic_write
from strict_loop.base.jsontext import read_object
from strict_loop.harness import registry
from strict_loop.harness.handler import SUPERVISED_ENV, TASK_ENV

HERMES_SKIP = ("sessions", "logs", "cache", "audio_cache", "image_cache", "*.db", "*.db-*", "*.sqlite*")
"""What a temporary HERMES_HOME does not copy: history and caches (large, and not needed for one run)."""


def find_binary(harness: str, given: Optional[str], env: Mapping[str, str]) -> str:
    """The harness binary: ``given`` (a path or a name on PATH), else ``harness`` on the child's PATH."""
    name = given or harness
    found = (
        shutil.which(name, path=env.get("PATH")) if os.sep not in name else (name if os.access(name, os.X_OK) else None)
    )
    if not found:
        raise LoopError(
            "supervise.harness_bin",
            f"no executable '{name}' found" + ("" if given else " on PATH"),
            f"install {harness}, or pass its path with --harness-bin",
        )
    return found


def mcp_command(workspace: Path) -> list[str]:
    """How a harness starts our MCP server for this workspace (``skillfiles.boot_argv``: this interpreter, importing
    this very package, never a repository's own ``mcp_server/``, though the harness starts it in the workspace)."""
    from strict_loop.base.skillfiles import boot_argv

    return [*boot_argv("from mcp_server.server import main; main()"), "--workspace", str(workspace)]


@dataclass
class Wiring:
    """One invocation's command line, environment and temporary files (removed by ``cleanup``)."""

    argv: list[str]
    env: dict[str, str]
    usage_file: Optional[Path] = None
    temp: list[Path] = field(default_factory=list)
    secret_env: dict[str, str] = field(default_factory=dict)  # given the child alone (a token): masked in our files

    def cleanup(self) -> None:
        for path in self.temp:
            shutil.rmtree(path, ignore_errors=True)


class Run(NamedTuple):
    """What one headless invocation is given; each harness's ``argv_fn`` turns it into a ``Wiring``."""

    binary: str
    prompt: str
    workspace: Path
    scratch: Path  # a per-invocation folder for temp files
    server: Optional[list[str]]  # our MCP server's argv, or None: no MCP server wired in
    hook_program: Optional[str]  # our hook program, or None: no hooks
    model: Optional[str]
    session_id: Optional[str]  # resume this session
    extra_args: Sequence[str]
    env: dict[str, str]
    http_hooks: bool = False  # Claude Code: our hooks over HTTP into the workspace's endpoint (``httphooks``)


def wire(
    harness: str,
    binary: str,
    prompt: str,
    workspace: Path,
    task_id: str,
    scratch: Path,
    *,
    model: Optional[str] = None,
    session_id: Optional[str] = None,
    extra_args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    mcp: bool = True,
    hooks: bool = True,
    http_hooks: bool = True,
) -> Wiring:
    """The child's argv and environment for one headless run (``scratch``: a per-invocation folder for temp files).

    ``mcp`` off: no MCP server is wired in (the agent uses the ``strict-loop`` CLI through its shell, as the prompt
    shows), which saves starting one server per invocation. ``hooks`` off: Claude and Hermes run without our hooks
    (Hermes's calls then reach the monitor not at all: it prints no stream). ``http_hooks`` off: Claude's hooks are
    commands (a process per tool call) rather than HTTP hooks into the workspace's endpoint."""
    row = registry.get(harness)
    if session_id is not None and registry.session_id_problem(harness, session_id):
        raise LoopError("supervise.session_id", registry.session_id_problem(harness, session_id), "start afresh")
    child_env = masking.agent_env(os.environ if env is None else env)  # no alert channel, no MCP token
    child_env["STRICT_LOOP_TASK"] = task_id  # hooks record to this task even with other tasks running here
    child_env[SUPERVISED_ENV] = "1"
    hook_program = _hook_program() if hooks and row.hooks_in_headless else None
    run = Run(
        binary,
        prompt,
        workspace,
        scratch,
        mcp_command(workspace) if mcp else None,
        hook_program,
        model,
        session_id,
        extra_args,
        child_env,
        http_hooks,
    )
    wiring: Wiring = registry.resolve(row.argv_fn)(run)
    return wiring


def claude_argv(run: Run) -> Wiring:
    """``claude -p`` with stream-json, our MCP server only (--strict-mcp-config) and our hooks through --settings:
    HTTP hooks (``httphooks``: the token in the child's environment, masked in what the supervisor writes), else
    command hooks."""
    servers = {"strict-loop": {"command": run.server[0], "args": run.server[1:]}} if run.server else {}
    argv = [
        run.binary,
        "-p",
        run.prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--mcp-config",
        json.dumps({"mcpServers": servers}),
        "--strict-mcp-config",
        "--permission-mode",
        "bypassPermissions",
    ]
    secret: dict[str, str] = {}
    if run.hook_program:
        from strict_loop.harness.configedit import hook_command, hook_groups
        from strict_loop.headless.httphooks import claude_settings

        settings = claude_settings(run.hook_program, run.workspace, run.env) if run.http_hooks else None
        command = hook_command(run.hook_program, "claude", run.workspace)
        argv += ["--settings", json.dumps(settings or {"hooks": hook_groups("claude", command)})]
        secret = {name: run.env[name] for name in settings["httpHookAllowedEnvVars"]} if settings else {}
    argv += ["--resume", run.session_id] if run.session_id else []
    argv += ["--model", run.model] if run.model else []
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        run.env["IS_SANDBOX"] = "1"  # Claude refuses bypassPermissions for root otherwise
    return Wiring(argv + list(run.extra_args), run.env, secret_env=secret)


def codex_argv(run: Run) -> Wiring:
    """``codex exec [resume ID] --json`` with our MCP server through -c (the user's config.toml is not edited)."""
    argv = [run.binary, "exec"] + (["resume"] if run.session_id else [])
    argv += [
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "--dangerously-bypass-hook-trust",
    ]
    argv += (
        [
            "-c",
            f"mcp_servers.strict-loop.command={json.dumps(run.server[0])}",
            "-c",
            f"mcp_servers.strict-loop.args={json.dumps(run.server[1:])}",
        ]
        if run.server
        else []
    )
    argv += [] if run.session_id else ["-C", str(run.workspace)]
    argv += ["-m", run.model] if run.model else []
    argv += list(run.extra_args) + ([run.session_id] if run.session_id else []) + [run.prompt]
    return Wiring(argv, run.env)


def hermes_argv(run: Run) -> Wiring:
    """``hermes -z`` with a per-run HERMES_HOME copy that carries our MCP server and plugin, and a usage file."""
    home = _hermes_home(run.env, run.scratch / "hermes-home", run.server, run.hook_program, run.workspace)
    run.env["HERMES_HOME"] = str(home)
    usage = run.scratch / "usage.json"
    argv = [run.binary, "-z", run.prompt, "--usage-file", str(usage)] + (["-m", run.model] if run.model else [])
    return Wiring(argv + list(run.extra_args), run.env, usage_file=usage, temp=[home])


def _hermes_home(
    env: Mapping[str, str], dest: Path, server: Optional[list[str]], hook_program: Optional[str], workspace: Path
) -> Path:
    """A copy of the user's HERMES_HOME (config, plugins, skills; no history) with our MCP server in its config.yaml
    and our plugin (pinned to ``workspace``, enabled and not disabled), each when given: one edit of the config."""
    from ruamel.yaml import YAML

    from strict_loop.harness.configedit import SERVER

    source = Path(env.get("HERMES_HOME") or Path(env.get("HOME", str(Path.home()))) / ".hermes")
    shutil.rmtree(dest, ignore_errors=True)
    if source.is_dir():  # links (dotfiles) are dereferenced: the copy holds no path back into the user's files
        shutil.copytree(
            source, dest, ignore=shutil.ignore_patterns(*HERMES_SKIP), symlinks=False, ignore_dangling_symlinks=True
        )
    dest.mkdir(parents=True, exist_ok=True)
    if server is None and hook_program is None:
        return dest
    config, yaml = dest / "config.yaml", YAML()
    data = (yaml.load(config.read_text(encoding="utf-8")) if config.is_file() else None) or {}
    if server is not None:
        data["mcp_servers"] = {**(data.get("mcp_servers") or {}), SERVER: {"command": server[0], "args": server[1:]}}
    if hook_program is not None:
        from strict_loop.harness.plans import hermes_plugin_files

        folder = dest / "plugins" / SERVER
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name, body in hermes_plugin_files(hook_program, workspace).items():
            atomic_write(folder / name, body, sync=False)
        plugins = data.get("plugins") or {}
        plugins["enabled"] = [p for p in plugins.get("enabled") or [] if p != SERVER] + [SERVER]
        plugins["disabled"] = [p for p in plugins.get("disabled") or [] if p != SERVER]
        data["plugins"] = plugins
    text = io.StringIO()
    yaml.dump(data, text)
    atomic_write(config, text.getvalue().encode("utf-8"), sync=False)  # replaces the name, never writes through it
    return dest


GEMINI_SKIP = ("tmp", "history", "*.log")
"""What a per-run Gemini CLI home does not copy: sessions, checkpoints, history (large; one run needs none of them)."""


def gemini_argv(run: Run) -> Wiring:
    """``gemini -p`` with stream-json, approvals off and the workspace trusted for this run (unattended, as on the other
    harnesses), in a per-run copy of the person's ``~/.gemini`` (``GEMINI_CLI_HOME``; the original is never edited)
    whose settings.json carries our hooks and MCP server. Why a copy: Gemini CLI 0.61.0 takes settings from no flag,
    and reads a system settings file only where root owns it and every folder above it. The copy keeps no session, so
    a run does not resume the previous one: the prompt, built from disk, carries the task."""
    home = run.scratch / "gemini-home"
    _gemini_home(run.env, home / ".gemini", run)
    run.env["GEMINI_CLI_HOME"] = str(home)
    argv = [run.binary, "-p", run.prompt, "--output-format", "stream-json", "--approval-mode", "yolo", "--skip-trust"]
    argv += ["-m", run.model] if run.model else []
    return Wiring(argv + list(run.extra_args), run.env, temp=[home])


def _gemini_home(env: Mapping[str, str], dest: Path, run: Run) -> None:
    """A copy of the person's ``.gemini`` folder (settings, sign-in, trusted folders, extensions; no history) at
    ``dest``, and of ``.agents`` (whose skills Gemini CLI reads too), with our hooks and MCP server in its
    settings.json: the hooks pinned to the workspace (an install of ours for every folder left out, so that none
    runs twice), each with its own ``env`` carrying the task and the supervision (Gemini CLI strips a hook's
    environment in CI)."""
    from strict_loop.harness.configedit import SERVER, hook_command, hook_groups, strip_ours

    source = Path(env.get("GEMINI_CLI_HOME") or env.get("HOME") or Path.home()) / ".gemini"
    shutil.rmtree(dest, ignore_errors=True)
    ignore = shutil.ignore_patterns(*GEMINI_SKIP)
    for folder, into in ((source, dest), (source.parent / ".agents", dest.parent / ".agents")):  # and user skills
        if folder.is_dir():  # links (dotfiles) are dereferenced: the copy holds no path back into the person's files
            shutil.copytree(folder, into, ignore=ignore, symlinks=False, ignore_dangling_symlinks=True)
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "settings.json"
    settings = read_object(path) if path.exists() else {}
    if settings is None:
        raise LoopError(str(source / "settings.json"), "is not a JSON object", "fix it (Gemini CLI reads it too)")
    if run.hook_program:
        keep = {k: run.env[k] for k in (TASK_ENV, SUPERVISED_ENV) if k in run.env}
        hooks = settings["hooks"] = dict(settings.get("hooks") or {})
        for event, groups in hook_groups("gemini", hook_command(run.hook_program, "gemini", run.workspace)).items():
            groups[0]["hooks"][0]["env"] = keep
            theirs = hooks.get(event)
            hooks[event] = [*strip_ours(theirs if isinstance(theirs, list) else [], "gemini"), *groups]
    if run.server:
        servers = settings["mcpServers"] = dict(settings.get("mcpServers") or {})
        servers[SERVER] = {"command": run.server[0], "args": run.server[1:]}
    atomic_write(path, json.dumps(settings, indent=2).encode("utf-8"), sync=False, mode=0o600)


OPENCODE_PLUGIN_ENV = "STRICT_LOOP_OPENCODE_PLUGIN"
"""Names the run's own copy of our OpenCode plugin: an installed copy (the workspace's, the person's) stands aside."""


def opencode_argv(run: Run) -> Wiring:
    """``opencode run --format json --auto`` (its events as JSON lines; permissions not denied are granted, as an
    unattended run needs), our plugin (pinned to the workspace) and MCP server added for this run through
    ``OPENCODE_CONFIG_CONTENT``, which OpenCode merges over the person's config (never edited). Resumes with
    ``--session``."""
    content = read_config_content(run.env.get("OPENCODE_CONFIG_CONTENT"))
    if run.hook_program:
        from strict_loop.harness.opencode import PLUGIN_FILE, plugin_text

        plugin = (run.scratch / "opencode-plugin").resolve() / PLUGIN_FILE
        atomic_write(plugin, plugin_text(run.hook_program, run.workspace).encode("utf-8"), sync=False, mode=0o600)
        content["plugin"] = [*(content.get("plugin") or []), plugin.as_uri()]
        run.env[OPENCODE_PLUGIN_ENV] = str(plugin)
    if run.server:
        from strict_loop.harness.configedit import SERVER
        from strict_loop.harness.opencode import mcp_entry

        content["mcp"] = {
            **(content.get("mcp") or {}),
            SERVER: mcp_entry({"command": run.server[0], "args": run.server[1:]}),
        }
    run.env["OPENCODE_CONFIG_CONTENT"] = json.dumps(content)
    tmp = run.scratch / "opencode-tmp"  # each start leaves its file finder's library (5.5 MB) in TMPDIR: the run's own
    tmp.mkdir(mode=0o700, parents=True, exist_ok=True)
    run.env["TMPDIR"] = str(tmp)
    argv = [run.binary, "run", "--format", "json", "--auto"] + (["--session", run.session_id] if run.session_id else [])
    argv += ["--model", run.model] if run.model else []
    return Wiring(argv + list(run.extra_args) + ["--", run.prompt], run.env, temp=[tmp])


def read_config_content(text: Optional[str]) -> dict:
    """The person's own ``OPENCODE_CONFIG_CONTENT`` (a JSON object), which ours extends; a clear error otherwise."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("plugin", []), list)
        or not isinstance(value.get("mcp", {}), dict)
    ):
        raise LoopError("OPENCODE_CONFIG_CONTENT", "is not a JSON object of OpenCode's config", "fix or unset it")
    return value


def _hook_program() -> str:
    """Our ``strict-loop`` program, which the harness's hooks run (the one beside this Python, else on PATH)."""
    from strict_loop.harness.install import program

    return program("strict-loop")


def read_usage(path: Optional[Path]) -> Optional[dict]:
    """Hermes's usage file as a dict, or None when absent or unreadable."""
    return None if path is None else read_object(path)
