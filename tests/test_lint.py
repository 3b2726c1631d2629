"""The code passes its linter, its formatter and its type checker, as configured in pyproject.toml ([tool.ruff],
[tool.mypy]). Why a test: a check that only runs when someone remembers to run it drifts; here the suite fails on
the first long line, unformatted file or type error, with the tool's own report as the failure message."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
INSTALL = "pip install -e '.[test]'"


def _need(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: {INSTALL} installs it")


def _run(*args: str, timeout: float) -> None:
    """Run ``python3 -m <args>`` from the repository's root; fail with its output unless it exits 0."""
    proc = subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        pytest.fail(f"`{' '.join(args)}` exited {proc.returncode}:\n{proc.stdout}{proc.stderr}", pytrace=False)


def test_ruff_check_and_format_pass():
    _need("ruff")
    _run("ruff", "check", ".", timeout=120)
    _run("ruff", "format", "--check", ".", timeout=120)


@pytest.mark.slow
def test_mypy_passes():
    _need("mypy")
    _run("mypy", timeout=600)
