// toolctx/cloudflare: StorageHosts over the bindings a Cloudflare Worker receives, with no
// Cloudflare SDK: an R2 bucket (`env.MY_BUCKET`), a Workers KV namespace (`env.MY_KV`) and
// the SQLite-backed storage of a Durable Object (`ctx.storage`).
//
// - r2Storage: records as objects. Exclusive create is R2's conditional put
//   (`onlyIf: {etagDoesNotMatch: "*"}`, HTTP's `If-None-Match: *`), decided by R2 itself;
//   a put replaces an object whole; list pages with a "/" delimiter; append is a
//   compare-and-swap on the ETag; lock is a lease object, created exclusively, taken over
//   by a compare-and-swap once expired, refreshed while held.
// - kvStorage: small values, eventually consistent. KV has no conditional write, so an
//   exclusive write is a read then a put: it refuses a name already visible here, but two
//   writers racing on one name both succeed (record names carry a random part, so writers
//   never pick one name). No lock, no append.
// - durableObjectStorage: two tables in the object's SQLite database. A value is cut into
//   cells under the 2 MB limit and written with its head row in one synchronous
//   transaction, so no reader ever sees part of a value. lock() is a queue in the object,
//   which is a real mutual exclusion: a Durable Object is one instance in the world and
//   runs one thing at a time, and everyone who uses its storage runs inside it.

import { toolctxError } from "../errors.js";
import { sleep as pause } from "./base/backoff.js";
import { backendCall } from "./base/backend.js";
import { bytesOf as toBytes, concat } from "./base/bytes.js";
import { leaseLock, lockOptions } from "./base/lease-lock.js";
import { queueLock } from "./base/queue-lock.js";
import { children, folderPrefix } from "./base/listing.js";

const encoder = new TextEncoder();

/** Workers KV's limit on a value (25 MiB). */
export const KV_MAX_VALUE_BYTES = 25 * 1024 * 1024;
/** Workers KV's limit on a key (512 bytes of UTF-8). */
export const KV_MAX_KEY_BYTES = 512;
/** The largest cell written to Durable Object SQLite (its limit is 2 MB per row). */
export const DO_CHUNK_BYTES = 1024 * 1024;

function exists(backend, path) {
  return toolctxError("EEXIST", `EEXIST: ${backend} already has ${path}`);
}

// ---------------------------------------------------------------------------
// R2

/** An R2 binding call; its error rethrown with `code: "STORAGE"` and R2's number (`r2Code`), e.g. 10020. */
function r2(op, key, call) {
  const r2Code = (err) => Number(/\((\d{5})\)\s*$/.exec(String(err?.message ?? ""))?.[1]) || undefined;
  return backendCall(`R2 ${op} of ${JSON.stringify(key)}`, {}, call, (err) => ({ r2Code: r2Code(err) }));
}

/**
 * A StorageHost over an R2 bucket binding. `prefix` (default "") is put before every path.
 * @returns {import("./cloudflare.d.ts").CloudflareStorage}
 */
