// toolctx/memory: an in-process StorageHost for tests and ephemeral agents.
// Data is copied in and out, so neither side can mutate the other's bytes.

import { toolctxError } from "../errors.js";
import { concat, copyOf as toBytes } from "./base/bytes.js";
import { queueLock } from "./base/queue-lock.js";
import { children, folderPrefix } from "./base/listing.js";

/** @returns {import("./memory.d.ts").MemoryStorage} */
export function memoryStorage() {
  const files = new Map();
  return {
    description: "memory storage: records live only as long as this process",
    read(path) {
      const data = files.get(path);
      return data === undefined ? undefined : data.slice();
    },
    write(path, data, options = {}) {
      if (options.exclusive && files.has(path)) throw toolctxError("EEXIST", `EEXIST: file already exists: ${path}`);
      files.set(path, toBytes(data));
    },
    append(path, data) {
      files.set(path, concat([files.get(path) ?? new Uint8Array(0), toBytes(data)]));
    },
    remove(path) {
      files.delete(path);
    },
    list(dir) {
      return children(folderPrefix(dir), files.keys());
    },
    removeDir() {},
    /** Mutual exclusion within this process, by name. */
    lock: queueLock(),
    paths() {
      return [...files.keys()].sort();
    },
  };
}
