"""Issue 25, telemetry items: what an agent can plant in the workspace's telemetry spool (a FIFO, a held lock, a link,
forged or malformed lines, a huge file) and a malformed ``OTEL_*`` value never hang, stop or mislead the loop.

Through the real entry points: the CLI and the hook as subprocesses (with a timeout, so a regression fails instead of
hanging the suite), and the real OTLP exporter sending to a local receiver (tests/otlp_receiver.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from otlp_receiver import Receiver, otlp_receiver

from strict_loop import Workspace
from strict_loop.base.fsio import append_line, dumps_line
from strict_loop.base.layout import Layout
from strict_loop.telemetry import export, spool

TASK = "t"
DEAD = "http://127.0.0.1:9"
HUNG = 10  # seconds: far beyond what any of these takes; reaching it means something blocked


@pytest.fixture
def receiver(monkeypatch) -> Receiver:
    with otlp_receiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
        yield rx


@pytest.fixture
def quiet(monkeypatch) -> None:
    """No telemetry configured: only the spool folder's being there makes the loop spool."""
    for name in (*spool.ENDPOINTS, "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)


def _round(ws: Path) -> Path:
    """A task with one recorded round (its events spooled when telemetry is on); the spool folder."""
    w = Workspace(ws)
    w.init_state(task_id=TASK, goal="g", global_stop_condition="c")
    w.append_event(task_id=TASK, kind="round.started", message="look")
    w.update_state(task_id=TASK, task="look", result_summary="r", verification_summary="v", progress="made")
    folder = ws / ".agent-loop" / spool.SPOOL_DIR
    folder.mkdir(exist_ok=True)
    return folder


def _run(ws: Path, *argv: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            argv, input=stdin, cwd=ws, env=env or dict(os.environ), capture_output=True, text=True, timeout=HUNG
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(argv[:4])} hung (still running after {HUNG}s)")


def _cli(ws: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return _run(ws, sys.executable, "-m", "strict_loop", *args, env=env)


def _append(ws: Path, message: str) -> None:
    proc = _cli(ws, "append_event", "--task-id", TASK, "--kind", "note", "--message", message)
    assert proc.returncode == 0, proc.stderr
    assert message in (Layout(ws).task(TASK).events).read_text()  # the ledger has it: only telemetry gave way


def _hook(ws: Path, n: int) -> None:
    payload = {
        "hook_event_name": "PostToolUse",
        "session_id": "s25",
        "cwd": str(ws),
        "tool_name": "Bash",
        "tool_use_id": f"toolu_{n}",
        "tool_input": {"command": f"echo {n}"},
        "tool_response": {"stdout": str(n), "stderr": "", "interrupted": False},
    }
    env = {**os.environ, "STRICT_LOOP_TASK": TASK}
    proc = _run(ws, sys.executable, "-m", "strict_loop", "hook", "claude", stdin=json.dumps(payload), env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"toolu_{n}" in (Layout(ws).task(TASK).events).read_text()


def _export(ws: Path) -> int:
    """The real exporter, configured from the environment (the receiver), drains the workspace once and flushes."""
    tel = export.Telemetry(os.environ)
    try:
        return tel.drain(ws / ".agent-loop")
    finally:
        tel.flush()
        tel.shutdown()


# ------------------------------------------------------------------ item 1: nothing planted there blocks


def test_a_fifo_at_the_spool_path_holds_up_no_event_and_no_hook(ws_dir: Path, quiet):
    folder = _round(ws_dir)
    os.mkfifo(folder / spool.SPOOL_FILE)
    _append(ws_dir, "past the fifo")
    _hook(ws_dir, 1)
    assert spool.dropped(ws_dir / ".agent-loop") >= 2  # given up, and counted


def test_a_fifo_at_the_dropped_count_holds_up_no_event(ws_dir: Path, quiet):
    folder = _round(ws_dir)
    (folder / spool.SPOOL_FILE).write_bytes(b"{}\n" * (spool.MAX_SPOOL_BYTES // 3))  # full: the next one is dropped
    os.mkfifo(folder / spool.DROPPED_FILE)
    _append(ws_dir, "past the full spool")


@pytest.mark.slow  # about a second or more of waiting on processes: the fast tier stays under 30 s
def test_a_spool_lock_held_by_someone_else_holds_up_no_event(ws_dir: Path, quiet):
    folder = _round(ws_dir)
    fd = os.open(folder / spool.SPOOL_FILE, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as `flock spool.jsonl sleep infinity` would
        _append(ws_dir, "past the held lock")
    finally:
        os.close(fd)


def test_an_exporting_process_exits_past_fifos_and_still_exports_the_rest(ws_dir: Path, receiver: Receiver):
    """``strict-loop watch`` exports at exit: FIFOs left as a dead exporter's batch and as the drop count cost
    nothing, and the task's round still arrives."""
    folder = _round(ws_dir)
    os.mkfifo(folder / f"{spool.DRAINING}1-dead")
    os.mkfifo(folder / spool.DROPPED_FILE)
    proc = _cli(ws_dir, "watch", "--task-id", TASK, "--heartbeat-s", "3600", "--", "true")
    assert proc.returncode == 0, proc.stderr
    assert "strict_loop.round 1" in receiver.span_names()
    assert not (folder / f"{spool.DRAINING}1-dead").exists()  # the planted FIFO is removed, never opened blocking


# ------------------------------------------------------------------ item 11: only what a ledger holds is exported


def test_spool_records_no_ledger_holds_are_not_exported(ws_dir: Path, receiver: Receiver):
    folder = _round(ws_dir)
    path = folder / spool.SPOOL_FILE
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    (done,) = [r for r in lines if r["kind"] == "round.completed"]
    forged = [
        {**done, "seq": 9999, "kind": "spiral.resumed", "message": "a person resumed", "data": {"action": "continue"}},
        {**done, "data": {**done["data"], "iteration": 5}},  # a real seq, altered
        {**done, "task": "ghost"},  # no such task
        {**done, "task": "../../elsewhere"},  # not a task id
        done,  # the real one again: sent once
    ]
    with path.open("a") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in forged)
    assert _export(ws_dir) == len(lines)
    names = receiver.span_names()
    assert names.count("strict_loop.round 1") == 1 and "strict_loop.round 5" not in names
    assert not any(n.startswith("strict_loop.resume") for n in names)
    assert spool.dropped(ws_dir / ".agent-loop") == len(forged)


# ------------------------------------------------------------------ item 12: a spool of any size is read bounded


def test_a_huge_spool_is_read_in_bounded_memory(ws_dir: Path, receiver: Receiver):
    """A spool the agent grew to 64 MiB (sparse): the exporter reads what a writer can make at most, exports the
    records in it and drops the rest; its peak memory grows by a few MiB, not by the file's size."""
    folder = _round(ws_dir)
    with (folder / spool.SPOOL_FILE).open("ab") as fh:
        fh.truncate(64 << 20)
    script = (
        "import os, resource, sys\n"
        "from pathlib import Path\n"
        "from strict_loop.telemetry import export\n"
        "tel = export.Telemetry(os.environ)\n"
        "peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "before = peak()\n"
        "sent = tel.drain(Path(sys.argv[1]))\n"
        "grew = (peak() - before) * (1 if sys.platform == 'darwin' else 1024)\n"
        "tel.flush(); tel.shutdown()\n"
        "print(sent, grew)\n"
    )
    proc = _run(ws_dir, sys.executable, "-c", script, str(ws_dir / ".agent-loop"))
    assert proc.returncode == 0, proc.stderr
    sent, grew = map(int, proc.stdout.split())
    assert sent >= 3 and grew < 16 << 20, (sent, grew)
    assert "strict_loop.round 1" in receiver.span_names()
    assert not (folder / spool.SPOOL_FILE).exists() and spool.dropped(ws_dir / ".agent-loop") == 1


# ------------------------------------------------------------------ item 13: a bad line costs that line alone


def test_malformed_spool_lines_are_skipped_and_counted_and_the_rest_is_exported(ws_dir: Path, receiver: Receiver):
    folder = _round(ws_dir)
    bad = [b"[" * 50_000, b"\xff\xfe not utf-8", b"[1, 2]", b'{"unterminated']
    with (folder / spool.SPOOL_FILE).open("ab") as fh:
        fh.writelines(line + b"\n" for line in bad)
    # and a ledger line the loop did not write as it does (a turn that is not a number): exported as best it can be
    events = Layout(ws_dir).task(TASK).events
    seq = len(events.read_bytes().splitlines()) + 1
    odd = {
        "seq": seq,
        "ts": "2026-01-01T00:00:00.000Z",
        "kind": "spiral.whisper",
        "message": "m",
        "data": {"turn": "x"},
    }
    append_line(events, dumps_line(odd))
    spool.offer(events.parent, TASK, odd)
    assert _export(ws_dir) > 0
    names = receiver.span_names()
    assert "strict_loop.round 1" in names and "strict_loop.whisper" in names
    assert spool.dropped(ws_dir / ".agent-loop") == len(bad)


# ------------------------------------------------------------------ item 14: a linked spool folder is refused


def test_a_linked_telemetry_folder_sends_nothing_out_of_the_workspace(ws_dir: Path, tmp_path: Path, receiver):
    ws = ws_dir
    Workspace(ws).init_state(task_id=TASK, goal="g", global_stop_condition="c")
    outside = tmp_path / "outside"
    outside.mkdir()
    linked = ws / ".agent-loop" / spool.SPOOL_DIR
    shutil.rmtree(linked)  # made by init_state's first event (telemetry is on): now a link in its place
    linked.symlink_to(outside)
    _append(ws, "not out there")
    assert list(outside.iterdir()) == []
    proc = _cli(ws, "watch", "--task-id", TASK, "--heartbeat-s", "3600", "--", "true")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("telemetry is off") == 1 and "is not a folder" in proc.stderr
    assert list(outside.iterdir()) == [] and receiver.span_names() == []


# ------------------------------------------------------------------ item 15: a malformed OTEL_* value stops nothing


@pytest.mark.slow  # starts a server process or waits seconds on one
def test_malformed_otel_values_are_ignored_once_and_watch_goes_on(ws_dir: Path, receiver: Receiver):
    _round(ws_dir)
    bad = {"OTEL_BSP_MAX_QUEUE_SIZE": "-1", "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE": "0", "OTEL_METRIC_EXPORT_INTERVAL": "x"}
    proc = _cli(ws_dir, "watch", "--task-id", TASK, "--heartbeat-s", "3600", "--", "true", env={**os.environ, **bad})
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if "telemetry ignored" in line]
    assert len(said) == 1 and all(name in said[0] for name in bad)
    assert "strict_loop.round 1" in receiver.span_names()  # the defaults took their place: telemetry still works
    grpc = {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_COMPRESSION": "zip"}  # the SDK raises
    proc = _cli(ws_dir, "watch", "--task-id", TASK, "--heartbeat-s", "3600", "--", "true", env={**os.environ, **grpc})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("telemetry is off") == 1 and "OTEL_EXPORTER_OTLP_COMPRESSION" in proc.stderr


@pytest.mark.slow  # starts a server process or waits seconds on one
def test_a_malformed_otel_value_does_not_stop_the_mcp_server(ws_dir: Path, receiver: Receiver):
    _round(ws_dir)
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    env = {**os.environ, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "99999"}  # over the queue's size: the SDK raises
    proc = _run(
        ws_dir, sys.executable, "-m", "mcp_server", "--workspace", str(ws_dir), stdin=json.dumps(hello) + "\n", env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[0])["id"] == 1
    assert proc.stderr.count("telemetry ignored OTEL_BSP_MAX_EXPORT_BATCH_SIZE") == 1
