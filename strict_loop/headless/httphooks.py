"""Claude Code's HTTP hooks for one supervised run: the settings ``claude -p --settings`` takes, the token in the env.

Why: a command hook costs a Python process per tool call (0.1-0.18 s of CPU); an HTTP hook into the workspace's warm
endpoint (``strict_loop.hookd``) costs none. The same entries as ``strict-loop install claude`` writes
(``daemon.claude_http_groups``): the shell gate beside each HTTP hook runs the full hook for a paused task's
PreToolUse and whenever no live endpoint serves the session (down, killed, hung or not yet started); SessionStart
starts the endpoint and registers the session with its task; Stop runs the full hook, as on the command path. The
token reaches Claude Code through the child's environment only (the header names the variable), never its command
line; the record of port and token is the workspace's private one in the person's config folder (made when none).
"""

from __future__ import annotations

import json
import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Optional

from strict_loop.harness import daemon

LOOPBACK = "127.0.0.1"


def claude_settings(program: str, workspace: Path, env: MutableMapping[str, str]) -> Optional[dict[str, Any]]:
    """The ``--settings`` of a supervised Claude Code run with HTTP hooks, the token put into ``env`` (the child's);
    None where they cannot be had (no private runtime folder, no record can be written): command hooks then."""
    folder = daemon.http_dir(workspace, env)
    record = (daemon.read_record(workspace, env) or _new_record(workspace, env)) if folder else None
    if folder is None or record is None:
        return None
    env[daemon.TOKEN_ENV] = record["token"]
    _bypass_proxy(env)
    hooks = daemon.claude_http_groups(program, workspace, folder, record["port"])
    return {"hooks": hooks, "httpHookAllowedEnvVars": [daemon.TOKEN_ENV]}


def _new_record(workspace: Path, env: MutableMapping[str, str]) -> Optional[dict[str, Any]]:
    """Write the workspace's record (0600) unless another process wrote one first; the record in force, or None.

    Linked into place, never renamed over: two supervisors starting at once agree on one token."""
    path = daemon.record_path(workspace, env)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(json.dumps(daemon.new_record(workspace), indent=2) + "\n")
        os.link(tmp, path)
    except FileExistsError:
        pass  # another supervisor's (or an install's): read below
    except OSError:
        return None
    finally:
        tmp.unlink(missing_ok=True)
    return daemon.read_record(workspace, env)


def _bypass_proxy(env: MutableMapping[str, str]) -> None:
    """Claude Code sends the hooks' requests straight to the endpoint, never through a proxy (which would see the
    token, and without which ``hookd session`` would not register the session): loopback joins NO_PROXY."""
    names = ("http_proxy", "https_proxy", "all_proxy")
    if not any(env.get(n) or env.get(n.upper()) for n in names):
        return
    for name in ("NO_PROXY", "no_proxy"):
        listed = [part.strip() for part in env.get(name, "").split(",") if part.strip()]
        if LOOPBACK not in listed and "*" not in listed:
            env[name] = ",".join([*listed, LOOPBACK])
