// The context-window optimiser (SPEC §7) from its own wasm module (toolctx_window_bg.wasm),
// instantiated by the first call (module.js): its functions and the ContextHistory class
// (written here over the module's handle) turn a trap into INTERNAL as ContextManager
// does; optimizeWindow({history}) runs in the history.
// The optimiser returns what to change (the new content of the messages it changed, the
// range to remove); the result is a copy of the messages (plain objects and arrays copied;
// strings, dates and other non-plain objects shared) with the new contents swapped in.
// These and other values cross as JSON text, parsed here once the wasm call has returned (a
// JSON.parse inside a wasm call can crash Node 20's V8; see `pointers` in crates/wasm/src/manager/select.rs).
// A history's file is loaded and written by plans (crates/core/src/plan.rs) of this module, run by
// its driver (`windowModule.driver.plan`, driver.js), which steps them through this
// module's `__planStep` (crates/wasm/src/plans.rs).
import * as glue from "./toolctx_window.js";
import { toolctxError } from "./errors.js";
import { WasmModule } from "./module.js";

export const windowModule = new WasmModule("window", glue);
const {
  ContextHistory: HistoryCore, estimateTokens: estimateCore, findDuplicateFileReads: findDuplicatesCore,
  __optimizeWindow: optimizeCore, shouldCompact: shouldCompactCore, truncationRange: truncationRangeCore,
} = glue;

// Messages cross as UTF-8 JSON bytes: JSON.stringify and TextEncoder are native and the
// bytes are copied once, where megabytes of strings would be converted char by char.
const encoder = new TextEncoder();
function wire(messages) {
  if (!Array.isArray(messages)) return messages; // the core rejects it
  try {
    return encoder.encode(JSON.stringify(messages));
  } catch (cause) {
    throw toolctxError("NOT_SERIALIZABLE", `toolctx: messages cannot be serialised as JSON: ${cause?.message}`, { cause });
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

/** `fn()` (a synchronous call into the module, instantiated first) with a trap as INTERNAL. */
function call(fn) {
  windowModule.ready();
  try {
    return fn();
  } catch (err) {
    throw windowModule.error(err);
  }
}

const OPEN = Symbol("ContextHistory.open");

/** The timestamped edit history of one conversation, persisted as one JSON file. */
export class ContextHistory {
  /** The module's history (the generated class's instance): never handed out. */
  #handle;
  /** The module's generation when the history was made (module.js). */
  #generation;

  /** Not a way to a history: `await ContextHistory.open(options)` is. */
  constructor(token, handle) {
    if (token !== OPEN) {
      throw toolctxError("INVALID_ARGUMENT", "toolctx: use `await ContextHistory.open(options)` to open a history; `new ContextHistory()` makes none");
    }
    this.#handle = handle;
    this.#generation = windowModule.generation;
  }

  /** The module's history, if it is of the current instance; INTERNAL if a trap lost it. */
  #live() {
    if (this.#generation !== windowModule.generation) throw windowModule.stale("history");
    return this.#handle;
  }

  /** Loads the history (empty when the file does not exist). */
  static async open(options) {
    await windowModule.load(); // where the module is fetched (browsers)
    const history = new ContextHistory(OPEN, call(() => HistoryCore.__open(options)));
    await windowModule.driver.plan(history.#call((h) => h.__load()));
    return history;
  }

  /** Panics inside the module on purpose (tests of the trap handling). Not part of the API. */
  static __panicForTests(message) {
    return call(() => HistoryCore.__panicForTests(message));
  }

  /** `fn(handle)` (a call into the module) with a trap as INTERNAL. */
  #call(fn) {
    return call(() => fn(this.#live()));
  }

  get id() {
    return this.#call((h) => h.id);
  }

  get path() {
    return this.#call((h) => h.path);
  }

  get deletedRange() {
    return JSON.parse(this.#call((h) => h.deletedRange));
  }

  optimize(messages, options) {
    return finish(messages, JSON.parse(this.#call((h) => h.__optimize(wire(messages), options))));
  }

  apply(messages) {
    return assemble(messages, JSON.parse(this.#call((h) => h.__apply(wire(messages)))));
  }

  edits() {
    return JSON.parse(this.#call((h) => h.edits()));
  }

  toJSON() {
    return JSON.parse(this.#call((h) => h.toJSON()));
  }

  /** Writes the history file (replaced whole, atomically where the storage allows). */
  async save() {
    await this.#write();
  }

  /** Drops the edits and truncations made after `ts` and saves; resolves to how many were dropped. */
  async restoreCheckpoint(ts) {
    const dropped = this.#call((h) => h.__restoreCheckpoint(ts));
    await this.#write();
    return dropped;
  }

  /** Frees the history's wasm memory now (it is freed when collected otherwise). */
  free() {
    if (this.#generation === windowModule.generation) this.#handle.free();
  }

  // The history file's load and write are plans (crates/core/src/plan.rs) the module starts and steps
  // (`__planStep`) and its driver runs (driver.js `plan`; docs/protocol.md): the module
  // computes (what to write, what the file holds, how a host failure is typed) and runs no tasks.
  /** Writes the history file with what the history holds now, when the call is made. */
  #write() {
    return windowModule.driver.plan(this.#call((h) => h.__save()));
  }
}

export function optimizeWindow(messages, options) {
  const history = options?.history;
  if (history === undefined || history === null) {
    return finish(messages, JSON.parse(call(() => optimizeCore(wire(messages), options))));
  }
  if (!(history instanceof ContextHistory)) {
    throw toolctxError("INVALID_ARGUMENT", "options.history must be a ContextHistory");
  }
  const { history: _, ...rest } = options;
  return history.optimize(messages, rest);
}

export function findDuplicateFileReads(messages, options) {
  return JSON.parse(call(() => findDuplicatesCore(wire(messages), options)));
}

export function truncationRange(messages, strategy, options) {
  return JSON.parse(call(() => truncationRangeCore(wire(messages), strategy, options)));
}

export function shouldCompact(usage, contextWindow, options) {
  return call(() => shouldCompactCore(usage, contextWindow, options));
}

export function estimateTokens(value) {
  return call(() => estimateCore(typeof value === "string" ? value : wire(value)));
}
