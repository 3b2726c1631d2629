#!/usr/bin/env python3
"""Benchmark: how long the agent's pausing call takes, with and without alert channels configured.

A pause used to POST its webhook inside the agent's tool call (up to ~10 s against a
slow receiver). Now the pause writes the alert to the outbox and starts a detached
worker; the call should cost about the same whatever the channels do. In one run,
for N fresh tasks each, this times the sixth identical failing turn (the one that
pauses) through ``Workspace.append_event``:

- no channel configured;
- three channels configured (the JSON webhook and two Apprise json:// URLs) whose
  receiver hangs for 5 s on every request;

and prints the medians and their ratio. Also the quiet turn before it, for scale.

    python bench/alert_latency.py            # 15 pauses of each
    python bench/alert_latency.py --runs 40
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace  # noqa: E402

STUCK = {"tool": "bash", "args": {"command": "cd fastxml/"}, "output": "No such file or directory", "error": True}
CHANNEL_VARS = ("STRICT_LOOP_WEBHOOK_URL", "STRICT_LOOP_ALERT_URLS", "STRICT_LOOP_ALERT_ATTEMPTS")


class _Hang(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(5)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def _pause(ws: Workspace, task: str) -> tuple[float, float]:
    """(a quiet turn's time, the pausing turn's time) for a fresh task."""
    ws.init_state(task_id=task, goal="g", global_stop_condition="c")
    times = []
    for _ in range(6):
        start = time.perf_counter()
        ws.append_event(task_id=task, kind="tool_call", message="cd", data=STUCK)
        times.append(time.perf_counter() - start)
    assert ws.supervisor(task).paused
    return times[1], times[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hang)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"127.0.0.1:{server.server_port}"
    channels = {
        "STRICT_LOOP_WEBHOOK_URL": f"http://{base}/hook",
        "STRICT_LOOP_ALERT_ATTEMPTS": "1",
        "STRICT_LOOP_ALERT_URLS": f"json://{base}/a json://{base}/b",
    }
    quiet, bare, loaded = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in CHANNEL_VARS:
            os.environ.pop(name, None)
        os.environ["XDG_CONFIG_HOME"] = tmp  # the delivery queue goes there, not into ~/.config
        ws = Workspace(Path(tmp))
        for i in range(args.runs):  # interleaved, so that machine noise hits both alike
            q, b = _pause(ws, f"b{i}")
            os.environ.update(channels)
            _, c = _pause(ws, f"c{i}")
            for name in CHANNEL_VARS:
                os.environ.pop(name, None)
            quiet.append(q)
            bare.append(b)
            loaded.append(c)
    server.shutdown()
    med = {k: statistics.median(v) * 1000 for k, v in (("quiet", quiet), ("bare", bare), ("loaded", loaded))}
    print(f"{args.runs} pauses each (median of the pausing append_event call):")
    print(f"  a quiet turn (no ladder step), for scale {med['quiet']:8.2f} ms")
    print(f"  pause, no channel configured            {med['bare']:8.2f} ms")
    print(
        f"  pause, 3 channels, receiver hangs 5 s   {med['loaded']:8.2f} ms   (p90 "
        f"{sorted(loaded)[int(0.9 * len(loaded))] * 1000:.2f} ms)"
    )
    print(f"  ratio with/without channels             {med['loaded'] / med['bare']:8.2f} x")


if __name__ == "__main__":
    main()
