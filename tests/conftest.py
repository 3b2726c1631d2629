"""Shared fixtures: a fresh workspace folder and runners for the scripts and the CLI.

``run_script`` and ``run_cli`` call :func:`strict_loop.cli.main` in this process, exactly the way
``scripts/<name>.py`` and ``python -m strict_loop`` call it, with the working directory, stdout,
stderr and exit code of a real run. Starting a Python process costs ~0.4 s, so real processes are
kept for what is about the process boundary: one smoke test per entry point (test_entry_points.py),
concurrent writers, crashes, held locks and the MCP server over stdio.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

# Compiled bytecode is cached, as Python does by default, even where the environment turns that off
# (PYTHONDONTWRITEBYTECODE=1): otherwise every test module is re-rewritten and every child process
# recompiles the whole package from source, which doubles the suite's time. __pycache__ is ignored by git.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

from strict_loop.cli import app  # noqa: E402 (after the bytecode switch: this import compiles the package)
from strict_loop.loop.workspace import Workspace  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"

# Every child process imports the code of this checkout, as the pytest process does (pythonpath in
# pyproject.toml), and not whatever copy of the package happens to be installed.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)

# Nothing the suite runs records anything in the user's ~/.config (trusted contracts, the alert outbox): a folder of
# the session's from the start, so that module-scoped fixtures and child processes are covered too; each test then
# gets a fresh one of its own (the user_config_dir fixture).
USER_CONFIG = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
SESSION_CONFIG = Path(tempfile.mkdtemp(prefix="strict-loop-tests-config-"))
"""Made in every process that imports this file (pytest, and each xdist worker); removed at its end (below)."""
os.environ["XDG_CONFIG_HOME"] = str(SESSION_CONFIG)


TMPFS = Path("/dev/shm")

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # Started in the background by a shell without job control (`cmd &`, nohup): Ctrl-C is ignored and every process
    # the tests start would inherit that, so the tests of what Ctrl-C does would hang. The tests' own processes get
    # Python's default handling back, as a person's terminal gives them.
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """Put tmp_path (so every test workspace) on tmpfs when the machine has one and TMPDIR is not set.

    The core fsyncs every state write and most ledger lines; on a shared, busy disk those fsyncs are
    most of the suite's time. On tmpfs they return at once, while files, renames, locks and crashes
    behave as on any disk; no test can observe a power cut either way. pytest's usual numbered,
    self-cleaning pytest-of-<user>/pytest-N folders are kept, only under /dev/shm.

    Then, before any xdist worker starts, the test modules are rewritten once for all of them (below).
    """
    if (
        config.option.basetemp is None
        and not os.environ.get("TMPDIR")
        and TMPFS.is_dir()
        and os.access(TMPFS, os.W_OK | os.X_OK)
    ):
        os.environ["TMPDIR"] = str(TMPFS)
        tempfile.tempdir = None  # gettempdir() may have cached /tmp already
    _prime_assertion_rewriting(config)


def _prime_assertion_rewriting(config: pytest.Config) -> None:
    """Write pytest's cache of the test modules with their asserts rewritten, once, before the xdist workers start.

    On a fresh checkout (CI) every worker would rewrite every test module itself, all of them at once: ~2.5 s of CPU
    per worker, for the same files. The workers then read the cache, as on any later run. This uses pytest's private
    helpers: if they change, nothing is primed and the workers rewrite as before.
    """
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None) or sys.dont_write_bytecode:
        return  # a worker, or no workers: the one process rewrites what it imports, once
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        for source in sorted(Path(__file__).parent.glob("test_*.py")):
            cache = rewrite.get_cache_dir(source)
            pyc = cache / (source.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(source, pyc, state.trace) is None and rewrite.try_makedirs(cache):
                stat, code = rewrite._rewrite_test(source, config)
                rewrite._write_pyc(state, code, stat, pyc)
    except Exception:  # noqa: BLE001 (another pytest: the workers rewrite for themselves)
        return


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove this process's session config folder: left behind, one per process and run piled up in /tmp and
    /dev/shm (issue 26). pytest's own folder of the run goes when the run passes; a failing run's stays until the
    next run ends (``tmp_path_retention_*`` in pyproject.toml)."""
    shutil.rmtree(SESSION_CONFIG, ignore_errors=True)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Take what collection built out of the garbage collector's sight: the package, the test modules and all they
    import (~200,000 objects that live as long as the process) were walked again by every full collection (~0.1 s
    each), those Python starts as the tests' objects pile up and the five pytest makes as each process ends: ~1.5 s
    of CPU per worker. Objects the tests make are collected as before."""
    gc.freeze()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the CPUs. Much of a slow test is waiting (on a harness starting, a
    scripted model holding a request, a backoff), and a third worker fills it: on 2 cores the full suite
    took 127 s with 3 workers against 141 s with 2 (same CPU time). ``--maxprocesses`` still caps it."""
    return (os.cpu_count() or 1) + 1


