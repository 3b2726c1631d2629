"""The OpenTelemetry SDK's objects as the standard ``OTEL_*`` variables configure them, for ``export``: the batch
and metric settings (a value the SDK would refuse gives way to its default), the OTLP exporters of the signals
exported, and the Resource.

Why apart: ``export`` runs them; this says what they are. Imports of the SDK stay inside the functions (the module
is imported by processes that may lack the ``otel`` extra).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Optional

from strict_loop.telemetry import spool

PROTOCOLS = ("grpc", "http/protobuf")
_BATCH = (  # (argument, variable, default (the spec's), least value allowed)
    ("max_queue_size", "MAX_QUEUE_SIZE", 2048, 1),
    ("schedule_delay_millis", "SCHEDULE_DELAY", 0, 1),  # 0: the processor's own default (DELAYS)
    ("max_export_batch_size", "MAX_EXPORT_BATCH_SIZE", 512, 1),
    ("export_timeout_millis", "EXPORT_TIMEOUT", 30000, 0),
)
DELAYS = {"BSP": 5000, "BLRP": 1000}


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


def batched(processor: Any, exporter: Any, args: Mapping[str, int]) -> Any:
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


_EXPORTERS = {  # signal -> (gRPC module, HTTP module, class)
    "traces": ("grpc.trace_exporter", "http.trace_exporter", "OTLPSpanExporter"),
    "metrics": ("grpc.metric_exporter", "http.metric_exporter", "OTLPMetricExporter"),
    "logs": ("grpc._log_exporter", "http._log_exporter", "OTLPLogExporter"),
}


def _timeout(env: Mapping[str, str], signal: str, cap: Optional[float]) -> Optional[float]:
    """``cap``, or the person's own timeout if shorter (in seconds, as the Python SDK reads it); None: the SDK's."""
    if cap is None:
        return None
    raw = env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_TIMEOUT") or env.get("OTEL_EXPORTER_OTLP_TIMEOUT") or ""
    try:
        theirs = float(raw)
    except ValueError:
        theirs = math.inf
    return min(cap, theirs) if math.isfinite(theirs) and theirs > 0 else cap


def otlp_exporters(
    env: Mapping[str, str], wanted: frozenset[str] = frozenset(spool.SIGNALS), timeout: Optional[float] = None
) -> tuple[Any, Any, Any]:
    """The official OTLP exporters (span, metric, log) for the configured protocol, None for a signal not ``wanted``;
    each reads its endpoint, headers, timeout and compression from the ``OTEL_EXPORTER_OTLP_*`` variables itself
    (``timeout``, in seconds, caps the last)."""
    from importlib import import_module

    out: list[Any] = []
    for signal, (grpc, http, name) in _EXPORTERS.items():
        if signal not in wanted:
            out.append(None)
            continue
        module = grpc if _protocol(env, signal.upper()) == "grpc" else http
        cls = getattr(import_module(f"opentelemetry.exporter.otlp.proto.{module}"), name)
        seconds = _timeout(env, signal, timeout)
        out.append(cls() if seconds is None else cls(timeout=seconds))
    return out[0], out[1], out[2]


def wanted(env: Mapping[str, str], say: Callable[[str], None]) -> frozenset[str]:
    """The signals to export; an ``OTEL_<SIGNAL>_EXPORTER`` naming only exporters we do not have (``prometheus``,
    ``console``) for a signal with an endpoint is said: that signal is not exported (``none`` is not: it was asked)."""
    wanted = spool.signals(env)
    for signal in spool.SIGNALS:
        variable = f"OTEL_{signal.upper()}_EXPORTER"
        reachable = signal in spool.signals({**env, variable: "otlp"})  # it has an endpoint
        if reachable and signal not in wanted and spool.exporter_names(env, signal) != ["none"]:
            say(f"{variable}={env.get(variable, '')[:40]!r}: strict-loop sends OTLP only (otlp or none); no {signal}")
    return wanted


def reader(exporter: Any, metrics: Mapping[str, float], one_shot_ms: Optional[float] = None) -> Any:
    """The periodic metric reader over ``exporter`` (None: metrics are not exported); a short-lived command's
    (``one_shot_ms``: its export's time limit) exports only when flushed, from no thread of its own."""
    if exporter is None:
        return None
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    return PeriodicExportingMetricReader(
        exporter,
        export_interval_millis=math.inf if one_shot_ms else metrics["export_interval_millis"],
        export_timeout_millis=one_shot_ms or metrics["export_timeout_millis"],
    )


def resource(env: Mapping[str, str]) -> Any:
    """Our defaults (service name and version, the host, this process as the service's instance), under what
    ``OTEL_RESOURCE_ATTRIBUTES`` and ``OTEL_SERVICE_NAME`` say. The host is here, once per export, not on every span;
    the instance keeps each exporting process's cumulative metrics a series of their own."""
    import socket

    from opentelemetry.sdk.resources import Resource

    from strict_loop import __version__
    from strict_loop.telemetry import names

    defaults = Resource(
        {
            names.SERVICE_NAME: names.SERVICE,
            names.SERVICE_VERSION: __version__,
            names.HOST: socket.gethostname(),
            names.SERVICE_INSTANCE: str(uuid.uuid4()),
        }
    )
    resource = defaults.merge(Resource.create({}))  # OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME win
    if not (env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")):
        resource = resource.merge(Resource({names.SERVICE_NAME: names.SERVICE}))
    return resource
