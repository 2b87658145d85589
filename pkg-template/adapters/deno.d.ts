import type { StorageHost } from "./host.js";

export interface DenoStorageOptions {
  /** `"strict"`: fsync new files so they survive power loss. Default: survive process crashes. */
  durability?: "default" | "strict";
  /**
   * New files up to this many bytes are created with one blocking call
   * (`Deno.writeFileSync`, `createNew`), which skips the op round trip. Default 256 KiB;
   * 0 keeps every write asynchronous. `durability: "strict"` writes asynchronously.
   */
  syncCreateMaxBytes?: number;
  /** Files, and ranges (`readRange`), up to this many bytes are read with blocking calls. Default 256 KiB; 0 keeps reads asynchronous. */
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

/**
 * A StorageHost over Deno's file APIs (folders 0700, files 0600); `readRange` reads only the
 * range, at its offset. Needs --allow-read and --allow-write.
 */
export function denoStorage(options?: DenoStorageOptions): StorageHost;
