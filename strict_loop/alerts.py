"""Delivering an alert to a JSON webhook: retried, bounded in time, never fatal, never leaking the URL.

The URL comes from the environment (``STRICT_LOOP_WEBHOOK_URL``) so that it
never lands in the loop contract, the ledgers or the alert itself.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Mapping, Optional

WEBHOOK_ENV = "STRICT_LOOP_WEBHOOK_URL"


def deliver(payload: Mapping[str, Any], env: Mapping[str, str], attempts: int = 3, timeout: float = 3.0,
            backoff: float = 0.5) -> str:
    """POST ``payload`` as JSON to the configured webhook; returns a one-line outcome without the URL."""
    url = env.get(WEBHOOK_ENV, "").strip()
    if not url:
        return "skipped: no webhook configured"
    try:
        scheme = urllib.parse.urlsplit(url).scheme
    except ValueError:  # e.g. an unclosed '[': never fail the pause, never echo the URL (it may carry a token)
        return f"failed: {WEBHOOK_ENV} is not a valid URL"
    if scheme not in ("http", "https"):
        return f"failed: {WEBHOOK_ENV} must be an http(s) URL"
    body = json.dumps(payload, ensure_ascii=False).encode()
    last_error: Optional[str] = None
    for attempt in range(1, attempts + 1):
        request = urllib.request.Request(url, data=body, method="POST",
                                         headers={"Content-Type": "application/json", "User-Agent": "strict-agent-loop"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (scheme checked above)
                return f"delivered: HTTP {response.status} after {attempt} attempt(s)"
        except urllib.error.HTTPError as exc:
            last_error = f"HTTP {exc.code}"
            if 400 <= exc.code < 500 and exc.code != 429:
                break  # the request itself is wrong: retrying will not help
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            last_error = _scrub(f"{type(reason).__name__}: {reason}", url)
        if attempt < attempts:
            time.sleep(backoff * 2 ** (attempt - 1))
    return f"failed after {attempt} attempt(s): {last_error}"


def _scrub(text: str, url: str) -> str:
    try:
        parts = urllib.parse.urlsplit(url)
        pieces = (url, parts.netloc, parts.hostname, parts.path if len(parts.path) > 1 else "", parts.query)
    except ValueError:
        pieces = (url,)
    for secret in filter(None, pieces):
        text = text.replace(secret, "<webhook>")
    return text[:300]
