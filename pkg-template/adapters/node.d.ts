import type { StorageHost } from "./host.js";

export interface NodeStorageOptions {
  /** `"strict"`: fsync files and folders so writes survive power loss. Default: survive process crashes. */
  durability?: "default" | "strict";
  /** Most file operations in flight at once (default 64), so bursts never hit EMFILE. */
  maxOpenFiles?: number;
  /**
   * New files up to this many bytes are created with blocking calls (open O_EXCL,
   * write, close), which skips the thread-pool round trips of `fs.promises`: a save of
   * a record up to 256 KiB then costs less than a plain `fs.promises.writeFile` of the
   * same bytes (`node bench/io.mjs`). Default 256 KiB (`bunStorage`: 1 MiB, where it
   * is three times faster); 0 keeps every write asynchronous.
   */
  syncCreateMaxBytes?: number;
  /**
   * Files up to this many bytes, and ranges (`readRange`) of up to this many, are read
   * with blocking calls (open O_NOFOLLOW, fstat, read, close), one event-loop turn
   * instead of several thread-pool round trips. Default 256 KiB; 0 keeps every read
   * asynchronous.
   */
  syncReadMaxBytes?: number;
  /**
   * Milliseconds after which a lock file that was not refreshed is taken over (default
   * 30000). A holder refreshes its lock every third of it; a holder found to have lost
   * its lock fails its locked operation with `ELOCKCOMPROMISED`. Keep it at 2000 or more
   * on file systems with coarse modification times.
   */
  lockLeaseMs?: number;
  /** How long `lock` waits for a held lock before it rejects with code "TIMEOUT" (default 60 000). */
  lockWaitMs?: number;
  /** @deprecated The old name of `lockLeaseMs`, still read when `lockLeaseMs` is not given. */
  lockStaleMs?: number;
}

/** A StorageHost over Node's `fs/promises` (folders 0700, files 0600); `readRange` reads only the range, at its offset. */
export function nodeStorage(options?: NodeStorageOptions): StorageHost;
