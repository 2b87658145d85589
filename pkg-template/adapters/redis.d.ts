import type { StorageHost } from "./host.js";

export interface RedisStorageOptions {
  /** A node-redis client (npm `redis` v5 or later), connected or not; the caller owns it (`close()` leaves it open). */
  client?: unknown;
  /** Where to connect when no `client` is given (default "redis://127.0.0.1:6379"); the password in it never appears in an error. */
  url?: string;
  /** Prefix of every key (default "toolctx:"). With Redis Cluster, include a hash tag: "{toolctx}:". */
  prefix?: string;
  /** Milliseconds one operation may take before it rejects with code "TIMEOUT" (default 10 000; 0: none). */
  timeoutMs?: number;
  /** @deprecated The old name of `timeoutMs`, still read when `timeoutMs` is not given. */
  timeout?: number;
  /** Aborting it makes every pending and later operation reject with code "ABORTED". */
  signal?: AbortSignal;
  /** Lease of a lock in ms (default 30 000); the holder refreshes it every third of that. */
  lockLeaseMs?: number;
  /** @deprecated The old name of `lockLeaseMs`, still read when `lockLeaseMs` is not given. */
  lockTtlMs?: number;
  /** How long `lock` waits for a held lock before it rejects with code "TIMEOUT" (default 60 000). */
  lockWaitMs?: number;
  /** Largest value written, in bytes (default 512 MiB, Redis's own limit); a larger write rejects with code "TOO_LARGE" and writes nothing. */
  maxValueBytes?: number;
}

/** What `lock` hands its callback. */
export interface RedisLockHold {
  /** Grows by one with every acquisition of this lock name: pass it to systems that can reject stale holders. */
  fencingToken: number;
  /** Aborts when the lease was lost (the process stalled past `lockLeaseMs`); `lock` then rejects with code "LOCK_LOST". */
  signal: AbortSignal;
}

export interface RedisStorage extends StorageHost {
  lock<T>(name: string, fn: (hold: RedisLockHold) => Promise<T>): Promise<T>;
  /** Closes the connection this storage opened (not a `client` handed in); afterwards its operations reject (`STORAGE`) and open no connection. */
  close(): Promise<void>;
}

/** A StorageHost over Redis: records as keys (`readRange`: GETRANGE), folders as sorted sets, locks by SET NX PX with a fencing token. */
export function redisStorage(options?: RedisStorageOptions): RedisStorage;
