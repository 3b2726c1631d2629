"""Where the skill's own files are: SKILL.md, references/ (with the generated JSON Schemas), scripts/, the Hermes
and OpenCode plugins.

The repo-top folders are the source. A built wheel carries a copy of them inside the package, in
``strict_loop/skill/`` (the build puts it there: see ``hatch_build.py``). A source checkout, an
editable install and a skill folder copied into a harness without pip have no such copy and use the
folder that holds ``strict_loop/``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any, Optional

from strict_loop.base.errors import LoopError

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
"""The folder that holds this strict_loop/ (and mcp_server/ beside it), installed or a checkout."""
PACKAGED = "skill"
"""The folder inside the installed package that holds the wheel's copy of the skill's files."""


def boot_argv(code: str) -> list[str]:
    """A command that runs ``code`` in this interpreter with this very package first on the path. Never ``-m``: a
    process we start in a workspace would put the repository's folder first, and its own strict_loop/ or mcp_server/
    would run instead of ours."""
    return [sys.executable, "-c", f"import sys; sys.path[0] = {PACKAGE_PARENT!r}; {code}"]


def skill_root() -> Path:
    """The folder holding SKILL.md, references/ and scripts/: the installed copy, else the repo top."""
    package = Path(str(files("strict_loop"))).resolve()
    packaged = package / PACKAGED
    return packaged if (packaged / "SKILL.md").is_file() else package.parent


def filled_in(src: Path, code: str, values: Sequence[tuple[str, str, Any]], end: str = "") -> str:
    """A shipped plugin's ``code`` (read from ``src``) with each ``HEAD = <shape>END`` line's value replaced by the
    given value as JSON (valid Python and JavaScript alike): what an install writes in (the program, the hook's words,
    the pinned workspace). A line missing is a damaged copy of the package."""
    for head, shape, value in values:
        line = re.search(rf"^{re.escape(head)} = {shape}{re.escape(end)}", code, re.MULTILINE)
        if line is None:
            raise LoopError(str(src), f"has no '{head} = ...{end}' line to fill in", "reinstall strict-agent-loop")
        code = code[: line.start()] + f"{head} = {json.dumps(value)}{end}" + code[line.end() :]
    return code


def hermes_plugin_dir() -> Path:
    """The Hermes plugin (plugin.yaml, __init__.py) that ``strict-loop install hermes`` copies."""
    return skill_root() / "integrations" / "hermes" / "strict-loop"


def opencode_plugin_file() -> Path:
    """The OpenCode plugin (one JavaScript file) that ``strict-loop install opencode`` writes into a plugins folder."""
    return skill_root() / "integrations" / "opencode" / "strict-loop.js"


def schema_dir() -> Path:
    """``references/schemas`` of :func:`skill_root`: the shipped JSON Schemas."""
    return skill_root() / "references" / "schemas"


def source_schema_dir() -> Path:
    """Where ``strict-loop schemas --write`` writes by default: a source checkout's references/schemas.

    An installed package's copy is not a source (regenerating it in site-packages would only hide a
    mismatch with the release), so there the caller must name a folder.
    """
    if skill_root().parent == Path(str(files("strict_loop"))).resolve():
        raise LoopError(
            "schemas --write",
            f"no default folder in an installed package ({schema_dir()} is the release's read-only copy)",
            "name one: strict-loop schemas --write DIR",
        )
    return schema_dir()


def read_tree(dest: Path) -> Optional[dict[str, bytes]]:
    """The files under ``dest`` by relative path (no ``__pycache__``); None when it is not a folder."""
    if not dest.is_dir():
        return None
    return {
        p.relative_to(dest).as_posix(): p.read_bytes()
        for p in sorted(dest.rglob("*"))
        if p.is_file() and "__pycache__" not in p.relative_to(dest).parts
    }


def source_tree(root: Path, parts: tuple[str, ...]) -> dict[str, bytes]:
    """The files and folders ``parts`` of ``root``, by path relative to it (no bytecode)."""
    out: dict[str, bytes] = {}
    for part in parts:
        base = root / part
        paths = [base] if base.is_file() else sorted(base.rglob("*"))
        for p in paths:
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out
