// The toolctx playground: the package imported as a user would, driven by a scripted
// agent, over three browser backends. Everything shown is read back from the library
// (pointers, scores, records, sessions) or from the backends themselves (bytes, hashes).

import * as toolctx from "toolctx";
import { ContextManager } from "toolctx";
import { opfsStorage } from "toolctx/opfs";
import { indexedDbStorage } from "toolctx/indexeddb";
import { memoryStorage } from "toolctx/memory";
import { TASK, runAgent } from "./agent.js";
import { sampleConversation } from "./conversation.js";

const CONTEXT_DIR = "toolctx-playground";
/** Records smaller than this stay in memory until a flush, so the table shows both states. */
const PERSIST_THRESHOLD = 1024;
const DEFAULT_QUERY = "refresh token expired";

const BACKENDS = {
  opfs: { label: "OPFS", storage: opfsStorage() },
  indexeddb: { label: "IndexedDB", storage: indexedDbStorage({ database: "toolctx-playground" }) },
  memory: { label: "memory storage", storage: memoryStorage() },
};

const state = { backend: "opfs", manager: null, busy: false };

const $ = (selector) => document.querySelector(selector);
const storeOf = (backend) => ({ contextDir: CONTEXT_DIR, fileSystem: BACKENDS[backend].storage });
const sessionDir = (id) => `${CONTEXT_DIR}/sessions/${id}`;
const isRecordName = (name) => name.endsWith(".json") && !name.startsWith(".");

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

/** Runs one user action at a time; failures are shown, not swallowed. */
function action(fn) {
  return async (event) => {
    event?.preventDefault();
    if (state.busy) return;
    state.busy = true;
    document.body.dataset.busy = "1";
    try {
      await fn(event);
    } catch (err) {
      showError(err);
    } finally {
      state.busy = false;
      delete document.body.dataset.busy;
    }
  };
}

function showError(err) {
  console.error(err);
  const status = $("#agent-status");
  status.textContent = `error${err?.code ? ` ${err.code}` : ""}: ${err?.message ?? err}`;
  status.dataset.state = "error";
}

function openSession(backend, session) {
  return ContextManager.open({ ...storeOf(backend), session, persistThreshold: PERSIST_THRESHOLD });
}

/** Filename → {bytes, sha256} of every record of a session, read straight from a backend. */
async function recordsIn(backend, id) {
  const { storage } = BACKENDS[backend];
  const names = (await storage.list(sessionDir(id))).filter(isRecordName);
  const out = new Map();
  for (const name of names) {
    const data = await storage.read(`${sessionDir(id)}/${name}`);
    if (data === undefined) continue;
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    out.set(name, { bytes: bytes.length, sha256: [...digest].map((b) => b.toString(16).padStart(2, "0")).join("") });
  }
  return out;
}

// ---------------------------------------------------------------- 1 · agent and pointers

async function renderPointers() {
  const tbody = $("#pointers tbody");
  const m = state.manager;
  if (!m) {
    tbody.replaceChildren(el("tr", {}, el("td", { colSpan: 8, class: "muted" }, "No session yet: run the agent.")));
    return;
  }
  const persisted = new Set((await BACKENDS[state.backend].storage.list(sessionDir(m.sessionId))).filter(isRecordName));
  const label = BACKENDS[state.backend].label;
  tbody.replaceChildren(
    ...m.getAllPointers().map((p, i) => {
      const where = persisted.has(p.filename) ? label : "in memory";
      return el(
        "tr",
        { class: "clickable", "data-filepath": p.filepath, "data-filename": p.filename, "data-where": where, onclick: () => view(p.filepath) },
        el("td", { class: "num" }, String(i + 1)),
        el("td", { class: "num" }, String(p.taskId ?? "")),
        el("td", {}, el("code", {}, p.toolName)),
        el("td", {}, p.toolDescription),
        el("td", { class: "num" }, String(p.size ?? "")),
        el("td", {}, el("span", { class: `tag ${where === "in memory" ? "mem" : "disk"}` }, where === "in memory" ? where : `persisted · ${where}`)),
        el("td", { class: "session" }, m.sessionId),
        el("td", { class: "filename" }, p.filename),
      );
    }),
  );
}

