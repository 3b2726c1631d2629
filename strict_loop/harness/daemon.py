"""The per-workspace hook daemon: answers ``strict-loop hook`` tool events with its heavy modules already imported.

Started detached by a hook that found none (``client.spawn``), it serves one
workspace for one version of the code, one connection at a time, through the same
``handler.handle`` (and so the same task lock) as an in-process hook. It exits after an
idle period (``STRICT_LOOP_HOOKD_IDLE`` seconds, default 600), when the workspace's
``.agent-loop/`` is gone, or when its socket file is removed or replaced. Stop events
never come here: their checks may run for minutes and would hold up every tool hook.

Also here, for install and ``strict_loop.hookd``: what Claude Code's HTTP hooks need (record, runtime folder, entries).

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
            return client.code_fingerprint() != self.code or os.lstat(self.path).st_ino != self.inode
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
            harness, payload, workspace=str(self.root), env=call_env(sent), cwd=cwd, phases=("pre", "post", "prompt")
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


def hold_lock(path: Path) -> Optional[int]:
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


def idle_seconds(env: Any) -> float:
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
    fd = hold_lock(lock_path)
    if fd is None:
        return 0
    signal.signal(signal.SIGTERM, _exit)  # a plain kill cleans up too: the finally clauses below run
    try:
        warm_up(root)  # before the socket appears: until then hooks work in-process rather than wait
        listener = _listen(path)
        if listener is None:
            return 0
        with listener:
            inode = os.lstat(path).st_ino
            try:
                Daemon(root, path, idle_seconds(os.environ), listener, inode).run()
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


def warm_up(root: Path) -> None:
    """Import what recording a turn needs now, so the first request pays nothing for it; and, once per daemon (never per
    hook call), let the person's page find the workspace and export its spooled events when so configured."""
    from strict_loop.alerts import channels
    from strict_loop.harness import handler
    from strict_loop.loop import monitoring, recording  # monitoring: the alert of a pause
    from strict_loop.monitor import ladder
    from strict_loop.storage import workspaces
    from strict_loop.telemetry import export

    del channels, handler, ladder, recording, monitoring
    workspaces.remember(root)
    export.start(root)


# ---------------------------------------------------------------- Claude Code's HTTP hooks (``strict_loop.hookd``)
# Per workspace: a record (port, token) in the person's config folder; in the settings, an HTTP hook beside a shell
# gate per tool and prompt event; the endpoint's runtime folder: ``state`` ("pid start-time") and an empty
# "<pid>-<session>" per session it serves (registered at its SessionStart, when none of its calls is under way).

TOKEN_ENV = "STRICT_LOOP_HOOK_TOKEN"  # Claude Code puts it in the token header (``httpHookAllowedEnvVars``)
TOKEN_HEADER = "X-Strict-Loop-Token"
HTTP_PATH = "/strict-loop/hook/claude"
GATE_NAME = "strict-loop-gate"
GATE = """k=$1 m=$2 d=$3 c=$CLAUDE_CODE_SESSION_ID
shift 3
if [ "$k" = pre ]; then for f in "$m"/paused/*; do [ -e "$f" ] && exec "$@"; done; fi
same() { set -- "$1" ${2##*") "}; [ "$1" = "${21}" ] && [ "$2" != Z ]; }
if [ -n "$c" ] && { read -r p s < "$d/state"; } 2>/dev/null && [ -e "$d/$p-$c" ]; then
  if [ -e /proc/self/stat ]; then { read -r x < "/proc/$p/stat"; } 2>/dev/null && same "$s" "$x" && exit 0
  elif kill -0 "$p" 2>/dev/null; then exit 0
  fi
fi
exec "$@"
"""
"""The command beside each HTTP hook, POSIX sh builtins only: the full hook (its arguments after ``$1`` pre or post,
``$2`` the ``.agent-loop`` folder, ``$3`` the runtime folder) runs for a PreToolUse while a task is paused
(``TaskPaths.pause_flag``) and whenever no live endpoint (pid and start time; a zombie is dead) serves the session."""


def http_key(root: str | os.PathLike[str]) -> str:
    """The name of a workspace's record and runtime folder: a digest of its real path."""
    return client.blake2b(os.fsencode(os.path.realpath(root)), digest_size=8).hexdigest()  # hashlib's, no OpenSSL


def record_path(root: str | os.PathLike[str], env: Any) -> Path:
    """``<person's config folder>/hook-http/<key>.json`` (``snapstore.user_config_dir``, for ``env``)."""
    base = env.get("XDG_CONFIG_HOME", "")
    home = Path(base) if os.path.isabs(base) else Path(env.get("HOME") or Path.home()) / ".config"
    return home / "strict-loop" / "hook-http" / f"{http_key(root)}.json"


