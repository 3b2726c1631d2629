"""What ``strict-loop install NAME`` edits for each harness: one ``plan_*`` function per registry row.

Each builds an :class:`~strict_loop.harness.install.Plan` from the person's settings files (read only); the
machinery that diffs, writes and undoes a plan is ``install``'s, and what a hook entry looks like is ``configedit``'s.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from strict_loop.base import skillfiles
from strict_loop.base.errors import LoopError
from strict_loop.harness import configedit, daemon
from strict_loop.harness.install import (
    SKILL,
    Edit,
    Plan,
    _edit,
    _home,
    _hooks,
    _read_text,
    _server,
    _skill,
    _tree,
    program,
)


def hermes_plugin_files(strict_loop: str, workspace: Optional[Path]) -> dict[str, bytes]:
    """The shipped Hermes plugin with the absolute program path, the words that run the hook (the registry's: the thin
    hook, ``client.hook_words``) and the pinned workspace written in."""
    from strict_loop.harness.client import hook_words

    src = skillfiles.hermes_plugin_dir()
    code = (src / "__init__.py").read_text(encoding="utf-8")
    head = hook_words(strict_loop, "hermes")[:-2]  # before "hook hermes": the plugin adds those and --workspace
    filled = (("STRICT_LOOP", '"[^"\n]*"', strict_loop), ("WORKSPACE", '"[^"\n]*"', str(workspace or "")))
    code = skillfiles.filled_in(src / "__init__.py", code, (*filled, ("HOOK: list[str]", r"\[\]", head)))
    return {"plugin.yaml": (src / "plugin.yaml").read_bytes(), "__init__.py": code.encode("utf-8")}


def plan_claude(scope: str, workspace: Optional[Path], install: bool, hooks: str = "http") -> Plan:
    """``hooks``: "http" (Claude Code's HTTP hooks into the workspace's endpoint, with a workspace) or "command"."""
    if scope == "project":
        assert workspace is not None
        base, mcp_file, root = workspace / ".claude", workspace / ".mcp.json", workspace
    else:
        base = _home("CLAUDE_CONFIG_DIR", ".claude")
        # user-scope MCP servers live in .claude.json: in CLAUDE_CONFIG_DIR when set, else in the home folder
        mcp_file = base / ".claude.json" if os.environ.get("CLAUDE_CONFIG_DIR") else Path.home() / ".claude.json"
        root = base.parent
    command, server = _hooks("claude", workspace, install), _server(workspace, install)
    plan = Plan(root, workspace if scope == "project" else None)
    groups = _http_hooks(plan, workspace, install and hooks == "http")
    settings = base / "settings.json"
    plan.edits.append(
        _edit(settings, lambda t, k: configedit.edit_hooks(t, settings, "claude", groups or command, k), plan.confine)
    )
    plan.edits.append(_edit(mcp_file, lambda t, k: configedit.edit_mcp_json(t, mcp_file, server, k), plan.confine))
    plan.trees.append(_skill(base / "skills" / SKILL, install, plan.confine))
    if install:
        plan.notes.append(
            "Claude Code reads the hooks and the MCP server when a session starts: start a new one "
            "(`/hooks` and `/mcp` inside it show them)."
        )
    return plan


def _http_hooks(plan: Plan, workspace: Optional[Path], wanted: bool) -> Optional[daemon.Groups]:
    """Claude Code's HTTP hook groups (None: command hooks), the record of port and token planned (private)."""
    if workspace is None:
        plan.notes += ["Command hooks were written: HTTP hooks need a workspace (--workspace)."] * wanted
        return None
    new, groups, said = daemon.http_install(program("strict-loop"), workspace, wanted, os.environ)
    path = daemon.record_path(workspace, os.environ)
    plan.edits += [Edit(path, old, new, private=True)] if (old := _read_text(path)) != new else []
    plan.notes += [said] if said else []
    return groups


def plan_codex(scope: str, workspace: Optional[Path], install: bool) -> Plan:
    if scope == "project":
        assert workspace is not None
        base, skills, root = workspace / ".codex", workspace / ".agents" / "skills", workspace
    else:
        base = _home("CODEX_HOME", ".codex")
        skills, root = base / "skills", base.parent
    hooks, server = _hooks("codex", workspace, install), _server(workspace, install)
    plan = Plan(root, workspace if scope == "project" else None)
    hooks_file, config = base / "hooks.json", base / "config.toml"
    plan.edits.append(
        _edit(hooks_file, lambda t, k: configedit.edit_hooks(t, hooks_file, "codex", hooks, k), plan.confine)
    )
    plan.edits.append(_edit(config, lambda t, _: configedit.edit_mcp_toml(t, config, server), plan.confine))
    plan.trees.append(_skill(skills / SKILL, install, plan.confine))
    if install:
        plan.notes.append(
            "Codex runs a new or changed hook only after you trust it: start `codex`, open `/hooks` and trust "
            "the strict-loop hooks (once). `codex exec` skips them unless run with --dangerously-bypass-hook-trust."
        )
        if scope == "project":
            plan.notes.append(f"Codex reads {base} only in a trusted project: trust {workspace} when Codex asks.")
    return plan


