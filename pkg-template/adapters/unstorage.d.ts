import type { StorageHost } from "./host.js";

/** The subset of an unstorage `Storage` (from `createStorage({driver})`) the bridge calls. */
export interface UnstorageLike {
  getItemRaw(key: string): unknown;
  setItemRaw(key: string, value: Uint8Array): unknown;
  hasItem(key: string): unknown;
  removeItem(key: string): unknown;
  getKeys(base?: string): Promise<string[]> | string[];
}

export interface UnstorageStorageOptions {
  /** An unstorage Storage: `createStorage({ driver: fsDriver({ base: "./ctx" }) })`. */
  storage: UnstorageLike;
  /** A first key segment for every record (no `:`), to share a storage with other data. */
  base?: string;
  /** A lock of your own (e.g. for a single process); without it `lock` rejects with code "UNSUPPORTED". */
  lock?: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
  /** Each driver call rejects with code "TIMEOUT" past this many ms (the call itself may still land). Default: none (0). */
  timeoutMs?: number;
  /** Once aborted, pending and later calls reject with code "ABORTED". */
  signal?: AbortSignal;
}

export interface UnstorageHost extends StorageHost {
  /** What a bridged driver can promise: exclusive create is a check then a write; no locks unless given. */
  readonly guarantees: { exclusiveCreate: "check-then-write"; atomicReplace: "driver"; locks: boolean };
  lock<T>(name: string, fn: () => Promise<T>): Promise<T>;
}

/** A StorageHost over any unstorage driver; sessions and conversations need a `lock` (refused with "UNSUPPORTED"). No `readRange`: unstorage reads whole values. */
export function unstorageStorage(options: UnstorageStorageOptions): UnstorageHost;
/** The unstorage key of a toolctx path (percent-encodes `% : / \ ? # $` and a final `.`), under `base`. */
export function keyOf(path: string, base?: string): string;
/** The path (no leading "/") of a key made by keyOf, without its base. */
export function pathOf(key: string): string;
