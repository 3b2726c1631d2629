"""Every ```bash block in README.md, SKILL.md and references/*.md runs, in order, in a fresh workspace.

README blocks that .ci/run itself executes (the install and test commands) are
not run again here: CI runs them on every submission.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

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


@pytest.mark.slow  # runs every command in the docs: dozens of processes
@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_doc_commands_run(path, tmp_path):
    env = dict(os.environ, SKILL_DIR=str(REPO), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("STRICT_LOOP_DEBUG", None)
    for number, block in enumerate(_runnable(path), start=1):
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{path.name} bash block {number} failed:\n{block}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
