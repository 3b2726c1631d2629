"""A plan's usage limit: read from the harness's own fields, waited out until it resets, kept on disk across restarts.

Why: a five-hour (or weekly) limit is not the agent's failure and no back-off outlasts it; retrying burns the
invocation budget and ends the run (issue 29). The limit is read only from what the harness itself wrote (Claude
Code's ``rate_limit_event`` and its API-error messages, an errored ``result``; Codex's ``error`` and ``turn.failed``;
Hermes's usage file; Gemini CLI's errored ``result``; OpenCode's ``error``), never from the agent's words or a tool's
output, so an agent printing "usage limit reached" suspends nothing. The wait is a ``supervisor.limit_wait`` event: a
supervisor restarted during it reads the event back and keeps waiting (references/supervisor.md).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # the page imports this module for ``page_wait``: the standard library only at import
    from strict_loop.base.interrupts import StopSignals
    from strict_loop.headless.streambase import Outcome, StreamAdapter
    from strict_loop.supervisor.budgets import Decision, SupervisorSettings, Tally
    from strict_loop.supervisor.heartbeat import Heartbeat

EXIT_USAGE_LIMIT = 7
"""The usage limit resets later than ``max_limit_wait_s`` allows: the run ends, the person is alerted."""
WAIT_KIND = "supervisor.limit_wait"
MARGIN_S = 60.0
"""Waited past the reset (the provider's clock and ours differ); a tenth of a short wait, at least half a second."""
HORIZON_S = 31 * 86400.0
"""A reset further ahead (or a time that cannot be one) is not believed: the ordinary back-off applies."""
STEP_S = 30.0
"""The wait is slept in steps on the wall clock: a machine suspended meanwhile wakes on time, not hours late."""

_LIMIT_WORDS = re.compile(
    r"usage limit|hit your (?:\w+ )?limit|limit reached|out of (?:usage|credits)|quota|rate[ _-]?limit|\b429\b|"
    r"too many requests|exhausted your|regain access",
    re.IGNORECASE,
)
_LEGACY = re.compile(r"usage limit reached\|(\d{9,11})\b", re.IGNORECASE)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_AT = re.compile(
    r"\b(?:resets?|reset at|try again at|retry at|available again at)\s+(?:at\s+|on\s+)?"
    r"(?:(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+"
    r"(?:(?P<year>\d{4}),?\s+)?(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?m\b\.?)?"
    r"(?:\s*\((?P<zone>[A-Za-z_]+(?:/[A-Za-z0-9_+\-]+)+|UTC)\)|\s+(?P<utc>UTC|GMT)\b)?",
    re.IGNORECASE,
)
_ISO = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})(?:T|\s+at\s+|\s+)(?P<hour>\d{2}):(?P<minute>\d{2})(?::\d{2}(?:\.\d+)?)?"
    r"\s*(?P<utc>Z|UTC|GMT|[+-]\d{2}:?\d{2})?",
    re.IGNORECASE,
)
_IN = re.compile(
    r"\b(?:resets?|try again|retry|available again)\s+(?:in|after)\s+"
    r"(?P<span>(?:\d+(?:\.\d+)?\s*(?:days?|d|hours?|hrs?|h|ms|minutes?|mins?|m|seconds?|secs?|s)(?![a-z])"
    r"[\s,]*(?:and\s+)?)+)",
    re.IGNORECASE,
)
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)", re.IGNORECASE)


@dataclass(frozen=True)
class UsageLimit:
    """The harness said its plan's limit was reached, and when it resets (epoch seconds)."""

    reset_at: float
    message: str


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def one_line(text: str, cap: int = 300) -> str:
    one = " ".join(text.split())
    return one if len(one) <= cap else one[: cap - 3] + "..."


def now() -> float:
    """The wall clock the waits are measured on (one place, so a test can move it)."""
    return time.time()


def zone(env: Mapping[str, str]) -> tzinfo:
    """The time zone a harness prints local times in (its ``TZ``, else this machine's)."""
    from zoneinfo import ZoneInfo

    name, local = env.get("TZ", "").lstrip(":"), datetime.now().astimezone().tzinfo or timezone.utc
    try:
        return ZoneInfo(name) if name else local
    except (ValueError, OSError, KeyError):
        return local


