"""Issue 13, items 5-7: no one reaches the HTTP server uninvited, and no client can lock the others out.

Every server here is the real process on a loopback address with a free port; no request leaves loopback. The one
non-loopback bind (0.0.0.0) is only ever refused, before anything binds.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import httpx2
import pytest

from mcp_server import http_transport
from mcp_server.server import parse_args
from strict_loop import LoopError

TOKEN = "tok-" + "s3cret" * 5
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
JSON_SSE = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Served:
    """A running server and one HTTP client for it.

    The client opens a new connection for every request, as separate ``httpx2.post`` calls would, without building a
    new client (and its TLS context, ~70 ms) each time.
    """

    def __init__(self, proc: subprocess.Popen, host: str, port: int, log: Path, client: httpx2.Client) -> None:
        self.proc, self.host, self.port, self.log, self.client = proc, host, port, log, client
        self.url = f"http://{host}:{port}/mcp"

    def post(
        self, body: dict, *, sid: Optional[str] = None, token: Optional[str] = None, **headers: str
    ) -> httpx2.Response:
        sent = {**JSON_SSE, **headers}
        if sid:
            sent.update({"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"})
        if token:
            sent["Authorization"] = f"Bearer {token}"
        return self.client.post(self.url, json=body, headers=sent)

    def open_session(self, token: Optional[str] = None) -> str:
        r = self.post(INIT, token=token)
        assert r.status_code == 200, (r.status_code, r.text)
        sid = r.headers["mcp-session-id"]
        assert (
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid=sid, token=token).status_code
            == 202
        )
        return sid

    def alive(self, sid: str) -> bool:
        r = self.post(LIST, sid=sid)
        assert r.status_code in (200, 404), (r.status_code, r.text)
        return r.status_code == 200 and "init_state" in r.text


@contextmanager
def served(ws: Path, *args: str, host: str = "127.0.0.1", env: Optional[dict] = None) -> Iterator[Served]:
    port = _free_port(host)
    log = ws.parent / f"server-{port}.log"
    environ = {k: v for k, v in os.environ.items() if k != http_transport.TOKEN_ENV}
    with open(log, "wb") as sink:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mcp_server",
                "--workspace",
                str(ws),
                "--http",
                "--host",
                host,
                "--port",
                str(port),
                *args,
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**environ, **(env or {})},
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, log.read_text()
            with socket.socket() as s:
                if s.connect_ex((host, port)) == 0:
                    break
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        with httpx2.Client(timeout=30, limits=httpx2.Limits(max_keepalive_connections=0)) as client:
            yield Served(proc, host, port, log, client)
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@contextmanager
def served_here(ws: Path, *args: str, host: str = "127.0.0.1") -> Iterator[Served]:
    """The app `strict-loop-mcp --http` serves, built from the same command line and on the same uvicorn server, in a
    thread of the test's process: for what the app does (Host/Origin, the session cap and expiry), not what the
    process does (its environment and log: ``served``), without a server process's ~0.6 s of CPU to start."""
    import threading

    from mcp_server.server import build_server
    from strict_loop.dashboard import guard, serving

    port = _free_port(host)
    argv = ["--workspace", str(ws), "--http", "--host", host, "--port", str(port), *args]
    parsed = parse_args(argv)
    http = http_transport.settings(parsed)
    sock = guard.listen(http.host, http.port)
    server = serving.server(http_transport.build_app(build_server(parsed.workspace), http), "error")
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        with httpx2.Client(timeout=30, limits=httpx2.Limits(max_keepalive_connections=0)) as client:
            yield Served(None, host, port, ws.parent / "no-log", client)  # type: ignore[arg-type]
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


# -- item 5: outside loopback only with a token; with a token, nothing without it -----------------------------------


def _never_served(*args: object, **kwargs: object) -> None:
    raise AssertionError("a server started (and, in this process, would have served until the run was killed)")


def test_a_non_loopback_bind_without_a_token_is_refused_before_binding(ws_dir, monkeypatch, capsys):
    """`strict-loop-mcp`'s main, as its console script calls it (in this process: the refusal, not the process, is
    the subject; a started server's own process is ``served``'s)."""
    from mcp_server.server import main

    port = _free_port()
    monkeypatch.delenv(http_transport.TOKEN_ENV, raising=False)
    monkeypatch.setattr(http_transport, "serve", _never_served)  # a server that starts fails here, not hangs
    with pytest.raises(SystemExit) as exited:
        main(["--workspace", str(ws_dir), "--http", "--host", "0.0.0.0", "--port", str(port)])
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    (line,) = err.strip().splitlines()
    assert line.startswith("strict-loop-mcp: error: --host: 0.0.0.0 is reachable from other machines")
    assert http_transport.TOKEN_ENV in line and "--token-file" in line
    assert "Uvicorn running" not in err + out
    assert not (ws_dir / ".agent-loop").exists()


