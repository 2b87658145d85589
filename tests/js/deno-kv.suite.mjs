// toolctx/deno-kv under the real `deno` binary (npm `deno`) and its local KV (SQLite files
// in a temp folder): the shared conformance suites, the adapter's own guarantees (exclusive
// create, chunking over 64 KiB with no partial record visible, locks with expiry and
// owner-checked release), bad input, and many deno processes writing one KV file.
//   deno test -A --unstable-kv --no-check tests/js/deno-kv.suite.mjs

import assert from "node:assert/strict";
import * as toolctx from "toolctx";
import { ContextManager, ConversationStore } from "toolctx";
import { denoKvStorage } from "toolctx/deno-kv";
import { runConversationTests } from "./conversation.mjs";
import { runWindowTests } from "./window.mjs";
import { expectRejection, runLockTests, runSeedApiTests, runSessionTests, runStorageHostTests, toText } from "./conformance.mjs";
import { runManyWriterTests } from "./many-writers.mjs";
import { denoTest as test } from "../deno-test.mjs";

const top = await Deno.makeTempDir({ prefix: "toolctx-denokv-" });
let n = 0;
const fresh = (tag) => `${top}/${tag}-${n++}`;
const kv = await Deno.openKv(`${top}/shared.sqlite`);
globalThis.addEventListener("unload", () => {
  kv.close();
  Deno.removeSync(top, { recursive: true });
});

const name = "deno-kv";
const makeStorage = () => denoKvStorage({ kv });
runStorageHostTests({ name, makeStorage, test, assert, tmpDir: () => fresh("host") });
runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("seed") });
runSessionTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("session") });
runLockTests({ name, makeStorage, test, assert, tmpDir: () => fresh("lock") });
runConversationTests(test, assert, makeStorage, { ConversationStore, name, contextDir: () => fresh("conv") });
runWindowTests(test, assert, makeStorage, { api: toolctx, name, contextDir: () => fresh("window") });

