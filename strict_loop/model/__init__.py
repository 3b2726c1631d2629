"""Every stored and exchanged format as pydantic models: the task's files (records), the contract's settings, a
turn, a task's budgets, the operations' requests and results, and the field types with their caps.

It may import ``base`` and ``monitor``'s data types only; no I/O.
"""

__all__ = ["budgets", "fields", "monitoring", "records", "requests", "results", "settings", "turns", "validation"]
