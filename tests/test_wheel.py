"""A wheel built from the repo carries the whole skill and works installed on its own, with no repo in sight.

``server.json`` advertises ``uvx strict-agent-loop`` from PyPI: that install is a wheel, so SKILL.md,
references/ (with the JSON Schemas) and scripts/ must be inside it and found there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_helpers import memory_client

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _env() -> dict[str, str]:
    """The caller's environment without anything that would put the repo's code on the path."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "STRICT_LOOP_DEBUG")
    }
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _run(*cmd: str | Path, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)


def _ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """Build the wheel, install it alone into a fresh venv; the venv borrows only the dependencies."""
    tmp = tmp_path_factory.mktemp("wheel")
    backend = re.search(r'^build-backend = "(.+)"$', (REPO / "pyproject.toml").read_text(), re.MULTILINE)[1]
    if importlib.util.find_spec(backend.split(".")[0]):
        # pyproject's backend is in the test extra: its PEP 517 hook, called as pip would call it from the repo's
        # folder, without pip's own ~0.6 s of CPU around it (nor a download).
        build = "import importlib, sys; importlib.import_module(sys.argv[1]).build_wheel(sys.argv[2])"
        _ok(_run(sys.executable, "-c", build, backend, tmp / "dist", cwd=REPO, timeout=300))
    else:
        _ok(
            _run(
                sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp / "dist", REPO, cwd=tmp, timeout=300
            )
        )
    wheels = list((tmp / "dist").glob("strict_agent_loop-*.whl"))
    assert len(wheels) == 1, wheels

    venv = tmp / "venv"
    _ok(_run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp))
    bindir = venv / "bin"
    python = bindir / "python"
    site_dir = Path(
        _ok(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp)).stdout.strip()
    )
    # Dependencies (pydantic, mcp, pip...) come from this interpreter's site-packages as plain path entries
    # appended after the venv's own: their .pth files (an editable install of this repo) stay unprocessed.
    outer = [
        p
        for p in dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *sys.path])
        if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()
    ]
    (site_dir / "_outer_deps.pth").write_text("\n".join(outer) + "\n")
    _ok(
        _run(
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--ignore-installed",
            "--disable-pip-version-check",
            "--no-warn-script-location",
            wheels[0],
            cwd=tmp,
            timeout=120,
        )
    )
    return {"tmp": tmp, "wheel": wheels[0], "venv": venv, "bin": bindir, "python": python, "site": site_dir}


def test_installed_code_is_the_wheels_not_the_repos(installed):
    out = _ok(
        _run(
            installed["python"],
            "-c",
            # mcp_server: the file its import would run (find_spec), without its ~0.7 s of MCP SDK imports (the
            # installed server runs in test_mcp_server_lists_its_tools_over_stdio)
            "import json, strict_loop, importlib.util; from strict_loop.base import skillfiles; "
            "server = importlib.util.find_spec('mcp_server').origin; "
            "print(json.dumps([strict_loop.__file__, server, str(skillfiles.skill_root())]))",
            cwd=installed["tmp"],
        )
    ).stdout
    site = installed["site"].resolve()
    for path in json.loads(out):
        assert Path(path).resolve().is_relative_to(site), f"{path} is not inside {site}"
        assert not Path(path).resolve().is_relative_to(REPO), path
    assert json.loads(out)[2] == str(site / "strict_loop" / "skill")


def test_wheel_holds_the_skill_files(installed):
    skill = installed["site"] / "strict_loop" / "skill"
    assert (skill / "SKILL.md").read_bytes() == (REPO / "SKILL.md").read_bytes()
    for folder, pattern in (("references", "*.md"), ("references/schemas", "*.schema.json"), ("scripts", "*.py")):
        shipped = sorted(p.name for p in (REPO / folder).glob(pattern))
        assert shipped and sorted(p.name for p in (skill / folder).glob(pattern)) == shipped, folder
    assert (installed["site"] / "strict_loop" / "py.typed").is_file()
    schemas = "mcp_server/tool_schemas.json"  # tools/list's schemas, so that a start makes none
    assert (installed["site"] / schemas).read_bytes() == (REPO / schemas).read_bytes()
    plugin = "integrations/opencode/strict-loop.js"  # what `strict-loop install opencode` fills in and writes
    assert (skill / plugin).read_bytes() == (REPO / plugin).read_bytes()
    assert not (installed["site"] / "references").exists() and not (installed["site"] / "scripts").exists()


