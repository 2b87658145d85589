#!/usr/bin/env node
// toolctx: the command line over a toolctx store (SPEC §8). It works through the
// package's public API only (ContextManager, nodeStorage); see `toolctx --help`.
//
// Exit codes: 0 success, 1 failure (missing store, unknown record, storage error),
// 2 usage error (bad flag, bad value). Errors are one line on stderr, `toolctx: ...`,
// with a hint; TOOLCTX_DEBUG=1 adds the stack.

import { existsSync, readFileSync, statSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { createInterface } from "node:readline/promises";
import { Command, InvalidArgumentError, Option } from "commander";
import ms from "ms";

import { nodeStorage } from "../adapters/node.js";
import {
  CliError,
  absoluteTime,
  count,
  err as errColors,
  fields,
  humanBytes,
  out,
  plural,
  print,
  printJson,
  progress,
  relativeTime,
  shorten,
  table,
  usage,
} from "./ui.js";
import { registerConversationCommands } from "./conversations.js";
import { registerMcpCommand } from "./mcp.js";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

// The library (and its wasm) loads before a command runs, not for --help or a usage error.
let ContextManager;
const loadLibrary = async () => {
  ({ ContextManager } = await import("../index.node.js"));
};

// -- the store ---------------------------------------------------------------------------

const RECORD_NAME = /^[A-Za-z0-9_-]{1,64}_[0-9a-f]{12}_[0-9]{13}_[0-9]+_[a-z0-9]{4}\.json$/;
const toSlashes = (p) => (sep === "/" ? p : p.split(sep).join("/"));

/** The library's default store folder, asked of the library itself. */
function libraryDefaultDir() {
  const probe = new ContextManager({ fileSystem: { read() {}, write() {}, remove() {}, list: () => [] } });
  try {
    return probe.getContextDir();
  } finally {
    probe.free();
  }
}

/** `--dir`, else $TOOLCTX_DIR, else the library's default; absolute, `/`-separated. */
export function storeDir(opts) {
  return toSlashes(resolve(opts.dir ?? (process.env.TOOLCTX_DIR || libraryDefaultDir())));
}

/** The store folder, which must exist (every command but `import` reads an existing store). */
function existingStore(opts) {
  const dir = storeDir(opts);
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new CliError(`no store at ${dir}`, {
      hint: "pass --dir DIR or set TOOLCTX_DIR; a store is created by the first saved record",
    });
  }
  if (!st.isDirectory()) throw new CliError(`${dir} is not a folder`, { hint: "--dir takes the store folder" });
  return dir;
}

/**
 * Storage that reports each finished operation to `on(method, args)`: how the bin shows
 * progress on work the library does in one call (export reads, import writes, gc removes).
 */
function observed(storage, on) {
  const wrapped = {};
  for (const name of ["read", "write", "remove", "list", "append", "lock", "removeDir"]) {
    if (typeof storage[name] !== "function") continue;
    wrapped[name] = (...args) => {
      const result = storage[name](...args);
      return Promise.resolve(result).finally(() => on(name, args));
    };
  }
  return wrapped;
}

/**
 * Every persisted record of the store: those outside sessions (what `open` restores
 * from the index segments and the records they do not hold) and each session's (resumed from its manifest and the records it does
 * not list yet). Every manager is opened `readOnly`: reading writes nothing, so a
 * manifest and its `last_activity` stay as they were and `gc` still sees an idle
 * session as stale. `pick(manager)` chooses the pointers (all, or a task's or a query's).
 */
async function readStore(dir, { pick = (m) => m.getAllPointers(), session, quiet = false } = {}) {
  const storage = nodeStorage();
  const warnings = [];
  const onDebug = (msg, data) => warnings.push({ msg, data });
  const root = await ContextManager.open({ contextDir: dir, fileSystem: storage, onDebug, readOnly: true });
  const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: storage });
  if (session !== undefined && !sessions.some((s) => s.id === session)) {
    throw new CliError(`no session ${session} in ${dir}`, { hint: "run 'toolctx sessions' to list them" });
  }
  const pointers = [];
  if (session === undefined) {
    // open() restored them: from the index segments, and the records no segment holds read.
    for (const p of pick(root)) pointers.push({ ...p, session: null });
  }
  for (const s of sessions) {
    if (session !== undefined && s.id !== session) continue;
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: s.id, onDebug, readOnly: true });
    for (const p of pick(m)) pointers.push({ ...p, session: s.id });
    m.free();
  }
  pointers.sort((a, b) => (Date.parse(a.timestamp) || 0) - (Date.parse(b.timestamp) || 0));
  for (const p of pointers) p.path = toSlashes(relative(dir, p.filepath));
  if (!quiet) reportSkipped(warnings);
  warnings.length = 0;
  return { root, storage, sessions, pointers, warnings };
}

