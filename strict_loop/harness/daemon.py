"""The per-workspace hook daemon: answers ``strict-loop hook`` tool events with its heavy modules already imported.

Started detached by a hook that found none (``client.spawn``), it serves one
workspace for one version of the code, one connection at a time, through the same
``handler.handle`` (and so the same task lock) as an in-process hook. It exits after an
idle period (``STRICT_LOOP_HOOKD_IDLE`` seconds, default 600), when the workspace's
``.agent-loop/`` is gone, or when its socket file is removed or replaced. Stop events
never come here: their checks may run for minutes and would hold up every tool hook.

    python -m strict_loop.harness.daemon serve WORKSPACE SOCKET   # what a hook starts
    python -m strict_loop.harness.daemon status WORKSPACE         # the daemon's pid and the requests it served, as JSON
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from strict_loop.harness import client, registry
from strict_loop.harness.client import ACK, GO, HEADER, MAX_HEADER_BYTES

DEFAULT_IDLE_S = 600.0
POLL_S = 1.0
REQUEST_TIMEOUT_S = 5.0
"""A client that does not finish sending its request, or does not say go, within this is dropped."""
MAX_PAYLOAD_BYTES = (8 << 20) + 1
"""What a hook reads from stdin at most (``handler.MAX_STDIN_BYTES`` + 1: one more byte says "too big")."""


@dataclass
class Daemon:
    """One workspace's daemon: its listening socket, the socket file's inode, and what it has done."""

    root: Path
    path: Path
    idle_s: float
    listener: socket.socket
    inode: int
    served: int = 0
    last: float = field(default_factory=time.monotonic)
    code: str = field(default_factory=client.code_fingerprint)

    def should_exit(self) -> bool:
        """Idle too long, the workspace's loop folder gone, our socket file removed or replaced, or the code changed
        (hooks then ask a daemon of the new code: this one would only wait out its idle time)."""
        if time.monotonic() - self.last > self.idle_s or not (self.root / ".agent-loop").is_dir():
            return True
        try:
            if client.code_fingerprint() != self.code:
                return True
        except OSError:
            return True
        try:
            return os.lstat(self.path).st_ino != self.inode
        except OSError:
            return True

    def run(self) -> None:
        self.listener.settimeout(POLL_S)
        while not self.should_exit():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:  # socket.timeout
                continue
            with conn:
                self.serve(conn)
            self.last = time.monotonic()

    def serve(self, conn: socket.socket) -> None:
        """Take one request (ack, wait for go), answer it; never raises."""
        try:
            conn.settimeout(REQUEST_TIMEOUT_S)
            header, payload = read_request(conn)
            conn.sendall(ACK)
            if client.read_exactly(conn, 1) != GO:
                return  # the hook gave up before committing: it handles the event itself
        except (OSError, ValueError):
            return
        try:
            data = self.answer(header, payload).encode()  # text the hook could not print either (a lone surrogate): ''
        except Exception:  # noqa: BLE001 (handler.handle logs its own errors; anything else must not end the daemon)
            data = b""
        try:
            conn.sendall(client.ANSWERED + data)
        except OSError:
            return

    def answer(self, header: dict[str, Any], payload: bytes) -> str:
        if header.get("op") == "status":
            return json.dumps({"pid": os.getpid(), "served": self.served, "workspace": str(self.root)})
        from strict_loop.harness import handler

        sent, cwd, harness = header.get("env"), header.get("cwd"), header.get("harness")
        if not (isinstance(sent, dict) and isinstance(cwd, str) and harness in registry.names()):
            return ""
        if os.path.realpath(str(header.get("workspace"))) != str(self.root):
            return ""  # not our workspace: a name clash a 128-bit digest does not produce
        self.served += 1
        return handler.handle(
            harness, payload, workspace=str(self.root), env=call_env(sent), cwd=cwd, phases=("pre", "post")
        )


def call_env(sent: dict[str, Any]) -> dict[str, str]:
    """The environment a request is handled with: ours (the hook's that started us: the socket's name says it holds
    the same secrets and channels), with the per-call names of the request (``client.PER_CALL_ENV``), nothing else."""
    env = {k: v for k, v in os.environ.items() if k not in client.PER_CALL_ENV}
    env.update({k: v for k, v in sent.items() if k in client.PER_CALL_ENV and isinstance(v, str)})
    return env


def read_request(conn: socket.socket) -> tuple[dict[str, Any], bytes]:
    """The header (a JSON object) and the payload bytes of one request; ValueError if it is malformed."""
    head = client.read_exactly(conn, HEADER.size)
    if len(head) != HEADER.size:
        raise ValueError("short request")
    head_len, payload_len = HEADER.unpack(head)
    if head_len > MAX_HEADER_BYTES or payload_len > MAX_PAYLOAD_BYTES:
        raise ValueError("request too large")
    raw = client.read_exactly(conn, head_len)
    payload = client.read_exactly(conn, payload_len)
    if len(raw) != head_len or len(payload) != payload_len:
        raise ValueError("short request")
    header = json.loads(raw)
    if not isinstance(header, dict):
        raise ValueError("header is not an object")
    return header, payload


def _lock(path: Path) -> Optional[int]:
    """Hold ``<socket>.lock`` exclusively (it records our pid), or None if another daemon holds it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino != os.lstat(path).st_ino:
            raise OSError("the lock file was replaced")  # its last holder removed it as we opened it
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd
    except OSError:
        os.close(fd)
        return None


