// What wasm-bindgen cannot declare or does not do on its own:
// - `Symbol.asyncDispose` on ContextManager;
// - the driver (driver.js): methods that do I/O return a task number, and the driver
//   runs the task's host calls and settles the caller's Promise;
// - traps (SPEC §9): every entry into the module is a synchronous call from here or
//   from the driver, so if the core ever panics the trap is caught where it happens:
//   that call fails with an `INTERNAL` error, so does every call in flight, and the
//   panic hook has asked wasm-bindgen for a fresh instance for the next call. Managers
//   made before the trap lost their in-memory state with the old instance: their calls
//   fail as INTERNAL too (their persisted records remain; open the session or store again).
import * as core from "./toolctx_core.js";
import { ContextManager as Core, ConversationStore as Conversations, __setHostDefaults } from "./toolctx_core.js";
import {
  ContextHistory as HistoryCore, estimateTokens as estimateCore, findDuplicateFileReads as findDuplicatesCore,
  __optimizeWindow as optimizeCore, shouldCompact as shouldCompactCore, truncationRange as truncationRangeCore,
} from "./toolctx_core.js";
import { createDriver } from "./driver.js";
import { parseRecord } from "./records.js";
import { installPointerArrays, slotsOf } from "./pointers.js";

let traps = 0;
let lastPanic;
let defaults;
let defaultsLost = false;

/** Registers the runtime's defaults (storage, context dir...) with the core. */
export function setHostDefaults(value) {
  defaults = { ...value, onTrap };
  __setHostDefaults(defaults);
}

/** After a trap the fresh instance has none of the old one's state: register again. */
function ensureDefaults() {
  if (defaultsLost && defaults) {
    defaultsLost = false;
    __setHostDefaults(defaults);
  }
}

function internal(cause, message) {
  return Object.assign(new Error(`toolctx: internal error: ${message}`), { name: "ToolctxError", code: "INTERNAL", cause });
}

function convert(err) {
  if (err?.code !== undefined) return err;
  if (err instanceof WebAssembly.RuntimeError) {
    return internal(err, `${lastPanic ?? err.message}; the module was re-instantiated`);
  }
  if (traps > 0 && err instanceof Error) {
    return internal(err, `this manager's state was lost when the module was re-instantiated (${err.message})`);
  }
  return err;
}

/** Called by the core's panic hook, just before the trap. */
function onTrap(message) {
  traps++;
  lastPanic = message;
  defaultsLost = true;
}

const driver = createDriver(core, convert);

// The methods that do I/O: they report every failure by rejecting, never by throwing.
const ASYNC = new Set([
  "open", "saveContext", "loadContexts", "selectRelevant", "clearContextDir", "clear", "flush", "close",
  "endSession", "rebuildIndex", "reconcile", "purge", "exportRecords", "importRecords", "listSessions", "cleanupStaleSessions", "search",
  "__panicForTestsAsync", "__embedQuery", "__loadContexts",
  // ConversationStore
  "createConversation", "listConversations", "getConversation", "deleteConversation", "appendMessage", "getMessages",
  "storeArtifact", "appendWithArtifact", "getArtifact", "listArtifacts", "resolveArtifacts", "stats", "prune", "export",
  "import", "sync", "syncStatus",
]);

function guard(name, fn) {
  return function guarded(...args) {
    let out;
    try {
      ensureDefaults();
      out = fn.apply(this, args);
    } catch (err) {
      const error = err instanceof WebAssembly.RuntimeError ? driver.fail(err) : convert(err);
      if (ASYNC.has(name)) return Promise.reject(error);
      throw error;
    }
    return ASYNC.has(name) ? driver.settle(out) : out;
  };
}

// The wasm methods (and the pointer lists over them), guarded; the overrides below build
// on the guarded ones.
installPointerArrays(Core.prototype);
for (const target of [Core.prototype, Core, Conversations.prototype, Conversations]) {
  for (const name of Object.getOwnPropertyNames(target)) {
    const d = Object.getOwnPropertyDescriptor(target, name);
    if (name === "constructor" || name === "prototype" || (name.startsWith("__") && !name.startsWith("__panicForTests") && !ASYNC.has(name))) continue;
    if (typeof d.value === "function") Object.defineProperty(target, name, { ...d, value: guard(name, d.value) });
    else if (typeof d.get === "function") Object.defineProperty(target, name, { ...d, get: guard(name, d.get) });
  }
}

