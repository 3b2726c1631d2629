"""Issue 26, item 6: the page on a phone (390 px) and on a laptop (1280 px), with a keyboard, in a real Chromium.

A paused task with a long diagnosis shows its four answers on the first screen; tables are cards on a phone and a long
path or command breaks only after a separator; the note box and the round picker are labelled; a live update leaves
the focus, the caret and the typed text where they were; axe-core (the ``axe-playwright-python`` package, in the
``test`` extra) finds no serious or critical violation; ``/favicon.ico`` is served; an empty section is not shown.
Screenshots are saved under the test's tmp_path (the path is printed).
"""

from __future__ import annotations

import os
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import browser_rig
import pytest
from test_dashboard import ANSWER_KEY, serving_page
from test_hooks import hook

from strict_loop import Workspace
from strict_loop.storage import workspaces

PHONE, LAPTOP = (390, 844), (1280, 800)
LONG_COMMAND = "pytest -q tests/integration/pricing/test_pricing_engine_with_a_long_name.py::test_discount_applies " + (
    " ".join(f"--option-{i}=value-{i}" for i in range(30))
)
ANSWERS = ("continue", "rollback", "handback", "wait")
# Where a line may end inside a long token: after a space or a separator, never between two letters of a word.
LINE_ENDS = r"""
(el) => {
  const ends = [];
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let prev = null, top = null;
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      const r = document.createRange();
      r.setStart(node, i); r.setEnd(node, i + 1);
      const rect = r.getClientRects()[0];
      if (/\s/.test(node.data[i])) { prev = " "; continue; }
      if (!rect) continue;
      if (top !== null && rect.top > top + 2 && prev !== null) ends.push(prev + node.data[i]);
      top = rect.top; prev = node.data[i];
    }
  }
  return ends;
}
"""


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """One server for the module: it reads the per-user index of each test's own config folder (conftest)."""
    with serving_page() as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from browser_rig.launched()


@pytest.fixture
def open_page(browser, served: str) -> Iterator[Callable[..., object]]:
    """Opens ``path`` in a fresh context (cookies) at ``size`` through the person's answer link (``?answer=``, as the
    terminal printed it for ``/``; any page takes it); each context is closed with the test, so no page of an earlier
    test keeps running in the browser."""
    contexts = []

    def open_(size: tuple[int, int], path: str = "/", ready: str = "#tasks"):
        contexts.append(browser.new_context(viewport={"width": size[0], "height": size[1]}))
        page = contexts[-1].new_page()
        page.goto(f"{served}{path}?answer={ANSWER_KEY}")
        assert page.url == f"{served}{path}"  # the key went into the cookie, and out of the address
        page.wait_for_selector(ready)
        return page

    yield open_
    for context in contexts:
        context.close()


def paused_with_a_long_diagnosis(tmp_path: Path) -> tuple[Path, str]:
    """A paused task whose diagnosis, signals and recent turns quote a long command (three screens on a phone)."""
    ws = tmp_path / "a_workspace_folder_with_a_rather_long_name" / "checkout_of_the_pricing_service"
    ws.mkdir(parents=True)
    w = Workspace(ws)
    goal = "Make the pricing engine apply the basket discount once, " * 8
    w.init_state(task_id="t1", goal=goal, global_stop_condition="pytest passes", monitor={"snapshots": "on"})
    for n in (1, 2):
        (ws / "a.txt").write_text(f"round {n}\n")
        w.update_state(task_id="t1", task=f"round {n}", result_summary="r", verification_summary="v")
    for _ in range(8):
        hook("claude", "claude_post_tool_use_failure", ws, tool_input={"command": LONG_COMMAND})
    Workspace(tmp_path).init_state(task_id="fresh", goal="Write the docs", global_stop_condition="done")
    return ws, workspaces.workspace_id(ws)


