"""The hook's side of the per-workspace hook daemon (``harness.daemon``): where its socket lives, and one request to it.

Why: a harness starts ``strict-loop hook`` as a new process for every tool call, and
recording a turn needs pydantic and the detector (hundreds of milliseconds to import).
A daemon that already imported them answers in a few milliseconds; this module asks it,
with the standard library only. The rules that keep this safe:

- the socket lives in a per-user runtime folder that must be a real directory owned by
  us with no group/other permission bits (else there is no daemon: the hook works in-process);
- its name is a digest of the workspace's real path, of the code (version, interpreter,
  each module's mtime and size), so an upgraded or edited package never talks to an old daemon,
  and of the environment the daemon works with (the secrets it masks, the alert channels, the
  config folder): the daemon, started with the hook's environment, has it already, so a request
  carries none of it, only the two per-session names of ``PER_CALL_ENV``;
- a paused task's tool calls never come here (``handler``): whatever listens on the socket, it
  cannot let a call through the pause;
- a request is committed only after the daemon confirmed it has all of it and we said go:
  before that, any failure means the hook handles the event itself; after it, it says nothing
  (the daemon may have recorded the turn: never record it twice).
"""

from __future__ import annotations

import _socket  # the C module under ``socket``: the same calls, without ~4 ms of enum set-up on every hook call
import json
import os
import stat
import struct
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from strict_loop.base import masking

try:
    from _blake2 import blake2b  # hashlib's own blake2b, without loading OpenSSL: a few ms on every hook call
except ImportError:  # pragma: no cover (an interpreter built without it)
    from hashlib import blake2b

IDLE_ENV = "STRICT_LOOP_HOOKD_IDLE"
CONNECT_TIMEOUT_S = 0.25
ACK_TIMEOUT_S = 3.0
"""How long a hook waits for the daemon to take its request (it serves one at a time) before doing the work itself."""
ANSWER_TIMEOUT_S = 40.0
"""After the go: the daemon may wait up to 20 s for the task lock, as the in-process hook would."""
MAX_SOCKET_PATH = 107
HEADER = struct.Struct("!II")
"""Request framing: the lengths of the JSON header and of the payload bytes that follow it."""
ACK, GO = b"A", b"G"
MAX_HEADER_BYTES = 1 << 20
PACKAGE_DIR = Path(__file__).resolve().parent.parent  # strict_loop/
PER_CALL_ENV = ("STRICT_LOOP_TASK", "STRICT_LOOP_SUPERVISOR")
"""The only variables a request carries (the task a session works on, whether a supervisor runs it): no secret."""


def runtime_dir(env: Mapping[str, str], create: bool = True) -> Optional[Path]:
    """``$XDG_RUNTIME_DIR/strict-loop`` (else ``/tmp/strict-loop-<uid>``) if it is safe to use, else None.

    Safe: a real directory (not a link), owned by our uid, with no group or other permission bits;
    in a shared /tmp another user could otherwise plant a socket that answers our tool calls.
    """
    base = env.get("XDG_RUNTIME_DIR", "").strip()
    folder = Path(base) / "strict-loop" if base and os.path.isabs(base) else Path(f"/tmp/strict-loop-{os.getuid()}")
    try:
        if create:
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                pass
        info = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


def code_fingerprint() -> str:
    """The package version, the environment and Python version, and every module's mtime and size: a changed file is a
    new daemon."""
    from strict_loop import __version__

    parts = [__version__, sys.prefix, sys.version]  # not sys.executable: python and python3 are one interpreter
    folders: list[str | Path] = [PACKAGE_DIR]
    while folders:  # the package and its subpackages
        with os.scandir(folders.pop()) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    parts.append(f"{entry.path}:{info.st_mtime_ns}:{info.st_size}")
                elif entry.is_dir(follow_symlinks=False) and not entry.name.startswith(("_", ".")):
                    folders.append(entry.path)
    return "\n".join(parts)


