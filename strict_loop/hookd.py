"""``python -m strict_loop.hookd``: the hook daemons' commands, above every layer (it may use any of them).

    python -m strict_loop.hookd serve WORKSPACE SOCKET | status WORKSPACE   # ``strict-loop hook``'s daemon
    python -m strict_loop.hookd http WORKSPACE           # the endpoint of Claude Code's HTTP hooks for WORKSPACE
    python -m strict_loop.hookd token [WORKSPACE]        # the workspace's hook token, for Claude Code's environment
    python -S .../strict_loop/hookd.py session --workspace DIR   # Claude Code's SessionStart and Stop (event on stdin)

Why an endpoint: an HTTP hook costs no process, but Claude Code goes on when it fails, and a request carries no
environment. So it serves only sessions registered with their environment at SessionStart (no call is under way then)
whose requests carry the workspace's token; the shell gate beside each HTTP hook (``daemon.GATE``) runs the full hook
for every other call and for a paused task's PreToolUse. An answer leaves in one write (apart: ~37 ms, delayed ACK).
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and not __package__:  # run as a file (the thin session command): import this very copy
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Optional  # noqa: E402

POLL_S = 1.0
READ_TIMEOUT_S = 5.0  # a client that does not send its whole request within this is dropped (one served at a time)
MAX_HEAD_BYTES = 16 << 10
MAX_BODY_BYTES = 8 << 20  # ``handler.MAX_STDIN_BYTES``: a bigger event is ignored, as the full hook ignores it
MAX_SESSIONS = 64
START_WAIT_S, PROOF_WAIT_S = 10.0, 1.0
REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 413: "Content Too Large", 415: "Bad Type"}
PROXIES = ("http_proxy", "https_proxy", "all_proxy")


class HttpError(Exception):
    """A request not to serve; ``args[0]``: the status of the answer."""


def start_time(pid: int) -> str:
    """Field 22 of ``/proc/PID/stat`` as the gate reads it (a reused pid: another; a zombie: ""); "-" without /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            fields = file.read().rsplit(b") ", 1)[1].split()
        return "" if fields[0] == b"Z" else fields[19].decode()
    except (OSError, IndexError):
        return "" if os.path.exists("/proc/self/stat") else "-"


def endpoint_pid(folder: Path) -> Optional[int]:
    """The pid of the live endpoint that ``folder/state`` announces, judged as the gate does; None if there is none."""
    try:
        pid_text, started = (folder / "state").read_text().split()
        os.kill(int(pid_text), 0)
    except (OSError, ValueError):
        return None
    return int(pid_text) if start_time(int(pid_text)) == started != "" else None


def read_http(conn: Any) -> tuple[str, str, dict[str, str], bytes]:
    """Method, path, headers (lower-case names) and body of one request; HttpError for one not to serve."""
    data = bytearray()
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk or len(data) > MAX_HEAD_BYTES:
            raise HttpError(400) if chunk else ValueError("closed before the headers ended")
        data += chunk
    head, _, rest = bytes(data).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    pairs = [line.partition(":") for line in lines[1:]]
    headers = {name.strip().lower(): value.strip() for name, _, value in pairs}
    length = headers.get("content-length", "0")
    if len(lines[0].split(" ")) != 3 or not all(p[1] for p in pairs) or not length.isdigit():
        raise HttpError(400)
    if "transfer-encoding" in headers or int(length) > MAX_BODY_BYTES:
        raise HttpError(413 if int(length) > MAX_BODY_BYTES else 400)
    body = bytearray(rest)
    while len(body) < int(length):
        chunk = conn.recv(min(1 << 20, int(length) - len(body)))
        if not chunk:
            raise ValueError("closed before the body ended")
        body += chunk
    method, path, _ = lines[0].split(" ")
    return method, path, headers, bytes(body[: int(length)])


