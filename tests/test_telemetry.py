"""Issue 21: the loop's OpenTelemetry, checked against the SDK's in-memory exporters (names and behaviour), and
against a collector that is down: nothing raises, the spool stays bounded, the agent's calls record as before."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from strict_loop import Workspace
from strict_loop.base.fsio import append_line, dumps_line
from strict_loop.base.layout import Layout
from strict_loop.harness import handler
from strict_loop.telemetry import export, names, spool

DEAD = "http://127.0.0.1:9"  # the discard port: nothing listens
TASK = "probe"
SESSION = "sess-21"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": DEAD, "STRICT_LOOP_TASK": TASK, **extra}


def _hook(ws: Path, env: dict[str, str], n: int, command: str = "ls /nope", secret: str = "") -> str:
    payload = {
        "hook_event_name": "PostToolUseFailure",
        "session_id": SESSION,
        "cwd": str(ws),
        "tool_name": "Bash",
        "tool_use_id": f"toolu_{n}",
        "tool_input": {"command": command + secret},
        "error": f"Exit code 2\nls: cannot access '/nope': No such file or directory {secret}",
        "duration_ms": 40 + n,  # Claude Code 2.1.331 sends the tool's own time
    }
    return handler.handle("claude", json.dumps(payload), workspace=str(ws), env=env, cwd=str(ws))


@pytest.fixture
def spiral(ws_dir: Path, monkeypatch) -> Path:
    """A workspace whose task had one round, then an agent failing the same way until the monitor paused it, then a
    person's resume; every event spooled (telemetry configured at a dead collector)."""
    for key, value in _env(SECRET_TOKEN="hunter2-very-secret").items():
        monkeypatch.setenv(key, value)
    ws = Workspace(ws_dir)
    ws.init_state(task_id=TASK, goal="find the probe", global_stop_condition="probe.txt exists")
    ws.append_event(task_id=TASK, kind="round.started", message="look around")
    ws.update_state(
        task_id=TASK, task="look around", result_summary="listed", verification_summary="ls ran", progress="made"
    )
    for n in range(8):
        _hook(ws_dir, dict(os.environ), n, secret=" hunter2-very-secret")
        if ws.supervisor(TASK).paused:
            break
    ws.resume(task_id=TASK, action="continue", note="try another way")
    return ws_dir


def _recorded(ws: Path, task: str, event: dict) -> None:
    """``event`` as the task store records it: a line of the task's event ledger first, then its spool copy (the
    exporter sends only what a ledger holds)."""
    events = Layout(ws).task(task).events
    events.parent.mkdir(parents=True, exist_ok=True)
    seq = len(events.read_bytes().splitlines()) + 1 if events.exists() else 1
    line = {"seq": seq, "message": "", **event}
    append_line(events, dumps_line(line))
    spool.offer(events.parent, task, line, env={"OTEL_EXPORTER_OTLP_ENDPOINT": DEAD})


def _export(ws: Path) -> tuple[list, list, object]:
    spans, logs, reader = InMemorySpanExporter(), InMemoryLogRecordExporter(), InMemoryMetricReader()
    tel = export.Telemetry(os.environ, span_exporter=spans, metric_reader=reader, log_exporter=logs)
    assert tel.drain(ws / ".agent-loop") > 0
    tel.flush()
    return list(spans.get_finished_spans()), list(logs.get_finished_logs()), reader.get_metrics_data()


def _metrics(data) -> dict[str, list]:
    out: dict[str, list] = {}
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                out.setdefault(m.name, []).extend(m.data.data_points)
    return out


