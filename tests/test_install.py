"""``strict-loop install``: real settings files in a temporary home and workspace, the CLI in-process."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
import tomlkit
from conftest import run_cli, tree_files
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

import strict_loop.entry
from strict_loop.base import skillfiles
from strict_loop.harness import configedit, plans

CASES = [("claude", "project"), ("claude", "user"), ("codex", "project"), ("codex", "user"), ("hermes", "user")]
HOOK_EVENTS = {
    "claude": {"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "Notification"},
    "codex": {"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "PermissionRequest"},
}


@pytest.fixture
def place(tmp_path, monkeypatch):
    """A home folder (with CODEX_HOME / HERMES_HOME inside it) and a workspace, nothing else."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("HERMES_HOME", str(home / ".hermes"))
    return tmp_path


def layout(place: Path, harness: str, scope: str) -> dict[str, Path]:
    """Where each piece must land (the contract), independent of the installer's own path logic."""
    home, ws = place / "home", place / "ws"
    if harness == "claude":
        base = ws / ".claude" if scope == "project" else home / ".claude"
        return {
            "hooks": base / "settings.json",
            "mcp": ws / ".mcp.json" if scope == "project" else home / ".claude.json",
            "skill": base / "skills" / "strict-agent-loop",
        }
    if harness == "codex":
        base = ws / ".codex" if scope == "project" else home / ".codex"
        return {
            "hooks": base / "hooks.json",
            "mcp": base / "config.toml",
            "skill": (ws / ".agents" / "skills" if scope == "project" else base / "skills") / "strict-agent-loop",
        }
    base = home / ".hermes"
    return {
        "mcp": base / "config.yaml",
        "skill": base / "skills" / "strict-agent-loop",
        "plugin": base / "plugins" / "strict-loop",
    }


def servers(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        return tomlkit.parse(text).unwrap()["mcp_servers"]
    if path.suffix == ".yaml":
        return YAML(typ="safe").load(text)["mcp_servers"]
    return json.loads(text)["mcpServers"]


def our_handlers(path: Path, harness: str) -> dict[str, list[dict]]:
    hooks = json.loads(path.read_text(encoding="utf-8"))["hooks"]
    return {
        event: [h for g in groups for h in g["hooks"] if configedit.is_ours(h, harness)]
        for event, groups in hooks.items()
    }


def install_args(harness: str, scope: str, *extra: str) -> list[str]:
    return ["install", harness, "--scope", scope, *extra]


@pytest.mark.parametrize("harness, scope", CASES)
def test_fresh_install_writes_the_entries_and_the_skill_and_a_second_run_changes_nothing(place, harness, scope):
    ws, where = place / "ws", layout(place, harness, scope)
    command = ("--hooks", "command") if harness == "claude" else ()  # the HTTP hooks: tests/test_http_hooks.py
    run_cli(*install_args(harness, scope, *command), cwd=ws)
    exe = Path(sys.executable).parent
    server = servers(where["mcp"])["strict-loop"]
    assert Path(server["command"]).is_absolute() and Path(server["command"]).name == "strict-loop-mcp"
    assert server["args"] == (["--workspace", str(ws)] if scope == "project" else [])
    if harness != "hermes":
        handlers = our_handlers(where["hooks"], harness)
        assert set(handlers) == HOOK_EVENTS[harness] and all(len(h) == 1 for h in handlers.values())
        words = shlex.split(handlers["PostToolUse"][0]["command"])
        thin = [sys.executable, "-S", os.path.realpath(strict_loop.entry.__file__)]  # issue 27: the thin hook
        head = thin if harness in ("codex", "claude") else [str(exe / "strict-loop")]
        assert words == [*head, "hook", harness, *(["--workspace", str(ws)] if scope == "project" else [])]
        assert handlers["Stop"][0]["timeout"] > handlers["PostToolUse"][0]["timeout"]
    else:
        config = YAML(typ="safe").load(where["mcp"].read_text())
        assert config["plugins"]["enabled"] == ["strict-loop"]
        plugin = (where["plugin"] / "__init__.py").read_text()
        assert f"STRICT_LOOP = {json.dumps(str(exe / 'strict-loop'))}  #" in plugin
    skill = skillfiles.skill_root()
    assert (where["skill"] / "SKILL.md").read_bytes() == (skill / "SKILL.md").read_bytes()
    assert (where["skill"] / "references" / "protocol.md").read_bytes() == (
        skill / "references" / "protocol.md"
    ).read_bytes()
    assert os.access(where["skill"] / "scripts" / "init_state.py", os.X_OK) == os.access(
        skill / "scripts" / "init_state.py", os.X_OK
    )
    before = tree_files(place)
    again = run_cli(*install_args(harness, scope, *command), cwd=ws)
    assert tree_files(place) == before and again.stdout.startswith("nothing to change")


@pytest.mark.parametrize("harness, scope", CASES)
def test_uninstall_after_a_fresh_install_removes_every_file_and_folder_it_made(place, harness, scope):
    ws = place / "ws"
    empty = sorted(p.relative_to(place).as_posix() for p in place.rglob("*"))
    run_cli(*install_args(harness, scope), cwd=ws)
    out = run_cli(*install_args(harness, scope, "--uninstall"), cwd=ws).stdout
    assert "removed" in out
    assert sorted(p.relative_to(place).as_posix() for p in place.rglob("*")) == empty
    assert run_cli(*install_args(harness, scope, "--uninstall"), cwd=ws).stdout.startswith("nothing to change")


CLAUDE_SETTINGS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo hello"}]}],
    },
}
CODEX_TOML = (
    '# my Codex settings\nmodel = "o4"  # the usual\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = '
    '["--port", "1"]\n'
)
HERMES_YAML = (
    "# Hermes, hand edited\nmodel:\n  default: some-model  # keep this comment\nmcp_servers:\n  docs:\n"
    '    command: "docs-mcp"\n    args: ["--x"]\nplugins:\n  enabled:\n    - disk-cleanup\n'
)


