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
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function section(title, ...children) {
  return el("section", { class: "card" }, el("h2", {}, title), ...children);
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
    el("td", {}, el("a", { href: r.link, class: "task-link" }, r.task_id), el("div", { class: "goal" }, r.goal)),
    el("td", { class: "path", "data-label": "workspace" }, r.workspace),
    el("td", { "data-label": "round" }, r.round + " of " + (r.max_rounds ?? "?")),
    el("td", { title: r.last_activity, "data-label": "last activity" }, ago(r.last_activity)),
    el("td", { "data-label": "pace" }, r.rate_per_hour ? pace(r.rate_per_hour) + " rounds/h" : "",
      el("div", { class: "muted" }, r.eta_s ? "ETA " + duration(r.eta_s) : "")),
    el("td", { class: r.stop && r.stop.failed ? "bad" : "", "data-label": "stop checks" }, stopText(r.stop)),
    el("td", { class: "evidence", "data-label": "monitor" },
      r.diagnosis || (r.whisper ? r.whisper.text : "") || r.attention || ""),
    el("td", { "data-label": "harness" }, r.harness || "", el("div", { class: "muted mono" }, r.session || ""))));
  const table = el("table", { id: "overview" }, el("thead", {}, head), el("tbody", {}, ...rows));
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
  if (old) old.replaceWith(table); else { main.replaceChildren(table); loadCompute(main); }
}

// ------------------------------------------------------------------ a task

function table(cols, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, ...cols.map((c) => el("th", {}, c[0])))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...cols.map((c) => el("td", { class: c[2] || "" }, c[1](r)))))));
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

