// toolctx's errors (SPEC §9): one constructor and one table of codes. Every error the
// package makes is `toolctxError(code, message, {cause, ...fields})`, an `Error` named
// "ToolctxError" whose `code` is a key of CODES; the core's errors (crates/core/src/error.rs, made
// JavaScript errors in crates/wasm/src/interop/errors.rs) have the same shape and codes. docs/errors.md
// is this table for readers; tests/js/errors.test.mjs keeps the two, and every code
// passed to the constructor, in step.

export { toolctxError } from "./host.js";

/** Every code, with what it means. */
export const CODES = Object.freeze({
  INVALID_ARGUMENT: "an argument or option has the wrong type or shape",
  READ_ONLY: "a write asked of a manager opened with readOnly",
  CLOSED: "the manager was closed: it does no more I/O",
  NOT_SERIALIZABLE: "a value cannot be serialised as JSON (BigInt, cycle, lone surrogate)",
  STORAGE: "the storage host or its backend failed; its own error is the cause",
  QUOTA_EXCEEDED: "the storage host is out of space",
  OUTSIDE_STORE: "a path would leave the store (.., a symbolic link out of it)",
  CORRUPT_RECORD: "a record, manifest or backend entry does not parse, where it cannot be skipped",
  NOT_FOUND: "a named session, conversation, record or bucket does not exist",
  TOO_LARGE: "a record, value or key is over a limit; nothing was written",
  INTERNAL: "a bug in toolctx; after a trap the module was instantiated again",
  TIMEOUT: "no answer within the deadline (timeoutMs), or a lock still held after lockWaitMs",
  ABORTED: "the caller's AbortSignal aborted the operation",
  UNAUTHORIZED: "the backend refused the credentials or the permission",
  UNSUPPORTED: "the storage cannot do this (a lock where it has none)",
  LOCK_LOST: "a lock's lease ran out or was taken over while its holder ran",
  EEXIST: "an exclusive write found the path taken",
});

/**
 * Codes from before the table, kept because users and the conformance suite match them:
 * each with the table code it means. The file-system adapters' lock (node, deno, bun)
 * still says ELOCKCOMPROMISED where the others say LOCK_LOST.
 */
export const LEGACY_CODES = Object.freeze({
  ELOCKCOMPROMISED: "LOCK_LOST",
});
