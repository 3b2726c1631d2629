"""One task's files and the workspace's index of tasks: locked loads and saves, ledgers, recovery from them,
round notes, the registry, legacy ``.codex-loop/`` tasks, trusted contracts, the sealed monitor settings,
snapshots and the per-user index of workspaces.

It may import ``base``, ``model`` and ``monitor``.
"""

__all__ = [
    "documents",
    "legacy",
    "recovery",
    "rounds",
    "seal",
    "sessions",
    "snapshots",
    "snapstore",
    "store",
    "taskindex",
    "trust",
    "workspaces",
]
