"""The headless Chromium of the page modules (Debian's ``chromium``, driven by Playwright): one per module.

Not one per process: while Playwright's sync API runs, the thread's asyncio loop counts as running, so the async tests
of a module that ran after a page module on the same worker could not start their own loop.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

INSTALL = (
    "pip install -e '.[test]' && apt-get update && apt-get install -y chromium (or: python3 tests/harnesses/install.py)"
)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def launched() -> Iterator[object]:
    """A module fixture's body: the browser until the module ends (a launch is ~1 s of CPU; each test opens contexts
    of its own); skips when Playwright or Chromium is missing (``INSTALL`` says how to get them)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason=f"playwright is not installed: {INSTALL}")
    if CHROMIUM is None:
        pytest.skip(f"chromium is not installed: {INSTALL}")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()
