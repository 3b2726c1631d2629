"""A fork server that runs the ``strict-loop`` console script's code in a fresh process per call, without the import
cost.

test_docs.py runs every documented command with bash; each ``strict-loop ...`` line would start a
new interpreter that imports the CLI again (~0.3 s of CPU each, hundreds of calls per suite run).
Here one server process imports the CLI once; ``client_script`` writes a ``strict-loop`` program for
PATH whose every call sends its argv, working directory, environment and its own stdin, stdout and
stderr (the file descriptors themselves, over a Unix socket) to the server. The server forks a child
that takes those over and runs ``sys.exit(strict_loop.entry.main())`` as the console script does,
ending as the interpreter's exit does (threads, atexit, flushes, exit status, tracebacks) but for
its teardown of every object (see ``_exit_as_the_interpreter``); the client exits with the child's
status. So output, exit codes, files written and pipes are what a real run gives; only
the interpreter start-up and the imports are shared. The README is still run with the genuine
console script, and test_entry_points.py starts every entry point as its own process.

The client half, which must start fast, is tests/forkclient.py.
"""

from __future__ import annotations

import gc
import os
import select
import signal
import socket
import sys
from pathlib import Path

from forkclient import STDIO, is_open


def client_script(bin_dir: Path, sock_path: Path) -> Path:
    """Write ``<bin_dir>/strict-loop``: a program that runs its call in the server listening at ``sock_path``."""
    exe = bin_dir / "strict-loop"
    exe.write_text(
        f"#!{sys.executable} -IS\n"
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        f"import forkclient\nforkclient.call({str(sock_path)!r})\n",
        encoding="utf-8",
    )
    exe.chmod(0o755)
    return exe


def decode(request: bytes) -> tuple:
    """The argv, cwd, environment and stdio fd numbers of a request that forkclient.encode made."""
    cwd, fds, argc, *rest = request.split(b"\0")
    argv, env = [os.fsdecode(a) for a in rest[: int(argc)]], rest[int(argc) :]
    return argv, os.fsdecode(cwd), [e.split(b"=", 1) for e in env], [int(fd) for fd in fds.split()]


LAZY_IMPORTS = ("jsonschema", "jsonschema.exceptions", "rich.console", "rich.progress", "tomlkit", "ruamel.yaml")
"""What the package imports inside functions, to keep the hook's start-up lean; each call would pay for them again."""


def warm_up() -> None:
    """Do, once, what every call would repeat before its own work: imports, and building the models' validators.

    All of it is pure, the same in every process (code, not state): every strict_loop module (each
    subpackage's modules too: one left out costs each call ~40 ms to import and build again) and
    its lazy imports; each pydantic model built (``defer_build`` leaves that to first use); the
    cached JSON Schema validator of each on-disk format.
    """
    import importlib
    import pkgutil

    from pydantic import BaseModel

    import strict_loop

    modules = []
    for found in pkgutil.walk_packages(strict_loop.__path__, "strict_loop.", onerror=lambda _: None):
        if not found.name.endswith(".__main__"):  # which would run the CLI
            try:
                modules.append(importlib.import_module(found.name))
            except ImportError:  # an optional extra this machine lacks: the calls that need it import it themselves
                pass
    for name in LAZY_IMPORTS:
        importlib.import_module(name)
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__.startswith("strict_loop."):
                value.model_rebuild()
    from strict_loop.cli import schemas
    from strict_loop.storage import documents

    for model in schemas.DOCUMENTS.values():
        documents.validator_for(model)


def serve(sock_path: str) -> None:
    """Import the CLI, listen at ``sock_path`` and fork one child per call; report each child's status to its client.

    Ends when its stdin reaches its end: the test process that holds the other end of that pipe has ended.
    """
    warm_up()
    gc.freeze()  # children share these objects unscanned: their collections skip them
    wake_r, wake_w = socket.socketpair()
    wake_w.setblocking(False)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler must be set for the wakeup fd to be written
    signal.set_wakeup_fd(wake_w.fileno())
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(64)
    print("ready", flush=True)
    waiting: dict[int, socket.socket] = {}  # child pid -> the connection of the client waiting for it
    while True:
        readable, _, _ = select.select([listener, wake_r, sys.stdin], [], [])
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
            return  # whoever started the server is gone (its end of the stdin pipe closed): so is the server
        if wake_r in readable:
            wake_r.recv(4096)
            _report_ended(waiting)
        if listener in readable:
            conn, _ = listener.accept()
            pid = _start(conn, (listener, wake_r, wake_w, *waiting.values()))
            if pid is not None:
                waiting[pid] = conn
            _report_ended(waiting)  # a SIGCHLD that came while forking


