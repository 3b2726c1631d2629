// strict-loop dashboard: vanilla JS, no dependency, works offline.
// Every text from a repository or an agent is set with textContent; nothing is ever parsed as HTML.
"use strict";

const body = document.body;
const TOKEN = document.querySelector('meta[name="page-token"]').content;
const READ_ONLY = document.querySelector('meta[name="read-only"]').content === "1";
const SVG = "http://www.w3.org/2000/svg";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, String(v));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === "") continue;  // an empty cell stays :empty (hidden)
    node.append(child instanceof Node ? child : breakable(String(child)));
  }
  return node;
}

// A long token (a path, a command, a test id) may end a line only after a separator (<wbr>), never between two
// letters of a word, and only where the line must break; CSS (overflow-wrap) cuts one that has no separator at all.
// A short token with a hyphen (--option-1) stays whole: a browser would break it after any hyphen.
const WORDS = /\S+/g, SEPARATORS = "/\\_.:=,;&?|";
function breakable(text) {
  if (!/\S{24,}|\S-|-\S/.test(text)) return document.createTextNode(text);
  const out = document.createDocumentFragment();
  let done = 0;
  for (const m of text.matchAll(WORDS)) {
    const token = m[0];
    if (token.length < 24 && !token.slice(1).includes("-")) continue;
    out.append(text.slice(done, m.index));
    done = m.index + token.length;
    if (token.length < 24) { out.append(Object.assign(document.createElement("span"), { className: "nobr", textContent: token })); continue; }
    let cut = 0;
    for (let i = 0; i < token.length - 1; i++) {
      if (SEPARATORS.includes(token[i]) && !SEPARATORS.includes(token[i + 1])) {
        out.append(token.slice(cut, i + 1), document.createElement("wbr"));
        cut = i + 1;
      }
    }
    out.append(token.slice(cut));
  }
  out.append(text.slice(done));
  return out;
}

// A live update re-renders the page: the element that had the focus gets it back, with its caret and selection, so
// that a person typing a note or moving through the page with the keyboard is not interrupted.
function keepFocus(replace) {
  const a = document.activeElement;
  const href = a && a.tagName === "A" ? a.getAttribute("href") : null;
  const key = !a || a === body ? null : a.id ? "#" + CSS.escape(a.id) : href ? 'a[href="' + CSS.escape(href) + '"]' : null;
  const caret = key && typeof a.selectionStart === "number" ? [a.selectionStart, a.selectionEnd, a.selectionDirection, a.scrollTop] : null;
  replace();
  if (!key || document.contains(a)) return;
  const b = document.querySelector(key);
  if (!b) return;
  b.focus({ preventScroll: true });
  if (caret && typeof b.setSelectionRange === "function") {
    b.setSelectionRange(caret[0], caret[1], caret[2] || "none");
    b.scrollTop = caret[3];
  }
}

// A long text shows its first lines (cut at a line, with an ellipsis: dashboard.css .clamped) and a button that shows
// the rest; opened stays open across live re-renders. fitToggles hides the button of a text that fits anyway.
const expanded = new Set();
function collapsible(node, what) {
  const open = () => expanded.has(what);
  const toggle = el("button", { type: "button", class: "toggle", id: node.id + "-toggle", "aria-controls": node.id });
  const show = () => {
    node.classList.toggle("clamped", !open());
    toggle.setAttribute("aria-expanded", String(open()));
    toggle.textContent = open() ? "Show less" : "Show the whole " + what;
  };
  toggle.addEventListener("click", () => { if (open()) expanded.delete(what); else expanded.add(what); show(); fitToggles(); });
  show();
  return [node, toggle];
}

function fitToggles() {
  for (const t of document.querySelectorAll("button.toggle")) {
    const text = document.getElementById(t.getAttribute("aria-controls"));
    t.hidden = !text || (text.classList.contains("clamped") && text.scrollHeight <= text.clientHeight + 1);
  }
}

function section(title, ...children) {
  if (!children.some((c) => c !== null && c !== undefined)) return null;  // nothing to show: no bare heading
  return el("section", { class: "card" }, el("h2", {}, title), ...children);
}

