// toolctx/memory: an in-process StorageHost for tests and ephemeral agents.
// Data is copied in (by the key-value base) and out, so neither side can mutate the
// other's bytes. Every call answers synchronously.

import { concat } from "./base/bytes.js";
import { keyValueStorage } from "./base/key-value.js";
import { queueLock } from "./base/queue-lock.js";
import { sliceRange } from "./base/range.js";

/** @returns {import("./memory.d.ts").MemoryStorage} */
export function memoryStorage() {
  const files = new Map();
  return {
    ...keyValueStorage({
      description: "memory storage: records live only as long as this process",
      get: (path) => files.get(path)?.slice(),
      getRange(path, offset, length) {
        const bytes = files.get(path);
        return bytes === undefined ? undefined : sliceRange(bytes, offset, length);
      },
      put: (path, bytes) => files.set(path, bytes),
      create: (path, bytes) => !files.has(path) && Boolean(files.set(path, bytes)),
      append: (path, bytes) => files.set(path, concat([files.get(path) ?? new Uint8Array(0), bytes])),
      delete: (path) => files.delete(path),
      *keys(prefix) {
        for (const key of files.keys()) if (key.startsWith(prefix)) yield key.slice(prefix.length);
      },
      /** Mutual exclusion within this process, by name. */
      lock: queueLock(),
    }),
    paths() {
      return [...files.keys()].sort();
    },
  };
}