async function post(ws, task, payload) {
  const r = await fetch("/api/task/" + ws + "/" + task + "/answer", {
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

const answerResult = (text) => el("div", { id: "answer-result", class: "muted", "aria-live": "polite" }, text);

function answers(ws, task, data) {
  const pausedAt = data.ladder.paused_at;
  const out = answerResult(lastAnswer.pausedAt === pausedAt ? lastAnswer.text : "");
  const note = el("textarea", { id: "note", rows: 2, placeholder: "A note the agent reads with its next result (optional)" });
  note.value = draftNote;
  note.addEventListener("input", () => { draftNote = note.value; });
  const rounds = data.snapshots.rounds;
  const select = el("select", { id: "rollback-to" }, ...rounds.slice().reverse().map((n) => el("option", { value: n }, "round " + n)));
  const preview = el("div", { id: "preview" });
  const run = (payload) => async () => {
    out.textContent = "sending…";
    try {
      const res = await post(ws, task, { ...payload, note: note.value, pause: data.ladder.pause_id });  // bound: a pause answered elsewhere is a 409
      if (payload.action !== "wait") draftNote = "";  // said: the next pause starts with an empty note
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
        " file(s); the tree as it is now is saved first:"), p.count ? table([["file", (f) => f.path, "mono"], ["change", (f) => f.change],
        ["+lines", (f) => f.lines_added ?? "binary"], ["-lines", (f) => f.lines_removed ?? "binary"]], p.files)
        : el("p", {}, "No file would change."));
    } catch (e) { preview.replaceChildren(el("span", { class: "bad" }, e.message)); }
  };
  select.addEventListener("change", showPreview);
  const buttons = el("div", { class: "buttons" },
    el("button", { id: "answer-continue", onclick: run({ action: "continue" }) }, "Continue (with the note)"),
    el("button", { id: "answer-rollback", onclick: () => run({ action: "rollback", to: Number(select.value) })(), disabled: rounds.length ? null : "" }, "Roll back to"),
    select,
    el("button", { id: "answer-handback", onclick: run({ action: "hand-back" }) }, "Hand back to me"),
    el("button", { id: "answer-wait", onclick: run({ action: "wait" }) }, "Keep waiting"));
  if (rounds.length) showPreview();
  return el("div", { class: "answers" }, note, buttons,
    rounds.length ? preview : el("p", { class: "muted" }, data.snapshots.note || "No snapshot to roll back to."), out);
}

function pauseCard(ws, task, data) {
  const lad = data.ladder;
  const signals = lad.signals.map((s) => el("li", { class: "signal" }, el("strong", {}, s.kind),
    " (turns " + s.turns.join(", ") + "): ", el("span", { class: "evidence" }, s.evidence)));
  const card = section(lad.paused ? "Paused by the progress monitor" : "The progress monitor",
    el("p", { class: "diagnosis" }, lad.diagnosis),
    signals.length ? el("ul", {}, ...signals) : el("p", { class: "muted" }, "No signal fired."),
    lad.recommended_action ? el("p", {}, el("strong", {}, "Recommended: "), lad.recommended_action) : null,
    lad.recent.length ? el("ol", { class: "recent mono" }, ...lad.recent.map((t) => el("li", {}, t))) : null,
    lad.paused && !READ_ONLY ? answers(ws, task, data) : null,
    lad.paused && READ_ONLY ? el("p", { class: "muted" }, "Read-only page: answer with strict-loop resume.") : null,
    !lad.paused && lastAnswer.text ? answerResult(lastAnswer.text) : null);
  card.id = "pause";
  if (lad.paused) card.classList.add("paused-card");
  return card;
}

async function renderTask() {
  const ws = body.dataset.ws, task = body.dataset.task;
  const main = document.getElementById("main");
  const d = await getJSON("/api/task/" + ws + "/" + task);
  const r = d.row, c = d.contract;
  const head = section(task, el("p", {}, statusBadge(r), " round " + r.round + " of " + (r.max_rounds ?? "?") +
      " · " + stopText(r.stop) + " · last activity " + ago(r.last_activity) + (r.harness ? " · " + r.harness : "")),
    el("p", { class: "goal", id: "goal" }, c.goal),
    el("p", { class: "muted" }, "Stop when: " + c.global_stop_condition), d.status.stop_reason ? el("p", {}, d.status.stop_reason) : null);
  const problems = (d.problems || []).map((t) => el("li", { class: "bad" }, t));
  const parts = [head, problems.length ? section("Not shown (damaged files)", el("ul", { id: "problems" }, ...problems)) : null,
    pauseCard(ws, task, d),
    section("Tool calls per round", plot(d.plot)),
    section("Rounds", table([["#", (x) => x.iteration], ["task", (x) => x.task], ["result", (x) => x.result],
      ["verification", (x) => x.verification], ["took", (x) => duration(x.duration_s)], ["progress", (x) => x.progress]],
      d.rounds.slice().reverse())),
    section("Last turns", table([["turn", (x) => x.turn], ["tool", (x) => x.tool], ["arguments", (x) => x.args, "mono"],
      ["output", (x) => x.output, "mono"], ["", (x) => x.failed ? "failed" : "", "bad"]], d.turns.slice().reverse())),
    section("Whispers", table([["turn", (x) => x.turn], ["level", (x) => x.level], ["signal", (x) => x.signal], ["text", (x) => x.text]], d.ladder.whispers)),
    section("Alerts", table([["when", (x) => x.ts], ["diagnosis", (x) => x.diagnosis],
      ["delivery", (x) => Object.entries(x.delivery || {}).map(([k, v]) => k + ": " + v).join("; ") || "no channel configured"]], d.alerts)),
    section("Stop checks", table([["when", (x) => x.ts], ["verdict", (x) => x.verdict], ["passing", (x) => x.passed], ["failing", (x) => x.failed]], d.stops.slice().reverse())),
    section("Contract", el("pre", { class: "mono" }, JSON.stringify(c, null, 2))),
    d.handback ? section("Hand-back", el("pre", { id: "handback" }, d.handback)) : null];
  main.replaceChildren(...parts.filter(Boolean));
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
    timer = setTimeout(() => render().catch(() => {}), 50);
  });
}

function start() {
  const page = body.dataset.page;
  const render = page === "task" ? renderTask : renderOverview;
  render().catch((e) => document.getElementById("main").replaceChildren(el("p", { class: "bad" }, e.message)));
  live(render, page === "task" ? body.dataset.ws + "/" + body.dataset.task : null);
}

start();
