"""Shared fixtures: a fresh workspace folder and runners for the real scripts and CLI."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"


@pytest.fixture
def ws_dir(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


def run_script(name: str, *args: str, cwd: Path, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``scripts/<name>.py`` as a real subprocess, the way a person or an agent would."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / f"{name}.py"), *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=_env(),
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"{name} {args} exited {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc


def run_json(name: str, *args: str, cwd: Path):
    return json.loads(run_script(name, *args, "--json", cwd=cwd).stdout)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("STRICT_LOOP_DEBUG", None)
    return env


def read_jsonl(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def init_basic(ws: Path, task_id: str = "demo", *extra: str) -> None:
    run_script("init_state", "--task-id", task_id, "--goal", "Write notes.md", "--global-stop-condition",
               "notes.md says done", "--require-text", "notes.md::done", *extra, cwd=ws)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def git_repo(ws: Path) -> Path:
    """Make ``ws`` a git repository with one commit (a.txt = v0)."""
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "me@example.com")
    git(ws, "config", "user.name", "Me")
    (ws / "a.txt").write_text("v0\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-qm", "start")
    return ws


def tree_digest(root: Path) -> str:
    """A hash of every file under ``root`` (lock files aside): equal digests mean nothing was written."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name != ".lock":
            h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(autouse=True)
def user_config_dir(tmp_path_factory, monkeypatch) -> Path:
    """A fresh ``$XDG_CONFIG_HOME`` per test: what the tool records about this machine never leaks between tests or into ~/.config."""
    d = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(d))
    return d / "strict-loop"
