// The context-window optimiser (SPEC §7) from its own wasm module (toolctx_window_bg.wasm),
// instantiated by the first call (lazy.js): the same trap guard as ContextManager for its
// functions and the ContextHistory class; optimizeWindow({history}) runs in the history.
// The module returns a plan (the new content of the messages it changed, the range to
// remove); the result is a copy of the messages (plain objects and arrays copied; strings,
// dates and other non-plain objects shared) with the new contents swapped in. Plans and
// other values cross as JSON text, parsed here once the wasm call has returned (a
// JSON.parse inside a wasm call can crash Node 20's V8; see __pointers in src/wasm/manager.rs).
import * as glue from "./toolctx_window.js";
import { LazyModule } from "./lazy.js";

export const windowModule = new LazyModule("window", glue);
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
  return finish(messages, JSON.parse(planIn.call(this, wire(messages), options)));
};
const applyIn = HistoryCore.prototype.__apply;
HistoryCore.prototype.apply = function apply(messages) {
  return assemble(messages, JSON.parse(applyIn.call(this, wire(messages))));
};
for (const name of ["edits", "toJSON"]) {
  const method = HistoryCore.prototype[name];
  Object.defineProperty(HistoryCore.prototype, name, {
    value: { [name]() { return JSON.parse(method.call(this)); } }[name],
    writable: true,
    configurable: true,
  });
}
const deletedRangeIn = Object.getOwnPropertyDescriptor(HistoryCore.prototype, "deletedRange").get;
Object.defineProperty(HistoryCore.prototype, "deletedRange", {
  get() {
    return JSON.parse(deletedRangeIn.call(this));
  },
  configurable: true,
});
windowModule.guardClass(HistoryCore);

// The history file's read and write are steps (docs/protocol.md) the module's driver runs
// (driver.js `run`): the module computes (what to write, what the file holds, how a host
// failure is typed) and runs no tasks. The internals are guarded like the methods: a trap
// is INTERNAL, and the async methods reject with it.
const [openIn, readStepIn, loadedIn, writeStepIn, writtenIn, restoreIn] = ["__open", "__readStep", "__loaded", "__writeStep", "__written", "__restoreCheckpoint"]
  .map((name) => windowModule.guard(name, name === "__open" ? HistoryCore.__open : HistoryCore.prototype[name]));
/** Writes the history file with what the history holds now, when the call is made. */
function write(history) {
  return windowModule.driver.run(writeStepIn.call(history), (_, outcomes) => writtenIn.call(history, outcomes));
}
Object.defineProperty(HistoryCore, "open", {
  value: async function open(options) {
    const history = openIn(options);
    await windowModule.driver.run(readStepIn.call(history), (_, outcomes) => loadedIn.call(history, outcomes, options));
    return history;
  },
  writable: true,
  configurable: true,
});
for (const [name, method] of Object.entries({
  /** Writes the history file (replaced whole, atomically where the storage allows). */
  async save() {
    await write(this);
  },
  /** Drops the edits and truncations made after `ts` and saves; resolves to how many were dropped. */
  async restoreCheckpoint(ts) {
    const dropped = restoreIn.call(this, ts);
    await write(this);
    return dropped;
  },
})) {
  Object.defineProperty(HistoryCore.prototype, name, { value: method, writable: true, configurable: true });
}

// Where the module is fetched (browsers), open waits for it.
windowModule.loadBeforeOpen(HistoryCore);

export const ContextHistory = HistoryCore;
export const optimizeWindow = windowModule.guard("optimizeWindow", (messages, options) => {
  const history = options?.history;
  if (history === undefined || history === null) {
    return finish(messages, JSON.parse(optimizeCore(wire(messages), options)));
  }
  if (!(history instanceof HistoryCore)) {
    throw Object.assign(new TypeError("options.history must be a ContextHistory"), { name: "ToolctxError", code: "INVALID_ARGUMENT" });
  }
  const { history: _, ...rest } = options;
  return history.optimize(messages, rest);
});
export const findDuplicateFileReads = windowModule.guard("findDuplicateFileReads", (messages, options) =>
  JSON.parse(findDuplicatesCore(wire(messages), options)));
export const truncationRange = windowModule.guard("truncationRange", (messages, strategy, options) =>
  JSON.parse(truncationRangeCore(wire(messages), strategy, options)));
export const shouldCompact = windowModule.guard("shouldCompact", shouldCompactCore);
export const estimateTokens = windowModule.guard("estimateTokens", (value) => estimateCore(typeof value === "string" ? value : wire(value)));