def seed(place: Path, harness: str, scope: str) -> dict[str, bytes]:
    """Unrelated settings of the person's own in every file the install touches; returns the tree's bytes."""
    where = layout(place, harness, scope)
    for key, path in where.items():
        if key in ("skill", "plugin"):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".toml":
            path.write_text(CODEX_TOML)
        elif path.suffix == ".yaml":
            path.write_text(HERMES_YAML)
        elif key == "hooks":
            path.write_text(
                json.dumps(
                    CLAUDE_SETTINGS
                    if harness == "claude"
                    else {
                        "hooks": {
                            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]
                        }
                    },
                    indent=4,
                )
                + "\n"
            )
        else:
            path.write_text(
                json.dumps({"numStartups": 7, "mcpServers": {"docs": {"command": "docs-mcp", "args": []}}}, indent=2)
            )
    return tree_files(place)


@pytest.mark.parametrize("harness, scope", CASES)
def test_other_settings_survive_install_and_uninstall_restores_the_original_bytes(place, harness, scope):
    ws, where = place / "ws", layout(place, harness, scope)
    original = seed(place, harness, scope)
    run_cli(*install_args(harness, scope), cwd=ws)
    assert set(servers(where["mcp"])) == {"docs", "strict-loop"}
    if where["mcp"].suffix in (".toml", ".yaml"):
        assert ("# the usual" if harness == "codex" else "# keep this comment") in where["mcp"].read_text()
    if harness == "hermes":
        assert YAML(typ="safe").load(where["mcp"].read_text())["plugins"]["enabled"] == ["disk-cleanup", "strict-loop"]
    else:
        hooks = json.loads(where["hooks"].read_text())["hooks"]
        event, command = ("PostToolUse", "prettier --write") if harness == "claude" else ("Stop", "notify-send done")
        assert hooks[event][0]["hooks"][0]["command"] == command and len(hooks[event]) == 2
        if harness == "claude":
            assert hooks["SessionStart"][0] == CLAUDE_SETTINGS["hooks"]["SessionStart"][0]
            assert json.loads(where["hooks"].read_text())["permissions"] == CLAUDE_SETTINGS["permissions"]
    installed = tree_files(place)
    run_cli(*install_args(harness, scope), cwd=ws)
    assert tree_files(place) == installed
    run_cli(*install_args(harness, scope, "--uninstall"), cwd=ws)
    assert tree_files(place) == original