const t = (title, fn) => test(`[deno-kv] ${title}`, fn);
const bytesOf = (size, seed) => {
  const b = new Uint8Array(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
};
const countKeys = async (prefix) => {
  let count = 0;
  for await (const _ of kv.list({ prefix })) count++;
  return count;
};

t("a path is the key [prefix, 'file', ...segments]; data lives under [prefix, 'data', generation, i]", async () => {
  const s = denoKvStorage({ kv, prefix: ["keys-test", 1] });
  await s.write("/a/b/c.json", "hello");
  const head = await kv.get(["keys-test", 1, "file", "a", "b", "c.json"]);
  assert.equal(head.value.size, 5);
  assert.equal(head.value.chunks, 1);
  const chunk = await kv.get(["keys-test", 1, "data", head.value.gen, 0]);
  assert.equal(new TextDecoder().decode(chunk.value), "hello");
  assert.deepEqual(await s.list("/a"), ["b/"]);
  assert.deepEqual(await s.list("a/b"), ["c.json"], "a leading '/' and empty segments do not matter");
});

t("values over 64 KiB are chunked; within the atomic limits in one commit, beyond them chunks first and the head last", async () => {
  const s = denoKvStorage({ kv, prefix: "chunks" });
  for (const size of [65536, 65537, 700 * 1024, 3 * 1024 * 1024 + 5]) {
    const p = `/big/${size}.bin`;
    const data = bytesOf(size, size & 0xff);
    await s.write(p, data, { exclusive: true });
    const head = (await kv.get(["chunks", "file", "big", `${size}.bin`])).value;
    assert.equal(head.chunks, Math.ceil(size / 65536), `${size}: chunk count`);
    assert.deepEqual(await s.read(p), data, `${size}: bytes round-trip`);
  }
  const dataKeys = await countKeys(["chunks", "data"]);
  await s.write("/big/65537.bin", "small now");
  assert.equal(toText(await s.read("/big/65537.bin")), "small now");
  assert.equal(await countKeys(["chunks", "data"]), dataKeys - 2 + 1, "a replace deletes the old chunks");
  for (const p of await s.list("/big")) await s.remove(`/big/${p}`);
  assert.equal(await countKeys(["chunks", "data"]), 0, "remove deletes every chunk");
  assert.deepEqual(await s.list("/big"), []);
});

t("readRange reads only the chunks that hold the range: a range is read with the other chunks gone", async () => {
  const s = denoKvStorage({ kv, prefix: "ranges" });
  const data = bytesOf(1024 * 1024, 9);
  await s.write("/seg.bin", data);
  const { gen, chunks } = (await kv.get(["ranges", "file", "seg.bin"])).value;
  assert.equal(chunks, 16);
  // Chunks 3 and 4 hold [200,000, 300,000): every other one removed behind the adapter's back.
  for (let i = 0; i < chunks; i++) if (i !== 3 && i !== 4) await kv.delete(["ranges", "data", gen, i]);
  assert.deepEqual(await s.readRange("/seg.bin", 200_000, 100_000), data.subarray(200_000, 300_000));
  assert.deepEqual(await s.readRange("/seg.bin", 4 * 65536, 65536), data.subarray(4 * 65536, 5 * 65536), "one whole chunk");
});

t("a reader never sees a partial record while a writer replaces a value larger than one atomic commit", async () => {
  const s = denoKvStorage({ kv, prefix: "torn" });
  const other = await Deno.openKv(`${top}/shared.sqlite`); // a second connection, as another process
  const reader = denoKvStorage({ kv: other, prefix: "torn" });
  const versions = [bytesOf(2 * 1024 * 1024, 1), bytesOf(2 * 1024 * 1024 + 7, 2), bytesOf(100, 3)];
  await s.write("/r.bin", versions[0]);
  let writing = true;
  const writer = (async () => {
    for (let i = 1; i <= 12; i++) await s.write("/r.bin", versions[i % 3]);
    writing = false;
  })();
  let reads = 0;
  while (writing) {
    const got = await reader.read("/r.bin");
    assert.ok(versions.some((v) => v.length === got.length && v.every((b, i) => b === got[i])), "a whole version");
    reads++;
  }
  await writer;
  other.close();
  assert.ok(reads > 0);
});

t("exclusive create: of 20 racing writers on two connections exactly one wins, the others get EEXIST", async () => {
  const other = await Deno.openKv(`${top}/shared.sqlite`);
  const stores = [denoKvStorage({ kv, prefix: "race" }), denoKvStorage({ kv: other, prefix: "race" })];
  const results = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) => stores[i % 2].write("/one.json", `writer ${i}`, { exclusive: true })),
  );
  other.close();
  const won = results.filter((r) => r.status === "fulfilled");
  assert.equal(won.length, 1);
  for (const r of results.filter((r) => r.status === "rejected")) assert.equal(r.reason.code, "EEXIST");
  const winner = results.indexOf(won[0]);
  assert.equal(toText(await stores[0].read("/one.json")), `writer ${winner}`);
});

t("a lock is held across connections; a dead holder's lock expires; a late release never frees the next holder's lock", async () => {
  const other = await Deno.openKv(`${top}/shared.sqlite`);
  const a = denoKvStorage({ kv, prefix: "locks", lockTtlMs: 300 });
  const b = denoKvStorage({ kv: other, prefix: "locks", lockTtlMs: 300 });
  // mutual exclusion across two connections, held longer than the ttl (refreshed)
  let inside = 0;
  let most = 0;
  const hold = (s, ms) =>
    s.lock("/ctx/sessions/x.lock", async () => {
      most = Math.max(most, ++inside);
      await new Promise((r) => setTimeout(r, ms));
      inside--;
    });
  await Promise.all([hold(a, 700), hold(b, 50), hold(a, 50), hold(b, 700)]);
  assert.equal(most, 1, "never two holders, even past the ttl");
  // a holder that died: its entry has an expiry in the past
  const key = ["locks", "lock", "ctx", "sessions", "dead.lock"];
  await kv.set(key, { owner: "dead process", expiresAt: Date.now() - 1 });
  assert.equal(await b.lock("/ctx/sessions/dead.lock", async () => "taken over"), "taken over");
  assert.equal((await kv.get(key)).value, null, "released");
  // a holder that stalled past its expiry (no refresh) must not release the next holder's
  // lock, and learns it lost the lease: LOCK_LOST
  const stalled = denoKvStorage({ kv, prefix: "locks", lockTtlMs: 60_000 });
  let nextHolds;
  await expectRejection(
    assert,
    () =>
      stalled.lock("/ctx/sessions/late.lock", async () => {
        const entry = await kv.get(["locks", "lock", "ctx", "sessions", "late.lock"]);
        await kv.set(entry.key, { ...entry.value, expiresAt: Date.now() - 1 }); // as if its time ran out unrefreshed
        nextHolds = b.lock("/ctx/sessions/late.lock", () => new Promise((r) => setTimeout(() => r("next"), 200)));
        await new Promise((r) => setTimeout(r, 50));
      }),
    "LOCK_LOST",
    "stalled holder",
  );
  const during = await kv.get(["locks", "lock", "ctx", "sessions", "late.lock"]);
  assert.ok(during.value && during.value.owner !== undefined, "the next holder still holds it");
  assert.equal(await nextHolds, "next");
  other.close();
});

