"""Nothing a supervisor (or ``watch``) starts outlives it unwatched, even after a ``kill -9`` of the supervisor.

Three layers, each covering what the one before may miss:

- on Linux the child gets SIGTERM from the kernel the moment we die (``PR_SET_PDEATHSIG``, set between fork and exec:
  ``dies_with_us``);
- a watchdog process (``ChildRecord.started``; its own session, so the terminal's Ctrl-C or a kill of our group does
  not reach it) holds the read end of a pipe only we can write: EOF without our word means we died, and it ends the
  child's whole process group (SIGTERM, SIGKILL after the grace). A pipe, not a poll of our pid, so it works on macOS
  too and cannot mistake a reused pid for us;
- the child's group is recorded on disk (``child.json``: its leader's pid and start time) and the next start ends a
  group still alive under that leader, a session leader of ours with the same start time: the person's own earlier
  run. A record that names any other process is dropped without a signal sent.

The record and the watchdog exist before the child runs any code of its own (``Launch``): between fork and exec the
child tells us its pid and waits for our word. Recorded only after ``Popen`` returned, a child ran unknown for as long
as recording took, and a ``kill -9`` of ours in that window left it running where no restart could find it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from strict_loop.base.fsio import atomic_write
from strict_loop.base.jsontext import read_object
from strict_loop.base.timefmt import now_iso
from strict_loop.supervisor.lock import _no_proc, alive, process_start, process_uid, zombie

CHILD_FILE = "child.json"
GRACE_S = 3.0
PR_SET_PDEATHSIG = 1
STAND_DOWN = b"done"
"""What we write to the watchdog's pipe when the child ended under our eyes; EOF alone means we died."""
_WATCHDOG = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from strict_loop.supervisor.orphans import watchdog_main; watchdog_main(sys.argv[2:])"
)


class ChildRecord:
    """``<folder>/child.json``: the process group of the child running now, while it runs, and its watchdog."""

    def __init__(self, folder: Path, grace_s: float = GRACE_S) -> None:
        self.path = folder / CHILD_FILE
        self.grace_s = grace_s
        self._watchdog: Optional[tuple[subprocess.Popen[bytes], int]] = None

    def started(self, pid: int) -> None:
        """Record the child's group (started with its own session: group id = its pid) as soon as it runs, and set
        a watchdog on it that ends the group if we die before ``ended``."""
        me, start = os.getpid(), process_start(pid)
        self._watchdog = _watchdog(pid, start, self.grace_s)
        body = {"pgid": pid, "start": start, "owner": me, "owner_start": process_start(me)}
        if self._watchdog is not None:
            body["watchdog"] = self._watchdog[0].pid
        atomic_write(self.path, json.dumps({**body, "started_at": now_iso()}).encode(), sync=False)

    def ended(self) -> None:
        """The child ended under our eyes: the watchdog stands down and the record goes."""
        if self._watchdog is not None:
            proc, fd = self._watchdog
            self._watchdog = None
            try:
                os.write(fd, STAND_DOWN)
            except OSError:
                pass  # the watchdog is gone already
            os.close(fd)
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass  # it exits by itself; never held up here
        self.path.unlink(missing_ok=True)

    def reap(self) -> Optional[dict[str, Any]]:
        """End the group a dead predecessor left running; the record of what was killed, else None.

        A record whose owner still runs is left alone (that process still supervises its child)."""
        data = read_object(self.path)
        if data is None:
            return None
        owner = {"pid": data.get("owner"), "start": data.get("owner_start")}
        if owner["pid"] != os.getpid() and alive(owner):
            return None
        self.path.unlink(missing_ok=True)
        pgid = data.get("pgid")
        if not isinstance(pgid, int) or not ours(pgid, data.get("start")):
            return None
        kill_group(pgid, self.grace_s)
        return {"pgid": pgid, "start": data.get("start"), "started_at": data.get("started_at")}


def ours(pid: int, start: Any) -> bool:
    """Whether ``pid`` is the same process that was recorded: start time equal, a session and group leader, our uid.

    Read without /proc (``getsid``, ``getpgid``; the start and owner through ``lock``): macOS has none."""
    if pid <= 1 or not isinstance(start, str) or process_start(pid) != start:
        return False
    try:
        leads = os.getsid(pid) == os.getpgid(pid) == pid
    except OSError:
        return False
    return leads and process_uid(pid) == os.getuid()


