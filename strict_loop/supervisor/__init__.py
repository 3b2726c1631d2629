"""``strict-loop supervise``: runs a harness unattended until the stop checks say stop, with budgets, a per-task
lock, the prompt built from disk and a heartbeat.

It may import ``harness`` and below.
"""

__all__ = ["budgets", "callqueue", "heartbeat", "journal", "lock", "orphans", "prompt", "runner", "scratch"]