/** Files the library skipped while indexing (torn, foreign, refused): a note on stderr. */
function reportSkipped(warnings) {
  const skipped = warnings.filter((w) => w.msg.startsWith("skipped"));
  if (!skipped.length) return;
  process.stderr.write(
    errColors.yellow(`toolctx: skipped ${skipped.length} file${skipped.length === 1 ? "" : "s"} that ${skipped.length === 1 ? "is" : "are"} not a readable record\n`),
  );
  if (process.env.TOOLCTX_DEBUG) for (const w of skipped) process.stderr.write(`  ${w.msg}\n`);
  else process.stderr.write(errColors.dim("hint: TOOLCTX_DEBUG=1 names them\n"));
}

const tokens = (bytes) => Math.ceil(bytes / 4);

/** Groups pointers by `key(p)`: `[{key, records, bytes}]`, largest first. */
function groupBy(pointers, key) {
  const groups = new Map();
  for (const p of pointers) {
    const k = key(p);
    const g = groups.get(k) ?? { key: k, records: 0, bytes: 0 };
    g.records++;
    g.bytes += p.size ?? 0;
    groups.set(k, g);
  }
  return [...groups.values()].sort((a, b) => b.records - a.records || b.bytes - a.bytes);
}

const sum = (pointers) => pointers.reduce((n, p) => n + (p.size ?? 0), 0);

/** A pointer as `--json` prints it: the library's fields plus `session` and `path`. */
const pointerJson = ({ filepath, filename, toolName, toolDescription, args, taskId, queryId, argsHash, timestamp, size, session, path }) => ({
  filepath, filename, path, session, toolName, toolDescription, args, taskId, queryId, argsHash, timestamp, size,
});

// -- argument parsers --------------------------------------------------------------------

function integer(what, { min = 0 } = {}) {
  return (value) => {
    if (!/^-?\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
      throw new InvalidArgumentError(`expected ${what} (an integer ≥ ${min})`);
    }
    return Number(value);
  };
}

/** "30m", "24h", "7d", "90s", "2w" → milliseconds. A unit is required. */
export function duration(value) {
  const msValue = /^\s*\d+(\.\d+)?\s*[a-z]+\s*$/i.test(value) ? ms(value.trim()) : undefined;
  if (!Number.isFinite(msValue) || msValue < 0) {
    throw new InvalidArgumentError("expected a duration such as 30m, 24h or 7d");
  }
  return msValue;
}

// -- commands ----------------------------------------------------------------------------

async function summaryCommand(opts) {
  const dir = existingStore(opts);
  const { sessions, pointers } = await readStore(dir);
  const bytes = sum(pointers);
  const byTool = groupBy(pointers, (p) => p.toolName);
  const tasks = [...new Set(pointers.map((p) => p.taskId).filter((t) => t !== undefined))].sort((a, b) => a - b);
  const outside = pointers.filter((p) => p.session === null).length;
  const recent = pointers.slice(-5).reverse();
  const conversations = await countConversations(dir);
  if (opts.json) {
    return printJson({
      dir,
      records: pointers.length,
      bytes,
      estimatedTokens: tokens(bytes),
      outsideSessions: outside,
      sessions: sessions.length,
      tools: byTool.map((g) => ({ toolName: g.key, records: g.records, bytes: g.bytes })),
      tasks,
      conversations,
      oldest: pointers[0]?.timestamp ?? null,
      newest: pointers.at(-1)?.timestamp ?? null,
      recent: recent.map(pointerJson),
    });
  }
  const lines = [
    out.bold(`toolctx store ${dir}`),
    "",
    fields([
      ["Records", `${count(pointers.length)} (${humanBytes(bytes)}, ~${count(tokens(bytes))} tokens)`],
      ["Sessions", `${count(sessions.length)}${sessions.length ? ` (${plural(pointers.length - outside, "record")})` : ""}; ${plural(outside, "record")} outside sessions`],
      ["Tools", byTool.length ? byTool.slice(0, 6).map((g) => `${g.key} ${g.records}`).join(", ") + (byTool.length > 6 ? `, +${byTool.length - 6} more` : "") : "-"],
      ["Tasks", tasks.length ? shorten(tasks.join(", "), 60) : "-"],
      ...(conversations ? [["Conversations", `${count(conversations)} (run 'toolctx conversations')`]] : []),
      ["Oldest", pointers.length ? `${absoluteTime(pointers[0].timestamp)} (${relativeTime(pointers[0].timestamp)})` : "-"],
      ["Newest", pointers.length ? `${absoluteTime(pointers.at(-1).timestamp)} (${relativeTime(pointers.at(-1).timestamp)})` : "-"],
    ]),
  ];
  if (recent.length) {
    lines.push("", out.bold("Recent records:"));
    for (const p of recent) lines.push(`  ${out.cyan(`[${p.toolName}]`)} ${shorten(p.toolDescription, 60)} ${out.dim(relativeTime(p.timestamp))}`);
    lines.push("", out.dim("Run 'toolctx ls' to list every record, 'toolctx show <file>' to read one."));
  }
  print(...lines);
}

