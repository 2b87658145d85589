// The types of toolctx/cloudflare's three backends (r2.js, workers-kv.js,
// durable-object.js) in one file: the package exports them as one entry whose `types`
// name one file, and the three return the same CloudflareStorage.
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

/** The part of a SQLite-backed Durable Object's `ctx.storage` the adapter uses. */
export interface DurableObjectStorageLike {
  sql: { exec(query: string, ...bindings: unknown[]): Iterable<Record<string, unknown>> & { toArray(): Record<string, unknown>[] } };
  transactionSync<T>(fn: () => T): T;
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

/** Workers KV's limit on a value: 26,214,400 bytes (25 MiB). */
export const KV_MAX_VALUE_BYTES: number;
/** Workers KV's limit on a key: 512 bytes of UTF-8. */
export const KV_MAX_KEY_BYTES: number;
/** The largest cell the Durable Object adapter writes (1 MiB; the limit is 2 MB). */
export const DO_CHUNK_BYTES: number;

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
