"""``strict-loop watch``: supervises a long job (training runs): one run in its own process group, the failure
catalog, the fixed remedies, progress read from the job's log, container isolation.

It may import ``supervisor`` and below.
"""

__all__ = ["failures", "isolation", "joblog", "jobrun", "remedies", "remedyio", "watch"]