/** Conversations of the store (0 when it has none, or this build has no ConversationStore). */
async function countConversations(dir) {
  if (!existsSync(`${dir}/conversations`)) return 0;
  const { ConversationStore } = await import("../index.node.js");
  if (typeof ConversationStore?.open !== "function") return 0;
  const store = await ConversationStore.open({ contextDir: dir, storage: nodeStorage() });
  return (await store.listConversations()).length;
}

async function lsCommand(opts) {
  const dir = existingStore(opts);
  let pick;
  if (opts.query !== undefined && opts.task !== undefined) throw usage("--query and --task cannot be combined");
  if (opts.query !== undefined) {
    // A queryId as saved, or the query's text (hashed as the agent would have).
    const id = /^q_[0-9a-f]{16}$/.test(opts.query) ? opts.query : ContextManager.hashQuery(opts.query);
    pick = (m) => {
      const exact = m.getPointersForQuery(opts.query);
      return exact.length || id === opts.query ? exact : m.getPointersForQuery(id);
    };
  } else if (opts.task !== undefined) {
    pick = (m) => m.getPointersForTask(opts.task);
  }
  const { pointers } = await readStore(dir, { pick, session: opts.session });
  if (opts.json) return printJson({ dir, records: pointers.map(pointerJson) });
  if (pointers.length === 0) return print(out.dim("no records"));
  const withSessions = pointers.some((p) => p.session !== null);
  const columns = [
    { title: "FILE" },
    ...(withSessions ? [{ title: "SESSION" }] : []),
    { title: "TOOL" },
    { title: "DESCRIPTION" },
    { title: "TASK", align: "right" },
    { title: "SIZE", align: "right" },
    { title: "SAVED" },
  ];
  const rows = pointers.map((p) => [
    p.filename,
    ...(withSessions ? [p.session ?? out.dim("-")] : []),
    out.cyan(p.toolName),
    shorten(p.toolDescription, 48),
    p.taskId ?? "",
    humanBytes(p.size),
    out.dim(relativeTime(p.timestamp)),
  ]);
  print(table(columns, rows), out.dim(`${plural(pointers.length, "record")}, ${humanBytes(sum(pointers))}`));
}

/**
 * `show <file>`: a path relative to the store (as `ls` prints it) or absolute, or a bare
 * record file name found anywhere in the store. The library decides what is inside the
 * store: a path it refuses is an error, never read.
 */
async function showCommand(file, opts) {
  const dir = existingStore(opts);
  const { root, pointers, warnings } = await readStore(dir, { quiet: true });
  const wanted = toSlashes(isAbsolute(file) ? resolve(file) : resolve(dir, file));
  let pointer = pointers.find((p) => p.filepath === wanted);
  if (!pointer && !file.includes("/") && !file.includes("\\")) {
    const named = pointers.filter((p) => p.filename === file);
    if (named.length > 1) {
      throw new CliError(`${file} names ${named.length} records`, { hint: `pass the path: ${named.map((p) => p.path).join(", ")}` });
    }
    pointer = named[0];
  }
  const filepath = pointer?.filepath ?? wanted;
  const [record] = await root.loadContexts([filepath]);
  if (!record) {
    // The library's reason: onDebug("Failed to load <filepath>: <reason>").
    const prefix = `Failed to load ${filepath}: `;
    const reason = warnings.map((w) => w.msg).find((m) => m.startsWith(prefix))?.slice(prefix.length) ?? "";
    if (/^outside/.test(reason)) {
      throw new CliError(`${file} is outside the store ${dir}`, { hint: "show reads only records of the store" });
    }
    if (/ELOOP|symbolic link/.test(reason)) {
      throw new CliError(`${file} is a symbolic link, which the store does not follow`, { hint: "show reads only records of the store" });
    }
    const why = reason === "" || /missing/.test(reason) ? undefined : reason;
    throw new CliError(why ? `${file}: ${why.replace(/ \([^()]*\)$/, "")}` : `no record ${file} in ${dir}`, {
      hint: "run 'toolctx ls' to list the records",
    });
  }
  if (opts.json) return printJson(record);
  const size = pointer?.size ?? Buffer.byteLength(JSON.stringify(record));
  const pairs = [
    ["file", pointer?.path ?? toSlashes(relative(dir, filepath))],
    ["tool", out.cyan(record.toolName)],
    ["description", record.toolDescription],
    ["args", JSON.stringify(record.args)],
  ];
  if (record.taskId !== undefined) pairs.push(["task", String(record.taskId)]);
  if (record.queryId !== undefined) pairs.push(["query", record.queryId]);
  if (pointer?.session) pairs.push(["session", pointer.session]);
  pairs.push(["saved", `${absoluteTime(record.timestamp)} (${relativeTime(record.timestamp)})`]);
  pairs.push(["size", humanBytes(size)]);
  const result =
    record.result === undefined ? out.dim("(no result)") : typeof record.result === "string" ? record.result : JSON.stringify(record.result, null, 2);
  print(fields(pairs), "", out.bold("result"), result);
}