// The loop's and the monitor's sentences as the page says them (issue 26): `code` shown as code (made with
// textContent, as everything); a long text cut for a glance only at a word, with an ellipsis, the whole one click
// away (a cut mid-sentence can say the opposite of the whole); one opened stays open across live re-renders.
function rich(text) {
  const parts = String(text ?? "").split("`");
  if (parts.length % 2 === 0) parts.push(parts.splice(-2).join("`"));  // an unmatched backtick is shown as it is
  return el("span", {}, ...parts.map((p, i) => (i % 2 ? el("code", {}, p) : p)));
}

const opened = new Set();
function glance(text, cap, plain) {
  text = String(text ?? "");
  const show = plain ? breakable : rich;  // breakable: a long path breaks after a separator (a bare string would not)
  if (!text || text.length <= cap) return text && show(text);
  let cut = text.slice(0, cap - 1);
  const space = Math.max(cut.lastIndexOf(" "), cut.lastIndexOf("\n"));
  if (space > cap * 0.6) cut = cut.slice(0, space);
  cut = cut.replace(/[\s,;:]+$/, "") + "…";
  const summary = el("summary", {});
  const more = el("details", { class: "glance" }, summary, el("div", {}, show(text)));
  const label = () => summary.replaceChildren(more.open ? "Show less" : show(cut));
  more.open = opened.has(text);
  label();
  more.addEventListener("toggle", () => { if (more.open) opened.add(text); else opened.delete(text); label(); });
  return more;
}

function ago(ts) {
  if (!ts) return "";
  const s = Math.max(0, (Date.now() - Date.parse(ts)) / 1000);
  if (s < 60) return Math.round(s) + " s ago";
  if (s < 3600) return Math.round(s / 60) + " min ago";
  if (s < 86400) return (s / 3600).toFixed(1) + " h ago";
  return (s / 86400).toFixed(1) + " d ago";
}

function duration(s) {
  if (s === null || s === undefined) return "";
  if (s < 90) return Math.round(s) + " s";
  if (s < 5400) return Math.round(s / 60) + " min";
  return (s / 3600).toFixed(1) + " h";
}

