// toolctx/cloudflare's durableObjectStorage: records in the SQLite-backed storage of a
// Durable Object (`ctx.storage`), for code running inside that object, over the
// key-value base, with no Cloudflare SDK.
//
// Two tables in the object's SQLite database. A value is cut into cells under the 2 MB
// limit and written with its head row in one synchronous transaction, so no reader ever
// sees part of a value. A range is read from the cells that hold it, found by their
// lengths (an append adds a cell of its own size). Every call answers synchronously. lock() is a queue in the
// object, which is a real mutual exclusion: a Durable Object is one instance in the world
// and runs one thing at a time, and everyone who uses its storage runs inside it.

import { toolctxError } from "../errors.js";
import { keyValueStorage } from "./base/key-value.js";
import { queueLock } from "./base/queue-lock.js";
import { rangeLength } from "./base/range.js";

/** The largest cell written to Durable Object SQLite (its limit is 2 MB per row). */
export const DO_CHUNK_BYTES = 1024 * 1024;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS toolctx_files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, chunks INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS toolctx_chunks (path TEXT NOT NULL, n INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (path, n));`;

/** The lock of each Durable Object's storage, shared by every adapter made over it. */
const locksOf = new WeakMap();

/**
 * The lock of the Durable Object whose storage is `storage`: one queue in the object,
 * shared by every adapter made over that storage (this one and durableObjectSqlStorage).
 */
export function objectLock(storage) {
  if (!locksOf.has(storage)) locksOf.set(storage, queueLock());
  return locksOf.get(storage);
}

/** The paths below a prefix are one key range: "a/b/" <= path < "a/b0" ("0" follows "/"). */
function rangeOf(prefix) {
  return prefix === "" ? ["", "\u{10FFFF}"] : [prefix, `${prefix.slice(0, -1)}0`];
}

/**
 * A StorageHost over a Durable Object's SQLite storage (`ctx.storage`). Values are cut
 * into cells of `DO_CHUNK_BYTES`; a write is one transaction.
 * @param {import("./cloudflare.d.ts").DurableObjectStorageLike} storage
 * @returns {import("./cloudflare.d.ts").CloudflareStorage}
 */
export function durableObjectStorage(storage) {
  if (!storage || typeof storage.transactionSync !== "function" || !storage.sql) {
    throw toolctxError(
      "INVALID_ARGUMENT",
      "durableObjectStorage needs the storage of a SQLite-backed Durable Object (ctx.storage, class listed in new_sqlite_classes)",
    );
  }
  const { sql } = storage;
  sql.exec(SCHEMA);

  /** @type {(path: string) => { size: number, chunks: number } | undefined} */
  const head = (path) => /** @type {any} */ (sql.exec("SELECT size, chunks FROM toolctx_files WHERE path = ?", path).toArray()[0]);
  const addChunks = (path, bytes, first) => {
    let n = first;
    for (let at = 0; at < bytes.length; at += DO_CHUNK_BYTES, n++) {
      sql.exec("INSERT INTO toolctx_chunks (path, n, data) VALUES (?, ?, ?)", path, n, bytes.subarray(at, at + DO_CHUNK_BYTES));
    }
    return n;
  };
  /** In one transaction: the value at `path` replaced by `bytes` (with `exclusive`, only where there is none); false when taken. */
  const store = (path, bytes, { exclusive }) =>
    storage.transactionSync(() => {
      if (head(path) !== undefined) {
        if (exclusive) return false;
        sql.exec("DELETE FROM toolctx_chunks WHERE path = ?", path);
      }
      const chunks = addChunks(path, bytes, 0);
      sql.exec("INSERT OR REPLACE INTO toolctx_files (path, size, chunks) VALUES (?, ?, ?)", path, bytes.length, chunks);
      return true;
    });

  return keyValueStorage({
    description: "Durable Object storage: SQLite in the object, one transaction per write",
    get(path) {
      const found = head(path);
      if (found === undefined) return undefined;
      const bytes = new Uint8Array(found.size);
      let at = 0;
      const rows = /** @type {Iterable<{ data: ArrayBuffer }>} */ (sql.exec("SELECT data FROM toolctx_chunks WHERE path = ? ORDER BY n", path));
      for (const { data } of rows) {
        bytes.set(new Uint8Array(data), at);
        at += data.byteLength;
      }
      return bytes;
    },
    /** The cells that hold [offset, offset + length), found by their lengths (no cell's data read), then read. */
    getRange(path, offset, length) {
      const found = head(path);
      if (found === undefined) return undefined;
      const bytes = new Uint8Array(rangeLength(found.size, offset, length));
      const end = offset + bytes.length;
      let first;
      let last;
      let firstAt = 0;
      let at = 0;
      const sizes = /** @type {Iterable<{ n: number, size: number }>} */ (
        sql.exec("SELECT n, length(data) AS size FROM toolctx_chunks WHERE path = ? ORDER BY n", path)
      );
      for (const { n, size } of sizes) {
        if (at < end && at + size > offset) {
          if (first === undefined) [first, firstAt] = [n, at];
          last = n;
        }
        at += size;
      }
      if (first === undefined) return bytes;
      at = firstAt;
      const rows = /** @type {Iterable<{ data: ArrayBuffer }>} */ (
        sql.exec("SELECT data FROM toolctx_chunks WHERE path = ? AND n BETWEEN ? AND ? ORDER BY n", path, first, last)
      );
      for (const { data } of rows) {
        const cell = new Uint8Array(data);
        const from = Math.max(offset, at);
        bytes.set(cell.subarray(from - at, Math.min(end, at + cell.length) - at), from - offset);
        at += cell.length;
      }
      return bytes;
    },
    put: (path, bytes) => store(path, bytes, { exclusive: false }),
    create: (path, bytes) => store(path, bytes, { exclusive: true }),
    /** New cells after the last one, and the head updated, in one transaction. */
    append(path, bytes) {
      storage.transactionSync(() => {
        const found = head(path) ?? { size: 0, chunks: 0 };
        const chunks = addChunks(path, bytes, found.chunks);
        sql.exec("INSERT OR REPLACE INTO toolctx_files (path, size, chunks) VALUES (?, ?, ?)", path, found.size + bytes.length, chunks);
      });
    },
    delete(path) {
      storage.transactionSync(() => {
        sql.exec("DELETE FROM toolctx_files WHERE path = ?", path);
        sql.exec("DELETE FROM toolctx_chunks WHERE path = ?", path);
      });
    },
    keys(folder) {
      const [from, to] = rangeOf(folder);
      const rows = /** @type {Iterable<{ path: string }>} */ (sql.exec("SELECT path FROM toolctx_files WHERE path >= ? AND path < ?", from, to));
      return Array.from(rows, ({ path }) => path.slice(folder.length));
    },
    /** Mutual exclusion by name among everyone using this object's storage (see above). */
    lock: objectLock(storage),
  });
}
