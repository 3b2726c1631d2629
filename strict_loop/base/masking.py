"""Keeping secrets out of what stop commands get and out of what the tool stores or returns.

Two rules, the way CI systems handle logs: a stop command never receives the
project's own secrets (notification URLs, the MCP token: ``PROJECT_SECRET_PREFIXES``),
and every value of a variable whose name looks secret, plus the userinfo part of
any URL (``https://user:pass@host``), is replaced by ``***`` in output we keep.
Ordinary secret-looking variables are still passed on: the person's machine is
trusted and the project's own tests may need an API key.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from typing import Optional, TypeVar, cast

_T = TypeVar("_T")

PROJECT_SECRET_PREFIXES = ("STRICT_LOOP_", "APPRISE_")
"""Variables that belong to this tool (webhook and Apprise URLs, the MCP token, ...):
never handed to a stop command, and their values are masked wherever they show up."""

MASK = "***"
MIN_SECRET_CHARS = 6
"""Shorter values ("1", "true", "yes") would mask noise, not secrets (Buildkite uses the same floor)."""

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|KEY|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|PRIVATE|COOKIE|SIGNATURE|WEBHOOK|DSN|(^|_)PAT$",
    re.IGNORECASE,
)
_NOT_SECRET = frozenset({"SSH_AUTH_SOCK", "XAUTHORITY", "GPG_AGENT_INFO", "KEYTIMEOUT"})
"""Names that match the pattern but hold socket or file paths; masking them would only hide noise."""

_URL_USERINFO = re.compile(r"(?i)(?<![a-z0-9+.-])([a-z0-9+.-]+://)[^\s/?#@'\"<>]+@")
"""A URL's userinfo, its scheme taken from the start of the run of scheme characters before ``://`` (each run is
read once: ``\\b[a-z][a-z0-9+.-]*://`` rescanned a run from each of its letters, quadratic on ``a.a.a...@``)."""
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-\u0130\u0131\u017f\u212a")
"""What ``(?i)[a-z0-9+.-]`` matches: the ASCII letters, and the four characters ``re.I`` folds into them (İ ı ſ K)."""
_FEW_URLS = 256
_LONGEST_SCHEME = 64
"""Up to ``_FEW_URLS`` ``://`` in a text, each with a scheme run of at most ``_LONGEST_SCHEME`` characters, only the
runs around them are read (``str.find`` runs in C; the regular expression tries every position: 20 ms on a 1 MB
output, under the hook's lock); else the regular expression is the faster."""
_SCHEME_START = re.compile(r"(?i)\b[a-z]")
"""Where a scheme may start in the run of scheme characters before ``://``; with none (``1abc://``, ``_x://``) it
is no URL."""


def _mask_userinfo(m: re.Match[str]) -> str:
    scheme = _SCHEME_START.search(m.string, m.start(), m.end(1) - 3)
    return f"{m.group(1)}{MASK}@" if scheme else m.group(0)


def _mask_urls(text: str) -> str:
    """``text`` with each ``scheme://user:pass@`` made ``scheme://***@``: ``_URL_USERINFO.sub(_mask_userinfo, text)``,
    the pattern tried only where a run of scheme characters ends in ``://``.

    Each run of scheme characters before a ``://`` and each run after it is read once (the runs of different
    ``://`` do not overlap: ``:`` and ``/`` end both), so the cost is linear in the text, whatever it holds."""
    if text.count("://") > _FEW_URLS:
        return _URL_USERINFO.sub(_mask_userinfo, text)
    parts: list[str] = []
    done = 0
    at = text.find("://")
    while at != -1:
        start = at
        while start > done and text[start - 1] in _SCHEME_CHARS:  # an '@' ends the previous URL: not a scheme char
            start -= 1
            if at - start > _LONGEST_SCHEME:
                return _URL_USERINFO.sub(_mask_userinfo, text)
        m = _URL_USERINFO.match(text, start)  # where the pattern's scan would find it: the run's start
        if m:
            parts += (text[done:start], _mask_userinfo(m))
            done = m.end()
        at = text.find("://", max(at + 3, done))
    return "".join(parts) + text[done:] if parts else text


def is_project_secret(name: str) -> bool:
    return name.upper().startswith(PROJECT_SECRET_PREFIXES)


@functools.lru_cache(maxsize=4096)  # a pure function of the name, asked for every variable on every call
def looks_secret(name: str) -> bool:
    """True for a variable whose value must never appear in stored output."""
    return is_project_secret(name) or (name.upper() not in _NOT_SECRET and bool(_SECRET_NAME.search(name)))


def command_env(env: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The environment for a stop command: ours, without the project's own secrets."""
    env = os.environ if env is None else env
    return {k: v for k, v in env.items() if not is_project_secret(k)}


AGENT_KEEPS = frozenset({"STRICT_LOOP_HOOKD", "STRICT_LOOP_HOOKD_IDLE", "STRICT_LOOP_DEBUG"})
"""The project's variables an agent's harness may keep: settings of the hook, no secret and no alert channel."""


def agent_env(env: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The environment for an agent's harness run unattended: ``command_env``, keeping only ``AGENT_KEEPS`` of ours.

    Why: the agent runs whatever a prompt injection tells it; alert URLs (Slack, webhook, IRC tokens) and the MCP
    token must not be among what it can print or send."""
    env = os.environ if env is None else env
    return {k: v for k, v in env.items() if not is_project_secret(k) or k.upper() in AGENT_KEEPS}


def secret_values(env: Optional[Mapping[str, str]] = None) -> list[str]:
    """Values to mask, longest first (so a value containing another is masked whole).

    A list-valued variable (``APPRISE_URLS="a, b"``) also contributes its parts, so one
    URL printed alone is masked too.
    """
    env = os.environ if env is None else env
    found: set[str] = set()
    for name, value in env.items():
        if not looks_secret(name):
            continue
        for piece in (value, value.strip(), *re.split(r"[\s,]+", value)):
            if len(piece) >= MIN_SECRET_CHARS:
                found.add(piece)
    return sorted(found, key=len, reverse=True)


def mask(text: str, env: Optional[Mapping[str, str]] = None) -> str:
    """``text`` with secret values and URL credentials replaced by ``***``."""
    return mask_with(text, secret_values(env)) if text else text


def mask_tree(value: _T, env: Optional[Mapping[str, str]] = None) -> _T:
    """``value`` (JSON-like: dicts, lists, strings) with :func:`mask` applied to every string in it, keys included
    (one pass over ``env``)."""
    values = secret_values(env)

    def walk(node: object) -> object:
        if isinstance(node, str):
            return mask_with(node, values)
        if isinstance(node, dict):  # keys too: a tool's argument may be named by a secret
            return {(mask_with(k, values) if isinstance(k, str) else k): walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return cast(_T, walk(value))  # the same shape: a string, dict or list for one, anything else as it was


def mask_with(text: str, values: list[str]) -> str:
    """``text`` masked with the values ``secret_values`` found (for a caller masking many texts against one
    environment)."""
    hits = [v for v in values if v in text]
    if hits:
        text = re.sub("|".join(map(re.escape, hits)), MASK, text)
    return _mask_urls(text) if "@" in text and "://" in text else text
