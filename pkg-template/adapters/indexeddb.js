// toolctx/indexeddb: a StorageHost over IndexedDB.
//
// One object store of files keyed by path, over the key-value base. Every write is one
// transaction, so a reader sees the old bytes or the new ones, never half; an exclusive
// write is an `add`, which fails inside the same transaction when the key exists. Folders
// are implied by paths; listing walks a key range. IndexedDB stores whole values, so a
// range (`readRange`) is a read of the whole value, cut: it costs what a read costs.

import { toolctxError } from "../errors.js";
import { concat } from "./base/bytes.js";
import { keyValueStorage } from "./base/key-value.js";
import { sliceRange } from "./base/range.js";
import { webLock } from "./base/web-lock.js";

const STORE = "files";

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error ?? new DOMException("transaction aborted", "AbortError"));
    tx.onerror = () => reject(tx.error);
  });
}

/**
 * @param {import("./indexeddb.d.ts").IndexedDbStorageOptions} [options]
 * @returns {import("./host.js").StorageHost & { close(): Promise<void> }}
 */
export function indexedDbStorage(options = {}) {
  const name = options.database ?? "toolctx";
  const durability = options.durability === "strict" ? "strict" : "default";
  let opened;

  function db() {
    opened ??= new Promise((resolve, reject) => {
      const req = indexedDB.open(name, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
      req.onblocked = () => reject(toolctxError("STORAGE", `IndexedDB ${name} is blocked by another connection`));
    });
    return opened;
  }

  async function tx(mode) {
    return (await db()).transaction(STORE, mode, { durability });
  }

  /** Puts `bytes` at `path` (with `add`: only where there is none) in one transaction; false when `add` found it taken. */
  async function store(path, bytes, { add }) {
    const t = await tx("readwrite");
    const files = t.objectStore(STORE);
    const req = add ? files.add(bytes, path) : files.put(bytes, path);
    // A taken key is an answer, not a failure of the transaction: keep it from aborting.
    req.onerror = (event) => {
      if (req.error?.name === "ConstraintError") event.preventDefault();
    };
    const finished = done(t);
    try {
      await request(req);
    } catch (err) {
      if (err?.name !== "ConstraintError") throw err;
      await finished.catch(() => {});
      return false;
    }
    await finished;
    return true;
  }

  async function get(path) {
    const t = await tx("readonly");
    return request(t.objectStore(STORE).get(path));
  }

  return {
    ...keyValueStorage({
      description: `indexeddb storage (database "${name}")`,
      get,
      async getRange(path, offset, length) {
        const bytes = await get(path);
        return bytes === undefined ? undefined : sliceRange(bytes, offset, length);
      },
      put: (path, bytes) => store(path, bytes, { add: false }),
      create: (path, bytes) => store(path, bytes, { add: true }),
      async append(path, tail) {
        const t = await tx("readwrite");
        const files = t.objectStore(STORE);
        const head = (await request(files.get(path))) ?? new Uint8Array(0);
        files.put(concat([head, tail]), path);
        await done(t);
      },
      async delete(path) {
        const t = await tx("readwrite");
        t.objectStore(STORE).delete(path);
        await done(t);
      },
      async keys(prefix) {
        const t = await tx("readonly");
        const range = IDBKeyRange.bound(prefix, `${prefix}\uffff`, false, false);
        return (await request(t.objectStore(STORE).getAllKeys(range))).map((key) => key.slice(prefix.length));
      },
      lock: webLock,
    }),
    /** Closes the database connection. */
    async close() {
      if (opened) (await opened).close();
      opened = undefined;
    },
  };
}
