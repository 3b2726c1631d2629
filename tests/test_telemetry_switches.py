"""Issue 26, item 8: telemetry follows the standard switches, sends nothing where nobody configured it, keeps the
terminal quiet, exports a loop driven by hand, and names things as the conventions do.

Through the real entry points (``strict-loop watch``, short-lived CLI commands, the MCP server) as subprocesses,
against the real OTLP exporter and a real local receiver that decodes what arrives (tests/otlp_receiver.py) and
records every request's path.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from conftest import run_cli
from otlp_receiver import Receiver, otlp_receiver

from strict_loop import Workspace
from strict_loop.base.fsio import append_line, dumps_line
from strict_loop.base.layout import Layout
from strict_loop.storage.workspaces import workspace_id
from strict_loop.telemetry import export, spool

TASK = "t"
HUNG = 20  # seconds: far beyond anything here; reaching it means something blocked
DEAD = "http://127.0.0.1:9"
WATCH = ("watch", "--task-id", TASK, "--heartbeat-s", "3600", "--", "true")
SAID = ("telemetry", "export", "transient", "retry", "4318", "traceback", "405")
"""Words of what the SDK or we would print about exporting; a quiet run prints none of them."""


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as rx:
        yield rx


@contextmanager
def default_port() -> Iterator[Optional[Receiver]]:
    """A receiver on the SDK's default endpoint (localhost:4318), where whatever nobody configured would go; None
    when another program holds the port (the other checks still stand)."""
    try:
        with otlp_receiver(4318) as rx:
            yield rx
    except OSError:
        yield None


def _env(**otel: str) -> dict[str, str]:
    """This environment with no OTEL_* variable of its own, then ``otel``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {**env, "OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_BLRP_SCHEDULE_DELAY": "50", **otel}


def _run(ws: Path, *argv: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, input=stdin, cwd=ws, env=env, capture_output=True, text=True, timeout=HUNG)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(argv[:4])} hung (still running after {HUNG}s)")


