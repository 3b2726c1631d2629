"""UTC timestamps as the ledgers write them (ISO 8601, milliseconds, trailing Z)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional


def now() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_iso() -> str:
    return iso(now())


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def seconds_between(start: str, end: str) -> float | None:
    """Seconds from ``start`` to ``end`` (never negative); None if either is not a timestamp (e.g. a hand-edited
    file)."""
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


def rate_and_eta(
    step: Optional[int], first_step: Optional[int], elapsed_s: float, total: Optional[int]
) -> tuple[float, Optional[float]]:
    """Steps (or rounds) per second since ``first_step`` and the seconds left to ``total`` (None when unknown):
    the pace on both heartbeats, the supervisor's and watch's."""
    if step is None or first_step is None or elapsed_s <= 0 or step <= first_step:
        return 0.0, None
    rate = (step - first_step) / elapsed_s
    if total is None or total <= step:
        return rate, None
    return rate, (total - step) / rate
