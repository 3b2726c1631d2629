"""Where a pause's alert goes: the channels a person configured, and the short message they carry.

Channels come only from the environment of the process that raised the alert
(``STRICT_LOOP_ALERT_URLS``: Apprise URLs; ``STRICT_LOOP_WEBHOOK_URL``: a JSON
webhook with our payload; ``STRICT_LOOP_IRC``: an IRC channel) or from a secrets
file in the person's config directory, never from the loop contract or anything
in the repository. A channel is named by its kind and position (``webhook``,
``irc``, ``slack-1``), never by its URL: names are what files and results show.
This module imports nothing heavy; the hook path asks ``configured`` on every call.
"""

from __future__ import annotations

import os
import re
import stat
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from strict_loop.model.turns import one_line

URLS_ENV = "STRICT_LOOP_ALERT_URLS"
WEBHOOK_ENV = "STRICT_LOOP_WEBHOOK_URL"
IRC_ENV = "STRICT_LOOP_IRC"
ATTEMPTS_ENV = "STRICT_LOOP_ALERT_ATTEMPTS"
BACKOFF_ENV = "STRICT_LOOP_ALERT_BACKOFF"
TIMEOUT_ENV = "STRICT_LOOP_ALERT_TIMEOUT"
FILE_NAMES = ("alerts.txt", "alerts.yml")
IRC_SCHEMES = ("irc", "ircs")
_SPLIT = re.compile(r"\s+|,(?=\s*[A-Za-z][A-Za-z0-9+.-]*://)")  # a comma inside a URL's query stays in it
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass(frozen=True)
class Channel:
    """One destination. ``url`` is a secret: it lives in memory and in the worker's environment only."""

    name: str
    kind: str  # "webhook" | "irc" | "apprise"
    url: str


@dataclass(frozen=True)
class Delivery:
    """How the worker retries: from the environment, so that tests can make it fast."""

    attempts: int = 4
    backoff: float = 2.0
    timeout: float = 10.0


@dataclass(frozen=True)
class Message:
    """What every channel says: short, naming the task, the diagnosis, the agent's note to the person (``note``: one
    line, empty when it left none), what the agent did last (``recent``: one line, empty when there is nothing to
    show) and the exact resume command."""

    headline: str
    resume: str
    recent: str = ""
    note: str = ""

    def lines(self) -> list[str]:
        extra = [line for line in (self.note, self.recent) if line]
        return [self.headline, *extra, f"resume: {self.resume}"]


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def clean(text: str, cap: int = 360) -> str:
    """One line of plain text: no control character (a bare CR would start a new IRC command), at most ``cap``."""
    return one_line(_CONTROL.sub(" ", str(text)), cap)


RECENT_SHOWN, RECENT_CHARS = 5, 100
"""The last turns a message shows, each cut to this many characters (the alert's ``recent`` keeps them whole)."""


def message(
    prefix: str, task_id: str, diagnosis: str, resume: str, recent: Sequence[str] = (), note: str = ""
) -> Message:
    """``[SPIRALING] <task>: <one-line diagnosis>`` (seed 000's format), then ``agent's note: <note>`` when the
    agent left the person one, then ``recent: <turn> | <turn>`` when ``recent`` names the last turns, each line kept
    under an IRC line's 512 bytes."""
    said = " | ".join(clean(str(turn), RECENT_CHARS) for turn in list(recent)[-RECENT_SHOWN:])
    return Message(
        clean(f"{prefix} {task_id}: {diagnosis}"),
        clean(resume),
        clean(f"recent: {said}") if said else "",
        _note_line(note),
    )


def _note_line(note: object) -> str:
    return clean(f"agent's note: {note}") if isinstance(note, str) and note.strip() else ""


def said(message: Mapping[str, object]) -> Message:
    """The ``message`` of a queued or recorded alert as a Message, cleaned again: whatever a file holds, no control
    character and no line too long goes out."""
    recent = message.get("recent")
    return Message(
        clean(str(message.get("headline", "[SPIRALING]"))),
        clean(str(message.get("resume", "strict-loop resume"))),
        clean(str(recent)) if recent else "",
        _note_line(message.get("note")),
    )


def alerts_file(env: Mapping[str, str]) -> Optional[Path]:
    """The person's alerts file ($XDG_CONFIG_HOME/strict-loop/alerts.txt or .yml), if there is one."""
    base = env.get("XDG_CONFIG_HOME") or (str(Path(env["HOME"]) / ".config") if env.get("HOME") else "")
    if not base:
        return None
    for name in FILE_NAMES:
        path = Path(base) / "strict-loop" / name
        if path.exists():
            return path
    return None


def configured(env: Mapping[str, str]) -> bool:
    """Cheap: whether any channel may be configured (three variables and one stat)."""
    return any(env.get(k, "").strip() for k in (URLS_ENV, WEBHOOK_ENV, IRC_ENV)) or alerts_file(env) is not None


