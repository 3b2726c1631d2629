"""``strict-loop dashboard``: a page a person watches: every loop on the machine at a glance, live, a task's
rounds, ladder and evidence, and the four answers to a pause; plus the compute report.

It may import ``experiments`` and below.
"""

__all__ = ["card", "compute", "detail", "guard", "live", "overview", "pages", "server", "serving", "texts"]
