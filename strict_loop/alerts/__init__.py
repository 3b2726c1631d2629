"""A person is told when a loop pauses: the channels (from the environment or a private file), the outbox in
``alerts.jsonl``, the detached delivery worker and the senders (webhook, Apprise, IRC); and, the same way, when
the agent waits for the person (a permission or an idle prompt: ``waiting``).

It may import import ``base``, ``model``, ``monitor`` and ``storage``.
"""

__all__ = ["channels", "outbox", "send", "waiting", "worker"]
