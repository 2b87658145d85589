// What wasm-bindgen cannot declare or does not do on its own:
// - `Symbol.asyncDispose` on ContextManager;
// - traps (SPEC §9): if the core ever panics, the module traps. The panic hook asks
//   wasm-bindgen for a fresh instance on the next call and tells us (onTrap), and here
//   every call in flight fails with an `INTERNAL` error instead of a WebAssembly
//   RuntimeError or a Promise that never settles. Managers made before the trap lost
//   their in-memory state with the old instance: their calls fail as INTERNAL too
//   (their persisted records remain; open the session or store again).
import { ContextManager as Core, ConversationStore as Conversations, __setHostDefaults } from "./toolctx_core.js";
import {
  ContextHistory as HistoryCore, estimateTokens as estimateCore, findDuplicateFileReads as findDuplicatesCore,
  __optimizeWindow as optimizeCore, shouldCompact as shouldCompactCore, truncationRange as truncationRangeCore,
} from "./toolctx_core.js";
import { installPointerLists } from "./pointers.js";

const pending = new Set();
let traps = 0;
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
  if (err instanceof WebAssembly.RuntimeError) return internal(err, `${err.message}; the module was re-instantiated`);
  if (traps > 0 && err instanceof Error) {
    return internal(err, `this manager's state was lost when the module was re-instantiated (${err.message})`);
  }
  return err;
}

/** Called by the core's panic hook, just before the trap. */
function onTrap(message) {
  traps++;
  defaultsLost = true;
  const err = internal(undefined, message);
  for (const reject of pending) reject(err);
  pending.clear();
}

// The methods that do I/O: they report every failure by rejecting, never by throwing.
const ASYNC = new Set([
  "open", "saveContext", "loadContexts", "selectRelevant", "clearContextDir", "clear", "flush", "close",
  "endSession", "rebuildIndex", "reconcile", "purge", "exportRecords", "importRecords", "listSessions", "cleanupStaleSessions", "search",
  "__panicForTestsAsync",
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
      if (ASYNC.has(name)) return Promise.reject(convert(err));
      throw convert(err);
    }
    if (!(out instanceof Promise)) return out;
    return new Promise((resolve, reject) => {
      pending.add(reject);
      out.then(resolve, (err) => reject(convert(err))).finally(() => pending.delete(reject));
    });
  };
}

// selectRelevant's rerank hook: a host callback (a model call, typically) may reorder or
// cut the heuristic candidates; on error or timeout the heuristic order stands and
// onDebug says why. The timer and AbortSignal belong to the host, so this lives here.
const heuristicSelect = Core.prototype.selectRelevant;
Core.prototype.selectRelevant = async function selectRelevant(query, options) {
  const { rerank, rerankTimeoutMs, ...rest } = options ?? {};
  // The filepaths cross in one string (see selectRelevantContexts below).
  if (Array.isArray(rest.pointers)) rest.__paths = joinedPaths(rest.pointers);
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
// (paths never hold NUL; "" for a pointer without one) and the result comes back the
// same way. The core finds this manager's pointers by filepath and ranks them through
// the index.
function joinedPaths(pointers) {
  return pointers.map((p) => (typeof p?.filepath === "string" ? p.filepath : "")).join("\0");
}
const selectPaths = Core.prototype.__selectPaths;
Core.prototype.selectRelevantContexts = function selectRelevantContexts(query, pointers, options) {
  if (!Array.isArray(pointers)) return selectPaths.call(this, query, pointers, options, "");
  const out = selectPaths.call(this, query, pointers, options, joinedPaths(pointers));
  return out === "" ? [] : out.split("\0");
};

installPointerLists(Core.prototype);

for (const target of [Core.prototype, Core, Conversations.prototype, Conversations]) {
  for (const name of Object.getOwnPropertyNames(target)) {
    const d = Object.getOwnPropertyDescriptor(target, name);
    if (name === "constructor" || name === "prototype" || (name.startsWith("__") && !name.startsWith("__panicForTests"))) continue;
    if (typeof d.value === "function") Object.defineProperty(target, name, { ...d, value: guard(name, d.value) });
    else if (typeof d.get === "function") Object.defineProperty(target, name, { ...d, get: guard(name, d.get) });
  }
}

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
