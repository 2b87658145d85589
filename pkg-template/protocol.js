// The step protocol (docs/protocol.md): the names of everything that crosses between the
// wasm modules and the package. The modules build steps in one place
// (crates/wasm/src/interop/steps.rs) and read what the package asks of the core module in
// another (crates/wasm/src/interop/requests.rs); a wasm test (crates/wasm/src/interop/named.rs)
// imports this file and checks that these tables are exactly the kinds they know.

/** What a step asks of the driver: its `kind`. */
export const STEP = Object.freeze({
  /** `{kind, id?, storage, ops}`: run the ops all at once; answer their outcomes in order. */
  RUN: "run",
  /** `{kind, storage, ops}`: run the ops in order, stopping at the first that fails; answer the outcomes of those run. */
  CHANGE: "change",
  /** `{kind, id?, storage, name, wait}`: take the lock `name` (this process's turn, then the host's; held by another and `wait` false: fail at once); answer one outcome. */
  LOCK: "lock",
  /** `{kind, id?, storage, name}`: release that lock; answer the outcome of the host's `lock`. */
  UNLOCK: "unlock",
  /** `{kind, id}`: wait until the manager's other operations in flight have settled (close()'s); answer no outcome. */
  WAIT: "wait",
  /** `{kind, value}`, `{kind, json}` or `{kind, kept}`: finished with `value` (or `JSON.parse(json)`, or the records the run kept under the numbers in `kept`, in that order). */
  DONE: "done",
  /** `{kind, error}`: failed with `error`. */
  FAILED: "failed",
});

/** A host call in a step's `ops`: `{op, path, bytes?, parts?, exclusive?, text?}`, the StorageHost method of that name, or a record to keep. A `write` has `bytes`, or `parts` whose bytes it writes joined. */
export const OP = Object.freeze({
  READ: "read",
  /** `readRange(path, offset, length)`: bytes of a file (a host without it: the file read and cut). */
  READ_RANGE: "readRange",
  LIST: "list",
  WRITE: "write",
  APPEND: "append",
  REMOVE: "remove",
  REMOVE_DIR: "removeDir",
  /** `read` of a record, parsed and kept for the run: answers `{kept, size}`, the number it is kept under and its bytes (undefined: no file; a string: why it is no record). */
  READ_RECORD: "readRecord",
  /** `text`, a record held in memory at `path`, parsed and kept as `readRecord` keeps one. */
  KEEP_RECORD: "keepRecord",
});

/** A workflow of a manager, begun by its core handle's `begin({kind, ...})`: the first step of its plan. */
export const WORK = Object.freeze({
  /** `{kind, toolName, args, result, taskOrOptions, queryId}`: saveContext's arguments. */
  SAVE: "save",
  /** `{kind, filepaths}`. */
  LOAD: "load",
  /** `{kind, query, options, listed, vector}`: selectRelevant's ranking (JSON text over the manager's pointers), once what it needs of the index segments read by range is read. */
  SELECT: "select",
  FLUSH: "flush",
  CLOSE: "close",
  END_SESSION: "endSession",
  RECONCILE: "reconcile",
  REBUILD_INDEX: "rebuildIndex",
  CLEAR: "clear",
  CLEAR_CONTEXT_DIR: "clearContextDir",
  /** The index segment due after saves: its first step, or undefined when none is due. */
  PERSIST_INDEX: "persistIndex",
});

/** A question the core handle answers at once, `query({kind, ...})`. */
export const QUERY = Object.freeze({
  SIZE: "size",
  SESSION_ID: "sessionId",
  CONTEXT_DIR: "contextDir",
  /** Changes whenever slots are forgotten or moved (pointers.js). */
  EPOCH: "epoch",
  /** The `embed` option, while the manager is open. */
  EMBED: "embed",
  /** Whether a save yields to the event loop before it resolves: records wait for an index segment past a bound (driver.js `save`). */
  INDEX_BACKLOGGED: "indexBacklogged",
  /** `{kind, handle}`. */
  RESOLVE_HANDLE: "resolveHandle",
  /** `{kind, filepath}`: the pointer there as JSON text, or undefined. */
  POINTER_AT: "pointerAt",
  /** `{kind, filter}`: the slots of the pointers listed (a Uint32Array). */
  SLOTS: "slots",
  /** `{kind, slots}`: those pointers as the JSON text of an array. */
  POINTERS: "pointers",
  /** `{kind, query, pointers, options, listed}`: the places in `pointers` of the relevant ones. */
  SELECT_LISTED: "selectListed",
  /** `{kind, embedded}`: the query's vector from what `embed` returned. */
  QUERY_VECTOR: "queryVector",
});

