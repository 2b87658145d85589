// The key-value base (pkg-template/adapters/base/key-value.js) on its own, over a Map:
// what every key-value adapter inherits from it. The adapters themselves pass the
// conformance suite in their runtimes (node.test.mjs, unstorage.test.mjs, tests/edge,
// tests/servers, the Deno KV and browser suites).
//   node --test tests/js/key-value-adapter.test.mjs   (after `make pkg`)

import { test } from "node:test";
import assert from "node:assert/strict";
import { inspect } from "node:util";
import { keyValueStorage } from "../../pkg/adapters/base/key-value.js";

/** A backend over a Map; `async` makes every primitive answer in a Promise. */
function mapBackend({ async = false, atomic = true } = {}) {
  const values = new Map();
  const answer = (value) => (async ? Promise.resolve(value) : value);
  const backend = {
    description: "a map",
    get: (path) => answer(values.get(path)),
    put: (path, bytes) => answer(void values.set(path, bytes)),
    delete: (path) => answer(void values.delete(path)),
    keys: (prefix) => answer([...values.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length))),
  };
  if (atomic) backend.create = (path, bytes) => answer(!values.has(path) && Boolean(values.set(path, bytes)));
  return { values, backend };
}

test("key-value base: a backend that answers synchronously makes a host that answers synchronously", () => {
  const { backend } = mapBackend();
  const host = keyValueStorage(backend);
  assert.equal(host.write("a/b.json", "x"), undefined);
  assert.deepEqual(host.read("a/b.json"), new TextEncoder().encode("x"));
  assert.deepEqual(host.list("a"), ["b.json"]);
  assert.throws(() => host.write("a/b.json", "y", { exclusive: true }), { code: "EEXIST" });
  assert.equal(host.remove("a/b.json"), undefined);
  assert.equal(host.removeDir("a"), undefined);
});

test("key-value base: list gives direct children, sub-folders once with a trailing '/', sorted; [] for a missing folder", async () => {
  const host = keyValueStorage(mapBackend({ async: true }).backend);
  for (const path of ["d/z.json", "d/a.json", "d/sub/x.json", "d/sub/deeper/y.json", "dx/no.json", "top.json"]) await host.write(path, "1");
  assert.deepEqual(await host.list("d"), ["a.json", "sub/", "z.json"]);
  assert.deepEqual(await host.list("d/"), ["a.json", "sub/", "z.json"]);
  assert.deepEqual(await host.list(""), ["d/", "dx/", "top.json"]);
  assert.deepEqual(await host.list("missing"), []);
});

test("key-value base: without an atomic create, an exclusive write checks then puts and refuses a taken path with EEXIST", async () => {
  const { values, backend } = mapBackend({ async: true, atomic: false });
  const host = keyValueStorage(backend);
  await host.write("r.json", "first", { exclusive: true });
  const err = await host.write("r.json", "second", { exclusive: true }).then(() => assert.fail("written"), (e) => e);
  assert.equal(err.code, "EEXIST");
  assert.equal(err.name, "ToolctxError");
  assert.equal(new TextDecoder().decode(values.get("r.json")), "first");
});

test("key-value base: the backend gets a copy of the bytes, never the caller's buffer", () => {
  const { values, backend } = mapBackend();
  const host = keyValueStorage({ ...backend, append: (path, bytes) => values.set(path, bytes) });
  const mine = new Uint8Array([1, 2, 3]);
  host.write("w", mine);
  host.append("a", mine);
  mine[0] = 9;
  assert.deepEqual([...values.get("w")], [1, 2, 3]);
  assert.deepEqual([...values.get("a")], [1, 2, 3]);
});

test("key-value base: append and lock only where the backend has them; removeDir is the backend's where it keeps folders", () => {
  const { backend } = mapBackend();
  const plain = keyValueStorage(backend);
  assert.equal("append" in plain, false);
  assert.equal("lock" in plain, false);
  const removed = [];
  const lock = async (name, fn) => fn();
  const rich = keyValueStorage({ ...backend, append() {}, lock, removeDir: (path) => removed.push(path), children: () => ["x/"] });
  assert.equal(rich.lock, lock);
  assert.equal(typeof rich.append, "function");
  rich.removeDir("p");
  assert.deepEqual(removed, ["p"]);
  assert.deepEqual(rich.list("anything"), ["x/"]);
});

