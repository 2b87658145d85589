// toolctx/memory: an in-process StorageHost for tests and ephemeral agents.
// Data is copied in and out, so neither side can mutate the other's bytes.

import { copyOf as toBytes } from "./bytes.js";
import { alreadyExists as exists } from "./errors.js";
import { children, folderPrefix } from "./listing.js";

/** @returns {import("./memory.d.ts").MemoryStorage} */
export function memoryStorage() {
  const files = new Map();
  const locks = new Map();
  return {
    description: "memory storage: records live only as long as this process",
    read(path) {
      const data = files.get(path);
      return data === undefined ? undefined : data.slice();
    },
    write(path, data, options = {}) {
      if (options.exclusive && files.has(path)) throw exists(`EEXIST: file already exists: ${path}`);
      files.set(path, toBytes(data));
    },
    append(path, data) {
      const tail = toBytes(data);
      const head = files.get(path) ?? new Uint8Array(0);
      const joined = new Uint8Array(head.length + tail.length);
      joined.set(head);
      joined.set(tail, head.length);
      files.set(path, joined);
    },
    remove(path) {
      files.delete(path);
    },
    list(dir) {
      return children(folderPrefix(dir), files.keys());
    },
    removeDir() {},
    /** Mutual exclusion within this process, by name. */
    lock(name, fn) {
      const previous = locks.get(name) ?? Promise.resolve();
      const run = previous.then(() => fn());
      const tail = run.catch(() => {});
      locks.set(name, tail);
      tail.then(() => {
        if (locks.get(name) === tail) locks.delete(name);
      });
      return run;
    },
    paths() {
      return [...files.keys()].sort();
    },
  };
}
