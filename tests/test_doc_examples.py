"""Every `strict-loop` command shown in a code block of the README or a reference parses as written, with valid task
ids, including the blocks the docs runner does not run (they need a harness or a training job). Issue 19, item 12:
the README's examples used `--task-id T`, which every command refuses."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from strict_loop.base.layout import check_task_id
from strict_loop.cli import app

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "references").glob("*.md"))]
FENCE = re.compile(r"^```[\w-]*\n(.*?)^```", re.M | re.S)


def commands(path: Path) -> list[str]:
    """The `strict-loop ...` lines of the file's code blocks, continuation lines joined; placeholders left out."""
    found = []
    for block in FENCE.findall(path.read_text(encoding="utf-8")):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("strict-loop ") and not re.search(r"[<>|$]|\.\.\.|&&|;", line) and _whole(line):
                found.append(line)
    return found


def _whole(line: str) -> bool:
    """A command complete on its line (not one whose quoted argument goes on over the next lines)."""
    try:
        shlex.split(line)
    except ValueError:
        return False
    return True


CASES = [(path.name, line) for path in DOCS for line in commands(path)]


def test_the_docs_show_commands_to_check():
    assert len(CASES) > 20 and any(name == "README.md" for name, _ in CASES)


@pytest.mark.parametrize(("doc", "line"), CASES)
def test_each_documented_command_parses_as_written(doc, line):
    words = shlex.split(line)[1:]
    _, parsers = app.build_parser()
    try:
        parsers[words[0]].parse_args(words[1:])
    except SystemExit as exc:
        pytest.fail(f"{doc}: `{line}` does not parse (exit {exc.code})")
    for flag in ("--task-id", "--task") if words[0] == "resume" else ("--task-id",):
        if flag in words:
            check_task_id(words[words.index(flag) + 1])  # raises for an id every command refuses