def socket_path(root: Path, env: Mapping[str, str], create: bool = True) -> Optional[Path]:
    """The daemon socket of workspace ``root`` for this code and this user configuration, or None (no safe folder,
    or a path too long for AF_UNIX)."""
    folder = runtime_dir(env, create)
    if folder is None:
        return None
    # HOME and XDG_CONFIG_HOME too: the daemon reads the machine's records (trust, snapshot stores) under its own
    key = "\0".join(
        [os.path.realpath(root), code_fingerprint(), env.get("HOME", ""), env.get("XDG_CONFIG_HOME", "")]
        + environment_key(env)
    )
    digest = blake2b(key.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    path = folder / f"{digest}.sock"
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None


def environment_key(env: Mapping[str, str]) -> list[str]:
    """What of ``env`` the daemon uses from its own environment: every variable whose value is masked as a secret (the
    project's own: alert channels, the page's URL), but the per-call names and the hook's own settings."""
    skip = {*PER_CALL_ENV, *masking.AGENT_KEEPS}
    return sorted(f"{k}={v}" for k, v in env.items() if masking.looks_secret(k) and k.upper() not in skip)


def request_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment a request carries: ``PER_CALL_ENV`` only."""
    return {name: env[name] for name in PER_CALL_ENV if name in env}


def encode_request(header: dict[str, Any], payload: bytes) -> bytes:
    head = json.dumps(header).encode()  # ASCII: an environment value that is not valid UTF-8 travels as \u escapes
    return HEADER.pack(len(head), len(payload)) + head + payload


class NotServed(Exception):
    """The daemon did not take the request: the hook does the work itself."""


class Unanswered(Exception):
    """The daemon took the request and then failed (died, timed out): the work may or may not be done."""


ANSWERED = b"A"
"""The daemon's first byte after a request it handled: an empty answer is then a real 'nothing to say', never a
daemon that died (a hook must tell the two apart while a task is paused)."""


def ask(path: Path, header: dict[str, Any], payload: bytes) -> str:
    """The daemon's answer to one request; NotServed if it never took it, Unanswered if it failed after taking it."""
    try:
        request = encode_request(header, payload)
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except (OSError, ValueError) as exc:
        raise NotServed(str(exc)) from None
    try:
        try:
            sock.settimeout(CONNECT_TIMEOUT_S)
            sock.connect(os.fspath(path))
            sock.settimeout(ACK_TIMEOUT_S)
            sock.sendall(request)
            if read_exactly(sock, 1) != ACK:
                raise NotServed("no acknowledgement")
            sock.sendall(GO)
        except OSError as exc:  # refused, missing, timed out, reset: the daemon has not started on this request
            raise NotServed(str(exc)) from None
        try:  # committed: from here on, a failure is Unanswered (the caller decides: silence, or refuse while paused)
            sock.settimeout(ANSWER_TIMEOUT_S)
            data = _read_all(sock)
        except OSError as exc:
            raise Unanswered(str(exc)) from None
        if not data.startswith(ANSWERED):
            raise Unanswered("the daemon ended before answering")
        return data[len(ANSWERED) :].decode("utf-8", "replace")
    finally:
        sock.close()


def read_exactly(sock: _socket.socket, count: int) -> bytes:
    data = bytearray()
    while len(data) < count:
        chunk = sock.recv(min(count - len(data), 1 << 20))
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _read_all(sock: _socket.socket, cap: int = 16 << 20) -> bytes:
    chunks, size = [], 0
    while size <= cap:
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def spawn(root: Path, path: Path, env: Mapping[str, str]) -> None:
    """Start the workspace's daemon, detached, with the hook's environment ``env``, for the next calls (two racing
    hooks may start two: one exits).

    It runs from this package's parent folder, so ``-m`` imports this very code; it serves only if
    it computes the same socket ``path`` (else it would wait, unasked, behind a name nobody knows).
    """
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "strict_loop.harness.daemon", "serve", os.fspath(root), os.fspath(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            cwd=PACKAGE_DIR.parent,
            env=dict(env),
        )
    except (OSError, ValueError):  # ValueError: a value Popen refuses (an embedded NUL)
        return
