// strict-agent-loop's OpenCode plugin: `strict-loop install opencode` writes this file and `--uninstall` removes it.
/*
 * The harness records, whispers and enforces; the agent only does the work. Each event runs `strict-loop hook
 * opencode` as a program of its own with one JSON object on stdin (the command-hook shape of Claude Code and Codex:
 * hook_event_name PreToolUse, PostToolUse or UserPromptSubmit, with OpenCode's own input and output inside) and acts
 * on the JSON it prints: {"decision": "block", "reason"} refuses the call (this plugin throws, and OpenCode gives the
 * model the reason as the tool's error), {"whisper"} is appended to the tool's output, which the model reads next.
 *
 * Runs inside the person's OpenCode (opencode-ai 1.18.33), so it imports only Node's built-ins, never reads the
 * loop's files and never runs the repository's code. One exception, the fail-closed gate: when the hook cannot be
 * asked or answers something unreadable before a tool call, the call is refused if `.agent-loop/paused/` holds a
 * flag (its names only, as Claude Code's shell gate does), and allowed otherwise. It never throws into OpenCode
 * but to refuse a call.
 *
 * What no tool.execute.after sees (a call that failed, e.g. an edit whose old text is not in the file) is taken from
 * the session's events (message.part.updated, state "error") and recorded as a failed call. The assistant's text
 * before a call rides with that call (assistant_text). When `STRICT_LOOP_OPENCODE_PLUGIN` names another copy of this
 * file (`strict-loop supervise` wires one in per run), this copy stands aside, so that no call is recorded twice.
 */
