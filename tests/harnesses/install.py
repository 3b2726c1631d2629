"""Install the pinned harness binaries the end-to-end tests run (tests/test_harness_e2e.py).

Claude Code, Codex, Gemini CLI and OpenCode come from the npm registry into ``<repo>/.harnesses/node/``; Hermes
comes from PyPI into its own venv ``<repo>/.harnesses/hermes-venv`` so that its pinned dependencies never meet
ours; Phoenix (the telemetry tests' OTLP backend) into ``<repo>/.harnesses/phoenix-venv``; Debian's chromium
(the page's browser tests) with apt-get when it is missing and this is root. When the pinned versions are already
there it checks and returns without touching the network. The machine's Node is used when it meets the packages'
``engines`` range, otherwise the ``node`` npm package provides one inside the same folder. Any failed step stops
with a message naming it.

A first install downloads about 2 GB and takes minutes, and the tools it runs are quiet: each step is announced on
stderr before it starts, with roughly how much it installs (``SIZES``).

    python3 tests/harnesses/install.py [--root DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[2]
NPM_PACKAGES = {
    "@anthropic-ai/claude-code": "2.1.332",
    "@openai/codex": "0.171.0",
    "@google/gemini-cli": "0.61.0",
    "opencode-ai": "1.18.33",  # a small wrapper; npm adds this platform's prebuilt binary (opencode-linux-x64, ...)
}
NPM_BINS = ("claude", "codex", "gemini", "opencode")
NODE_PACKAGE = ("node", "22.23.3")  # a Node runtime from the npm registry, for machines whose Node is older
HERMES = ("hermes-agent", "0.19.0")
HERMES_PYTHON = ((3, 11), (3, 14))  # hermes-agent 0.19.0: Requires-Python >=3.11,<3.14
CHROMIUM_INSTALL = "apt-get update && apt-get install -y chromium"
"""The dashboard's browser tests drive Debian's chromium (Playwright's own browser download needs the network)."""


SIZES = {
    "node": "about 120 MB",
    "npm": "about 1.3 GB, OpenCode's 185 MB binary for this platform among it",
    "hermes": "about 230 MB",
    "chromium": "about 350 MB with its libraries",
    "phoenix": "about 850 MB, the largest step",
}
"""Roughly what each step puts on disk (measured with du on Linux x86-64), for the progress lines."""


def say(text: str) -> None:
    """One progress line on stderr, at once (the tools run quiet for minutes)."""
    print(f"harnesses: {text}", file=sys.stderr, flush=True)


class InstallError(Exception):
    """A step failed; the message says which and what to do."""


def _run(cmd: Sequence[str], what: str, env: Optional[dict] = None) -> str:
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, env=env, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallError(f"{what}: could not run {cmd[0]}: {exc}") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise InstallError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")
    return proc.stdout


def _installed_npm_version(node_dir: Path, name: str) -> Optional[str]:
    try:
        return json.loads((node_dir / "node_modules" / name / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def _npm_ready(node_dir: Path) -> bool:
    wanted = all(_installed_npm_version(node_dir, n) == v for n, v in NPM_PACKAGES.items())
    bins = all((node_dir / "node_modules" / ".bin" / b).exists() for b in NPM_BINS)
    return wanted and bins


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def node_satisfies(node_version: str, engines: str) -> bool:
    """Whether ``node_version`` (``v20.1.0``) meets an engines range; only ``>=X[.Y[.Z]]`` ranges are understood.

    A range of any other form counts as unmet, so the pinned Node package is used: safe, not guessed.
    """
    if not engines.strip():
        return True
    m = re.fullmatch(r"\s*>=\s*v?(\d+(?:\.\d+){0,2})\s*", engines)
    if not m:
        return False
    have, need = _version_tuple(node_version), _version_tuple(m.group(1))
    return have + (0,) * (3 - len(have)) >= need + (0,) * (3 - len(need))


def _npm_env(node_dir: Path) -> dict:
    """PATH with the folder's own bin first, so its Node (when installed) runs npm and the install scripts."""
    env = dict(os.environ)
    env["PATH"] = f"{node_dir / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    env.update(npm_config_audit="false", npm_config_fund="false", npm_config_update_notifier="false")
    return env


def install_npm(node_dir: Path) -> None:
    pinned = " and ".join(f"{n.split('/')[-1]} {v}" for n, v in NPM_PACKAGES.items())
    if _npm_ready(node_dir):
        say(f"{pinned}: already in {node_dir}")
        return
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        raise InstallError(
            "installing Claude Code, Codex, Gemini CLI and OpenCode needs node and npm on PATH "
            "(e.g. apt-get install nodejs npm)"
        )
    node_dir.mkdir(parents=True, exist_ok=True)
    env = _npm_env(node_dir)
    specs = [f"{n}@{v}" for n, v in NPM_PACKAGES.items()]
    ranges = [_run([npm, "view", s, "engines.node"], f"reading the engines range of {s}", env).strip() for s in specs]
    node_version = _run(["node", "--version"], "checking the Node version", env).strip()
    if not all(node_satisfies(node_version, r) for r in ranges):
        say(
            f"Node {node_version} does not meet {ranges}: installing node@{NODE_PACKAGE[1]} from npm into {node_dir} "
            f"({SIZES['node']})..."
        )
        _run(
            [npm, "install", "--prefix", str(node_dir), "--save-exact", f"{NODE_PACKAGE[0]}@{NODE_PACKAGE[1]}"],
            "installing Node",
            env,
        )
        node_version = _run(["node", "--version"], "checking the installed Node", env).strip()
        if not all(node_satisfies(node_version, r) for r in ranges):
            raise InstallError(f"the installed Node {node_version} still does not meet {ranges}")
    say(f"installing {pinned} from npm into {node_dir} ({SIZES['npm']})...")
    _run([npm, "install", "--prefix", str(node_dir), "--save-exact", *specs], "installing " + " ".join(specs), env)
    if not _npm_ready(node_dir):
        raise InstallError(
            f"npm finished but {node_dir}/node_modules/.bin lacks one of {', '.join(NPM_BINS)} at the pinned versions"
        )


def _hermes_ready(venv: Path) -> bool:
    name, version = HERMES
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    return (venv / "bin" / "hermes").exists() and any(venv.glob(f"lib/python3.*/site-packages/{dist}"))


def _hermes_python() -> str:
    """An interpreter Hermes supports: this one when it fits, else the first python3.1x on PATH that does."""
    low, high = HERMES_PYTHON
    if low <= sys.version_info[:2] < high:
        return sys.executable
    for minor in range(high[1] - 1, low[1] - 1, -1):
        found = shutil.which(f"python3.{minor}")
        if found:
            return found
    raise InstallError(
        f"hermes-agent {HERMES[1]} needs Python >={low[0]}.{low[1]},<{high[0]}.{high[1]}; none found on PATH"
    )


def install_hermes(venv: Path) -> None:
    if _hermes_ready(venv):
        say(f"{HERMES[0]} {HERMES[1]}: already in {venv}")
        return
    say(f"installing {HERMES[0]}=={HERMES[1]} from PyPI into a venv of its own, {venv} ({SIZES['hermes']})...")
    if not (venv / "bin" / "python").exists():
        _run([_hermes_python(), "-m", "venv", str(venv)], "creating the Hermes venv")
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _run([*pip, f"{HERMES[0]}=={HERMES[1]}"], f"installing {HERMES[0]}=={HERMES[1]} into {venv}")
    if not _hermes_ready(venv):
        raise InstallError(f"pip finished but {venv} has no hermes {HERMES[1]}")


def chromium_path() -> Optional[str]:
    """The chromium executable the browser tests drive, if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def install_chromium() -> Optional[str]:
    """Debian's chromium for the dashboard's browser tests (idempotent); a message instead where it cannot be
    installed here (no apt, not root): the browser tests then skip naming the command."""
    if chromium_path():
        say(f"chromium: already at {chromium_path()}")
        return None
    if not shutil.which("apt-get"):
        return f"chromium not installed and no apt-get here: install a chromium yourself ({CHROMIUM_INSTALL})"
    if os.geteuid() != 0:
        return f"chromium not installed: run as root: {CHROMIUM_INSTALL}"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    say(f"installing Debian's chromium with apt-get ({SIZES['chromium']})...")
    _run(["apt-get", "update"], "apt-get update (for chromium)", env=env)
    _run(["apt-get", "install", "-y", "--no-install-recommends", "chromium"], "installing chromium", env=env)
    if not chromium_path():
        raise InstallError("apt-get installed chromium but no chromium is on PATH")
    return None


PHOENIX = ("arize-phoenix", "20.26.1")
"""The real OTLP backend of tests/test_telemetry_phoenix.py, in a venv of its own (its dependencies are many)."""


def install_phoenix(venv: Path) -> None:
    if any(venv.glob("lib/python3.*/site-packages/phoenix")):
        say(f"{PHOENIX[0]} {PHOENIX[1]}: already in {venv}")
        return
    say(f"installing {PHOENIX[0]}=={PHOENIX[1]} from PyPI into a venv of its own, {venv} ({SIZES['phoenix']})...")
    if not (venv / "bin" / "python").exists():
        _run([sys.executable, "-m", "venv", str(venv)], "creating the Phoenix venv")
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _run([*pip, f"{PHOENIX[0]}=={PHOENIX[1]}"], f"installing {PHOENIX[0]}=={PHOENIX[1]} into {venv}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root", type=Path, default=REPO / ".harnesses", help="where to install (default: <repo>/.harnesses)"
    )
    args = parser.parse_args(argv)
    say(f"checking the pinned harnesses in {args.root} (a first install downloads about 2 GB and takes minutes)")
    started = time.monotonic()
    try:
        install_npm(args.root / "node")
        install_hermes(args.root / "hermes-venv")
        skipped = install_chromium()
        if skipped:
            say(f"{skipped} (the dashboard's browser tests will skip)")
        install_phoenix(args.root / "phoenix-venv")
    except InstallError as exc:
        say(str(exc))
        return 1
    say(f"ready in {args.root} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
