"""The plugin forms shipped in the repository are generated here, so they cannot drift from the installer.

Claude Code: ``.claude-plugin/{plugin,marketplace}.json`` + ``hooks/hooks.json`` at the repo root (the
root is the plugin: ``skills: ["./"]``). Codex: ``integrations/codex/strict-loop/`` (a marketplace entry
at the root is not discovered) listed in ``.agents/plugins/marketplace.json``; its skill folder holds
copies of the repo-top skill files (``codex plugin add`` copies the plugin folder into its cache and
does not follow links out of it). Hermes: ``integrations/hermes/strict-loop/`` (tested with its hooks).
A plugin cannot know where pip put ``strict-loop``, so its hooks run it from PATH.
Regenerate after a change: ``STRICT_LOOP_UPDATE_PLUGINS=1 python3 -m pytest tests/test_plugin_forms.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from strict_loop import __version__
from strict_loop.harness import configedit, registry

REPO = Path(__file__).resolve().parent.parent
CODEX_PLUGIN = "integrations/codex/strict-loop"
DESCRIPTION = (
    "A strict, disk-backed loop for long-running coding agents: one verified task per round, "
    "every tool call recorded by hooks, a progress monitor that whispers and pauses, machine-checked stop rules."
)
AUTHOR = {"name": "strict-agent-loop contributors"}


def expected() -> dict[str, dict]:
    """Every generated plugin file, by its path in the repository."""
    return {
        ".claude-plugin/plugin.json": {
            "name": "strict-loop",
            "version": __version__,
            "description": DESCRIPTION,
            "author": AUTHOR,
            "license": "MIT",
            "skills": ["./"],
            "hooks": "./hooks/hooks.json",
            "mcpServers": {
                "strict-loop": {"command": "strict-loop-mcp", "args": ["--workspace", "${CLAUDE_PROJECT_DIR}"]}
            },
        },
        ".claude-plugin/marketplace.json": {
            "name": "strict-agent-loop",
            "owner": AUTHOR,
            "description": "The strict-agent-loop plugin for Claude Code",
            "plugins": [{"name": "strict-loop", "source": "./", "description": DESCRIPTION, "version": __version__}],
        },
        "hooks/hooks.json": {
            "description": "strict-agent-loop: record tool calls, whisper, deny while paused, keep going at Stop",
            "hooks": configedit.hook_groups("claude", "strict-loop hook claude"),
        },
        f"{CODEX_PLUGIN}/.codex-plugin/plugin.json": {
            "name": "strict-loop",
            "version": __version__,
            "description": DESCRIPTION,
            "author": AUTHOR,
            "license": "MIT",
            "skills": "./skills/",
            "mcpServers": "./.mcp.json",
            "hooks": "./hooks/hooks.json",
            "interface": {
                "displayName": "Strict agent loop",
                "shortDescription": "One verified task per round, enforced by hooks",
                "developerName": AUTHOR["name"],
                "category": "Coding",
            },
        },
        f"{CODEX_PLUGIN}/.mcp.json": {"mcpServers": {"strict-loop": {"command": "strict-loop-mcp", "args": []}}},
        f"{CODEX_PLUGIN}/hooks/hooks.json": {"hooks": configedit.hook_groups("codex", "strict-loop hook codex")},
        ".agents/plugins/marketplace.json": {
            "name": "strict-agent-loop",
            "interface": {"displayName": "strict-agent-loop"},
            "plugins": [
                {
                    "name": "strict-loop",
                    "source": {"source": "local", "path": f"./{CODEX_PLUGIN}"},
                    "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                    "category": "Coding",
                }
            ],
        },
    }


SKILL_FILES = ("SKILL.md", "references", "scripts")
CODEX_SKILL = f"{CODEX_PLUGIN}/skills/strict-agent-loop"


def _skill_files(root: Path) -> dict[str, bytes]:
    """The skill's files under ``root`` by relative path (no caches)."""
    out = {}
    for name in SKILL_FILES:
        top = root / name
        for path in [top] if top.is_file() else sorted(top.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                out[str(path.relative_to(root))] = path.read_bytes()
    return out


def _copy_skill() -> None:
    target = REPO / CODEX_SKILL
    shutil.rmtree(target, ignore_errors=True)
    for rel, data in _skill_files(REPO).items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_bytes(data)
        shutil.copymode(REPO / rel, target / rel)


def _render(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def test_plugin_files_are_the_generated_ones():
    if os.environ.get("STRICT_LOOP_UPDATE_PLUGINS"):
        for rel, doc in expected().items():
            (REPO / rel).parent.mkdir(parents=True, exist_ok=True)
            (REPO / rel).write_text(_render(doc), encoding="utf-8")
        _copy_skill()
    stale = [
        rel
        for rel, doc in expected().items()
        if not (REPO / rel).is_file() or (REPO / rel).read_text(encoding="utf-8") != _render(doc)
    ]
    assert not stale, (
        f"{stale} differ from tests/test_plugin_forms.py; regenerate: STRICT_LOOP_UPDATE_PLUGINS=1 python3 -m "
        f"pytest {__file__}"
    )


def test_the_codex_plugin_skill_is_a_copy_of_the_repo_skill():
    copied, source = _skill_files(REPO / CODEX_SKILL), _skill_files(REPO)
    assert not any((REPO / CODEX_SKILL / name).is_symlink() for name in SKILL_FILES)
    assert sorted(copied) == sorted(source), f"regenerate: STRICT_LOOP_UPDATE_PLUGINS=1 python3 -m pytest {__file__}"
    assert [rel for rel in source if copied[rel] != source[rel]] == [], (
        f"regenerate: STRICT_LOOP_UPDATE_PLUGINS=1 python3 -m pytest {__file__}"
    )


def test_manifests_carry_the_fields_the_harnesses_read():
    claude = json.loads((REPO / ".claude-plugin/plugin.json").read_text())
    assert {"name", "version", "skills", "mcpServers", "hooks", "license"} <= set(claude)
    assert (REPO / claude["hooks"]).is_file() and all((REPO / s / "SKILL.md").is_file() for s in claude["skills"])
    market = json.loads((REPO / ".claude-plugin/marketplace.json").read_text())
    assert [
        (p["name"], (REPO / p["source"] / ".claude-plugin" / "plugin.json").is_file()) for p in market["plugins"]
    ] == [("strict-loop", True)]
    codex_market = json.loads((REPO / ".agents/plugins/marketplace.json").read_text())
    entry = codex_market["plugins"][0]
    plugin_dir = REPO / entry["source"]["path"]
    codex = json.loads((plugin_dir / ".codex-plugin" / "plugin.json").read_text())
    assert entry["name"] == codex["name"] == "strict-loop" and {
        "name",
        "version",
        "skills",
        "mcpServers",
        "hooks",
    } <= set(codex)
    assert (plugin_dir / codex["skills"] / "strict-agent-loop" / "SKILL.md").is_file()
    assert (
        json.loads((plugin_dir / codex["mcpServers"]).read_text())["mcpServers"]["strict-loop"]["command"]
        == "strict-loop-mcp"
    )
    for path, harness in ((REPO / claude["hooks"], "claude"), (plugin_dir / codex["hooks"], "codex")):
        hooks = json.loads(path.read_text())["hooks"]
        assert set(hooks) == {e for e, _, _ in registry.get(harness).hook_events}
        assert all(
            configedit.is_our_command(h["command"], harness)
            for groups in hooks.values()
            for g in groups
            for h in g["hooks"]
        )


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
        "print(json.dumps({'hooks': ctx.names, 'imported': sorted(m for m in sys.modules if "
        "m.startswith('strict_loop'))}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-B", "-c", probe, str(REPO / "integrations/hermes/strict-loop/__init__.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(done.stdout)
    assert seen["imported"] == [] and sorted(seen["hooks"]) == sorted(manifest["hooks"])


def test_license_is_mit_as_the_package_says():
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "2026 strict-agent-loop contributors" in text
    if sys.version_info >= (3, 11):
        import tomllib

        assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"] == "MIT"


@pytest.mark.slow
def test_real_codex_installs_the_plugin_with_its_skill(tmp_path: Path):
    """``codex plugin add`` copies the plugin folder into its cache: the skill must arrive whole (links would not)."""
    from harness_rig import Harness, require_binary

    rig = Harness("codex", require_binary("codex"), tmp_path / "home")
    env = rig.env("http://127.0.0.1:9")
    rig.codex_home.mkdir(parents=True)
    for args in (["plugin", "marketplace", "add", str(REPO)], ["plugin", "add", "strict-loop@strict-agent-loop"]):
        done = subprocess.run(
            [str(rig.binary), *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stdout + done.stderr
    cached = next((rig.codex_home / "plugins" / "cache" / "strict-agent-loop" / "strict-loop").iterdir())
    assert _skill_files(cached / "skills" / "strict-agent-loop") == _skill_files(REPO)
    assert json.loads((cached / "hooks" / "hooks.json").read_text()) == expected()[f"{CODEX_PLUGIN}/hooks/hooks.json"]


@pytest.mark.slow
def test_real_claude_validates_the_plugin_and_its_marketplace(tmp_path: Path):
    from harness_rig import Harness, require_binary

    rig = Harness("claude", require_binary("claude"), tmp_path / "home")
    done = subprocess.run(
        [str(rig.binary), "plugin", "validate", str(REPO)],
        env=rig.env("http://127.0.0.1:9"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "Validation passed" in done.stdout and "error" not in done.stdout.lower(), (
        done.stdout + done.stderr
    )
    assert "skills: strict-loop:strict-agent-loop" in done.stdout and "mcpServers: strict-loop" in done.stdout, (
        done.stdout
    )
