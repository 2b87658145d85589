// The step protocol (docs/protocol.md): the names of everything that crosses between the
// wasm modules and the driver. The core builds steps in one place (crates/wasm/src/interop/steps.rs);
// tests/js/protocol.test.mjs checks that these tables are exactly the kinds it emits.

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
  LIST: "list",
  WRITE: "write",
  APPEND: "append",
  REMOVE: "remove",
  REMOVE_DIR: "removeDir",
  /** `read` of a record, parsed and kept for the run: answers the number it is kept under (undefined: no file; a string: why it is no record). */
  READ_RECORD: "readRecord",
  /** `text`, a record held in memory at `path`, parsed and kept as `readRecord` keeps one. */
  KEEP_RECORD: "keepRecord",
});

/** @typedef {{ ok: boolean, value?: any, error?: any }} Outcome  `value` when ok, `error` when not */

/** What the driver answers for one op, lock or unlock. */
export const ok = (value) => /** @type {Outcome} */ ({ ok: true, value });
export const failure = (error) => /** @type {Outcome} */ ({ ok: false, error });
