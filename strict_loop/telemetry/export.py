"""The exporting side: OpenTelemetry providers built from the standard ``OTEL_*`` variables, and a background
thread that drains a workspace's spool into them every ``DRAIN_S`` seconds.

Run in the long-lived processes (hook daemon, MCP server, supervisor, watch, alert worker), never on the agent's
path; a short-lived CLI command exports what it spooled as it ends, within ``ONE_SHOT_S`` (``send_spooled``).
Only the signals the variables configure are exported (``spool.signals``: an endpoint, and not
``OTEL_<SIGNAL>_EXPORTER=none``). The SDK's batch processors do the exporting: a dead or slow collector blocks only
their thread, and what waits is bounded (``OTEL_BSP_MAX_QUEUE_SIZE`` spans, ``OTEL_BLRP_MAX_QUEUE_SIZE`` log
records, default 2048 each, dropped beyond; metrics are cumulative, so a missed export is made up by the next one).
The SDK's own log lines (each retry, each failure) never reach the person's terminal: the first failure of each
signal is said once, in one line (``_Hush``). Without the ``otel`` extra installed, nothing is exported and the
spool stays at its bound (``spool.MAX_SPOOL_BYTES``).
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from strict_loop.telemetry import sdkconfig, spool

DRAIN_S = 1.0
SHUTDOWN_TIMEOUT_MS = 2000
"""At most this long to flush at exit: a dead collector must not hold up the process that exports."""
ONE_SHOT_S = 1.0
"""The most a short-lived command spends exporting at its end, after the SDK is loaded: a collector that refuses the
connection costs milliseconds (no retry fits in ``ONE_SHOT_REQUEST_S``), one that hangs this long."""
ONE_SHOT_REQUEST_S = 0.75
"""One export request's timeout in a short-lived command (or the person's ``OTEL_EXPORTER_OTLP_*TIMEOUT``, if shorter):
under the exporter's first retry delay (1 s), so a dead collector is given up at once, not retried."""
_STARTED: dict[Path, Drainer] = {}
_TOLD: set[str] = set()


def _tell(message: str) -> None:
    """Say ``message`` on stderr, once per process: telemetry's trouble is never the work's, but it is not hidden."""
    if message not in _TOLD:
        _TOLD.add(message)
        print(f"strict-loop: {message}", file=sys.stderr, flush=True)


def _silent(message: str) -> None:
    """A short-lived command's stderr is its caller's (often the agent's): its telemetry says nothing there."""


_QUERY = re.compile(r"\?[^\s'\")]*")
_LOGGERS = {"traces": "trace_exporter", "metrics": "metric_exporter", "logs": "_log_exporter"}
"""The OTLP exporters' logger names, by signal (the SDK logs a failure under its exporter's module)."""


class _Hush(logging.Handler):
    """The OpenTelemetry SDK's log lines in a process of ours. Left alone, Python prints every one on stderr (each
    retry of a dead collector, each 405 of a backend that takes traces only); here the first failure of each signal
    is said once, masked, in one line that names the variable turning it off, and the rest are dropped. ``loud`` is
    False while only short-lived commands export in this process (their stderr is the agent's)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.loud = False
        self.said: set[str] = set()
        self.env: Mapping[str, str] = os.environ

    def emit(self, record: logging.LogRecord) -> None:
        if not self.loud or record.name in self.said:
            return
        self.said.add(record.name)
        try:
            from strict_loop.base import masking

            text = _QUERY.sub("?***", masking.mask(record.getMessage(), self.env)).replace("\n", " ")[:300]
        except Exception:  # noqa: BLE001 (a message that cannot be rendered is not worth a traceback)
            text = record.name
        signal = next((s for s, word in _LOGGERS.items() if word in record.name), "")
        hint = f"; if the collector takes no {signal}, set OTEL_{signal.upper()}_EXPORTER=none" if signal else ""
        said = f"strict-loop: telemetry {signal or 'export'} not sent: {text}{hint} (later failures are not shown)"
        print(said, file=sys.stderr, flush=True)


_HUSH = _Hush()


def _hush(env: Mapping[str, str], loud: bool) -> None:
    """Route the SDK's logger through ``_HUSH`` (once per process); ``loud`` when a long-lived exporter runs here."""
    sdk = logging.getLogger("opentelemetry")
    if _HUSH not in sdk.handlers:
        sdk.addHandler(_HUSH)
        sdk.propagate = False
    _HUSH.env = env
    _HUSH.loud = _HUSH.loud or loud


