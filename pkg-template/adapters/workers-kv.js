// toolctx/cloudflare's kvStorage: records as values of a Workers KV namespace binding
// (`env.MY_KV`), over the key-value base, with no Cloudflare SDK.
//
// KV holds small values and is eventually consistent. It has no conditional write, so an
// exclusive write is the base's check then put: it refuses a name already visible here,
// but two writers racing on one name both succeed (record names carry a random part, so
// writers never pick one name). No lock, no append.

import { toolctxError } from "../errors.js";
import { backendCall } from "./base/backend.js";
import { keyValueStorage } from "./base/key-value.js";

const encoder = new TextEncoder();

/** Workers KV's limit on a value (25 MiB). */
export const KV_MAX_VALUE_BYTES = 25 * 1024 * 1024;
/** Workers KV's limit on a key (512 bytes of UTF-8). */
export const KV_MAX_KEY_BYTES = 512;

/** The HTTP status a binding error's message names ("... 429 ..."). */
const STATUS = /\b(\d{3})\b/;

/** A Workers KV binding call; its error typed (base/backend.js) with the HTTP status it names (`status`). */
function kv(op, key, call) {
  const status = (err) => Number(STATUS.exec(String(err?.message ?? ""))?.[1]) || undefined;
  return backendCall(`KV ${op} of ${JSON.stringify(key)}`, {}, call, (err) => ({ status: status(err) }));
}

/**
 * A StorageHost over a Workers KV namespace binding. `prefix` (default "") is put before
 * every path. Eventually consistent: see docs/storage.md for what it cannot promise.
 * @param {import("./cloudflare.d.ts").KVNamespaceLike} namespace
 * @param {import("./cloudflare.d.ts").KvStorageOptions} [options]
 * @returns {import("./cloudflare.d.ts").CloudflareStorage}
 */
export function kvStorage(namespace, { prefix = "" } = {}) {
  if (!namespace || typeof namespace.get !== "function" || typeof namespace.list !== "function") {
    throw toolctxError("INVALID_ARGUMENT", "kvStorage needs a KV namespace binding (env.MY_KV)");
  }
  const keyOf = (path) => {
    const key = prefix + path;
    const size = encoder.encode(key).length;
    if (size > KV_MAX_KEY_BYTES) {
      throw toolctxError("TOO_LARGE", `TOO_LARGE: KV keys are at most ${KV_MAX_KEY_BYTES} bytes; ${JSON.stringify(path)} makes ${size}`);
    }
    return key;
  };
  return keyValueStorage({
    description: "KV storage: eventually consistent, exclusive create is a read then a put",
    maxValueBytes: KV_MAX_VALUE_BYTES,
    async get(path) {
      const key = keyOf(path);
      const value = await kv("get", key, () => namespace.get(key, "arrayBuffer"));
      return value === null ? undefined : new Uint8Array(value);
    },
    async put(path, bytes) {
      const key = keyOf(path);
      if (bytes.length > KV_MAX_VALUE_BYTES) {
        throw toolctxError("TOO_LARGE", `TOO_LARGE: KV values are at most 25 MiB; ${path} has ${bytes.length} bytes`, {
          size: bytes.length,
          limit: KV_MAX_VALUE_BYTES,
        });
      }
      await kv("put", key, () => namespace.put(key, bytes));
    },
    async delete(path) {
      const key = keyOf(path);
      await kv("delete", key, () => namespace.delete(key));
    },
    /** KV lists keys by prefix without a delimiter: every key below `folder` is paged through. */
    async keys(folder) {
      const within = prefix + folder;
      const found = [];
      let cursor;
      do {
        const page = await kv("list", within, () => namespace.list({ prefix: within, cursor }));
        for (const { name } of page.keys) found.push(name.slice(within.length));
        cursor = page.list_complete ? undefined : page.cursor;
      } while (cursor);
      return found;
    },
  });
}