@pytest.mark.parametrize("harness, scope", [("claude", "project"), ("codex", "user"), ("hermes", "user")])
def test_dry_run_prints_the_diffs_and_writes_nothing(place, harness, scope):
    ws, where = place / "ws", layout(place, harness, scope)
    original = seed(place, harness, scope)
    out = run_cli(*install_args(harness, scope, "--dry-run"), cwd=ws).stdout
    assert tree_files(place) == original
    assert f"+++ {where['mcp']}" in out and "strict-loop-mcp" in out
    assert "would copy" in out and str(where["skill"]) in out and "nothing was written" in out
    run_cli(*install_args(harness, scope), cwd=ws)
    removal = run_cli(*install_args(harness, scope, "--uninstall", "--dry-run"), cwd=ws).stdout
    assert f"would remove {where['skill']}/" in removal and f"--- {where['mcp']}" in removal


@pytest.mark.parametrize(
    "harness, scope, broken",
    [
        ("claude", "project", '{"hooks": {"PostToolUse": [}'),
        ("codex", "project", "[mcp_servers\nx = 1\n"),
        ("hermes", "user", "mcp_servers:\n  a: [unclosed\n"),
        ("claude", "user", "[1, 2]\n"),
        ("codex", "user", "x = [\n"),  # tomlkit alone said "Unexpected character: '\\x00'"
    ],
)
def test_a_settings_file_that_does_not_parse_is_refused_and_nothing_is_written(place, harness, scope, broken):
    ws, where = place / "ws", layout(place, harness, scope)
    path = where["mcp"] if harness != "claude" or scope == "user" else where["hooks"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(broken)
    before = tree_files(place)
    for extra in ((), ("--uninstall",)):
        run = run_cli(*install_args(harness, scope, *extra), cwd=ws, check=False)
        assert run.returncode == 2 and str(path) in run.stderr and "nothing was changed" in run.stderr
        assert "fix the file" in run.stderr and tree_files(place) == before
        assert "\\x00" not in run.stderr or sys.version_info < (3, 11)  # the standard library words it


def test_entries_and_folders_of_the_same_name_that_are_not_ours_are_refused(place):
    ws = place / "ws"
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"strict-loop": {"command": "/opt/other/server"}}}))
    run = run_cli("install", "claude", cwd=ws, check=False)
    assert run.returncode == 2 and "mcpServers.strict-loop" in run.stderr and "/opt/other/server" in run.stderr
    (ws / ".mcp.json").unlink()
    skill = ws / ".claude" / "skills" / "strict-agent-loop"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: someone-elses\n---\n")
    run = run_cli("install", "claude", cwd=ws, check=False)
    assert run.returncode == 2 and str(skill) in run.stderr and "move that folder aside" in run.stderr
    assert not (ws / ".mcp.json").exists() and (skill / "SKILL.md").read_text().startswith("---\nname: someone")


def test_hermes_has_no_project_scope_and_says_what_to_use(place):
    run = run_cli("install", "hermes", "--scope", "project", cwd=place / "ws", check=False)
    assert run.returncode == 2 and "--scope user" in run.stderr
    assert not (place / "home" / ".hermes").exists()


def test_user_scope_with_a_workspace_pins_the_server_and_hooks(place):
    ws = place / "ws"
    run_cli("install", "codex", "--scope", "user", "--workspace", str(ws), cwd=place)
    assert servers(place / "home" / ".codex" / "config.toml")["strict-loop"]["args"] == ["--workspace", str(ws)]
    command = our_handlers(place / "home" / ".codex" / "hooks.json", "codex")["Stop"][0]["command"]
    assert shlex.split(command)[-2:] == ["--workspace", str(ws)]
    run_cli("install", "hermes", "--workspace", str(ws), cwd=place)
    assert f'WORKSPACE = "{ws}"' in (place / "home" / ".hermes" / "plugins" / "strict-loop" / "__init__.py").read_text()


def test_a_moved_installation_replaces_its_old_hook_entries_instead_of_adding_more(place):
    ws = place / "ws"
    settings = ws / ".claude" / "settings.json"
    settings.parent.mkdir()
    old = {"type": "command", "command": "/old/venv/bin/strict-loop hook claude", "timeout": 30}
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [old]}]}}))
    run_cli("install", "claude", "--hooks", "command", cwd=ws)
    handlers = our_handlers(settings, "claude")
    assert len(handlers["Stop"]) == 1 and handlers["Stop"][0]["command"].startswith(str(Path(sys.executable).parent))


def test_the_help_shows_every_harness_and_an_example(place):
    out = run_cli("install", "--help", cwd=place).stdout
    assert (
        all(h in out for h in ("claude", "codex", "hermes"))
        and "strict-loop install claude" in out
        and "--dry-run" in out
    )