class Telemetry:
    """The three providers and the converter; ``span_exporter`` etc. given: a test's in-memory exporters. Only the
    signals ``spool.signals`` names get an exporter (the others' providers record into nothing). ``one_shot``: a
    short-lived command's (no periodic metric export, requests capped at ``ONE_SHOT_REQUEST_S``, nothing said)."""

    def __init__(
        self,
        env: Optional[Mapping[str, str]] = None,
        *,
        span_exporter: Any = None,
        metric_reader: Any = None,
        log_exporter: Any = None,
        one_shot: bool = False,
    ) -> None:
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from strict_loop import __version__
        from strict_loop.telemetry import names
        from strict_loop.telemetry.convert import Converter, DerivedIds

        self.env = os.environ if env is None else env
        say = _silent if one_shot else _tell
        _hush(self.env, loud=not one_shot)
        spans, logs, metrics, ignored = sdkconfig.settings(self.env)
        if ignored:
            say(f"telemetry ignored {', '.join(ignored)}: not a value the OpenTelemetry SDK takes; using the default")
        if span_exporter is None and metric_reader is None and log_exporter is None:
            wanted = sdkconfig.wanted(self.env, say)
            cap = ONE_SHOT_REQUEST_S if one_shot else None
            span_exporter, metric_exporter, log_exporter = sdkconfig.otlp_exporters(self.env, wanted, cap)
            metric_reader = sdkconfig.reader(metric_exporter, metrics, ONE_SHOT_S * 1000 if one_shot else None)
        resource = sdkconfig.resource(self.env)
        self.ids = DerivedIds()
        self.tracers = TracerProvider(resource=resource, id_generator=self.ids, shutdown_on_exit=False)
        if span_exporter is not None:
            self.tracers.add_span_processor(sdkconfig.batched(BatchSpanProcessor, span_exporter, spans))
        readers = [metric_reader] if metric_reader is not None else []
        self.meters = MeterProvider(resource=resource, metric_readers=readers, shutdown_on_exit=False)
        self.loggers = LoggerProvider(resource=resource, shutdown_on_exit=False)
        if log_exporter is not None:
            self.loggers.add_log_record_processor(sdkconfig.batched(BatchLogRecordProcessor, log_exporter, logs))
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
        self.held: Optional[int] = None  # the workspace's exporter lock, once no other exporter holds it

    def _run(self) -> None:
        while not self.stopping.wait(self.interval_s):
            if self.held is None:
                self.held = spool.hold_exporter(self.manager)
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
            if self.held is not None:
                os.close(self.held)
                self.held = None


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
    drainer.held = spool.hold_exporter(manager)  # makes the folder: its being there tells every writer to spool
    drainer.thread.start()
    atexit.register(drainer.stop)
    return drainer


def send_spooled(env: Optional[Mapping[str, str]] = None) -> None:
    """Export, as a short-lived command (``append_event``, ``update_state``, ...) ends, what waits in the spools it
    wrote to, when telemetry is configured in its environment and no exporter drains them already (one of this
    process, or a long-lived one holding the workspace's ``spool.EXPORTER_LOCK``: then no SDK is even loaded).

    Why at the end of the command, in it: a loop driven by hand has no long-lived process, and its events would wait
    for one (maybe never). A process left behind to send them would outlive the command unseen; here the cost is
    bounded and paid once: ``ONE_SHOT_S`` at most once the SDK is loaded (a refused connection: milliseconds), and
    nothing is said on stderr, which is the caller's (often the agent's). Records a dead collector did not take are
    lost, as a long-lived exporter's are past its queue (``ONE_SHOT_REQUEST_S``, no retry).
    """
    env = os.environ if env is None else env
    try:
        spooled = spool.SPOOLED.copy()
        spool.SPOOLED.difference_update(spooled)
        managers = {m.resolve() for m in spooled}
        todo = sorted(m for m in managers if m not in _STARTED and m.is_dir() and not spool.linked(m))
        todo = [m for m in todo if not spool.exporter_running(m)]  # a long-lived exporter drains it anyway
        if not todo or not spool.enabled(env):
            return
        try:
            telemetry = Telemetry(env, one_shot=True)
        except Exception:  # noqa: BLE001 (no otel extra, or a value the SDK refuses: a long-lived process says it)
            return
        worker = threading.Thread(target=_send, args=(telemetry, todo), name="strict-loop-telemetry", daemon=True)
        worker.start()
        worker.join(ONE_SHOT_S)  # a hung collector: the thread is left to die with the process
    except KeyboardInterrupt:  # the person wants the command gone: telemetry never holds it
        return
    except Exception:  # noqa: BLE001 (a folder that cannot be resolved: telemetry never fails the command)
        return


def _send(telemetry: Telemetry, managers: list[Path]) -> None:
    try:
        for manager in managers:
            telemetry.drain(manager)
        telemetry.flush(int(ONE_SHOT_S * 1000))
        telemetry.shutdown()
    except Exception:  # noqa: BLE001 (telemetry never fails the command that spooled it)
        return
