"""Capture what ``opencode run --format json`` prints when its provider answers HTTP 429, against the real binary, as
fixtures for the usage-limit reader (tests/fixtures/streams/opencode-http429*.jsonl, exit code in ``*.meta.json``).

Why a capture of its own: OpenCode (opencode-ai 1.18.33) retries a 429 itself, up to 5 times, each wait the provider's
``Retry-After`` (believed up to ~24 days) or else 2, 4, 8, 16, 30 s, and prints nothing meanwhile; only then does it
print one ``error`` event (``error.data``: ``statusCode``, ``message``, ``responseHeaders``, ``responseBody``) and
exit 1. Two cases: ``http429`` (``rate_limit_exceeded`` with ``Retry-After: 2`` and the words "try again in 2s"),
``http429-quota`` (``insufficient_quota``, no Retry-After: OpenAI's out-of-credits answer, which names no reset).

Run ``python3 tests/capture_opencode_limits.py`` after ``python3 tests/harnesses/install.py`` (about 75 s). The
scripted server answers every model request that offers tools with the 429 and a side request (the title) with text.
Reuses tests/opencode_rig.py read-only.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from opencode_rig import BINARY, OpenCode, write_provider  # noqa: E402

STREAMS = Path(__file__).resolve().parent / "fixtures" / "streams"
CASES = {
    "http429": (
        {"Retry-After": "2"},
        {
            "message": "Rate limit reached for requests per min (RPM): Limit 3, Used 3. Please try again in 2s.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        },
    ),
    "http429-quota": (
        {},
        {
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        },
    ),
}
TITLE = {
    "id": "chatcmpl_title",
    "object": "chat.completion",
    "created": 0,
    "model": "mock-model",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Title"}, "finish_reason": "stop"}],
}


def serve(headers: dict[str, str], error: dict) -> ThreadingHTTPServer:
    """An OpenAI-compatible endpoint answering each model request with 429 (``headers``, ``{"error": error}``)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            model_request = bool(json.loads(raw or b"{}").get("tools"))
            payload = json.dumps({"error": error} if model_request else TITLE).encode()
            self.send_response(429 if model_request else 200)
            for name, value in (headers if model_request else {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def main() -> int:
    if not BINARY.exists():
        print(f"no OpenCode at {BINARY}: run python3 tests/harnesses/install.py", file=sys.stderr)
        return 1
    for case, (headers, error) in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            home, work = Path(tmp) / "home", Path(tmp) / "w"
            home.mkdir()
            work.mkdir()
            server = serve(headers, error)
            try:
                write_provider(work, f"http://127.0.0.1:{server.server_port}")
                proc = OpenCode(BINARY, home).run("Write hello to out.txt.", work, timeout=240)
            finally:
                server.shutdown()
                server.server_close()
            print(f"opencode {case}: exit {proc.returncode}", file=sys.stderr)
            (STREAMS / f"opencode-{case}.jsonl").write_text(proc.stdout.replace(tmp, "BASE"))
            meta = {"exit_code": proc.returncode, "timed_out": False}
            (STREAMS / f"opencode-{case}.meta.json").write_text(json.dumps(meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
