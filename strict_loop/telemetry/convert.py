"""Spooled ledger events to OpenTelemetry spans, span events, log records and metrics (in the exporting process).

Spans are made after the fact, with the times the ledger recorded: a round's span runs from its announcement (or
the previous round's end) to its record; its trace and span ids are derived from (workspace, task, round), so the
tool calls, resumes, alerts and stop checks of that round, exported earlier, by another process, already name it
as their parent. A tool call belongs to the round in progress when it was recorded (the task's iterations.jsonl
says which: ``rounds``). Whispers and pauses are events on the span of the tool call that caused them.

Metric points carry the workspace's short id, never its path (one series per path would be cardinality); the host
and the exporting process are on the Resource (``export``), once per batch, not on every span.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Optional

from opentelemetry import trace
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from strict_loop.base import masking
from strict_loop.base.timefmt import parse
from strict_loop.telemetry import names as N
from strict_loop.telemetry.rounds import RoundTimes


class DerivedIds(RandomIdGenerator):
    """Random ids, except for the span being started with ``derived``: a round's span gets the ids its children,
    exported earlier, already point to."""

    def __init__(self) -> None:
        self._next = threading.local()

    def derived(self, trace_id: int, span_id: int) -> None:
        self._next.ids = (trace_id, span_id)

    def generate_trace_id(self) -> int:
        ids = getattr(self._next, "ids", None)
        return ids[0] if ids else super().generate_trace_id()

    def generate_span_id(self) -> int:
        ids = getattr(self._next, "ids", None)
        if ids:
            self._next.ids = None
            return int(ids[1])
        return super().generate_span_id()


def _digest(text: str, size: int) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=size).digest(), "big") or 1


def round_ids(workspace: str, task: str, number: int) -> tuple[int, int]:
    """(trace id, span id) of a round's span."""
    key = f"{workspace}\0{task}\0{number}"
    return _digest(key, 16), _digest(key + "\0span", 8)


def workspace_id(workspace: str) -> str:
    """The short, stable id of a workspace: the one the page's links use (``storage.workspaces.workspace_id``, which
    this layer may not import), so a metric's series leads to the task's page."""
    real = os.path.realpath(workspace)
    return hashlib.blake2b(real.encode("utf-8", "surrogateescape"), digest_size=6).hexdigest()


def _ns(ts: Any) -> Optional[int]:
    try:
        return int(parse(str(ts)).timestamp() * 1e9)
    except (ValueError, TypeError):
        return None


