// What wasm-bindgen cannot declare or does not do on its own:
// - `Symbol.asyncDispose` on ContextManager;
// - the driver (driver.js): a method that does I/O returns what to do (the first step of
//   a plan, a record to write, records to read), and the driver does it and settles the
//   caller's Promise;
// - traps (SPEC §9): if a module ever panics, its panic hook asks wasm-bindgen for a
//   fresh instance for the next call, and `onTrap` (host.js) fails the module's calls in
//   flight and throws the `INTERNAL` error through the call that panicked, whatever it is
//   (a constructor too: it is wasm-bindgen's own, not guarded here). Managers
//   made before the trap lost their in-memory state with the old instance: their calls
//   fail as INTERNAL too (their persisted records remain; open the session or store again).
//
// The conversation store (conversation.js) and the window optimiser (window.js) are wasm
// modules of their own, instantiated on first use (lazy.js), each with its own driver;
// their exports go through the same guard.
import * as core from "./toolctx_core.js";
import { ContextManager as Core } from "./toolctx_core.js";
import { createDriver } from "./driver.js";
import { STEP } from "./protocol.js";
import { internal, onFailInFlight, trapCount } from "./host.js";
import { installPointerLists, listedSlots } from "./pointers.js";

// The one error that wasm-bindgen's glue throws itself (for a method called on an object
// from an instance that trapped since); every error from the core carries its `code`.
const STALE = "Invalid stale object from previous Wasm instance";

/** The error a caller sees: the core's as it is; a trap, or state lost to one, as INTERNAL. */
function convert(err) {
  if (err?.code !== undefined) return err;
  // A panic arrives as INTERNAL already (host.js); a trap of another kind (a stack
  // overflow, say) arrives as the engine's RuntimeError.
  if (err instanceof WebAssembly.RuntimeError) return internal(err, err.message);
  if (err instanceof Error && err.message === STALE) {
    return internal(err, `this manager's state was lost when the module was re-instantiated (${err.message})`);
  }
  return err;
}

/**
 * A wasm module: its glue, `ready()` (instantiates it where it is not yet: lazy.js), the
 * driver of its operations (driver.js) with traps turned into INTERNAL errors (its calls in
 * flight fail when `name` panics: host.js), and `traps`, the count of traps (host.js)
 * when it last made sure of its instance.
 */
export function wasmModule(name, glue, ready = () => {}) {
  const driver = createDriver(glue, convert);
  onFailInFlight(name, driver.fail);
  return { glue, ready, driver, traps: 0 };
}
const coreModule = wasmModule("core", core);

/**
 * After a trap (in any module), the module gets its fresh instance before the next call
 * into it: wasm-bindgen's glue checks that an object is of the current instance before it
 * re-instantiates a trapped one, so an object from before the trap would otherwise reach
 * the fresh instance. `start` re-instantiates a trapped module (and sets the panic hook
 * again, which is all it does otherwise).
 */
function live(module) {
  module.ready();
  const traps = trapCount();
  if (module.traps !== traps) {
    module.traps = traps;
    module.glue.start();
  }
}

// The methods that return the first step of a plan (src/wasm/plans.rs), which the driver
// follows. Like every method that does I/O, they report every failure by rejecting, never
// by throwing.
const PLANS = new Set([
  "purge", "exportRecords", "importRecords", "listSessions", "cleanupStaleSessions", "search", "clearContextDir", "clear",
  "flush", "endSession", "rebuildIndex", "reconcile", "__panicForTestsAsync",
]);

/** `fn` (a wasm export of `module`) with traps caught and plans followed. */
export function guard(name, fn, module = coreModule) {
  const { driver } = module;
  return function guarded(...args) {
    let out;
    try {
      live(module);
      out = fn.apply(this, args);
    } catch (err) {
      const error = err instanceof WebAssembly.RuntimeError ? driver.fail(err) : convert(err);
      if (PLANS.has(name)) return Promise.reject(error);
      throw error;
    }
    // Tracked per manager: close() waits for its operations in flight (driver.js).
    return PLANS.has(name) ? driver.plan(out, this) : out;
  };
}

// The wasm methods (and the pointer lists over them), guarded; the overrides below build
// on the guarded ones.
/**
 * Guards the methods and getters of a class and of its prototype with `guardOne` (`guard`
 * by default): not the `__` internals, except plans and `__panicForTests*`.
 */
export function guardClass(cls, guardOne = guard) {
  for (const target of [cls.prototype, cls]) {
    for (const name of Object.getOwnPropertyNames(target)) {
      const d = Object.getOwnPropertyDescriptor(target, name);
      if (name === "constructor" || name === "prototype" || (name.startsWith("__") && !name.startsWith("__panicForTests") && !PLANS.has(name))) continue;
      if (typeof d.value === "function") Object.defineProperty(target, name, { ...d, value: guardOne(name, d.value) });
      else if (typeof d.get === "function") Object.defineProperty(target, name, { ...d, get: guardOne(name, d.get) });
    }
  }
}

