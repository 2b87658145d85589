import type { StorageHost } from "../index.js";

export interface NodeStorageOptions {
  /** `"strict"`: fsync files and folders so writes survive power loss. Default: survive process crashes. */
  durability?: "default" | "strict";
  /** Most file operations in flight at once (default 64), so bursts never hit EMFILE. */
  maxOpenFiles?: number;
}

/** A StorageHost over Node's `fs/promises` (folders 0700, files 0600). */
export function nodeStorage(options?: NodeStorageOptions): StorageHost;
