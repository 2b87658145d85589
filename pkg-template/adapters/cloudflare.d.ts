// The types of toolctx/cloudflare's backends (r2.js, workers-kv.js, durable-object.js,
// d1.js, durable-object-sql.js) in one file: the package exports them as one entry whose
// `types` name one file, and they all return a CloudflareStorage.
import type { StorageHost } from "./host.js";

/** A StorageHost over a Cloudflare binding; `description` names the backend. */
export interface CloudflareStorage extends StorageHost {
  readonly description: string;
}

/** The part of an R2 bucket binding (`env.MY_BUCKET`, type `R2Bucket`) the adapter uses. */
export interface R2BucketLike {
  get(key: string, options?: { range?: { offset: number; length: number } }): Promise<{ arrayBuffer(): Promise<ArrayBuffer>; etag: string } | null>;
  head(key: string): Promise<{ etag: string; size: number; customMetadata?: Record<string, string> } | null>;
  put(
    key: string,
    value: Uint8Array | string,
    options?: { onlyIf?: { etagMatches?: string; etagDoesNotMatch?: string }; customMetadata?: Record<string, string> },
  ): Promise<{ etag: string } | null>;
  delete(key: string): Promise<void>;
  list(options: { prefix?: string; delimiter?: string; cursor?: string }): Promise<{
    objects: { key: string }[];
    delimitedPrefixes?: string[];
    truncated: boolean;
    cursor?: string;
  }>;
}

/** The part of a Workers KV binding (`env.MY_KV`, type `KVNamespace`) the adapter uses. */
export interface KVNamespaceLike {
  get(key: string, type: "arrayBuffer"): Promise<ArrayBuffer | null>;
  put(key: string, value: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(options: { prefix?: string; cursor?: string }): Promise<{ keys: { name: string }[]; list_complete: boolean; cursor?: string }>;
}

/** The part of a SQLite-backed Durable Object's `ctx.storage` the adapters use (durableObjectSqlStorage: `sql` only). */
export interface DurableObjectStorageLike {
  sql: {
    exec(query: string, ...bindings: unknown[]): Iterable<Record<string, unknown>> & { toArray(): Record<string, unknown>[]; readonly rowsWritten: number };
  };
  transactionSync<T>(fn: () => T): T;
}

/** A prepared D1 statement with its parameters bound (type `D1PreparedStatement`). */
export interface D1StatementLike {
  bind(...values: unknown[]): D1StatementLike;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }>;
  run(): Promise<{ meta: { changes: number } }>;
}

/** The part of a D1 database binding (`env.MY_DB`, type `D1Database`) the adapter uses. */
export interface D1DatabaseLike {
  prepare(query: string): D1StatementLike;
  /** Each statement's result, in order (the last one's rows are read: the table's columns). */
  batch(statements: D1StatementLike[]): Promise<{ results: Record<string, unknown>[] }[]>;
}

export interface R2StorageOptions {
  /** Put before every path, e.g. `"tenant-a/"`. Default `""`. */
  prefix?: string;
  /** Compare-and-swap rounds an `append` may lose to other writers before it fails with `code: "STORAGE"`. Default 50. */
  appendAttempts?: number;
  /** How long a `lock` lease lasts unless refreshed (it is refreshed every third of it while held). Default 30,000 ms. */
  lockLeaseMs?: number;
  /** @deprecated The old name of `lockLeaseMs`, still read when `lockLeaseMs` is not given. */
  leaseMs?: number;
  /** How long `lock` waits for a holder before it fails with `code: "TIMEOUT"`. Default 60,000 ms. */
  lockWaitMs?: number;
}

export interface KvStorageOptions {
  /** Put before every path. Default `""`. */
  prefix?: string;
}

export interface D1StorageOptions {
  /** The table of the records, created if missing with its locks' table "<table>_locks" (default "toolctx_files", toolctx/sqlite's table); any name of 1 to 63 bytes without NUL, always quoted. A table of that name with other columns is an INVALID_ARGUMENT at the first call. */
  table?: string;
  /** Largest value written, in bytes (default `D1_MAX_VALUE_BYTES`: D1 holds 2,000,000 bytes a row); a larger write, or an append that would grow a row past it, rejects with code "TOO_LARGE" and writes nothing. */
  maxValueBytes?: number;
  /** How long a `lock` lease lasts unless refreshed (it is refreshed every third of it while held). Default 30,000 ms: a worker that dies holding a lock blocks the others that long. */
  lockLeaseMs?: number;
  /** How long `lock` waits for a holder before it rejects with code "TIMEOUT". Default 60,000 ms. */
  lockWaitMs?: number;
}

