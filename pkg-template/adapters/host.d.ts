// The storage host interface (SPEC §4): what every adapter of toolctx/* implements and
// what a user's own storage implements. A leaf: it imports nothing, so an adapter's
// types (adapters/*.d.ts) import it without pulling in the package's whole API, and
// index.d.ts re-exports it for users (`import type { StorageHost } from "toolctx"`).
// It lives here, beside the adapters, and not as ../host.d.ts: TypeScript would take that
// for the declaration of ../host.js (the wasm modules' runtime defaults), a module of
// functions that this file does not declare.

/** Bytes or text, as a storage host reads and writes them. */
export type StorageData = Uint8Array | string;

/**
 * Where records live. Every method may return a value or a Promise. Paths are
 * `/`-joined strings; an adapter maps them onto its medium.
 */
export interface StorageHost {
  /**
   * The file's contents, or `undefined` when it does not exist. `root` is the store
   * folder the path lies in: adapters over real file systems refuse (with `code:
   * "OUTSIDE_STORE"`) a read that symbolic links would take outside it.
   */
  read(path: string, options?: { root?: string }): Promise<StorageData | undefined> | StorageData | undefined;
  /**
   * The bytes [offset, offset + length) of the file, always as bytes: fewer when the
   * range runs past its end, none (an empty `Uint8Array`) from its end on, `undefined`
   * when it does not exist. `offset` and `length` are whole numbers ≥ 0 whose sum is a
   * safe integer; anything else (-1, 1.5, "3") rejects with `code: "INVALID_ARGUMENT"`.
   * `root` as for `read`. Optional: where a host has none, whole files are read instead.
   * The adapters have it where their medium reads a part of a file without the rest
   * (IndexedDB's reads the whole value and cuts it).
   */
  readRange?(path: string, offset: number, length: number, options?: { root?: string }): Promise<Uint8Array | undefined> | Uint8Array | undefined;
  /**
   * Replaces the whole file, creating parents; atomic where possible. With
   * `exclusive`, fails with an error whose `code` is `"EEXIST"` when the path exists.
   */
  write(path: string, data: StorageData, options?: { exclusive?: boolean }): Promise<void> | void;
  /** Removes a file; removing a missing file succeeds. */
  remove(path: string): Promise<void> | void;
  /** Names of the direct children of `dir` (folders end in `/`); `[]` when missing. */
  list(dir: string): Promise<string[]> | string[];
  /** Appends to a file, creating it. */
  append?(path: string, data: StorageData): Promise<void> | void;
  /**
   * The largest file the medium holds, in bytes, where it has a limit (a row of D1 or of a
   * Durable Object's SQLite: 2 MB; a Workers KV value: 25 MiB); a write over it fails
   * (`code: "TOO_LARGE"`). The index writes its segments within it: a segment write is cut
   * in several, and segments whose merge would be larger stay unmerged. A whole number ≥ 1
   * (anything else: `INVALID_ARGUMENT` when a manager is made over the storage).
   */
  readonly maxValueBytes?: number;
  /**
   * Runs `fn` holding the named lock (cross-tab / cross-process). With `{wait: false}`
   * (background index work, which never makes anyone wait) a lock held by another fails
   * at once (`code: "TIMEOUT"`) instead of being waited for; a lock that cannot tell may
   * wait. `fn` may receive `{signal, fencingToken}` where the lock has them (a lease
   * lock: `signal` aborts when the lease was lost).
   */
  lock?<T>(name: string, fn: (held?: { signal?: AbortSignal; fencingToken?: number }) => Promise<T>, options?: { wait?: boolean }): Promise<T>;
  /** Removes an empty folder; idempotent. */
  removeDir?(path: string): Promise<void> | void;
}
