"""The ground floor: files, paths, text clipping, secret masking, time, JSON text and its minimal edits, signals,
the skill's files.

It may import the standard library only (no pydantic): the harness hook's fast path imports from here alone.
"""

__all__ = [
    "clipping",
    "errors",
    "fsio",
    "interrupts",
    "jsonedit",
    "jsonl",
    "jsontext",
    "layout",
    "masking",
    "skillfiles",
    "timefmt",
]
