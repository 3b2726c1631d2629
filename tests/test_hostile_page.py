"""Issue 25, items 5-8, 17 and 18 (the page's half): the person's page stays up and true whatever the agent leaves.

Every page here is the real server (``serving.server``, as ``strict-loop dashboard`` and ``strict-loop-mcp --http``
run it) on a loopback port, spoken to over real sockets; the signals go to real processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

import httpx2
import pytest
from conftest import REPO, run_json

from strict_loop import Workspace
from strict_loop.dashboard import guard, server, serving
from strict_loop.storage import workspaces

FAR = 3.0  # seconds a reply may take before the test calls it never coming


class Page:
    def __init__(self, port: int, client: httpx2.Client) -> None:
        self.port, self.client = port, client
        self.host = f"127.0.0.1:{port}"

    def raw(self, data: bytes) -> socket.socket:
        """A connection of our own that has sent ``data`` (half a request, say) and nothing more."""
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=FAR)
        if data:
            sock.sendall(data)
        return sock

    def head(self, method: str, path: str, *extra: str) -> bytes:
        return "\r\n".join([f"{method} {path} HTTP/1.1", f"Host: {self.host}", *extra, "", ""]).encode()


def until_closed(sock: socket.socket, timeout: float = FAR) -> bytes:
    """Everything the server sends until it closes the connection; a failure when it is still open after ``timeout``."""
    sock.settimeout(timeout)
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        pytest.fail(f"the server kept the connection open for {timeout} s; it sent {got[:300]!r}")
    return got


def until_seen(sock: socket.socket, marker: bytes) -> bytes:
    got = b""
    sock.settimeout(FAR)
    while marker not in got:
        chunk = sock.recv(65536)
        assert chunk, got
        got += chunk
    return got


@contextmanager
def serve(app: Callable[[int], Any], **limits: Any) -> Iterator[tuple[int, Any]]:
    """``app(port)`` served by ``serving.server`` in a thread, on a port of its own; stopped as Ctrl-C stops it."""
    sock = guard.listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    srv = serving.server(app(port), "critical", **limits)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not srv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    try:
        yield port, thread
    finally:
        srv.should_exit = True
        thread.join(10)


@contextmanager
def page(only: Optional[Path] = None, answer_key: Optional[str] = None, **limits: Any) -> Iterator[Page]:
    def app(port: int) -> Any:
        access = guard.Access(guard.allowed_hosts("127.0.0.1", port, []), answer_key=answer_key)
        return server.build(server.Config(access, only))

    with serve(app, **limits) as (port, _), httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=FAR) as c:
        yield Page(port, c)


def task_folder(ws: Path, task_id: str) -> Path:
    Workspace(ws).init_state(task_id=task_id, goal=f"Goal of {task_id}", global_stop_condition="done")
    return ws / ".agent-loop" / "tasks" / task_id


def edit(path: Path, change: Callable[[dict], None]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


# -- item 5: one damaged task file costs its row (or its part of the task's page), never the page ---------------------


def test_one_damaged_task_costs_its_row_and_is_named_the_rest_renders(ws_dir):
    tasks = ws_dir / ".agent-loop" / "tasks"
    for name in ("good", "counters", "level", "bytes", "lone"):
        task_folder(ws_dir, name)
    edit(tasks / "counters" / "state.json", lambda s: s.update(counters=[1]))
    (tasks / "level" / "monitor.json").write_text(json.dumps({"level": "high"}))
    (tasks / "bytes" / "state.json").write_bytes(b'{"task_id": "bytes", "contract": {"goal": "\xff"}}')
    edit(tasks / "lone" / "state.json", lambda s: s["contract"].update(goal="caf\udce9 \ud800"))  # escapes in JSON
    try:  # a folder name that is not UTF-8 (Linux allows one; a file system that refuses it skips this part)
        shutil.copytree(tasks / "good", tasks / os.fsdecode(b"b\xffd"))
        odd = {"b\\xffd"}
    except OSError:
        odd = set()
    with page() as p:
        r = p.client.get("/api/overview")
        assert r.status_code == 200, r.text
        d = r.json()
        assert p.client.get("/").status_code == 200
    assert {row["task_id"] for row in d["tasks"]} == {"good", "lone"}
    assert next(row for row in d["tasks"] if row["task_id"] == "lone")["goal"].startswith("caf\\udce9")
    why = {s["folder"]: s["problem"] for s in d["skipped"]}
    assert set(why) == {"counters", "level", "bytes"} | odd
    assert why["counters"].startswith("state.json: counters is list")
    assert why["level"].startswith("monitor.json: level is str")
    assert why["bytes"].startswith("state.json cannot be read")
    assert all(why[name].endswith("not UTF-8, so it is no task id") for name in odd)
    links = {s["folder"]: s["link"] for s in d["skipped"]}
    assert links["level"] == f"/task/{workspaces.workspace_id(ws_dir)}/level" and all(links[n] is None for n in odd)


def test_a_damaged_file_of_a_task_costs_its_part_of_the_tasks_page(ws_dir):
    folder = task_folder(ws_dir, "t")
    task_folder(ws_dir, "broken")
    (folder / "monitor.json").write_text(json.dumps({"level": "high", "paused": "yes", "whispers": 5}))
    lines = [
        {"ts": "2026-01-01T00:00:00Z", "kind": kind, "message": "m", "data": [1, 2]}
        for kind in ("tool_call", "stop.checked", "round.started")
    ]
    lines.append({"ts": "2026-01-01T00:00:01Z", "kind": "tool_call", "data": {"tool": "Bash", "score": float("nan")}})
    with open(folder / "events.jsonl", "a") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)  # NaN too: what json.loads accepts
    edit(ws_dir / ".agent-loop" / "tasks" / "broken" / "state.json", lambda s: s.update(counters=[1]))
    ws = workspaces.workspace_id(ws_dir)
    with page() as p:
        r = p.client.get(f"/api/task/{ws}/t")
        broken = p.client.get(f"/api/task/{ws}/broken")
    assert r.status_code == 200, r.text
    d = r.json()
    said = " | ".join(d["problems"])
    assert "monitor.json" in said and "events.jsonl: 3 recent line(s) whose data is not an object" in said
    assert [t["tool"] for t in d["turns"]] == ["Bash"] and d["plot"] == [
        {"round": 0, "calls": 1, "failures": 0, "score": None}
    ]
    assert d["ladder"]["level"] == 0 and d["ladder"]["paused"] is False and d["row"]["round"] == 0
    assert broken.status_code == 400 and "state.json: field 'counters'" in broken.json()["error"]  # said, not a 500


# -- item 6: half-sent requests never hold the page -------------------------------------------------------------------


def test_a_half_sent_request_gets_408_and_its_connection_back(ws_dir):
    task_folder(ws_dir, "t")
    with page(head_timeout=0.2) as p:
        half = p.raw(f"GET /api/overview HTTP/1.1\r\nHost: {p.host}\r\n".encode())  # the head never ends
        stream = p.raw(p.head("GET", "/events"))
        assert until_seen(stream, b"retry: 1000").startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        reply = until_closed(half)
        assert reply.startswith(b"HTTP/1.1 408") and time.monotonic() - started < 2, reply
        stream.settimeout(0.2)  # a request whose head arrived in time is not cut: the live stream is still open
        with pytest.raises(TimeoutError):
            stream.recv(1)
        assert p.client.get("/api/overview").json()["tasks"][0]["task_id"] == "t"


def test_connections_past_the_cap_are_refused_at_once_and_the_page_comes_back(ws_dir):
    task_folder(ws_dir, "t")
    with page(cap=3) as p:
        held = [p.raw(b"GET / HTTP/1.1\r\n") for _ in range(3)]
        reply = until_closed(p.raw(b""))
        assert reply.startswith(b"HTTP/1.1 503") and b"too many connections" in reply, reply
        held.pop().close()
        deadline = time.monotonic() + FAR
        while (status := p.client.get("/api/overview").status_code) != 200 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert status == 200


# -- item 7: Ctrl-C and SIGTERM end the server while a page listens, within a time limit -----------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # a real server process: full suite only
@pytest.mark.parametrize(
    "command, sig", [("dashboard", signal.SIGINT), ("mcp", signal.SIGTERM)], ids=["dashboard-ctrl-c", "mcp-sigterm"]
)
def test_a_signal_ends_the_server_while_a_page_listens(ws_dir, tmp_path, command, sig):
    task_folder(ws_dir, "t")
    port = _free_port()
    args = (
        ["strict_loop", "dashboard", "--port", str(port), "--workspace", str(ws_dir)]
        if command == "dashboard"
        else ["mcp_server", "--workspace", str(ws_dir), "--http", "--port", str(port)]
    )
    log = tmp_path / "server.log"
    with open(log, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", *args], stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        p = Page(port, httpx2.Client())
        stream = p.raw(p.head("GET", "/events"))
        until_seen(stream, b"retry: 1000")
        half = p.raw(b"GET / HTTP/1.1\r\n")
        proc.send_signal(sig)
        proc.wait(timeout=serving.SHUTDOWN_S + 30)  # before: it waited for the page forever
    finally:
        proc.kill()
        proc.wait()
    # the stream ended as shutdown began, with its last chunk (a response cancelled at the time limit has none)
    assert until_closed(stream, 1).endswith(b"0\r\n\r\n"), log.read_text()
    assert until_closed(half, 1) == b""
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGTERM)
    assert "Traceback" not in log.read_text()


@pytest.mark.slow  # starts a server process or waits seconds on one
def test_a_request_that_never_ends_is_cancelled_at_the_shutdown_limit():
    """A live stream is ended on purpose; anything else still running is given ``shutdown_s``, then cancelled."""

    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["path"] == "/hang":
            await asyncio.Event().wait()
        await asyncio.sleep(0.3)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    with serve(lambda port: app, shutdown_s=1) as (port, thread):
        p = Page(port, httpx2.Client())
        hang, slow = p.raw(p.head("GET", "/hang")), p.raw(p.head("GET", "/slow"))
        time.sleep(0.05)
        started = time.monotonic()
        serving_thread = thread
    # the context's exit asked the server to stop, as Ctrl-C does, and waited for it
    assert not serving_thread.is_alive() and time.monotonic() - started < 2.5
    assert until_closed(slow, 1).startswith(b"HTTP/1.1 200")  # in flight, and finished within the limit
    assert b" 200 " not in until_closed(hang, 1)  # cancelled at the limit (uvicorn says 500 as it closes)


# -- item 8: an answer's body is read no further than the cap ---------------------------------------------------------


@pytest.mark.slow  # waits on the server's refusal of three connections, one of them a body that never ends
def test_an_answer_body_past_the_cap_is_refused_before_the_rest_is_sent(ws_dir):
    task_folder(ws_dir, "t1")
    ws = workspaces.workspace_id(ws_dir)
    key = "the-persons-answer-key"
    with page(answer_key=key) as p:
        token = re.search(r'name="page-token" content="([^"]+)"', p.client.get("/").text).group(1)
        post = [f"Origin: http://{p.host}", f"X-Strict-Loop-Page: {token}", f"Cookie: {guard.ANSWER_COOKIE}={key}"]
        post.append("Content-Type: application/json")
        chunked = p.raw(p.head("POST", f"/api/task/{ws}/t1/answer", *post, "Transfer-Encoding: chunked"))
        for _ in range(3):  # 24 KiB of a chunked body that never ends, as one of any size would not
            chunked.sendall(b"2000\r\n" + b" " * 0x2000 + b"\r\n")
        reply = until_closed(chunked)
        assert reply.startswith(b"HTTP/1.1 413") and b"over 16384 bytes" in reply, reply
        declared = p.raw(p.head("POST", f"/api/task/{ws}/t1/answer", *post, "Content-Length: 1000000000"))
        reply = until_closed(declared)  # refused before a byte of it is sent
        assert reply.startswith(b"HTTP/1.1 413") and b"over 16384 bytes" in reply, reply
        refused = p.raw(p.head("POST", f"/api/task/{ws}/t1/answer", "Transfer-Encoding: chunked"))  # no page token
        refused.sendall(b"2000\r\n" + b" " * 0x2000 + b"\r\n")
        assert until_closed(refused).startswith(b"HTTP/1.1 403")  # and the body's rest is not waited for


# -- item 17: after a failed checkpoint, show_task and the page tell the round the ledger recorded --------------------


def test_after_a_failed_checkpoint_show_task_and_the_page_count_the_recorded_round(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t", goal="Keep the notes file current. " * 100, global_stop_condition="notes are current")
    ws.append_event(task_id="t", kind="round.started", message="Round 1: write notes.md")

    def full_disk() -> None:  # 2,500 bytes: the round's ledger line fits, state.json (~3 KB) does not
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2500, 2500))

    round_args = ["--task", "Write notes.md", "--result-summary", "written", "--verification-summary", "cat: ok"]
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "update_state.py"), "--task-id", "t", *round_args, "--json"],
        cwd=ws_dir,
        capture_output=True,
        text=True,
        preexec_fn=full_disk,
        timeout=60,
    )
    assert proc.returncode == 0 and "saving state.json failed" in proc.stdout, proc.stderr
    state = json.loads((ws_dir / ".agent-loop" / "tasks" / "t" / "state.json").read_text())
    assert state["counters"]["iteration"] == 0  # the checkpoint is behind the ledger
    shown = run_json("show_task", "--task-id", "t", cwd=ws_dir)
    assert shown["state"]["counters"]["iteration"] == 1 and shown["summary"]["iteration"] == 1
    with page() as p:
        (row,) = p.client.get("/api/overview").json()["tasks"]
        d = p.client.get(f"/api/task/{workspaces.workspace_id(ws_dir)}/t").json()
    assert row["round"] == 1 and d["row"]["round"] == 1 and d["status"]["counters"]["iteration"] == 1


# -- item 18, the page's half: a removed loop folder is said, the workspace stays listed -----------------------------


def test_a_removed_loop_folder_keeps_its_workspace_on_the_page_and_says_so(ws_dir, tmp_path):
    task_folder(ws_dir, "t1")
    other = tmp_path / "other"
    other.mkdir()
    task_folder(other, "t2")
    shutil.rmtree(ws_dir / ".agent-loop")  # what an agent can do with one command
    ws = workspaces.workspace_id(ws_dir)
    for only in (None, ws_dir):
        with page(only) as p:
            d = p.client.get("/api/overview").json()
            lost = p.client.get(f"/api/task/{ws}/t1")
        assert [r["task_id"] for r in d["tasks"]] == ([] if only else ["t2"])
        (gone,) = d["removed"]
        assert (gone["ws"], gone["whole"], gone["tasks"]) == (ws, True, ["t1"]) and ws in d["workspaces"]
        assert "removed" in gone["problem"] and str(ws_dir / ".agent-loop") in gone["problem"]
        assert lost.status_code == 404 and "removed" in lost.json()["error"]


@pytest.mark.slow  # waits out guard.DRAIN_S once
def test_a_refused_post_gets_its_reason_not_a_reset_though_its_body_comes_after_the_head(ws_dir):
    """A refusal used to close the connection at once, with what the request still sent unread: the kernel then
    resets the connection, and a client whose body was on its way saw "connection reset", not the 403 and its reason
    (seen under load). The refusal now reads the body first (up to 16 KiB, for at most a second): only then it
    answers, and a body that never comes holds it up no longer than that."""
    task_folder(ws_dir, "t")
    body = json.dumps({"action": "continue", "note": "x" * 2000}).encode()
    with page() as p:
        head = p.head("POST", "/api/task/x/t/answer", f"Content-Length: {len(body)}", "Origin: http://evil")
        sock = p.raw(head)
        sock.settimeout(0.2)
        with pytest.raises(TimeoutError):  # no answer while the body is on its way
            sock.recv(1)
        sock.sendall(body)
        reply = until_closed(sock)
        assert reply.startswith(b"HTTP/1.1 403") and b"cross-origin request refused" in reply, reply
        started = time.monotonic()
        never = until_closed(p.raw(head))  # the body never comes: refused after guard.DRAIN_S all the same
        assert never.startswith(b"HTTP/1.1 403") and time.monotonic() - started < guard.DRAIN_S + 2, never
