import type { StorageHost } from "./host.js";

export interface OpfsStorageOptions {
  /**
   * Write new records through `FileSystemSyncAccessHandle` (faster). Default: when
   * running in a dedicated worker that has them.
   */
  syncAccessHandles?: boolean;
}

/** A StorageHost over the Origin Private File System (main thread and workers); `readRange` reads a slice of the file. */
export function opfsStorage(options?: OpfsStorageOptions): StorageHost;
