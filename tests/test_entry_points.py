"""One real process per command-line entry point: a script shim, ``python -m strict_loop`` and ``strict-loop``.

Every other CLI test calls ``strict_loop.cli.main`` in the test process (conftest.run_script and
run_cli); these make sure the real entry points reach that same ``main`` and that the in-process
runner reports what a real run prints and exits with. The MCP server's entry points start as real
processes in test_mcp_stdio.py, test_harness_docs.py (``strict-loop-mcp``) and test_mcp_server.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import SCRIPTS, run_cli, run_script

from strict_loop import Workspace


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("STRICT_LOOP_DEBUG", None)
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60, env=env)


def test_script_shim_runs_as_a_process(ws_dir):
    proc = _run(
        [
            sys.executable,
            str(SCRIPTS / "init_state.py"),
            "--task-id",
            "shim",
            "--goal",
            "g",
            "--global-stop-condition",
            "c",
            "--json",
        ],
        cwd=ws_dir,
    )  # --workspace defaults to the working directory
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["task_id"] == "shim"
    assert Workspace(ws_dir).show_task(task_id="shim").state.contract.goal == "g"
    # A usage error: the subcommand's own usage line, exit 2; the in-process runner reports the same.
    proc = _run([sys.executable, str(SCRIPTS / "update_state.py"), "--task", "t"], cwd=ws_dir)
    assert proc.returncode == 2 and proc.stderr.startswith(
        "update_state.py: error: the following arguments are required"
    )
    same = run_script("update_state", "--task", "t", cwd=ws_dir, check=False)
    assert (same.returncode, same.stdout, same.stderr) == (proc.returncode, proc.stdout, proc.stderr)


def test_python_m_strict_loop_runs_as_a_process(ws_dir):
    Workspace(ws_dir).init_state(goal="g", global_stop_condition="c", task_id="mod")
    proc = _run(
        [sys.executable, "-m", "strict_loop", "list_tasks", "--json", "--workspace", str(ws_dir)], cwd=ws_dir.parent
    )
    assert proc.returncode == 0, proc.stderr
    assert [t["task_id"] for t in json.loads(proc.stdout)] == ["mod"]
    same = run_cli("list_tasks", "--json", "--workspace", str(ws_dir), cwd=ws_dir.parent)
    assert (same.returncode, same.stdout, same.stderr) == (proc.returncode, proc.stdout, proc.stderr)


def test_strict_loop_console_script_runs_as_a_process(ws_dir):
    exe = shutil.which("strict-loop", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert exe, "the strict-loop console script is not installed: pip install -e ."
    proc = _run([exe, "check_stop", "--exit-status"], cwd=ws_dir)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "no loop task exists" in proc.stderr, (
        proc.stderr
    )
    same = run_cli("check_stop", "--exit-status", cwd=ws_dir, check=False)
    assert (same.returncode, same.stdout, same.stderr) == (proc.returncode, proc.stdout, proc.stderr)
