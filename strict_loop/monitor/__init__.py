"""The progress monitor's pure decisions: per-turn facts and what counts as progress (novelty, outcomes), what a
shell command does besides printing (shellwork), the person's word read (person) and weighed against the session
(verdicts), error fingerprints, failures that come
back and restart or hang loops (recurrence, restarts), the spiral detector with its signal catalog, and the
escalation ladder (whisper, whisper again, pause). No I/O: ``loop.monitoring`` keeps its state on disk and sends its
alerts.

It may import ``base`` and ``model`` only (its stored formats live in ``model.monitoring``).
"""

__all__ = [
    "catalog",
    "fingerprint",
    "ladder",
    "novelty",
    "outcomes",
    "person",
    "recurrence",
    "restarts",
    "shellwork",
    "spiral",
    "toolkinds",
    "verdicts",
]
