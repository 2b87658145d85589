import type { StorageHost } from "./host.js";
import type { NodeStorageOptions } from "./node.js";

/** A StorageHost for Bun: the Node adapter, creating new files up to 1 MiB with blocking calls (faster under Bun). */
export function bunStorage(options?: NodeStorageOptions): StorageHost;
