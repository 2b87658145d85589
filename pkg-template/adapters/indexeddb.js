// toolctx/indexeddb: a StorageHost over IndexedDB.
//
// One object store of files keyed by path. Every write is one transaction, so a
// reader sees the old bytes or the new ones, never half; an exclusive write is an
// `add`, which fails inside the same transaction when the key exists. Folders are
// implied by paths; `list` walks a key range.

import { toolctxError } from "../errors.js";
import { concat, copyOf } from "./base/bytes.js";
import { children, folderPrefix } from "./base/listing.js";
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

function exists(path) {
  return toolctxError("EEXIST", `EEXIST: file already exists: ${path}`);
}

/**
 * @param {import("./indexeddb.d.ts").IndexedDbStorageOptions} [options]
 * @returns {import("../index.js").StorageHost}
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

  return {
    description: `indexeddb storage (database "${name}")`,
    async read(path) {
      const t = await tx("readonly");
      const value = await request(t.objectStore(STORE).get(path));
      return value === undefined ? undefined : value;
    },
    async write(path, data, { exclusive = false } = {}) {
      const value = copyOf(data);
      const t = await tx("readwrite");
      const store = t.objectStore(STORE);
      const req = exclusive ? store.add(value, path) : store.put(value, path);
      req.onerror = (event) => {
        if (req.error?.name === "ConstraintError") event.preventDefault();
      };
      const finished = done(t);
      try {
        await request(req);
      } catch (err) {
        if (err?.name === "ConstraintError") {
          await finished.catch(() => {});
          throw exists(path);
        }
        throw err;
      }
      await finished;
    },
    async append(path, data) {
      const tail = copyOf(data);
      const t = await tx("readwrite");
      const store = t.objectStore(STORE);
      const head = (await request(store.get(path))) ?? new Uint8Array(0);
      store.put(concat([head, tail]), path);
      await done(t);
    },
    async remove(path) {
      const t = await tx("readwrite");
      t.objectStore(STORE).delete(path);
      await done(t);
    },
    async list(dir) {
      const prefix = folderPrefix(dir);
      const t = await tx("readonly");
      const range = IDBKeyRange.bound(prefix, `${prefix}\uffff`, false, false);
      return children(prefix, await request(t.objectStore(STORE).getAllKeys(range)));
    },
    removeDir() {},
    lock: webLock,
    /** Closes the database connection. */
    async close() {
      if (opened) (await opened).close();
      opened = undefined;
    },
  };
}
