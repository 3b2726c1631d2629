"""``python -m strict_loop.hookd``: the documented name of the hook daemon's command, kept as an alias.

The daemon lives in :mod:`strict_loop.harness.daemon`; this only runs it.
"""

if __name__ == "__main__":
    import runpy

    runpy.run_module("strict_loop.harness.daemon", run_name="__main__", alter_sys=True)