def _listen(path: Path) -> Optional[socket.socket]:
    """Bind the socket, first removing a stale file nobody answers on; None if a live daemon answers there."""
    if os.path.lexists(path):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(os.fspath(path))
            return None
        except OSError:
            os.unlink(path)
        finally:
            probe.close()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.fspath(path))
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener


def _idle_seconds(env: Any) -> float:
    try:
        value = float(env.get(client.IDLE_ENV, DEFAULT_IDLE_S))
    except ValueError:
        return DEFAULT_IDLE_S
    return value if value > 0 else DEFAULT_IDLE_S


def serve(root_arg: str, path_arg: str) -> int:
    """Run the daemon of workspace ``root_arg`` on socket ``path_arg`` until one of its exit conditions."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    root = Path(os.path.realpath(root_arg))
    path = client.socket_path(root, os.environ)
    if path is None or os.fspath(path) != path_arg or not (root / ".agent-loop").is_dir():
        return 0  # another version of the code, or an unsafe runtime folder: nobody would find this daemon
    lock_path = path.with_suffix(".lock")
    fd = _lock(lock_path)
    if fd is None:
        return 0
    signal.signal(signal.SIGTERM, _exit)  # a plain kill cleans up too: the finally clauses below run
    try:
        _warm_up()  # before the socket appears: until then hooks work in-process rather than wait
        from strict_loop.storage import workspaces  # standard library only; once per daemon, never per hook call

        workspaces.remember(root)  # the person's page finds a workspace whose hooks record
        from strict_loop.telemetry import export

        export.start(root)  # the spooled events of this workspace, exported in the background when configured
        listener = _listen(path)
        if listener is None:
            return 0
        with listener:
            inode = os.lstat(path).st_ino
            try:
                Daemon(root, path, _idle_seconds(os.environ), listener, inode).run()
            finally:
                if _same_inode(path, inode):  # not a successor's socket
                    os.unlink(path)
        return 0
    finally:
        if _same_inode(lock_path, os.fstat(fd).st_ino):
            os.unlink(lock_path)
        os.close(fd)


def _exit(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _same_inode(path: Path, inode: int) -> bool:
    try:
        return os.lstat(path).st_ino == inode
    except OSError:
        return False


def _warm_up() -> None:
    """Import what recording a turn needs now, so the first request pays nothing for it."""
    from strict_loop.alerts import channels
    from strict_loop.harness import handler
    from strict_loop.loop import (
        monitoring,  # alerts: on a pause
        recording,
    )
    from strict_loop.monitor import ladder

    del channels, handler, ladder, recording, monitoring


def status(root_arg: str) -> Optional[dict[str, Any]]:
    """The daemon of this workspace and code: its pid and the requests it served, or None if none answers."""
    path = client.socket_path(Path(os.path.realpath(root_arg)), os.environ, create=False)
    if path is None:
        return None
    try:
        return json.loads(client.ask(path, {"op": "status"}, b"") or "null")
    except (client.NotServed, client.Unanswered, ValueError):
        return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 3 and args[0] == "serve":
        return serve(args[1], args[2])
    if len(args) == 2 and args[0] == "status":
        found = status(args[1])
        print(json.dumps(found))
        return 0 if found else 1
    print(__doc__.split("\n\n")[-1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
