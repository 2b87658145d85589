// The step protocol (docs/protocol.md): the names of everything that crosses between the
// wasm modules and the driver. The core builds steps in one place (src/wasm/interop/steps.rs);
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
  /** `{kind}`: close() waits for the manager's other operations in flight, then calls `__closeIdle`. */
  WAIT: "wait",
  /** `{kind, value}` or `{kind, json}`: finished with `value` (or `JSON.parse(json)`). */
  DONE: "done",
  /** `{kind, error}`: failed with `error`. */
  FAILED: "failed",
  /** `{kind, id, storage, path, bytes | parts}`: write a save's record exclusively (`{kind, id, path}`: the same record again at `path`). */
  WRITE: "write",
  /** `{kind, id, path}`: a save's record write failed; remove `path`, then `__saveEnd(id)`. */
  REMOVE: "remove",
  /** `{kind, id, storage, paths, readAt, held, heldAt}`: a load's records, read (`paths`) or held in memory (`held`, their texts), each at its place in the filepaths asked; read and parsed. */
  READ: "read",
});

/** A host call in a step's `ops`: `{op, path, bytes?, exclusive?}`, the StorageHost method of that name. */
export const OP = Object.freeze({
  READ: "read",
  LIST: "list",
  WRITE: "write",
  APPEND: "append",
  REMOVE: "remove",
  REMOVE_DIR: "removeDir",
});

/** Why a load skips a path it read (`__loadEnd`'s `{asked, path, why, value}`). */
export const SKIP = Object.freeze({
  /** The storage has no such file. */
  MISSING: "missing",
  /** The read failed: `value` is the host's error. */
  UNREADABLE: "unreadable",
  /** What was read is not a whole record: `value` says why. */
  NOT_A_RECORD: "notARecord",
});

/** @typedef {{ ok: boolean, value?: any, error?: any }} Outcome  `value` when ok, `error` when not */

/** What the driver answers for one op, lock or unlock. */
export const ok = (value) => /** @type {Outcome} */ ({ ok: true, value });
export const failure = (error) => /** @type {Outcome} */ ({ ok: false, error });