def test_rounds_tool_calls_whispers_pauses_and_resumes_become_documented_spans(spiral: Path):
    spans, _, _ = _export(spiral)
    by_name = {}
    for s in spans:
        by_name.setdefault(s.name.split(" ")[0], []).append(s)
    (first_round,) = by_name[names.ROUND_SPAN]
    assert first_round.attributes[names.ROUND] == 1 and first_round.attributes[names.TASK] == TASK
    assert first_round.attributes[names.ROUND_PROGRESS] == "made" and first_round.attributes[names.STOP_VERDICT]
    assert first_round.attributes[names.ROUND_DURATION] >= 0 and first_round.end_time >= first_round.start_time
    tools = by_name[names.TOOL_SPAN]
    assert {t.attributes[names.GENAI_OPERATION] for t in tools} == {"execute_tool"}
    assert {t.attributes[names.GENAI_TOOL] for t in tools} == {"Bash"}
    assert {t.attributes[names.GENAI_CONVERSATION] for t in tools} == {SESSION}  # joins the harness's own spans
    assert {t.attributes[names.HARNESS] for t in tools} == {"claude"}
    # each span lasts the tool's reported time, ending when the result was recorded
    assert sorted(t.end_time - t.start_time for t in tools) == [(40 + n) * 1_000_000 for n in range(len(tools))]
    # the tool calls after round 1 belong to round 2's trace, parented to the span round 2 will have
    assert {t.attributes[names.ROUND] for t in tools} == {2}
    assert len({t.context.trace_id for t in tools}) == 1 and tools[0].context.trace_id != first_round.context.trace_id
    events = [(e.name, dict(e.attributes)) for t in tools for e in t.events]
    whispers = [a for n, a in events if n == names.WHISPER]
    pauses = [a for n, a in events if n == names.PAUSE]
    assert whispers and len(pauses) == 1
    assert pauses[0][names.SIGNALS] and pauses[0][names.DIAGNOSIS]
    (resume,) = by_name[names.RESUME_SPAN]
    assert [(e.name, e.attributes[names.ACTION]) for e in resume.events] == [(names.RESUME, "continue")]
    assert all("hunter2-very-secret" not in json.dumps(dict(s.attributes), default=str) for s in spans)
    assert all("hunter2-very-secret" not in str(dict(e.attributes)) for t in tools for e in t.events)


def test_a_rounds_span_is_the_parent_its_tool_calls_named_before_it_existed(spiral: Path):
    ws = Workspace(spiral)
    _export(spiral)  # round 2's tool calls go out first (another process may have exported them)
    ws.update_state(task_id=TASK, task="another way", result_summary="r", verification_summary="v", progress="none")
    spans, _, _ = _export(spiral)
    (round2,) = [s for s in spans if s.name == f"{names.ROUND_SPAN} 2"]
    assert round2.parent is None and round2.attributes[names.ROUND] == 2


def test_events_are_log_records_and_metrics_have_the_documented_names(spiral: Path):
    _, logs, data = _export(spiral)
    names_seen = {r.log_record.event_name for r in logs}
    assert {names.WHISPER, names.PAUSE, names.RESUME} <= names_seen
    assert all(r.log_record.attributes[names.TASK] == TASK for r in logs)
    metrics = _metrics(data)
    assert {names.M_ROUNDS, names.M_TOOL_CALLS, names.M_WHISPERS, names.M_PAUSES, names.M_RESUMES} <= set(metrics)
    assert {names.M_ROUND_DURATION, names.M_ONSET_TO_WHISPER} <= set(metrics)
    for point in metrics[names.M_TOOL_CALLS]:  # no path per series, and the host is the Resource's
        assert {names.TASK, names.WORKSPACE_ID, names.HARNESS} <= set(point.attributes)
        assert not {names.WORKSPACE, names.HOST} & set(point.attributes)
    assert {rm.resource.attributes[names.HOST] for rm in data.resource_metrics} == {socket.gethostname()}
    assert {p.attributes[names.SIGNAL] for p in metrics[names.M_PAUSES]}
    assert [p.attributes[names.ACTION] for p in metrics[names.M_RESUMES]] == ["continue"]
    assert sum(p.value for p in metrics[names.M_TOOL_CALLS]) >= 4


def test_alert_deliveries_watch_failures_and_remedies_become_events_and_metrics(tmp_path: Path):
    base = {"ts": "2026-01-01T00:00:00.000Z"}
    for rec in (
        {"kind": "alert.delivered", "data": {"channel": "slack", "alert": "t-1"}},
        {"kind": "alert.failed", "data": {"channel": "email", "alert": "t-1"}},
        {"kind": "watch.run", "data": {"failure": "oom", "summary": "CUDA out of memory"}},
        {"kind": "round.started", "data": {"remedy": "halve_batch", "failure": "oom"}},
    ):
        _recorded(tmp_path, "t", {**base, **rec})
    spans, logs, data = _export(tmp_path)
    events = {e.name: dict(e.attributes) for s in spans for e in s.events}
    assert events[names.WATCH_FAILURE][names.FAILURE_CLASS] == "oom"
    assert events[names.REMEDY][names.REMEDY_NAME] == "halve_batch"
    assert {(p.attributes[names.CHANNEL], p.attributes[names.OUTCOME]) for p in _metrics(data)[names.M_ALERTS]} == {
        ("slack", "delivered"),
        ("email", "failed"),
    }
    assert {names.ALERT, names.WATCH_FAILURE, names.REMEDY} <= {r.log_record.event_name for r in logs}


