"""The exporting side: OpenTelemetry providers built from the standard ``OTEL_*`` variables, and a background
thread that drains a workspace's spool into them every ``DRAIN_S`` seconds.

Run in the long-lived processes only (hook daemon, MCP server, supervisor, watch, alert worker), never on the
agent's path. The SDK's batch processors do the exporting: a dead or slow collector blocks only their thread, and
what waits is bounded (``OTEL_BSP_MAX_QUEUE_SIZE`` spans, ``OTEL_BLRP_MAX_QUEUE_SIZE`` log records, default 2048
each, dropped beyond; metrics are cumulative, so a missed export is made up by the next one). Without the
``otel`` extra installed, ``start`` does nothing and the spool stays at its bound (``spool.MAX_SPOOL_BYTES``).
"""

from __future__ import annotations

import atexit
import math
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from strict_loop.telemetry import spool

DRAIN_S = 1.0
SHUTDOWN_TIMEOUT_MS = 2000
"""At most this long to flush at exit: a dead collector must not hold up the process that exports."""
PROTOCOLS = ("grpc", "http/protobuf")
_STARTED: dict[Path, Drainer] = {}
_TOLD: set[str] = set()
_BATCH = (  # (argument, variable, default (the spec's), least value allowed)
    ("max_queue_size", "MAX_QUEUE_SIZE", 2048, 1),
    ("schedule_delay_millis", "SCHEDULE_DELAY", 0, 1),  # 0: the processor's own default (DELAYS)
    ("max_export_batch_size", "MAX_EXPORT_BATCH_SIZE", 512, 1),
    ("export_timeout_millis", "EXPORT_TIMEOUT", 30000, 0),
)
DELAYS = {"BSP": 5000, "BLRP": 1000}


def _tell(message: str) -> None:
    """Say ``message`` on stderr, once per process: telemetry's trouble is never the work's, but it is not hidden."""
    if message not in _TOLD:
        _TOLD.add(message)
        print(f"strict-loop: {message}", file=sys.stderr, flush=True)


def _number(env: Mapping[str, str], name: str, default: float, least: float, ignored: list[str]) -> float:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < least:
        ignored.append(f"{name}={raw.strip()[:40]!r}")
        return default
    return value


def _batched(processor: Any, exporter: Any, args: Mapping[str, int]) -> Any:
    return processor(
        exporter,
        max_queue_size=args["max_queue_size"],
        schedule_delay_millis=args["schedule_delay_millis"],
        max_export_batch_size=args["max_export_batch_size"],
        export_timeout_millis=args["export_timeout_millis"],
    )


def settings(env: Mapping[str, str]) -> tuple[dict[str, int], dict[str, int], dict[str, float], list[str]]:
    """The span and log batch processors' and the metric reader's arguments from the ``OTEL_*`` variables; a value
    the SDK would refuse (its constructors raise on ``OTEL_BSP_MAX_QUEUE_SIZE=-1``, a metric interval of 0) gives way
    to the default and is named in the list returned. Why here: telemetry must never stop the process it runs in."""
    ignored: list[str] = []
    batches = []
    for prefix, delay in DELAYS.items():
        args = {
            arg: int(_number(env, f"OTEL_{prefix}_{suffix}", default or delay, least, ignored))
            for arg, suffix, default, least in _BATCH
        }
        if args["max_export_batch_size"] > args["max_queue_size"]:
            ignored.append(f"OTEL_{prefix}_MAX_EXPORT_BATCH_SIZE (over OTEL_{prefix}_MAX_QUEUE_SIZE)")
            args["max_export_batch_size"] = min(512, args["max_queue_size"])
        batches.append(args)
    metrics = {
        "export_interval_millis": _number(env, "OTEL_METRIC_EXPORT_INTERVAL", 60000, 1, ignored),
        "export_timeout_millis": _number(env, "OTEL_METRIC_EXPORT_TIMEOUT", 30000, 0, ignored),
    }
    return batches[0], batches[1], metrics, ignored


def _protocol(env: Mapping[str, str], signal: str) -> str:
    value = env.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    return value.strip().lower() if value.strip().lower() in PROTOCOLS else "http/protobuf"


def otlp_exporters(env: Mapping[str, str]) -> tuple[Any, Any, Any]:
    """The official OTLP exporters (span, metric, log) for the configured protocol; each reads its endpoint, headers,
    timeout and compression from the ``OTEL_EXPORTER_OTLP_*`` variables itself."""
    if _protocol(env, "TRACES") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans

        spans: Any = GrpcSpans()
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        spans = OTLPSpanExporter()
    if _protocol(env, "METRICS") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetrics

        metrics: Any = GrpcMetrics()
    else:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        metrics = OTLPMetricExporter()
    if _protocol(env, "LOGS") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs

        logs: Any = GrpcLogs()
    else:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

        logs = OTLPLogExporter()
    return spans, metrics, logs


