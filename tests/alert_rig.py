"""Real receivers for alert tests: an HTTP server (ok, 500 or hanging per path), miniircd, and an IRC client."""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from strict_loop.alerts import outbox

FAST = {"STRICT_LOOP_ALERT_ATTEMPTS": "3", "STRICT_LOOP_ALERT_BACKOFF": "0.05", "STRICT_LOOP_ALERT_TIMEOUT": "1"}
STUCK = {"tool": "bash", "args": {"command": "cd fastxml/"}, "output": "No such file or directory", "error": True}


class Receiver(ThreadingHTTPServer):
    """POSTs to ``/ok/...`` get 200, ``/fail/...`` 500, ``/hang/...`` wait until ``release`` is set."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received: list[dict] = []
        self.release = threading.Event()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_port}{path}"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.received.append({"path": self.path, "body": body})
        if self.path.startswith("/hang"):
            self.server.release.wait(10)
        self.send_response(500 if self.path.startswith("/fail") else 200)
        self.end_headers()

    def log_message(self, *args):
        pass


@contextmanager
def receiver() -> Iterator[Receiver]:
    """A Receiver serving in a thread; polled often, so that it stops at once (the default 0.5 s was a second of
    every alert test's time, spent waiting for ``shutdown``)."""
    server = Receiver()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def self_signed(folder: Path) -> tuple[Path, Path]:
    """(cert, key) for 127.0.0.1, made by the openssl command line tool."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@contextmanager
def irc_server(tls: tuple[Path, Path] | None = None) -> Iterator[int]:
    """miniircd (the ``test`` extra installs it) on 127.0.0.1, over TLS with ``tls`` (cert, key); yields its port."""
    port = free_port()
    binary = shutil.which("miniircd", path=str(Path(sys.executable).parent)) or shutil.which("miniircd")
    assert binary, "miniircd is missing: python3 -m pip install -e '.[test]'"
    as_root = ["--setuid", "root"] if os.geteuid() == 0 else []  # miniircd refuses root unless told (CI runs as root)
    ssl_args = ["--ssl-cert-file", str(tls[0]), "--ssl-key-file", str(tls[1])] if tls else []
    proc = subprocess.Popen(
        [binary, "--listen", "127.0.0.1", "--ports", str(port), *as_root, *ssl_args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _connects(port), 10, "miniircd to listen")
        yield port
    finally:
        proc.kill()
        proc.wait()


def _connects(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


class IrcWatcher:
    """A person's IRC client joined to ``channel``: collects the NOTICEs said there."""

    def __init__(self, port: int, channel: str, nick: str = "ori", cafile: Path | None = None) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if cafile is not None:
            self.sock = ssl.create_default_context(cafile=str(cafile)).wrap_socket(
                self.sock, server_hostname="127.0.0.1"
            )
        self.buf, self.channel = b"", channel
        self.notices: list[tuple[str, str]] = []
        self._send(f"NICK {nick}", f"USER {nick} 0 * :{nick}")
        self._until(lambda cmd, parts: cmd == "001")
        self._send(f"JOIN {channel}")
        self._until(lambda cmd, parts: cmd == "366")  # end of NAMES: we are in

    def _send(self, *lines: str) -> None:
        self.sock.sendall("".join(f"{line}\r\n" for line in lines).encode())

    def _until(self, done: Callable[[str, list[str]], bool]) -> None:
        while True:
            while b"\r\n" not in self.buf:
                chunk = self.sock.recv(4096)
                assert chunk, "the IRC server closed the connection"
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\r\n", 1)
            line = raw.decode(errors="replace")
            prefix, _, rest = line.partition(" ") if line.startswith(":") else ("", "", line)
            head, _, trailing = rest.partition(" :")
            parts = head.split() + ([trailing] if trailing else [])
            if parts and parts[0] == "PING":
                self._send(f"PONG :{parts[-1]}")
            elif len(parts) >= 3 and parts[0] == "NOTICE" and parts[1] == self.channel:
                self.notices.append((prefix.lstrip(":").split("!")[0], parts[2]))
            if parts and done(parts[0], parts):
                return

    def wait_notices(self, count: int) -> list[tuple[str, str]]:
        self._until(lambda cmd, parts: len(self.notices) >= count)
        return self.notices

    def close(self) -> None:
        self.sock.close()


def wait_until(check: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def settled(alerts_path: Path, timeout: float = 15) -> list[dict]:
    """The folded alerts once no channel is pending any more and the worker is done with them.

    The worker records a channel's outcome in alerts.jsonl before it removes the alert from this machine's queue (a
    kill between leaves an entry the next worker finds settled, never a ledger with nothing to deliver): the
    ledger alone says "delivered" a moment before the queue is empty, and a loaded machine stretched that moment
    past a test's next step (issue 26)."""
    root = alerts_path.parents[3]  # <workspace>/.agent-loop/tasks/<task>/alerts.jsonl

    def done():
        folded = outbox.fold(alerts_path) if alerts_path.exists() else []
        final = folded and all(c["state"] != "pending" for a in folded for c in a["channels"].values())
        return folded if final and not outbox.pending(root) else None

    return wait_until(done, timeout, "every channel to be delivered or failed")  # type: ignore[return-value]


def secret_free(root: Path, *secrets: str) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in secrets:
                assert secret.encode() not in data, (path, secret)
