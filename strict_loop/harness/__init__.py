"""Everything that knows a coding harness (Claude Code, Codex, Hermes): the registry table, hook payloads and
answers, what each harness says about one turn (its result, the person's text, the agent's own words, read from a
transcript's tail), the hook handler with its gates (which task a call belongs to, the pause, the Stop), daemon and
client, settings edits (``configedit``), what each harness's install edits (``plans``) and ``strict-loop install``,
the task's budgets as the hooks count them (``spend``), OpenCode's plugin payloads, plugin file and config entry
(``opencode``).

It may import ``loop`` and below.
"""

__all__ = [
    "client",
    "configedit",
    "daemon",
    "handler",
    "install",
    "opencode",
    "payloads",
    "plans",
    "readers",
    "registry",
    "gates",
    "spend",
]
