"""The names the loop's telemetry uses, in one place: references/telemetry.md documents them and the tests check
that what is exported carries exactly these."""

from __future__ import annotations

SCOPE = "strict_loop"
SERVICE = "strict-agent-loop"
"""``service.name`` unless ``OTEL_SERVICE_NAME`` or ``OTEL_RESOURCE_ATTRIBUTES`` says otherwise."""

# common attributes (on every span, log record and data point)
TASK = "strict_loop.task"
WORKSPACE = "strict_loop.workspace"
HARNESS = "strict_loop.harness"
HOST = "host.name"

# span names
ROUND_SPAN = "strict_loop.round"
TOOL_SPAN = "execute_tool"  # "execute_tool {gen_ai.tool.name}", as the GenAI conventions name it
INVOCATION_SPAN = "invoke_agent"  # "invoke_agent {harness}": one supervised harness run
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
GENAI_OPERATION = "gen_ai.operation.name"
GENAI_TOOL = "gen_ai.tool.name"
GENAI_CALL_ID = "gen_ai.tool.call.id"
GENAI_CONVERSATION = "gen_ai.conversation.id"
GENAI_SYSTEM = "gen_ai.system"

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