def axe_serious(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


def no_sideways_scrolling(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0


@pytest.mark.slow
@pytest.mark.parametrize("size", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_the_paused_task_shows_its_four_answers_on_the_first_screen(tmp_path, served, open_page, size):
    ws, ws_id = paused_with_a_long_diagnosis(tmp_path)
    page = open_page(size, f"/task/{ws_id}/t1", "#pause.paused-card #answer-wait")
    page.wait_for_selector("#preview p")
    assert page.locator("#diagnosis").evaluate("d => d.textContent.length") > 500  # a long one, all of it in the page
    shots = tmp_path / "screenshots"
    page.screenshot(path=str(shots / f"task-{size[0]}.png"))
    page.screenshot(path=str(shots / f"task-{size[0]}-full.png"), full_page=True)
    print(f"screenshots: {shots}")
    assert page.evaluate("window.scrollY") == 0
    for answer in ANSWERS:
        box = page.locator(f"#answer-{answer}").bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= size[1], (answer, box)
        assert box["x"] >= 0 and box["x"] + box["width"] <= size[0], (answer, box)
    no_sideways_scrolling(page)
    assert axe_serious(page) == []
    for box in ("#note", "#rollback-to"):  # a label a screen reader says, not only a placeholder
        assert page.locator(box).evaluate("n => [...n.labels].map(l => l.textContent.trim()).join('')")


@pytest.mark.slow
def test_the_whole_diagnosis_is_one_click_away(tmp_path, served, open_page):
    ws, ws_id = paused_with_a_long_diagnosis(tmp_path)
    page = open_page(PHONE, f"/task/{ws_id}/t1", "#pause.paused-card #answer-wait")
    # cut at a line, with an ellipsis (CSS), once laid out (a live update may draw the text again meanwhile)
    page.wait_for_function(
        "() => { const d = document.querySelector('#diagnosis');"
        " return d && d.textContent.length > 500 && d.scrollHeight > d.clientHeight + 2; }",
        timeout=10_000,
    )
    diagnosis = page.wait_for_selector("#diagnosis")
    full = diagnosis.evaluate("d => d.textContent")
    page.click("#diagnosis-toggle")
    assert page.get_attribute("#diagnosis-toggle", "aria-expanded") == "true"
    assert diagnosis.evaluate("d => d.scrollHeight <= d.clientHeight + 2")
    assert diagnosis.inner_text().strip() == full.strip()


@pytest.mark.slow
def test_on_a_phone_every_table_is_a_card_and_long_tokens_break_only_after_a_separator(tmp_path, served, open_page):
    ws, ws_id = paused_with_a_long_diagnosis(tmp_path)
    page = open_page(PHONE)
    row = page.wait_for_selector(f'tr[data-task="{ws_id}/t1"]')
    page.screenshot(path=str(tmp_path / "overview-390.png"), full_page=True)
    print(f"screenshots: {tmp_path}")
    no_sideways_scrolling(page)
    cells = row.query_selector_all("td")
    for td in cells:  # each visible line says what it is; an empty one is not shown
        shown = td.evaluate("td => getComputedStyle(td).display") != "none"
        assert shown == bool(td.inner_text().strip()), td.inner_text()
    for where in (f'tr[data-task="{ws_id}/t1"] td.path', f'tr[data-task="{ws_id}/t1"] td.evidence'):
        ends = page.locator(where).evaluate(LINE_ENDS)
        assert ends and all(not (a.isalnum() and b.isalnum()) for a, b in ends), ends
    assert axe_serious(page) == []

    page.goto(f"{served}/task/{ws_id}/t1")
    page.wait_for_selector("#pause")
    rows = page.locator("main section table tbody tr")
    assert rows.count() > 8, page.inner_text("main")[:3000]
    assert set(rows.evaluate_all("rs => rs.map(r => getComputedStyle(r).display)")) == {"block"}
    labels = page.locator("main section table tbody td").evaluate_all(
        "tds => tds.filter(td => td.textContent.trim()).map(td => getComputedStyle(td, '::before').content)"
    )
    assert labels and all(label not in ("none", "normal", '""') for label in labels)
    for cell in page.locator("main section table td.mono").all()[:6]:
        ends = cell.evaluate(LINE_ENDS)
        assert all(not (a.isalnum() and b.isalnum()) for a, b in ends), ends
    page.screenshot(path=str(tmp_path / "task-390-tables.png"), full_page=True)
    no_sideways_scrolling(page)


@pytest.mark.slow
def test_a_live_update_keeps_the_focus_the_caret_and_the_typed_text(tmp_path, served, open_page):
    ws, ws_id = paused_with_a_long_diagnosis(tmp_path)
    page = open_page(LAPTOP, f"/task/{ws_id}/t1", "#live.on")
    page.wait_for_selector("#preview p")
    page.select_option("#rollback-to", "1")
    page.click("#note")
    page.keyboard.type("hello world")
    page.evaluate("document.getElementById('note').setSelectionRange(5, 5)")
    page.evaluate("document.getElementById('pause').dataset.old = '1'")
    state = ws / ".agent-loop" / "tasks" / "t1" / "state.json"
    later = time.time_ns() + 5_000_000_000
    os.utime(state, ns=(later, later))  # the task changed on disk: the page re-renders itself
    page.wait_for_selector("#pause:not([data-old])", timeout=10_000)
    assert page.evaluate("document.activeElement.id") == "note"
    assert page.evaluate("[document.activeElement.selectionStart, document.activeElement.selectionEnd]") == [5, 5]
    page.keyboard.type(",")
    assert page.input_value("#note") == "hello, world"
    assert page.input_value("#rollback-to") == "1"  # the round picked stays picked: a rollback goes where it was told


@pytest.mark.slow
def test_the_overview_and_a_fresh_task_pass_axe_and_show_no_empty_section(tmp_path, served, open_page):
    paused_with_a_long_diagnosis(tmp_path)
    page = open_page(LAPTOP)
    page.wait_for_selector("#tasks tbody tr")
    page.screenshot(path=str(tmp_path / "overview-1280.png"), full_page=True)
    assert axe_serious(page) == []
    page.click("a.task-link >> text=fresh")
    page.wait_for_selector("#pause")
    assert axe_serious(page) == []
    for section in page.locator("main section").all():  # a heading with nothing under it is not shown
        assert section.evaluate("s => [...s.children].filter(c => c.tagName !== 'H2').length"), section.inner_text()
    headings = page.locator("main h2").all_inner_texts()
    assert not {"Whispers", "Alerts", "Stop checks", "Rounds"} & set(headings), headings


def test_the_favicon_is_served(served):
    with urllib.request.urlopen(f"{served}/favicon.ico", timeout=5) as r:
        assert r.status == 200
        assert r.headers["content-type"] == "image/x-icon"
        assert r.read(4) == b"\x00\x00\x01\x00"  # an ICO file
