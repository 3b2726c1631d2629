"""The progress monitor's pure decisions: per-turn facts (novelty, outcomes) and what counts as progress (progress),
whether a command failed read from what it printed where no exit code comes (printed), what runs elsewhere read back (a
CI run, the pods and containers a status read lists: readback), looks again at what runs or is awaited and how long the
agent waited for them (polls), what a call is, what it changes besides printing, the background jobs it starts, reads
and stops, and what a folder's listing lacks of the files just written there (calls), the person's word read (person)
and weighed against the session (verdicts), what they said not to do, error fingerprints, failures, restarts and hangs
that come back (recurrence), the spiral detector with its signal catalog, and the escalation ladder (whisper, whisper
again, pause). No I/O: ``loop.monitoring`` keeps its state on disk and sends its alerts.

It may import ``base`` and ``model`` only (its stored formats live in ``model.monitoring``).
"""

__all__ = [
    "calls",
    "catalog",
    "fingerprint",
    "ladder",
    "missing",
    "novelty",
    "outcomes",
    "person",
    "polls",
    "printed",
    "progress",
    "readback",
    "recurrence",
    "spiral",
    "verdicts",
]
