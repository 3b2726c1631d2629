"""The hook's side of the per-workspace hook daemon (``harness.daemon``): its socket, one request to it, and the thin
hook that asks it (``hook_words``). Why: a harness starts its hook as a new process for every tool call, and recording
a turn needs pydantic and the detector (hundreds of ms to import). A daemon that imported them answers in a few ms;
this module asks it importing only C modules of the standard library, so it can run as the hook itself. The rules:

- the socket lives in a per-user runtime folder that must be a real directory owned by us with no group/other
  permission bits (else there is no daemon: the hook works in-process);
- its name digests the workspace's real path, the code (interpreter, prefix, each module's mtime and size) and the
  environment the daemon works with (its secrets, alert channels, config folder): the daemon, started with the hook's
  environment, has it already, so a request carries only the per-session names of ``PER_CALL_ENV``;
- a paused task's tool calls never come here (``handler``; ``thin`` hands any doubt to the full hook, in process);
- a request is committed only after the daemon confirmed it has all of it and we said go: before that, any failure
  means the hook handles the event itself; after it, it says nothing (never record a turn twice).
"""

from __future__ import annotations

import _json  # json's C parts: the json package imports re and enum, ~10 ms on every hook call
import _socket  # the C module under ``socket``: the same calls, without ~4 ms of enum set-up
import _struct
import os
import sys
import time

try:
    from _blake2 import blake2b  # hashlib's own blake2b, without loading OpenSSL: a few ms on every hook call
except ImportError:  # pragma: no cover (an interpreter built without it)
    from hashlib import blake2b

TYPE_CHECKING = False  # typing imports re: named for the type checker only
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, Optional

IDLE_ENV = "STRICT_LOOP_HOOKD_IDLE"
DAEMON_ENV, OFF = "STRICT_LOOP_HOOKD", ("0", "false", "no", "off")  # ``handler``'s: off, every call is in-process
CONNECT_TIMEOUT_S = 0.25
ACK_TIMEOUT_S = 3.0  # for the daemon (it serves one at a time) to take a request before the hook does the work
ANSWER_TIMEOUT_S = 40.0  # after the go: the daemon may wait 20 s for the task lock, as the in-process hook would
MAX_SOCKET_PATH = 107
HEADER = _struct.Struct("!II")  # request framing: the lengths of the JSON header and of the payload after it
ACK, GO = b"A", b"G"
MAX_HEADER_BYTES = 1 << 20
MAX_PAYLOAD_BYTES = 8 << 20  # ``handler.MAX_STDIN_BYTES``
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # strict_loop/
PER_CALL_ENV = ("STRICT_LOOP_TASK", "STRICT_LOOP_SUPERVISOR")  # all a request carries: a session's task, no secret
AGENT_KEEPS = frozenset({"STRICT_LOOP_HOOKD", "STRICT_LOOP_HOOKD_IDLE", "STRICT_LOOP_DEBUG"})  # ``masking``'s
SECRET_WORDS = "TOKEN SECRET KEY PASSWORD PASSWD PASSPHRASE CREDENTIAL AUTH PRIVATE COOKIE SIGNATURE WEBHOOK DSN"
NOT_SECRET = frozenset({"SSH_AUTH_SOCK", "XAUTHORITY", "GPG_AGENT_INFO", "KEYTIMEOUT"})
THIN_PHASES = {"PreToolUse": "pre", "PostToolUse": "post", "PostToolUseFailure": "post", "UserPromptSubmit": "prompt"}
THIN_PHASES.update(pre_tool_call="pre", post_tool_call="post", pre_llm_call="prompt", Stop="stop", BeforeTool="pre")
THIN_PHASES.update(AfterTool="post", BeforeAgent="prompt", AfterAgent="stop")  # ``payloads``' names, Gemini CLI's too
THIN_HARNESSES = ("codex", "claude", "gemini", "hermes", "opencode")  # command hooks (Claude's HTTP hooks: the daemon)
LIVE_RESCAN_S = 600.0  # ``sessions.LIVE_RESCAN_S``: an older index is the full hook's to rebuild
MAX_STATE_BYTES = 4 << 20
_ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_-"  # a task id: 1-64 of these, the first a letter or digit


