"""This machine's person key for tests that answer a pause through the CLI without a terminal.

``strict-loop resume`` answers at a terminal or with ``--person-key FILE`` (issue 25, item 2); a test's
``$XDG_CONFIG_HOME`` is its own (conftest), so each test gets a key of its own, made on first use.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def person_key() -> str:
    """The path of this test's person key (``$XDG_CONFIG_HOME/strict-loop/person.key``, mode 0600)."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "strict-loop" / "person.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(32) + "\n")
    return str(path)