import { spawn } from "node:child_process";
import { lstatSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const STRICT_LOOP = "strict-loop"; // `strict-loop install opencode` writes the absolute path of the program here
const WORKSPACE = ""; // and here the folder holding .agent-loop/ when the install pins one ("": found from the session)
const HOOK = []; // and here the words that start the hook (the thin hook: no site, the warm daemon answers); []: STRICT_LOOP
const TOOL_TIMEOUT_MS = 30000;
const MAX_ANSWER_BYTES = 1 << 20;
const MAX_TEXT = 100000; // the hook clips a turn to far less; this bounds what one call keeps meanwhile
const MAX_SESSIONS = 64;
const BIG_METADATA = ["filediff", "diagnostics", "files", "preview"]; // copies of files: not the call's outcome

function ask(payload, cwd) {
  // What `strict-loop hook opencode` printed: {ok: true, answer} (answer {} when it said nothing), or {ok: false}.
  return new Promise((resolve) => {
    let child;
    let out = "";
    let done = false;
    const finish = (result) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {}
      finish({ ok: false, why: "timed out" });
    }, TOOL_TIMEOUT_MS);
    try {
      const head = HOOK.length ? HOOK : [STRICT_LOOP];
      const args = [...head.slice(1), "hook", "opencode", ...(WORKSPACE ? ["--workspace", WORKSPACE] : [])];
      child = spawn(head[0], args, { cwd, stdio: ["pipe", "pipe", "ignore"] });
    } catch (err) {
      return finish({ ok: false, why: String(err) });
    }
    child.on("error", (err) => finish({ ok: false, why: String(err) }));
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.length > MAX_ANSWER_BYTES) child.kill("SIGKILL");
    });
    child.on("close", (code) => {
      if (code !== 0 || out.length > MAX_ANSWER_BYTES) return finish({ ok: false, why: `exit ${code}` });
      try {
        const answer = out.trim() ? JSON.parse(out) : {};
        const good = answer !== null && typeof answer === "object" && !Array.isArray(answer);
        finish(good ? { ok: true, answer } : { ok: false, why: "an answer that is not an object" });
      } catch {
        finish({ ok: false, why: "an answer that is not JSON" });
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function loopFolder(start) {
  // The .agent-loop folder this session's calls belong to: the pinned workspace's, else the nearest above `start`.
  if (WORKSPACE) return join(WORKSPACE, ".agent-loop");
  for (let dir = start; dir; dir = dirname(dir)) {
    try {
      if (lstatSync(join(dir, ".agent-loop")).isDirectory()) return join(dir, ".agent-loop");
    } catch {}
    if (dirname(dir) === dir) break;
  }
  return null;
}

function paused(start) {
  // Whether a task of this workspace is paused: a flag in .agent-loop/paused/ (a folder that cannot be listed counts).
  const folder = loopFolder(start);
  if (!folder) return false;
  try {
    return readdirSync(join(folder, "paused")).length > 0;
  } catch (err) {
    return !(err && err.code === "ENOENT");
  }
}

function blocked(answer) {
  if (answer.decision !== "block") return null;
  return typeof answer.reason === "string" && answer.reason ? answer.reason : "strict-loop: refused";
}

function slim(metadata) {
  if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) return {};
  const out = {};
  for (const [key, value] of Object.entries(metadata)) if (!BIG_METADATA.includes(key)) out[key] = value;
  return out;
}

function keep(map, key, value) {
  // A bounded per-session store (the oldest session goes first).
  map.delete(key);
  while (map.size >= MAX_SESSIONS) map.delete(map.keys().next().value);
  map.set(key, value);
}

export const StrictLoop = async ({ directory }) => {
  const chosen = process.env.STRICT_LOOP_OPENCODE_PLUGIN;
  if (chosen && chosen !== fileURLToPath(import.meta.url)) return {};
  const cwd = directory || process.cwd();
  const words = new Map(); // session -> (text part id -> its text): what the assistant wrote since its last call
  const said = new Map(); // session -> whispers waiting for the session's next tool output
  const refused = new Set(); // call ids this plugin refused: their error events are not failures to record
  const recorded = new Set(); // call ids recorded from tool.execute.after

  const payload = (event, sessionID, fields) => ({ hook_event_name: event, session_id: sessionID || "", cwd, ...fields });
  const mark = (set, id) => {
    set.add(id);
    if (set.size > 1000) set.delete(set.values().next().value);
  };
  const takeWords = (sessionID) => {
    const text = [...(words.get(sessionID) || new Map()).values()].join("\n").slice(-MAX_TEXT);
    words.delete(sessionID);
    return text;
  };
  const whisper = (sessionID, answer) => {
    if (typeof answer.whisper === "string" && answer.whisper) keep(said, sessionID, [...(said.get(sessionID) || []), answer.whisper]);
  };
  const recordFailure = async (part) => {
    const state = part.state || {};
    const fields = { tool_name: part.tool, tool_use_id: part.callID, tool_input: state.input || {} };
    fields.tool_response = { error: String(state.error || "the tool failed"), metadata: slim(state.metadata) };
    fields.assistant_text = takeWords(part.sessionID);
    const { ok, answer } = await ask(payload("PostToolUse", part.sessionID, fields), cwd);
    if (ok) whisper(part.sessionID, answer);
  };

  return {
    "tool.execute.before": async (input, output) => {
      const fields = { tool_name: input.tool, tool_use_id: input.callID, tool_input: output.args };
      const { ok, answer, why } = await ask(payload("PreToolUse", input.sessionID, fields), cwd);
      let reason = ok ? blocked(answer) : null;
      if (!ok && paused(cwd)) {
        reason = `strict-loop: a task here is paused and its hook could not decide about this call (${why}): refused.`;
      }
      if (reason) {
        mark(refused, input.callID);
        throw new Error(reason);
      }
    },
    "tool.execute.after": async (input, output) => {
      try {
        mark(recorded, input.callID);
        const response = { title: output.title, output: output.output, metadata: slim(output.metadata) };
        const fields = { tool_name: input.tool, tool_use_id: input.callID, tool_input: input.args, tool_response: response };
        fields.assistant_text = takeWords(input.sessionID);
        const { ok, answer } = await ask(payload("PostToolUse", input.sessionID, fields), cwd);
        if (ok) whisper(input.sessionID, answer);
        const text = (said.get(input.sessionID) || []).join("\n");
        said.delete(input.sessionID);
        if (text && typeof output.output === "string") output.output = `${output.output}\n\n${text}`;
      } catch {}
    },
    "chat.message": async (input, output) => {
      try {
        const parts = Array.isArray(output.parts) ? output.parts : [];
        const prompt = parts.filter((p) => p && p.type === "text" && !p.synthetic).map((p) => p.text).join("\n");
        if (!prompt) return;
        const { ok, answer } = await ask(payload("UserPromptSubmit", input.sessionID, { prompt }), cwd);
        if (ok) whisper(input.sessionID, answer);
      } catch {}
    },
    event: async ({ event }) => {
      try {
        const part = event && event.type === "message.part.updated" ? event.properties && event.properties.part : null;
        if (!part || !part.sessionID) return;
        if (part.type === "text" && !part.synthetic && part.time && part.time.end && typeof part.text === "string") {
          const parts = words.get(part.sessionID) || new Map();
          if (parts.size < 100) parts.set(part.id, part.text.slice(-MAX_TEXT));
          keep(words, part.sessionID, parts);
        } else if (part.type === "tool" && part.state && part.state.status === "error") {
          if (refused.has(part.callID) || recorded.has(part.callID)) return;
          mark(recorded, part.callID);
          await recordFailure(part);
        }
      } catch {}
    },
  };
};