def reset_time(text: str, at: float, tz: tzinfo) -> Optional[float]:
    """When the limit ``text`` names resets (epoch seconds), said as an epoch (``...|1750000000``), a time of day with
    an optional date and zone (``resets 3pm (Europe/Berlin)``, ``Try again at 3:05 PM``, ``resets Nov 28, 3:30pm``),
    an ISO time (``2026-04-01 at 00:00 UTC``) or a span (``in 2h 13m``, ``retry in 23.5s``); None when it names none
    believable (past, or beyond HORIZON_S)."""
    found: Optional[float] = None
    if m := _LEGACY.search(text):
        found = float(m.group(1))
    elif m := _IN.search(text):
        found = at + sum(float(n) * _unit(u) for n, u in _PART.findall(m.group("span")))
    elif m := _ISO.search(text):
        found = _iso(m, tz)
    elif m := _AT.search(text):
        found = _clock(m, at, tz)
    return found if found is not None and at < found <= at + HORIZON_S else None


def _unit(word: str) -> float:
    word = word.lower()
    if word == "ms":
        return 0.001
    return {"d": 86400.0, "h": 3600.0, "m": 60.0}.get(word[0], 1.0)


def _iso(m: re.Match[str], tz: tzinfo) -> Optional[float]:
    utc = (m.group("utc") or "").upper()
    offset = utc if utc[:1] in "+-" and utc else ("+00:00" if utc else "")
    try:
        moment = datetime.fromisoformat(f"{m.group('date')}T{m.group('hour')}:{m.group('minute')}{offset}")
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=tz)).timestamp()


def _clock(m: re.Match[str], at: float, tz: tzinfo) -> Optional[float]:
    """A time of day (12- or 24-hour), on the date given or the next day it comes, in its zone or ``tz``."""
    from zoneinfo import ZoneInfo

    hour, minute, ampm = int(m.group("hour")), int(m.group("minute") or 0), (m.group("ampm") or "").lower()
    if not ampm and m.group("minute") is None:
        return None  # "resets 3" says no time
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm.startswith("p") else 0)
    if hour > 23 or minute > 59:
        return None
    name = m.group("zone") or m.group("utc")
    try:
        where = ZoneInfo("UTC" if name and name.upper() in ("UTC", "GMT") else name) if name else tz
    except (ValueError, OSError, KeyError):
        where = tz
    today = datetime.fromtimestamp(at, where)
    if m.group("mon"):
        year = int(m.group("year") or today.year)
        try:
            day = date(year, _MONTHS.index(m.group("mon").lower()[:3]) + 1, int(m.group("day")))
        except ValueError:
            return None
        if not m.group("year") and day < today.date() - timedelta(days=1):
            day = day.replace(year=year + 1)  # "Jan 2" said on Dec 31
        return datetime(day.year, day.month, day.day, hour, minute, tzinfo=where).timestamp()
    moment = datetime(today.year, today.month, today.day, hour, minute, tzinfo=where)
    if moment.timestamp() < at - 600:  # the time has passed today (minutes ago is a clock difference): tomorrow
        nxt = today.date() + timedelta(days=1)
        moment = datetime(nxt.year, nxt.month, nxt.day, hour, minute, tzinfo=where)
    return moment.timestamp()


# ---------------------------------------------------------------- each harness's own fields


def _claude(adapter: Any, usage: dict) -> tuple[list[str], list[float]]:
    """Claude Code: a ``rate_limit_event`` rejected, its API-error messages (``api_error_params.rate_limit_info``),
    and an errored ``result`` of an API error (or the legacy ``Claude AI usage limit reached|<epoch>``)."""
    texts: list[str] = []
    stamps: list[float] = []
    for event in getattr(adapter, "notices", []):
        if event.get("type") == "rate_limit_event":
            info = as_dict(event.get("rate_limit_info"))
            if info.get("status") != "rejected":
                continue
        else:
            info = as_dict(as_dict(event.get("api_error_params")).get("rate_limit_info"))
            content = as_dict(event.get("message")).get("content")
            texts += (
                [as_text(b.get("text")) for b in content if isinstance(b, dict)] if isinstance(content, list) else []
            )
        if type(info.get("resetsAt")) in (int, float):
            stamps.append(float(info["resetsAt"]))
    result = as_dict(getattr(adapter, "result", None))
    said = as_text(result.get("result"))
    api = isinstance(result.get("api_error_status"), int) or result.get("terminal_reason") == "api_error"
    legacy = result.get("subtype") == "success" and _LEGACY.fullmatch(said.strip())  # Claude Code 1.0's
    if result.get("is_error") is True and (api or legacy):
        texts.append(said)
    return texts, stamps