async function getJSON(url) {
  const r = await fetch(url, { credentials: "same-origin" });
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function stopText(stop) {
  if (!stop) return "not checked";
  return stop.verdict + " (" + stop.passed + " passing, " + stop.failed + " failing)";
}

function statusBadge(row) {
  const label = row.paused ? "PAUSED" : row.group === "attention" ? "needs attention" : row.status;
  return el("span", { class: "badge " + (row.paused ? "paused" : row.group) }, label);
}

// ------------------------------------------------------------------ overview

function overviewTable(data) {
  const head = el("tr", {}, ...["status", "task", "workspace", "round", "last activity", "pace / ETA",
    "stop checks", "monitor", "harness"].map((h) => el("th", {}, h)));
  // data-label: on a phone each row becomes a card and every cell says what it is (dashboard.css)
  const rows = data.tasks.map((r) => el("tr", { "data-task": r.ws + "/" + r.task_id, class: "row-" + r.group },
    el("td", {}, statusBadge(r)),
    el("td", {}, el("a", { href: r.link, class: "task-link" }, r.task_id), el("div", { class: "goal" }, glance(r.goal, 200, true))),
    el("td", { class: "path", "data-label": "workspace" }, r.workspace),
    el("td", { "data-label": "round" }, r.round + " of " + (r.max_rounds ?? "?")),
    el("td", { title: r.last_activity, "data-label": "last activity" }, ago(r.last_activity)),
    el("td", { "data-label": "pace" }, r.rate_per_hour ? pace(r.rate_per_hour) + " rounds/h" : "",
      r.eta_s ? el("div", { class: "muted" }, "ETA " + duration(r.eta_s)) : null),
    el("td", { class: r.stop && r.stop.failed ? "bad" : "", "data-label": "stop checks" }, stopText(r.stop)),
    el("td", { class: "evidence", "data-label": "monitor" },
      glance(r.diagnosis || (r.whisper ? r.whisper.text : "") || r.attention || "", 200)),
    el("td", { "data-label": "harness" }, r.harness || "", r.session ? el("div", { class: "muted mono" }, r.session) : null)));
  const table = el("table", { id: "overview", class: "cards" }, el("thead", {}, head), el("tbody", {}, ...rows));
  const empty = data.tasks.length ? null : el("p", { class: "muted" }, "No loops yet: a task appears here once init_state ran.");
  const count = (n, word) => n + " " + word + (n === 1 ? "" : "s");
  // what is not in the table, said: a removed loop folder (or task folders), a task whose files are damaged
  const notShown = [...(data.removed || []).map((g) => el("li", { class: "bad" }, g.problem)),
    ...(data.skipped || []).map((s) => el("li", { class: "bad" }, s.link ? el("a", { href: s.link }, s.folder) : s.folder,
      " in " + s.workspace + ": not shown, " + s.problem))];
  return section("Every loop on this machine (" + count(data.tasks.length, "task") + " in " +
    count(Object.keys(data.workspaces).length, "workspace") + ")", empty || table,
    notShown.length ? el("ul", { id: "not-shown" }, ...notShown) : null);
}

function computeCard(c) {
  const list = el("ul", { class: "compute" },
    el("li", {}, "CPU: " + c.cpu_count + " × " + c.cpu_model),
    el("li", {}, "memory: " + Math.round(c.memory_available_mb || 0) + " MB available of " + Math.round(c.memory_total_mb || 0) + " MB"),
    el("li", {}, "disk: " + (c.disk_free_gb ?? "?") + " GB free of " + (c.disk_total_gb ?? "?") + " GB (" + c.disk_path + ")"),
    ...(c.gpus.length ? c.gpus.map((g) => el("li", {}, "GPU: " + g.vendor + " " + g.name + ", " +
      Math.round(g.memory_used_mb || 0) + "/" + Math.round(g.memory_total_mb || 0) + " MB, " + (g.utilization_pct ?? "?") + "% busy"))
      : [el("li", {}, "GPU: none")]),
    ...(c.containers.length ? c.containers.map((r) => el("li", {}, "containers: " + r.name + ", daemon " +
      (r.daemon ? "answers" : "does not answer") + (r.gpu ? ", reaches a GPU" : ""))) : [el("li", {}, "containers: none")]),
    ...c.notes.map((n) => el("li", { class: "muted" }, n)));
  return section("Compute", list);
}

async function loadCompute(main) {
  try {
    const c = await getJSON("/api/compute");
    const old = document.getElementById("compute");
    const card = computeCard(c);
    card.id = "compute";
    if (old) old.replaceWith(card); else main.append(card);
  } catch (e) { /* the page works without it */ }
}

async function renderOverview() {
  const main = document.getElementById("main");
  const data = await getJSON("/api/overview");
  const table = overviewTable(data);
  table.id = "tasks";
  const old = document.getElementById("tasks");
  if (old) keepFocus(() => old.replaceWith(table)); else { main.replaceChildren(table); loadCompute(main); }
}

// ------------------------------------------------------------------ a task

function table(cols, rows) {
  if (!rows.length) return null;
  return el("table", { class: "cards" }, el("thead", {}, el("tr", {}, ...cols.map((c) => el("th", {}, c[0])))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...cols.map((c) => el("td", { class: c[2] || "", "data-label": c[0] }, c[1](r)))))));
}

function plot(points) {
  const w = 640, h = 160, pad = 28;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 " + w + " " + h);
  svg.setAttribute("class", "plot");
  svg.setAttribute("role", "img");
  if (!points.length) return el("p", { class: "muted" }, "No tool calls recorded yet.");
  const maxCalls = Math.max(1, ...points.map((p) => p.calls));
  const scores = points.filter((p) => p.score !== null);
  const maxScore = Math.max(1e-9, ...scores.map((p) => p.score));
  const bw = (w - 2 * pad) / points.length;
  svg.setAttribute("aria-label", "Tool calls per round, rounds " + points[0].round + " to " + points[points.length - 1].round +
    ": at most " + maxCalls + " in a round" + (scores.length ? ", with the verifier's score" : ""));
  const add = (tag, attrs, text) => {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    svg.append(n);
    return n;
  };
  points.forEach((p, i) => {
    const x = pad + i * bw, full = (h - 2 * pad) * p.calls / maxCalls, bad = (h - 2 * pad) * p.failures / maxCalls;
    add("rect", { x: x + 1, y: h - pad - full, width: Math.max(1, bw - 2), height: full, class: "calls" })
      .append(Object.assign(document.createElementNS(SVG, "title"), { textContent: "round " + p.round + ": " + p.calls + " calls, " + p.failures + " failed" }));
    add("rect", { x: x + 1, y: h - pad - bad, width: Math.max(1, bw - 2), height: bad, class: "failures" });
  });
  if (scores.length) {
    const pts = points.map((p, i) => p.score === null ? null : (pad + i * bw + bw / 2) + "," + (h - pad - (h - 2 * pad) * p.score / maxScore)).filter(Boolean);
    add("polyline", { points: pts.join(" "), class: "score" });
  }
  add("text", { x: pad, y: 14, class: "legend" }, "tool calls per round (max " + maxCalls + "), failed in red" + (scores.length ? ", verifier score as a line" : ""));
  add("text", { x: pad, y: h - 8, class: "legend" }, "round " + points[0].round);
  add("text", { x: w - pad, y: h - 8, class: "legend end" }, "round " + points[points.length - 1].round);
  return svg;
}

