"""Issue 21, against a real OTLP backend: Arize Phoenix's server on loopback receives the spans of a real Claude Code
session (scripted model) driven through a spiral; the test asks Phoenix's REST API what arrived.

Phoenix stores traces only (it answers 405 to log records and metrics): the test names its traces endpoint alone, as
a person would, and nothing else is sent (issue 26); metrics and log records are checked against the SDK in
tests/test_telemetry.py and against a local receiver in tests/test_telemetry_switches.py.
Phoenix runs from its own venv (``tests/harnesses/install.py`` makes ``.harnesses/phoenix-venv``; or name an
interpreter in ``STRICT_LOOP_PHOENIX_PYTHON``) because its dependencies are many and pinned.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from conftest import run_cli
from harness_rig import Harness, require_binary
from model_servers import AnthropicModel, Final, Shell

from strict_loop import Workspace

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent
PROBE = "ls /nonexistent-strict-loop-probe"
TASK = "probe"


# `python -m phoenix.server.main serve`, with the collector paused while Phoenix imports its ~6,000 modules (their
# objects live for the whole run: each collection walks them all again, ~2 s of its ~7 s of CPU at start); they are
# then frozen out of later collections, and the server runs with the collector on, as it does when started itself.
SERVE = """
import gc, sys
gc.disable()
sys.argv = ["phoenix", "serve"]
from phoenix.server.main import main
gc.freeze()
gc.enable()
main()
"""


def _phoenix_python() -> Path:
    given = os.environ.get("STRICT_LOOP_PHOENIX_PYTHON")
    path = Path(given) if given else REPO / ".harnesses" / "phoenix-venv" / "bin" / "python"
    if not path.exists():
        pytest.skip("Phoenix is not installed: run python3 tests/harnesses/install.py")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 (loopback)
        return json.loads(resp.read())


def _serve(tmp_path: Path, attempt: int) -> tuple[subprocess.Popen, str, Path]:
    """One Phoenix on two free ports (its process, its URL, its log)."""
    port, grpc = _free_port(), _free_port()
    env = {
        **os.environ,
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_WORKING_DIR": str(tmp_path / "phoenix"),
        "PHOENIX_HOST": "127.0.0.1",
        # what the test never asks for: the MCP server mounted at /mcp and the agent assistant (building them is ~1 s
        # of Phoenix's ~8 s of CPU at start), and Phoenix's own usage telemetry (nothing leaves this machine)
        "PHOENIX_ENABLE_MCP_SERVER": "false",
        "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
        "PHOENIX_TELEMETRY_ENABLED": "false",
        # a database of the run's alone, in memory: its tables are created at once, where a file's are built by
        # replaying every migration Phoenix ever shipped (~1 s of CPU)
        "PHOENIX_SQL_DATABASE_URL": "sqlite:///:memory:",
    }
    log = tmp_path / f"phoenix-{attempt}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(_phoenix_python()), "-c", SERVE], env=env, stdout=out, stderr=out)
    return proc, f"http://127.0.0.1:{port}", log


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    """A Phoenix of the test's own. A free port can be taken by another process before Phoenix binds it (two suites
    at once): then Phoenix exits, or something else answers there, and it starts again on other ports."""
    for attempt in range(3):
        proc, url, log = _serve(tmp_path, attempt)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    _get(f"{url}/v1/projects")
                    break
                except (OSError, http.client.HTTPException):  # not up yet, or not ours on that port
                    time.sleep(0.3)
            if proc.poll() is None and time.monotonic() < deadline:
                yield url
                return
        finally:
            proc.terminate()
            proc.wait(10)
    pytest.fail("Phoenix did not start: " + log.read_text()[-2000:])


def _spans(url: str) -> list[dict]:
    return _get(f"{url}/v1/projects/default/spans?limit=1000")["data"]


def test_a_claude_code_spiral_arrives_in_phoenix_with_the_documented_names(phoenix: str, tmp_path: Path, monkeypatch):
    harness = Harness("claude", require_binary("claude"), tmp_path / "home", mcp=False)  # the hooks' spans only
    harness.home.mkdir()
    work = tmp_path / "w"
    work.mkdir()
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    for key, value in {
        "HOME": str(harness.home),
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{phoenix}/v1/traces",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_BSP_SCHEDULE_DELAY": "200",
        "OTEL_BLRP_SCHEDULE_DELAY": "200",
    }.items():
        monkeypatch.setenv(key, value)
    run_cli("install", "claude", "--workspace", str(work), cwd=work)
    ws = Workspace(work)
    ws.init_state(task_id=TASK, goal="Find the probe folder", global_stop_condition="probe.txt exists")
    ws.append_event(task_id=TASK, kind="round.started", message="first look")
    ws.update_state(task_id=TASK, task="first look", result_summary="r", verification_summary="v", progress="made")
    from strict_loop.telemetry import export  # the hooks spool (the harness gives them an env of its own); this exports

    drainer = export.start(work)
    assert drainer is not None
    steps = [Shell(PROBE)] * 8 + [Final("Stopping as the loop asks.")]
    with AnthropicModel(steps) as model:
        harness.run("List the probe folder until it appears.", work, model.url)
    assert ws.supervisor(TASK).paused
    session = next(
        e["data"]["hook"]["session_id"]
        for e in map(json.loads, ws.task_paths(TASK).events.read_text().splitlines())
        if e["kind"] == "tool_call" and e["data"].get("hook", {}).get("session_id")
    )
    drainer.stop()
    deadline, spans = time.monotonic() + 30, []
    while time.monotonic() < deadline:
        spans = _spans(phoenix)
        names = {s["name"].split(" ")[0] for s in spans}
        events = {e["name"] for s in spans for e in s.get("events", [])}
        if {"strict_loop.round", "execute_tool"} <= names and {"strict_loop.whisper", "strict_loop.pause"} <= events:
            break
        time.sleep(0.5)
    tools = [s for s in spans if s["name"].startswith("execute_tool")]
    assert any(s["name"] == "strict_loop.round 1" for s in spans), [s["name"] for s in spans]
    assert tools and all(s["attributes"].get("gen_ai.operation.name") == "execute_tool" for s in tools)
    assert all("host.name" not in s["attributes"] for s in spans)  # the Resource's, not every span's
    assert {s["attributes"].get("gen_ai.conversation.id") for s in tools} == {session}
    assert "Bash" in {s["attributes"].get("gen_ai.tool.name") for s in tools}  # and the person's prompt, a turn too
    bash = [s for s in tools if s["attributes"].get("gen_ai.tool.name") == "Bash"]
    at = lambda text: datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731  (3.10 reads no "Z")
    took = [at(s["end_time"]) - at(s["start_time"]) for s in bash]
    assert all(t.total_seconds() > 0 for t in took), took  # Claude Code's duration_ms: the tool's own time
    # a whisper or pause rides on its turn's tool span, or, when that span went out in an earlier batch of the
    # spool, on a span of its own named for it (convert.Converter.convert): either way nowhere else
    riding = [s for s in spans if s in tools or s["name"] in ("strict_loop.whisper", "strict_loop.pause")]
    events = {e["name"] for s in riding for e in s.get("events", [])}
    assert {"strict_loop.whisper", "strict_loop.pause"} <= events, [(s["name"], s.get("events")) for s in spans]