def _codex(adapter: Any, usage: dict) -> tuple[list[str], list[float]]:
    """Codex: ``turn.failed`` and the top-level ``error`` events (``You've hit your usage limit. ... Try again at
    3:05 PM.``, local time)."""
    return [getattr(adapter, "failure", None) or "", *getattr(adapter, "errors", [])], []


def _hermes(adapter: Any, usage: dict) -> tuple[list[str], list[float]]:
    """Hermes: the usage file's ``failure``, and what it printed when that file says the run failed (``HTTP 429:
    ...`` with the provider's words)."""
    failed = usage.get("failed") is True
    return [as_text(usage.get("failure")), getattr(adapter, "last_text", "") if failed else ""], []


def _gemini(adapter: Any, usage: dict) -> tuple[list[str], list[float]]:
    """Gemini CLI: an errored ``result`` (its quota error: ``Please retry in 23.5s``, ``reset after 2h13m``)."""
    result = as_dict(getattr(adapter, "result", None))
    said = as_text(as_dict(result.get("error")).get("message")) if result.get("status") != "success" else ""
    return [said, *getattr(adapter, "errors", [])], []


def _opencode(adapter: Any, usage: dict) -> tuple[list[str], list[float]]:
    """OpenCode: its ``error`` events (``APIError 429: ...``) and a 429's ``Retry-After`` from their fields."""
    return [*getattr(adapter, "errors", [])], [*getattr(adapter, "retry_at", [])]


READERS: dict[str, Callable[[Any, dict], tuple[list[str], list[float]]]] = {
    "ClaudeAdapter": _claude,
    "CodexAdapter": _codex,
    "HermesAdapter": _hermes,
    "GeminiAdapter": _gemini,
    "OpenCodeAdapter": _opencode,
}
"""Each stream adapter's (by class name) harness fields that may say a usage limit: (texts, reset epochs)."""


def found(
    adapter: StreamAdapter, outcome: Outcome, usage: Any, env: Mapping[str, str], at: Optional[float] = None
) -> Optional[UsageLimit]:
    """The usage limit a failed invocation hit, with a believable reset ahead; None for any other outcome (a limit
    without a reset time is a rate limit: the ordinary back-off, which counts invocations)."""
    reader = READERS.get(type(adapter).__name__)
    if outcome.ok or reader is None:
        return None
    at = now() if at is None else at
    texts, stamps = reader(adapter, usage if isinstance(usage, dict) else {})
    words = [t for t in texts if t and _LIMIT_WORDS.search(t)]
    said = one_line(words[-1], 300) if words else "usage limit reached"
    for stamp in reversed(stamps):
        if at < stamp <= at + HORIZON_S:
            return UsageLimit(stamp, said)
    for text in reversed(words):
        reset = reset_time(text[:2000], at, zone(env))
        if reset is not None:
            return UsageLimit(reset, one_line(text, 300))
    return None


# ---------------------------------------------------------------- the wait


