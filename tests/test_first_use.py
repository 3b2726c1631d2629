"""Issue 26, item 9: what a new user meets first. The CLI (and the scripts and the MCP server) from a subfolder of
a workspace, the advice in an error (the flag the caller types, an example of a task id), the demo's trace on the
person's page, the harness installer's silence, and what the suite leaves in RAM (/dev/shm)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import REPO, init_basic, run_cli, run_script

from strict_loop.storage import workspaces


def _process(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env or {})}
    env.pop("STRICT_LOOP_DEBUG", None)
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture
def nested(ws_dir: Path) -> Path:
    """A workspace with one task and a subfolder two levels down (where a person's shell often is)."""
    init_basic(ws_dir, "notes")
    sub = ws_dir / "src" / "deep"
    sub.mkdir(parents=True)
    return sub


def test_the_cli_in_a_subfolder_works_on_the_workspace_above_it(nested, ws_dir):
    proc = _process([sys.executable, "-m", "strict_loop", "show_task", "--json"], cwd=nested)
    assert proc.returncode == 0, proc.stderr  # it said: no loop task exists in .../src/deep -- create one
    assert json.loads(proc.stdout)["state"]["task_id"] == "notes"
    assert run_script("list_tasks", "--json", cwd=nested).stdout.count('"task_id": "notes"') == 1  # scripts/ too
    run_cli("append_event", "--kind", "round.started", "--message", "round 1", cwd=nested)
    assert "round 1" in (ws_dir / ".agent-loop" / "tasks" / "notes" / "events.jsonl").read_text()
    init_basic(nested, "second")  # a new task from a subfolder joins the workspace the hooks record into
    assert not (nested / ".agent-loop").exists() and (ws_dir / ".agent-loop" / "tasks" / "second").is_dir()


def test_an_explicit_workspace_still_wins_from_a_subfolder(nested):
    out = run_cli("show_task", "--workspace", ".", cwd=nested, check=False)
    assert out.returncode == 2 and f"no loop task exists in {nested.resolve()}" in out.stderr, out.stderr


def test_with_no_loop_above_the_cli_uses_the_current_folder(tmp_path):
    here = tmp_path / "fresh"
    here.mkdir()
    init_basic(here, "first")
    assert (here / ".agent-loop" / "tasks" / "first").is_dir()


@pytest.mark.anyio
async def test_the_mcp_server_started_in_a_subfolder_serves_the_workspace_above(nested, ws_dir, monkeypatch):
    from mcp_helpers import call, memory_client  # imported where used: the suite run at the end collects this module

    from mcp_server.server import parse_args

    monkeypatch.chdir(nested)  # where a user-scope install starts the server: the folder the session starts in
    args = parse_args([])
    assert Path(args.workspace) == ws_dir.resolve()
    async with memory_client(Path(args.workspace)) as client:
        err, listed, text = await call(client, "list_tasks")
    assert not err and [t["task_id"] for t in listed["tasks"]] == ["notes"], text
    monkeypatch.chdir(nested.parent)
    assert parse_args(["--workspace", str(nested)]).workspace == str(nested)


@pytest.mark.anyio
async def test_init_state_on_an_existing_id_names_the_flag_of_the_caller(ws_dir):
    from mcp_helpers import call, memory_client

    init_basic(ws_dir, "notes")
    out = run_cli(
        "init_state", "--task-id", "notes", "--goal", "g", "--global-stop-condition", "s", cwd=ws_dir, check=False
    )
    assert (
        out.returncode == 2 and "pass --force to replace it" in out.stderr and "choose another --task-id" in out.stderr
    )
    assert "force=true" not in out.stderr, out.stderr
    async with memory_client(ws_dir) as client:  # an agent calling the tool sends parameters, not flags
        err, _, text = await call(client, "init_state", task_id="notes", goal="g", global_stop_condition="s")
    assert err and "pass force=true to replace it" in text and "--force" not in text, text


def test_cli_advice_never_rewrites_the_task_ids_it_lists(ws_dir):
    init_basic(ws_dir, "task_id")  # a valid id that is also a parameter's name
    out = run_cli("show_task", "--task-id", "task_ic", cwd=ws_dir, check=False)
    assert out.returncode == 2 and "did you mean 'task_id'? known tasks: task_id" in out.stderr, out.stderr


@pytest.mark.anyio
@pytest.mark.parametrize("command", ["init_state", "show_task", "alerts"])
async def test_a_malformed_task_id_gets_an_example_not_a_field_description(ws_dir, command):
    extra = ["--goal", "g", "--global-stop-condition", "s"] if command == "init_state" else []
    out = run_cli(command, "--task-id", "Fix/Parser", *extra, cwd=ws_dir, check=False)
    assert out.returncode == 2, out.stderr  # alerts: "unexpected ValueError", exit 1
    assert "is not a task id" in out.stderr and "like fix-parser or train_2" in out.stderr, out.stderr
    assert "expected: Task id" not in out.stderr and "Omit when one task runs" not in out.stderr
    if command == "show_task":
        from mcp_helpers import call, memory_client

        async with memory_client(ws_dir) as client:
            err, _, text = await call(client, "show_task", task_id="Fix/Parser")
        assert err and "like fix-parser or train_2" in text, text


def test_the_demo_leaves_its_folder_off_the_persons_page(tmp_path, monkeypatch, user_config_dir):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # its default scratch folder, made here
    out = run_cli("demo", "--start", "2", cwd=tmp_path)
    assert workspaces.known() == {}
    (made,) = tmp_path.glob("strict-loop-demo-*")
    assert f"workspace: {made}" in out.stdout and (made / ".agent-loop").is_dir()  # the folder stays to be read
    index = user_config_dir / workspaces.INDEX_FILE
    assert not index.exists() or str(made) not in index.read_text()


def test_the_demo_in_a_workspace_of_the_persons_keeps_it_on_the_page(ws_dir):
    init_basic(ws_dir, "mine")
    run_cli("demo", "--start", "2", "--workspace", str(ws_dir), cwd=ws_dir)
    assert list(workspaces.known().values()) == [ws_dir.resolve()]


INSTALLER = REPO / "tests" / "harnesses" / "install.py"


def _pins() -> dict[str, str]:
    """The installer's own npm pins (a harness added there is expected here too)."""
    spec = importlib.util.spec_from_file_location("harness_installer", INSTALLER)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.NPM_PACKAGES)


