// The store as the commands read it: which folder, the library loaded on demand, every
// record of it (sessions included) gathered read-only, and the few sums and shapes
// several commands print.

import { statSync } from "node:fs";
import { relative, resolve, sep } from "node:path";

import { nodeStorage } from "../adapters/node.js";
import { CliError, err as errColors } from "./ui.js";

// The library (and its wasm) loads before a command runs, not for --help or a usage error:
// toolctx.js runs `loadLibrary` as commander's preAction hook. `ContextManager` is a live
// binding, so the commands that import it see the class once it is loaded.
export let ContextManager;
export const loadLibrary = async () => {
  ({ ContextManager } = await import("../index.node.js"));
};

export const toSlashes = (p) => (sep === "/" ? p : p.split(sep).join("/"));

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
export function existingStore(opts) {
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
export function observed(storage, on) {
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
 * @param {string} dir
 * @param {{ pick?: (manager: any) => any[], session?: string, quiet?: boolean }} [options]
 */
export async function readStore(dir, { pick = (m) => m.getAllPointers(), session, quiet = false } = {}) {
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

// -- pointers as the commands count and print them ----------------------------------------

export const tokens = (bytes) => Math.ceil(bytes / 4);

/** Groups pointers by `key(p)`: `[{key, records, bytes}]`, largest first. */
export function groupBy(pointers, key) {
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

export const sum = (pointers) => pointers.reduce((n, p) => n + (p.size ?? 0), 0);

/** A pointer as `--json` prints it: the library's fields (its `handle` too) plus `session` and `path`. */
export const pointerJson = ({ filepath, filename, handle, toolName, toolDescription, args, taskId, queryId, argsHash, timestamp, size, session, path }) => ({
  filepath, filename, handle, path, session, toolName, toolDescription, args, taskId, queryId, argsHash, timestamp, size,
});
