// toolctx/bun: the Node adapter, tuned for Bun.
//
// Measured under Bun 1.4 (bench/bun-io.mjs): creating a file with blocking
// openSync(O_EXCL) + writeSync + closeSync runs as fast as Bun.write (about 31,000
// 1 KB files/s) and three times faster than fs.promises, while Bun.write cannot create
// exclusively. Reading with Bun.file().bytes() is no faster than fs.readFile, which
// keeps O_NOFOLLOW, and each asynchronous fs call costs a round trip that a blocking
// read of a record does not. So: records up to 1 MiB are created and read
// synchronously; the rest is the Node adapter as it is.

import { nodeStorage } from "./node.js";

/**
 * @param {import("./node.d.ts").NodeStorageOptions} [options]
 * @returns {import("../index.js").StorageHost}
 */
export function bunStorage(options = {}) {
  return nodeStorage({ syncCreateMaxBytes: 1 << 20, syncReadMaxBytes: 1 << 20, description: "bun fs storage", ...options });
}