async function selectCommand(query, opts) {
  const dir = existingStore(opts);
  if (opts.allSessions) return searchSessions(dir, query, opts);
  const { root, pointers } = await readStore(dir, { session: opts.session });
  const options = { pointers, fallback: opts.fallback ? "all" : "none", strategy: opts.strategy };
  for (const key of ["limit", "maxBytes", "maxTokens"]) if (opts[key] !== undefined) options[key] = opts[key];
  const scored = await root.selectRelevant(query, options);
  const bySession = new Map(pointers.map((p) => [p.filepath, p]));
  const results = scored.map((c) => {
    const p = bySession.get(c.filepath) ?? c.pointer;
    return { ...pointerJson({ ...c.pointer, session: p.session ?? null, path: p.path }), score: c.score, matched: c.matched };
  });
  if (opts.json) return printJson({ dir, query, strategy: opts.strategy, results });
  if (results.length === 0) return print(out.dim(`no record matches "${query}"`));
  print(rankedTable(results), out.dim(`${count(results.length)} of ${plural(pointers.length, "record")}, ${humanBytes(sum(results))}`));
}

/** The table `select` prints: rank, score, tool, description, matched words, size, file. */
function rankedTable(results) {
  const rows = results.map((r, i) => [
    String(i + 1),
    r.score.toFixed(2),
    out.cyan(r.toolName),
    shorten(r.toolDescription, 48),
    r.matched.join(" "),
    humanBytes(r.size),
    r.session ? `${r.session}/…/${r.filename}` : r.filename,
  ]);
  const columns = [
    { title: "#", align: "right" },
    { title: "SCORE", align: "right" },
    { title: "TOOL" },
    { title: "DESCRIPTION" },
    { title: "MATCHED" },
    { title: "SIZE", align: "right" },
    { title: "FILE" },
  ];
  return table(columns, rows);
}

// select --all-sessions: ContextManager.search, from the sessions' manifests alone.
async function searchSessions(dir, query, opts) {
  const hits = await ContextManager.search({ contextDir: dir, fileSystem: nodeStorage() }, query, { limit: opts.limit ?? 10 });
  const results = hits.map((h) => ({
    ...pointerJson({ ...h.pointer, session: h.sessionId, path: toSlashes(relative(dir, h.filepath)) }),
    score: h.score,
    matched: h.matched,
  }));
  if (opts.json) return printJson({ dir, query, strategy: "bm25", results });
  if (results.length === 0) return print(out.dim(`no record of any session matches "${query}"`));
  print(rankedTable(results), out.dim(`${count(results.length)}, ${humanBytes(sum(results))}`));
}

