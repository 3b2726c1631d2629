"""OpenTelemetry for the loop (issue 21): every ledger event of a task, spooled cheaply on the agent's path and
exported as OTLP traces, metrics and log records by the long-lived processes (hook daemon, MCP server, supervisor,
watch, alert worker).

It may import ``base`` only (and, in ``export`` alone, the optional ``opentelemetry`` SDK). It sits below
``storage`` because the task store feeds it: ``TaskStore.append_event`` is the one place every event passes, and
it offers each one to ``spool``; an exporter sends a spooled record only when that task's ledger holds it
(``vouch``: the spool is in the workspace, where the agent writes too). Nothing here knows a pydantic model, so
the hook's fast path stays light.
"""

__all__ = ["convert", "export", "names", "spool", "vouch"]
