// toolctx/redis: a StorageHost over Redis, for fleets of Node, Bun and Deno processes
// that share one store. The client is npm `redis` (node-redis, an optional peer
// dependency), created from `url` or handed in as `client`.
//
// Layout under `prefix` (default "toolctx:"):
//   f:<path>   the record's bytes (a string key)
//   d:<dir>    a sorted set of the folder's children ("name", "sub/"), all at score 0
//   l:<name>   a lock: a random token, with a lease (PX); n:<name> its fencing counter
// It is a key-value store (base/key-value.js) that keeps its folders itself: every write,
// append and remove is one Lua script that changes the value and the folder sets
// together, so a listing never misses a record that a read would find (and `exclusive`
// is checked in the same step: SET NX semantics, atomic).
// readRange is GETRANGE in a script that tells a missing key (nil) from a range past the
// end of a value (""), which GETRANGE alone answers alike.
// All keys of one store must live on one node: with Redis Cluster, put a hash tag in
// the prefix ("{toolctx}:").

import { Buffer } from "node:buffer";
import { toolctxError } from "../errors.js";
import { AUTH_MESSAGE, backendFailure } from "./base/backend.js";
import { deadlineOf, withDeadline } from "./base/deadline.js";
import { keyValueStorage } from "./base/key-value.js";
import { leaseLock, lockOptions } from "./base/lease-lock.js";

const WRITE = `
if ARGV[1] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if ARGV[1] == 'a' then redis.call('APPEND', KEYS[1], ARGV[2]) else redis.call('SET', KEYS[1], ARGV[2]) end
for i = 2, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[i + 1]) end
return 1`;

// KEYS[1]: the file (or the folder set, for removeDir); KEYS[i]: the set holding ARGV[i - 1].
// A folder set left empty is gone (Redis drops empty sets), so its name leaves its parent.
const REMOVE = `
if ARGV[#ARGV] == 'dir' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
else
  redis.call('DEL', KEYS[1])
end
for i = 2, #KEYS do
  redis.call('ZREM', KEYS[i], ARGV[i - 1])
  if redis.call('EXISTS', KEYS[i]) == 1 then break end
end
return 1`;

// GETRANGE's end is inclusive: ARGV[2] is offset + length - 1 (length ≥ 1).
const READ_RANGE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('GETRANGE', KEYS[1], ARGV[1], ARGV[2])`;

const ACQUIRE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end
return 0`;

const REFRESH = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

const BLOB_STRING = 36; // RESP "$": bulk strings come back as Buffers, so bytes round-trip
const REDIS_MAX_VALUE = 512 * 1024 * 1024;

/** `path` split into its folder and its name: "a/b/c.json" → ["a/b", "c.json"]. */
function splitPath(path) {
  const slash = path.lastIndexOf("/");
  return slash === -1 ? ["", path] : [path.slice(0, slash), path.slice(slash + 1)];
}

/** A folder path without its trailing slashes ("a/b/" → "a/b"). */
const folder = (dir) => dir.replace(/\/+$/, "");

/** What an operation of a redisStorage after its close() rejects with. */
const closedError = () => toolctxError("STORAGE", "redisStorage was closed: it opens no connection after close()");

/**
 * @param {import("./redis.d.ts").RedisStorageOptions} [options]
 * @returns {import("./redis.d.ts").RedisStorage}
 */
