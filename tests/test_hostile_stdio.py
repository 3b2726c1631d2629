"""Issue 13, items 17 and 7: over stdio every malformed line is answered and no line takes unbounded memory; slow
stop checks cannot starve the other tools.

The server is the real process; the malformed-line tests write raw bytes to its stdin and read its stdout.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import stdio_client

from mcp_server.stdio_transport import MAX_LINE_BYTES
from strict_loop import Workspace

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}


class RawServer:
    """The server over raw pipes: write bytes, read reply lines (with a timeout, so silence fails instead of
    hanging)."""

    def __init__(self, ws: Path) -> None:
        self.ws = ws
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_server", "--workspace", str(ws)],
            cwd=ws,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.replies: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.send(json.dumps(INIT).encode())
        assert self.reply()["id"] == 1
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.replies.put(line)

    def send(self, raw: bytes) -> None:
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 20) -> dict[str, Any]:
        try:
            return json.loads(self.replies.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError("the server stayed silent") from None

    def peak_memory_kib(self) -> int:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=20)


@pytest.fixture
def raw(ws_dir):
    server = RawServer(ws_dir)
    yield server
    server.close()


@pytest.fixture(scope="module")
def shared_raw(tmp_path_factory):
    """One server for the tests whose lines leave nothing behind (each is answered and forgotten): a start costs ~1 s.

    The peak-memory test has a server of its own: another test's long line would have raised the peak it starts from.
    """
    server = RawServer(tmp_path_factory.mktemp("ws"))
    yield server
    server.close()


DEEP = b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
MALFORMED = [
    (b'{"jsonrpc":"2.0","id":2,"method":"tools/list",', 2, -32700),  # cut off
    (b'{"jsonrpc":"2.0","id":"a-b","params":{}}', "a-b", -32600),  # no method
    (b'{"jsonrpc":"2.0","id":3,"method":7}', 3, -32600),
    (b'{"jsonrpc":"1.0","id":4,"method":"ping"}', 4, -32600),
    (b'{"method":"ping","id":6,"jsonrpc":"2.0",,}', 6, -32700),
    (DEEP, 5, -32700),  # nested far too deep to parse
    (b"not json", None, -32700),
    (b"[1, 2]", None, -32600),
    (b'"just a string"', None, -32600),
    (b'{"jsonrpc":"2.0","id":8,"result":{}, "broken":', None, -32700),  # a response: answering id 8 would misdirect
    (b'{"jsonrpc":"2.0","method":"notifications/x","params":[1]}', None, -32600),
    (b'\xff\xfe{"jsonrpc":"2.0","id":9}', None, -32700),
]


def test_every_malformed_line_gets_an_error_reply_with_its_id(shared_raw):
    raw = shared_raw
    for line, ident, code in MALFORMED:
        raw.send(line)
        reply = raw.reply()
        assert reply["id"] == ident and reply["error"]["code"] == code, (line[:60], reply)
        assert reply["jsonrpc"] == "2.0" and "result" not in reply
    raw.send(b"   ")  # blank lines are not messages: no reply
    raw.send(b'{"jsonrpc":"2.0","id":10,"method":"ping"}')
    assert raw.reply() == {"jsonrpc": "2.0", "id": 10, "result": {}}


def test_non_finite_numbers_are_refused_over_mcp(shared_raw):
    """Raw JSON-RPC over stdio, as a client would send it: the SDK's parser takes NaN and 1e999; the core refuses
    them, and the task's ledger gets nothing."""
    task = Workspace(shared_raw.ws).init_state(task_id="nan", goal="g", global_stop_condition="c")
    for i, number in enumerate(["NaN", "-Infinity", "1e999"], start=31):
        shared_raw.send(
            f'{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"append_event","arguments":'
            f'{{"task_id":"nan","kind":"note","message":"m","data":{{"x":[{number}]}}}}}}}}'.encode()
        )
    replies = {reply["id"]: reply for reply in (shared_raw.reply() for _ in range(3))}
    for i in (31, 32, 33):
        assert replies[i]["result"]["isError"] is True
        assert "append_event.data: holds NaN or Infinity" in replies[i]["result"]["content"][0]["text"]
    ledger = Workspace(shared_raw.ws).task_paths(task.task_id).events.read_text().splitlines()
    assert [json.loads(line)["kind"] for line in ledger] == ["task.initialized"]


@pytest.mark.slow  # starts a real server process: full suite only
def test_an_over_long_line_is_dropped_with_a_clear_reply(shared_raw):
    raw = shared_raw
    big = b'{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"append_event","arguments":{"message":"'
    raw.send(big + b"x" * (MAX_LINE_BYTES + 10) + b'"}}}')
    reply = raw.reply()
    assert reply["id"] == "big" and reply["error"]["code"] == -32600
    assert f"longer than {MAX_LINE_BYTES} bytes" in reply["error"]["message"]
    raw.send(b'{"jsonrpc":"2.0","id":11,"method":"ping"}')  # the next line is read whole, from its start
    assert raw.reply() == {"jsonrpc": "2.0", "id": 11, "result": {}}
    exact = b'{"jsonrpc":"2.0","id":12,"method":"ping","params":{"_meta":{"pad":"'
    raw.send(exact + b" " * (MAX_LINE_BYTES - len(exact) - 4) + b'"}}}')  # exactly at the limit: served
    assert raw.reply() == {"jsonrpc": "2.0", "id": 12, "result": {}}


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory is read from /proc")
@pytest.mark.slow  # starts a real server process: full suite only
def test_a_huge_line_does_not_take_memory(raw):
    raw.send(b'{"jsonrpc":"2.0","id":20,"method":"ping"}')
    raw.reply()
    before = raw.peak_memory_kib()
    raw.send(b'{"jsonrpc":"2.0","id":21,"method":"ping","params":{"x":"' + b"y" * (160 * 1024 * 1024))
    assert raw.reply()["id"] == 21
    assert raw.peak_memory_kib() - before < 24 * 1024, "a 160 MiB line raised the server's peak memory"


@pytest.mark.anyio
@pytest.mark.slow  # seconds of real waiting on a server process: full suite only
async def test_slow_stop_checks_cannot_starve_the_other_tools(ws_dir):
    """45 check_stop calls whose command sleeps 1 s: at most 4 run at once, and list_tasks answers before any of
    them."""
    log = ws_dir / "checks.log"
    finished: list[str] = []
    async with stdio_client(ws_dir) as client:
        result = await client.call_tool(
            "init_state",
            {
                "task_id": "slow",
                "goal": "g",
                "global_stop_condition": "c",
                "stop_checks": {"commands": ["echo start >> checks.log; sleep 1; echo end >> checks.log"]},
            },
        )
        assert not result.is_error

        async def check() -> None:
            await client.call_tool("check_stop", {"task_id": "slow"})
            finished.append("check_stop")

        async with anyio.create_task_group() as tg:
            for _ in range(45):
                tg.start_soon(check)
            with anyio.fail_after(10):
                while not log.exists():
                    await anyio.sleep(0.05)
            listed = await client.call_tool("list_tasks", {})
            finished.append("list_tasks")
            with anyio.fail_after(30):
                while len(finished) < 2:
                    await anyio.sleep(0.05)
            tg.cancel_scope.cancel()
    assert not listed.is_error and [t["task_id"] for t in listed.structured_content["tasks"]] == ["slow"]
    assert finished[0] == "list_tasks", finished
    running, most = 0, 0
    for event in log.read_text().split():
        running += 1 if event == "start" else -1
        most = max(most, running)
    assert most == 4, f"{most} stop commands ran at once; the cap is 4"