class Telemetry:
    """The three providers and the converter; ``span_exporter`` etc. given: a test's in-memory exporters."""

    def __init__(
        self,
        env: Optional[Mapping[str, str]] = None,
        *,
        span_exporter: Any = None,
        metric_reader: Any = None,
        log_exporter: Any = None,
    ) -> None:
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from strict_loop import __version__
        from strict_loop.telemetry import names
        from strict_loop.telemetry.convert import Converter, DerivedIds

        self.env = os.environ if env is None else env
        spans, logs, metrics, ignored = settings(self.env)
        if ignored:
            _tell(f"telemetry ignored {', '.join(ignored)}: not a value the OpenTelemetry SDK takes; using the default")
        if span_exporter is None:
            span_exporter, metric_exporter, log_exporter = otlp_exporters(self.env)
            metric_reader = PeriodicExportingMetricReader(
                metric_exporter,
                export_interval_millis=metrics["export_interval_millis"],
                export_timeout_millis=metrics["export_timeout_millis"],
            )
        defaults = Resource({SERVICE_NAME: names.SERVICE, "service.version": __version__})
        resource = defaults.merge(Resource.create({}))  # OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME win
        if not (self.env.get("OTEL_SERVICE_NAME") or "service.name=" in self.env.get("OTEL_RESOURCE_ATTRIBUTES", "")):
            resource = resource.merge(Resource({SERVICE_NAME: names.SERVICE}))
        self.ids = DerivedIds()
        self.tracers = TracerProvider(resource=resource, id_generator=self.ids, shutdown_on_exit=False)
        self.tracers.add_span_processor(_batched(BatchSpanProcessor, span_exporter, spans))
        self.meters = MeterProvider(resource=resource, metric_readers=[metric_reader], shutdown_on_exit=False)
        self.loggers = LoggerProvider(resource=resource, shutdown_on_exit=False)
        self.loggers.add_log_record_processor(_batched(BatchLogRecordProcessor, log_exporter, logs))
        self.converter = Converter(
            self.tracers.get_tracer(names.SCOPE, __version__),
            self.meters.get_meter(names.SCOPE, __version__),
            self.loggers.get_logger(names.SCOPE, __version__),
            self.ids,
            self.env,
        )
        self.lock = threading.Lock()

    def drain(self, manager: Path) -> int:
        """Export what the workspace's spool holds now and its task ledgers vouch for (``vouch``); the number of
        records sent. The others are counted in the spool's ``dropped``."""
        from strict_loop.telemetry import vouch

        with self.lock:
            records, refused = vouch.vouched(manager, spool.drain(manager))
            spool.drop(manager, refused)
            if records:
                self.converter.convert(records)
            return len(records)

    def flush(self, timeout_ms: int = SHUTDOWN_TIMEOUT_MS) -> None:
        self.tracers.force_flush(timeout_ms)
        self.loggers.force_flush(timeout_ms)
        self.meters.force_flush(timeout_ms)

    def shutdown(self) -> None:
        for provider in (self.tracers, self.loggers, self.meters):
            try:
                provider.shutdown()
            except Exception:  # noqa: BLE001 (exiting: a collector's failure is not ours to report)
                continue


class Drainer:
    """A daemon thread draining one workspace's spool into ``telemetry`` until ``stop``."""

    def __init__(self, telemetry: Telemetry, manager: Path, interval_s: float = DRAIN_S) -> None:
        self.telemetry, self.manager, self.interval_s = telemetry, manager, interval_s
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="strict-loop-telemetry", daemon=True)

    def _run(self) -> None:
        while not self.stopping.wait(self.interval_s):
            self._once()

    def _once(self) -> None:
        try:
            self.telemetry.drain(self.manager)
        except Exception:  # noqa: BLE001 (telemetry never ends the process that exports it)
            return

    def stop(self) -> None:
        """Drain once more, then flush within ``SHUTDOWN_TIMEOUT_MS`` and shut the providers down."""
        if self.stopping.is_set():
            return
        self.stopping.set()
        self._once()
        done = threading.Thread(target=self._close, daemon=True)  # a hung collector cannot hold the exit
        done.start()
        done.join(SHUTDOWN_TIMEOUT_MS / 1000 + 1)

    def _close(self) -> None:
        try:
            self.telemetry.flush()
        finally:
            self.telemetry.shutdown()


def start(root: Path, env: Optional[Mapping[str, str]] = None) -> Optional[Drainer]:
    """Export workspace ``root``'s telemetry from this process, when it is configured and the SDK is installed;
    stopped (drained and flushed) at exit. None when off."""
    env = os.environ if env is None else env
    manager = Path(root).resolve() / spool.MANAGER_DIR
    if not spool.enabled(env) or not manager.is_dir():
        return None
    if manager in _STARTED:
        return _STARTED[manager]  # one drainer per workspace and process (the alert worker may run again)
    if spool.linked(manager):
        _tell(f"telemetry is off: {spool.spool_dir(manager)} is not a folder (a symbolic link?); put a folder there")
        return None
    try:
        drainer = Drainer(Telemetry(env), manager)
    except ImportError:  # the otel extra is not installed: the spool waits, bounded
        return None
    except Exception as exc:  # noqa: BLE001 (a value the SDK refuses: the work goes on without telemetry)
        from strict_loop.base import masking

        said = masking.mask(f"{type(exc).__name__}: {exc}", env)[:300]
        _tell(f"telemetry is off in this process: {said} (an OTEL_* value the OpenTelemetry SDK refuses)")
        return None
    _STARTED[manager] = drainer
    where = spool.folder(manager, create=True)  # its being there tells every writer of the workspace to spool
    if where is not None:
        os.close(where)
    drainer.thread.start()
    atexit.register(drainer.stop)
    return drainer