const runAgentAction = action(async () => {
  if (state.manager) await state.manager.close();
  state.manager = null;
  const m = await openSession(state.backend, true);
  state.manager = m;
  const status = $("#agent-status");
  status.dataset.state = "running";
  const queryId = ContextManager.hashQuery(TASK);
  await runAgent(m, queryId, async ({ step, tool }) => {
    status.textContent = `step ${step + 1}: ${tool}`;
    await renderPointers();
    // A beat between steps so a person can watch the table fill; the run does not depend on it.
    await new Promise((resolve) => setTimeout(resolve, 120));
  });
  const rows = [...document.querySelectorAll("#pointers tbody tr")];
  const inMemory = rows.filter((r) => r.dataset.where === "in memory").length;
  status.textContent = `done: ${m.size} records in session ${m.sessionId} (${rows.length - inMemory} in ${BACKENDS[state.backend].label}, ${inMemory} in memory)`;
  status.dataset.state = "done";
  await Promise.all([renderSelection(), renderSessions(), renderUsage(), renderProof()]);
});

const flushAction = action(async () => {
  if (!state.manager) return;
  await state.manager.flush();
  await Promise.all([renderPointers(), renderSessions(), renderUsage(), renderProof()]);
});

// ---------------------------------------------------------------- 2 · selection

async function renderSelection() {
  const tbody = $("#ranked tbody");
  const m = state.manager;
  if (!m) {
    tbody.replaceChildren();
    $("#budget").textContent = "";
    return;
  }
  const query = $("#query").value;
  const strategy = $("#strategy").value;
  const maxTokens = Number($("#max-tokens").value);
  const ranked = await m.selectRelevant(query, { strategy });
  const fitting = await m.selectRelevant(query, { strategy, maxTokens });
  const fits = new Set(fitting.map((r) => r.filepath));
  const tokensOf = (r) => Math.ceil((r.pointer.size ?? 0) / 4);
  const used = fitting.reduce((sum, r) => sum + tokensOf(r), 0);
  const budget = $("#budget");
  budget.dataset.fit = String(fitting.length);
  budget.dataset.used = String(used);
  budget.textContent =
    ranked.length > 0 && ranked[0].score === 0
      ? `No pointer matches "${query}": every record is returned in save order. ${fitting.length} fit in ${maxTokens} tokens.`
      : `${ranked.length} relevant records; ${fitting.length} fit in a budget of ${maxTokens} tokens (${used} used, 4 bytes a token).`;
  tbody.replaceChildren(
    ...ranked.map((r, i) =>
      el(
        "tr",
        {
          class: `clickable ${fits.has(r.filepath) ? "fits" : "over"}`,
          "data-filepath": r.filepath,
          "data-score": String(r.score),
          "data-tokens": String(tokensOf(r)),
          "data-fits": fits.has(r.filepath) ? "1" : "0",
          onclick: () => view(r.filepath),
        },
        el("td", { class: "num" }, String(i + 1)),
        el("td", { class: "num" }, r.score.toFixed(3)),
        el("td", {}, r.pointer.toolDescription),
        el("td", {}, ...r.matched.map((k) => el("span", { class: "kw" }, k))),
        el("td", { class: "num" }, String(tokensOf(r))),
        el("td", {}, fits.has(r.filepath) ? "✓" : "–"),
      ),
    ),
  );
}

// ---------------------------------------------------------------- 3 · record viewer