test("backend failures: one classification (base/backend.js) gives every adapter's backend errors their codes", async () => {
  const { classify, backendFailure, answerFailure } = await import("../../pkg/adapters/base/backend.js");
  assert.equal(classify(Object.assign(new Error("late"), { code: "TIMEOUT" })), "TIMEOUT", "a code of the table is kept");
  assert.equal(classify(Object.assign(new Error("full"), { code: "ENOSPC" })), "QUOTA_EXCEEDED");
  assert.equal(classify(Object.assign(new Error("full"), { name: "QuotaExceededError" })), "QUOTA_EXCEEDED");
  assert.equal(classify(new Error("WRONGPASS invalid username-password pair")), "UNAUTHORIZED");
  assert.equal(classify(undefined, { status: 403, backendCode: "AccessDenied" }), "UNAUTHORIZED");
  assert.equal(classify(undefined, { status: 412 }), "EEXIST");
  assert.equal(classify(undefined, { status: 404, backendCode: "NoSuchBucket" }), "NOT_FOUND");
  assert.equal(classify(undefined, { status: 400, backendCode: "EntityTooLarge" }), "TOO_LARGE");
  assert.equal(classify(new Error("connection reset")), "STORAGE");

  const secret = "redis://user:hunter2@host";
  const refused = backendFailure("redis read a.json", new Error(`WRONGPASS for ${secret}`));
  assert.equal(refused.code, "UNAUTHORIZED");
  assert.ok(!inspect(refused, { depth: 20 }).includes("hunter2"), `no secret in the message or the cause: ${inspect(refused, { depth: 20 })}`);
  const failed = backendFailure("R2 get of \"k\"", new Error("boom (10020)"), { r2Code: 10020 });
  assert.deepEqual([failed.code, failed.r2Code, failed.cause.message], ["STORAGE", 10020, "boom (10020)"]);
  const answer = answerFailure("s3 read k: 503 SlowDown", { status: 503, backendCode: "SlowDown" }, { status: 503, s3Code: "SlowDown" });
  assert.deepEqual([answer.code, answer.status, answer.s3Code, answer.message], ["STORAGE", 503, "SlowDown", "s3 read k: 503 SlowDown"]);
});

test("the queue lock (memory, S3's process lock, Durable Objects): {wait: false} while held is TIMEOUT at once; a waiter runs after", async () => {
  const { memoryStorage } = await import("../../pkg/adapters/memory.js");
  const { lock } = memoryStorage();
  let release;
  const holding = lock("/l.lock", () => new Promise((resolve) => (release = resolve)));
  await assert.rejects(lock("/l.lock", async () => "never", { wait: false }), (err) => err.code === "TIMEOUT");
  const waiter = lock("/l.lock", async () => "after");
  release("first");
  assert.deepEqual(await Promise.all([holding, waiter]), ["first", "after"]);
  assert.equal(await lock("/l.lock", async () => "free", { wait: false }), "free");
});

test("a backend without a primitive the base needs is INVALID_ARGUMENT when the storage is made", () => {
  const backend = { get() {}, put() {}, delete() {} };
  assert.throws(() => keyValueStorage(backend), (err) => err.code === "INVALID_ARGUMENT" && /keys or children/.test(err.message));
  assert.throws(() => keyValueStorage({ ...backend, keys: () => [], get: undefined }), (err) => err.code === "INVALID_ARGUMENT" && /get\(\)/.test(err.message));
});

test("key-value base: readRange only where the backend has getRange; bad arguments reject, length 0 asks for one byte", async () => {
  const { values, backend } = mapBackend();
  assert.equal("readRange" in keyValueStorage(backend), false);
  const asked = [];
  const getRange = (path, offset, length) => {
    asked.push([path, offset, length]);
    return values.get(path)?.slice(offset, offset + length);
  };
  const host = keyValueStorage({ ...backend, getRange });
  host.write("f", new Uint8Array([1, 2, 3, 4]));
  assert.deepEqual([...host.readRange("f", 1, 2)], [2, 3], "a synchronous backend answers synchronously");
  assert.deepEqual([...host.readRange("f", 3, 0)], [], "length 0 of a file: empty");
  assert.equal(host.readRange("missing", 3, 0), undefined, "length 0 of no file: undefined");
  assert.deepEqual(asked, [["f", 1, 2], ["f", 0, 1], ["missing", 0, 1]], "length 0 asks for one byte at 0: the file's existence");
  for (const [offset, length] of [[-1, 1], [0, 1.5], ["3", 1], [0, undefined]]) {
    const answer = host.readRange("f", offset, length);
    assert.ok(answer instanceof Promise, `readRange(${offset}, ${length}) rejects, never throws`);
    await assert.rejects(answer, { code: "INVALID_ARGUMENT" });
  }
  assert.equal(asked.length, 3, "a bad range never reaches the backend");
});

