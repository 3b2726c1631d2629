"""The plugin forms shipped in the repository are generated here, so they cannot drift from the installer.

Claude Code: ``.claude-plugin/{plugin,marketplace}.json`` + ``hooks/hooks.json`` at the repo root (the
root is the plugin: ``skills: ["./"]``). Codex: ``integrations/codex/strict-loop/`` (a marketplace entry
at the root is not discovered) listed in ``.agents/plugins/marketplace.json``; its skill folder links
to the repo-top skill files. Hermes: ``integrations/hermes/strict-loop/`` (tested with its hooks).
A plugin cannot know where pip put ``strict-loop``, so its hooks run it from PATH.
Regenerate after a change: ``STRICT_LOOP_UPDATE_PLUGINS=1 python3 -m pytest tests/test_plugin_forms.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from strict_loop import __version__, harness_config

REPO = Path(__file__).resolve().parent.parent
CODEX_PLUGIN = "integrations/codex/strict-loop"
DESCRIPTION = ("A strict, disk-backed loop for long-running coding agents: one verified task per round, "
               "every tool call recorded by hooks, a progress monitor that whispers and pauses, machine-checked stop rules.")
AUTHOR = {"name": "strict-agent-loop contributors"}


def expected() -> dict[str, dict]:
    """Every generated plugin file, by its path in the repository."""
    return {
        ".claude-plugin/plugin.json": {
            "name": "strict-loop", "version": __version__, "description": DESCRIPTION, "author": AUTHOR, "license": "MIT",
            "skills": ["./"], "hooks": "./hooks/hooks.json",
            "mcpServers": {"strict-loop": {"command": "strict-loop-mcp", "args": ["--workspace", "${CLAUDE_PROJECT_DIR}"]}}},
        ".claude-plugin/marketplace.json": {
            "name": "strict-agent-loop", "owner": AUTHOR,
            "plugins": [{"name": "strict-loop", "source": "./", "description": DESCRIPTION, "version": __version__}]},
        "hooks/hooks.json": {"description": "strict-agent-loop: record tool calls, whisper, deny while paused, keep going at Stop",
                             "hooks": harness_config.hook_groups("claude", "strict-loop hook claude")},
        f"{CODEX_PLUGIN}/.codex-plugin/plugin.json": {
            "name": "strict-loop", "version": __version__, "description": DESCRIPTION, "author": AUTHOR, "license": "MIT",
            "skills": "./skills/", "mcpServers": "./.mcp.json", "hooks": "./hooks/hooks.json",
            "interface": {"displayName": "Strict agent loop", "shortDescription": "One verified task per round, enforced by hooks",
                          "developerName": AUTHOR["name"], "category": "Coding"}},
        f"{CODEX_PLUGIN}/.mcp.json": {"mcpServers": {"strict-loop": {"command": "strict-loop-mcp", "args": []}}},
        f"{CODEX_PLUGIN}/hooks/hooks.json": {"hooks": harness_config.hook_groups("codex", "strict-loop hook codex")},
        ".agents/plugins/marketplace.json": {
            "name": "strict-agent-loop", "interface": {"displayName": "strict-agent-loop"},
            "plugins": [{"name": "strict-loop", "source": {"source": "local", "path": f"./{CODEX_PLUGIN}"},
                         "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"}, "category": "Coding"}]},
    }


SKILL_LINKS = {f"{CODEX_PLUGIN}/skills/strict-agent-loop/{name}": f"../../../../../{name}" for name in ("SKILL.md", "references", "scripts")}


def _render(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def test_plugin_files_are_the_generated_ones():
    if os.environ.get("STRICT_LOOP_UPDATE_PLUGINS"):
        for rel, doc in expected().items():
            (REPO / rel).parent.mkdir(parents=True, exist_ok=True)
            (REPO / rel).write_text(_render(doc), encoding="utf-8")
        for rel, target in SKILL_LINKS.items():
            (REPO / rel).parent.mkdir(parents=True, exist_ok=True)
            (REPO / rel).unlink(missing_ok=True)
            (REPO / rel).symlink_to(target)
    stale = [rel for rel, doc in expected().items() if not (REPO / rel).is_file() or (REPO / rel).read_text(encoding="utf-8") != _render(doc)]
    assert not stale, f"{stale} differ from tests/test_plugin_forms.py; regenerate: STRICT_LOOP_UPDATE_PLUGINS=1 python3 -m pytest {__file__}"


def test_the_codex_plugin_skill_is_the_repo_skill():
    for rel, target in SKILL_LINKS.items():
        link = REPO / rel
        assert link.is_symlink() and os.readlink(link) == target, rel
        assert link.resolve() == (REPO / Path(rel).name).resolve()
    assert (REPO / CODEX_PLUGIN / "skills" / "strict-agent-loop" / "references" / "protocol.md").is_file()


def test_manifests_carry_the_fields_the_harnesses_read():
    claude = json.loads((REPO / ".claude-plugin/plugin.json").read_text())
    assert {"name", "version", "skills", "mcpServers", "hooks", "license"} <= set(claude)
    assert (REPO / claude["hooks"]).is_file() and all((REPO / s / "SKILL.md").is_file() for s in claude["skills"])
    market = json.loads((REPO / ".claude-plugin/marketplace.json").read_text())
    assert [(p["name"], (REPO / p["source"] / ".claude-plugin" / "plugin.json").is_file()) for p in market["plugins"]] == [("strict-loop", True)]
    codex_market = json.loads((REPO / ".agents/plugins/marketplace.json").read_text())
    entry = codex_market["plugins"][0]
    plugin_dir = REPO / entry["source"]["path"]
    codex = json.loads((plugin_dir / ".codex-plugin" / "plugin.json").read_text())
    assert entry["name"] == codex["name"] == "strict-loop" and {"name", "version", "skills", "mcpServers", "hooks"} <= set(codex)
    assert (plugin_dir / codex["skills"] / "strict-agent-loop" / "SKILL.md").is_file()
    assert json.loads((plugin_dir / codex["mcpServers"]).read_text())["mcpServers"]["strict-loop"]["command"] == "strict-loop-mcp"
    for path, harness in ((REPO / claude["hooks"], "claude"), (plugin_dir / codex["hooks"], "codex")):
        hooks = json.loads(path.read_text())["hooks"]
        assert set(hooks) == {e for e, _, _ in harness_config.HOOK_EVENTS[harness]}
        assert all(harness_config.is_our_command(h["command"], harness) for groups in hooks.values() for g in groups for h in g["hooks"])


def test_the_hermes_plugin_manifest_names_the_hooks_its_register_installs():
    manifest = yaml.safe_load((REPO / "integrations/hermes/strict-loop/plugin.yaml").read_text())
    assert manifest["name"] == "strict-loop" and manifest["kind"] == "standalone" and manifest["version"] == __version__
    # Hermes imports the plugin in its own Python: loading it must not pull in strict_loop
    probe = (
        "import importlib.util, json, sys\n"
        "spec = importlib.util.spec_from_file_location('hermes_strict_loop', sys.argv[1])\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        "class Ctx:\n    names = []\n    def register_hook(self, name, cb): self.names.append(name)\n"
        "ctx = Ctx(); mod.register(ctx)\n"
        "print(json.dumps({'hooks': ctx.names, 'imported': sorted(m for m in sys.modules if m.startswith('strict_loop'))}))\n")
    done = subprocess.run([sys.executable, "-I", "-B", "-c", probe, str(REPO / "integrations/hermes/strict-loop/__init__.py")],
                          capture_output=True, text=True, check=True)
    seen = json.loads(done.stdout)
    assert seen["imported"] == [] and sorted(seen["hooks"]) == sorted(manifest["hooks"])


def test_license_is_mit_as_the_package_says():
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "2026 strict-agent-loop contributors" in text
    if sys.version_info >= (3, 11):
        import tomllib

        assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"] == "MIT"