async function view(filepath) {
  const viewer = $("#viewer");
  const [record] = await state.manager.loadContexts([filepath]);
  if (!record) {
    viewer.replaceChildren(el("p", { class: "muted" }, `${filepath}: not found (skipped by loadContexts)`));
    return;
  }
  const result = typeof record.result === "string" ? record.result : JSON.stringify(record.result, null, 2);
  viewer.className = "";
  viewer.dataset.filepath = filepath;
  viewer.replaceChildren(
    el("h3", {}, record.toolDescription),
    el(
      "dl",
      {},
      el("dt", {}, "file"),
      el("dd", { class: "filename" }, filepath.slice(filepath.lastIndexOf("/") + 1)),
      el("dt", {}, "saved"),
      el("dd", {}, `${record.timestamp} · task ${record.taskId ?? "–"} · query ${record.queryId ?? "–"}`),
      el("dt", {}, "args"),
      el("dd", {}, el("code", {}, JSON.stringify(record.args))),
      el("dt", {}, "args hash"),
      el("dd", {}, el("code", {}, record.argsHash ?? "–")),
    ),
    el("pre", { id: "record-result" }, result),
  );
}

// ---------------------------------------------------------------- 4 · backends and proof

const switchAction = action(async (event) => {
  const target = event.currentTarget.dataset.backend;
  if (target === state.backend) return;
  const from = state.backend;
  let report = null;
  if (state.manager) {
    const id = state.manager.sessionId;
    await state.manager.flush();
    const { jsonl } = await ContextManager.exportRecords({ ...storeOf(from), contextDir: sessionDir(id) });
    report = await ContextManager.importRecords({ ...storeOf(target), contextDir: sessionDir(id) }, jsonl);
    await state.manager.close();
    state.manager = null;
    state.manager = await openSession(target, id);
  }
  state.backend = target;
  if (!state.manager) await resumeLatest();
  renderBackendButtons();
  if (report) {
    const status = $("#agent-status");
    Object.assign(status.dataset, { state: "switched", imported: String(report.imported), unchanged: String(report.unchanged) });
    status.textContent = `${BACKENDS[from].label} → ${BACKENDS[target].label}: ${report.imported} records imported, ${report.unchanged} already there with the same bytes; session reopened from ${BACKENDS[target].label}`;
  }
  await renderAll();
});

function renderBackendButtons() {
  for (const button of document.querySelectorAll("#backends button")) {
    const on = button.dataset.backend === state.backend;
    button.classList.toggle("on", on);
    button.setAttribute("aria-checked", String(on));
  }
  document.body.dataset.backend = state.backend;
}

async function renderProof() {
  const tbody = $("#proof tbody");
  const verdict = $("#verdict");
  const m = state.manager;
  if (!m) {
    tbody.replaceChildren();
    verdict.textContent = "";
    return;
  }
  const held = {};
  for (const backend of Object.keys(BACKENDS)) held[backend] = await recordsIn(backend, m.sessionId);
  const names = [...new Set(Object.values(held).flatMap((map) => [...map.keys()]))].sort();
  const reference = held[state.backend];
  tbody.replaceChildren(
    ...names.map((name) =>
      el(
        "tr",
        { "data-filename": name },
        el("td", { class: "filename" }, name),
        el("td", { class: "num" }, String(reference.get(name)?.bytes ?? "–")),
        ...Object.keys(BACKENDS).map((backend) => {
          const rec = held[backend].get(name);
          const same = rec && reference.get(name)?.sha256 === rec.sha256;
          return el("td", { class: `hash ${rec ? (same ? "same" : "differs") : "absent"}`, "data-backend": backend, "data-sha256": rec?.sha256 ?? "" }, rec ? rec.sha256.slice(0, 12) : "–");
        }),
      ),
    ),
  );
  // The proof: every backend holding this session holds exactly the same files, byte for byte.
  const holding = Object.keys(BACKENDS).filter((b) => held[b].size > 0);
  const identical = holding.every(
    (b) => held[b].size === reference.size && [...reference].every(([name, rec]) => held[b].get(name)?.sha256 === rec.sha256),
  );
  verdict.dataset.backends = holding.join(",");
  verdict.dataset.identical = String(identical && reference.size > 0);
  verdict.dataset.records = String(reference.size);
  const labels = holding.map((b) => BACKENDS[b].label).join(", ");
  verdict.className = identical ? "ok" : "bad";
  verdict.textContent =
    reference.size === 0
      ? `No persisted record of session ${m.sessionId} in ${BACKENDS[state.backend].label} yet (flush to write them).`
      : identical
        ? `✓ ${reference.size} records of session ${m.sessionId}, byte-identical (SHA-256) in ${labels}.`
        : `✗ the backends differ for session ${m.sessionId} (${labels}).`;
}