async function statsCommand(opts) {
  const dir = existingStore(opts);
  const { pointers, sessions } = await readStore(dir);
  const bytes = sum(pointers);
  const byTool = groupBy(pointers, (p) => p.toolName);
  const byTask = groupBy(pointers, (p) => p.taskId ?? null);
  const bySession = groupBy(pointers, (p) => p.session);
  const largest = [...pointers].sort((a, b) => (b.size ?? 0) - (a.size ?? 0)).slice(0, 5);
  if (opts.json) {
    return printJson({
      dir,
      records: pointers.length,
      bytes,
      estimatedTokens: tokens(bytes),
      sessions: sessions.length,
      byTool: byTool.map((g) => ({ toolName: g.key, records: g.records, bytes: g.bytes, estimatedTokens: tokens(g.bytes) })),
      byTask: byTask.map((g) => ({ taskId: g.key, records: g.records, bytes: g.bytes })),
      bySession: bySession.map((g) => ({ session: g.key, records: g.records, bytes: g.bytes })),
      largest: largest.map(pointerJson),
    });
  }
  const share = (b) => (bytes ? `${((100 * b) / bytes).toFixed(1)}%` : "-");
  const groupTable = (title, groups, label) =>
    table(
      [{ title }, { title: "RECORDS", align: "right" }, { title: "SIZE", align: "right" }, { title: "TOKENS", align: "right" }, { title: "SHARE", align: "right" }],
      groups.map((g) => [label(g.key), count(g.records), humanBytes(g.bytes), `~${count(tokens(g.bytes))}`, share(g.bytes)]),
    );
  print(
    fields([
      ["Records", count(pointers.length)],
      ["Size", `${humanBytes(bytes)} (~${count(tokens(bytes))} tokens at 4 bytes a token)`],
      ["Sessions", count(sessions.length)],
    ]),
  );
  if (!pointers.length) return;
  print("", groupTable("TOOL", byTool, (k) => out.cyan(k)));
  if (byTask.length > 1 || byTask[0].key !== null) print("", groupTable("TASK", byTask, (k) => (k === null ? out.dim("none") : String(k))));
  if (sessions.length) print("", groupTable("SESSION", bySession, (k) => k ?? out.dim("outside sessions")));
  print(
    "",
    out.bold("Largest records:"),
    ...largest.map((p) => `  ${humanBytes(p.size).padStart(8)}  ${out.cyan(p.toolName)} ${shorten(p.toolDescription, 50)} ${out.dim(p.path)}`),
  );
}

async function sessionsCommand(opts) {
  const dir = existingStore(opts);
  const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: nodeStorage() });
  sessions.sort((a, b) => (Date.parse(b.lastActivity) || 0) - (Date.parse(a.lastActivity) || 0));
  const now = Date.now();
  const staleAfter = opts.olderThan ?? 24 * 3600e3;
  const isStale = (s) => {
    const last = Date.parse(s.lastActivity);
    return Number.isFinite(last) && last <= now && now - last > staleAfter;
  };
  if (opts.json) return printJson({ dir, staleAfterMs: staleAfter, sessions: sessions.map((s) => ({ ...s, stale: isStale(s) })) });
  if (!sessions.length) return print(out.dim("no sessions"));
  const rows = sessions.map((s) => [
    s.id,
    out.dim(absoluteTime(s.createdAt)),
    relativeTime(s.lastActivity),
    count(s.records),
    humanBytes(s.bytes),
    isStale(s) ? out.yellow("stale") : out.green("active"),
  ]);
  const columns = [
    { title: "SESSION" },
    { title: "CREATED" },
    { title: "LAST ACTIVITY" },
    { title: "RECORDS", align: "right" },
    { title: "SIZE", align: "right" },
    { title: "STATE" },
  ];
  const stale = sessions.filter(isStale).length;
  print(
    table(columns, rows),
    out.dim(`${plural(sessions.length, "session")}; ${count(stale)} idle longer than ${ms(staleAfter, { long: true })}${stale ? " (remove them with 'toolctx gc')" : ""}`),
  );
}

async function gcCommand(opts) {
  const dir = existingStore(opts);
  const olderThanMs = opts.olderThan;
  const storage = nodeStorage();
  const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: storage });
  const now = Date.now();
  const candidates = sessions.filter((s) => {
    const last = Date.parse(s.lastActivity);
    return Number.isFinite(last) && last <= now && now - last > olderThanMs;
  });
  let removed;
  if (opts.dryRun) {
    removed = candidates.map((s) => s.id);
  } else {
    // One remove per tracked record, plus the manifest: the bar follows the removals.
    const bar = progress("gc", candidates.reduce((n, s) => n + s.records + 1, 0));
    const watched = observed(storage, (op) => op === "remove" && bar.tick());
    try {
      removed = await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: watched, olderThanMs });
    } finally {
      bar.stop();
    }
  }
  const gone = sessions.filter((s) => removed.includes(s.id));
  const records = gone.reduce((n, s) => n + s.records, 0);
  const bytes = gone.reduce((n, s) => n + s.bytes, 0);
  if (opts.json) return printJson({ dir, olderThanMs, dryRun: Boolean(opts.dryRun), removed, records, bytes });
  const idle = ms(olderThanMs, { long: true });
  if (!removed.length) return print(`no session idle longer than ${idle}`);
  const verb = opts.dryRun ? "would remove" : "removed";
  print(
    `${verb} ${plural(removed.length, "session")} idle longer than ${idle} (${plural(records, "record")}, ${humanBytes(bytes)}):`,
    ...gone.map((s) => `  ${s.id}  ${out.dim(`last active ${relativeTime(s.lastActivity)}`)}`),
  );
}