/** `await using`: `Symbol.asyncDispose` closes (where the runtime has the symbol). */
export function disposeWithClose(cls) {
  if (typeof Symbol.asyncDispose === "symbol" && !cls.prototype[Symbol.asyncDispose]) {
    Object.defineProperty(cls.prototype, Symbol.asyncDispose, {
      value() {
        return this.close();
      },
      writable: true,
      configurable: true,
    });
  }
}

installPointerLists(Core.prototype);
guardClass(Core);

// saveContext in steps (src/wasm/manager.rs): the core checks, encodes and names the
// record, and saves one held in memory at once; the driver writes one to persist while
// the core indexes it, and the core then adds its pointer (driver.js, `save`). The I/O
// left (a spill, retention, the session manifest) is a plan the driver follows. With the
// `embed` option, the save resolves in the core to `{filepath, embed}`: the vector of the
// text `embed` is asked of the `embed` option here (a model call: the host's), then
// handed to the core.
for (const name of ["__saveBegin", "__saveIndex", "__saveWritten", "__saveEnd", "__close", "__closeIdle", "__setVector", "__selectRelevant"]) {
  Core.prototype[name] = guard(name, Core.prototype[name]);
}
const queryVector = guard("__queryVector", Core.__queryVector);
const embedOption = guard("__embed", Object.getOwnPropertyDescriptor(Core.prototype, "__embed").get);
Core.prototype.saveContext = function saveContext(toolName, args, result, taskOrOptions, queryId) {
  let step;
  try {
    step = this.__saveBegin(toolName, args, result, taskOrOptions, queryId);
  } catch (err) {
    return Promise.reject(err);
  }
  const saved = coreModule.driver.save(this, step);
  if (step.kind === STEP.DONE && typeof step.value === "string") return saved;
  return coreModule.driver.track(this, saved.then((out) => (typeof out === "object" && out !== null ? embedSaved(this, out.filepath, out.embed) : out)));
};

/**
 * What `take` (the core's check of what `embed` returned) makes of `embed([text])`;
 * undefined when `embed` throws, rejects or returns something `take` refuses (`failed`
 * hears why). A trap (INTERNAL) is thrown on.
 */
async function embedOne(embed, text, take, failed) {
  let out;
  try {
    out = await embed([text]);
  } catch (err) {
    failed(err);
    return undefined;
  }
  try {
    return take(out);
  } catch (err) {
    if (err?.code !== "INVALID_ARGUMENT") throw err;
    failed(err);
    return undefined;
  }
}

/** Gives the record saved at `filepath` the vector `embed` makes of `text`; resolves to the
 * filepath whatever happens (a failing embed leaves the record ranked by BM25 alone). */
async function embedSaved(manager, filepath, text) {
  const embed = embedOption.call(manager);
  if (embed === undefined) return filepath;
  await embedOne(embed, text, (out) => manager.__setVector(filepath, out), (err) =>
    manager.__debug(`embed failed, the record is ranked by BM25 alone: ${err?.message ?? err}`, filepath));
  return filepath;
}
// close: once the manager's operations in flight have settled, a plan (driver.js, `close`).
Core.prototype.close = function close() {
  return coreModule.driver.close(this);
};
// open: the manager, then the plan that makes it ready (a session's manifest, a resume).
const openBegin = guard("__open", Core.__open);
Core.open = function open(options) {
  let out;
  try {
    out = openBegin.call(this, options);
  } catch (err) {
    return Promise.reject(err);
  }
  const { manager, step } = out;
  const traps = trapCount();
  return coreModule.driver.plan(step).then(() => manager, (err) => {
    // Nobody else holds the manager of a failed open: its wasm memory is freed now. Not
    // after a trap, though: the manager was the old instance's, and free() would reach
    // into the fresh one.
    if (trapCount() === traps) manager.free();
    throw err;
  });
};

// loadContexts in steps (src/wasm/manager.rs): the core decides for each path (a record
// held in memory, a path to read, or skipped with its onDebug warning); the driver reads
// and parses, and the core words why a path it read is skipped (driver.js, `load`).
for (const name of ["__loadBegin", "__loadEnd"]) {
  Core.prototype[name] = guard(name, Core.prototype[name]);
}
Core.prototype.loadContexts = function loadContexts(filepaths) {
  let step;
  try {
    step = this.__loadBegin(filepaths, joined(filepaths));
  } catch (err) {
    return Promise.reject(err);
  }
  return coreModule.driver.track(this, coreModule.driver.load(this, filepaths, step));
};