// loadContexts: the core confines the paths and reads; the records are parsed here.
const loadValues = Core.prototype.__loadContexts;
Core.prototype.loadContexts = async function loadContexts(filepaths) {
  const found = await loadValues.call(this, filepaths);
  const records = [];
  for (let i = 0; i < found.length; i += 2) {
    const record = parseRecord(found[i + 1]);
    if (typeof record === "string") this.__debug(`Failed to load ${found[i]}: ${record}`, found[i]);
    else records.push(record);
  }
  return records;
};

// selectRelevant's rerank hook: a host callback (a model call, typically) may reorder or
// cut the heuristic candidates; on error or timeout the heuristic order stands and
// onDebug says why. The timer and AbortSignal belong to the host, so this lives here.
const heuristicSelect = Core.prototype.selectRelevant;
Core.prototype.selectRelevant = async function selectRelevant(query, options) {
  const { rerank, rerankTimeoutMs, ...rest } = options ?? {};
  // An untouched pointer array of this manager is ranked by slot, through the index.
  const own = slotsOf(this, rest.pointers);
  if (own) {
    delete rest.pointers;
    if (!own.all) rest.__slots = own.slots;
  }
  // With the embed option: hybrid ranking (BM25F and the query's vector, fused by rank).
  const vector = typeof query === "string" ? await this.__embedQuery(query) : undefined;
  if (vector) rest.__queryVector = vector;
  const ranked = await heuristicSelect.call(this, query, options == null && !vector ? options : rest);
  if (typeof rerank !== "function" || ranked.length === 0) return ranked;
  const controller = new AbortController();
  let timer;
  const timeout = new Promise((_, reject) => {
    if (Number.isFinite(rerankTimeoutMs)) {
      timer = setTimeout(() => {
        controller.abort(new Error(`rerank timed out after ${rerankTimeoutMs} ms`));
        reject(controller.signal.reason);
      }, rerankTimeoutMs);
    }
  });
  try {
    const order = await Promise.race([rerank(query, ranked.map((c) => ({ ...c })), controller.signal), timeout]);
    if (!Array.isArray(order)) throw new TypeError("rerank must resolve to an array of filepaths");
    const byPath = new Map(ranked.map((c) => [c.filepath, c]));
    const out = [];
    for (const path of order) {
      const candidate = byPath.get(path);
      if (candidate) {
        out.push(candidate);
        byPath.delete(path);
      }
    }
    return out;
  } catch (err) {
    this.__debug(`rerank failed, keeping the heuristic order: ${err?.message ?? err}`);
    return ranked;
  } finally {
    clearTimeout(timer);
  }
};

// selectRelevantContexts through one crossing each way: the filepaths go in NUL-joined
// (paths never hold NUL) and the result comes back the same way.
const selectPaths = Core.prototype.__selectPaths;
const selectSlots = Core.prototype.__selectSlots;
const NO_SLOTS = new Uint32Array(0);
Core.prototype.selectRelevantContexts = guard("selectRelevantContexts", function selectRelevantContexts(query, pointers, options) {
  const own = slotsOf(this, pointers);
  if (own) {
    const out = selectSlots.call(this, query, own.all ? NO_SLOTS : own.slots, own.all, options);
    return out === "" ? [] : out.split("\0");
  }
  if (!Array.isArray(pointers)) return selectPaths.call(this, query, pointers, options, "");
  const joined = pointers.map((p) => (typeof p?.filepath === "string" ? p.filepath : "")).join("\0");
  const out = selectPaths.call(this, query, pointers, options, joined);
  return out === "" ? [] : out.split("\0");
});



if (typeof Symbol.asyncDispose === "symbol" && !Core.prototype[Symbol.asyncDispose]) {
  Object.defineProperty(Core.prototype, Symbol.asyncDispose, {
    value() {
      return this.close();
    },
    writable: true,
    configurable: true,
  });
}

/** The exported class: the core's, with the defaults restored before construction after a trap. */
export const ContextManager = new Proxy(Core, {
  construct(target, args, newTarget) {
    try {
      ensureDefaults();
      return Reflect.construct(target, args, newTarget);
    } catch (err) {
      throw convert(err);
    }
  },
});

