"""OpenTelemetry for the loop (issue 21): every ledger event of a task, spooled cheaply on the agent's path and
exported as OTLP traces, metrics and log records by the long-lived processes (hook daemon, MCP server, supervisor,
watch, alert worker), and by a short-lived CLI command as it ends (issue 26).

It may import ``base`` only (and, in ``export``, ``sdkconfig`` and ``convert``, the optional ``opentelemetry`` SDK).
It sits below ``storage`` because the task store feeds it: ``TaskStore.append_event`` is the one place every event
passes, and it offers each one to ``spool``; an exporter sends a spooled record only when that task's ledger holds it
(``vouch``: the spool is in the workspace, where the agent writes too), in the round ``rounds`` reads from the
rounds ledger. ``sdkconfig`` turns the standard ``OTEL_*`` variables into the SDK's objects (only the signals they
configure); ``names`` holds every name exported. Nothing here knows a pydantic model, so the hook's fast path stays
light.
"""

__all__ = ["convert", "export", "names", "rounds", "sdkconfig", "spool", "vouch"]
