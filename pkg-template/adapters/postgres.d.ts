import type { StorageHost } from "./host.js";

/** Where the records live: a connection string (the adapter makes a `pg.Pool` and ends it on `close()`), or a pool you keep. */
export type PostgresStorageSource =
  | {
      /** A postgresql:// URL (percent-encode any of : / ? # [ ] @ % in the user name or password); it and its password never appear in an error. */
      connectionString: string;
      pool?: undefined;
    }
  | {
      /** A `pg.Pool` (npm `pg` 8.8 or later) or a pool of its shape (`query`, `connect` handing out a client with `query` and `release`); `close()` leaves it open. It needs two connections or more while a lock is held. */
      pool: unknown;
      connectionString?: undefined;
    };

export interface PostgresStorageOptions {
  /** The table of the records, created if missing in the connection's schema (default "toolctx_files"); any name of 1 to 63 bytes without NUL, always quoted. */
  table?: string;
  /** Milliseconds one operation may take, retries included, before it rejects with code "TIMEOUT" (default 10 000; 0: none). A pool made from `connectionString` also sets it as the server's `statement_timeout`. */
  timeoutMs?: number;
  /** Aborting it makes every pending and later operation reject with code "ABORTED". */
  signal?: AbortSignal;
  /** Attempts after the first of a request that failed for a connection refused or lost, where that cannot repeat its effect (default 3). */
  retries?: number;
  /** The first wait between attempts, doubled each time up to 2 s, with jitter (default 100). */
  retryBaseMs?: number;
  /** How long `lock` waits for a lock another session holds before it rejects with code "TIMEOUT" (default 60 000). */
  lockWaitMs?: number;
  /** Connections of the pool made from `connectionString` (default 10, at least 2: a held lock keeps one). */
  poolSize?: number;
  /** Largest value written, in bytes (default 1 GB less 64 bytes, PostgreSQL's bytea limit); a larger write rejects with code "TOO_LARGE" and writes nothing. */
  maxValueBytes?: number;
}

/** What `lock` hands its callback. */
export interface PostgresLockHold {
  /** Aborts when the connection holding the advisory lock was lost (the lock with it); `lock` then rejects with code "LOCK_LOST". */
  signal: AbortSignal;
}

export interface PostgresStorage extends StorageHost {
  /** A session-level advisory lock, held on one connection: it dies with its holder. `{wait: false}`: "TIMEOUT" at once when held. */
  lock<T>(name: string, fn: (hold: PostgresLockHold) => Promise<T>, options?: { wait?: boolean }): Promise<T>;
  /** The table's name, as given. */
  readonly table: string;
  /** Ends the pool this storage made (not a `pool` handed in); afterwards its operations reject (`STORAGE`). */
  close(): Promise<void>;
}

/** A StorageHost over one PostgreSQL table (one row a file; `readRange`: `substring`), locks as session-level advisory locks. */
export function postgresStorage(source: PostgresStorageSource, options?: PostgresStorageOptions): PostgresStorage;
