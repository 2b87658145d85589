import type { StorageHost } from "./host.js";

/** A SQLite database object: better-sqlite3's `Database`, node:sqlite's `DatabaseSync`, bun:sqlite's `Database`. */
export interface SqliteDatabaseLike {
  prepare(sql: string): {
    get(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
    run(...params: unknown[]): { changes: number | bigint };
  };
  exec(sql: string): unknown;
  close(): unknown;
}

/** Where the records live: a database file the adapter opens (and closes on `close()`), or a database you keep. */
export type SqliteStorageSource =
  | {
      /** A file (created if missing; put in WAL mode) or ":memory:"; opened with bun:sqlite under Bun, node:sqlite where the runtime has it (Node 22.5+, Deno), else npm better-sqlite3. */
      path: string;
      database?: undefined;
    }
  | {
      /** A database object of your own (better-sqlite3, node:sqlite, bun:sqlite); `close()` leaves it open. Its journal mode and synchronous setting are yours; its busy_timeout is set to `busyTimeoutMs`. Don't hold a transaction open on it while toolctx writes: toolctx's writes would join it, and its locks begin one of their own (BEGIN IMMEDIATE), which fails inside yours. */
      database: SqliteDatabaseLike;
      path?: undefined;
    };

export interface SqliteStorageOptions {
  /** The table of the records, created if missing (default "toolctx_files"; its locks in "<table>_locks"); any name of 1 to 63 bytes without NUL, always quoted. A table of that name with other columns is an INVALID_ARGUMENT when the storage is made. */
  table?: string;
  /** How long a write waits for another connection's write, blocking the thread, before it rejects with code "TIMEOUT" (default 5 000). */
  busyTimeoutMs?: number;
  /** "strict": synchronous=FULL, every commit survives power loss; "relaxed" (default): NORMAL in WAL, survives a process crash. For a `path` only. */
  durability?: "relaxed" | "strict";
  /** Lease of a lock in ms (default 30 000), refreshed every third of it; a holder on this machine whose process ended is taken over at once. */
  lockLeaseMs?: number;
  /** How long `lock` waits for a held lock before it rejects with code "TIMEOUT" (default 60 000). */
  lockWaitMs?: number;
  /** Largest value written, in bytes (default 1 000 000 000, SQLite's default limit); a larger write rejects with code "TOO_LARGE" and writes nothing. */
  maxValueBytes?: number;
}

/** What `lock` hands its callback. */
export interface SqliteLockHold {
  /** Aborts when the lease was lost (the process stalled past `lockLeaseMs`); `lock` then rejects with code "LOCK_LOST". */
  signal: AbortSignal;
}

export interface SqliteStorage extends StorageHost {
  /** A lease row naming its holder (host, pid, start time): a holder on this machine whose process ended is taken over at once. `{wait: false}`: "TIMEOUT" at once when held. */
  lock<T>(name: string, fn: (hold: SqliteLockHold) => Promise<T>, options?: { wait?: boolean }): Promise<T>;
  /** The table's name, as given. */
  readonly table: string;
  /** Closes the database this storage opened (not a `database` handed in); afterwards its operations reject (`STORAGE`). */
  close(): void;
}

/** A StorageHost over one SQLite table (one row a file; `readRange`: `substr`), answering synchronously. */
export function sqliteStorage(source: SqliteStorageSource, options?: SqliteStorageOptions): SqliteStorage;