def read_record(root: str | os.PathLike[str], env: Any) -> Optional[dict[str, Any]]:
    """The workspace's port and token, when its record is ours (a regular file of our uid, private) and whole."""
    path = record_path(root, env)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            ours = info.st_uid == os.getuid() and not info.st_mode & 0o077 and (info.st_mode & 0o170000) == 0o100000
            data = json.loads(file.read(4096)) if ours else None
    except (OSError, ValueError):
        return None
    port, token = (data.get("port"), data.get("token")) if isinstance(data, dict) else (None, None)
    good = isinstance(port, int) and 1024 <= port < 65536 and isinstance(token, str) and len(token) >= 32
    return {"workspace": os.path.realpath(root), "port": port, "token": token} if good else None


def new_record(root: str | os.PathLike[str]) -> dict[str, Any]:
    """A fresh record: a port free now on 127.0.0.1 (the endpoint binds it later) and a random token."""
    import secrets

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return {"workspace": os.path.realpath(root), "port": probe.getsockname()[1], "token": secrets.token_hex(32)}


def http_dir(root: str | os.PathLike[str], env: Any, create: bool = True) -> Optional[Path]:
    """The endpoint's runtime folder (in ``client.runtime_dir``), private to us; None where there is no safe one."""
    base = client.runtime_dir(env, create)
    if base is None:
        return None
    folder = Path(base) / f"http-{http_key(root)}"
    try:
        if create and not os.path.lexists(folder):
            os.mkdir(folder, 0o700)
        info = os.lstat(folder)
    except OSError:
        return None
    safe = (info.st_mode & 0o170000) == 0o040000 and info.st_uid == os.getuid() and not info.st_mode & 0o077
    return folder if safe else None


def http_install(program: str, workspace: Path, wanted: bool, env: Any) -> tuple[Optional[str], Optional[Groups], str]:
    """For ``strict-loop install claude``: the workspace's record as it will be (its text; kept when there is one, made
    on a first install, None without HTTP hooks), Claude Code's hook groups (None: command hooks) and what to say."""
    folder = http_dir(workspace, env) if wanted else None
    record = (read_record(workspace, env) or new_record(workspace)) if folder else None
    if record is None or folder is None:
        return None, None, "Command hooks were written: HTTP hooks need a private runtime folder." if wanted else ""
    token = f'export {TOKEN_ENV}="$({sys.executable} -m strict_loop.hookd token {workspace})"'
    said = (
        f"Claude Code's hooks reach this workspace's warm hook daemon over HTTP (no process per tool call) in sessions "
        f"started with its token: `{token}`; other sessions take the command hooks (--hooks command: only those)."
    )
    text = json.dumps(record, indent=2) + "\n"
    return text, claude_http_groups(program, workspace, folder, record["port"]), said


Groups = dict[str, list[dict[str, Any]]]  # a settings file's ``hooks``


def claude_http_groups(program: str, root: Path, folder: Path, port: int) -> Groups:
    """The ``hooks`` of a Claude Code settings file that reach the workspace's endpoint (runtime ``folder``, ``port``):
    per tool or prompt event the gate and the HTTP hook; SessionStart and Stop run ``hookd session``, Stop also the
    full hook, as always, and the HTTP hook that proves there that the session's requests reach the endpoint."""
    import shlex

    full = client.hook_words(program, "claude", root)
    headers = {TOKEN_HEADER: "${" + TOKEN_ENV + "}"}
    web = {"type": "http", "url": f"http://127.0.0.1:{port}{HTTP_PATH}", "timeout": registry.TOOL_TIMEOUT_S}
    web["headers"] = headers
    web["allowedEnvVars"] = [TOKEN_ENV]
    hookd = ["-S", os.path.join(client.PACKAGE_DIR, "hookd.py"), "session", "--workspace", str(root)]
    session = {"type": "command", "command": sys.executable, "args": hookd, "timeout": 15}
    out: dict[str, list[dict[str, Any]]] = {"SessionStart": [{"hooks": [session]}]}  # no HTTP hook runs there
    for event, matcher, timeout in registry.get("claude").hook_events:
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        if event in ("Stop", "Notification"):  # a notification is rare, and its command has the session's channels
            out[event] = [{**group, "hooks": [{"type": "command", "command": shlex.join(full), "timeout": timeout}]}]
            out[event][0]["hooks"] += [session, web] if event == "Stop" else []
            continue
        kind = "pre" if event == "PreToolUse" else "post"
        gate = ["-c", GATE, GATE_NAME, kind, str(root / ".agent-loop"), str(folder), *full]
        out[event] = [{**group, "hooks": [{"type": "command", "command": "/bin/sh", "args": gate, "timeout": timeout}]}]
        out[event][0]["hooks"].append(web)
    return out


def is_our_handler(handler: Any, harness: str) -> bool:
    """Whether a settings file's hook handler is one ``claude_http_groups`` writes (any port, copy or interpreter)."""
    if not isinstance(handler, dict):
        return False
    url, args = handler.get("url"), handler.get("args")
    if handler.get("type") == "http":
        return isinstance(url, str) and url.startswith("http://127.0.0.1:") and url.endswith(HTTP_PATH)
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        return False
    if args[2:3] == [GATE_NAME]:
        return client.is_hook_words(args[6:], harness)
    return harness == "claude" and args[2:3] == ["session"] and args[1].endswith("hookd.py")


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