@pytest.mark.parametrize(
    "host", ["::", "10.1.2.3", "192.168.0.7", "example.invalid", "::ffff:10.0.0.1", "127.0.0.1.nip.io"]
)
def test_every_address_outside_loopback_needs_a_token(host, monkeypatch):
    monkeypatch.delenv(http_transport.TOKEN_ENV, raising=False)
    with pytest.raises(LoopError) as refused:  # what main() prints before anything is built or bound
        http_transport.settings(parse_args(["--http", "--host", host]))
    assert str(refused.value).startswith(f"--host: {host} is reachable from other machines and no token is set")


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"]
)
def test_loopback_addresses_need_no_token(host):
    assert http_transport.is_loopback(host)


@pytest.mark.parametrize("source", ["env", "file"])
def test_a_weak_or_unreadable_token_is_refused_without_echoing_it(source, tmp_path, monkeypatch):
    weak = "hunter2 pass"
    args = ["--http", "--host", "0.0.0.0"]
    if source == "env":
        monkeypatch.setenv(http_transport.TOKEN_ENV, weak)
    else:
        (tmp_path / "token").write_text(weak + "\n")
        args += ["--token-file", str(tmp_path / "token")]
    with pytest.raises(LoopError) as refused:
        http_transport.settings(parse_args(args))
    assert "at least 16 printable ASCII characters" in str(refused.value) and "hunter2" not in str(refused.value)
    with pytest.raises(LoopError) as refused:
        http_transport.settings(parse_args(["--http", "--token-file", str(tmp_path / "missing")]))
    assert str(refused.value).startswith("--token-file: cannot be read (No such file or directory)")


@pytest.mark.slow  # starts a real server process: full suite only
def test_with_a_token_every_request_without_it_gets_401(ws_dir):
    wrong = TOKEN[:-1] + "X"
    with served(ws_dir, env={http_transport.TOKEN_ENV: TOKEN}) as s:
        for headers in (
            {},
            {"Authorization": f"Bearer {wrong}"},
            {"Authorization": f"Bearer {TOKEN}x"},
            {"Authorization": f"Basic {TOKEN}"},
            {"Authorization": TOKEN},
            {"Authorization": "Bearer"},
        ):
            r = s.post(INIT, **headers)
            assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
            assert TOKEN not in r.text and wrong not in r.text
        for method, path in (
            ("GET", "/mcp"),
            ("DELETE", "/mcp"),
            ("GET", "/"),
            ("GET", "/.well-known/oauth-protected-resource"),
        ):
            assert s.client.request(method, f"http://127.0.0.1:{s.port}{path}").status_code == 401
        assert (
            s.post(INIT, token=TOKEN, Host="evil.example").status_code == 421
        )  # the token does not lift item 6's checks
        assert s.post(INIT, token=TOKEN, Origin="http://evil.example").status_code == 403
        sid = s.open_session(token=TOKEN)
        r = s.post(LIST, sid=sid, token=TOKEN)
        assert r.status_code == 200 and "check_stop" in r.text
        assert s.post(LIST, sid=sid).status_code == 401  # a session id is no substitute for the token
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "init_state",
                "arguments": {
                    "task_id": "t",
                    "goal": "g",
                    "global_stop_condition": "c",
                    "stop_checks": {"commands": ["env > env.txt"]},
                },
            },
        }
        assert s.post(call, sid=sid, token=TOKEN).status_code == 200
        check = {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "check_stop", "arguments": {"task_id": "t"}},
        }
        assert s.post(check, sid=sid, token=TOKEN).status_code == 200
    seen_by_commands = (ws_dir / "env.txt").read_text()
    assert (
        "PATH=" in seen_by_commands
        and TOKEN not in seen_by_commands
        and http_transport.TOKEN_ENV not in seen_by_commands
    )
    log = s.log.read_text()
    assert "401" in log and TOKEN not in log and wrong not in log and "s3cret" not in log
    assert "a bearer token is required" in log


@pytest.mark.slow  # starts a real server process: full suite only
def test_a_token_file_is_read_and_wins_over_the_environment(ws_dir, tmp_path, monkeypatch):
    (tmp_path / "token").write_text(f"  {TOKEN}\n")
    monkeypatch.setenv(http_transport.TOKEN_ENV, "another-token-of-enough-length")
    args = argparse.Namespace(
        host="0.0.0.0",
        port=8765,
        token_file=str(tmp_path / "token"),
        allow_host=[],
        max_sessions=3,
        session_idle_timeout=60.0,
    )
    http = http_transport.settings(args)
    assert http.token == TOKEN and TOKEN not in repr(http)
    assert http_transport.TOKEN_ENV not in os.environ  # no stop command inherits it


# -- item 6: Host and Origin checked whatever the bind address ---------------------------------------------------------


