"""Everything that knows a coding harness (Claude Code, Codex, Hermes): the registry table, hook payloads and
answers, the hook handler with its daemon and client, headless runs and their streams, settings edits and
``strict-loop install``.

It may import ``loop`` and below.
"""

__all__ = [
    "binding",
    "client",
    "configedit",
    "daemon",
    "handler",
    "headless",
    "install",
    "payloads",
    "registry",
    "gates",
    "streambase",
    "streams",
]
