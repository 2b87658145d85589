// toolctx/bun: the Node adapter, tuned for Bun.
//
// Measured under Bun 1.4 (bench/bun-io.mjs): creating a file with blocking
// openSync(O_EXCL) + writeSync + closeSync runs as fast as Bun.write (about 31,000
// 1 KB files/s) and three times faster than fs.promises, while Bun.write cannot create
// exclusively. Reading with Bun.file().bytes() is no faster than fs.readFile (one
// native call, as the Node adapter reads past syncReadMaxBytes), which keeps
// O_NOFOLLOW; reads block up to Node's default (256 KiB): a sequential load of 64 KB
// records is faster so. So: new records up to 1 MiB are created synchronously; the
// rest is the Node adapter as it is.

import { nodeStorage } from "./node.js";

/**
 * @param {import("./node.d.ts").NodeStorageOptions} [options]
 * @returns {import("./host.js").StorageHost}
 */
export function bunStorage(options = {}) {
  return nodeStorage({ syncCreateMaxBytes: 1 << 20, description: "bun fs storage", ...options });
}
