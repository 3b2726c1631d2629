"""The progress monitor's pure decisions: per-turn facts and what counts as progress (novelty, outcomes), error
fingerprints, the spiral detector with its signal catalog, and the escalation ladder (whisper, whisper again,
pause). No I/O: ``loop.monitoring`` keeps its state on disk and sends its alerts.

It may import ``base`` and ``model`` only (its stored formats live in ``model.monitoring``).
"""

__all__ = ["catalog", "fingerprint", "ladder", "novelty", "outcomes", "recurrence", "spiral", "toolkinds"]