def _ready_harnesses(root: Path, bin_dir: Path) -> None:
    """A --root where every pinned harness looks installed, and a chromium on PATH: nothing to download."""
    node = root / "node" / "node_modules"
    for name, version in _pins().items():
        (node / name).mkdir(parents=True)
        (node / name / "package.json").write_text(json.dumps({"version": version}))
    (node / ".bin").mkdir()
    for exe in ("claude", "codex", "gemini", "opencode"):
        (node / ".bin" / exe).touch()
    (root / "hermes-venv" / "bin").mkdir(parents=True)
    (root / "hermes-venv" / "bin" / "hermes").touch()
    (root / "hermes-venv" / "lib" / "python3.11" / "site-packages" / "hermes_agent-0.19.0.dist-info").mkdir(
        parents=True
    )
    (root / "phoenix-venv" / "lib" / "python3.11" / "site-packages" / "phoenix").mkdir(parents=True)
    bin_dir.mkdir()
    (bin_dir / "chromium").write_text("#!/bin/sh\n")
    (bin_dir / "chromium").chmod(0o755)


def test_the_harness_installer_says_what_it_does_and_how_big_a_first_install_is(tmp_path):
    _ready_harnesses(tmp_path / "h", tmp_path / "bin")
    proc = _process(
        [sys.executable, str(INSTALLER), "--root", str(tmp_path / "h")], tmp_path, {"PATH": str(tmp_path / "bin")}
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert "a first install downloads about 2 GB" in lines[0] and "minutes" in lines[0]
    assert [line.split(":")[1].split()[0] for line in lines[1:5]] == [
        "claude-code",
        "hermes-agent",
        "chromium",
        "arize-phoenix",
    ]
    assert all("already" in line for line in lines[1:5]) and lines[-1].startswith("harnesses: ready in ")


def test_the_harness_installer_names_a_long_step_and_its_size_before_it_starts(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for exe, script in {
        "node": "echo v22.23.3",
        "npm": 'if [ "$1" = view ]; then echo ">=18"; else echo "npm died" >&2; exit 7; fi',
    }.items():
        (bin_dir / exe).write_text(f"#!/bin/sh\n{script}\n")
        (bin_dir / exe).chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"}
    proc = _process([sys.executable, str(INSTALLER), "--root", str(tmp_path / "h")], tmp_path, env)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    pinned = " and ".join(f"{n.split('/')[-1]} {v}" for n, v in _pins().items())
    step = next(i for i, line in enumerate(lines) if f"installing {pinned} from npm" in line)
    assert "about 1.3 GB" in lines[step] and "failed (exit 7)" in lines[step + 1], proc.stderr


def test_it_leaves_nothing_in_its_temporary_folder(tmp_path):
    """Stands in for the suite in the run below: writes where every test writes (its tmp_path, its config folder)."""
    (tmp_path / "big").write_bytes(b"x" * 4096)
    (Path(os.environ["XDG_CONFIG_HOME"]) / "strict-loop").mkdir(parents=True, exist_ok=True)


@pytest.mark.slow  # a pytest run with an xdist worker: seconds
def test_a_passing_run_of_the_suite_leaves_nothing_in_ram(tmp_path):
    """/dev/shm piled up one config folder per process and run, and three runs' tmp_path folders (222 MB)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    node = f"tests/{Path(__file__).name}::test_it_leaves_nothing_in_its_temporary_folder"
    cmd = [sys.executable, "-m", "pytest", node, "-q", "-n", "1", "-p", "no:cacheprovider"]
    proc = _process(cmd, REPO, {"TMPDIR": str(tmp)})  # the run's temporary folders: here, not in /dev/shm
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    left = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*"))
    assert left == [] or (len(left) == 1 and left[0].startswith("pytest-of-")), left  # pytest's empty user folder