@pytest.hookimpl(trylast=True)  # after pytest has grouped the tests by the fixtures they share
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the modules with the most slow tests first, each module's tests in their own order.

    xdist's worksteal gives each worker a contiguous share and lets an idle worker take the back half of
    a busy one's: with the long tests at the front, the run ends on short ones, and no worker is left
    alone with a long test while the other idles. Whole modules move, so module-scoped fixtures still
    start once per worker.
    """
    slow: dict[str, int] = {}
    for item in items:
        slow[item.path] = slow.get(item.path, 0) + (item.get_closest_marker("slow") is not None)
    items.sort(key=lambda item: -slow[item.path])  # stable: ties keep the collection order


@pytest.fixture
def ws_dir(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


@dataclass
class Run:
    """What a finished run left behind: the fields of ``subprocess.CompletedProcess`` that tests read."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def _exit_code(exc: SystemExit, stderr: io.StringIO) -> int:
    """The status the interpreter would exit with for ``sys.exit(exc.code)``."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=stderr)
    return 1


_IN_PROCESS = threading.Lock()


def call_main(argv: Sequence[str], prog: Optional[str], cwd: Path) -> Run:
    """``sys.exit(app.main(argv, prog=prog))`` in ``cwd``, in this process, with its output captured.

    The working directory, sys.stdout and sys.stderr belong to the whole process: calls from several
    threads take turns, and other threads must not print or use relative paths meanwhile.
    """
    out, err = io.StringIO(), io.StringIO()
    with _IN_PROCESS:
        return _call_main(argv, prog, cwd, out, err)


def _call_main(argv: Sequence[str], prog: Optional[str], cwd: Path, out: io.StringIO, err: io.StringIO) -> Run:
    old_cwd = os.getcwd()
    debug = os.environ.pop("STRICT_LOOP_DEBUG", None)  # as before, when runs were processes: errors stay one line
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                raise SystemExit(app.main(list(argv), prog=prog))  # the shim: sys.exit(main(...))
            except SystemExit as exc:  # also argparse's, for --help, --version and usage errors
                code = _exit_code(exc, err)
            except Exception:  # what the interpreter does with an uncaught exception
                traceback.print_exc()
                code = 1
    finally:
        os.chdir(old_cwd)
        if debug is not None:
            os.environ["STRICT_LOOP_DEBUG"] = debug
    return Run([prog or "strict-loop", *argv], code, out.getvalue(), err.getvalue())


def _checked(run: Run, check: bool) -> Run:
    if check and run.returncode != 0:
        raise AssertionError(f"{run.args} exited {run.returncode}\nstdout: {run.stdout}\nstderr: {run.stderr}")
    return run


def run_script(name: str, *args: str, cwd: Path, check: bool = True) -> Run:
    """Run ``scripts/<name>.py``: what the shim does (``main([name, *argv], prog="<name>.py")``), in this process."""
    assert (SCRIPTS / f"{name}.py").is_file(), f"there is no scripts/{name}.py"
    return _checked(call_main([name, *args], f"{name}.py", cwd), check)


def run_cli(*args: str, cwd: Path, check: bool = True) -> Run:
    """Run ``strict-loop`` / ``python -m strict_loop`` (``main(argv)``), in this process."""
    return _checked(call_main(args, None, cwd), check)


def run_json(name: str, *args: str, cwd: Path):
    return json.loads(run_script(name, *args, "--json", cwd=cwd).stdout)


def read_jsonl(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def init_basic(ws: Path, task_id: str = "demo", *extra: str) -> None:
    run_script(
        "init_state",
        "--task-id",
        task_id,
        "--goal",
        "Write notes.md",
        "--global-stop-condition",
        "notes.md says done",
        "--require-text",
        "notes.md::done",
        *extra,
        cwd=ws,
    )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def git_repo(ws: Path) -> Path:
    """Make ``ws`` a git repository with one commit (a.txt = v0)."""
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "me@example.com")
    git(ws, "config", "user.name", "Me")
    (ws / "a.txt").write_text("v0\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-qm", "start")
    return ws


def tree_files(root: Path) -> dict[str, bytes]:
    """Every file under ``root``, by relative path, with its bytes: to compare what an install wrote byte for byte."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def tree_digest(root: Path) -> str:
    """A hash of every file under ``root`` (lock files aside): equal digests mean nothing was written."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name != ".lock":
            h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(autouse=True)
def user_config_dir(tmp_path_factory, monkeypatch) -> Path:
    """A fresh ``$XDG_CONFIG_HOME`` per test: what the tool records about this machine never leaks between tests or into
    ~/.config."""
    d = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(d))
    return d / "strict-loop"


@pytest.fixture(autouse=True)
def hook_daemon_dir(monkeypatch) -> Iterator[Path]:
    """A fresh ``$XDG_RUNTIME_DIR`` per test: the hook daemons a test's hooks start live there, and are stopped at
    teardown.

    Removing the folder also makes a daemon started a moment too late exit at once (its socket folder is gone).
    """
    base = Path(tempfile.mkdtemp(prefix="sl-run-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    yield base / "strict-loop"
    stop_hook_daemons(base / "strict-loop")
    shutil.rmtree(base, ignore_errors=True)


def hook_daemon_pids(folder: Path) -> list[int]:
    """The pids of the live hook daemons of a runtime folder (each holds ``<socket>.lock`` with its pid in it)."""
    pids = []
    for lock in sorted(folder.glob("*.lock")) if folder.is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            pid = int(lock.read_text().strip())
            if b"strict_loop.harness.daemon" in Path(f"/proc/{pid}/cmdline").read_bytes():
                pids.append(pid)
    return pids


def stop_hook_daemons(folder: Path) -> None:
    for pid in hook_daemon_pids(folder):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def task(ws_dir: Path) -> Workspace:
    """A task whose stop check is a file, for the supervisor's tests (test_supervisor, test_supervisor_wiring)."""
    ws = Workspace(ws_dir)
    ws.init_state(
        task_id="t",
        goal="Make done.txt",
        global_stop_condition="done.txt exists",
        stop_checks={"paths_exist": ["done.txt"]},
    )
    return ws


def finished_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", "pass"])
    proc.wait()
    return proc.pid