def _bindable(host: str) -> bool:
    try:
        _free_port(host)
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _bindable("127.0.0.2"), reason="127.0.0.2 is not a loopback address on this system")
@pytest.mark.slow  # starts a real server process: full suite only
def test_host_and_origin_are_checked_on_every_bind_address(ws_dir):
    with served_here(ws_dir, "--allow-host", "my.box", "--allow-host", "proxy.lan:9000", host="127.0.0.2") as s:
        here = f"127.0.0.2:{s.port}"
        for host in (
            "evil.example",
            f"evil.example:{s.port}",
            "127.0.0.2",
            f"127.0.0.2:{s.port + 1}",
            f"my.box:{s.port + 1}",
            "",
        ):
            r = s.post(INIT, Host=host)
            assert r.status_code in (400, 421), (host, r.status_code)  # an empty Host is refused by uvicorn itself
        for origin in ("http://evil.example", f"http://evil.example:{s.port}", "null", f"http://{here}.evil.example"):
            assert s.post(INIT, Origin=origin).status_code == 403, origin
        for host in (
            here,
            f"localhost:{s.port}",
            f"127.0.0.1:{s.port}",
            f"[::1]:{s.port}",
            f"my.box:{s.port}",
            "proxy.lan:9000",
        ):
            assert s.post(INIT, Host=host).status_code == 200, host
        for origin in (f"http://{here}", f"http://localhost:{s.port}", f"https://my.box:{s.port}"):
            assert s.post(INIT, Origin=origin).status_code == 200, origin


def test_allowed_hosts_are_the_bind_address_and_localhost_with_the_port():
    assert http_transport.allowed_hosts("127.0.0.2", 8765, []) == (
        "127.0.0.2:8765",
        "127.0.0.1:8765",
        "localhost:8765",
        "[::1]:8765",
    )
    assert http_transport.allowed_hosts("0.0.0.0", 80, ["Box.lan", "[fe80::1]", "h:81"]) == (
        "127.0.0.1:80",
        "127.0.0.1",
        "localhost:80",
        "localhost",
        "[::1]:80",
        "[::1]",
        "box.lan:80",
        "box.lan",
        "[fe80::1]:80",
        "[fe80::1]",
        "h:81",
    )


# -- item 7: sessions are capped and expire --------------------------------------------------------------------------


@pytest.mark.slow  # seconds of real waiting on a server process: full suite only
def test_unclosed_sessions_never_lock_out_a_new_one(ws_dir):
    with served_here(ws_dir, "--max-sessions", "3") as s:
        first, second, third = (s.open_session() for _ in range(3))
        assert s.alive(first)  # now the most recently used
        fourth = s.open_session()
        assert not s.alive(second) and all(s.alive(x) for x in (first, third, fourth))  # the least recently used went
        with s.client.stream(
            "GET",
            s.url,
            headers={"Accept": "text/event-stream", "mcp-session-id": first, "mcp-protocol-version": "2025-06-18"},
        ) as stream:
            assert stream.status_code == 200  # an open stream keeps `first` busy
            late = [s.open_session() for _ in range(20)]  # and none of these is ever closed by its client
            assert s.alive(first)
        assert all(s.alive(x) for x in late[-2:]) and not any(s.alive(x) for x in (third, fourth, *late[:-2]))
        assert s.alive(s.open_session())


@pytest.mark.slow  # a real server process: full suite only
def test_held_get_streams_never_lock_out_a_new_session(ws_dir):
    """Issue 19, item 11: 2 x --max-sessions held GET streams refused every new session (503) until they ended."""
    import contextlib

    with served_here(ws_dir, "--max-sessions", "2") as s, contextlib.ExitStack() as held:
        listening = []
        for _ in range(4):  # each session opened, then held by a GET stream that never ends
            listening.append(s.open_session())
            stream = held.enter_context(
                s.client.stream(
                    "GET",
                    s.url,
                    headers={
                        "Accept": "text/event-stream",
                        "mcp-session-id": listening[-1],
                        "mcp-protocol-version": "2025-06-18",
                    },
                )
            )
            assert stream.status_code == 200
        fresh = s.open_session()  # before: closed at once, or 503 once the SDK's limit was reached
        assert s.alive(fresh) and s.alive(s.open_session())
        assert not s.alive(listening[0])  # the least recently used listener made room


@pytest.mark.slow  # seconds of real waiting on a server process: full suite only
def test_idle_sessions_expire(ws_dir):
    with served_here(ws_dir, "--session-idle-timeout", "0.5") as s:
        idle, used = s.open_session(), s.open_session()
        for _ in range(4):
            time.sleep(0.2)
            assert s.alive(used)  # a session in use stays open past the idle timeout
        time.sleep(0.9)
        assert not s.alive(idle) and not s.alive(used)
        assert s.alive(s.open_session())


def test_session_options_are_checked():
    for flag, value in (
        ("--max-sessions", "0"),
        ("--session-idle-timeout", "-1"),
        ("--session-idle-timeout", "inf"),
        ("--port", "70000"),
    ):
        with pytest.raises(LoopError) as refused:
            http_transport.settings(parse_args(["--http", flag, value]))
        assert str(refused.value).startswith(f"{flag}: ")