def runtime_dir(env: Mapping[str, str], create: bool = True) -> Optional[Path]:
    """``$XDG_RUNTIME_DIR/strict-loop`` (else ``/tmp/strict-loop-<uid>``) if it is safe to use, else None."""
    from pathlib import Path

    folder = _runtime_folder(env, create)
    return None if folder is None else Path(folder)


def _runtime_folder(env: Mapping[str, str], create: bool) -> Optional[str]:
    """Safe: a real directory owned by us, no group or other bits (in /tmp another user could plant a socket)."""
    base = env.get("XDG_RUNTIME_DIR", "").strip()
    folder = os.path.join(base, "strict-loop") if base and os.path.isabs(base) else f"/tmp/strict-loop-{os.getuid()}"
    try:
        if create:
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                pass
        info = os.lstat(folder)
    except OSError:
        return None
    if (info.st_mode & 0o170000) != 0o040000 or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


def code_fingerprint() -> str:
    """The interpreter, its environment's prefix, and every module's mtime and size: a changed file is a new daemon."""
    parts = [_prefix(), sys.version]  # not sys.executable: python and python3 are one interpreter
    folders = [PACKAGE_DIR]
    while folders:  # the package and its subpackages
        with os.scandir(folders.pop()) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    parts.append(f"{entry.path}:{info.st_mtime_ns}:{info.st_size}")
                elif entry.is_dir(follow_symlinks=False) and not entry.name.startswith(("_", ".")):
                    folders.append(entry.path)
    return "\n".join(parts)


def _prefix() -> str:
    """``sys.prefix`` as ``site`` sets it (``-S`` leaves a virtual environment's base): the thin hook's daemon is the
    one a hook started with site names."""
    if not sys.flags.no_site:
        return sys.prefix
    launcher = os.environ.get("__PYVENV_LAUNCHER__") if sys.platform == "darwin" else None
    exe_dir = os.path.dirname(os.path.abspath(launcher or sys.executable))
    venv = os.path.dirname(exe_dir)
    return venv if any(os.path.isfile(os.path.join(d, "pyvenv.cfg")) for d in (exe_dir, venv)) else sys.prefix


def socket_path(root: str | os.PathLike[str], env: Mapping[str, str], create: bool = True) -> Optional[Path]:
    """Workspace ``root``'s daemon socket for this code and configuration; None: no safe folder, or too long a path."""
    from pathlib import Path

    found = socket_file(root, env, create)
    return None if found is None else Path(found)


