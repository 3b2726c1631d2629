"""UTC timestamps as the ledgers write them (ISO 8601, milliseconds, trailing Z)."""

from __future__ import annotations

from datetime import datetime, timezone


def now() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_iso() -> str:
    return iso(now())


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def seconds_between(start: str, end: str) -> float | None:
    """Seconds from ``start`` to ``end`` (never negative); None if either is not a timestamp (e.g. a hand-edited file)."""
    try:
        return max(0.0, (parse(end) - parse(start)).total_seconds())
    except (ValueError, TypeError):
        return None


def human_duration(seconds: float | None) -> str:
    """``3725`` -> ``1h02m``; short and stable for status lines."""
    if seconds is None:
        return "n/a"
    if seconds < 10:
        return f"{seconds:.1f}s"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{sec:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"