export interface DurableObjectSqlStorageOptions {
  /** The table of the records, created if missing (default "toolctx_records": durableObjectStorage's own table is "toolctx_files"); a table of that name with other columns is an INVALID_ARGUMENT. */
  table?: string;
  /** Largest value written, in bytes (default `DO_SQL_MAX_VALUE_BYTES`: the object's SQLite holds 2 MB a row); a larger write, or an append that would grow a row past it, rejects with code "TOO_LARGE" and writes nothing. */
  maxValueBytes?: number;
}

/** A StorageHost over one table of SQLite rows (d1Storage, durableObjectSqlStorage). */
export interface CloudflareSqlStorage extends CloudflareStorage {
  /** The table's name, as given. */
  readonly table: string;
}

/** Workers KV's limit on a value: 26,214,400 bytes (25 MiB). */
export const KV_MAX_VALUE_BYTES: number;
/** Workers KV's limit on a key: 512 bytes of UTF-8. */
export const KV_MAX_KEY_BYTES: number;
/** The largest cell the Durable Object adapter writes (1 MiB; the limit is 2 MB). */
export const DO_CHUNK_BYTES: number;
/** d1Storage's default `maxValueBytes`: 1,983,616 (D1's 2,000,000-byte row less 16 KiB for the path and the numbers beside it). */
export const D1_MAX_VALUE_BYTES: number;
/** durableObjectSqlStorage's default `maxValueBytes`: 1,983,616 (the object's 2 MB row less 16 KiB). */
export const DO_SQL_MAX_VALUE_BYTES: number;

/**
 * Records as R2 objects. Exclusive create is R2's conditional put (`code: "EEXIST"` when
 * the key exists); a put replaces a whole object; `readRange` is a ranged get; `lock` is a lease object in the bucket;
 * binding errors have `code: "STORAGE"`, R2's number in `r2Code` and the binding's error as `cause`.
 */
export function r2Storage(bucket: R2BucketLike, options?: R2StorageOptions): CloudflareStorage;

/**
 * Small values in Workers KV (eventually consistent). An exclusive write refuses a key
 * visible here but is not atomic; values over 25 MiB and keys over 512 bytes fail with
 * `code: "TOO_LARGE"`; binding errors have `code: "STORAGE"` (and `status`, the HTTP status
 * the binding's message names). No `lock`, no `append`, no `readRange` (KV reads whole values).
 */
export function kvStorage(namespace: KVNamespaceLike, options?: KvStorageOptions): CloudflareStorage;

/**
 * The SQLite storage of the Durable Object the code runs in (`ctx.storage`): transactional
 * writes, values chunked below the 2 MB cell limit, never partly visible; `readRange` reads
 * only the cells that hold the range; `lock` is a queue in the object.
 */
export function durableObjectStorage(storage: DurableObjectStorageLike): CloudflareStorage;

/**
 * Records as rows of one table in a D1 database (`env.MY_DB`), toolctx/sqlite's table: one
 * row a file. Every operation is one statement: an exclusive create is `INSERT ... ON
 * CONFLICT DO NOTHING` (`code: "EEXIST"` when no row changed), `append` concatenates in SQL,
 * `readRange` is `substr` of the BLOB, `list` a key range. `lock` is a lease row in
 * "<table>_locks" (D1 has no session: a dead holder's lock is free once its lease runs
 * out). Values up to `maxValueBytes` (2 MB rows); D1's errors have a code of the table,
 * SQLite's result code in `sqliteCode` where D1 names one, and D1's error as `cause`.
 */
export function d1Storage(database: D1DatabaseLike, options?: D1StorageOptions): CloudflareSqlStorage;

/**
 * Records as rows of one table in the SQLite database of the Durable Object the code runs
 * in (`ctx.storage`), the table of toolctx/sqlite and d1Storage; answers synchronously
 * (`ctx.storage.sql.exec`). Exclusive create, append, `readRange` and `list` as d1Storage's;
 * `lock` is the object's queue, shared with durableObjectStorage over the same storage.
 * Values up to `maxValueBytes` (2 MB rows): for larger ones use durableObjectStorage, which
 * cuts values into cells.
 */
export function durableObjectSqlStorage(storage: DurableObjectStorageLike, options?: DurableObjectSqlStorageOptions): CloudflareSqlStorage;