def _report_ended(waiting: dict[int, socket.socket]) -> None:
    for pid in list(waiting):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            conn = waiting.pop(pid)
            try:
                conn.sendall(str(os.waitstatus_to_exitcode(status)).encode())
            except OSError:
                pass  # the client is gone: nobody waits for the status
            conn.close()


def _start(conn: socket.socket, server_sockets: tuple) -> int | None:
    """Read one call and fork its child; the child never returns from here.

    The child closes the server's sockets, the other clients' among them: a client reads its status to the end,
    which would not come while another call's child (``strict-loop a | strict-loop b``) held its connection.
    """
    try:
        data, fds, _, _ = socket.recv_fds(conn, 65536, len(STDIO))
        chunks = [data]
        while chunk := conn.recv(65536):
            chunks.append(chunk)
        request = decode(b"".join(chunks))
    except (OSError, ValueError):
        conn.close()
        return None
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for sock in (conn, *server_sockets):
        sock.close()
    _become(request, fds)


def _become(request: tuple, fds: list) -> None:
    """Take over the client's stdio, directory, environment and argv, then exit as ``strict-loop`` would."""
    argv, cwd, env, numbers = request
    for target in STDIO:
        if target in numbers:
            os.dup2(fds[numbers.index(target)], target)
        else:
            os.close(target)
    for fd in fds:
        if fd not in STDIO:
            os.close(fd)
    os.chdir(cwd)
    os.environ.clear()
    for key, value in env:
        os.environ[os.fsdecode(key)] = os.fsdecode(value)
    sys.argv = argv
    sys.stdin, sys.stdout, sys.stderr = (
        _text_stream(fd, old) for fd, old in zip(STDIO, (sys.stdin, sys.stdout, sys.stderr), strict=True)
    )
    from strict_loop.entry import main

    _exit_as_the_interpreter(main)


def _exit_as_the_interpreter(main) -> None:
    """``sys.exit(main())``, as the console script does, ended as the interpreter would end it, minus its teardown.

    The interpreter's exit joins the threads, runs the ``atexit`` handlers, flushes stdout and stderr, and
    then frees every module and object: in a forked child that last step writes to every page it shares
    with the server (reference counts), ~30 ms a call, and for code that closes what it writes nothing
    of it reaches a file or the exit status (a file left open and unflushed would lose its tail here,
    and the documented command reading it would fail). So a call that ends cleanly (a return or a
    ``SystemExit`` with a number) does the first three and ``os._exit``s with the status; anything else
    (an uncaught exception, a message for an exit status, stdout that cannot be flushed) is left to the
    interpreter's own exit, tracebacks and all.
    """
    import atexit
    import threading

    try:
        sys.exit(main())
    except SystemExit as stop:
        if stop.code is not None and not isinstance(stop.code, int):
            raise
        status = stop.code or 0
    threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter's exit calls first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            try:
                stream.flush()
            except Exception:
                sys.exit(status)  # the interpreter reports it (and exits 120 for stdout), as for the console script
    os._exit(status)


def _text_stream(fd: int, like):
    """A new sys.std* over ``fd`` with the encoding and error handler the interpreter chose, buffered as it would be.

    None where the client had the descriptor closed, as the interpreter leaves it.
    """
    import io

    if not is_open(fd):
        return None
    line_buffered = fd == 2 or (fd == 1 and os.isatty(fd))
    # not closed here: the wrapper returned owns it
    raw = open(fd, "rb" if fd == 0 else "wb", closefd=False)  # noqa: SIM115
    return io.TextIOWrapper(raw, encoding=like.encoding, errors=like.errors, line_buffering=line_buffered)


if __name__ == "__main__":
    serve(sys.argv[1])