export function redisStorage(options = {}) {
  const prefix = options.prefix ?? "toolctx:";
  const deadline = deadlineOf(options, "redisStorage", 10_000, ["timeout"]);
  const maxValue = options.maxValueBytes ?? REDIS_MAX_VALUE;
  const owned = options.client === undefined;
  let client = options.client;
  let connecting;
  /** Whether close() was called: no connection is opened after it (work still in flight,
   * such as a manager's background index write, would open one that nobody closes). */
  let closed = false;
  const shas = new Map();

  async function connect() {
    if (client === undefined) {
      let createClient;
      try {
        ({ createClient } = await import("redis"));
      } catch (err) {
        throw toolctxError("INVALID_ARGUMENT", "toolctx/redis needs the npm package `redis` (npm install redis), or a `client`", { cause: err });
      }
      if (closed) throw closedError();
      try {
        client = createClient({
          url: options.url ?? "redis://127.0.0.1:6379",
          socket: {
            connectTimeout: deadline.timeoutMs,
            // wrong credentials stay wrong: give up at once; a server away may come back
            reconnectStrategy: (n, cause) => (AUTH_MESSAGE.test(String(cause?.message)) ? cause : Math.min(50 * 2 ** n, 2000)),
          },
        });
      } catch {
        // No cause: Node's URL error carries the whole URL, password and all, as `input`.
        throw toolctxError(
          "INVALID_ARGUMENT",
          "toolctx/redis: options.url is not a valid redis:// or rediss:// URL (percent-encode any of : / ? # [ ] @ % in the user name or password)",
        );
      }
      // Connection errors surface as rejected commands; without a listener they would crash the process.
      client.on("error", () => {});
    }
    if (!client.isOpen) await client.connect();
    return client;
  }

  /**
   * Sends one command under the deadline; bulk strings come back as Buffers. A failure is
   * typed by base/backend.js, which never quotes a refusal of credentials (the URL may
   * hold the password).
   */
  async function command(op, path, args) {
    try {
      return await withDeadline(`redis ${op} ${path}`, deadline, async (abortSignal) => {
        if (closed && owned) throw closedError();
        connecting ??= connect().catch((err) => {
          connecting = undefined; // the next operation tries again
          throw err;
        });
        const connected = await connecting;
        return connected.sendCommand(args, { abortSignal, typeMapping: { [BLOB_STRING]: Buffer } });
      });
    } catch (err) {
      throw backendFailure(`redis ${op} ${path}`, err);
    }
  }

  /** Runs a Lua script by its SHA1, loading it once per store (and again if the server forgot it). */
  async function script(op, path, source, keys, argv) {
    for (let attempt = 0; ; attempt++) {
      let sha = shas.get(source);
      if (sha === undefined) {
        sha = String(await command("SCRIPT LOAD", path, ["SCRIPT", "LOAD", source]));
        shas.set(source, sha);
      }
      try {
        return await command(op, path, ["EVALSHA", sha, String(keys.length), ...keys, ...argv]);
      } catch (err) {
        // a restarted or flushed server has no scripts: load it again, once
        if (attempt > 0 || !String(err.cause?.message).startsWith("NOSCRIPT")) throw err;
        shas.delete(source);
      }
    }
  }

  const fileKey = (path) => `${prefix}f:${path}`;
  const dirKey = (dir) => `${prefix}d:${folder(dir)}`;

  /** The folder sets from `path`'s parent up to the root, and the member each one holds. */
  function ancestry(path) {
    const keys = [];
    const members = [];
    let [dir, name] = splitPath(folder(path));
    for (;;) {
      keys.push(dirKey(dir));
      members.push(name);
      if (dir === "") break;
      [dir, name] = splitPath(dir);
      name = `${name}/`;
    }
    return { keys, members };
  }

  /** Writes (mode "0"), creates ("1") or appends ("a") with the folder sets; false when a create found the path taken. */
  async function put(op, path, bytes, mode) {
    if (bytes.length > maxValue) {
      throw toolctxError("TOO_LARGE", `redis ${op} ${path}: ${bytes.length} bytes is over the ${maxValue}-byte value limit; nothing was written`);
    }
    const { keys, members } = ancestry(path);
    const done = await script(op, path, WRITE, [fileKey(path), ...keys], [mode, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), ...members]);
    return Number(done) !== 0;
  }

  // A lease: SET NX PX with a fencing counter; refreshed and released only while the key holds our token.
  const lock = leaseLock(
    {
      async acquire(name, token, leaseMs) {
        const fence = Number(await script("lock", name, ACQUIRE, [`${prefix}l:${name}`, `${prefix}n:${name}`], [token, String(leaseMs)]));
        return fence > 0 ? { name, token, fencingToken: fence } : undefined;
      },
      refresh: async ({ name, token }, leaseMs) => Number(await script("lock refresh", name, REFRESH, [`${prefix}l:${name}`], [token, String(leaseMs)])) !== 0,
      release: async ({ name, token }) => Number(await script("unlock", name, RELEASE, [`${prefix}l:${name}`], [token])) !== 0,
    },
    { label: "redis lock", ...lockOptions(options, "redisStorage", { lease: ["lockTtlMs"] }) },
  );

  return {
    ...keyValueStorage({
      description: `redis storage (prefix ${prefix})`,
      maxValueBytes: maxValue,
      async get(path) {
        const value = await command("read", path, ["GET", fileKey(path)]);
        return value == null ? undefined : new Uint8Array(value.buffer, value.byteOffset, value.length);
      },
      /** GETRANGE in one script with EXISTS: nil for a missing key, bytes (maybe none) for a range of one. */
      async getRange(path, offset, length) {
        const value = await script("read range", path, READ_RANGE, [fileKey(path)], [String(offset), String(offset + length - 1)]);
        return value == null ? undefined : new Uint8Array(value.buffer, value.byteOffset, value.length);
      },
      put: (path, bytes) => put("write", path, bytes, "0"),
      /** SET NX semantics, checked in the script that writes: atomic. */
      create: (path, bytes) => put("write", path, bytes, "1"),
      append: (path, bytes) => put("append", path, bytes, "a"),
      async delete(path) {
        const { keys, members } = ancestry(path);
        await script("remove", path, REMOVE, [fileKey(path), ...keys], [...members, "file"]);
      },
      async removeDir(path) {
        const { keys, members } = ancestry(path);
        members[0] = `${members[0]}/`;
        await script("removeDir", path, REMOVE, [dirKey(path), ...keys], [...members, "dir"]);
      },
      /** Redis keeps each folder's children in a sorted set: the listing is that set. */
      async children(dir) {
        const names = await command("list", dir, ["ZRANGE", dirKey(dir), "0", "-1"]);
        return names.map((name) => name.toString("utf8"));
      },
      lock,
    }),
    async close() {
      closed = true;
      connecting = undefined;
      if (!owned || client === undefined) return;
      if (client.isReady) await client.close();
      else client.destroy(); // never connected, or reconnecting: stop trying
      client = undefined;
    },
  };
}
