// The public ContextManager: a class of the package over the core module's handle (SPEC §0:
// the generated class is never patched, never handed out). The handle
// (crates/wasm/src/manager/) has a few methods, each taking a plain object whose `kind`
// protocol.js names: `begin(work)` begins a workflow and returns the first step of its
// plan, which the driver (driver.js) runs, doing the I/O and settling the caller's Promise;
// `query(q)` answers at once; `update(u)` changes something at once. What needs no manager
// goes through the class's statics: `start(options, work)` begins `open` and the store-wide
// workflows, `compute(c)` answers at once (hashQuery, a result's line view, grep_context's
// matching lines). A method that does I/O reports every failure by rejecting, never by
// throwing.
//
// Traps (SPEC §9, module.js): a panic is INTERNAL for the call it happened in and for the
// operations in flight; the module is instantiated again for the next call. A manager made
// before the trap lost its in-memory state with the old instance: its calls fail as
// INTERNAL, known by the module's generation (`#live`), before the handle is touched.
//
// What toolctx/tools (tools.js) reads of a manager beyond the API (a result's line view,
// grep_context's matcher, the one pointer at a filepath) is under the symbol READER
// (protocol.js), not a member the API names.
import * as glue from "./toolctx_core.js";
import { COMPUTE, QUERY, READER, START, STEP, UPDATE, WORK } from "./protocol.js";
import { PointerMirror } from "./pointers.js";
import { WasmModule, disposeWithClose } from "./module.js";
import { toolctxError } from "./errors.js";

const Core = glue.ContextManager;
const core = new WasmModule("core", glue, true);
const driver = core.driver;

/** The constructor's first argument when `open` wraps a handle it made. */
const ADOPT = Symbol("ContextManager.adopt");

/** The first step of a plan from `start()` (a call into the core), run by the driver for `owner`. */
function plan(start, owner) {
  let step;
  try {
    step = start();
  } catch (err) {
    return Promise.reject(core.error(err));
  }
  return driver.plan(step, owner);
}

/** `fn()` (a synchronous call into the core) with a trap as INTERNAL. */
function call(fn) {
  try {
    return fn();
  } catch (err) {
    throw core.error(err);
  }
}

/** The Promise of the workflow `work` (protocol.js START) over the folder and storage `options` name. */
function start(options, work) {
  return plan(() => Core.start(options, work));
}

/** The core's answer to `request` (protocol.js COMPUTE), which needs no manager. */
function compute(request) {
  return call(() => Core.compute(request));
}

export class ContextManager {
  /** The core's manager (the generated class's instance): never handed out. */
  #handle;
  /** The core module's generation when the handle was made (module.js). */
  #generation;
  /** The pointers listed, by slot (pointers.js). */
  #pointers = new PointerMirror();

  /** A manager over `options.storage` (or `fileSystem`, or the runtime's default). */
  constructor(options, handle) {
    if (options === ADOPT) {
      this.#handle = handle;
    } else {
      try {
        this.#handle = new Core(options);
      } catch (err) {
        throw core.error(err);
      }
    }
    this.#generation = core.generation;
  }

  /** The handle, if it is of the core's current instance; INTERNAL if a trap lost it. */
  #live() {
    if (this.#generation !== core.generation) throw core.stale("manager");
    return this.#handle;
  }

  /** The first step of the workflow `work` (protocol.js WORK), begun by the handle. */
  #begin(work) {
    return call(() => this.#live().begin(work));
  }

  /** The Promise of the workflow `work`, run by the driver as an operation of this manager. */
  #run(work) {
    return plan(() => this.#live().begin(work), this);
  }

  /** The handle's answer to `query` (protocol.js QUERY). */
  #query(query) {
    return call(() => this.#live().query(query));
  }

  /** The handle's `query`, for the pointer mirror (pointers.js). */
  #ask = (query) => this.#query(query);

  /** The change `update` (protocol.js UPDATE) made by the handle; what it answers. */
  #update(update) {
    return call(() => this.#live().update(update));
  }

