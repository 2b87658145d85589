// toolctx/unstorage under Node: the bridge over unstorage's real drivers that need no
// server (memory, fs, fs-lite, lru-cache). The storage-host and seed-API conformance
// suites run against each; the session, lock and conversation suites are skipped
// explicitly, because a bridged driver has no lock, and a test asserts the refusal.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import fsDriver from "unstorage/drivers/fs";
import fsLiteDriver from "unstorage/drivers/fs-lite";
import lruCacheDriver from "unstorage/drivers/lru-cache";

import { ContextManager, ConversationStore } from "toolctx";
import { unstorageStorage, keyOf, pathOf } from "toolctx/unstorage";
import { memoryStorage } from "toolctx/memory";
import { expectRejection, runSeedApiTests, runStorageHostTests, toText } from "./conformance.mjs";

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolctx-unstorage-")));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (tag) => `/ctx/${tag}-${n++}`;

const drivers = {
  memory: () => memoryDriver(),
  fs: () => fsDriver({ base: path.join(root, `fs-${n++}`) }),
  "fs-lite": () => fsLiteDriver({ base: path.join(root, `fs-lite-${n++}`) }),
  "lru-cache": () => lruCacheDriver({ max: 100_000 }),
};

for (const [driverName, makeDriver] of Object.entries(drivers)) {
  const name = `unstorage ${driverName}`;
  // one driver (one folder for fs) per suite, as a deployment has; each test its own contextDir
  const shared = createStorage({ driver: makeDriver() });
  const makeStorage = () => unstorageStorage({ storage: shared });
  runStorageHostTests({ name, makeStorage, test, assert, tmpDir: () => fresh("host") });
  runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("seed") });
  test(`[${name}] sessions, locks and conversations: skipped, a bridged driver has no lock (refusal asserted below)`, { skip: true }, () => {});

  test(`[${name}] a session is refused with a typed error whose cause is UNSUPPORTED; plain saves work`, async () => {
    const storage = makeStorage();
    const dir = fresh("refuse");
    const err = await expectRejection(assert, () => ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0 }), "STORAGE", "session");
    assert.equal(err.cause?.code, "UNSUPPORTED");
    assert.match(err.message, /no lock/);
    await expectRejection(assert, () => storage.lock("x.lock", async () => "ran"), "UNSUPPORTED", "lock");
    const m = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const saved = await Promise.all(Array.from({ length: 20 }, (_, i) => m.saveContext("t", { i }, `v${i}`)));
    assert.equal(new Set(saved).size, 20);
    const [first] = await new ContextManager({ contextDir: dir, fileSystem: storage }).loadContexts([saved[0]]);
    assert.equal(first.result, "v0");
  });
}

test("[unstorage] the README's example runs", async () => {
  const readme = fs.readFileSync(new URL("../../docs/storage.md", import.meta.url), "utf8");
  const code = readme.slice(readme.indexOf("## Any unstorage driver")).match(/```js\n([\s\S]*?)```/)[1];
  const base = path.join(root, "readme-fs");
  const file = new URL(`./.tmp/readme-unstorage-${n++}.mjs`, import.meta.url);
  fs.mkdirSync(new URL("./.tmp/", import.meta.url), { recursive: true });
  fs.writeFileSync(file, `${code.replace('"./ctx"', JSON.stringify(base))}\nexport { m, storage };\n`);
  const { m } = await import(file.href);
  fs.rmSync(file);
  const fp = await m.saveContext("grep", { pattern: "x" }, "y".repeat(50_000));
  assert.ok(fs.existsSync(path.join(base, "toolctx", keyOfPath(fp))), "a file under the driver's folder");
  const [record] = await m.loadContexts([fp]);
  assert.equal(record.result, "y".repeat(50_000));
});

const keyOfPath = (p) => keyOf(p).split(":").join("/");

test("[unstorage] a path maps to a key that unstorage leaves as it is, and back", async () => {
  const raw = createStorage({ driver: memoryDriver() });
  const s = unstorageStorage({ storage: raw });
  const names = ["a:b.json", "q?x=1.json", "back\\slash.json", "meta$", "100%.json", "#frag.json", "trailing.", "..", ".", "...", "CaseSensitive.json", "casesensitive.json", "é€🙂.json", " spaced name "];
  for (const [i, name] of names.entries()) await s.write(`/root/dir/${name}`, `content ${i}`);
  assert.deepEqual(await s.list("/root/dir"), [...names].sort());
  for (const [i, name] of names.entries()) {
    assert.equal(toText(await s.read(`/root/dir/${name}`)), `content ${i}`, name);
    const key = keyOf(`/root/dir/${name}`);
    assert.equal(pathOf(key), `root/dir/${name}`);
    assert.equal(await raw.hasItem(key), true, `${name} is stored under ${key}`);
  }
  assert.equal(keyOf("/a//b/c.json"), "a:b:c.json");
  assert.equal(keyOf("/a/b.json", "toolctx"), "toolctx:a:b.json");
  assert.deepEqual(await s.list("/root"), ["dir/"]);
  assert.deepEqual(await s.list("/"), ["root/"]);
});