t("a lock whose refresh fails once (a transient error) keeps being refreshed: no second holder", async () => {
  let failing = false;
  const broken = { check() { return this; }, set() { return this; }, delete() { return this; }, commit: () => Promise.reject(new Error("transient network error")) };
  const flaky = {
    get: (...a) => kv.get(...a),
    getMany: (...a) => kv.getMany(...a),
    list: (...a) => kv.list(...a),
    atomic: () => (failing ? broken : kv.atomic()),
  };
  const a = denoKvStorage({ kv: flaky, prefix: "locks3", lockTtlMs: 300 });
  const b = denoKvStorage({ kv, prefix: "locks3", lockTimeoutMs: 400 });
  const held = a.lock("/l.lock", async () => {
    failing = true; // the first refresh (at 100 ms) fails
    await new Promise((r) => setTimeout(r, 150));
    failing = false;
    await new Promise((r) => setTimeout(r, 1000));
    return "a";
  });
  await new Promise((r) => setTimeout(r, 500)); // past the ttl: only refreshes keep it
  await expectRejection(assert, () => b.lock("/l.lock", async () => "b"), "TIMEOUT", "second holder");
  assert.equal(await held, "a");
});

t("a lock held by a live holder times out with TIMEOUT after lockWaitMs (or lockTimeoutMs, its deprecated name)", async () => {
  const a = denoKvStorage({ kv, prefix: "locks2", lockLeaseMs: 5_000 });
  let release;
  const held = a.lock("/l.lock", () => new Promise((r) => (release = r)));
  await new Promise((r) => setTimeout(r, 20));
  for (const options of [{ lockWaitMs: 150 }, { lockTimeoutMs: 150 }]) {
    const b = denoKvStorage({ kv, prefix: "locks2", ...options });
    const started = Date.now();
    await expectRejection(assert, () => b.lock("/l.lock", async () => "never"), "TIMEOUT", JSON.stringify(options));
    assert.ok(Date.now() - started < 2_000, `gave up after about 150 ms, not the default minute (${JSON.stringify(options)})`);
  }
  release();
  await held;
});