def test_schemas_check_passes_and_write_needs_a_folder(installed):
    strict_loop = installed["bin"] / "strict-loop"
    tmp = installed["tmp"]
    _ok(_run(strict_loop, "schemas", "--check", cwd=tmp))
    before = sorted(
        (p.name, p.stat().st_mtime_ns) for p in (installed["site"] / "strict_loop/skill/references/schemas").iterdir()
    )
    refused = _run(strict_loop, "schemas", "--write", cwd=tmp)
    assert refused.returncode != 0 and "no default folder in an installed package" in refused.stderr, refused.stderr
    assert "strict-loop schemas --write DIR" in refused.stderr
    after = sorted(
        (p.name, p.stat().st_mtime_ns) for p in (installed["site"] / "strict_loop/skill/references/schemas").iterdir()
    )
    assert after == before  # nothing written into site-packages
    _ok(_run(strict_loop, "schemas", "--write", tmp / "out", cwd=tmp))
    _ok(_run(strict_loop, "schemas", "--check", tmp / "out", cwd=tmp))


def test_demo_and_a_packaged_script_run(installed):
    tmp = installed["tmp"]
    demo = _ok(_run(installed["bin"] / "strict-loop", "demo", "--workspace", tmp / "demo", cwd=tmp))
    assert "goal_met" in demo.stdout
    ws = tmp / "ws"
    ws.mkdir()
    script = installed["site"] / "strict_loop" / "skill" / "scripts" / "init_state.py"
    _ok(_run(installed["python"], script, "--task-id", "w", "--goal", "g", "--global-stop-condition", "c", cwd=ws))
    assert (ws / ".agent-loop" / "tasks" / "w" / "state.json").is_file()


def test_mcp_server_lists_its_tools_over_stdio(installed):
    ws = installed["tmp"] / "mcp-ws"
    ws.mkdir()

    async def tools() -> tuple[list[str], list[str]]:
        # The SDK spawns the server with only HOME/PATH/SHELL/TERM: no PYTHONPATH reaches it.
        params = StdioServerParameters(
            command=str(installed["bin"] / "strict-agent-loop"), args=["--workspace", str(ws)], cwd=str(ws)
        )
        with anyio.fail_after(30):
            async with Client(params, read_timeout_seconds=30) as client:
                listed = sorted(t.name for t in (await client.list_tools()).tools)
        async with memory_client(ws) as client:
            expected = sorted(t.name for t in (await client.list_tools()).tools)
        return listed, expected

    listed, expected = anyio.run(tools)
    assert listed == expected and "update_state" in listed


def test_install_from_the_wheel_copies_the_packaged_skill_and_hermes_plugin(installed):
    tmp = installed["tmp"]
    home = tmp / "install-home"
    env = {**_env(), "HOME": str(home), "HERMES_HOME": str(home / ".hermes")}
    done = subprocess.run(
        [installed["bin"] / "strict-loop", "install", "hermes"],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    plugin = home / ".hermes" / "plugins" / "strict-loop"
    assert (plugin / "plugin.yaml").read_bytes() == (REPO / "integrations/hermes/strict-loop/plugin.yaml").read_bytes()
    assert f'STRICT_LOOP = "{installed["bin"] / "strict-loop"}"' in (plugin / "__init__.py").read_text()
    assert (home / ".hermes" / "skills" / "strict-agent-loop" / "SKILL.md").read_bytes() == (
        REPO / "SKILL.md"
    ).read_bytes()
    assert f"command: {installed['bin'] / 'strict-loop-mcp'}" in (home / ".hermes" / "config.yaml").read_text()


def test_the_codex_hook_the_wheel_installs_runs_without_site_and_records_a_call(installed):
    """Issue 27: the thin hook (``python -S .../entry.py``) in a venv whose dependencies come through a .pth file: with
    no daemon yet, it falls back to the full hook, which finds them once it has loaded site."""
    tmp, exe = installed["tmp"], installed["bin"] / "strict-loop"
    ws = tmp / "codex-ws"
    ws.mkdir()
    env = {**_env(), "HOME": str(tmp / "codex-home")}
    for args in (
        ["init_state", "--task-id", "t1", "--goal", "g", "--global-stop-condition", "c"],
        ["install", "codex"],
    ):
        done = subprocess.run([exe, *args], cwd=ws, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    command = json.loads((ws / ".codex" / "hooks.json").read_text())["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert command.startswith(f"{installed['python']} -S {installed['site'].resolve() / 'strict_loop' / 'entry.py'} ")
    event = {"session_id": "s1", "cwd": str(ws), "hook_event_name": "PostToolUse", "tool_name": "Bash"}
    event.update(tool_input={"command": "echo hi"}, tool_response="hi\n", tool_use_id="call_1")
    done = subprocess.run(["bash", "-c", command], input=json.dumps(event), env=env, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")
    lines = (ws / ".agent-loop" / "tasks" / "t1" / "events.jsonl").read_text().splitlines()
    assert [json.loads(line)["data"]["args"] for line in lines if '"tool_call"' in line] == [{"command": "echo hi"}]