def test_off_unless_configured(ws_dir: Path, monkeypatch):
    for key in spool.ENDPOINTS:
        monkeypatch.delenv(key, raising=False)
    ws = Workspace(ws_dir)
    ws.init_state(task_id=TASK, goal="g", global_stop_condition="c")
    assert not (ws_dir / ".agent-loop" / spool.SPOOL_DIR).exists()
    assert export.start(ws_dir) is None
    assert not spool.enabled({"OTEL_EXPORTER_OTLP_ENDPOINT": DEAD, "OTEL_SDK_DISABLED": "true"})


def test_the_spool_is_bounded_and_concurrent_writers_never_interleave_a_line(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(spool, "MAX_SPOOL_BYTES", 64_000)
    manager = tmp_path / ".agent-loop"
    manager.mkdir()
    taken: list[dict] = []

    def write(k: int) -> None:
        for i in range(400):
            spool.enqueue(manager, {"writer": k, "i": i, "pad": "x" * (100 + k * 50)})

    def drain() -> None:
        for _ in range(20):
            taken.extend(spool.drain(manager))

    threads = [threading.Thread(target=write, args=(k,)) for k in range(4)] + [threading.Thread(target=drain)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    left = spool.spool_dir(manager) / spool.SPOOL_FILE
    assert not left.exists() or left.stat().st_size <= 64_000
    taken.extend(spool.drain(manager))
    assert all(set(r) == {"writer", "i", "pad"} and len(r["pad"]) == 100 + r["writer"] * 50 for r in taken)
    assert len({(r["writer"], r["i"]) for r in taken}) == len(taken)  # each record once
    assert len(taken) + spool.dropped(manager) == 1600  # every record either exported or counted as dropped


@pytest.mark.slow  # waits out the exporter's timeouts on a dead and a hung collector
def test_a_collector_that_is_down_or_hangs_costs_the_agent_nothing(spiral: Path, monkeypatch):
    """A real OTLP exporter at a dead port and at one that accepts and never answers: draining and stopping return
    within the shutdown bound, and nothing raises."""
    import socket

    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(8)  # accepts (the kernel's backlog) and never answers
    try:
        for endpoint in (DEAD, f"http://127.0.0.1:{hang.getsockname()[1]}"):
            monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
            monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
            _hook(spiral, dict(os.environ), 99, command="true")
            drainer = export.Drainer(export.Telemetry(os.environ), spiral / ".agent-loop", interval_s=0.05)
            drainer.thread.start()
            began = time.monotonic()
            drainer.stop()
            assert time.monotonic() - began < export.SHUTDOWN_TIMEOUT_MS / 1000 + 2
            assert not (spool.spool_dir(spiral / ".agent-loop") / spool.SPOOL_FILE).exists()
    finally:
        hang.close()


def test_a_supervised_invocation_and_a_rollback_become_their_span_and_event(tmp_path: Path):
    """The two records the other tests do not reach: one supervised harness run (an ``invoke_agent`` span carrying
    the session id, so it joins the harness's own telemetry) and a person's rollback (an event with its round)."""
    _recorded(
        tmp_path,
        "t",
        {
            "ts": "2026-01-01T00:00:05.000Z",
            "kind": "tool_call",
            "data": {
                "turn": 0,
                "tool": "Bash",
                "args": {"command": "ls"},
                "hook": {"harness": "claude", "session_id": SESSION},
            },
        },
    )
    _recorded(
        tmp_path,
        "t",
        {
            "ts": "2026-01-01T00:01:00.000Z",
            "kind": "supervisor.invocation",
            "data": {
                "invocation": 3,
                "ok": True,
                "session_id": SESSION,
                "input_tokens": 1000,
                "output_tokens": 100,
                "started_at": "2026-01-01T00:00:00.000Z",
            },
        },
    )
    _recorded(
        tmp_path,
        "t",
        {
            "ts": "2026-01-01T00:02:00.000Z",
            "kind": "workspace.rolled_back",
            "data": {"to": 2, "note": "back to the green round"},
        },
    )
    spans, logs, _ = _export(tmp_path)
    [run] = [s for s in spans if s.name.startswith(names.INVOCATION_SPAN)]
    assert run.attributes["gen_ai.conversation.id"] == SESSION and run.attributes["strict_loop.invocation"] == 3
    assert (run.end_time - run.start_time) == 60 * 10**9  # started_at to the record's time
    [rolled] = [e for s in spans for e in s.events if e.name == names.ROLLBACK]
    assert rolled.attributes[names.ROLLBACK_TO] == 2
    assert names.ROLLBACK in {r.log_record.event_name for r in logs}


def _rounds_ledger(ws: Path, count: int, *, replace: bool = False) -> None:
    """``count`` more rounds in task "t"'s iterations.jsonl, recorded a minute apart from 2026-01-01 (``replace``:
    the ledger rewritten with only these, as a repair or a rollback leaves it)."""
    path = Layout(ws).task("t").iterations
    path.parent.mkdir(parents=True, exist_ok=True)
    have = 0 if replace or not path.exists() else len(path.read_bytes().splitlines())
    lines = [
        json.dumps({"iteration": n, "recorded_at": f"2026-01-01T{n // 60:02d}:{n % 60:02d}:00.000Z", "pad": "x" * 300})
        + "\n"
        for n in range(have + 1, have + count + 1)
    ]
    if replace:
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(lines))
        os.replace(tmp, path)
    else:
        with path.open("a") as fh:
            fh.writelines(lines)


def _tool_calls(ws: Path, minute: int, count: int = 1) -> None:
    for n in range(count):
        ts = f"2026-01-01T{minute // 60:02d}:{minute % 60:02d}:30.{n % 1000:03d}Z"
        _recorded(ws, "t", {"ts": ts, "kind": "tool_call", "data": {"turn": n, "tool": "Bash", "hook": {}}})


def _long_lived() -> tuple[export.Telemetry, InMemorySpanExporter]:
    spans = InMemorySpanExporter()
    tel = export.Telemetry(
        os.environ, span_exporter=spans, metric_reader=InMemoryMetricReader(), log_exporter=InMemoryLogRecordExporter()
    )
    return tel, spans


def test_a_long_lived_exporter_follows_the_rounds_ledger_as_it_grows_and_is_rewritten(tmp_path: Path):
    """Issue 26: the rounds ledger is read once, then only what is appended; a ledger rewritten under the exporter
    (fewer rounds, or as many bytes with other rounds) is read again, never counted from stale lines."""
    tel, spans = _long_lived()
    manager = tmp_path / ".agent-loop"
    rounds = []

    def round_of_next_call(minute: int) -> None:
        spans.clear()
        _tool_calls(tmp_path, minute)
        assert tel.drain(manager) == 1
        tel.flush()
        (span,) = spans.get_finished_spans()
        rounds.append(span.attributes[names.ROUND])

    _rounds_ledger(tmp_path, 2)
    round_of_next_call(2)  # after round 2: round 3 is in progress
    _rounds_ledger(tmp_path, 3)
    round_of_next_call(5)  # 5 recorded
    _rounds_ledger(tmp_path, 1, replace=True)
    round_of_next_call(5)  # rolled back to one round (another file in its place)
    path = Layout(tmp_path).task("t").iterations
    path.write_text(path.read_text().replace("T00:01:00", "T00:09:00"))  # in place, as many bytes: round 1 later
    round_of_next_call(5)
    _rounds_ledger(tmp_path, 2)
    round_of_next_call(5)  # appended after the rewrite: rounds 2 and 3 (minutes 2 and 3) were recorded by then
    path.write_text("")
    round_of_next_call(5)
    assert rounds == [3, 6, 2, 1, 3, 1]


def test_exporting_an_event_reads_the_rounds_ledger_once_not_once_per_event(tmp_path: Path, monkeypatch):
    """Issue 26: each event used to re-read the whole rounds ledger (57 ms per event at 10,000 rounds); now a
    long-lived exporter reads it once and then only what is appended (bench/telemetry_export.py times it)."""
    from strict_loop.telemetry import rounds

    taken: list[int] = []

    class CountingOs:
        def __getattr__(self, name: str):
            return getattr(os, name)

        def read(self, fd: int, size: int) -> bytes:
            chunk = os.read(fd, size)
            taken.append(len(chunk))
            return chunk

    monkeypatch.setattr(rounds, "os", CountingOs())
    _rounds_ledger(tmp_path, 4000)
    ledger = Layout(tmp_path).task("t").iterations.stat().st_size
    tel, _ = _long_lived()
    _tool_calls(tmp_path, 4001)
    tel.drain(tmp_path / ".agent-loop")  # the first batch reads the ledger once
    assert sum(taken) == ledger
    taken.clear()
    for _ in range(3):
        _tool_calls(tmp_path, 4001, 60)
        assert tel.drain(tmp_path / ".agent-loop") == 60
    assert sum(taken) == 0  # 180 more events, not one more byte of an unchanged ledger