THIN_ENTRY = os.path.realpath(strict_loop.entry.__file__)


def test_the_hermes_plugin_written_is_the_shipped_one_with_the_paths_filled_in(tmp_path):
    written = plans.hermes_plugin_files("/abs/bin/strict-loop", tmp_path)
    shipped = skillfiles.hermes_plugin_dir()
    assert written["plugin.yaml"] == (shipped / "plugin.yaml").read_bytes()
    old, new = (shipped / "__init__.py").read_text().splitlines(), written["__init__.py"].decode().splitlines()
    changed = [(a.split("  #")[0], b.split("  #")[0]) for a, b in zip(old, new, strict=False) if a != b]
    assert len(old) == len(new) and changed == [
        ('STRICT_LOOP = "strict-loop"', 'STRICT_LOOP = "/abs/bin/strict-loop"'),
        ('WORKSPACE = ""', f'WORKSPACE = "{tmp_path}"'),
        ("HOOK: list[str] = []", f"HOOK: list[str] = {json.dumps([sys.executable, '-S', THIN_ENTRY])}"),  # issue 27
    ]


@pytest.mark.slow  # two real `strict-loop hook` processes
@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_the_installed_hook_command_records_a_tool_call(place, harness):
    import subprocess

    ws = place / "ws"
    run_cli("init_state", "--task-id", "t1", "--goal", "g", "--global-stop-condition", "c", cwd=ws)
    run_cli("install", harness, cwd=ws)
    handlers = our_handlers(layout(place, harness, "project")["hooks"], harness)
    event = {
        "session_id": "s1",
        "cwd": "/",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_use_id": "x1",
        "tool_input": {"command": "echo hi"},
        "tool_response": {"stdout": "hi", "stderr": ""} if harness == "claude" else "hi\n",
    }
    done = subprocess.run(
        [handlers["PostToolUse"][0]["command"], *handlers["PostToolUse"][0]["args"]]  # Claude's: the HTTP hook's gate
        if "args" in handlers["PostToolUse"][0]
        else shlex.split(handlers["PostToolUse"][0]["command"]),
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == ""
    lines = (ws / ".agent-loop" / "tasks" / "t1" / "events.jsonl").read_text().splitlines()
    turns = [json.loads(line)["data"] for line in lines if json.loads(line)["kind"] == "tool_call"]
    assert [(t["tool"], t["args"]) for t in turns] == [("Bash", {"command": "echo hi"})]


def test_a_reinstall_updates_our_server_entry_in_place_and_keeps_keys_the_person_added(place):
    ws, home = place / "ws", place / "home"
    (ws / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "strict-loop": {
                        "command": "/old/bin/strict-loop-mcp",
                        "args": [],
                        "env": {"STRICT_LOOP_TASK": "t1"},
                    }
                }
            }
        )
    )
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        '[mcp_servers.strict-loop]\ncommand = "/old/bin/strict-loop-mcp"  # mine\n'
        'args = []\nenv = { STRICT_LOOP_TASK = "t1" }\n'
    )
    run_cli("install", "claude", cwd=ws)
    run_cli("install", "codex", "--scope", "user", cwd=ws)
    new = str(Path(sys.executable).parent / "strict-loop-mcp")
    assert servers(ws / ".mcp.json")["strict-loop"] == {
        "command": new,
        "args": ["--workspace", str(ws)],
        "env": {"STRICT_LOOP_TASK": "t1"},
    }
    assert servers(home / ".codex" / "config.toml")["strict-loop"] == {
        "command": new,
        "args": [],
        "env": {"STRICT_LOOP_TASK": "t1"},
    }


def test_hermes_says_when_the_persons_deny_list_keeps_the_plugin_off(place):
    config = place / "home" / ".hermes" / "config.yaml"
    config.parent.mkdir()
    config.write_text("plugins:\n  disabled:\n    - strict-loop\n")
    out = run_cli("install", "hermes", cwd=place).stdout
    assert "plugins.disabled" in out and "hermes plugins enable strict-loop" in out
    assert YAML(typ="safe").load(config.read_text())["plugins"] == {
        "disabled": ["strict-loop"],
        "enabled": ["strict-loop"],
    }


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o7777