async function post(ws, task, payload, what = "answer") {
  const r = await fetch("/api/task/" + ws + "/" + task + "/" + what, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-Strict-Loop-Page": TOKEN },
    body: JSON.stringify(payload),
  });
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

const pace = (n) => (n >= 100 ? Math.round(n).toLocaleString("en") : n >= 10 ? n.toFixed(1) : n.toFixed(2));

let draftNote = "";  // what the person is typing survives a live re-render of the card
// The server's reply to the last answer, kept across the re-render that the answer itself causes (and any live one);
// shown on the card of the pause it answered, or on the card once the pause is over, never on a later pause.
let lastAnswer = { pausedAt: undefined, text: "" };

let chosenRound = "";  // the round picked survives a live re-render: a rollback goes where the person said
let composing = false;  // an input method is composing in the note: a live re-render waits for the character

const answerResult = (text) => el("div", { id: "answer-result", class: "muted", "aria-live": "polite" }, text);

function answers(ws, task, data) {
  const pausedAt = data.ladder.paused_at;
  const out = answerResult(lastAnswer.pausedAt === pausedAt ? lastAnswer.text : "");
  const note = el("textarea", { id: "note", rows: 2 });
  note.value = draftNote;
  note.addEventListener("input", () => { draftNote = note.value; });
  note.addEventListener("compositionstart", () => { composing = true; });
  note.addEventListener("compositionend", () => { composing = false; });
  const rounds = data.snapshots.rounds;
  const select = el("select", { id: "rollback-to" }, ...rounds.slice().reverse().map((n) => el("option", { value: n }, "round " + n)));
  if (rounds.map(String).includes(chosenRound)) select.value = chosenRound;
  const preview = el("div", { id: "preview" });
  const run = (payload) => async () => {
    out.textContent = "sending…";
    try {
      const res = await post(ws, task, { ...payload, note: note.value, pause: data.ladder.pause_id });  // bound: a pause answered elsewhere is a 409
      if (payload.action !== "wait") draftNote = chosenRound = "";  // said: the next pause starts with an empty note
      lastAnswer = { pausedAt, text: res.detail || res.action };
      out.textContent = lastAnswer.text;
      await renderTask();
    } catch (e) { out.textContent = "refused: " + e.message; }
  };
  const showPreview = async () => {
    preview.replaceChildren(el("span", { class: "muted" }, "computing…"));
    try {
      const p = await getJSON("/api/task/" + ws + "/" + task + "/rollback/" + select.value);
      preview.replaceChildren(el("p", { class: "muted" }, "A rollback to round " + p.to + " would change " + p.count +
        " file(s)" + (p.files.length < p.count ? " (the first " + p.files.length + " listed)" : "") + "; the tree as it is now is saved first:"), p.count ? table([["file", (f) => f.path, "mono"], ["change", (f) => f.change],
        ["+lines", (f) => f.lines_added ?? "binary"], ["-lines", (f) => f.lines_removed ?? "binary"]], p.files)
        : el("p", {}, "No file would change."));
    } catch (e) { preview.replaceChildren(el("span", { class: "bad" }, e.message)); }
  };
  select.addEventListener("change", () => { chosenRound = select.value; showPreview(); });
  const buttons = el("div", { class: "buttons" },
    el("button", { id: "answer-continue", onclick: run({ action: "continue" }) }, "Continue (with the note)"),
    el("span", { class: "rollback" },
      el("button", { id: "answer-rollback", onclick: () => run({ action: "rollback", to: Number(select.value) })(), disabled: rounds.length ? null : "" }, "Roll back to"),
      el("label", { for: "rollback-to", class: "sr-only" }, "Round to roll back to"), select),
    el("button", { id: "answer-handback", onclick: run({ action: "hand-back" }) }, "Hand back to me"),
    el("button", { id: "answer-wait", onclick: run({ action: "wait" }) }, "Keep waiting"));
  if (rounds.length) showPreview();
  return el("div", { class: "answers" }, el("label", { for: "note" }, "A note the agent reads with its next result (optional)"),
    note, buttons, out, rounds.length ? preview : el("p", { class: "muted" }, data.snapshots.note || "No snapshot to roll back to."));
}

