// The key-value base: the StorageHost of a store that holds values under flat keys
// (toolctx/memory, /indexeddb, /cloudflare's R2, KV and Durable Object storage, /redis,
// /deno-kv, /unstorage, /s3). A backend gives a few primitives over its medium; this
// file turns them into the host interface (SPEC §4), so what every such store must do
// the same way is written once:
//
// - `write` hands the backend a copy of the bytes (the caller may reuse its buffer while
//   a request is in flight), and an exclusive write that finds the path taken fails with
//   EEXIST, whether the backend creates atomically (`create`) or cannot (check, then put);
// - `list` reduces the keys below a folder to its direct children, sub-folders ending
//   in "/" (listing.js), unless the backend keeps its folders itself (`children`);
// - folders are implied by keys, so `removeDir` has nothing to remove unless the backend
//   keeps folders;
// - `readRange` is there only where the backend reads a part of a value (`getRange`): its
//   arguments are checked here (range.js), and a range of length 0 asks the backend for
//   one byte, so a missing file is still undefined without a whole read;
// - a backend that answers synchronously (memory, a Durable Object's SQLite) gets a host
//   that answers synchronously too: the driver runs such calls without waiting a turn.
//
// The host is a plain object of own methods, not an instance of a class: users spread an
// adapter to change one method (`{...redisStorage(), write}`), which drops whatever a
// prototype holds.

import { toolctxError } from "../../errors.js";
import { copyOf } from "./bytes.js";
import { children, folderPrefix } from "./listing.js";
import { badRange } from "./range.js";

/** `fn(value)`: at once for a plain value, once it settles for a Promise. */
function after(value, fn) {
  return typeof value?.then === "function" ? value.then(fn) : fn(value);
}

/** Nothing, once `value` has settled: a primitive's own result is not the host's. */
const done = (value) => after(value, () => undefined);

/** Empty bytes where there is a file, undefined where there is none (`found`: what a read of it gave). */
const emptyIfFound = (found) => (found === undefined ? undefined : new Uint8Array(0));

/** The error of an exclusive write that found `path` taken. */
export function taken(path) {
  return toolctxError("EEXIST", `EEXIST: file already exists: ${path}`);
}

/**
 * A StorageHost over `backend`'s primitives. Each primitive may return a value or a
 * Promise; paths are the host's paths (the backend maps them onto its keys and prefix).
 *
 * @param {{
 *   description: string,
 *   get(path: string): Uint8Array | undefined | Promise<Uint8Array | undefined>,  // undefined when missing
 *   getRange?(path: string, offset: number, length: number): Uint8Array | undefined | Promise<Uint8Array | undefined>, // only where the medium reads part of a value: bytes [offset, offset + length) (fewer at the end, none past it), undefined when missing; length ≥ 1, checked
 *   put(path: string, bytes: Uint8Array): unknown,                               // replaces the value whole
 *   create?(path: string, bytes: Uint8Array): boolean | Promise<boolean>,        // put only where there is no value, atomically; false when taken
 *   has?(path: string): boolean | Promise<boolean>,                              // without `create`: the check before a put (default: a get)
 *   delete(path: string): unknown,                                               // idempotent
 *   keys?(prefix: string): Iterable<string> | Promise<Iterable<string>>,         // the keys below folder `prefix` ("a/b/", "" for the root), relative to it; a backend that lists by delimiter may give a sub-folder as "name/"
 *   children?(dir: string): string[] | Promise<string[]>,                        // instead of `keys`: the direct children, where the backend keeps folders
 *   append?(path: string, bytes: Uint8Array): unknown,                           // only where the backend appends in one step; the driver rewrites otherwise
 *   removeDir?(path: string): unknown,                                           // only where the backend keeps folders
 *   lock?<T>(name: string, fn: () => Promise<T>): Promise<T>,
 *   maxValueBytes?: number,                                                      // the largest value the medium holds (a row's limit): the host says so, and the index writes its segments within it
 * }} backend
 * @returns {import("../host.js").StorageHost & { description: string }}
 */
export function keyValueStorage(backend) {
  const { description, get, getRange, put, create, has, keys, append, removeDir, lock, maxValueBytes } = backend;
  const remove = backend.delete;
  for (const [name, fn] of Object.entries({ get, put, delete: remove, "keys or children": keys ?? backend.children })) {
    if (typeof fn !== "function") throw toolctxError("INVALID_ARGUMENT", `keyValueStorage: the backend has no ${name}()`);
  }
  const listed = backend.children ?? ((dir) => after(keys(folderPrefix(dir)), (found) => children("", found)));
  const exists = has ?? ((path) => after(get(path), (value) => value !== undefined));
  /**
   * Without an atomic create, a check then a put: it refuses a path already taken, but two
   * writers racing on one path may both succeed (record names carry a random part, so
   * writers never pick the same one). The backend's docs say so.
   */
  const createOrRefuse = create ?? ((path, bytes) => after(exists(path), (found) => (found ? false : after(put(path, bytes), () => true))));

  const host = {
    description,
    read: (path) => get(path),
    write(path, data, options = {}) {
      const bytes = copyOf(data);
      if (!options.exclusive) return done(put(path, bytes));
      return after(createOrRefuse(path, bytes), (created) => {
        if (!created) throw taken(path);
      });
    },
    remove: (path) => done(remove(path)),
    list: (dir) => listed(dir),
    removeDir: removeDir === undefined ? () => {} : (path) => done(removeDir(path)),
  };
  if (getRange) {
    host.readRange = (path, offset, length) => {
      const bad = badRange(offset, length);
      if (bad !== undefined) return Promise.reject(bad);
      if (length === 0) return after(getRange(path, 0, 1), emptyIfFound);
      return getRange(path, offset, length);
    };
  }
  if (append) host.append = (path, data) => done(append(path, copyOf(data)));
  if (lock) host.lock = lock;
  if (maxValueBytes !== undefined) host.maxValueBytes = maxValueBytes;
  return host;
}
