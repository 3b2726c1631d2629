"""The strict loop's operations: the ``Workspace`` facade, recording turns, stop checks and the commands they
run, the verdict after a round, the monitor's I/O, the safeguards of the loop's own files, the progress files and
answer texts, and the one table of operations the CLI and the MCP server are generated from.

It may import everything below it: ``base``, ``model``, ``monitor``, ``storage``, ``alerts``.
"""

__all__ = [
    "answers",
    "commandrun",
    "commits",
    "delivery",
    "monitoring",
    "operations",
    "recording",
    "reports",
    "safeguards",
    "stopchecks",
    "verdicts",
    "workspace",
]