class Converter:
    """Turns batches of spooled records into telemetry on the given tracer, meter and logger."""

    def __init__(self, tracer: Any, meter: Any, logger: Any, ids: DerivedIds, env: Mapping[str, str]) -> None:
        self.tracer, self.logger, self.ids, self.env = tracer, logger, ids, env
        self.harness: dict[str, str] = {}  # task -> the harness last seen recording its turns
        self.rounds = RoundTimes()
        self.ws_ids: dict[str, str] = {}
        self.counters = {name: meter.create_counter(name, unit="1") for name in N.COUNTERS}
        self.histograms = {
            N.M_ROUND_DURATION: meter.create_histogram(N.M_ROUND_DURATION, unit="s"),
            N.M_ONSET_TO_WHISPER: meter.create_histogram(N.M_ONSET_TO_WHISPER, unit="{turn}"),
        }

    # ------------------------------------------------------------------ helpers

    def common(self, rec: Mapping[str, Any]) -> dict[str, Any]:
        """The attributes of every span and log record: the metric point's (``point``) and the workspace's path."""
        return {**self.point(rec), N.WORKSPACE: str(rec.get("workspace", ""))}

    def point(self, rec: Mapping[str, Any]) -> dict[str, Any]:
        """The attributes of every metric point: no path, so a series is one per task, not one per folder name."""
        task, workspace = str(rec.get("task", "")), str(rec.get("workspace", ""))
        if workspace not in self.ws_ids:
            self.ws_ids[workspace] = workspace_id(workspace)
        return {N.TASK: task, N.WORKSPACE_ID: self.ws_ids[workspace], N.HARNESS: self.harness.get(task, "none")}

    def mask(self, text: Any) -> str:
        return masking.mask(str(text or ""), self.env)

    def count(self, name: str, rec: Mapping[str, Any], extra: Optional[Mapping[str, Any]] = None) -> None:
        self.counters[name].add(1, {**self.point(rec), **(extra or {})})

    def round_of(self, rec: Mapping[str, Any], *, finished: bool = False) -> int:
        """The round in progress when ``rec`` was recorded (``finished``: the round just recorded)."""
        done = self.rounds.done_by(str(rec.get("workspace")), str(rec.get("task")), str(rec.get("ts", "")))
        return max(done, 1) if finished else done + 1

    def parent(self, rec: Mapping[str, Any], number: int) -> Any:
        trace_id, span_id = round_ids(str(rec.get("workspace")), str(rec.get("task")), number)
        ctx = SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
        return trace.set_span_in_context(NonRecordingSpan(ctx))

    def event(self, span: Any, name: str, rec: Mapping[str, Any], attrs: dict[str, Any]) -> None:
        """One span event, and the same as a log record (for backends that prefer logs)."""
        at = _ns(rec.get("ts"))
        attrs = {k: v for k, v in attrs.items() if v is not None}
        span.add_event(name, attrs, timestamp=at)
        self.logger.emit(
            timestamp=at,
            body=self.mask(rec.get("message")),
            attributes={**self.common(rec), **attrs},
            event_name=name,
            context=trace.set_span_in_context(span),
        )

    # ------------------------------------------------------------------ records

    def convert(self, records: Iterable[Mapping[str, Any]]) -> None:
        """A batch, in ledger order; a record that cannot be converted is skipped (the rest still goes)."""
        records = list(records)
        self.rounds.batch()  # each task's rounds ledger: looked at once for this batch, its new lines read
        later: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
        for rec in records:  # whispers and pauses ride on their turn's tool span
            if rec.get("kind") in ("spiral.whisper", "spiral.paused") and isinstance(rec.get("data"), dict):
                later.setdefault((str(rec.get("task")), _turn(rec["data"])), []).append(rec)
        for i, rec in enumerate(records):
            try:
                self.one(rec, later, records[i + 1 : i + 4])
            except Exception:  # noqa: BLE001 (telemetry never breaks the process exporting it)
                continue
        for recs in later.values():  # their tool call went out in an earlier batch: a span of their own
            for rec in recs:
                try:
                    self.standalone(rec, N.WHISPER if rec.get("kind") == "spiral.whisper" else N.PAUSE)
                except Exception:  # noqa: BLE001 (one bad record costs itself, never the rest of the batch)
                    continue

    def one(
        self,
        rec: Mapping[str, Any],
        later: dict[tuple[str, int], list[Mapping[str, Any]]],
        following: list[Mapping[str, Any]],
    ) -> None:
        kind, data = str(rec.get("kind", "")), rec.get("data")
        data = data if isinstance(data, dict) else {}
        if kind == "tool_call":
            self.tool(rec, data, later.pop((str(rec.get("task")), _turn(data)), []))
        elif kind == "round.completed":
            self.round(rec, data, following)
        elif kind == "stop.checked":
            self.short(rec, N.STOP_SPAN, self.round_of(rec, finished=True), {N.STOP_VERDICT: data.get("verdict")})
        elif kind == "spiral.resumed":
            self.count(N.M_RESUMES, rec, {N.ACTION: str(data.get("action"))})
            self.short(rec, N.RESUME_SPAN, None, {}, (N.RESUME, {N.ACTION: data.get("action")}))
        elif kind == "workspace.rolled_back":
            self.short(rec, N.RESUME_SPAN, None, {}, (N.ROLLBACK, {N.ROLLBACK_TO: data.get("to")}))
        elif kind.startswith("alert.") and data.get("channel"):
            outcome = kind.split(".", 1)[1]
            attrs = {N.CHANNEL: str(data["channel"]), N.OUTCOME: outcome}
            self.count(N.M_ALERTS, rec, attrs)
            self.short(rec, N.ALERT_SPAN, None, {}, (N.ALERT, attrs))
        elif kind == "watch.run" and data.get("failure"):
            attrs = {N.FAILURE_CLASS: str(data["failure"])}
            self.count(N.M_WATCH_FAILURES, rec, attrs)
            self.short(
                rec, N.WATCH_SPAN, None, {}, (N.WATCH_FAILURE, {**attrs, N.DIAGNOSIS: self.mask(data.get("summary"))})
            )
        elif kind == "round.started" and data.get("remedy"):
            attrs = {N.REMEDY_NAME: str(data["remedy"]), N.FAILURE_CLASS: str(data.get("failure"))}
            self.count(N.M_REMEDIES, rec, attrs)
            self.short(rec, N.WATCH_SPAN, None, {}, (N.REMEDY, attrs))
        elif kind == "supervisor.started" and data.get("harness"):
            self.harness[str(rec.get("task"))] = str(data["harness"])
        elif kind == "supervisor.invocation":
            self.invocation(rec, data)

    def tool(self, rec: Mapping[str, Any], data: dict[str, Any], riders: list[Mapping[str, Any]]) -> None:
        raw = data.get("hook")
        hook: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if hook.get("harness"):
            self.harness[str(rec.get("task"))] = str(hook["harness"])
        tool = str(data.get("tool") or "unknown")
        number = self.round_of(rec)
        attrs = {
            **self.common(rec),
            N.GENAI_OPERATION: N.EXECUTE_TOOL,
            N.GENAI_TOOL: tool,
            N.ROUND: number,
            N.TURN: data.get("turn"),
            N.GENAI_CONVERSATION: hook.get("session_id") or None,
            N.GENAI_CALL_ID: hook.get("tool_use_id"),
        }
        at = _ns(rec.get("ts"))  # recorded when the harness reported the result: the call's end
        took = hook.get("duration_ms")
        began = at - int(took * 1_000_000) if at is not None and isinstance(took, (int, float)) and took >= 0 else at
        span = self.tracer.start_span(
            f"{N.TOOL_SPAN} {tool}", context=self.parent(rec, number), start_time=began, attributes=_set(attrs)
        )
        self.count(N.M_TOOL_CALLS, rec, {N.GENAI_TOOL: tool})
        for rider in riders:
            self.monitor_event(span, rider)
        span.end(end_time=at)

    def monitor_event(self, span: Any, rec: Mapping[str, Any]) -> None:
        """A whisper or a pause: the span event, the log record and its metrics."""
        raw = rec.get("data")
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        signals = [s for s in data.get("signals", []) if isinstance(s, dict)]
        kinds = sorted({str(s.get("kind")) for s in signals})
        attrs: dict[str, Any] = {N.SIGNALS: kinds, N.TURN: data.get("turn")}
        if rec.get("kind") == "spiral.whisper":
            attrs.update({N.LEVEL: data.get("level"), N.DIAGNOSIS: self.mask(rec.get("message"))})
            self.event(span, N.WHISPER, rec, attrs)
            self.count(N.M_WHISPERS, rec)
            onsets = [min(s["turns"]) for s in signals if isinstance(s.get("turns"), list) and s["turns"]]
            turn = data.get("turn")
            if data.get("level") == 1 and onsets and isinstance(turn, int):
                self.histograms[N.M_ONSET_TO_WHISPER].record(max(0, turn - min(onsets)), self.point(rec))
        else:
            attrs[N.DIAGNOSIS] = self.mask(rec.get("message"))
            self.event(span, N.PAUSE, rec, attrs)
            for kind in kinds or ["none"]:
                self.count(N.M_PAUSES, rec, {N.SIGNAL: kind})

    def standalone(self, rec: Mapping[str, Any], name: str) -> None:
        at = _ns(rec.get("ts"))
        span = self.tracer.start_span(
            name, context=self.parent(rec, self.round_of(rec)), start_time=at, attributes=_set(self.common(rec))
        )
        self.monitor_event(span, rec)
        span.end(end_time=at)

    def short(
        self,
        rec: Mapping[str, Any],
        name: str,
        number: Optional[int],
        attrs: dict[str, Any],
        event: Optional[tuple[str, dict[str, Any]]] = None,
    ) -> None:
        """A span of an instant (a resume, an alert's delivery, a stop check) in its round's trace."""
        number = self.round_of(rec) if number is None else number
        at = _ns(rec.get("ts"))
        span = self.tracer.start_span(
            name,
            context=self.parent(rec, number),
            start_time=at,
            attributes=_set({**self.common(rec), N.ROUND: number, **attrs}),
        )
        if event is not None:
            self.event(span, event[0], rec, event[1])
        span.end(end_time=at)

    def round(self, rec: Mapping[str, Any], data: dict[str, Any], following: list[Mapping[str, Any]]) -> None:
        number = int(data.get("iteration", 0))
        verdict = data.get("verdict")
        for nxt in following:  # the stop checks that ran right after the round, when they are in this batch
            if nxt.get("kind") == "stop.checked" and nxt.get("task") == rec.get("task") and verdict is None:
                verdict = (nxt.get("data") or {}).get("verdict")
        end = _ns(rec.get("ts"))
        start = _ns(data.get("started_at")) or end
        attrs = {
            **self.common(rec),
            N.ROUND: number,
            N.ROUND_STATUS: data.get("status"),
            N.ROUND_PROGRESS: data.get("progress"),
            N.ROUND_DURATION: data.get("duration_s"),
            N.STOP_VERDICT: verdict or "not_checked",
        }
        self.ids.derived(*round_ids(str(rec.get("workspace")), str(rec.get("task")), number))
        span = self.tracer.start_span(f"{N.ROUND_SPAN} {number}", start_time=start, attributes=_set(attrs))
        span.end(end_time=end)
        self.count(N.M_ROUNDS, rec, {N.ROUND_STATUS: str(data.get("status"))})
        if isinstance(data.get("duration_s"), (int, float)):
            self.histograms[N.M_ROUND_DURATION].record(float(data["duration_s"]), self.point(rec))

    def invocation(self, rec: Mapping[str, Any], data: dict[str, Any]) -> None:
        """One supervised harness run: ``invoke_agent`` named by the harness (``gen_ai.agent.name``), with its model's
        provider where the harness has one, and its session id."""
        end = _ns(rec.get("ts"))
        harness = self.harness.get(str(rec.get("task")), "unknown")
        attrs = {
            **self.common(rec),
            N.GENAI_OPERATION: N.INVOKE_AGENT,
            N.GENAI_AGENT: harness,
            N.GENAI_PROVIDER: N.PROVIDERS.get(harness),
            N.GENAI_CONVERSATION: data.get("session_id"),
            N.INVOCATION: data.get("invocation"),
            N.INVOCATION_OK: data.get("ok"),
            N.GENAI_INPUT_TOKENS: data.get("input_tokens"),
            N.GENAI_OUTPUT_TOKENS: data.get("output_tokens"),
        }
        span = self.tracer.start_span(
            f"{N.INVOCATION_SPAN} {harness}", start_time=_ns(data.get("started_at")) or end, attributes=_set(attrs)
        )
        span.end(end_time=end)


def _turn(data: Mapping[str, Any]) -> int:
    """A record's turn; -1 when it has none that is a whole number (a damaged line must not stop its batch)."""
    turn = data.get("turn", -1)
    return turn if isinstance(turn, int) else -1


def _set(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes OTel accepts: no None, nothing nested."""
    return {k: v for k, v in attrs.items() if v is not None and not isinstance(v, dict)}