// ---------------------------------------------------------------- 5 · sessions and usage

async function renderSessions() {
  const sessions = await ContextManager.listSessions(storeOf(state.backend));
  sessions.sort((a, b) => b.lastActivity.localeCompare(a.lastActivity));
  const current = state.manager?.sessionId;
  $("#sessions tbody").replaceChildren(
    ...sessions.map((s) =>
      el(
        "tr",
        { "data-session": s.id, "data-records": String(s.records), class: s.id === current ? "current" : "" },
        el("td", {}, el("code", {}, s.id), s.id === current ? el("span", { class: "tag disk" }, "open") : null),
        el("td", {}, new Date(s.lastActivity).toLocaleString()),
        el("td", { class: "num" }, String(s.records)),
        el("td", { class: "num" }, formatBytes(s.bytes)),
        el("td", {}, s.id === current ? null : el("button", { onclick: action(() => resume(s.id)) }, "Open")),
      ),
    ),
  );
  if (sessions.length === 0) {
    $("#sessions tbody").replaceChildren(el("tr", {}, el("td", { colSpan: 5, class: "muted" }, `No session in ${BACKENDS[state.backend].label}.`)));
  }
}

const cleanupAction = action(async () => {
  const olderThanMs = Number($("#older-than").value);
  // Write out what the open session holds first, so no pending write recreates it afterwards.
  if (state.manager) await state.manager.flush();
  const removed = await ContextManager.cleanupStaleSessions({ ...storeOf(state.backend), olderThanMs });
  if (state.manager && removed.includes(state.manager.sessionId)) {
    state.manager.free();
    state.manager = null;
  }
  const report = $("#cleanup-report");
  report.dataset.removed = String(removed.length);
  report.textContent = removed.length === 0 ? "No session was idle that long." : `Removed ${removed.length} session(s): ${removed.join(", ")}`;
  await renderAll();
});

async function resume(id) {
  if (state.manager) await state.manager.close();
  state.manager = null;
  state.manager = await openSession(state.backend, id);
  await renderAll();
}

/** Reopens the most recently active session of the current backend, if there is one. */
async function resumeLatest() {
  const sessions = await ContextManager.listSessions(storeOf(state.backend));
  sessions.sort((a, b) => b.lastActivity.localeCompare(a.lastActivity));
  if (sessions.length > 0) state.manager = await openSession(state.backend, sessions[0].id);
}

async function renderUsage() {
  const parts = [];
  if (navigator.storage?.estimate) {
    const { usage = 0, quota = 0 } = await navigator.storage.estimate();
    parts.push(`origin: ${formatBytes(usage)} of ${formatBytes(quota)}`);
  }
  for (const [backend, { label }] of Object.entries(BACKENDS)) {
    const sessions = await ContextManager.listSessions(storeOf(backend));
    const bytes = sessions.reduce((sum, s) => sum + s.bytes, 0);
    parts.push(`${label}: ${formatBytes(bytes)} in ${sessions.length} session${sessions.length === 1 ? "" : "s"}`);
  }
  $("#usage").textContent = parts.join(" · ");
}

// ---------------------------------------------------------------- 6 · window optimiser

const conversation = sampleConversation();

function summarise(block) {
  if (typeof block === "string") return { kind: "text", text: block };
  switch (block.type) {
    case "text":
      return { kind: "text", text: block.text };
    case "tool_use":
      return { kind: "tool_use", text: `${block.name}(${JSON.stringify(block.input)})` };
    case "tool_result": {
      const text = typeof block.content === "string" ? block.content : block.content.map((b) => b.text ?? "").join("");
      return { kind: "tool_result", text };
    }
    default:
      return { kind: block.type, text: JSON.stringify(block) };
  }
}