def kill_group(pgid: int, grace_s: float = GRACE_S) -> None:
    """SIGTERM the group, SIGKILL what is left after ``grace_s``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        end = time.monotonic() + (grace_s if sig == signal.SIGTERM else 0)
        while time.monotonic() < end and _group_alive(pgid):
            time.sleep(0.05)
        if not _group_alive(pgid):
            return


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def dies_with_us(then: Optional[Callable[[], None]] = None) -> Optional[Callable[[], None]]:
    """A ``preexec_fn`` for a child we start: on Linux the kernel sends it SIGTERM when the thread that started it
    dies, even by SIGKILL (``prctl(PR_SET_PDEATHSIG)``); then ``then`` (e.g. rlimits). Elsewhere just ``then``: the
    watchdog covers macOS.

    The libc call is looked up here, before the fork: between fork and exec only a C call is made."""
    if not sys.platform.startswith("linux"):
        return then
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        sig, zero = ctypes.c_ulong(signal.SIGTERM), ctypes.c_ulong(0)
    except (OSError, AttributeError):
        return then
    parent = os.getpid()

    def apply() -> None:
        prctl(PR_SET_PDEATHSIG, sig, zero, zero, zero)
        if os.getppid() != parent:  # we died before the call: no signal will come, so end now
            os._exit(1)
        if then is not None:
            then()

    return apply


class Launch:
    """``with Launch(record, then) as preexec: Popen(..., start_new_session=True, preexec_fn=preexec)``: the child,
    between fork and exec, sends its pid and waits; a thread of ours calls ``record(pid)`` (``ChildRecord.started``)
    meanwhile, then lets it go on to ``then`` (e.g. rlimits) and the exec. ``Popen`` itself waits for the exec, hence
    the thread.

    If ``record`` fails, or we die while the child waits, it reads EOF and exits (127) without running anything:
    a child nobody recorded never runs. A ``record`` error is raised when the block ends."""

    def __init__(self, record: Callable[[int], None], then: Optional[Callable[[], None]] = None) -> None:
        self.record, self.then = record, then
        self.error: Optional[BaseException] = None
        self._hello = os.pipe()  # child -> us: its pid (both ends close on exec: the program never holds them)
        self._go = os.pipe()  # us -> child: one byte once recorded; EOF means do not run
        self._thread = threading.Thread(target=self._serve, name="strict-loop-launch", daemon=True)

    def __enter__(self) -> Callable[[], None]:
        self._thread.start()
        apply = dies_with_us(self._in_child)
        assert apply is not None
        return apply

    def __exit__(self, *exc: object) -> None:
        os.close(self._hello[1])  # no child forked (Popen failed first): the thread reads EOF and ends
        self._thread.join()
        for fd in (self._hello[0], self._go[0]):
            os.close(fd)
        if self.error is not None and exc[0] is None:
            raise self.error

    def _in_child(self) -> None:
        """Between fork and exec: system calls only."""
        os.close(self._hello[0])
        os.close(self._go[1])  # ours is then the only write end: our death is an EOF here
        os.write(self._hello[1], str(os.getpid()).encode())
        if os.read(self._go[0], 1) != b"g":
            os._exit(127)
        if self.then is not None:
            self.then()

    def _serve(self) -> None:
        go = self._go[1]
        try:
            said = os.read(self._hello[0], 32)  # one write of a few bytes: whole, or EOF
            if said:
                self.record(int(said))
                os.write(go, b"g")
        except BaseException as exc:  # noqa: BLE001 (kept for the caller; the child sees EOF and never runs)
            self.error = exc
        finally:
            os.close(go)


def _watchdog(pgid: int, start: Optional[str], grace_s: float) -> Optional[tuple[subprocess.Popen[bytes], int]]:
    """Start the watchdog of group ``pgid``: (its process, the write end of its pipe); None if it cannot start (the
    parent-death signal and the record still hold)."""
    from strict_loop.base.skillfiles import PACKAGE_PARENT

    read_end, write_end = os.pipe()  # both close on exec: only the watchdog gets the read end, only we hold the other
    # -I and cwd /: nothing of the workspace's (a json.py beside it, PYTHONPATH) is ever imported by it; where /proc
    # tells about processes it needs nothing installed either (-S: no site-packages, ~10 ms less); elsewhere psutil
    flags = ("-I", "-S") if not _no_proc() else ("-I",)
    argv = [
        sys.executable,
        *flags,
        "-c",
        _WATCHDOG,
        PACKAGE_PARENT,
        str(read_end),
        str(pgid),
        start or "",
        f"{grace_s:g}",
    ]
    try:
        proc = subprocess.Popen(
            argv,
            cwd="/",
            pass_fds=(read_end,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # the terminal's Ctrl-C, or a kill of our group, is not for it
        )
    except (OSError, ValueError):
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    return proc, write_end


def watchdog_main(args: list[str]) -> None:
    """The watchdog process: wait on the pipe; EOF without ``STAND_DOWN`` means the supervisor died, so end the
    child's group (unless its leader's pid now names another process: then the group ended long ago)."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    fd, pgid, start, grace_s = int(args[0]), int(args[1]), args[2] or None, float(args[3])
    try:
        said = os.read(fd, len(STAND_DOWN))
    except OSError:
        said = b""
    if said:
        return  # the child ended under the supervisor's eyes
    now = process_start(pgid)
    if now is not None and start is not None and now != start and not zombie(pgid):
        return  # the pid was reused: a group still holding our processes keeps its id, so ours is gone
    kill_group(pgid, grace_s)
