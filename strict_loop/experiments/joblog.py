"""Progress of a running job, read from its log lines or a metrics JSONL file: pure functions over plain values.

Why: a supervisor must know that a job lives and moves (step, loss, ETA) and must see a NaN or a
divergence as it happens, not only after the job crashed. The person says where progress is: a regular
expression with named groups over the log (``step`` is the step, every other group a metric), or a
JSONL file the job appends to (``{"step": 10, "loss": 0.5}`` per line).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Optional

DEFAULT_PATTERN = r"\bstep[\s:=]+(?P<step>\d+)\b(?:[^\n]*?\bloss[\s:=]+(?P<loss>[-+]?(?:nan|inf|\d[\d.eE+-]*)))?"
"""Used when no pattern is given: ``step 10 ... loss 0.53`` / ``step=10 loss=nan`` (case-insensitive)."""


@dataclass(frozen=True)
class JobProgress:
    """What the job has shown so far in this run."""

    step: Optional[int] = None
    metrics: dict[str, float] = field(default_factory=dict)
    best: Optional[float] = None
    """Lowest finite value of the watched metric."""
    points: int = 0
    """Values of the watched metric seen."""
    nonfinite: Optional[str] = None
    """The first NaN/Inf of the watched metric, as 'loss=nan at step 12'."""
    diverged: Optional[str] = None
    bad_lines: int = 0
    """Metrics lines skipped: not one JSON object, nested too deep, or longer than MAX_METRICS_LINE."""


def number(text: Any) -> Optional[float]:
    """A float from a log or JSON value ('nan' and 'inf' included), or None."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text)
    try:
        return float(str(text).strip())
    except ValueError:
        return None


def compile_pattern(pattern: Optional[str]) -> re.Pattern[str]:
    return re.compile(pattern or DEFAULT_PATTERN, re.IGNORECASE)


def from_line(line: str, pattern: re.Pattern[str]) -> dict[str, float]:
    """The values a log line shows (empty when it shows none)."""
    m = pattern.search(line)
    if not m:
        return {}
    out = {}
    for name, text in m.groupdict().items():
        value = number(text) if text is not None else None
        if value is not None:
            out[name] = value
    return out


MAX_METRICS_LINE = 64 * 1024
"""A metrics line longer than this is skipped (and counted), never held in memory whole."""


def from_json_line(line: str) -> Optional[dict[str, float]]:
    """The numeric values of one metrics JSONL line (strings 'nan'/'inf' count; other values are skipped); None for a
    line that is not one JSON object (200,000 '[' included: the parser's RecursionError is caught, nesting capped).

    The bare ``NaN``, ``Infinity`` and ``-Infinity`` that Python's ``json.dumps`` writes for a non-finite float are
    read as the numbers they are: not JSON, but exactly the loss a NaN check exists to see (the loop's own strict
    parser would skip the line as bad and the run would count as a success)."""
    import json

    from strict_loop.base.jsontext import too_deep

    if not line.strip():
        return {}
    if len(line) > MAX_METRICS_LINE:
        return None
    try:
        value = json.loads(line, parse_constant=float)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or too_deep(value):
        return None
    out = {}
    for key, raw in value.items():
        n = number(raw) if isinstance(raw, (int, float, str)) else None
        if n is not None:
            out[str(key)[:64]] = n
    return out


def fold(
    p: JobProgress, values: dict[str, float], metric: str, divergence_factor: float, min_points: int = 3
) -> JobProgress:
    """``p`` after one set of values. NaN/Inf of the watched metric is recorded once; divergence means the metric
    rose above ``divergence_factor`` x its best after at least ``min_points`` values (for a loss: lower is better)."""
    if not values:
        return p
    step = int(values["step"]) if "step" in values and math.isfinite(values["step"]) else p.step
    metrics = {**p.metrics, **{k: v for k, v in values.items() if k != "step"}}
    p = replace(p, step=step, metrics=metrics)
    if metric not in values:
        return p
    value = values[metric]
    where = f" at step {step}" if step is not None else ""
    if not math.isfinite(value):
        return p if p.nonfinite else replace(p, nonfinite=f"{metric}={value}{where}", points=p.points + 1)
    best = value if p.best is None else min(p.best, value)
    p = replace(p, best=best, points=p.points + 1)
    if (
        p.diverged is None
        and p.points >= min_points
        and p.best is not None
        and p.best > 0
        and value > divergence_factor * p.best
    ):
        p = replace(p, diverged=f"{metric}={value:g}{where}, more than {divergence_factor:g}x its best {p.best:g}")
    return p


def describe(p: JobProgress, metric: str, total: Optional[int] = None) -> str:
    """'step 120/5000 | loss 0.53' for the heartbeat line."""
    parts = [f"step {p.step if p.step is not None else '?'}" + (f"/{total}" if total else "")]
    for name, value in list(p.metrics.items())[:4]:
        parts.append(f"{name} {value:.4g}")
    if metric not in p.metrics and p.points == 0:
        parts.append(f"no {metric} yet")
    return " | ".join(parts)