def _cli(ws: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = _run(ws, sys.executable, "-m", "strict_loop", *args, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


def _quiet(stderr: str) -> None:
    said = [line for line in stderr.splitlines() if any(w in line.lower() for w in SAID)]
    assert said == [], said


def _task(ws: Path, monkeypatch, env: dict[str, str], *, rounds: int = 1) -> None:
    """A task with ``rounds`` recorded rounds, written in this process with ``env``'s telemetry settings (so it
    spools as a person's loop would), and an alert's delivery (a span, a log record and a metric point)."""
    for key in [k for k in os.environ if k.startswith("OTEL_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        if key.startswith("OTEL_"):
            monkeypatch.setenv(key, value)
    w = Workspace(ws)
    w.init_state(task_id=TASK, goal="g", global_stop_condition="c")
    for n in range(rounds):
        w.append_event(task_id=TASK, kind="round.started", message=f"look {n}")
        w.update_state(task_id=TASK, task="look", result_summary="r", verification_summary="v", progress="made")
    _recorded(ws, {"kind": "alert.delivered", "data": {"channel": "slack", "alert": "t-1"}})


def _recorded(ws: Path, event: dict) -> None:
    """``event`` as the task store records it: a line of the task's event ledger, then its spool copy."""
    events = Layout(ws).task(TASK).events
    seq = len(events.read_bytes().splitlines()) + 1
    line = {"seq": seq, "ts": "2026-01-01T00:00:00.000Z", "message": "", **event}
    append_line(events, dumps_line(line))
    spool.offer(events.parent, TASK, line, env={"OTEL_EXPORTER_OTLP_ENDPOINT": DEAD})


def _left(ws: Path) -> bool:
    return (ws / ".agent-loop" / spool.SPOOL_DIR / spool.SPOOL_FILE).exists()


# ------------------------------------------------------------------ the standard switches


def test_with_only_a_traces_endpoint_only_traces_go_out_and_the_terminal_stays_quiet(ws_dir, receiver, monkeypatch):
    """The issue's case: Phoenix's traces endpoint alone. Before, watch also sent log records and metrics to
    localhost:4318, retried for seconds and printed the exporter's errors."""
    env = _env(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{receiver.url}/v1/traces")
    _task(ws_dir, monkeypatch, env)
    with default_port() as stray:
        began = time.monotonic()
        proc = _cli(ws_dir, *WATCH, env=env)
        took = time.monotonic() - began
    _quiet(proc.stderr)
    assert set(receiver.paths) == {"/v1/traces"} and "strict_loop.round 1" in receiver.span_names()
    assert stray is None or stray.paths == []
    assert took < HUNG / 2  # no retry at a port nobody listens on (3.3 s before, on an idle machine)


@pytest.mark.slow  # starts a server process or waits seconds on one
def test_exporter_none_turns_that_signal_off_in_watch_and_in_the_mcp_server(ws_dir, receiver, monkeypatch):
    """``none`` turns a signal off; so does an exporter we do not have (Claude Code users set
    ``OTEL_METRICS_EXPORTER=prometheus``), said once since it was not asked for."""
    env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_METRICS_EXPORTER="prometheus", OTEL_LOGS_EXPORTER="none")
    _task(ws_dir, monkeypatch, env)
    said = [line for line in _cli(ws_dir, *WATCH, env=env).stderr.splitlines() if "OTEL_" in line]
    assert said == [
        "strict-loop: OTEL_METRICS_EXPORTER='prometheus': strict-loop sends OTLP only (otlp or none); no metrics"
    ]
    assert set(receiver.paths) == {"/v1/traces"}
    assert "strict_loop.alert" in receiver.span_names() and receiver.logs == [] and receiver.metrics == []

    receiver.paths.clear()
    _recorded(ws_dir, {"kind": "alert.failed", "data": {"channel": "email", "alert": "t-2"}})
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_TRACES_EXPORTER="none")
    mcp = (sys.executable, "-m", "mcp_server", "--workspace", str(ws_dir))
    proc = _run(ws_dir, *mcp, env=env, stdin=json.dumps(hello) + "\n")
    assert proc.returncode == 0, proc.stderr
    _quiet(proc.stderr)
    assert set(receiver.paths) == {"/v1/logs", "/v1/metrics"}  # and no /v1/traces
    assert [r["attributes"]["strict_loop.alert.outcome"] for r in receiver.logs] == ["failed"]


def test_with_every_signal_off_nothing_is_spooled_nor_sent(tmp_path: Path, receiver, monkeypatch):
    for key in [k for k in os.environ if k.startswith("OTEL_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    for signal in ("TRACES", "METRICS", "LOGS"):
        monkeypatch.setenv(f"OTEL_{signal}_EXPORTER", "none")
    run_cli("init_state", "--task-id", TASK, "--goal", "g", "--global-stop-condition", "c", cwd=tmp_path)
    assert not (tmp_path / ".agent-loop" / spool.SPOOL_DIR).exists() and receiver.paths == []


def test_a_backend_refusing_logs_and_metrics_is_said_once_per_signal(ws_dir, receiver, monkeypatch):
    """Phoenix behind the generic endpoint answers 405 to log records and metrics: watch says so in one line per
    signal (no retry storm, no exporter traceback), and the traces still arrive."""
    receiver.refuse.update({"/v1/logs": 405, "/v1/metrics": 405})
    env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
    _task(ws_dir, monkeypatch, env)
    proc = _cli(ws_dir, *WATCH, env=env)
    told = [line for line in proc.stderr.splitlines() if any(w in line.lower() for w in SAID)]
    assert len(told) == 2 and all(line.startswith("strict-loop: telemetry ") for line in told), told
    assert "OTEL_LOGS_EXPORTER=none" in told[0] + told[1] and "OTEL_METRICS_EXPORTER=none" in told[0] + told[1]
    assert "strict_loop.round 1" in receiver.span_names()


# ------------------------------------------------------------------ a loop driven by hand


def test_a_loop_driven_by_hand_is_exported_as_each_command_ends(ws_dir, receiver, monkeypatch):
    """No long-lived process runs: the command that records the round sends it, and what waited in the spool."""
    env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
    _task(ws_dir, monkeypatch, env, rounds=0)
    assert _left(ws_dir)
    args = ("--task-id", TASK, "--task", "look", "--result-summary", "r", "--verification-summary", "v")
    proc = _cli(ws_dir, "update_state", *args, "--progress", "made", env=env)
    assert proc.stderr == ""
    assert {"strict_loop.round 1", "strict_loop.alert"} <= set(receiver.span_names())
    assert {"strict_loop.rounds", "strict_loop.alerts"} <= set(receiver.metrics)
    assert [r["event_name"] for r in receiver.logs] == ["strict_loop.alert.delivery"]
    assert not _left(ws_dir)


@pytest.mark.slow  # starts a server process or waits seconds on one
def test_a_command_leaves_the_spool_to_a_long_lived_exporter_of_the_workspace(ws_dir, receiver, monkeypatch):
    """While the MCP server exports the workspace, a CLI command loads no SDK and waits for no collector: the
    server sends what the command recorded (every span comes from the one process: one service.instance.id)."""
    env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
    _task(ws_dir, monkeypatch, env, rounds=0)
    mcp = (sys.executable, "-m", "mcp_server", "--workspace", str(ws_dir))
    server = subprocess.Popen(mcp, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + HUNG
        while not spool.exporter_running(ws_dir / ".agent-loop"):
            assert time.monotonic() < deadline and server.poll() is None, "the MCP server never exported"
            time.sleep(0.02)
        args = ("--task-id", TASK, "--task", "look", "--result-summary", "r", "--verification-summary", "v")
        update = (sys.executable, "-X", "importtime", "-m", "strict_loop", "update_state", *args, "--progress", "made")
        proc = _run(ws_dir, *update, env=env)
        assert proc.returncode == 0, proc.stderr
        imported = [line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time")]
        assert imported and not [m for m in imported if m.startswith("opentelemetry")]  # no SDK loaded
        assert [line for line in proc.stderr.splitlines() if not line.startswith("import time")] == []
        _, said = server.communicate(b"", timeout=HUNG)  # at the end of its input it exits, drained and flushed
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    _quiet(said.decode())
    assert {"strict_loop.round 1", "strict_loop.alert"} <= set(receiver.span_names())
    assert len({span["resource"]["service.instance.id"] for span in receiver.spans}) == 1


def test_a_command_at_a_dead_collector_ends_quietly_and_at_once(ws_dir, monkeypatch):
    env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=DEAD)
    _task(ws_dir, monkeypatch, env)
    began = time.monotonic()
    proc = _cli(ws_dir, "append_event", "--task-id", TASK, "--kind", "note", "--message", "m", env=env)
    assert proc.stderr == "" and time.monotonic() - began < HUNG / 2
    assert not _left(ws_dir)  # taken (and lost at the dead collector, as a long-lived exporter's would be)


@pytest.mark.slow  # waits out the one-shot export's bound on a collector that never answers
def test_a_command_at_a_hung_collector_waits_at_most_its_bound(ws_dir, monkeypatch):
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(8)  # accepts (the kernel's backlog) and never answers
    try:
        env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{hang.getsockname()[1]}")
        _task(ws_dir, monkeypatch, env)
        note = ("append_event", "--task-id", TASK, "--kind", "note", "--message")
        began = time.monotonic()
        _cli(ws_dir, *note, "base", env=_env())  # no telemetry: the command's own cost
        base = time.monotonic() - began
        began = time.monotonic()
        proc = _cli(ws_dir, *note, "hung", env=env)
        extra = time.monotonic() - began - base
    finally:
        hang.close()
    assert proc.stderr == ""
    assert extra < export.ONE_SHOT_S + 2, extra  # the SDK's load, then the bound (the SDK's own default: 10 s)


# ------------------------------------------------------------------ names


def test_names_follow_the_conventions_and_metric_points_carry_no_path(ws_dir, receiver, monkeypatch):
    env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
    _task(ws_dir, monkeypatch, env)
    _recorded(ws_dir, {"kind": "supervisor.started", "data": {"harness": "claude"}})
    run = {"invocation": 1, "ok": True, "session_id": "s-1", "input_tokens": 10, "output_tokens": 2}
    _recorded(ws_dir, {"kind": "supervisor.invocation", "data": {**run, "started_at": "2025-12-31T23:59:00.000Z"}})
    _cli(ws_dir, *WATCH, env=env)
    spans = {s["name"]: s for s in receiver.spans}
    agent = spans["invoke_agent claude"]["attributes"]
    assert agent["gen_ai.agent.name"] == "claude" and agent["gen_ai.provider.name"] == "anthropic"
    assert "gen_ai.system" not in agent and agent["gen_ai.usage.input_tokens"] == 10
    for span in receiver.spans:
        assert "host.name" not in span["attributes"] and span["attributes"]["strict_loop.workspace"] == str(ws_dir)
        assert span["resource"]["host.name"] == socket.gethostname() and span["resource"]["service.instance.id"]
        assert span["resource"]["service.name"] == "strict-agent-loop"
    assert receiver.points
    for point in receiver.points:
        assert point["attributes"]["strict_loop.workspace.id"] == workspace_id(ws_dir)  # the page's id for it
        assert not {"strict_loop.workspace", "host.name"} & set(point["attributes"])
        assert point["resource"]["host.name"] == socket.gethostname()