  /** Tells `onDebug` (with the path it is about). */
  #debug(message, path) {
    this.#update({ kind: UPDATE.DEBUG, message, path });
  }

  /** A manager made ready first: a session's manifest read, a resume run. The plan resolves
   * to the core's handle (a failed open's handle is dropped inside the core, never made). */
  static open(options) {
    return start(options, { kind: START.OPEN }).then((handle) => new ContextManager(ADOPT, handle));
  }

  static listSessions(options) {
    return start(options, { kind: START.LIST_SESSIONS });
  }

  static search(options, query, searchOptions) {
    return start(options, { kind: START.SEARCH, query, options: searchOptions });
  }

  static cleanupStaleSessions(options) {
    return start(options, { kind: START.CLEANUP_STALE_SESSIONS });
  }

  static purge(options) {
    return start(options, { kind: START.PURGE });
  }

  static exportRecords(options) {
    return start(options, { kind: START.EXPORT_RECORDS });
  }

  static importRecords(options, jsonl) {
    return start(options, { kind: START.IMPORT_RECORDS, jsonl });
  }

  static hashQuery(query) {
    return compute({ kind: COMPUTE.HASH_QUERY, query });
  }

  /** Panics inside the core on purpose (tests of the trap handling). Not part of the API. */
  static __panicForTests(message) {
    compute({ kind: COMPUTE.PANIC_FOR_TESTS, message });
  }

  /** Panics inside a plan's step on purpose (tests of the trap handling). Not part of the API. */
  static __panicForTestsAsync(message) {
    return start(undefined, { kind: START.PANIC_FOR_TESTS, message });
  }

  endSession() {
    return this.#run({ kind: WORK.END_SESSION });
  }

  rebuildIndex() {
    return this.#run({ kind: WORK.REBUILD_INDEX });
  }

  reconcile() {
    return this.#run({ kind: WORK.RECONCILE });
  }

  flush() {
    return this.#run({ kind: WORK.FLUSH });
  }

  clearContextDir() {
    return this.#run({ kind: WORK.CLEAR_CONTEXT_DIR });
  }

  clear() {
    return this.#run({ kind: WORK.CLEAR });
  }

  clearPointers() {
    this.#update({ kind: UPDATE.CLEAR_POINTERS });
  }

  /** Once the manager's operations in flight have settled, the plan that writes it out (driver.js, `close`). */
  close() {
    return driver.close(this, () => this.#begin({ kind: WORK.CLOSE }), (message) => this.#debug(message));
  }

  get size() {
    return this.#query({ kind: QUERY.SIZE });
  }

  get sessionId() {
    return this.#query({ kind: QUERY.SESSION_ID });
  }

  getContextDir() {
    return this.#query({ kind: QUERY.CONTEXT_DIR });
  }

  resolveHandle(handle) {
    return this.#query({ kind: QUERY.RESOLVE_HANDLE, handle });
  }

  /** The handle (`ctx:…`) of the record at `filepath`, exactly as `saveContext` resolved to it
   * and pointers hold it; undefined when this manager has no pointer there. One pointer is
   * read (the `pointerAt` query), not the list. */
  handleOf(filepath) {
    if (typeof filepath !== "string") {
      throw toolctxError("INVALID_ARGUMENT", `filepath must be a string (what saveContext resolved to), not ${typeName(filepath)}`);
    }
    const json = this.#query({ kind: QUERY.POINTER_AT, filepath });
    return json === undefined ? undefined : JSON.parse(json).handle;
  }

  /** Frees the manager's wasm memory now (it is freed when collected otherwise). */
  free() {
    // A handle from before a trap is the old instance's: nothing of it is left to free.
    if (this.#generation === core.generation) this.#handle.free();
  }

  // saveContext (crates/wasm/src/manager/save.rs): the core checks, encodes and names the record,
  // and saves one held in memory at once; else its plan writes the record, adds its
  // pointer and does the I/O left (a spill, retention, the session manifest), run by the
  // driver as any other (driver.js, `save`). With the
  // `embed` option, the save resolves in the core to `{filepath, embed}`: the vector of the
  // text `embed` is asked of the `embed` option here (a model call: the host's), then
  // handed to the core.
  saveContext(toolName, args, result, taskOrOptions, queryId) {
    let step;
    try {
      step = this.#begin({ kind: WORK.SAVE, toolName, args, result, taskOrOptions, queryId });
    } catch (err) {
      return Promise.reject(err);
    }
    const saved = driver.save(this, step, {
      persistIndex: () => this.#begin({ kind: WORK.PERSIST_INDEX }),
      backlogged: () => this.#query({ kind: QUERY.INDEX_BACKLOGGED }),
      indexSome: () => this.#update({ kind: UPDATE.INDEX_SOME }),
    });
    if (step.kind === STEP.DONE && typeof step.value === "string") return saved;
    return driver.track(this, saved.then((out) => (typeof out === "object" && out !== null ? this.#embedSaved(out.filepath, out.embed) : out)));
  }

  /** Gives the record saved at `filepath` the vector `embed` makes of `text`; resolves to the
   * filepath whatever happens (a failing embed leaves the record ranked by BM25 alone). */
  async #embedSaved(filepath, text) {
    const embed = this.#query({ kind: QUERY.EMBED });
    if (embed === undefined) return filepath;
    await embedOne(embed, text, (embedded) => this.#update({ kind: UPDATE.SET_VECTOR, filepath, embedded }), (err) =>
      this.#debug(`embed failed, the record is ranked by BM25 alone: ${err?.message ?? err}`, filepath));
    return filepath;
  }

  // loadContexts is a plan (crates/core/src/store/load.rs): the core decides for each path (a record
  // held in memory, one to read, or skipped with its onDebug warning); the driver reads,
  // parses and keeps the records, and the core words why a path is skipped.
  loadContexts(filepaths) {
    return this.#run({ kind: WORK.LOAD, filepaths });
  }

  // Pointer lists (pointers.js): the slots from the core, the pointers from the mirror.
  getAllPointers() {
    return this.#listPointers(undefined);
  }

  // The seed's filters compare with ===: an id of another type matches nothing.
  getPointersForQuery(queryId) {
    return typeof queryId === "string" ? this.#listPointers({ queryId }) : [];
  }

  getPointersForTask(taskId) {
    return typeof taskId === "number" ? this.#listPointers({ taskId }) : [];
  }

  /** The pointers `filter` (`{queryId}`, `{taskId}`, or undefined for all) lets through. */
  #listPointers(filter) {
    return this.#pointers.list(this.#ask, this.#query({ kind: QUERY.SLOTS, filter }));
  }

  // selectRelevantContexts: the pointers go in by slot where this manager listed them,
  // else the core reads them (pointers.js: `given`), and the core returns the places of
  // the relevant ones, which become the filepaths read here.
  selectRelevantContexts(query, pointers, options) {
    const select = (listed) => this.#query({ kind: QUERY.SELECT_LISTED, query, pointers, options, listed });
    if (!Array.isArray(pointers)) return select(undefined);
    const { listed, paths } = this.#pointers.given(this.#ask, pointers);
    const places = select(listed);
    const out = new Array(places.length);
    for (let i = 0; i < places.length; i++) out[i] = paths[places[i]];
    return out;
  }

  // selectRelevant: the core ranks in the `select` work (over this manager's pointers, JSON
  // text the driver parses): where the storage reads ranges, it first reads what the
  // ranking needs of the index segments (crates/core/src/store/lazy.rs), then ranks in the
  // step those reads end in, so no other query evicts them between. With the `embed` option the query's
  // vector is asked of `embed` first (hybrid ranking). The rerank hook: a host callback (a
  // model call, typically) may reorder or cut the heuristic candidates; on error or timeout
  // the heuristic order stands and onDebug says why. The timer and AbortSignal belong to
  // the host, so this lives here.
  selectRelevant(query, options) {
    return driver.track(this, this.#selecting(query, options));
  }

  async #selecting(query, options) {
    const { rerank, rerankTimeoutMs } = options ?? {};
    // The pointers cross by slot where this manager listed them (see selectRelevantContexts).
    const pointers = options?.pointers;
    const listed = Array.isArray(pointers) ? this.#pointers.given(this.#ask, pointers).listed : undefined;
    // With the embed option: hybrid ranking (BM25F and the query's vector, fused by rank).
    const vector = await this.#embedQuery(query);
    const ranked = await this.#run({ kind: WORK.SELECT, query, options, listed, vector });
    if (typeof rerank !== "function" || ranked.length === 0) return ranked;
    const controller = new AbortController();
    let timer;
    const timeout = new Promise((_, reject) => {
      if (Number.isFinite(rerankTimeoutMs)) {
        timer = setTimeout(() => {
          controller.abort(toolctxError("TIMEOUT", `rerank timed out after ${rerankTimeoutMs} ms`));
          reject(controller.signal.reason);
        }, rerankTimeoutMs);
      }
    });
    try {
      const order = await Promise.race([rerank(query, ranked.map((c) => ({ ...c })), controller.signal), timeout]);
      if (!Array.isArray(order)) throw toolctxError("INVALID_ARGUMENT", "rerank must resolve to an array of filepaths");
      const byPath = new Map(ranked.map((c) => [c.filepath, c]));
      const picked = [];
      for (const path of order) {
        const candidate = byPath.get(path);
        if (candidate) {
          picked.push(candidate);
          byPath.delete(path);
        }
      }
      return picked;
    } catch (err) {
      this.#debug(`rerank failed, keeping the heuristic order: ${err?.message ?? err}`);
      return ranked;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The query's vector from the `embed` option (undefined without it, or when it fails:
   * onDebug says why). */
  async #embedQuery(query) {
    const embed = this.#query({ kind: QUERY.EMBED });
    if (embed === undefined || typeof query !== "string") return undefined;
    return embedOne(embed, query, (embedded) => this.#query({ kind: QUERY.QUERY_VECTOR, embedded }), (err) =>
      this.#debug(`embed failed for the query, ranking by BM25 alone: ${err?.message ?? err}`));
  }

  /**
   * What toolctx/tools reads through a manager (protocol.js READER): a result's line view
   * (its JSON text in, one string out; crates/core/src/view.rs), the lines of a text that
   * grep_context's linear-time matcher finds a pattern in (crates/core/src/grep.rs: the core
   * keeps the patterns it compiled last, so a pattern asked again chunk after chunk is
   * compiled once), and the one pointer at a filepath (undefined when none), without
   * listing every pointer.
   */
  get [READER]() {
    return {
      lines: (resultJson) => compute({ kind: COMPUTE.LINES, resultJson }),
      matchingLines: (pattern, text) => compute({ kind: COMPUTE.MATCHING_LINES, pattern, text }),
      pointerAt: (filepath) => {
        const json = this.#query({ kind: QUERY.POINTER_AT, filepath });
        return json === undefined ? undefined : JSON.parse(json);
      },
    };
  }
}

disposeWithClose(ContextManager);


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

/** What `value` is, for an error message: `null`, `an array`, `a number`... */
function typeName(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return type === "undefined" ? "undefined" : `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

