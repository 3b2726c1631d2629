"""Each invocation's private scratch folder (the Hermes home copy with its ``.env``, the usage file), outside the
workspace.

Why not under ``.agent-loop/``: the Hermes home copy carries the person's API keys, and a folder in the repository
outlives a ``kill -9`` there, to be committed, synced or read by the next agent. The scratch lives in the per-user
runtime folder the hook daemon uses (``$XDG_RUNTIME_DIR/strict-loop``, else ``/tmp/strict-loop-<uid>``: a real
directory of ours, mode 0700), named by the supervisor's pid and start time, so that the next supervisor removes the
folders of runs whose process is gone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from strict_loop.harness.client import runtime_dir
from strict_loop.supervisor.lock import alive, process_start

RUNS = "runs"


def runs_dir(env: Mapping[str, str]) -> Optional[Path]:
    """``<runtime>/runs``, mode 0700, or None when no safe runtime folder exists."""
    base = runtime_dir(env)
    if base is None:
        return None
    folder = base / RUNS
    folder.mkdir(mode=0o700, exist_ok=True)
    if folder.is_symlink() or not folder.is_dir():
        return None
    return folder


def new_scratch(env: Mapping[str, str], invocation: int) -> Path:
    """A fresh 0700 folder for one invocation: ``<runtime>/runs/<pid>-<start>-<n>-<random>`` (else a private temp
    folder)."""
    pid = os.getpid()
    prefix = f"{pid}-{process_start(pid) or 'x'}-{invocation:04d}-"
    folder = runs_dir(env)
    return Path(tempfile.mkdtemp(prefix=prefix if folder else f"strict-loop-{os.getuid()}-{prefix}", dir=folder))


def sweep(env: Mapping[str, str]) -> list[str]:
    """Remove the scratch folders of runs whose supervisor is gone (a ``kill -9`` leaves them); their names."""
    folder = runs_dir(env)
    if folder is None:
        return []
    removed = []
    for entry in os.scandir(folder):
        pid, _, rest = entry.name.partition("-")
        start = rest.partition("-")[0]
        if not pid.isdigit():
            continue
        if not alive({"pid": int(pid), "start": None if start == "x" else start}):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
            removed.append(entry.name)
    return removed