/** The conversation store (made by `ConversationStore.open`), its methods guarded like ContextManager's. */
if (typeof Symbol.asyncDispose === "symbol" && !Conversations.prototype[Symbol.asyncDispose]) {
  Object.defineProperty(Conversations.prototype, Symbol.asyncDispose, {
    value() {
      return this.close();
    },
    writable: true,
    configurable: true,
  });
}
export const ConversationStore = Conversations;
// The context-window optimiser (SPEC §7): the same trap guard as ContextManager for its
// functions and the ContextHistory class; optimizeWindow({history}) runs in the history.
// The core returns a plan (the new content of the messages it changed, the range to
// remove); the result is a copy of the messages (plain objects and arrays copied; strings,
// dates and other non-plain objects shared) with the new contents swapped in.
ASYNC.add("save").add("restoreCheckpoint");
// Messages cross as UTF-8 JSON bytes: JSON.stringify and TextEncoder are native and the
// bytes are copied once, where megabytes of strings would be converted char by char.
const encoder = new TextEncoder();
function wire(messages) {
  if (!Array.isArray(messages)) return messages; // the core rejects it
  try {
    return encoder.encode(JSON.stringify(messages));
  } catch (cause) {
    throw Object.assign(new Error(`toolctx: messages cannot be serialised as JSON: ${cause?.message}`), {
      name: "ToolctxError", code: "NOT_SERIALIZABLE", cause,
    });
  }
}
const plain = (v) => v !== null && typeof v === "object" && [Object.prototype, null].includes(Object.getPrototypeOf(v));
const copy = (v) => (Array.isArray(v) ? v.map(copy) : plain(v) ? copyObject(v) : v);
function copyObject(o) {
  const out = {};
  for (const k of Object.keys(o)) out[k] = copy(o[k]);
  return out;
}
function assemble(messages, { changed, truncated }) {
  const out = new Array(messages.length);
  let next = 0;
  for (let i = 0; i < messages.length; i++) {
    if (truncated !== null && i >= truncated[0] && i <= truncated[1]) continue;
    out[i] = copyObject(messages[i]);
    if (next < changed.length && changed[next][0] === i) out[i].content = changed[next++][1];
  }
  if (truncated !== null) out.splice(truncated[0], truncated[1] - truncated[0] + 1);
  return out;
}
function finish(messages, plan) {
  const { edits, truncated, metrics } = plan;
  return { messages: assemble(messages, plan), edits, truncated, metrics };
}
const planIn = HistoryCore.prototype.__optimize;
HistoryCore.prototype.optimize = function optimize(messages, options) {
  return finish(messages, planIn.call(this, wire(messages), options));
};
const applyIn = HistoryCore.prototype.__apply;
HistoryCore.prototype.apply = function apply(messages) {
  return assemble(messages, applyIn.call(this, wire(messages)));
};
for (const target of [HistoryCore.prototype, HistoryCore]) {
  for (const name of Object.getOwnPropertyNames(target)) {
    const d = Object.getOwnPropertyDescriptor(target, name);
    if (name === "constructor" || name === "prototype" || name.startsWith("__")) continue;
    if (typeof d.value === "function") Object.defineProperty(target, name, { ...d, value: guard(name, d.value) });
    else if (typeof d.get === "function") Object.defineProperty(target, name, { ...d, get: guard(name, d.get) });
  }
}

export const ContextHistory = HistoryCore;
export const optimizeWindow = guard("optimizeWindow", (messages, options) => {
  const history = options?.history;
  if (history === undefined || history === null) return finish(messages, optimizeCore(wire(messages), options));
  if (!(history instanceof HistoryCore)) {
    throw Object.assign(new TypeError("options.history must be a ContextHistory"), { name: "ToolctxError", code: "INVALID_ARGUMENT" });
  }
  const { history: _, ...rest } = options;
  return history.optimize(messages, rest);
});
export const findDuplicateFileReads = guard("findDuplicateFileReads", (messages, options) =>
  findDuplicatesCore(wire(messages), options));
export const truncationRange = guard("truncationRange", (messages, strategy, options) =>
  truncationRangeCore(wire(messages), strategy, options));
export const shouldCompact = guard("shouldCompact", shouldCompactCore);
export const estimateTokens = guard("estimateTokens", (value) => estimateCore(typeof value === "string" ? value : wire(value)));
