"""The dashboard in a real headless Chromium (Debian's ``chromium``, driven by Playwright): the overview of two
workspaces, a spiral recorded by a hook appearing as paused on the open page within a second, each answer clicked
changing the task on disk, XSS strings kept as text. Screenshots are saved as artifacts (the path is printed).

Install: ``pip install playwright`` and ``apt-get update && apt-get install -y chromium`` (tests/harnesses/install.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import browser_rig
import pytest
from browser_rig import CHROMIUM, INSTALL
from test_dashboard import ANSWER_KEY, XSS, client, serving_page
from test_hooks import fail_until_paused
from test_page_truth import TURN_NUMBER, note, thrash

from strict_loop import Workspace
from strict_loop.storage import workspaces

pytestmark = pytest.mark.slow
sync_api = pytest.importorskip("playwright.sync_api", reason=f"playwright is not installed: {INSTALL}")
if CHROMIUM is None:
    pytest.skip(f"chromium is not installed: {INSTALL}", allow_module_level=True)


@pytest.fixture
def served(tmp_path) -> Iterator[str]:
    with serving_page() as url:
        yield url  # the browser opens the person's answer link (`?answer=`) first


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One Chromium for the module (tests/browser_rig.py); each test gets a fresh context of it (no cookies)."""
    yield from browser_rig.launched()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    yield context.new_page()
    context.close()


def snapshotted(ws: Path, goal: str) -> Workspace:
    w = Workspace(ws)
    w.init_state(task_id="t1", goal=goal, global_stop_condition="pytest passes", monitor={"snapshots": "on"})
    for n in (1, 2):
        (ws / "a.txt").write_text(f"round {n}\n")
        w.update_state(task_id="t1", task=f"round {n}", result_summary="r", verification_summary="v")
    (ws / "a.txt").write_text("later\n")
    return w


