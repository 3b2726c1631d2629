"""SKILL.md passes the Agent Skills reference validator, installed the way a harness installs a skill."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_skill_validates_with_agentskills(tmp_path):
    skill = tmp_path / "strict-agent-loop"  # harnesses install a skill in a folder named after it
    skill.mkdir()
    shutil.copy(REPO / "SKILL.md", skill / "SKILL.md")
    for folder in ("references", "scripts", "strict_loop"):
        shutil.copytree(REPO / folder, skill / folder, ignore=shutil.ignore_patterns("__pycache__"))
    tool = shutil.which("agentskills", path=str(Path(sys.executable).parent)) or shutil.which("agentskills")
    assert tool, "skills-ref is a test dependency: pip install -e '.[test]'"
    proc = subprocess.run([tool, "validate", str(skill)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    props = subprocess.run([tool, "read-properties", str(skill)], capture_output=True, text=True, check=True).stdout
    assert '"name": "strict-agent-loop"' in props


def test_skill_scripts_run_from_an_installed_copy(tmp_path):
    """A skill copied into a harness folder runs its scripts without pip installing anything."""
    skill = tmp_path / "skills" / "strict-agent-loop"
    for folder in ("scripts", "strict_loop"):
        shutil.copytree(REPO / folder, skill / folder, ignore=shutil.ignore_patterns("__pycache__"))
    init = skill / "strict_loop" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "9.9.9-copy+'))
    ws = tmp_path / "ws"
    ws.mkdir()
    run = subprocess.run(
        [
            sys.executable,
            str(skill / "scripts" / "init_state.py"),
            "--goal",
            "g",
            "--global-stop-condition",
            "c",
            "--task-id",
            "copy",
        ],
        cwd=ws,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    first = json.loads((ws / ".agent-loop" / "tasks" / "copy" / "events.jsonl").read_text().splitlines()[0])
    assert first["data"]["written_by"].startswith("strict-agent-loop 9.9.9-copy+")  # the copy's code ran


def test_skill_fits_its_budget():
    """The agent loads SKILL.md into its context whenever the skill triggers: every character is paid for, each
    session."""
    text = (REPO / "SKILL.md").read_text(encoding="utf-8")
    assert len(text) <= 6000, f"SKILL.md has {len(text)} characters; the budget is 6000"
