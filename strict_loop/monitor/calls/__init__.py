"""What a call is and what it does besides printing: its kind, the step it retries and the files it names
(``toolkinds``); the person's words inside what a harness wraps them in (``wrappings``); the files a shell command
writes, the processes it restarts, the revision it checks out (``shellwork``); the background jobs a call starts, reads
and stops (``jobs``); what a folder's listing lacks of the files written there just before (``listing``). Pure text
functions over one call (``listing`` with the window's writes).

Why apart: each harness names its tools and shapes its arguments its own way, and a new harness or tool changes these
tables, never how the detector weighs what they say.

It may import ``base``, ``model``, ``monitor.fingerprint`` and ``monitor.outcomes`` only.
"""

__all__ = ["jobs", "listing", "shellwork", "toolkinds", "wrappings"]