async function confirm(question) {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/**
 * `clear`: removes every toolctx record outside sessions (ContextManager.purge: other
 * files stay); `--session ID` ends that session instead; `--all` does both for every
 * session. Asks first on a terminal; elsewhere `--yes` is required.
 */
async function clearCommand(opts) {
  const dir = existingStore(opts);
  if (opts.all && opts.session !== undefined) throw usage("--all and --session cannot be combined");
  const storage = nodeStorage();
  const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: storage });
  let targets = [];
  if (opts.session !== undefined) {
    targets = sessions.filter((s) => s.id === opts.session);
    if (!targets.length) throw new CliError(`no session ${opts.session} in ${dir}`, { hint: "run 'toolctx sessions' to list them" });
  } else if (opts.all) {
    targets = sessions;
  }
  const what =
    opts.session !== undefined
      ? `session ${opts.session}`
      : opts.all
        ? `every record and session (${count(sessions.length)}) of ${dir}`
        : `every record of ${dir} outside sessions`;
  if (!opts.yes) {
    if (!process.stdin.isTTY || !process.stderr.isTTY) {
      throw usage(`clear removes ${what}: pass --yes to confirm`, "clear asks on a terminal; elsewhere --yes is required");
    }
    if (!(await confirm(`Remove ${what}?`))) throw new CliError("nothing removed", { hint: "pass --yes to skip the question" });
  }
  let records = 0;
  if (opts.session === undefined) records = await ContextManager.purge({ contextDir: dir, fileSystem: storage });
  const ended = [];
  for (const s of targets) {
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: s.id });
    await m.endSession();
    m.free();
    records += s.records;
    ended.push(s.id);
  }
  if (opts.json) return printJson({ dir, removedRecords: records, removedSessions: ended });
  print(`removed ${plural(records, "record")}${ended.length ? ` and ${plural(ended.length, "session")}` : ""} from ${dir}`);
}

/** The folders of one session that hold records: the session folder and its categories. */
async function sessionFolders(storage, dir, id) {
  const base = `${dir}/sessions/${id}`;
  const names = await storage.list(base);
  return [base, ...names.filter((n) => n.endsWith("/")).map((n) => `${base}/${n.slice(0, -1)}`)];
}

/**
 * `export <file>`: the records as JSON Lines (`ContextManager.exportRecords`, lossless: a
 * record that is not one line, as the TypeScript original writes them, travels as its exact
 * text). Files named as records that are not whole ones are listed on stderr (and under
 * `skipped` with `--json`).
 * Default: the records outside sessions; `--session ID`: that session's; `--all`: both,
 * every session included. `-` writes to stdout.
 */
async function exportCommand(file, opts) {
  const dir = existingStore(opts);
  if (opts.all && opts.session !== undefined) throw usage("--all and --session cannot be combined");
  const storage = nodeStorage();
  const folders = [];
  if (opts.session === undefined) folders.push(dir);
  if (opts.session !== undefined || opts.all) {
    const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: storage });
    const ids = opts.session !== undefined ? [opts.session] : sessions.map((s) => s.id);
    if (opts.session !== undefined && !sessions.some((s) => s.id === opts.session)) {
      throw new CliError(`no session ${opts.session} in ${dir}`, { hint: "run 'toolctx sessions' to list them" });
    }
    for (const id of ids) folders.push(...(await sessionFolders(storage, dir, id)));
  }
  let total = 0;
  for (const folder of folders) total += (await storage.list(folder)).filter((n) => RECORD_NAME.test(n)).length;
  const bar = progress("export", total);
  const watched = observed(storage, (op, [path]) => op === "read" && RECORD_NAME.test(path.split("/").pop()) && bar.tick());
  let jsonl = "";
  let records = 0;
  const skipped = [];
  try {
    for (const folder of folders) {
      const out = await ContextManager.exportRecords({ contextDir: folder, fileSystem: watched });
      jsonl += out.jsonl;
      records += out.exported;
      const prefix = toSlashes(relative(dir, folder));
      for (const s of out.skipped) skipped.push({ ...s, filename: prefix ? `${prefix}/${s.filename}` : s.filename });
    }
  } finally {
    bar.stop();
  }
  // Files named as records that are not whole ones (torn by a crash, corrupt): never left out silently.
  if (skipped.length && (!opts.json || file === "-")) {
    const one = skipped.length === 1;
    process.stderr.write(errColors.yellow(`toolctx: skipped ${plural(skipped.length, "file")} that ${one ? "is" : "are"} not a whole record:\n`));
    for (const s of skipped) process.stderr.write(`  ${s.filename}: ${s.reason}\n`);
  }
  if (file === "-") {
    process.stdout.write(jsonl);
    return;
  }
  await writeFile(file, jsonl, { mode: 0o600 });
  const bytes = Buffer.byteLength(jsonl);
  if (opts.json) return printJson({ dir, file: resolve(file), records, skipped, bytes });
  print(`exported ${plural(records, "record")} (${humanBytes(bytes)}) to ${file}`);
}