function renderMessages(list, messages, unchanged) {
  list.replaceChildren(
    ...messages.map((message) => {
      const blocks = typeof message.content === "string" ? [message.content] : message.content;
      const same = unchanged(message);
      return el(
        "li",
        { class: `msg ${message.role} ${same ? "" : "changed"}` },
        el("span", { class: "role" }, message.role),
        ...blocks.map((block) => {
          const { kind, text } = summarise(block);
          const first = text.split("\n")[0];
          return el(
            "div",
            { class: `block ${kind}` },
            el("span", { class: "kind" }, kind),
            ` ${first.length > 110 ? `${first.slice(0, 110)}…` : first}`,
            el("span", { class: "chars" }, ` ${text.length} chars`),
          );
        }),
      );
    }),
  );
}

function renderWindow() {
  const optimizeWindow = toolctx.optimizeWindow;
  renderMessages($("#window-before"), conversation, () => true);
  const button = $("#optimize");
  if (typeof optimizeWindow !== "function") {
    button.disabled = true;
    $("#window-metrics").textContent += " (optimizeWindow is not exported by this build of toolctx yet.)";
    return;
  }
  button.addEventListener(
    "click",
    action(() => {
      const strategy = $("#window-strategy").value;
      const minSavings = Number($("#min-savings").value);
      const result = optimizeWindow(conversation, { strategy, minSavings });
      const before = new Set(conversation.map((m) => JSON.stringify(m)));
      const after = new Set(result.messages.map((m) => JSON.stringify(m)));
      renderMessages($("#window-before"), conversation, (m) => after.has(JSON.stringify(m)));
      renderMessages($("#window-after"), result.messages, (m) => before.has(JSON.stringify(m)));
      const { tokensBefore, tokensAfter, charsBefore, charsAfter } = result.metrics;
      const saved = tokensBefore - tokensAfter;
      const metrics = $("#window-metrics");
      metrics.className = "";
      Object.assign(metrics.dataset, {
        tokensBefore: String(tokensBefore),
        tokensAfter: String(tokensAfter),
        edits: String(result.edits.length),
        truncated: result.truncated ? result.truncated.join("-") : "",
        messagesAfter: String(result.messages.length),
      });
      const kinds = {};
      for (const edit of result.edits) kinds[edit.kind] = (kinds[edit.kind] ?? 0) + 1;
      const editList = Object.entries(kinds).map(([kind, n]) => `${n} ${kind}`).join(", ");
      metrics.replaceChildren(
        el("strong", {}, `${tokensBefore.toLocaleString()} → ${tokensAfter.toLocaleString()} tokens`),
        ` (${saved.toLocaleString()} saved, ${tokensBefore ? Math.round((100 * saved) / tokensBefore) : 0}%) · ` +
          `${charsBefore.toLocaleString()} → ${charsAfter.toLocaleString()} chars · ` +
          `${result.edits.length} edits${editList ? ` (${editList})` : ""} · ` +
          (result.truncated ? `messages ${result.truncated[0]}–${result.truncated[1]} truncated` : "nothing truncated") +
          ` · ${conversation.length} → ${result.messages.length} messages`,
      );
    }),
  );
}

// ---------------------------------------------------------------- wiring

async function renderAll() {
  renderBackendButtons();
  await renderPointers();
  await Promise.all([renderSelection(), renderSessions(), renderUsage(), renderProof()]);
}

async function start() {
  $("#task").textContent = TASK;
  $("#query").value = DEFAULT_QUERY;
  $("#run").addEventListener("click", runAgentAction);
  $("#flush").addEventListener("click", flushAction);
  $("#query-form").addEventListener("submit", action(renderSelection));
  $("#cleanup").addEventListener("click", cleanupAction);
  for (const button of document.querySelectorAll("#backends button")) button.addEventListener("click", switchAction);
  renderWindow();
  await resumeLatest();
  if (state.manager) {
    const status = $("#agent-status");
    status.textContent = `resumed session ${state.manager.sessionId} from ${BACKENDS[state.backend].label}: ${state.manager.size} records`;
    status.dataset.state = "resumed";
  }
  await renderAll();
  document.body.dataset.ready = "1";
}

start().catch(showError);