// The task's budgets: what is spent of each, and (for a person with the answer key) a form to raise them; a task its
// budget paused goes on when none is spent any more.
function budgetCard(ws, task, data) {
  const out = el("div", { id: "budget-result", class: "muted", "aria-live": "polite" });
  const inputs = data.budget.map((b) => el("input", { id: "budget-" + b.name, type: "number", min: "0", step: "any", value: String(b.limit) }));
  const rows = data.budget.map((b, i) => el("li", { class: b.spent >= b.limit ? "bad" : "" }, b.text,
    READ_ONLY ? null : el("span", {}, " ", el("label", { for: "budget-" + b.name }, "raise to "), inputs[i])));
  const raise = async () => {
    out.textContent = "sending…";
    const body = {};
    data.budget.forEach((b, i) => { if (Number(inputs[i].value) !== b.limit) body["max_" + b.name] = Number(inputs[i].value); });
    try {
      const res = await post(ws, task, body, "budget");
      out.textContent = res.detail;
      await renderTask();
    } catch (e) { out.textContent = "refused: " + e.message; }
  };
  return section("Budget", el("ul", { id: "budget" }, ...rows),
    READ_ONLY ? null : el("button", { id: "budget-raise", onclick: raise }, "Set the budget"), out);
}

function pauseCard(ws, task, data) {
  const lad = data.ladder;
  const signals = lad.signals.map((s) => el("li", { class: "signal" }, el("strong", {}, s.kind),
    ": ", el("span", { class: "evidence" }, glance(s.evidence, 300))));
  const notes = lad.paused ? (lad.notes || []).filter((n) => n.current) : [];  // the agent's word on this pause
  const card = section(lad.paused ? "Paused by " + (lad.paused_by || "the progress monitor") : "The progress monitor",
    ...collapsible(el("p", { class: "diagnosis", id: "diagnosis" }, rich(lad.diagnosis)), "diagnosis"),
    notes.length ? el("div", { id: "agent-note" }, el("strong", {}, "The agent's note to you (" + ago(notes[notes.length - 1].ts) + "): "),
      glance(notes[notes.length - 1].text, 300)) : null,
    lad.paused && !READ_ONLY ? answers(ws, task, data) : null,  // on the first screen, however long the text below
    data.budget && data.budget.length ? budgetCard(ws, task, data) : null,  // next to the answers: a raise lets it go on
    lad.paused && READ_ONLY ? el("p", { class: "muted" }, "Read-only page: answer with strict-loop resume.") : null,
    signals.length ? el("ul", {}, ...signals) : el("p", { class: "muted" }, "No signal fired."),
    lad.recommended_action ? el("p", {}, el("strong", {}, "Recommended: "), rich(lad.recommended_action)) : null,
    lad.recent.length ? el("ol", { class: "recent mono" }, ...lad.recent.map((t) => el("li", {}, glance(t, 200, true)))) : null,
    !lad.paused && lastAnswer.text ? answerResult(lastAnswer.text) : null,
    !lad.paused && !lastAnswer.text && lad.answered ? el("p", { id: "answered", class: "muted" },
      "The last pause was answered " + ago(lad.answered.ts) + ": ", glance(lad.answered.text, 300)) : null);
  card.id = "pause";
  if (lad.paused) card.classList.add("paused-card");
  return card;
}

