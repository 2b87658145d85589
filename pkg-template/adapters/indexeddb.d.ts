import type { StorageHost } from "./host.js";

export interface IndexedDbStorageOptions {
  /** Database name. Default `"toolctx"`. */
  database?: string;
  /** `"strict"`: transactions with `durability: "strict"` (flushed before they complete). */
  durability?: "default" | "strict";
}

/**
 * A StorageHost over IndexedDB: one object store, one transaction per write. IndexedDB
 * stores whole values: `readRange` reads the whole value and cuts the range.
 */
export function indexedDbStorage(options?: IndexedDbStorageOptions): StorageHost & { close(): Promise<void> };