def channels(env: Mapping[str, str], workspace: Path) -> tuple[list[Channel], list[str]]:
    """The configured channels, and the problems (one line each, naming the variable or file and the fix, never a
    URL)."""
    urls: list[tuple[str, str]] = [(URLS_ENV, u) for u in _split(env.get(URLS_ENV, ""))]
    urls += [(IRC_ENV, u) for u in _split(env.get(IRC_ENV, ""))]
    problems: list[str] = []
    path = alerts_file(env)
    if path is not None:
        text, problem = _read_file(path, workspace)
        if problem:
            problems.append(problem)
        urls += [(str(path), u) for u in _file_urls(text)]
    out: list[Channel] = []
    webhook = env.get(WEBHOOK_ENV, "").strip()
    if webhook:
        problem = _http_problem(webhook)
        if problem:
            problems.append(problem)
        else:
            out.append(Channel("webhook", "webhook", webhook))
    counts: dict[str, int] = {}
    for source, url in urls:
        found = _SCHEME.match(url)
        if not found:
            problems.append(f"{source}: an entry is not a URL (scheme://...): write one Apprise URL per entry")
            continue
        scheme = found.group(1).lower()
        counts[scheme] = counts.get(scheme, 0) + 1
        kind = "irc" if scheme in IRC_SCHEMES else "apprise"
        if source == IRC_ENV and kind != "irc":
            problems.append(f"{IRC_ENV}: an entry is not an IRC URL: irc://nick@host:6667/#channel (ircs:// for TLS)")
            continue
        if kind == "irc" and irc_target(url) is None:
            problems.append(
                f"{source}: an IRC URL needs a host and a channel: irc://nick@host:6667/#channel (ircs:// for TLS)"
            )
            continue
        suffix = "" if counts[scheme] == 1 else f"-{counts[scheme]}"
        out.append(Channel(("irc" if kind == "irc" else scheme) + suffix, kind, url))
    return out, problems


def delivery(env: Mapping[str, str]) -> Delivery:
    d = Delivery()
    try:
        return Delivery(
            max(1, int(env.get(ATTEMPTS_ENV, d.attempts))),
            max(0.0, float(env.get(BACKOFF_ENV, d.backoff))),
            max(0.1, float(env.get(TIMEOUT_ENV, d.timeout))),
        )
    except ValueError:
        return d


def irc_target(url: str) -> Optional[tuple[str, int, str, str, bool, Optional[str]]]:
    """(host, port, nick, #channel, tls, password) of ``irc[s]://[nick[:password]@]host[:port]/#channel``, or None."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    channel = urllib.parse.unquote(parts.path.lstrip("/")) or (f"#{parts.fragment}" if parts.fragment else "")
    if not parts.hostname or not channel.startswith(("#", "&")) or " " in channel:
        return None
    tls = parts.scheme.lower() == "ircs"
    nick = urllib.parse.unquote(parts.username or "strict-loop")
    return parts.hostname, port or (6697 if tls else 6667), nick, channel, tls, parts.password


def _split(value: str) -> list[str]:
    return [u.strip() for u in _SPLIT.split(value or "") if u and u.strip()]


def _file_urls(text: str) -> list[str]:
    """One URL per line (or a YAML list item ``- url``); '#' starts a comment line."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("- "):
            line = line[2:].strip().strip("'\"")
        if line and not line.startswith("#") and not line.endswith(":"):
            out.extend(_split(line))
    return out


def _read_file(path: Path, workspace: Path) -> tuple[str, Optional[str]]:
    """The file's text, or a refusal: it must be the person's own, private, and outside the workspace."""
    try:
        real, root = path.resolve(), workspace.resolve()
        st = os.stat(real)
    except OSError as exc:
        return "", f"alerts file {path} cannot be read ({exc.strerror or exc})"
    if real == root or root in real.parents:
        return (
            "",
            f"alerts file {path} is inside the workspace {root}: a repository must never carry alert URLs; "
            "move it to ~/.config/strict-loop/",
        )
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
        return "", f"alerts file {path} is not a regular file owned by you: recreate it"
    if st.st_mode & 0o077:
        return (
            "",
            f"alerts file {path} is readable by group or others (mode {oct(st.st_mode & 0o777)}): run chmod 600 {path}",
        )
    try:
        return real.read_text(encoding="utf-8", errors="replace")[:100_000], None
    except OSError as exc:
        return "", f"alerts file {path} cannot be read ({exc.strerror or exc})"


def _http_problem(url: str) -> Optional[str]:
    try:
        scheme = urllib.parse.urlsplit(url).scheme
    except ValueError:  # e.g. an unclosed '[': never echo the URL (it may carry a token)
        return f"{WEBHOOK_ENV} is not a valid URL"
    return None if scheme in ("http", "https") else f"{WEBHOOK_ENV} must be an http(s) URL"
