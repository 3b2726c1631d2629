"""Where the skill's own files are: SKILL.md, references/ (with the generated JSON Schemas), scripts/, the Hermes
plugin.

The repo-top folders are the source. A built wheel carries a copy of them inside the package, in
``strict_loop/skill/`` (the build puts it there: see ``hatch_build.py``). A source checkout, an
editable install and a skill folder copied into a harness without pip have no such copy and use the
folder that holds ``strict_loop/``.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from strict_loop.base.errors import LoopError

PACKAGED = "skill"
"""The folder inside the installed package that holds the wheel's copy of the skill's files."""


def skill_root() -> Path:
    """The folder holding SKILL.md, references/ and scripts/: the installed copy, else the repo top."""
    package = Path(str(files("strict_loop"))).resolve()
    packaged = package / PACKAGED
    return packaged if (packaged / "SKILL.md").is_file() else package.parent


def hermes_plugin_dir() -> Path:
    """The Hermes plugin (plugin.yaml, __init__.py) that ``strict-loop install hermes`` copies."""
    return skill_root() / "integrations" / "hermes" / "strict-loop"


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