@pytest.mark.parametrize("harness, scope", CASES)
def test_install_and_uninstall_keep_each_settings_files_mode_and_owner_and_new_ones_are_private(place, harness, scope):
    ws, where = place / "ws", layout(place, harness, scope)
    seed(place, harness, scope)
    settings = [path for key, path in where.items() if key not in ("skill", "plugin")]
    modes = dict(zip(settings, (0o600, 0o400, 0o640), strict=False))
    owner = (12345, 23456) if os.geteuid() == 0 else None  # only root may give a file to someone else
    for path, wanted in modes.items():
        path.chmod(wanted)
        if owner:
            os.chown(path, *owner)
    for extra in ((), ("--uninstall",)):
        run_cli(*install_args(harness, scope, *extra), cwd=ws)
        assert {path: mode(path) for path in settings} == modes
        if owner:
            assert all((path.stat().st_uid, path.stat().st_gid) == owner for path in settings)
    for path in settings:
        path.unlink()
    run_cli(*install_args(harness, scope), cwd=ws)
    assert {path: mode(path) for path in settings} == dict.fromkeys(settings, 0o600)
    if harness == "hermes":
        assert mode(where["plugin"] / "__init__.py") == 0o600


@pytest.mark.parametrize(
    "harness, link, target",
    [
        ("claude", ".claude", "home/.claude"),  # a repository's .claude pointing at the user's own settings
        ("claude", ".mcp.json", "elsewhere/made-by-a-link.json"),  # a dangling link: would create a file anywhere
        ("claude", ".claude/skills", "elsewhere/skills"),
        ("codex", ".codex", "home/.codex"),
        ("codex", ".agents", "elsewhere"),
    ],
)
def test_a_project_install_never_writes_through_a_symbolic_link_in_the_workspace(place, harness, link, target):
    ws = place / "ws"
    (place / "home" / ".claude").mkdir()
    (place / "home" / ".claude" / "settings.json").write_text('{"model": "mine"}\n')
    (place / "home" / ".codex").mkdir()
    (place / "elsewhere").mkdir()
    (ws / link).parent.mkdir(parents=True, exist_ok=True)
    (ws / link).symlink_to(place / target)
    before = tree_files(place)
    for extra in ((), ("--uninstall",)):
        run = run_cli(*install_args(harness, "project", *extra), cwd=ws, check=False)
        assert run.returncode == 2 and f"{ws / link}: is a symbolic link" in run.stderr, run.stderr
        assert "writes only inside the workspace" in run.stderr and tree_files(place) == before
    assert not (place / "elsewhere" / "made-by-a-link.json").exists()


def test_a_user_install_follows_the_persons_own_dotfiles_link(place):
    dotfiles = place / "dotfiles" / "claude"
    dotfiles.mkdir(parents=True)
    (dotfiles / "settings.json").write_text('{"model": "mine"}\n')
    (place / "home" / ".claude").symlink_to(dotfiles)
    run_cli("install", "claude", "--scope", "user", cwd=place)
    assert our_handlers(dotfiles / "settings.json", "claude")["Stop"]
    assert (dotfiles / "skills" / "strict-agent-loop" / "SKILL.md").is_file()


@pytest.mark.parametrize(
    "args, code",
    [
        (["install", "claude", "--dry-run"], 0),  # its output is the last thing it does: the work is done
        (["list_tasks"], 0),
        (["schemas"], 141),  # a closed pipe ends it as SIGPIPE would, quietly
        (["install", "--help"], 0),  # argparse drops a failed write itself
    ],
)
def test_a_closed_pipe_on_stdout_ends_a_command_quietly(place, args, code):
    import subprocess

    reader, writer = os.pipe()
    os.close(reader)  # `| head -1` that has already left: every write gets EPIPE
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "strict_loop", *args],
            cwd=place / "ws",
            stdout=writer,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            timeout=60,
        )
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (code, "")


