import type { StorageHost } from "../index.js";

export interface DenoStorageOptions {
  /** `"strict"`: fsync new files so they survive power loss. Default: survive process crashes. */
  durability?: "default" | "strict";
}

/** A StorageHost over Deno's file APIs (folders 0700, files 0600). Needs --allow-read and --allow-write. */
export function denoStorage(options?: DenoStorageOptions): StorageHost;