test("readRange is on every adapter whose medium reads a part of a file, so the conformance suite's readRange tests run there, and on no other", async () => {
  const { nodeStorage } = await import("../../pkg/adapters/node.js");
  const { bunStorage } = await import("../../pkg/adapters/bun.js");
  const { memoryStorage } = await import("../../pkg/adapters/memory.js");
  const { opfsStorage } = await import("../../pkg/adapters/opfs.js");
  const { indexedDbStorage } = await import("../../pkg/adapters/indexeddb.js");
  const { s3Storage } = await import("../../pkg/adapters/s3.js");
  const { redisStorage } = await import("../../pkg/adapters/redis.js");
  const { denoKvStorage } = await import("../../pkg/adapters/deno-kv.js");
  const { r2Storage, kvStorage, durableObjectStorage } = await import("../../pkg/adapters/cloudflare.js");
  const { unstorageStorage } = await import("../../pkg/adapters/unstorage.js");
  const { fromFileSystem } = await import("../../pkg/adapters/seed-fs.js");
  const nothing = async () => undefined;
  const sql = { exec: () => Object.assign([], { toArray: () => [] }) };
  const unstorage = { getItemRaw: nothing, setItemRaw: nothing, hasItem: nothing, removeItem: nothing, getKeys: async () => [] };
  const withRanges = {
    node: nodeStorage(),
    bun: bunStorage(),
    memory: memoryStorage(),
    opfs: opfsStorage(),
    indexeddb: indexedDbStorage(),
    s3: s3Storage({ bucket: "b", endpoint: "http://127.0.0.1:1" }),
    redis: redisStorage(),
    "deno-kv": denoKvStorage({ kv: { atomic() {}, list() {} } }),
    r2: r2Storage({ get: nothing, put: nothing, list: nothing }),
    "durable object": durableObjectStorage({ sql, transactionSync: (fn) => fn() }),
  };
  const without = {
    "workers kv": kvStorage({ get: nothing, list: nothing }),
    unstorage: unstorageStorage({ storage: unstorage }),
    "seed IFileSystem": fromFileSystem({ readFile: nothing, writeFile: nothing, readdir: nothing, unlink: nothing }),
  };
  for (const [name, host] of Object.entries(withRanges)) assert.equal(typeof host.readRange, "function", `${name} has readRange`);
  for (const [name, host] of Object.entries(without)) assert.equal("readRange" in host, false, `${name} has no readRange`);
  await withRanges.redis.close();
});

test("r2Storage readRange: after R2 refuses a range, a head tells a range past the end (empty) or a gone object from a failure", async () => {
  const { r2Storage } = await import("../../pkg/adapters/cloudflare.js");
  let size = 10;
  let headFails = false;
  const bucket = {
    async get(key, { range }) {
      if (range.offset >= size) throw new Error("get: The requested range is not satisfiable (10039)");
      throw new Error("get: We encountered an internal error (10001)");
    },
    async head() {
      if (headFails) throw new Error("head: We encountered an internal error (10001)");
      return size === undefined ? null : { etag: "e", size };
    },
    put: async () => null,
    list: async () => ({ objects: [], truncated: false }),
  };
  const s = r2Storage(bucket);
  assert.deepEqual([...(await s.readRange("f", 10, 5))], [], "at the end: empty");
  assert.deepEqual([...(await s.readRange("f", 11, 5))], [], "past the end: empty");
  const failed = await s.readRange("f", 3, 5).then(() => assert.fail("resolved"), (e) => e);
  assert.equal(failed.code, "STORAGE", "a range within the object: the get's failure");
  assert.equal(failed.r2Code, 10001);
  headFails = true;
  assert.equal((await s.readRange("f", 11, 5).then(() => assert.fail("resolved"), (e) => e)).r2Code, 10039, "the head failed too: the get's error");
  headFails = false;
  size = undefined;
  assert.equal(await s.readRange("f", 11, 5), undefined, "gone meanwhile");
});