ROUND_TRIPS = {
    "compact JSON": ("claude", "hooks", '{"permissions":{"allow":["Bash(ls:*)"]},"hooks":{"Stop":[{"hooks":[]}]}}'),
    "compact JSON with a newline": ("codex", "hooks", '{"hooks":{"Stop":[{"hooks":[{"command":"x"}]}]}}\n'),
    "inline objects": ("claude", "mcp", '{\n  "a": {"b": [1, 2]},\n  "mcpServers": {"docs": {"command": "d"}}\n}\n'),
    "an empty hooks object": ("claude", "hooks", '{\n  "hooks": {}\n}\n'),
    "an empty event list": ("codex", "hooks", '{\n    "hooks": {"Stop": [], "Other": []},\n    "x": 1\n}'),
    "an empty mcpServers object": ("claude", "mcp", '{"mcpServers": {}, "numStartups": 3}\n'),
    "an empty object": ("claude", "mcp", "{}"),
    "\\u escapes and number forms": ("claude", "mcp", '{\n\t"name": "caf\\u00e9 \\u2603 \\/",\n\t"n": 1.0E5\n}\n'),
    "a TOML table after ours": ("codex", "mcp", '[mcp_servers.docs]\ncommand = "d"\n\n# mine\n[profile]\nx = 1\n'),
    "a TOML table right after ours": ("codex", "mcp", '[mcp_servers.docs]\ncommand = "d"\n[profile]\nx = 1\n'),
    "a TOML [mcp_servers] of its own": ("codex", "mcp", "[mcp_servers]\n\n[x]\ny = 2\n"),
    "TOML without a last newline": ("codex", "mcp", 'model = "o4"'),
    "TOML ending in a blank line": ("codex", "mcp", '[mcp_servers.docs]\ncommand = "d"\n\n'),
}


@pytest.mark.parametrize("case", ROUND_TRIPS)
def test_install_then_uninstall_gives_back_the_original_bytes(place, case):
    harness, key, text = ROUND_TRIPS[case]
    ws, where = place / "ws", layout(place, harness, "project")
    where[key].parent.mkdir(parents=True, exist_ok=True)
    where[key].write_text(text)
    original = tree_files(place)
    run_cli(*install_args(harness, "project"), cwd=ws)
    if key == "mcp":
        assert "strict-loop" in servers(where[key])
    else:
        assert our_handlers(where[key], harness)["Stop"]
    run_cli(*install_args(harness, "project", "--uninstall"), cwd=ws)
    assert tree_files(place) == original


def test_our_entries_join_a_compact_file_in_its_own_layout(place):
    ws = place / "ws"
    (ws / ".mcp.json").write_text('{"mcpServers":{"docs":{"command":"d"}}}')
    run_cli("install", "claude", cwd=ws)
    text = (ws / ".mcp.json").read_text()
    assert "\n" not in text and text.startswith('{"mcpServers":{"docs":{"command":"d"},"strict-loop":{"command":')


def _containers(value, path=()):
    if isinstance(value, (dict, list)):
        yield path, value
        for key, child in value.items() if isinstance(value, dict) else enumerate(value):
            yield from _containers(child, (*path, key))


@settings(max_examples=int(os.environ.get("STRICT_LOOP_EXAMPLES", 50)), deadline=None)  # more: a deeper search
@given(
    doc=st.dictionaries(
        st.text(max_size=4),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
            max_leaves=8,
        ),
        max_size=4,
    ),
    layout=st.sampled_from([(None, (",", ":")), (None, (", ", ": ")), (2, None), (4, None), ("\t", None)]),
    ascii_only=st.booleans(),
    pick=st.integers(min_value=0),
)
def test_a_json_value_appended_anywhere_and_removed_again_leaves_the_same_bytes(doc, layout, ascii_only, pick):
    from strict_loop.base.jsonedit import JsonText

    indent, separators = layout
    text = json.dumps(doc, indent=indent, separators=separators, ensure_ascii=ascii_only)
    places = list(_containers(doc))
    path, container = places[pick % len(places)]
    value = {"command": "/v/bin/strict-loop-mcp", "args": ["--workspace", "/w é"]}
    edit = JsonText(text)
    key = "strict-loop" if isinstance(container, dict) and "strict-loop" not in container else None
    if isinstance(container, dict) and key is None:
        return
    edit.append(path, key, value)
    added = json.loads(edit.text)
    target = added
    for step in path:
        target = target[step]
    assert (target[key] if key else target[-1]) == value
    edit.remove(path, key if key else len(container))
    assert edit.text == text
    edit.append(path, key, value)  # ours, then someone else's after it: ours goes, theirs stays
    edit.append(path, "zz-after" if key else None, [1])
    edit.remove(path, key if key else len(container))
    target = json.loads(edit.text)
    for step in path:
        target = target[step]
    assert target == ({**container, "zz-after": [1]} if key else [*container, [1]])