def plan_hermes(scope: str, workspace: Optional[Path], install: bool) -> Plan:
    if scope == "project":
        where = "Hermes has no project-scope settings: its config.yaml, plugins and skills live in $HERMES_HOME"
        raise LoopError("--scope", f"{where} (~/.hermes)", "use --scope user (add --workspace DIR to pin the loop)")
    home = _home("HERMES_HOME", ".hermes")
    server = _server(workspace, install)
    plan = Plan(home.parent)
    plan.edits.append(
        _edit(home / "config.yaml", lambda t, _: configedit.edit_hermes_yaml(t, home / "config.yaml", server), None)
    )
    plugin = hermes_plugin_files(program("strict-loop"), workspace) if install else None
    plugins = home / "plugins" / configedit.SERVER
    plan.trees.append(_tree(plugins, plugin, "plugin.yaml", configedit.SERVER, private=True))
    plan.trees.append(_skill(home / "skills" / SKILL, install))
    if install and configedit.hermes_disabled(plan.edits[0].old):
        plan.notes.append(
            f"{plan.edits[0].path} lists strict-loop in plugins.disabled, which wins over plugins.enabled: "
            "remove it there (`hermes plugins enable strict-loop`) or the plugin stays off."
        )
    if install:
        plan.notes.append(
            "Hermes loads the plugin (enabled in config.yaml's plugins.enabled) and the MCP server when it "
            "starts: start a new session (`hermes plugins list` shows strict-loop enabled)."
        )
    return plan


def plan_gemini(scope: str, workspace: Optional[Path], install: bool):  # -> install.Plan
    """``strict-loop install gemini``: our hooks and MCP server in one settings.json (the workspace's ``.gemini/``, or
    the person's under ``$GEMINI_CLI_HOME``), the skill in ``.gemini/skills/``. ``headless.wiring.gemini_argv`` writes
    the same entries for one run."""
    if scope == "project":
        assert workspace is not None
        base, root = workspace / ".gemini", workspace
    else:
        base = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()).expanduser().absolute() / ".gemini"
        root = base.parent
    hooks, server = _hooks("gemini", workspace, install), _server(workspace, install)
    plan = Plan(root, workspace if scope == "project" else None)
    path = base / "settings.json"

    def edit(text: Optional[str], keep: configedit.Kept) -> Optional[str]:
        return configedit.edit_mcp_json(configedit.edit_hooks(text, path, "gemini", hooks, keep), path, server, keep)

    plan.edits.append(_edit(path, edit, plan.confine))
    plan.trees.append(_skill(base / "skills" / SKILL, install, plan.confine))
    if install:
        plan.notes.append(
            "Gemini CLI runs hooks, and reads a project's .gemini/settings.json, only in a trusted folder: trust the "
            "folder when it asks (or start it with --skip-trust). It reads them when a session starts: `/hooks panel` "
            "and `/mcp` show them."
        )
    return plan


def plan_opencode(scope: str, workspace: Optional[Path], install: bool):  # -> install.Plan
    """``strict-loop install opencode``: our plugin (one file) in the workspace's ``.opencode/plugins/`` and our MCP
    server in its ``opencode.json``, or both in the person's config folder (``~/.config/opencode``), the skill in
    ``skills/`` beside the plugins. ``headless.wiring.opencode_argv`` wires the same for one run."""
    from strict_loop.harness import opencode
    from strict_loop.harness.install import _confined, _kept, _kept_records

    if scope == "project":
        assert workspace is not None
        base, config, root = workspace / ".opencode", workspace / "opencode.json", workspace
    else:
        base = opencode.config_dir()
        config, root = base / "opencode.json", base.parent
    plan = Plan(root, workspace if scope == "project" else None)
    config, plugin = (_confined(root, p) if plan.confine else p.resolve() for p in (config, base / "plugins"))
    plugin = plugin / opencode.PLUGIN_FILE
    old, current = _read_text(config), _read_text(plugin)
    new = opencode.edit_config(old, config, _server(workspace, install), _kept(_kept_records(), config))
    plan.edits.append(Edit(config, old, new, opencode.mcp_empties(old)))
    text = opencode.plugin_text(program("strict-loop"), workspace) if install else None
    plan.edits.append(Edit(plugin, current, opencode.plugin_edit(plugin, current, text)))
    plan.trees.append(_skill(base / "skills" / SKILL, install, plan.confine))
    if install:
        plan.notes.append(
            "OpenCode loads plugins and MCP servers when it starts: start a new session (`opencode mcp list` shows "
            "strict-loop). It installs its own @opencode-ai/plugin package beside plugins/ (and .gitignores it)."
        )
    return plan
