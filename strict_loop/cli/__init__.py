"""The ``strict-loop`` command: parsers generated from the request models, the person-only commands (supervise,
watch, install, hook, alerts, schemas, replay, demo, dashboard, compute, person-key, budget) and the catalogue of file
formats.

It may import everything.
"""

__all__ = ["alertview", "app", "budget", "commands", "demo", "flags", "pausegate", "reads", "schemas", "serve", "table"]