t("bad input: a path too long for a key is TOO_LARGE and writes nothing; a foreign entry is CORRUPT_RECORD; bad options are INVALID_ARGUMENT", async () => {
  const s = denoKvStorage({ kv, prefix: "bad" });
  const long = `/x/${"a".repeat(2100)}.json`;
  await expectRejection(assert, () => s.write(long, "x"), "TOO_LARGE", "long write");
  assert.deepEqual(await s.list("/x"), []);
  assert.equal(await s.read(long), undefined, "a key that cannot exist is missing");
  assert.throws(() => denoKvStorage({ kv: {} }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => denoKvStorage({ prefix: [{}] }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => denoKvStorage({ lockTtlMs: -1 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => denoKvStorage({ lockLeaseMs: 0 }), { code: "INVALID_ARGUMENT" });
  await kv.set(["bad", "file", "x", "foreign.json"], "not a head");
  await expectRejection(assert, () => s.read("/x/foreign.json"), "CORRUPT_RECORD", "foreign entry");
  await kv.delete(["bad", "file", "x", "foreign.json"]);
  const m = new ContextManager({ contextDir: "/x", fileSystem: s, persistThreshold: 0 });
  const err = await expectRejection(assert, () => m.saveContext("t", { a: 1 }, "v", { category: "a".repeat(2100) }));
  assert.ok(["INVALID_ARGUMENT", "STORAGE"].includes(err.code), err.code);
  assert.equal(m.size, 0);
});

t("requests: a new record is one commit, a replace a get and a commit, a load a get and a getMany per 10 chunks", async () => {
  const calls = [];
  const counting = {
    get: (...a) => (calls.push("get"), kv.get(...a)),
    getMany: (...a) => (calls.push("getMany"), kv.getMany(...a)),
    list: (...a) => (calls.push("list"), kv.list(...a)),
    atomic: () => {
      const op = kv.atomic();
      const commit = op.commit.bind(op);
      op.commit = () => (calls.push("commit"), commit());
      return op;
    },
  };
  const s = denoKvStorage({ kv: counting, prefix: "requests" });
  const count = async (fn) => {
    calls.length = 0;
    await fn();
    return calls.join(" ");
  };
  assert.equal(await count(() => s.write("/r.json", "x".repeat(1000), { exclusive: true })), "commit");
  assert.equal(await count(() => s.read("/r.json")), "get getMany");
  assert.equal(await count(() => s.write("/r.json", bytesOf(700 * 1024, 5))), "get commit");
  assert.equal(await count(() => s.read("/r.json")), "get getMany getMany");
  assert.equal(await count(() => s.write("/r.json", "small")), "get commit");
  assert.equal(await count(() => s.list("/")), "list");
  assert.equal(await count(() => s.remove("/r.json")), "get commit");
  assert.equal(await countKeys(["requests"]), 0, "nothing left behind");
});

t("a slow KV: timeoutMs rejects with TIMEOUT, an aborted signal with ABORTED; a save adds no pointer", async () => {
  const delay = (ms) => new Promise((r) => setTimeout(r, ms));
  // the real KV behind requests that take 300 ms, as a remote KV on a slow link
  const slow = {
    get: async (...a) => (await delay(300), kv.get(...a)),
    getMany: async (...a) => (await delay(300), kv.getMany(...a)),
    list: (...a) => kv.list(...a),
    atomic: () => {
      const op = kv.atomic();
      const commit = op.commit.bind(op);
      op.commit = async () => (await delay(300), commit());
      return op;
    },
  };
  const s = denoKvStorage({ kv: slow, prefix: "slow", timeoutMs: 50 });
  const started = Date.now();
  await expectRejection(assert, () => s.read("/a.json"), "TIMEOUT", "slow read");
  assert.ok(Date.now() - started < 250, "did not wait for the KV");
  const m = new ContextManager({ contextDir: "/slow", fileSystem: s, persistThreshold: 0 });
  const err = await expectRejection(assert, () => m.saveContext("t", {}, "v"), "STORAGE", "save");
  assert.equal(err.cause?.code, "TIMEOUT");
  assert.equal(m.size, 0);
  const controller = new AbortController();
  const aborting = denoKvStorage({ kv: slow, prefix: "slow", signal: controller.signal });
  const pending = aborting.write("/b.json", "y");
  controller.abort();
  await expectRejection(assert, () => pending, "ABORTED", "aborted write");
  await expectRejection(assert, () => aborting.read("/b.json"), "ABORTED", "after abort");
  assert.throws(() => denoKvStorage({ kv, timeoutMs: -1 }), { code: "INVALID_ARGUMENT" });
  await delay(400); // let the slow requests finish before the KV closes
});

t("without --unstable-kv, a path is refused with INVALID_ARGUMENT naming the flag", async () => {
  const file = new URL(`./.tmp/no-flag-${n++}.mjs`, import.meta.url);
  await Deno.mkdir(new URL("./.tmp/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(file, `import { denoKvStorage } from "toolctx/deno-kv";
try { denoKvStorage({ path: "x.kv" }); console.log("created"); } catch (err) { console.log(err.code, err.message); }`);
  const out = await new Deno.Command(Deno.execPath(), { args: ["run", "-A", "--no-check", file.pathname], stdout: "piped", stderr: "piped" }).output();
  await Deno.remove(file);
  const text = new TextDecoder().decode(out.stdout);
  assert.match(text, /^INVALID_ARGUMENT .*--unstable-kv/, text + new TextDecoder().decode(out.stderr));
});

t("a path opens its own KV, and close() closes it", async () => {
  const path = `${top}/own.sqlite`;
  const s = denoKvStorage({ path });
  await s.write("/o.json", "own");
  await s.close();
  const again = denoKvStorage({ path });
  assert.equal(toText(await again.read("/o.json")), "own");
  await again.close();
});

t("a path whose KV fails to open: the next call opens it again (the failure is not kept)", async () => {
  const folder = `${top}/not-yet`;
  const s = denoKvStorage({ path: `${folder}/late.sqlite` });
  await assert.rejects(s.read("/o.json")); // its folder does not exist yet
  await Deno.mkdir(folder);
  await s.write("/o.json", "late");
  assert.equal(toText(await s.read("/o.json")), "late");
  await s.close();
});

t("a ContextManager session over Deno KV resumes in a second connection", async () => {
  const other = await Deno.openKv(`${top}/shared.sqlite`);
  const dir = fresh("resume");
  const m = await ContextManager.open({ contextDir: dir, fileSystem: denoKvStorage({ kv }), session: true, persistThreshold: 0 });
  const big = "x".repeat(200_000);
  const fp = await m.saveContext("readFile", { path: "big.txt" }, big);
  await m.close();
  const r = await ContextManager.open({ contextDir: dir, fileSystem: denoKvStorage({ kv: other }), session: m.sessionId });
  const [record] = await r.loadContexts([fp]);
  assert.equal(record.result, big);
  other.close();
});

t("the README's Deno KV example runs", async () => {
  const readme = await Deno.readTextFile(new URL("../../docs/storage.md", import.meta.url));
  const code = readme.slice(readme.indexOf("## Deno KV")).match(/```js\n([\s\S]*?)```/)[1];
  const file = new URL(`./.tmp/readme-deno-kv-${n++}.mjs`, import.meta.url);
  await Deno.mkdir(new URL("./.tmp/", import.meta.url), { recursive: true });
  const kvPath = `${top}/readme.kv`;
  await Deno.writeTextFile(file, `${code.replaceAll("npm:toolctx", "toolctx").replace("./agent.kv", kvPath)}\nexport { m, kv };\n`);
  const { m, kv: readmeKv } = await import(file.href);
  const fp = await m.saveContext("readFile", { path: "a.ts" }, "x".repeat(100_000));
  await m.close();
  const again = await ContextManager.open({ contextDir: "/ctx", fileSystem: denoKvStorage({ path: kvPath }), session: m.sessionId });
  assert.deepEqual(again.getAllPointers().map((p) => p.filepath), [fp]);
  readmeKv.close();
  await Deno.remove(file);
});

// Many writers: 8 deno processes, 500 records each, into one KV file.
const here = new URL(".", import.meta.url).pathname;
runManyWriterTests({
  name,
  test,
  assert,
  writers: 8,
  perWriter: 500,
  ContextManager,
  contextDir: () => `/fleet/${n++}`,
  makeStorage: () => denoKvStorage({ kv }),
  async spawnWriters({ writers, contextDir, perWriter }) {
    const children = Array.from({ length: writers }, (_, i) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--unstable-kv", "--no-check", `${here}deno-kv-writer.mjs`, `${top}/shared.sqlite`, contextDir, String(i), String(perWriter)],
        stdout: "piped",
        stderr: "piped",
      }).output(),
    );
    const outputs = await Promise.all(children);
    return outputs.map((o, i) => {
      const stderr = new TextDecoder().decode(o.stderr);
      assert.equal(o.code, 0, `writer ${i} failed: ${stderr}`);
      return JSON.parse(new TextDecoder().decode(o.stdout));
    });
  },
});