test("[unstorage] the fs driver stores a record as a file under its base, bytes exact", async () => {
  const base = path.join(root, "fs-bytes");
  const s = unstorageStorage({ storage: createStorage({ driver: fsDriver({ base }) }), base: "toolctx" });
  const bytes = new Uint8Array(256).map((_, i) => i);
  await s.write("/ctx/bin.dat", bytes);
  assert.deepEqual(new Uint8Array(fs.readFileSync(path.join(base, "toolctx/ctx/bin.dat"))), bytes);
  assert.deepEqual(new Uint8Array(await s.read("/ctx/bin.dat")), bytes);
});

test("[unstorage] exclusive create is check-then-write: documented, and the random name keeps racing saves unique", async () => {
  const s = unstorageStorage({ storage: createStorage({ driver: memoryDriver() }) });
  assert.equal(s.guarantees.exclusiveCreate, "check-then-write");
  assert.equal(s.guarantees.locks, false);
  const managers = Array.from({ length: 4 }, () => new ContextManager({ contextDir: "/race", fileSystem: s, persistThreshold: 0 }));
  const saved = await Promise.all(Array.from({ length: 200 }, (_, i) => managers[i % 4].saveContext("t", { same: true }, i)));
  assert.equal(new Set(saved).size, 200);
  assert.equal((await s.list("/race")).length, 200);
});

test("[unstorage] a lock of the user's own is used as given (sessions then work)", async () => {
  const s = unstorageStorage({ storage: createStorage({ driver: memoryDriver() }), lock: memoryStorage().lock });
  const m = await ContextManager.open({ contextDir: "/own-lock", fileSystem: s, session: true, persistThreshold: 0 });
  const fp = await m.saveContext("t", {}, "in a session");
  await m.close();
  const r = await ContextManager.open({ contextDir: "/own-lock", fileSystem: s, session: m.sessionId });
  assert.deepEqual(r.getAllPointers().map((p) => p.filepath), [fp]);
  const conv = await ConversationStore.open({ contextDir: "/own-lock", fileSystem: s });
  assert.equal((await conv.createConversation({ id: "own-lock" })).id, "own-lock");
});

test("[unstorage] a slow driver: timeoutMs rejects with TIMEOUT, an aborted signal with ABORTED, and a save adds no pointer", async () => {
  const slow = memoryDriver();
  const setItemRaw = slow.setItemRaw;
  slow.setItemRaw = (key, value) => new Promise((resolve) => setTimeout(() => resolve(setItemRaw(key, value)), 300));
  const raw = createStorage({ driver: slow });
  const s = unstorageStorage({ storage: raw, timeoutMs: 50 });
  const started = Date.now();
  await expectRejection(assert, () => s.write("/slow/a.json", "x"), "TIMEOUT", "slow write");
  assert.ok(Date.now() - started < 250, "did not wait for the driver");
  const m = new ContextManager({ contextDir: "/slow", fileSystem: s, persistThreshold: 0 });
  const err = await expectRejection(assert, () => m.saveContext("t", {}, "v"), "STORAGE", "save");
  assert.equal(err.cause?.code, "TIMEOUT");
  assert.equal(m.size, 0);
  const controller = new AbortController();
  const aborting = unstorageStorage({ storage: raw, signal: controller.signal });
  const pending = aborting.write("/slow/b.json", "y");
  controller.abort();
  await expectRejection(assert, () => pending, "ABORTED", "aborted write");
  await expectRejection(assert, () => aborting.read("/slow/b.json"), "ABORTED", "after abort");
});

test("[unstorage] a driver that fails is STORAGE with its error as the cause; bad options are INVALID_ARGUMENT", async () => {
  const broken = memoryDriver();
  broken.getItemRaw = () => {
    throw Object.assign(new Error("backend unavailable"), { statusCode: 503 });
  };
  const s = unstorageStorage({ storage: createStorage({ driver: broken }) });
  const err = await expectRejection(assert, () => s.read("/x.json"), "STORAGE", "read");
  assert.equal(err.cause.message, "backend unavailable");
  assert.throws(() => unstorageStorage({}), { code: "INVALID_ARGUMENT" });
  assert.throws(() => unstorageStorage({ storage: createStorage(), timeoutMs: -1 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => unstorageStorage({ storage: createStorage(), base: "a:b" }), { code: "INVALID_ARGUMENT" });
});
