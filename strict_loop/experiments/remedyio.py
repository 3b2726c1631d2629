"""What a remedy does outside the job's variables: wait, empty the cache folder, find the newest checkpoint.

Why apart from ``watch``: these are the only places a watch touches files the job owns, and each must stay inside
the workspace and never follow a symbolic link; ``watch`` runs the job and records what happened.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path
from typing import IO, Optional

from strict_loop.base.interrupts import StopSignals
from strict_loop.experiments.remedies import Decision, WatchSettings


def apply(
    decision: Decision,
    settings: WatchSettings,
    root: Path,
    signals: StopSignals,
    stream: IO[str],
    deadline: Optional[float] = None,
) -> Optional[str]:
    """Do what the remedy needs outside the job's variables (wait, empty the cache); a problem escalates.

    A wait ends at ``deadline`` (``--timeout-s`` bounds the whole watch, waits included)."""
    print(f"[watch] remedy {decision.remedy}: {decision.reason}", file=stream, flush=True)
    if decision.remedy == "wait-retry":
        left = decision.wait_s if deadline is None else min(decision.wait_s, deadline - time.monotonic())
        signals.sleep(max(0.0, left))
    if decision.remedy == "clear-cache":
        assert settings.cache_dir is not None
        folder = own_dir(root, settings.cache_dir)
        if folder is None:
            return (
                f"clear-cache refused: {settings.cache_dir} is not a real folder inside the workspace (a "
                "link, or missing)"
            )
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)  # never follows links (fd-based on Linux)
            else:
                os.unlink(entry.path)
    return None


def own_dir(root: Path, rel: str) -> Optional[Path]:
    """``rel`` under ``root`` when every part of it is a real folder (no symbolic link on the way)."""
    path = root
    for part in Path(rel).parts:
        path = path / part
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return None
        except OSError:
            return None
    return path


def newest_checkpoint(root: Path, rel: Optional[str]) -> Optional[str]:
    """The newest file or folder (no links) in the checkpoint folder ``rel``, workspace-relative, or None."""
    if not rel:
        return None
    folder = own_dir(root, rel)
    if folder is None:
        return None
    found = []
    for entry in os.scandir(folder):
        if not entry.is_symlink() and (entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False)):
            found.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
    return f"{rel.rstrip('/')}/{max(found)[1]}" if found else None