/** `import <file>`: the lines of an export written into the store (created if missing). */
async function importCommand(file, opts) {
  const dir = storeDir(opts);
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new CliError(`${dir} is not a folder`);
  let jsonl;
  try {
    jsonl = file === "-" ? await readStdin() : await readFile(file, "utf8");
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${e.code === "ENOENT" ? "no such file" : e.message}`, { cause: e });
  }
  const total = jsonl.split("\n").filter((l) => l.trim() !== "").length;
  const storage = nodeStorage();
  // One exclusive write per line (a record already there is then read and compared).
  const bar = progress("import", total);
  const watched = observed(storage, (op, [, , options]) => op === "write" && options?.exclusive && bar.tick());
  let report;
  try {
    report = await ContextManager.importRecords({ contextDir: dir, fileSystem: watched }, jsonl);
  } finally {
    bar.stop();
  }
  if (opts.json) return printJson({ dir, file: file === "-" ? "-" : resolve(file), ...report });
  print(`imported ${plural(report.imported, "record")} into ${dir}${report.unchanged ? ` (${count(report.unchanged)} already there, unchanged)` : ""}`);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

// -- the program -------------------------------------------------------------------------

/** The commander program; `run(argv)` parses and runs it. */
export function buildProgram() {
  const program = new Command("toolctx")
    .description("Inspect and manage a toolctx store: the tool outputs an agent saved, its sessions and conversations.")
    .version(pkg.version, "-V, --version")
    .option("--dir <path>", "the store folder (default: $TOOLCTX_DIR, else ~/.agent/context)")
    .option("--json", "print machine-readable JSON on stdout")
    .showSuggestionAfterError(true)
    .hook("preAction", loadLibrary)
    .configureOutput({ outputError: () => {} })
    .addHelpText(
      "after",
      `
Exit codes: 0 success, 1 failure (no store, unknown record...), 2 usage error.
Colours only on a terminal, never with NO_COLOR. TOOLCTX_DEBUG=1 shows stacks.
Run 'toolctx <command> --help' for a command's options.`,
    );

  const command = (name, description, options) => {
    const cmd = program.command(name, options).description(description);
    // Which command a usage error came from, for the hint.
    cmd.exitOverride((e) => {
      throw Object.assign(e, { command: cmd });
    });
    return cmd;
  };
  program.exitOverride((e) => {
    throw Object.assign(e, { command: program });
  });
  const withGlobals = (fn) =>
    async function action(...args) {
      const cmd = args.at(-1);
      return fn(...args.slice(0, -2), cmd.optsWithGlobals());
    };
  const sessionOption = () => new Option("--session <id>", "only this session's records");

  command("summary", "the store at a glance: records, sizes, tools, tasks, recent records (the default command)")
    .action(withGlobals(summaryCommand));

  command("ls", "list the records, oldest first")
    .option("--query <query>", "only the records saved for this query (its text, or its q_… id)")
    .option("--task <n>", "only the records of this task", integer("a task id"))
    .addOption(sessionOption())
    .action(withGlobals(lsCommand));

  command("show", "print one record: its fields, then its result (the raw record with --json)")
    .argument("<file>", "the record: a path relative to the store (as 'ls' prints it), an absolute path, or a file name")
    .action(withGlobals(showCommand));

  command("select", "the records relevant to a query, best first, with scores")
    .argument("<query>", "what the next model call is about")
    .option("--limit <n>", "at most this many records", integer("a count", { min: 1 }))
    .option("--max-tokens <n>", "the best set whose records fit in this many tokens (4 bytes a token)", integer("a token count", { min: 1 }))
    .option("--max-bytes <n>", "the best set whose records fit in this many bytes", integer("a byte count", { min: 1 }))
    .addOption(new Option("--strategy <name>", "ranking").choices(["bm25", "overlap"]).default("bm25"))
    .option("--fallback", "when nothing matches, list every record (the library's default) instead of none")
    .addOption(sessionOption())
    .option("--all-sessions", "rank the records of every session from their manifests alone (ContextManager.search; no record is read)")
    .action(withGlobals(selectCommand));

  command("stats", "sizes and estimated tokens by tool, task and session; the largest records")
    .action(withGlobals(statsCommand));

  command("sessions", "list the sessions: records, size, last activity, stale or active")
    .option("--older-than <duration>", "what counts as stale (default 24h)", duration)
    .action(withGlobals(sessionsCommand));

  command("gc", "remove sessions idle longer than a duration (only the files their manifests track)")
    .addOption(new Option("--older-than <duration>", "idle time, such as 30m, 24h or 7d").argParser(duration).default(24 * 3600e3, "24h"))
    .option("--dry-run", "list the sessions that would be removed, remove nothing")
    .action(withGlobals(gcCommand));

  command("clear", "remove the records outside sessions (other files stay); --all: every session too")
    .option("--all", "also end every session (all toolctx records of the store)")
    .addOption(new Option("--session <id>", "end only this session"))
    .option("-y, --yes", "do not ask (required when not on a terminal)")
    .action(withGlobals(clearCommand));

  command("export", "write the records as JSON Lines (lossless; 'import' reads it back)")
    .argument("<file>", "the file to write, or - for stdout")
    .addOption(new Option("--session <id>", "export this session's records instead"))
    .option("--all", "export every record: outside sessions and in every session")
    .action(withGlobals(exportCommand));

  command("import", "write the records of an export into the store (created if missing)")
    .argument("<file>", "an export file, or - for stdin")
    .action(withGlobals(importCommand));

  registerConversationCommands(command, withGlobals, { existingStore, storeDir, integer });
  registerMcpCommand(command, withGlobals, { storeDir, readStore, version: pkg.version });

  return program;
}