const when = (x) => (x.ts ? el("span", { title: x.ts }, ago(x.ts)) : "");  // a time the person can place, not a turn number

async function renderTask() {
  const ws = body.dataset.ws, task = body.dataset.task;
  const main = document.getElementById("main");
  const d = await getJSON("/api/task/" + ws + "/" + task);
  const r = d.row, c = d.contract;
  const head = section(task, el("p", {}, statusBadge(r), " round " + r.round + " of " + (r.max_rounds ?? "?") +
      " · " + stopText(r.stop) + " · last activity " + ago(r.last_activity) + (r.harness ? " · " + r.harness : "")),
    r.waiting ? el("p", { id: "waiting", class: "bad" }, r.waiting.text + " (" + r.waiting.harness + ", " + ago(r.waiting.since) + ")") : null,
    el("p", { class: "goal", id: "goal" }, c.goal),
    el("p", { class: "muted" }, "Stop when: " + c.global_stop_condition), d.status.stop_reason ? el("p", {}, glance(d.status.stop_reason, 300)) : null);
  const problems = (d.problems || []).map((t) => el("li", { class: "bad" }, t));
  const pause = pauseCard(ws, task, d), paused = d.ladder.paused;  // paused: the answers first, on the first screen
  const parts = [paused ? pause : null, head, problems.length ? section("Not shown (damaged files)", el("ul", { id: "problems" }, ...problems)) : null,
    paused ? null : pause,
    section("Tool calls per round", plot(d.plot)),
    section("Rounds", table([["#", (x) => x.iteration], ["task", (x) => glance(x.task, 200)], ["result", (x) => glance(x.result, 300)],
      ["verification", (x) => glance(x.verification, 300)], ["took", (x) => duration(x.duration_s)], ["progress", (x) => x.progress]],
      d.rounds.slice().reverse())),
    section("Notes from the agent", table([["when", when], ["note", (x) => glance(x.text, 400)]], (d.ladder.notes || []).slice().reverse())),
    section("Last turns", table([["when", when], ["tool", (x) => x.tool], ["arguments", (x) => glance(x.args, 300, true), "mono"],
      ["output", (x) => glance(x.output, 500, true), "mono"], ["failed", (x) => x.failed ? "yes" : "", "bad"]], d.turns.slice().reverse())),
    section("Whispers", table([["when", when], ["level", (x) => x.level], ["signal", (x) => x.signal], ["text", (x) => glance(x.text, 300)]], d.ladder.whispers)),
    section("Alerts", table([["when", when], ["diagnosis", (x) => glance(x.diagnosis, 300)],
      ["delivery", (x) => Object.entries(x.delivery || {}).map(([k, v]) => k + ": " + v).join("; ") || "no channel configured"]], d.alerts)),
    section("Stop checks", table([["when", (x) => x.ts], ["verdict", (x) => x.verdict], ["passing", (x) => x.passed], ["failing", (x) => x.failed]], d.stops.slice().reverse())),
    section("Contract", el("pre", { class: "mono" }, JSON.stringify(c, null, 2))),
    d.handback ? section("Hand-back", el("pre", { id: "handback" }, d.handback)) : null];
  keepFocus(() => main.replaceChildren(...parts.filter(Boolean)));
  fitToggles();
}

// ------------------------------------------------------------------ live

function live(render, mine) {
  const badge = document.getElementById("live");
  let timer = null;
  const source = new EventSource("/events");
  source.addEventListener("open", () => { badge.textContent = "live"; badge.className = "live on"; });
  source.addEventListener("error", () => { badge.textContent = "reconnecting…"; badge.className = "live"; });
  source.addEventListener("change", (ev) => {
    const changed = JSON.parse(ev.data).tasks;
    if (mine && !changed.includes(mine)) return;
    clearTimeout(timer);
    const go = () => { if (composing) timer = setTimeout(go, 250); else render().catch(() => {}); };
    timer = setTimeout(go, 50);
  });
}

function start() {
  window.addEventListener("resize", fitToggles);
  const page = body.dataset.page;
  const render = page === "task" ? renderTask : renderOverview;
  render().catch((e) => document.getElementById("main").replaceChildren(el("p", { class: "bad" }, e.message)));
  live(render, page === "task" ? body.dataset.ws + "/" + body.dataset.task : null);
}

start();