def socket_file(root: str | os.PathLike[str], env: Mapping[str, str], create: bool = True) -> Optional[str]:
    """``socket_path`` as a string, without pathlib."""
    folder = _runtime_folder(env, create)
    if folder is None:
        return None
    # HOME and XDG_CONFIG_HOME too: the daemon reads the machine's records (trust, snapshot stores) under its own
    key = "\0".join(
        [os.path.realpath(root), code_fingerprint(), env.get("HOME", ""), env.get("XDG_CONFIG_HOME", "")]
        + environment_key(env)
    )
    digest = blake2b(key.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    path = os.path.join(folder, f"{digest}.sock")
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None


def environment_key(env: Mapping[str, str]) -> list[str]:
    """What of ``env`` the daemon uses from its own environment: every variable whose value is masked as a secret (the
    project's own: alert channels, the page's URL), but the per-call names and the hook's own settings."""
    skip = {*PER_CALL_ENV, *AGENT_KEEPS}
    return sorted(f"{k}={v}" for k, v in env.items() if secret_name(k) and k.upper() not in skip)


def secret_name(name: str) -> bool:
    """``masking.looks_secret`` without ``re`` (a test keeps them in step), and every name that is not ASCII: a daemon
    too many costs a start, one too few could leave a secret unmasked."""
    upper = name.upper()
    if not name.isascii() or upper.startswith(("STRICT_LOOP_", "APPRISE_")):
        return True
    if upper in NOT_SECRET:
        return False
    return any(word in upper for word in SECRET_WORDS.split()) or upper == "PAT" or upper.endswith("_PAT")


def request_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment a request carries: ``PER_CALL_ENV`` only."""
    return {name: env[name] for name in PER_CALL_ENV if name in env}


def encode_request(header: dict[str, Any], payload: bytes) -> bytes:
    head = _dumps(header).encode()  # ASCII: an environment value that is not valid UTF-8 travels as \u escapes
    return HEADER.pack(len(head), len(payload)) + head + payload


def _dumps(value: Any) -> str:
    """``json.dumps`` of a header's strings and objects, with json's own C escaping."""
    if isinstance(value, str):
        return _json.encode_basestring_ascii(value)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return "{" + ", ".join(f"{_dumps(k)}: {_dumps(v)}" for k, v in value.items()) + "}"
    return __import__("json").dumps(value)


class NotServed(Exception):
    """The daemon did not take the request: the hook does the work itself."""


class Unanswered(Exception):
    """The daemon took the request and then failed (died, timed out): the work may or may not be done."""


ANSWERED = b"A"  # first byte of a handled request's answer: '' is 'nothing to say', not a daemon that died


def ask(path: str | os.PathLike[str], header: dict[str, Any], payload: bytes) -> str:
    """The daemon's answer to one request; NotServed if it never took it, Unanswered if it failed after taking it."""
    try:
        request = encode_request(header, payload)
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except (OSError, ValueError) as exc:
        raise NotServed(str(exc)) from None
    try:
        try:
            sock.settimeout(CONNECT_TIMEOUT_S)
            sock.connect(os.fspath(path))
            sock.settimeout(ACK_TIMEOUT_S)
            sock.sendall(request)
            if read_exactly(sock, 1) != ACK:
                raise NotServed("no acknowledgement")
            sock.sendall(GO)
        except OSError as exc:  # refused, missing, timed out, reset: the daemon has not started on this request
            raise NotServed(str(exc)) from None
        try:  # committed: from here on, a failure is Unanswered (the caller decides: silence, or refuse while paused)
            sock.settimeout(ANSWER_TIMEOUT_S)
            data = read_exactly(sock, 16 << 20)  # until the daemon closes (an answer is far shorter)
        except OSError as exc:
            raise Unanswered(str(exc)) from None
        if not data.startswith(ANSWERED):
            raise Unanswered("the daemon ended before answering")
        return data[len(ANSWERED) :].decode("utf-8", "replace")
    finally:
        sock.close()


def read_exactly(sock: _socket.socket, count: int) -> bytes:
    data = bytearray()
    while len(data) < count:
        chunk = sock.recv(min(count - len(data), 1 << 20))
        if not chunk:
            break
        data += chunk
    return bytes(data)


def spawn(root: str | os.PathLike[str], path: str | os.PathLike[str], env: Mapping[str, str]) -> None:
    """Start the workspace's daemon, detached, with the hook's environment ``env``, for the next calls (two racing
    hooks may start two: one exits). It runs from this package's parent folder, so ``-m`` imports this very code; it
    serves only if it computes the same socket ``path`` (else it would wait, unasked, behind a name nobody knows)."""
    import subprocess

    argv = [sys.executable, "-m", "strict_loop.harness.daemon", "serve", os.fspath(root), os.fspath(path)]
    null, folder = subprocess.DEVNULL, os.path.dirname(PACKAGE_DIR)
    try:
        subprocess.Popen(argv, stdin=null, stdout=null, stderr=null, start_new_session=True, cwd=folder, env=dict(env))
    except (OSError, ValueError):  # ValueError: a value Popen refuses (an embedded NUL)
        return


# ---------------------------------------------------------------- the thin hook: python -S entry.py hook HARNESS


def hook_words(program: str, harness: str, workspace: Optional[str | os.PathLike[str]] = None) -> list[str]:
    """The command a harness runs for each hook event: for ``THIN_HARNESSES``, this interpreter without ``site`` (~30 ms
    of .pth files on some machines) running ``entry.py``, which runs ``main`` here from cached bytecode (a call the
    daemon answers costs ~15 ms, not ~100 ms of imports); others' ``program``."""
    head = [sys.executable, "-S", os.path.join(PACKAGE_DIR, "entry.py")] if harness in THIN_HARNESSES else [program]
    return [*head, "hook", harness, *(["--workspace", os.fspath(workspace)] if workspace else [])]


def is_hook_words(words: list[str], harness: str) -> bool:
    """Whether a hook command's words are ``hook_words``' for ``harness`` (any interpreter, any installed copy)."""
    if words[:1] and os.path.basename(words[0]) == "strict-loop":
        return words[1:3] == ["hook", harness]
    thin = words[1:2] == ["-S"] and words[3:5] == ["hook", harness]
    return thin and words[2].endswith("/strict_loop/entry.py")


def main(argv: Optional[list[str]] = None) -> int:
    """``hook HARNESS [--workspace DIR]``, the event on stdin, as ``strict-loop hook`` (always 0)."""
    args = sys.argv[1:] if argv is None else argv
    harness, workspace = _arguments(args)
    if harness is None:
        return int(_package_handler().main(args[1:]))  # reads them, or says how
    try:
        data = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    except (OSError, ValueError, AttributeError):
        return 0
    out, daemon, start = thin(harness, data, workspace, os.environ)
    if out is None:
        out = _package_handler().handle(harness, data, workspace=workspace, daemon=daemon)
        if start:
            spawn(*start, os.environ)  # answered here: the daemon is for the next calls
    try:
        if out:
            sys.stdout.buffer.write((out + "\n").encode())
            sys.stdout.flush()
    except (OSError, ValueError, AttributeError):  # UnicodeEncodeError: what the full hook could not print either
        pass
    return 0


def _arguments(args: list[str]) -> tuple[Optional[str], Optional[str]]:
    """``hook HARNESS [--workspace DIR]`` as ``hook_words`` writes it; (None, None) for the full hook to read."""
    known = args[:1] == ["hook"] and args[1:2] and args[1] in THIN_HARNESSES
    if known and (len(args) == 2 or (len(args) == 4 and args[2] == "--workspace")):
        return args[1], (args[3] if len(args) == 4 else None)
    return None, None


def thin(
    harness: str, data: bytes, workspace: Optional[str], env: Mapping[str, str]
) -> tuple[Optional[str], bool, Optional[tuple[str, str]]]:
    """The daemon's answer to a tool or prompt event when no task it may belong to is paused ('' at an attended Stop);
    else None, whether the full hook may ask the daemon itself (no: it is off, or failed after taking a PreToolUse),
    and the daemon to start once the full hook answered (none took the call)."""
    if env.get(DAEMON_ENV, "").strip().lower() in OFF:
        return None, False, None
    payload = _loads(data) if len(data) <= MAX_PAYLOAD_BYTES else None
    phase = THIN_PHASES.get(str(payload.get("hook_event_name"))) if isinstance(payload, dict) else None
    try:
        cwd = os.getcwd()
    except OSError:
        phase = None
    if phase is None or not isinstance(payload, dict):
        return None, True, None
    event_cwd = payload.get("cwd")
    root = _workspace(workspace, event_cwd if isinstance(event_cwd, str) else "", cwd)
    if root is None:
        return "", False, None  # no loop here: nothing to record, refuse or say
    if phase == "stop":
        return ("", False, None) if _quiet(root, env, stop=True) else (None, True, None)
    path = socket_file(root, env) if _quiet(root, env, stop=False) else None
    if path is None:
        return None, True, None
    header = {"op": "hook", "harness": harness, "workspace": root, "cwd": cwd, "env": request_env(env)}
    try:
        return ask(path, header, data), False, None
    except NotServed:
        return None, False, (root, path)
    except Unanswered:  # a turn may be recorded: silence; a PreToolUse is decided again, here
        return ("" if phase != "pre" else None), False, None


_DECODER = {"strict": True, "object_hook": None, "object_pairs_hook": None, "parse_float": float, "parse_int": int}
_SCAN = _json.make_scanner(type("Decoder", (), {**_DECODER, "parse_constant": float})())
"""A ``json.JSONDecoder``'s scanner (NaN is read here; the full hook, the daemon's, refuses it)."""


def _loads(data: bytes) -> Any:
    """The JSON document ``data``, or None when it is not one (the full hook reads it and says why)."""
    try:
        text = data.decode("utf-8")
        value, end = _SCAN(text, len(text) - len(text.lstrip(" \t\n\r")))
    except (Exception, RecursionError):  # noqa: BLE001 (StopIteration, ValueError, deep nesting: the full hook's)
        return None
    return value if not text[end:].strip(" \t\n\r") else None


def _workspace(given: Optional[str], event_cwd: str, process_cwd: str) -> Optional[str]:
    """``handler.find_workspace`` without pathlib: ``--workspace``, else the nearest ``.agent-loop/`` upward."""
    if given:
        root = os.path.expanduser(given)
        return os.path.realpath(root) if os.path.isdir(os.path.join(root, ".agent-loop")) else None
    folder = os.path.join(process_cwd, os.path.expanduser(event_cwd or process_cwd))
    while not os.path.isdir(os.path.join(folder, ".agent-loop")):
        if os.path.dirname(folder) == folder:
            return None
        folder = os.path.dirname(folder)
    return os.path.realpath(folder)


def _quiet(root: str, env: Mapping[str, str], stop: bool) -> bool:
    """True only when each task the call may belong to (``STRICT_LOOP_TASK``'s, else the live index's) has no monitor
    file or one saying ``paused: false`` (at a Stop: runs attended); anything unusual (an index to rebuild) is False."""
    manager = os.path.join(root, ".agent-loop")
    listed = [env.get("STRICT_LOOP_TASK", "").strip()]
    if not listed[0]:
        try:
            info = os.stat(os.path.join(manager, "tasks"))
        except OSError:
            return True  # no tasks folder: no task
        index = _read_object(os.path.join(manager, "live-tasks.json")) or {}
        built, listed = index.get("built"), index.get("live")  # type: ignore[assignment]
        if index.get("stamp") != [info.st_ino, info.st_mtime_ns, info.st_nlink] or not isinstance(listed, list):
            return False
        if not isinstance(built, (int, float)) or not 0 <= time.time() - built < LIVE_RESCAN_S:
            return False
    for task in listed:
        if not (isinstance(task, str) and 0 < len(task) <= 64 and task[0] in _ID_CHARS[:36]) or task.strip(_ID_CHARS):
            return False
        folder = os.path.join(manager, "tasks", task)
        contract = (_read_object(os.path.join(folder, "state.json")) or {}).get("contract") if stop else {}
        if stop and (not isinstance(contract, dict) or contract.get("operating_mode") in ("unattended", None)):
            return False  # the Stop hook acts for an unattended task only: its checks are the full hook's
        monitor = os.path.join(folder, "monitor.json")
        if not stop and os.path.lexists(monitor) and (_read_object(monitor) or {}).get("paused") is not False:
            return False
    return True


def _read_object(path: str) -> Optional[dict[str, Any]]:
    """A small JSON object of the loop's, read through no link; None if absent, unreadable or no object."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as file:
            regular = (os.fstat(file.fileno()).st_mode & 0o170000) == 0o100000  # a FIFO would hang the hook
            data = file.read(MAX_STATE_BYTES + 1) if regular else b""
    except (OSError, ValueError):
        return None
    value = _loads(data) if len(data) <= MAX_STATE_BYTES else None
    return value if isinstance(value, dict) else None


def _package_handler() -> Any:
    """``harness.handler``, with the interpreter's site (the thin hook runs with ``-S``) and this copy importable."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")  # as ``handler.main``
    if sys.flags.no_site and "site" not in sys.modules:
        __import__("site").main()
    if os.path.dirname(PACKAGE_DIR) not in sys.path:
        sys.path.append(os.path.dirname(PACKAGE_DIR))
    from strict_loop.harness import handler

    return handler
