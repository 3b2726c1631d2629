"""``strict-loop dashboard`` and ``strict-loop compute``: a person's page over every loop, and what this machine can
run. CLI only: an agent never starts a server nor reads the page's answers through MCP.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from strict_loop.base.errors import LoopError

DEFAULT_PORT = 8780


def add_parsers(sub: Any, common: argparse.ArgumentParser, parsers: dict[str, argparse.ArgumentParser]) -> None:
    from strict_loop.dashboard.guard import MIN_TOKEN_CHARS, TOKEN_ENV

    p = sub.add_parser(
        "dashboard",
        help="serve a live page over every loop on this machine, where a person answers a pause",
        description="A local web page: every task of every workspace this machine has loops in (or --workspace's),\n"
        "live; a task's rounds, the monitor's evidence, and the four answers to a pause (as strict-loop resume).\n"
        "Loopback by default; another --host needs a token. See references/dashboard.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: loopback only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--workspace", metavar="DIR", help="show this workspace only (default: every indexed one)")
    p.add_argument("--read-only", action="store_true", help="refuse every answer and hide the buttons")
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help=f"file holding the bearer token (instead of {TOKEN_ENV}); at least {MIN_TOKEN_CHARS} characters",
    )
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST[:PORT]", help="another Host to accept")
    parsers["dashboard"] = p

    p = sub.add_parser(
        "compute",
        parents=[common],
        help="what this machine can run: GPUs, CPU, memory, disk, container runtime",
        description="GPUs (nvidia-smi or rocm-smi), CPU, memory, disk free in the workspace, docker/podman and\n"
        "whether it reaches a GPU. A machine without GPUs or Docker is an answer, not an error.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parsers["compute"] = p


def config(a: argparse.Namespace) -> tuple[Any, str]:
    """The server's configuration and the URL to open; LoopError for bad options before anything binds."""
    from strict_loop.dashboard import guard, server

    if not 1 <= a.port <= 65535:
        raise LoopError("--port", f"{a.port} is not a TCP port", "give a port from 1 to 65535")
    only = None
    if a.workspace:
        only = Path(a.workspace).expanduser()
        if not (only / ".agent-loop").is_dir():
            raise LoopError("--workspace", f"{a.workspace!r} holds no .agent-loop/", "name a workspace with loops")
    token = guard.read_token(a.token_file)
    if token is None and not guard.is_loopback(a.host):
        raise LoopError(
            "--host",
            f"{a.host} is reachable from other machines and no token is set",
            f"bind 127.0.0.1, or set {guard.TOKEN_ENV} (or --token-file FILE) to a secret of at least "
            f"{guard.MIN_TOKEN_CHARS} characters; a browser opens the page once as /?token=<token>",
        )
    import secrets

    key = None if a.read_only else secrets.token_urlsafe(24)  # the person's answer key: only in their terminal
    access = guard.Access(guard.allowed_hosts(a.host, a.port, a.allow_host), token, a.read_only, answer_key=key)
    url = f"http://{guard.host_values(a.host, a.port)[0]}/"
    return server.Config(access, only), url


def run(a: argparse.Namespace) -> int:
    if a.command == "compute":
        from strict_loop.dashboard import compute

        rep = compute.report(a.workspace)
        print(rep.model_dump_json(indent=2) if a.json else compute.text(rep))
        return 0
    from strict_loop.dashboard import guard, server

    cfg, url = config(a)
    sock = guard.listen(a.host, a.port)
    mode = "read-only" if cfg.access.read_only else "answers allowed"
    auth = "token required (open /?token=<token> once)" if cfg.access.token else "no token (loopback only)"
    print(f"strict-loop dashboard: {url} ({mode}; {auth})", file=sys.stderr)
    keyed = f"{url}?answer={cfg.access.answer_key}" if cfg.access.answer_key else url
    if cfg.access.answer_key:
        print(
            f"to answer a pause, open once in your browser (your key: keep it from every agent): {keyed}",
            file=sys.stderr,
        )
    if a.open:
        import webbrowser

        webbrowser.open(keyed)
    guard.serve_on(sock, server.build(cfg), "warning")
    return 0