/** `filepaths` NUL-joined (one crossing into the core), when they are strings free of NUL. */
function joined(filepaths) {
  if (!Array.isArray(filepaths)) return undefined;
  for (let i = 0; i < filepaths.length; i++) {
    if (typeof filepaths[i] !== "string" || filepaths[i].includes("\0")) return undefined;
  }
  return filepaths.join("\0");
}

// selectRelevant: the core ranks synchronously (`__selectRelevant`: over this manager's
// pointers, JSON text parsed here, after the call). With the `embed` option the query's
// vector is asked of `embed` first (hybrid ranking). The rerank hook: a host callback (a
// model call, typically) may reorder or cut the heuristic candidates; on error or timeout
// the heuristic order stands and onDebug says why. The timer and AbortSignal belong to
// the host, so this lives here.
function heuristicSelect(query, options) {
  const out = this.__selectRelevant(query, options);
  return typeof out === "string" ? JSON.parse(out) : out;
}

/** The query's vector from the `embed` option (undefined without it, or when it fails:
 * onDebug says why). */
async function embedQuery(manager, query) {
  const embed = embedOption.call(manager);
  if (embed === undefined || typeof query !== "string") return undefined;
  return embedOne(embed, query, queryVector, (err) =>
    manager.__debug(`embed failed for the query, ranking by BM25 alone: ${err?.message ?? err}`));
}

Core.prototype.selectRelevant = function selectRelevant(query, options) {
  return coreModule.driver.track(this, selecting(this, query, options));
};

async function selecting(manager, query, options) {
  const { rerank, rerankTimeoutMs, ...rest } = options ?? {};
  // The pointers cross by slot or in one string (see selectRelevantContexts below).
  if (Array.isArray(rest.pointers)) {
    const { epoch, slots, unknown } = listedSlots(manager, rest.pointers);
    Object.assign(rest, { __epoch: epoch, __slots: slots, __paths: unknown });
  }
  // With the embed option: hybrid ranking (BM25F and the query's vector, fused by rank).
  const vector = await embedQuery(manager, query);
  if (vector) rest.__queryVector = vector;
  const ranked = heuristicSelect.call(manager, query, options == null && !vector ? options : rest);
  await withPassages(manager, query, ranked);
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
    manager.__debug(`rerank failed, keeping the heuristic order: ${err?.message ?? err}`);
    return ranked;
  } finally {
    clearTimeout(timer);
  }
}

/** Results past this many carry no passage (each passage reads its record). */
const PASSAGES = 20;
const passageOf = guard("__passage", Core.__passage);

/** Gives the first PASSAGES results that matched a word their `passage`: the record's
 * best-matching lines (the core's `__passage`), read from the record. The ranking stands
 * whatever happens here: a record that can no longer be read (removed meanwhile:
 * loadContexts skips it, onDebug says why) or whose passage fails gets none, and onDebug
 * says why; only a trap (INTERNAL) is thrown on. */
async function withPassages(manager, query, ranked) {
  if (typeof query !== "string") return;
  const first = ranked.slice(0, PASSAGES).filter((hit) => hit.matched.length > 0);
  await Promise.all(first.map(async (hit) => {
    try {
      const [record] = await manager.loadContexts([hit.filepath]);
      if (record === undefined || !("result" in record)) return;
      const passage = passageOf(query, JSON.stringify(record.result));
      if (passage !== undefined) hit.passage = passage;
    } catch (err) {
      if (err?.code === "INTERNAL") throw err;
      manager.__debug(`no passage for ${hit.filepath}: ${err?.message ?? err}`);
    }
  }));
}

// selectRelevantContexts through one crossing each way: the pointers go in by slot
// where this manager listed them, else by filepath (pointers.js: listedSlots), and the
// core returns the places of the relevant ones, which become the filepaths read here.
const selectListed = Core.prototype.__selectListed;
const NO_POINTERS = new Uint32Array(0);
Core.prototype.selectRelevantContexts = guard("selectRelevantContexts", function selectRelevantContexts(query, pointers, options) {
  if (!Array.isArray(pointers)) return selectListed.call(this, query, pointers, options, NO_POINTERS, 0, "");
  const { epoch, slots, paths, unknown } = listedSlots(this, pointers);
  const places = selectListed.call(this, query, pointers, options, slots, epoch, unknown);
  const out = new Array(places.length);
  for (let i = 0; i < places.length; i++) out[i] = paths[places[i]];
  return out;
});

disposeWithClose(Core);

// The exported class is the core's own (a plain class: subclasses, instanceof and its
// static methods work as for any class); its host defaults come from host.js.
export { Core as ContextManager };
