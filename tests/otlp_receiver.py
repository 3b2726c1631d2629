"""A local OTLP/HTTP receiver for tests: what the real exporters send (protobuf, ``/v1/traces``, ``/v1/logs``,
``/v1/metrics``) is decoded with the official OTLP protobuf classes and kept for the test to read.

Why not Phoenix (tests/test_telemetry_phoenix.py): it takes seconds to start and is installed separately; this
answers in microseconds, so the hostile telemetry cases run in the fast tier against the real wire format.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def _value(any_value: Any) -> Any:
    which = any_value.WhichOneof("value")
    if which == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, which) if which else None


def _attrs(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


def _points(metric: Any) -> Any:
    kind = metric.WhichOneof("data")
    return getattr(metric, kind).data_points if kind else []


class Receiver:
    """Every request's path; spans (name, attributes, event names, resource), log records (event name, attributes,
    resource), metric names and data points (name, attributes, resource) received. ``refuse`` maps a path to the
    status answered there instead of 200 (Phoenix answers 405 to ``/v1/logs`` and ``/v1/metrics``)."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.spans: list[dict[str, Any]] = []
        self.logs: list[dict[str, Any]] = []
        self.metrics: list[str] = []
        self.points: list[dict[str, Any]] = []
        self.refuse: dict[str, int] = {}
        self.lock = threading.Lock()
        self.url = ""

    def take(self, path: str, body: bytes) -> None:
        with self.lock:
            self.paths.append(path)
            if path in self.refuse:
                return
            if path.endswith("/v1/traces"):
                req = ExportTraceServiceRequest.FromString(body)
                for rs in req.resource_spans:
                    for ss in rs.scope_spans:
                        for span in ss.spans:
                            events = [e.name for e in span.events]
                            self.spans.append(
                                {
                                    "name": span.name,
                                    "attributes": _attrs(span.attributes),
                                    "events": events,
                                    "resource": _attrs(rs.resource.attributes),
                                }
                            )
            elif path.endswith("/v1/logs"):
                logs = ExportLogsServiceRequest.FromString(body)
                for rl in logs.resource_logs:
                    for sl in rl.scope_logs:
                        for rec in sl.log_records:
                            name = getattr(rec, "event_name", "")
                            attrs, resource = _attrs(rec.attributes), _attrs(rl.resource.attributes)
                            self.logs.append({"event_name": name, "attributes": attrs, "resource": resource})
            elif path.endswith("/v1/metrics"):
                metrics = ExportMetricsServiceRequest.FromString(body)
                for rm in metrics.resource_metrics:
                    resource = _attrs(rm.resource.attributes)
                    for sm in rm.scope_metrics:
                        for m in sm.metrics:
                            self.metrics.append(m.name)
                            self.points.extend(
                                {"name": m.name, "attributes": _attrs(p.attributes), "resource": resource}
                                for p in _points(m)
                            )

    def span_names(self) -> list[str]:
        with self.lock:
            return sorted(s["name"] for s in self.spans)


@contextmanager
def otlp_receiver(port: int = 0) -> Iterator[Receiver]:
    """A receiver on a free loopback port (or ``port``: OSError when it is taken), its base URL in ``.url`` (for
    ``OTEL_EXPORTER_OTLP_ENDPOINT``)."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server hook's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            encoding = self.headers.get("Content-Encoding", "")
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            receiver.take(self.path, body)
            self.send_response(receiver.refuse.get(self.path, 200))
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
