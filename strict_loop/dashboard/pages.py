"""The two HTML pages: a shell each, whose script fetches the data and renders it as text.

Why no data in the HTML: every text from a repository or an agent (a goal, a diagnosis, tool output, file names)
reaches the page only as JSON and is set with ``textContent``; the shell holds nothing but escaped identifiers, the
page token (for the answers) and whether the page is read-only.

The header's h1 names the page (a screen reader's first word); ``/favicon.ico`` is a tiny icon of our own, so that a
browser's automatic request for it is no 404.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response

from strict_loop.dashboard.guard import Access

FAVICON = Path(__file__).parent / "static" / "favicon.ico"

SHELL = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="page-token" content="{token}">
<meta name="read-only" content="{read_only}">
<title>{title}</title>
<link rel="icon" href="/favicon.ico">
<link rel="stylesheet" href="/static/dashboard.css">
<script src="/static/dashboard.js" defer></script>
</head>
<body data-page="{page}" data-ws="{ws}" data-task="{task}">
<header>
<h1><a href="/" class="home">strict-loop</a><span class="crumb">{crumb}</span></h1>
<span id="live" class="live">connecting…</span>
</header>
<main id="main"><p class="muted">Loading…</p></main>
</body>
</html>
"""


def _shell(access: Access, page: str, title: str, ws: str = "", task: str = "") -> str:
    return SHELL.format(
        token=escape(access.page_token),
        read_only="1" if access.read_only or not access.answer_key else "0",  # no answer key: no answer is taken
        title=escape(title),
        crumb=escape(f" / {task}" if task else ": every loop"),
        page=page,
        ws=escape(ws),
        task=escape(task),
    )


def overview(access: Access) -> str:
    return _shell(access, "overview", "strict-loop: every loop")


def task(access: Access, ws: str, task_id: str) -> str:
    return _shell(access, "task", f"strict-loop: {task_id}", ws, task_id)


async def favicon(request: Request) -> Response:
    return FileResponse(FAVICON, media_type="image/x-icon")