def when(reset_at: float, at: float, tz: tzinfo) -> str:
    """``15:00 (in 2 h 13 min)``; a reset on another day says its date."""
    moment, today = datetime.fromtimestamp(reset_at, tz), datetime.fromtimestamp(at, tz)
    clock = moment.strftime("%H:%M") if moment.date() == today.date() else moment.strftime("%a %d %b %H:%M")
    left = max(0, int(reset_at - at + 59) // 60)  # whole minutes, rounded up
    span = f"{left // 60} h {left % 60} min" if left >= 60 else f"{left} min"
    return f"{clock} (in {span})"


def waiting_text(reset_at: float, at: float, tz: tzinfo) -> str:
    return f"waiting for the usage limit to reset at {when(reset_at, at, tz)}"


def margin(wait_s: float) -> float:
    return min(MARGIN_S, max(0.5, wait_s / 10))


def uncounted(settings: SupervisorSettings, tally: Tally, outcome: Outcome, rounds: int) -> Tally:
    """``tally`` with a limited invocation's cost, tokens and rounds counted, but neither an invocation nor a
    failure (nor a rate limit: the back-off after the reset starts afresh)."""
    from strict_loop.supervisor.budgets import account

    counted = account(settings, tally, outcome, rounds)
    progressed = rounds > tally.rounds_at_start
    return counted.model_copy(
        update={
            "invocations": tally.invocations,
            "consecutive_failures": 0 if progressed else tally.consecutive_failures,
            "consecutive_rate_limits": 0,
        }
    )


def after(
    settings: SupervisorSettings,
    tally: Tally,
    outcome: Outcome,
    rounds: int,
    should_stop: bool,
    paused: bool,
    env: Mapping[str, str],
    waited_s: float = 0.0,
) -> Decision:
    """After an invocation that hit a usage limit: a pause, the stop checks or a budget end the run as ever (the
    limited invocation's cost counted, the invocation not); else the wait for the reset (``decision``)."""
    from strict_loop.supervisor.budgets import decide

    now_tally = uncounted(settings, tally, outcome, rounds)
    ruled = decide(settings, now_tally, None, rounds, should_stop, paused)
    if ruled.action != "continue" or outcome.limit_reset_at is None:
        return ruled
    return decision(settings, now_tally, outcome.limit_reset_at, env, waited_s)


def decision(
    settings: SupervisorSettings, tally: Tally, reset_at: float, env: Mapping[str, str], waited_s: float = 0.0
) -> Decision:
    """Wait for the reset (continue, after ``sleep_s``), or end with EXIT_USAGE_LIMIT when it is further than
    ``max_limit_wait_s`` counting ``waited_s``, the waits in a row before it (a provider answering "retry in 20 s"
    forever is never waited on forever: these waits count no invocation)."""
    from strict_loop.supervisor.budgets import Decision

    at = now()
    wait = max(0.0, reset_at - at)
    shown = when(reset_at, at, zone(env))
    if waited_s + wait > settings.max_limit_wait_s:
        before = f" after {waited_s:.0f} s waited already" if waited_s else ""
        why = f"the usage limit resets at {shown}{before}, beyond max_limit_wait_s {settings.max_limit_wait_s:g} s"
        return Decision("limit", why, 0.0, EXIT_USAGE_LIMIT, tally)
    return Decision("continue", f"usage limit: {waiting_text(reset_at, at, zone(env))}", wait + margin(wait), 0, tally)


def pending(events: Iterable[dict[str, Any]]) -> Optional[float]:
    """The reset a stopped supervisor was waiting for: the last ``supervisor.limit_wait`` with no invocation after."""
    reset: Optional[float] = None
    for event in events:
        if event.get("kind") == WAIT_KIND:
            reset = _epoch(as_dict(event.get("data")).get("reset_epoch"))
        elif event.get("kind") == "supervisor.invocation":
            reset = None
    return reset


def wait_out(
    reset_at: float,
    resumed: bool,
    env: Mapping[str, str],
    signals: StopSignals,
    heart: Optional[Heartbeat],
    record: Callable[[str, str, dict[str, Any]], None],
    beat: Callable[[bool], None],
) -> float:
    """Record the wait (the event a restart reads), then sleep until the reset plus a margin on the wall clock, the
    status line saying so; a signal ends it at once. Returns the seconds waited."""
    from strict_loop.base.timefmt import iso

    tz, at = zone(env), now()
    end = reset_at + margin(max(0.0, reset_at - at))
    data = {"reset_at": iso(datetime.fromtimestamp(reset_at, timezone.utc)), "reset_epoch": reset_at}
    record(WAIT_KIND, waiting_text(reset_at, at, tz), {**data, "wait_s": round(end - at, 1), "resumed": resumed})
    if heart is not None:
        heart.note = lambda: waiting_text(reset_at, now(), tz)
    try:
        beat(True)  # latest-status.txt says so at once
        while signals.signum is None and (left := end - now()) > 0:
            signals.sleep(min(left, STEP_S), lambda: beat(False))
    finally:
        if heart is not None:
            heart.note = None
    return max(0.0, now() - at)


def page_wait(events: list[dict[str, Any]], at: Optional[float] = None) -> Optional[dict[str, Any]]:
    """The page's line for a supervisor waiting out a usage limit (its last event is the wait, the reset ahead)."""
    last = next((e for e in reversed(events) if str(e.get("kind", "")).startswith("supervisor.")), None)
    data = as_dict(last.get("data")) if last else {}
    reset, at = _epoch(data.get("reset_epoch")), now() if at is None else at
    if last is None or last.get("kind") != WAIT_KIND or reset is None or reset <= at:
        return None
    return {"text": waiting_text(reset, at, zone({})), "harness": "supervise", "since": last.get("ts")}


def _epoch(value: Any) -> Optional[float]:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