class Endpoint:
    """One workspace's endpoint: its two listening sockets, the sessions it serves, and what it did."""

    def __init__(self, root: Path, folder: Path, record: dict[str, Any], tcp: Any, control: Any) -> None:
        from strict_loop.harness import client, daemon

        self.root, self.folder, self.record, self.tcp, self.control = root, folder, record, tcp, control
        self.sessions: dict[str, dict[str, Any]] = {}  # served: their environment and Claude Code's pid
        self.proofs: set[str] = set()  # sessions whose Stop request came with the token since their last check
        self.served, self.last, self.checked = 0, time.monotonic(), 0.0
        self.idle_s, self.code = daemon.idle_seconds(os.environ), client.code_fingerprint()
        self.base_env = {k: v for k, v in os.environ.items() if k not in client.PER_CALL_ENV}

    def announce(self) -> None:
        """Clear an earlier endpoint's session files, then write ``state``: from now on the gates send calls here."""
        for entry in os.scandir(self.folder):
            if entry.name.split("-", 1)[0].isdigit():
                os.unlink(entry.path)
        (self.folder / "state.new").write_text(f"{os.getpid()} {start_time(os.getpid())}\n")
        os.replace(self.folder / "state.new", self.folder / "state")

    def run(self) -> None:
        import select

        try:
            while not self.should_exit():
                for sock in select.select([self.tcp, self.control], [], [], POLL_S)[0]:
                    try:
                        conn, _ = sock.accept()
                    except OSError:
                        continue
                    with conn:
                        conn.settimeout(READ_TIMEOUT_S)
                        (self.serve_http if sock is self.tcp else self.serve_control)(conn)
                    self.last = time.monotonic()
        finally:
            if endpoint_pid(self.folder) == os.getpid():
                os.unlink(self.folder / "state")
            for session in list(self.sessions):
                self.forget(session)

    def should_exit(self) -> bool:
        """Checked once a second: sessions whose Claude Code ended are let go; then idle (no request for the idle time,
        no session), the loop's folder gone, the record changed (uninstall), the code changed, or ``state`` not ours."""
        from strict_loop.harness import client, daemon

        now = time.monotonic()
        if now - self.checked < POLL_S:
            return False
        self.checked = now
        for session in [s for s, info in self.sessions.items() if not _alive(info["pid"])]:
            self.forget(session)
        idle = now - self.last > self.idle_s and not self.sessions
        if idle or not (self.root / ".agent-loop").is_dir() or endpoint_pid(self.folder) != os.getpid():
            return True
        return daemon.read_record(self.root, os.environ) != self.record or client.code_fingerprint() != self.code

    def serve_http(self, conn: Any) -> None:
        """Answer one request (never raises): 200 with the hook's JSON, ``{}`` when it is not this endpoint's call."""
        try:
            status, body = self.answer(*read_http(conn))
        except HttpError as exc:
            status, body = exc.args[0], "{}"
        except (OSError, ValueError):
            return
        data = body.encode("utf-8", "replace")
        head = f"HTTP/1.1 {status} {REASONS[status]}\r\nContent-Type: application/json\r\nConnection: close\r\n"
        try:  # the whole answer in one write
            conn.sendall(f"{head}Content-Length: {len(data)}\r\n\r\n".encode() + data)
        except OSError:
            return

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str]:
        import hmac

        from strict_loop.harness import daemon

        if method != "POST" or path != daemon.HTTP_PATH:
            return 404, "{}"
        if headers.get("host") != f"127.0.0.1:{self.record['port']}" or "origin" in headers:
            return 403, "{}"  # a browser's request (another origin, or a name rebound to this address)
        if not headers.get("content-type", "").startswith("application/json"):
            return 415, "{}"
        token = headers.get(daemon.TOKEN_HEADER.lower(), "").encode()
        if token and not hmac.compare_digest(token, self.record["token"].encode()):
            return 403, "{}"
        try:
            event = json.loads(body)
        except ValueError:
            event = None
        session, name = (event.get("session_id"), event.get("hook_event_name")) if isinstance(event, dict) else ("", "")
        if token and name == "Stop" and isinstance(session, str) and len(self.proofs) < 4 * MAX_SESSIONS:
            self.proofs.add(session)  # for its session command (the Stop is the full hook's: checks may run long)
        if not token or name == "Stop" or session not in self.sessions:
            if not token and session in self.sessions:
                self.forget(str(session))  # its token does not reach us (a policy's allow-list): its gate takes over
            return 200, "{}"  # a call its gate sends to the full hook too
        if name == "PreToolUse" and _any_paused(self.root):
            return 200, "{}"  # a paused task's calls are decided by the full hook alone
        from strict_loop.harness import handler

        self.served += 1
        env, root = {**self.base_env, **self.sessions[str(session)]["env"]}, str(self.root)
        out = handler.handle("claude", body, workspace=root, env=env, cwd=root, phases=("pre", "post", "prompt"))
        return 200, out or "{}"

    def serve_control(self, conn: Any) -> None:
        """One request of ``hookd session`` (or a status request), one JSON line each way."""
        try:
            request = json.loads(conn.makefile("rb").readline(1 << 20))
            served = {"pid": os.getpid(), "served": self.served, "sessions": len(self.sessions)}
            reply = self.register(request) if request.get("op") == "session" else served
            conn.sendall(json.dumps(reply).encode() + b"\n")
        except (OSError, ValueError, AttributeError, TypeError):
            return

    def register(self, request: dict[str, Any]) -> dict[str, Any]:
        """At SessionStart: serve the session from now on. At Stop (``check``): has its request come with the token
        since the last Stop? If not (``drop``), let it go: its gate sends every call to the full hook."""
        import re

        from strict_loop.harness import registry

        session, env, pid = request.get("session_id"), request.get("env"), request.get("pid")
        valid_env = isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        if not (isinstance(session, str) and re.fullmatch(registry.UUID, session) and valid_env):
            return {"ok": False}
        if request.get("drop"):
            self.forget(session)
        elif request.get("check"):
            proven = session in self.proofs
            self.proofs.discard(session)
            return {"ok": True, "proven": proven, "served": session in self.sessions}
        else:
            if len(self.sessions) >= MAX_SESSIONS and session not in self.sessions:
                self.forget(min(self.sessions, key=lambda s: self.sessions[s]["at"]))
            pid = pid if isinstance(pid, int) and pid > 0 else None
            self.sessions[session] = {"env": env, "pid": pid, "at": time.monotonic()}
            fd = os.open(self.folder / f"{os.getpid()}-{session}", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            os.close(fd)
        return {"ok": True, "served": session in self.sessions}

    def forget(self, session: str) -> None:
        self.proofs.discard(session)
        if self.sessions.pop(session, None) is not None:
            (self.folder / f"{os.getpid()}-{session}").unlink(missing_ok=True)


def _alive(pid: Optional[int]) -> bool:
    try:
        os.kill(pid or os.getpid(), 0)
    except OSError as exc:  # PermissionError: another user's process, alive
        return not isinstance(exc, ProcessLookupError)
    return True


def _any_paused(root: Path) -> bool:
    try:
        with os.scandir(root / ".agent-loop" / "paused") as entries:
            return any(True for _ in entries)
    except OSError:
        return False


def serve(root_arg: str) -> int:
    """Run the endpoint of workspace ``root_arg`` until it exits (see ``Endpoint.should_exit``); 0 always."""
    import signal
    import socket
    import threading

    from strict_loop.harness import daemon

    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    root = Path(os.path.realpath(root_arg))
    record, folder = daemon.read_record(root, os.environ), daemon.http_dir(root, os.environ)
    fd = daemon.hold_lock(folder / "lock") if record and folder and (root / ".agent-loop").is_dir() else None
    if fd is None:
        return 0  # nothing installed here, no safe runtime folder, or another endpoint serves this workspace
    if threading.current_thread() is threading.main_thread():  # (a test runs one in a thread)
        signal.signal(signal.SIGTERM, _exit)
    try:
        daemon.warm_up(root)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp, socket.socket(socket.AF_UNIX) as control:
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                tcp.bind(("127.0.0.1", record["port"]))  # type: ignore[index]
            except OSError:
                return 0  # the port is taken: every call takes the gate's full hook
            tcp.listen(64)
            path = folder / "control.sock"  # type: ignore[operator]
            path.unlink(missing_ok=True)  # we hold the lock: a file left by an endpoint that was killed
            control.bind(os.fspath(path))
            os.chmod(path, 0o600)
            control.listen(16)
            endpoint = Endpoint(root, folder, record, tcp, control)  # type: ignore[arg-type]
            endpoint.announce()
            endpoint.run()
        return 0
    finally:
        os.close(fd)


def _exit(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def ask(folder: Path, request: dict[str, Any], timeout: float = 1.0) -> Optional[dict[str, Any]]:
    """One request to the endpoint's control socket; None when it does not answer."""
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(os.fspath(folder / "control.sock"))
            sock.sendall(json.dumps(request).encode() + b"\n")
            answer = json.loads(sock.makefile("rb").readline(1 << 20))
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


def session(args: list[str]) -> int:
    """SessionStart: start the workspace's endpoint if none runs and register this session. Stop: check that its HTTP
    request arrived with the token, else let it go (or register it with an endpoint new since). Says nothing; 0."""
    import hmac

    from strict_loop.harness import daemon

    try:
        event = json.loads(sys.stdin.buffer.read(MAX_BODY_BYTES) or b"null")
    except (OSError, ValueError):
        return 0
    if not isinstance(event, dict) or args[:1] != ["--workspace"] or len(args) != 2:
        return 0
    root, env = Path(os.path.realpath(args[1])), os.environ
    record = daemon.read_record(root, env) if (root / ".agent-loop").is_dir() else None
    folder = daemon.http_dir(root, env) if record else None
    if record is None or folder is None:
        return 0
    stop, session_id, token = event.get("hook_event_name") == "Stop", event.get("session_id"), env.get(daemon.TOKEN_ENV)
    if not (token and isinstance(session_id, str) and hmac.compare_digest(token.encode(), record["token"].encode())):
        return 0  # without the token its requests are not served: its gates send every call to the full hook
    if any(env.get(n) or env.get(n.upper()) for n in PROXIES) and not _bypassed(env):
        return 0  # a proxy would take Claude Code's requests elsewhere
    if endpoint_pid(folder) is None:
        _spawn(root, env)  # at Stop its request found none: nothing to check, register at its next Stop
        deadline = time.monotonic() + (0 if stop else START_WAIT_S)
        while endpoint_pid(folder) is None and time.monotonic() < deadline:
            time.sleep(0.02)
    pid = env.get("CLAUDE_PID", "")
    request: dict[str, Any] = {"op": "session", "session_id": session_id, "env": session_env(env)}
    request["pid"] = int(pid) if pid.isdigit() else None
    if not stop:
        ask(folder, request)
        return 0
    deadline = time.monotonic() + PROOF_WAIT_S
    while (answer := ask(folder, {**request, "check": True})) and not answer.get("proven") and answer.get("served"):
        if time.monotonic() > deadline:
            ask(folder, {**request, "drop": True})  # its requests do not arrive (a policy's URL allow-list)
            return 0
        time.sleep(0.01)
    if answer and answer.get("proven") and not answer.get("served"):
        ask(folder, request)  # proven to an endpoint started since its SessionStart: served from now on
    return 0


def _bypassed(env: Any) -> bool:
    """NO_PROXY names 127.0.0.1 (or all hosts): Claude Code sends the hooks' requests straight to the endpoint."""
    names = f"{env.get('NO_PROXY', '')},{env.get('no_proxy', '')}".replace(" ", "").split(",")
    return "127.0.0.1" in names or "*" in names


def session_env(env: Any) -> dict[str, str]:
    """What the endpoint needs of a session's environment: the values it masks, the per-call names, alert channels."""
    from strict_loop.base import masking
    from strict_loop.harness import client

    return {k: v for k, v in env.items() if masking.looks_secret(k) or k in client.PER_CALL_ENV}


def _spawn(root: Path, env: Any) -> None:
    import subprocess

    from strict_loop.harness import client

    argv = [sys.executable, "-m", "strict_loop.hookd", "http", os.fspath(root)]
    null, folder = subprocess.DEVNULL, os.path.dirname(os.fspath(client.PACKAGE_DIR))
    try:
        subprocess.Popen(argv, stdin=null, stdout=null, stderr=null, start_new_session=True, cwd=folder, env=dict(env))
    except (OSError, ValueError):
        return


def main(argv: Optional[list[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from strict_loop.harness import daemon

    if args[:1] in (["serve"], ["status"]):
        return daemon.main(args)
    if args[:1] == ["session"]:
        return session(args[1:])
    if len(args) == 2 and args[0] == "http":
        return serve(args[1])
    found = daemon.read_record(args[1] if args[1:] else os.getcwd(), os.environ) if args[:1] == ["token"] else None
    if found is None or len(args) > 2:
        print(__doc__.split("\n\n")[1] + "\n(token: no HTTP hooks are installed in that folder)", file=sys.stderr)
        return 2
    print(found["token"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
