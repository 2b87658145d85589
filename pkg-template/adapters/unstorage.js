// toolctx/unstorage: a StorageHost over any unstorage `Storage` (npm `unstorage`, an
// optional peer: this file imports nothing from it), so every unstorage driver (Vercel
// Blob, Netlify Blobs, Upstash, Azure, MongoDB, fs, memory, ...) can hold records.
//
// Keys. unstorage turns "/" and "\" into ":", drops what follows "?", squeezes and trims
// ":", refuses "." and ".." segments, and hides keys ending in "$" (its meta keys). So a
// path's segments are joined with ":" after percent-encoding, in each segment, "%" ":" "/"
// "\" "?" "#" "$" and a final "." (which the fs drivers read as a traversal when two dots
// end a segment). The mapping is reversible (`pathOf(keyOf(p))`), case is kept, and a
// leading "/" or an empty segment does not matter (KV stores have no root).
//
// What a bridged driver cannot promise (see `guarantees`):
//   - exclusive create is a check (`hasItem`) then a write: two racing writers can both
//     "win". toolctx's record names carry a random part, so plain saves stay unique;
//   - atomic replace depends on the driver (unstorage's fs driver truncates then writes);
//   - locks: none. `lock` rejects with code "UNSUPPORTED" rather than pretending, so the
//     features that need one (sessions, whose manifest is locked; conversations;
//     cleanupStaleSessions) are refused, unless the caller passes a `lock` of their own.

import { toolctxError } from "../errors.js";
import { backendCall } from "./base/backend.js";
import { deadlineOf } from "./base/deadline.js";
import { keyValueStorage } from "./base/key-value.js";

const encoder = new TextEncoder();
const UNSAFE = /[%:/\\?#$]|\.$/g;
const invalid = (message) => toolctxError("INVALID_ARGUMENT", message);

function encodeSegment(segment) {
  return segment.replace(UNSAFE, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

function decodeSegment(segment) {
  return segment.replace(/%([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
}

/** The unstorage key of a toolctx path: "/a/b:c/d.json" → "a:b%3Ac:d.json" (under `base`). */
export function keyOf(path, base = "") {
  const parts = String(path).split("/").filter((s) => s !== "").map(encodeSegment);
  return [base, ...parts].filter((s) => s !== "").join(":");
}

/** The path of an unstorage key (without its `base`), with no leading "/". */
export function pathOf(key) {
  return key.split(":").map(decodeSegment).join("/");
}

function toBytes(value, key) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (typeof value === "string") return encoder.encode(value);
  throw toolctxError("STORAGE", `unstorage returned neither bytes nor a string for ${key}`);
}

function checkOptions(options) {
  if (options === null || typeof options !== "object") throw invalid("unstorageStorage(options): options must be an object");
  const { storage, base = "", lock } = options;
  const methods = ["getItemRaw", "setItemRaw", "hasItem", "removeItem", "getKeys"];
  if (!storage || !methods.every((m) => typeof storage[m] === "function")) {
    throw invalid("unstorageStorage({storage}): storage must be an unstorage Storage (createStorage({driver}))");
  }
  if (typeof base !== "string" || /[:/\\?#$]/.test(base)) throw invalid("unstorageStorage({base}): base must be a key segment without : / \\ ? # $");
  if (lock !== undefined && typeof lock !== "function") throw invalid("unstorageStorage({lock}): lock must be a function (name, fn)");
  return { storage, base, lock, deadline: deadlineOf(options, "unstorageStorage") };
}

/**
 * @param {import("./unstorage.d.ts").UnstorageStorageOptions} options
 * @returns {import("./unstorage.d.ts").UnstorageHost}
 */
export function unstorageStorage(options) {
  const { storage, base, lock, deadline } = checkOptions(options ?? null);
  const key = (path) => keyOf(path, base);
  const prefix = base ? `${base}:` : "";

  /** One driver call, bounded by `timeoutMs` and `signal`; a driver's error is the cause of a STORAGE one. */
  const call = (op, what, run) => backendCall(`unstorage ${op} ${what}`, deadline, () => run());

  return {
    ...keyValueStorage({
      description: `unstorage storage${base ? ` (base ${base})` : ""}`,
      async get(path) {
        const k = key(path);
        const value = await call("read", k, () => storage.getItemRaw(k));
        return value === null || value === undefined ? undefined : toBytes(value, k);
      },
      async put(path, bytes) {
        const k = key(path);
        await call("write", k, () => storage.setItemRaw(k, bytes));
      },
      /** No atomic create in unstorage: the base checks, then puts (see above). */
      has(path) {
        const k = key(path);
        return call("write", k, () => storage.hasItem(k));
      },
      async delete(path) {
        const k = key(path);
        await call("remove", k, () => storage.removeItem(k));
      },
      /** getKeys(folder) gives every key below it; a child is its first segment, decoded. */
      async keys(folder) {
        const d = key(folder);
        const under = d === "" ? "" : `${d}:`;
        const found = [];
        for (const k of await call("list", d, () => storage.getKeys(d))) {
          if (!k.startsWith(under) || !k.startsWith(prefix)) continue;
          const rest = k.slice(under.length).split(":");
          found.push(rest.length === 1 ? decodeSegment(rest[0]) : `${decodeSegment(rest[0])}/`);
        }
        return found;
      },
      async lock(name, fn, options) {
        if (lock) return lock(name, fn, options);
        throw toolctxError(
          "UNSUPPORTED",
          `toolctx/unstorage has no lock (an unstorage driver has no atomic check-and-set), so ${name} cannot be locked: ` +
            "sessions and conversations need a storage with locks (toolctx/deno-kv, toolctx/redis, a file system) or a `lock` option of your own",
        );
      },
    }),
    guarantees: { exclusiveCreate: "check-then-write", atomicReplace: "driver", locks: lock !== undefined },
  };
}
