"""Every ```bash block in README.md, SKILL.md and references/*.md runs, in order, in a fresh workspace.

README blocks that .ci/run itself executes (the install and test commands) are
not run again here: CI runs them on every submission.

The README's commands run the installed ``strict-loop`` console script; the other documents' run
a ``strict-loop`` served by tests/forkserver.py: a fresh process per call with the caller's argv,
directory, environment and stdio, running the console script's code, minus ~0.3 s of imports.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import forkserver
import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", REPO / "SKILL.md", *sorted((REPO / "references").glob("*.md"))]
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)


def bash_blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text(encoding="utf-8"))


def _ci_commands() -> str:
    return (REPO / ".ci" / "run").read_text(encoding="utf-8")


def _runnable(path: Path) -> list[str]:
    blocks = bash_blocks(path)
    if path.name == "README.md":
        ci = _ci_commands()
        blocks = [b for b in blocks if b.strip() not in ci]
    return blocks


def test_every_doc_has_runnable_examples():
    assert all(p.is_file() for p in DOCS)
    for path in DOCS:
        if path.name != "state_schema.md":
            assert bash_blocks(path), f"{path.name} shows no command"


def test_readme_commands_are_what_ci_runs():
    readme = bash_blocks(REPO / "README.md")
    ci = _ci_commands()
    skipped = [b.strip() for b in readme if b.strip() in ci]
    assert any("pytest" in b for b in skipped), "the README's test command must be the one .ci/run calls"


@pytest.fixture(scope="module")
def served_cli() -> Iterator[Path]:
    """A folder whose ``strict-loop`` runs each call in a child of one fork server (tests/forkserver.py)."""
    folder = Path(tempfile.mkdtemp(prefix="sl-fork-"))  # a short path: a Unix socket's must fit in 108 bytes
    sock = folder / "s"
    server = subprocess.Popen(
        [sys.executable, forkserver.__file__, str(sock)],
        stdin=subprocess.PIPE,  # its lifeline
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout.readline() == "ready\n", "the fork server did not start"
        forkserver.client_script(folder, sock)
        yield folder
    finally:
        server.kill()
        server.wait()
        server.stdin.close()
        server.stdout.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow  # runs every command in the docs: dozens of processes
@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_doc_commands_run(path, tmp_path, request):
    bins = [Path(sys.executable).parent]
    if path.name != "README.md":  # the README runs the genuine console script
        bins.insert(0, request.getfixturevalue("served_cli"))
    env = dict(os.environ, SKILL_DIR=str(REPO), PATH=os.pathsep.join([*map(str, bins), os.environ.get("PATH", "")]))
    env.pop("STRICT_LOOP_DEBUG", None)
    env["TMPDIR"] = str(tmp_path / ".tmp")  # a documented `mktemp -d` lands in the test's folder, removed with it
    # A documented `pip install` installs (or finds) what it names, but skips its check of every other package on this
    # machine for conflicts (~0.5 s of CPU; it only warns). pip reads a --no-* switch's variable inverted: "false": on.
    env["PIP_NO_WARN_CONFLICTS"] = "false"
    (tmp_path / ".tmp").mkdir()
    for number, block in enumerate(_runnable(path), start=1):
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, (
            f"{path.name} bash block {number} failed:\n{block}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )


def _bash(script: str, cwd: Path, *bins: Path) -> tuple[int, str, str]:
    """Run ``script`` with ``bins`` first on PATH; the exit status and the output, ``cwd`` written as WS."""
    env = dict(os.environ, STRICT_LOOP_HOOKD="off", PATH=os.pathsep.join([*map(str, bins), os.environ.get("PATH", "")]))
    env.pop("STRICT_LOOP_DEBUG", None)
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    return proc.returncode, proc.stdout.replace(str(cwd), "WS"), proc.stderr.replace(str(cwd), "WS")


@pytest.mark.slow  # starts the genuine console script three times
def test_the_served_cli_answers_as_the_console_script(served_cli, tmp_path):
    """Output, exit codes, the working directory and stdin reach the served ``strict-loop`` as they reach the installed
    one."""
    call = '{"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}}'
    script = (
        'rc=0; strict-loop check_stop --exit-status || rc=$?; echo "rc=$rc"\n'
        "strict-loop init_state --task-id t --goal g --global-stop-condition c\n"
        f"printf '%s' '{call}' | strict-loop hook claude --workspace .\n"
        "grep -c '\"tool_call\"' .agent-loop/tasks/t/events.jsonl\n"
    )
    for name in ("installed", "served"):
        (tmp_path / name).mkdir()
    installed = _bash(script, tmp_path / "installed", Path(sys.executable).parent)
    assert _bash(script, tmp_path / "served", served_cli, Path(sys.executable).parent) == installed
    assert installed[1] == "rc=2\ninitialized task 't' in WS/.agent-loop/tasks/t\n1\n", installed
    assert "no loop task exists" in installed[2], installed
    # Two served calls at once, one reading what the other writes: each ends when its own child does.
    script = "strict-loop --version | tee version.txt | strict-loop hook claude --workspace .; cat version.txt"
    assert _bash(script, tmp_path / "served", served_cli)[:2] == (
        0,
        f"strict-agent-loop {version('strict-agent-loop')}\n",
    )
