"""The names the loop's telemetry uses, in one place: references/telemetry.md documents them and the tests check
that what is exported carries exactly these.

The OpenTelemetry names come from the semantic-conventions package (installed with the SDK) where it has them, so
a renamed convention is followed by upgrading it; the literal beside each is the same name, for an older package that
lacks it (the ``otel`` extra allows SDK 1.30) and for a process without the extra (this module imports no SDK).
"""

from __future__ import annotations

from typing import Any

_genai: Any = None
_host: Any = None
_service: Any = None
try:
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as _genai
    from opentelemetry.semconv._incubating.attributes import host_attributes as _host
    from opentelemetry.semconv.attributes import service_attributes as _service
except ImportError:  # no otel extra: nothing is exported, the literals name the same things
    pass


def _sc(module: Any, name: str, literal: str) -> str:
    value = getattr(module, name, literal)
    return value if isinstance(value, str) else literal


def _value(enum: str, member: str, literal: str) -> str:
    found = getattr(getattr(_genai, enum, None), member, None)
    return str(found.value) if found is not None else literal


SCOPE = "strict_loop"
SERVICE = "strict-agent-loop"
"""``service.name`` unless ``OTEL_SERVICE_NAME`` or ``OTEL_RESOURCE_ATTRIBUTES`` says otherwise."""

# on the Resource (once per export, not on every span)
SERVICE_NAME = _sc(_service, "SERVICE_NAME", "service.name")
SERVICE_VERSION = _sc(_service, "SERVICE_VERSION", "service.version")
SERVICE_INSTANCE = _sc(_service, "SERVICE_INSTANCE_ID", "service.instance.id")
"""One per exporting process: each process's metrics are its own cumulative series (a CLI command exports too)."""
HOST = _sc(_host, "HOST_NAME", "host.name")

# common attributes (on every span and log record; metric points carry WORKSPACE_ID instead of WORKSPACE)
TASK = "strict_loop.task"
WORKSPACE = "strict_loop.workspace"
"""The workspace's absolute path: on spans and log records only (a path per metric series would be cardinality)."""
WORKSPACE_ID = "strict_loop.workspace.id"
"""A short, stable digest of the workspace's path (the id in the page's links): on every span, log record and point."""
HARNESS = "strict_loop.harness"

# span names
ROUND_SPAN = "strict_loop.round"
TOOL_SPAN = "execute_tool"  # "execute_tool {gen_ai.tool.name}", as the GenAI conventions name it
INVOCATION_SPAN = "invoke_agent"  # "invoke_agent {gen_ai.agent.name}": one supervised harness run
RESUME_SPAN = "strict_loop.resume"
ALERT_SPAN = "strict_loop.alert"
WATCH_SPAN = "strict_loop.watch"
STOP_SPAN = "strict_loop.stop_check"

# span attributes
ROUND = "strict_loop.round.number"
ROUND_STATUS = "strict_loop.round.status"
ROUND_PROGRESS = "strict_loop.round.progress"
ROUND_DURATION = "strict_loop.round.duration_s"
STOP_VERDICT = "strict_loop.stop.verdict"
TURN = "strict_loop.turn"
GENAI_OPERATION = _sc(_genai, "GEN_AI_OPERATION_NAME", "gen_ai.operation.name")
GENAI_TOOL = _sc(_genai, "GEN_AI_TOOL_NAME", "gen_ai.tool.name")
GENAI_CALL_ID = _sc(_genai, "GEN_AI_TOOL_CALL_ID", "gen_ai.tool.call.id")
GENAI_CONVERSATION = _sc(_genai, "GEN_AI_CONVERSATION_ID", "gen_ai.conversation.id")
GENAI_AGENT = _sc(_genai, "GEN_AI_AGENT_NAME", "gen_ai.agent.name")
"""The harness (``claude``, ``codex``, ``hermes``): the deprecated ``gen_ai.system`` is not sent."""
GENAI_PROVIDER = _sc(_genai, "GEN_AI_PROVIDER_NAME", "gen_ai.provider.name")
GENAI_INPUT_TOKENS = _sc(_genai, "GEN_AI_USAGE_INPUT_TOKENS", "gen_ai.usage.input_tokens")
GENAI_OUTPUT_TOKENS = _sc(_genai, "GEN_AI_USAGE_OUTPUT_TOKENS", "gen_ai.usage.output_tokens")
EXECUTE_TOOL = _value("GenAiOperationNameValues", "EXECUTE_TOOL", "execute_tool")
INVOKE_AGENT = _value("GenAiOperationNameValues", "INVOKE_AGENT", "invoke_agent")
PROVIDERS = {
    "claude": _value("GenAiProviderNameValues", "ANTHROPIC", "anthropic"),
    "codex": _value("GenAiProviderNameValues", "OPENAI", "openai"),
}
"""A harness's model provider when it has one by default (Hermes takes any: none is claimed for it)."""
INVOCATION = "strict_loop.invocation"
INVOCATION_OK = "strict_loop.invocation.ok"

# span events (and log records' event names)
WHISPER = "strict_loop.whisper"
PAUSE = "strict_loop.pause"
RESUME = "strict_loop.resume"
ROLLBACK = "strict_loop.rollback"
ALERT = "strict_loop.alert.delivery"
WATCH_FAILURE = "strict_loop.watch.failure"
REMEDY = "strict_loop.watch.remedy"

# event attributes
SIGNALS = "strict_loop.signals"
DIAGNOSIS = "strict_loop.diagnosis"
LEVEL = "strict_loop.whisper.level"
ACTION = "strict_loop.resume.action"
ROLLBACK_TO = "strict_loop.rollback.to"
CHANNEL = "strict_loop.alert.channel"
OUTCOME = "strict_loop.alert.outcome"
FAILURE_CLASS = "strict_loop.watch.failure_class"
REMEDY_NAME = "strict_loop.watch.remedy"
SIGNAL = "strict_loop.signal"

# metrics
M_ROUNDS = "strict_loop.rounds"
M_TOOL_CALLS = "strict_loop.tool_calls"
M_WHISPERS = "strict_loop.whispers"
M_PAUSES = "strict_loop.pauses"  # by strict_loop.signal
M_RESUMES = "strict_loop.resumes"  # by strict_loop.resume.action
M_ALERTS = "strict_loop.alerts"  # by strict_loop.alert.channel and strict_loop.alert.outcome
M_WATCH_FAILURES = "strict_loop.watch.failures"  # by strict_loop.watch.failure_class
M_REMEDIES = "strict_loop.watch.remedies"  # by strict_loop.watch.remedy
M_ROUND_DURATION = "strict_loop.round.duration"  # histogram, s
M_ONSET_TO_WHISPER = "strict_loop.whisper.onset_turns"  # histogram, turns from a signal's first turn to its whisper

SPANS = (ROUND_SPAN, TOOL_SPAN, INVOCATION_SPAN, RESUME_SPAN, ALERT_SPAN, WATCH_SPAN, STOP_SPAN)
EVENTS = (WHISPER, PAUSE, RESUME, ROLLBACK, ALERT, WATCH_FAILURE, REMEDY)
COUNTERS = (M_ROUNDS, M_TOOL_CALLS, M_WHISPERS, M_PAUSES, M_RESUMES, M_ALERTS, M_WATCH_FAILURES, M_REMEDIES)
HISTOGRAMS = (M_ROUND_DURATION, M_ONSET_TO_WHISPER)