export function r2Storage(bucket, options = {}) {
  const { prefix = "", appendAttempts = 50 } = options;
  if (!bucket || typeof bucket.put !== "function" || typeof bucket.list !== "function") {
    throw toolctxError("INVALID_ARGUMENT", "r2Storage needs an R2 bucket binding (env.MY_BUCKET)");
  }
  const keyOf = (path) => prefix + path;
  const leased = (leaseMs) => ({ customMetadata: { expires: String(Date.now() + leaseMs) } });
  /**
   * A lease object in the bucket: created exclusively, or taken over by a compare-and-swap
   * on its ETag once its lease (`customMetadata.expires`) has passed; refreshed and
   * deleted only while it is still the object we wrote.
   */
  const lock = leaseLock(
    {
      async acquire(name, token, leaseMs) {
        const key = keyOf(name);
        let put = await r2("put", key, () => bucket.put(key, token, { onlyIf: { etagDoesNotMatch: "*" }, ...leased(leaseMs) }));
        if (put === null) {
          const holder = await r2("head", key, () => bucket.head(key));
          if (holder === null || !(Number(holder.customMetadata?.expires) < Date.now())) return undefined;
          put = await r2("put", key, () => bucket.put(key, token, { onlyIf: { etagMatches: holder.etag }, ...leased(leaseMs) }));
        }
        return put === null ? undefined : { key, token, etag: put.etag };
      },
      async refresh(hold, leaseMs) {
        const renewed = await r2("put", hold.key, () => bucket.put(hold.key, hold.token, { onlyIf: { etagMatches: hold.etag }, ...leased(leaseMs) }));
        if (renewed !== null) hold.etag = renewed.etag;
        return renewed !== null;
      },
      async release({ key, etag }) {
        const holder = await r2("head", key, () => bucket.head(key));
        if (holder?.etag !== etag) return false;
        await r2("delete", key, () => bucket.delete(key));
        return true;
      },
    },
    { label: "R2 lock", maxPauseMs: 200, ...lockOptions(options, "r2Storage", { lease: ["leaseMs"] }) },
  );
  return {
    description: "R2 storage: objects in a bucket, exclusive create by a conditional put",
    async read(path) {
      const key = keyOf(path);
      const object = await r2("get", key, () => bucket.get(key));
      return object === null ? undefined : new Uint8Array(await object.arrayBuffer());
    },
    async write(path, data, options = {}) {
      const key = keyOf(path);
      const onlyIf = options.exclusive ? { etagDoesNotMatch: "*" } : undefined;
      const put = await r2("put", key, () => bucket.put(key, toBytes(data), onlyIf && { onlyIf }));
      if (put === null) throw exists("R2", path);
    },
    /** Read, join, and put only if the object is still the one read (its ETag); retried on a race. */
    async append(path, data) {
      const key = keyOf(path);
      const tail = toBytes(data);
      for (let attempt = 0; attempt < appendAttempts; attempt++) {
        const current = await r2("get", key, () => bucket.get(key));
        const head = current === null ? new Uint8Array(0) : new Uint8Array(await current.arrayBuffer());
        const onlyIf = current === null ? { etagDoesNotMatch: "*" } : { etagMatches: current.etag };
        if ((await r2("put", key, () => bucket.put(key, concat([head, tail]), { onlyIf }))) !== null) return;
        await pause(Math.random() * Math.min(50, 2 ** attempt));
      }
      throw toolctxError("STORAGE", `R2 append to ${JSON.stringify(key)} lost ${appendAttempts} races in a row to other writers`);
    },
    async remove(path) {
      const key = keyOf(path);
      await r2("delete", key, () => bucket.delete(key));
    },
    lock,
    async list(dir) {
      const within = keyOf(folderPrefix(dir));
      const keys = [];
      let cursor;
      do {
        const page = await r2("list", within, () => bucket.list({ prefix: within, delimiter: "/", cursor }));
        for (const object of page.objects) keys.push(object.key);
        for (const folder of page.delimitedPrefixes ?? []) keys.push(folder);
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
      return children(within, keys);
    },
  };
}

// ---------------------------------------------------------------------------
// Workers KV

/** A Workers KV binding call; its error rethrown with `code: "STORAGE"` and the HTTP status it names (`status`). */
function kv(op, key, call) {
  const status = (err) => Number(/\b(\d{3})\b/.exec(String(err?.message ?? ""))?.[1]) || undefined;
  return backendCall(`KV ${op} of ${JSON.stringify(key)}`, {}, call, (err) => ({ status: status(err) }));
}

/**
 * A StorageHost over a Workers KV namespace binding. `prefix` (default "") is put before
 * every path. Eventually consistent: see the README for what it cannot promise.
 * @returns {import("./cloudflare.d.ts").CloudflareStorage}
 */
export function kvStorage(namespace, { prefix = "" } = {}) {
  if (!namespace || typeof namespace.get !== "function" || typeof namespace.list !== "function") {
    throw toolctxError("INVALID_ARGUMENT", "kvStorage needs a KV namespace binding (env.MY_KV)");
  }
  const keyOf = (path) => {
    const key = prefix + path;
    const size = encoder.encode(key).length;
    if (size > KV_MAX_KEY_BYTES) {
      throw toolctxError("TOO_LARGE", `TOO_LARGE: KV keys are at most ${KV_MAX_KEY_BYTES} bytes; ${JSON.stringify(path)} makes ${size}`);
    }
    return key;
  };
  return {
    description: "KV storage: eventually consistent, exclusive create is a read then a put",
    async read(path) {
      const key = keyOf(path);
      const value = await kv("get", key, () => namespace.get(key, "arrayBuffer"));
      return value === null ? undefined : new Uint8Array(value);
    },
    async write(path, data, options = {}) {
      const key = keyOf(path);
      const bytes = toBytes(data);
      if (bytes.length > KV_MAX_VALUE_BYTES) {
        throw toolctxError("TOO_LARGE", `TOO_LARGE: KV values are at most 25 MiB; ${path} has ${bytes.length} bytes`, {
          size: bytes.length,
          limit: KV_MAX_VALUE_BYTES,
        });
      }
      if (options.exclusive && (await kv("get", key, () => namespace.get(key, "arrayBuffer"))) !== null) {
        throw exists("KV", path);
      }
      await kv("put", key, () => namespace.put(key, bytes));
    },
    async remove(path) {
      const key = keyOf(path);
      await kv("delete", key, () => namespace.delete(key));
    },
    /** KV lists keys by prefix without a delimiter: every key below `dir` is paged through. */
    async list(dir) {
      const within = prefix + folderPrefix(dir);
      const keys = [];
      let cursor;
      do {
        const page = await kv("list", within, () => namespace.list({ prefix: within, cursor }));
        for (const { name } of page.keys) keys.push(name);
        cursor = page.list_complete ? undefined : page.cursor;
      } while (cursor);
      return children(within, keys);
    },
  };
}

// ---------------------------------------------------------------------------
// Durable Object storage (SQLite-backed)

const SCHEMA = `
CREATE TABLE IF NOT EXISTS toolctx_files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, chunks INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS toolctx_chunks (path TEXT NOT NULL, n INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (path, n));`;

/** The lock of each Durable Object's storage, shared by every adapter made over it. */
const locksOf = new WeakMap();

/** The paths below a prefix are one key range: "a/b/" <= path < "a/b0" ("0" follows "/"). */
function rangeOf(prefix) {
  return prefix === "" ? ["", "\u{10FFFF}"] : [prefix, `${prefix.slice(0, -1)}0`];
}

/**
 * A StorageHost over a Durable Object's SQLite storage (`ctx.storage`), for code running
 * inside that object. Values are cut into cells of `DO_CHUNK_BYTES`; a write is one
 * transaction. @returns {import("./cloudflare.d.ts").CloudflareStorage}
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
  if (!locksOf.has(storage)) locksOf.set(storage, queueLock());

  const head = (path) => sql.exec("SELECT size, chunks FROM toolctx_files WHERE path = ?", path).toArray()[0];
  const addChunks = (path, bytes, first) => {
    let n = first;
    for (let at = 0; at < bytes.length; at += DO_CHUNK_BYTES, n++) {
      sql.exec("INSERT INTO toolctx_chunks (path, n, data) VALUES (?, ?, ?)", path, n, bytes.subarray(at, at + DO_CHUNK_BYTES));
    }
    return n;
  };

  return {
    description: "Durable Object storage: SQLite in the object, one transaction per write",
    read(path) {
      const found = head(path);
      if (found === undefined) return undefined;
      const bytes = new Uint8Array(found.size);
      let at = 0;
      for (const { data } of sql.exec("SELECT data FROM toolctx_chunks WHERE path = ? ORDER BY n", path)) {
        bytes.set(new Uint8Array(data), at);
        at += data.byteLength;
      }
      return bytes;
    },
    write(path, data, options = {}) {
      const bytes = toBytes(data);
      storage.transactionSync(() => {
        if (head(path) !== undefined) {
          if (options.exclusive) throw exists("the Durable Object", path);
          sql.exec("DELETE FROM toolctx_chunks WHERE path = ?", path);
        }
        const chunks = addChunks(path, bytes, 0);
        sql.exec("INSERT OR REPLACE INTO toolctx_files (path, size, chunks) VALUES (?, ?, ?)", path, bytes.length, chunks);
      });
    },
    /** New cells after the last one, and the head updated, in one transaction. */
    append(path, data) {
      const bytes = toBytes(data);
      storage.transactionSync(() => {
        const found = head(path) ?? { size: 0, chunks: 0 };
        const chunks = addChunks(path, bytes, found.chunks);
        sql.exec("INSERT OR REPLACE INTO toolctx_files (path, size, chunks) VALUES (?, ?, ?)", path, found.size + bytes.length, chunks);
      });
    },
    remove(path) {
      storage.transactionSync(() => {
        sql.exec("DELETE FROM toolctx_files WHERE path = ?", path);
        sql.exec("DELETE FROM toolctx_chunks WHERE path = ?", path);
      });
    },
    list(dir) {
      const prefix = folderPrefix(dir);
      const [from, to] = rangeOf(prefix);
      const rows = sql.exec("SELECT path FROM toolctx_files WHERE path >= ? AND path < ?", from, to);
      return children(prefix, Array.from(rows, ({ path }) => path));
    },
    /** Mutual exclusion by name among everyone using this object's storage (see above). */
    lock: locksOf.get(storage),
  };
}
