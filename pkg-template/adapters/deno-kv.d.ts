import type { StorageHost } from "./host.js";

export interface DenoKvStorageOptions {
  /** An open `Deno.Kv` (the caller closes it). Default: `Deno.openKv(path)`, closed by `close()`. */
  kv?: Deno.Kv;
  /** A KV file (local SQLite) or a KV URL for `Deno.openKv`; default: the runtime's default KV. */
  path?: string;
  /** The first key parts of every entry, to share one KV with other data. Default `["toolctx"]`. */
  prefix?: string | Array<string | number>;
  /** How long a lock entry lives unless its holder refreshes it (every third of it). Default 30 000. */
  lockLeaseMs?: number;
  /** @deprecated The old name of `lockLeaseMs`, still read when `lockLeaseMs` is not given. */
  lockTtlMs?: number;
  /** How long `lock` waits for a held lock before it rejects with code "TIMEOUT". Default 60 000. */
  lockWaitMs?: number;
  /** @deprecated The old name of `lockWaitMs`, still read when `lockWaitMs` is not given. */
  lockTimeoutMs?: number;
  /** Each KV request rejects with code "TIMEOUT" past this many ms (a commit may still land). Default: none (0). */
  timeoutMs?: number;
  /** Once aborted, pending and later requests reject with code "ABORTED". */
  signal?: AbortSignal;
}

export interface DenoKvStorage extends StorageHost {
  lock<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Closes the KV this storage opened from `path` (not a `kv` it was given). */
  close(): Promise<void>;
}

/**
 * A StorageHost over Deno KV: exclusive create and locks by atomic versionstamp checks,
 * values over 64 KiB chunked with no partial record ever visible; `readRange` reads only the
 * chunks that hold the range. Needs `--unstable-kv`.
 */
export function denoKvStorage(options?: DenoKvStorageOptions): DenoKvStorage;