/** A synchronous change to the core handle, `update({kind, ...})`. */
export const UPDATE = Object.freeze({
  CLEAR_POINTERS: "clearPointers",
  /** `{kind, filepath, embedded}`. */
  SET_VECTOR: "setVector",
  /** `{kind, message, path?}`: a message for onDebug. */
  DEBUG: "debug",
  /** A slice of idle-time index work (driver.js `indexInIdleTime`): answers whether records still wait. */
  INDEX_SOME: "indexSome",
});

/** A workflow with no manager of the caller's yet, `ContextManager.start(options, {kind, ...})` of the core module, over the folder and storage `options` name: the first step of its plan. */
export const START = Object.freeze({
  /** `open(options)`: resolves to the core's handle, made ready (a new session's manifest written, a named session resumed). */
  OPEN: "open",
  LIST_SESSIONS: "listSessions",
  CLEANUP_STALE_SESSIONS: "cleanupStaleSessions",
  EXPORT_RECORDS: "exportRecords",
  /** `{kind, jsonl}`. */
  IMPORT_RECORDS: "importRecords",
  /** `{kind, query, options}`. */
  SEARCH: "search",
  PURGE: "purge",
  /** `{kind, message}`: panics in the plan's second step (the tests of trap handling). */
  PANIC_FOR_TESTS: "panicForTests",
});

/** A computation with no manager, answered at once: `ContextManager.compute({kind, ...})` of the core module. */
export const COMPUTE = Object.freeze({
  /** `{kind, query}`: `hashQuery`'s id. */
  HASH_QUERY: "hashQuery",
  /** `{kind, resultJson}`: the result's line view (one string, lines joined by `\n`). */
  LINES: "lines",
  /** `{kind, pattern, text}`: the 0-based numbers of the lines of `text` that grep_context's linear-time matcher finds `pattern` in (a Uint32Array); INVALID_ARGUMENT when it does not compile. */
  MATCHING_LINES: "matchingLines",
  /** `{kind, message}`: panics at once (the tests of trap handling). */
  PANIC_FOR_TESTS: "panicForTests",
});

/** An operation of the conversation store, `perform({kind, ...})` of its module: each its public method's name, its arguments named. */
export const OPERATION = Object.freeze({
  /** `{kind, init}`. */
  CREATE_CONVERSATION: "createConversation",
  LIST_CONVERSATIONS: "listConversations",
  /** `{kind, id}`. */
  GET_CONVERSATION: "getConversation",
  /** `{kind, id}`. */
  DELETE_CONVERSATION: "deleteConversation",
  /** `{kind, id, message}`. */
  APPEND_MESSAGE: "appendMessage",
  /** `{kind, id, message, artifact}`. */
  APPEND_WITH_ARTIFACT: "appendWithArtifact",
  /** `{kind, id, filter}`. */
  GET_MESSAGES: "getMessages",
  /** `{kind, id, artifact}`. */
  STORE_ARTIFACT: "storeArtifact",
  /** `{kind, id, artifactId}`. */
  GET_ARTIFACT: "getArtifact",
  /** `{kind, id}`. */
  LIST_ARTIFACTS: "listArtifacts",
  /** `{kind, id, text}`. */
  RESOLVE_ARTIFACTS: "resolveArtifacts",
  /** `{kind, id, options}`. */
  STATS: "stats",
  /** `{kind, id, options}`. */
  PRUNE: "prune",
  /** `{kind, id, format}`. */
  EXPORT: "export",
  /** `{kind, text, options}`. */
  IMPORT: "import",
  SYNC_STATUS: "syncStatus",
});

/**
 * What toolctx/tools (tools.js) reads through a manager beyond its API, under this key:
 * `manager[READER]` is `{lines(resultJson), matchingLines(pattern, text), pointerAt?(filepath)}`
 * (context-manager.js). A registered symbol, so a copy of the package bundled elsewhere (the
 * Node entry inlines the core) names the same key.
 */
export const READER = Symbol.for("toolctx.reader");

/** @typedef {{ ok: boolean, value?: any, error?: any }} Outcome  `value` when ok, `error` when not */

/** What the driver answers for one op, lock or unlock. */
export const ok = (value) => /** @type {Outcome} */ ({ ok: true, value });
export const failure = (error) => /** @type {Outcome} */ ({ ok: false, error });
