"""The supervisor's per-run wiring, hardened (issue 19): what a run may write, what its child gets, what it keeps.

Fast: the harness is a fake (a Python script, or only the wiring is built); the real harnesses are in
test_supervisor_e2e.py.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from strict_loop.harness import headless


def _tree_digest(root: Path) -> dict[str, str]:
    """Every regular file under ``root`` (links followed) by relative path, with its bytes' digest."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _dotfiles_home(tmp_path: Path) -> tuple[Path, Path]:
    """A HOME whose ~/.hermes/config.yaml and plugins/ are links into a dotfiles checkout (HOME, dotfiles)."""
    home, dots = tmp_path / "home", tmp_path / "dotfiles"
    (dots / "plugins" / "theirs").mkdir(parents=True)
    (dots / "plugins" / "theirs" / "plugin.yaml").write_text("name: theirs\n")
    (dots / "plugins" / "strict-loop").mkdir()  # an old install of ours: the copy replaces it, never the original
    (dots / "plugins" / "strict-loop" / "__init__.py").write_text("# the user's own\n")
    (dots / "config.yaml").write_text("model: x\nplugins:\n  enabled: [theirs]\n")
    (home / ".hermes").mkdir(parents=True)
    (home / ".hermes" / "config.yaml").symlink_to(dots / "config.yaml")
    (home / ".hermes" / "plugins").symlink_to(dots / "plugins", target_is_directory=True)
    (home / ".hermes" / ".env").write_text("OPENAI_API_KEY=sk-test-123456\n")
    return home, dots


def test_the_hermes_home_copy_never_writes_through_the_users_links(tmp_path: Path):
    home, dots = _dotfiles_home(tmp_path)
    before = _tree_digest(dots)
    ws, scratch = tmp_path / "ws", tmp_path / "scratch"
    ws.mkdir()
    scratch.mkdir()
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    wiring = headless.wire("hermes", sys.executable, "do it", ws, "t", scratch, env=env)
    copy = Path(wiring.env["HERMES_HOME"])
    assert _tree_digest(dots) == before  # the real config and plugins are byte-identical
    assert not any(p.is_symlink() for p in copy.rglob("*"))  # real copies: nothing in it leads back
    assert "strict-loop" in (copy / "config.yaml").read_text() and "model: x" in (copy / "config.yaml").read_text()
    assert (copy / "plugins" / "theirs" / "plugin.yaml").read_text() == "name: theirs\n"
    wiring.cleanup()
    assert _tree_digest(dots) == before and (home / ".hermes" / "config.yaml").is_symlink()