function printError(e) {
  const message = String(e.message ?? e).replace(/^error: /, "").replace(/^toolctx: /, "");
  process.stderr.write(`${errColors.red("toolctx:")} ${message}\n`);
  if (e.hint) process.stderr.write(`${errColors.dim(`hint: ${e.hint}`)}\n`);
  if (process.env.TOOLCTX_DEBUG && e.stack) process.stderr.write(`${e.stack}\n`);
}

/** `toolctx`, `toolctx --dir D`, `toolctx --json`: no command means `summary`. */
function withDefaultCommand(argv) {
  const args = argv.slice(2);
  let i = 0;
  while (i < args.length && (args[i] === "--json" || args[i].startsWith("--dir"))) i += args[i] === "--dir" ? 2 : 1;
  return i >= args.length ? [...argv, "summary"] : argv;
}

/** Runs the command line; resolves to the exit code. */
export async function run(argv = process.argv) {
  const program = buildProgram();
  argv = withDefaultCommand(argv);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (e?.code?.startsWith?.("commander.")) {
      if (["commander.helpDisplayed", "commander.version", "commander.help"].includes(e.code)) return e.exitCode ?? 0;
      const name = e.command && e.command !== program ? `toolctx ${e.command.name()}` : "toolctx";
      printError({ message: e.message.split("\n")[0] + (e.message.includes("(Did you mean") ? ` ${e.message.split("\n")[1]}` : ""), hint: `see '${name} --help'` });
      return 2;
    }
    if (e instanceof CliError) {
      printError(e);
      return e.exitCode;
    }
    if (e?.code === "NOT_FOUND" || e?.code === "OUTSIDE_STORE" || e?.code === "CORRUPT_RECORD" || e?.code === "INVALID_ARGUMENT") {
      printError(e);
      return 1;
    }
    if (typeof e?.code === "string") {
      printError({ ...e, message: e.message, hint: e.hint ?? (e.code === "QUOTA_EXCEEDED" ? "the disk is full" : undefined), stack: e.stack });
      return 1;
    }
    printError({ message: `unexpected error: ${e?.message ?? e}`, hint: "set TOOLCTX_DEBUG=1 to see the stack", stack: e?.stack });
    return 1;
  }
}

// `toolctx ls | head`: a reader that stops early is not an error.
process.stdout.on("error", (e) => {
  if (e.code !== "EPIPE") throw e;
  process.exit(process.exitCode ?? 0);
});
process.exitCode = await run();