def test_the_page_goes_live_shows_the_pause_and_its_answers_change_the_task(tmp_path, served, page):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    snapshotted(one, f"Fix the parser {XSS}")
    ws2 = thrash(two, "other")  # paused with a long diagnosis; the agent leaves the person a note (issue 26)
    note(two, f"I stop here: `{XSS}` is what the fixture prints.", task_id="other")
    ws = workspaces.workspace_id(one)
    page.goto(served + f"/?answer={ANSWER_KEY}")  # the person's answer link: the cookie, then the page
    page.wait_for_selector(f'tr[data-task="{ws}/t1"]')
    assert page.locator("#tasks tbody tr").count() == 2
    page.wait_for_selector("#live.on")
    fail_until_paused(one)  # the hook records a spiral while the page is open
    started = time.monotonic()
    # without a reload (the latency itself is measured by bench/dashboard_bench.py, not asserted here)
    page.wait_for_selector(f'tr[data-task="{ws}/t1"] .badge.paused', timeout=10_000)
    print(f"\npaused shown {time.monotonic() - started:.2f} s after the hook recorded it")
    assert XSS in page.locator(f'tr[data-task="{ws}/t1"] .goal').inner_text()  # text, not markup
    rows = client().get("/api/overview").json()["tasks"]
    whole = next(r["diagnosis"] for r in rows if r["task_id"] == "other").replace("`", "")  # `code` shown as code
    cell = page.locator(f'tr[data-task="{ws2}/other"] td.evidence')
    glance = cell.locator("summary").inner_text()  # cut for a glance only at a word, with an ellipsis (issue 26)
    assert glance.endswith("…") and whole.startswith(glance[:-1]) and whole[len(glance) - 1] == " "
    cell.locator("summary").click()
    assert "between them did not change it" in cell.inner_text()  # the whole, one click away
    shots = tmp_path / "screenshots"
    page.screenshot(path=str(shots / "overview.png"), full_page=True)
    page.click(f'tr[data-task="{ws}/t1"] a.task-link')
    page.wait_for_selector("#pause .evidence")
    page.wait_for_selector("#preview table")
    assert page.locator("#goal").inner_text() == f"Fix the parser {XSS}"
    assert page.evaluate("document.querySelectorAll('script:not([src]), img').length") == 0
    page.locator("#pause").screenshot(path=str(shots / "paused-card.png"))
    print(f"screenshots: {shots}")
    monitor = one / ".agent-loop" / "tasks" / "t1" / "monitor.json"

    page.click("#answer-wait")
    page.wait_for_selector("#answer-result:has-text('nothing recorded')")
    page.wait_for_timeout(500)  # the answer re-renders the card; the reply must survive it
    assert "nothing recorded" in page.inner_text("#answer-result")
    page.locator("#pause").screenshot(path=str(shots / "answered-wait.png"))
    assert json.loads(monitor.read_text())["paused"]

    page.fill("#note", "try the other parser")
    page.click("#answer-continue")
    page.wait_for_selector("#pause:not(.paused-card) #answer-result")
    assert "nothing recorded" not in page.inner_text("#answer-result")  # the reply to this answer, not the last
    assert not json.loads(monitor.read_text())["paused"]
    assert "try the other parser" in json.loads(monitor.read_text())["notice"]

    fail_until_paused(one)  # paused again: roll back, then hand back
    page.wait_for_selector("#pause.paused-card #answer-rollback", timeout=10_000)
    page.select_option("#rollback-to", "1")
    page.click("#answer-rollback")
    page.wait_for_selector("#pause:not(.paused-card)")
    assert (one / "a.txt").read_text() == "round 1\n"

    fail_until_paused(one)
    page.wait_for_selector("#pause.paused-card #answer-handback", timeout=10_000)
    page.click("#answer-handback")
    page.wait_for_selector("#handback")
    state = json.loads((one / ".agent-loop" / "tasks" / "t1" / "state.json").read_text())
    assert state["status"] == "blocked"

    page.goto(served + f"/task/{ws2}/other")  # issue 26: the card says what is so, in the person's terms
    page.wait_for_selector("#pause.paused-card #agent-note")
    assert page.locator("#agent-note code").inner_text() == XSS  # the agent's note, `code` as code, never markup
    assert page.locator("#diagnosis code").count() and "`" not in page.inner_text("#diagnosis")
    assert page.evaluate("document.querySelectorAll('script:not([src]), img').length") == 0
    assert not TURN_NUMBER.search(page.inner_text("main"))
    assert page.locator("section:has(h2:text-is('Last turns')) th").first.inner_text() == "when"
    page.screenshot(path=str(shots / "paused-long-diagnosis.png"), full_page=True)
    page.click("#answer-handback")
    page.wait_for_selector("#handback")
    page.reload()
    page.wait_for_selector("#pause #answered")
    assert "hand-back" in page.inner_text("#answered") and "Recommended" not in page.inner_text("#pause")


def test_on_a_phone_the_overview_and_the_pause_fit_the_screen(tmp_path, served, browser):
    """Issue 20's person opens the alert's link on a phone: no sideways scrolling, each task a card of labelled lines,
    the four answers on screen."""
    ws = tmp_path / "phone"
    ws.mkdir()
    snapshotted(ws, "Fix the flaky parser test in the ingestion pipeline")
    fail_until_paused(ws)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(served + "/")
    row = page.wait_for_selector("#tasks tbody tr")
    wide = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    assert page.evaluate(wide) <= 0  # nothing runs off the right edge
    assert row.evaluate("r => getComputedStyle(r).display") == "block"  # a card, not a squeezed table row
    labels = row.eval_on_selector_all("td", "tds => tds.map(td => getComputedStyle(td, '::before').content)")
    assert '"round: "' in labels and '"stop checks: "' in labels  # each line says what it is
    shots = tmp_path / "screenshots"
    page.screenshot(path=str(shots / "phone-overview.png"), full_page=True)
    page.click("a.task-link")
    page.wait_for_selector("#pause .evidence")
    assert page.evaluate(wide) <= 0
    for answer in ("continue", "rollback", "handback", "wait"):
        assert page.locator(f"#answer-{answer}").is_visible()
    page.locator("#pause").screenshot(path=str(shots / "phone-card.png"))
    print(f"screenshots: {shots}")
    context.close()
