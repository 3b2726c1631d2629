"""The client half of tests/forkserver.py: what the served ``strict-loop`` program runs.

It hands its call (argv, working directory, environment and its stdin, stdout and stderr
themselves) to the fork server and exits as the child that ran the call did. It is run with
``python -I -S`` and imports only what a bare interpreter has already loaded or builds in, so a
call costs about what starting Python costs.
"""

import os
import sys
from _socket import AF_UNIX, SCM_RIGHTS, SOCK_STREAM, SOL_SOCKET, socket
from array import array

STDIO = (0, 1, 2)


def is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def encode(argv: list, cwd: bytes, env: dict, fds: list) -> bytes:
    """One request: NUL-separated fields (none can hold a NUL): cwd, the open stdio fds, argc, argv, then KEY=VALUE."""
    fields = [cwd, " ".join(map(str, fds)).encode(), str(len(argv)).encode(), *map(os.fsencode, argv)]
    fields += [key + b"=" + value for key, value in env.items()]
    return b"\0".join(fields)


def call(sock_path: str) -> None:
    fds = [fd for fd in STDIO if is_open(fd)]
    request = encode(sys.argv, os.getcwdb(), dict(os.environb), fds)
    conn = socket(AF_UNIX, SOCK_STREAM)
    try:
        conn.connect(sock_path)
        sent = conn.sendmsg([request], [(SOL_SOCKET, SCM_RIGHTS, array("i", fds))])
        conn.sendall(request[sent:])
        conn.shutdown(1)  # SHUT_WR: the server reads the request to its end
        status = b""
        while chunk := conn.recv(64):
            status += chunk
    finally:
        conn.close()
    if not status:
        sys.exit(f"strict-loop fork server at {sock_path} closed the call without an exit status")
    code = int(status)
    if code < 0:  # the child died of a signal: so does this process, for the shell's $? (128 + N)
        import signal

        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)
