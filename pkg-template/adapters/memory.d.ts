import type { StorageHost } from "./host.js";

/** An in-process StorageHost; `paths()` lists what it holds (for tests). */
export interface MemoryStorage extends StorageHost {
  paths(): string[];
}

/** A fresh, empty in-process store; `readRange` gives a copy of the range. */
export function memoryStorage(): MemoryStorage;
