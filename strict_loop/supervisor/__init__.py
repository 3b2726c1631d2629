"""``strict-loop supervise``: runs a harness unattended until the stop checks say stop, with budgets, a per-task
lock, the prompt built from disk, a heartbeat, and each invocation's child kept within bounds.

It may import ``harness`` and below.
"""

__all__ = [
    "budgets",
    "callqueue",
    "heartbeat",
    "invocation",
    "journal",
    "limits",
    "lock",
    "orphans",
    "prompt",
    "runner",
    "scratch",
]
