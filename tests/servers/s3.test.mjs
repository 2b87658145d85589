// toolctx/s3 against a real S3 server, s3s-fs (cargo), started here on 127.0.0.1 on a free
// port over a temporary folder and stopped afterwards: the shared conformance suites, the
// many-writer suite (8 Node processes), and the faults a network store has.
// s3s-fs checks If-None-Match and then writes (not atomically), so no test here relies on it
// to win a race; the race runs against RustFS when RUSTFS_BIN names its binary.
//   node --test tests/servers/s3.test.mjs

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { AwsClient } from "aws4fetch";
import { ContextManager, ConversationStore, memoryStorage } from "toolctx";
import { s3Storage } from "toolctx/s3";

import { runLockTests, runSeedApiTests, runSessionTests, runStorageHostTests, expectRejection, toText } from "../js/conformance.mjs";
import { SPREAD_RACE_DELAYS, runConversationTests } from "../js/conversation.mjs";
import { nodeWriters, runManyWriterTests } from "../js/many-writers.mjs";
import { freePort, startS3 } from "./local.mjs";

const server = await startS3();
after(() => server.stop());
const credentials = { endpoint: server.endpoint, bucket: server.bucket, accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey };

let n = 0;
const fresh = (tag) => `/${tag}-${++n}`;
const makeStorage = (options = {}) => s3Storage({ ...credentials, ...options });

/** A fetch that records each request ("METHOD key?query") before passing it on (or to `handle`). */
function recording(handle = (request) => fetch(request)) {
  const seen = [];
  const f = (request) => {
    const url = new URL(request.url);
    seen.push(`${request.method} ${decodeURIComponent(url.pathname)}${url.search}`);
    return handle(request, seen.length);
  };
  f.seen = seen;
  return f;
}

const signer = new AwsClient({ accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey, service: "s3", region: "us-east-1", retries: 0 });
/** A fetch for a server that ignores If-None-Match: the request is signed again without it. */
async function ignoringConditions(request) {
  if (!request.headers.has("If-None-Match")) return fetch(request);
  const body = request.method === "PUT" ? new Uint8Array(await request.arrayBuffer()) : undefined;
  return fetch(await signer.sign(request.url, { method: request.method, body }));
}

runStorageHostTests({ name: "s3", makeStorage, test, assert, tmpDir: () => fresh("host") });
runSeedApiTests({ name: "s3", makeStorage, ContextManager, test, assert, contextDir: () => fresh("seed") });
runSessionTests({ name: "s3", makeStorage, ContextManager, test, assert, contextDir: () => fresh("ses") });
runLockTests({ name: "s3", makeStorage, test, assert, tmpDir: () => fresh("lock") });
runConversationTests(test, assert, makeStorage, { ConversationStore, name: "s3", contextDir: () => fresh("conv"), raceDelays: SPREAD_RACE_DELAYS });

runManyWriterTests({
  name: "s3",
  spawnWriters: nodeWriters({ storageModule: "toolctx/s3", storageExport: "s3Storage", storageOptions: credentials }),
  makeStorage,
  ContextManager,
  test,
  assert,
  contextDir: () => fresh("many"),
});

// -- what only S3 can get wrong

test("[s3] list follows continuation tokens (ListObjectsV2 paging)", async () => {
  const f = recording();
  const s = makeStorage({ pageSize: 3, fetch: f });
  const dir = fresh("paging");
  const names = Array.from({ length: 10 }, (_, i) => `r${String(i).padStart(2, "0")}.json`);
  for (const name of names) await s.write(`${dir}/${name}`, name);
  await s.write(`${dir}/sub/deep.json`, "d");
  f.seen.length = 0;
  assert.deepEqual(await s.list(dir), [...names, "sub/"].sort());
  assert.ok(f.seen.length >= 4, `11 entries in pages of 3: ${f.seen.length} list requests`);
  assert.ok(f.seen.slice(1).every((r) => r.includes("continuation-token=")), f.seen.join("\n"));
});

test("[s3] exclusive create sends If-None-Match: * and, once the probe found it honoured, costs one request", async () => {
  const f = recording();
  const s = makeStorage({ fetch: f });
  const dir = fresh("excl");
  await s.write(`${dir}/a.json`, "a", { exclusive: true });
  assert.deepEqual(f.seen.map((r) => r.split(" ")[0]), ["PUT", "PUT"], "the create and the one probe");
  f.seen.length = 0;
  await s.write(`${dir}/b.json`, "b", { exclusive: true });
  assert.equal(f.seen.length, 1, "no verification where the server honours the condition");
  await expectRejection(assert, () => s.write(`${dir}/b.json`, "again", { exclusive: true }), "EEXIST", "second create");
  assert.equal(toText(await s.read(`${dir}/b.json`)), "b");
});

test("[s3] a server that ignores If-None-Match: the probe finds it, then every create checks first and verifies after", async () => {
  const f = recording(ignoringConditions);
  const s = makeStorage({ fetch: f });
  const dir = fresh("ignored");
  await s.write(`${dir}/a.json`, "first", { exclusive: true });
  await expectRejection(assert, () => s.write(`${dir}/a.json`, "second", { exclusive: true }), "EEXIST", "existing name");
  assert.equal(toText(await s.read(`${dir}/a.json`)), "first", "the existing record is kept");
  // a writer overtaken between its PUT and its read-back learns that it lost
  let release;
  const overtaken = new Promise((r) => (release = r));
  const slow = makeStorage({
    verifyExclusive: "always",
    fetch: async (request) => {
      if (request.method === "GET") await overtaken;
      return ignoringConditions(request);
    },
  });
  const losing = slow.write(`${dir}/race.json`, "loser", { exclusive: true });
  await new Promise((r) => setTimeout(r, 100));
  await makeStorage({ fetch: ignoringConditions }).write(`${dir}/race.json`, "winner");
  release();
  await expectRejection(assert, () => losing, "EEXIST", "overtaken create");
  assert.equal(toText(await s.read(`${dir}/race.json`)), "winner");
});

test("[s3] an exclusive create whose answer was lost is retried and recognised as its own", async () => {
  let dropped = 0;
  const s = makeStorage({
    retryBaseMs: 1,
    fetch: async (request) => {
      const response = await fetch(request);
      if (request.method === "PUT" && request.headers.has("If-None-Match") && dropped++ === 0) {
        return new Response("<Error><Code>ServiceUnavailable</Code></Error>", { status: 503 });
      }
      return response;
    },
  });
  const p = `${fresh("lost")}/r.json`;
  await s.write(p, "mine", { exclusive: true });
  assert.equal(dropped >= 2, true, "the retry reached the server");
  assert.equal(toText(await s.read(p)), "mine");
});

test("[s3] 500 and 503 are retried with backoff for idempotent requests; 400 is not; a persistent 503 gives up typed", async () => {
  const dir = fresh("retry");
  const failFirst = (k) =>
    recording((request, i) => (i <= k ? new Response("<Error><Code>SlowDown</Code></Error>", { status: i % 2 ? 503 : 500 }) : fetch(request)));
  const writes = failFirst(2);
  await makeStorage({ fetch: writes, retryBaseMs: 1 }).write(`${dir}/a.json`, "a");
  assert.equal(writes.seen.length, 3, "two failures, then the PUT");
  const reads = failFirst(2);
  assert.equal(toText(await makeStorage({ fetch: reads, retryBaseMs: 1 }).read(`${dir}/a.json`)), "a");
  const lists = failFirst(1);
  assert.deepEqual(await makeStorage({ fetch: lists, retryBaseMs: 1 }).list(dir), ["a.json"]);
  const removes = failFirst(1);
  await makeStorage({ fetch: removes, retryBaseMs: 1 }).remove(`${dir}/a.json`);
  assert.equal(await makeStorage().read(`${dir}/a.json`), undefined);
  const bad = recording(() => new Response("<Error><Code>InvalidRequest</Code></Error>", { status: 400 }));
  const err = await expectRejection(assert, () => makeStorage({ fetch: bad, retryBaseMs: 1 }).read(`${dir}/x.json`), "STORAGE", "400");
  assert.equal(bad.seen.length, 1, "a 400 is not retried");
  assert.match(err.message, /400 InvalidRequest/);
  const down = recording(() => new Response("", { status: 503 }));
  await expectRejection(assert, () => makeStorage({ fetch: down, retries: 2, retryBaseMs: 1 }).read(`${dir}/x.json`), "STORAGE", "503");
  assert.equal(down.seen.length, 3, "the first try and 2 retries");
});

test("[s3] records over the multipart threshold go up in parts and round-trip; a failed upload is aborted and leaves nothing", async () => {
  const MiB = 1024 * 1024;
  const dir = fresh("multipart");
  const big = new Uint8Array(11 * MiB + 3);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >>> 12)) & 0xff;
  const f = recording();
  const s = makeStorage({ multipartThreshold: 5 * MiB, partSize: 5 * MiB, fetch: f });
  await s.write(`${dir}/big.json`, big);
  const methods = f.seen.map((r) => r.replace(/uploadId=[^&]+/, "uploadId=…"));
  assert.deepEqual(methods, [
    `POST /${server.bucket}${dir}/big.json?uploads`,
    `PUT /${server.bucket}${dir}/big.json?partNumber=1&uploadId=…`,
    `PUT /${server.bucket}${dir}/big.json?partNumber=2&uploadId=…`,
    `PUT /${server.bucket}${dir}/big.json?partNumber=3&uploadId=…`,
    `POST /${server.bucket}${dir}/big.json?uploadId=…`,
  ]);
  const got = await s.read(`${dir}/big.json`);
  assert.equal(got.length, big.length);
  assert.ok(Buffer.from(got).equals(Buffer.from(big)), "11 MiB identical");

  await expectRejection(assert, () => s.write(`${dir}/big.json`, new Uint8Array(6 * MiB), { exclusive: true }), "EEXIST", "exclusive on a taken name");
  assert.equal((await s.read(`${dir}/big.json`)).length, big.length, "the first record stays");
  await s.write(`${dir}/big2.json`, big, { exclusive: true });
  assert.ok(Buffer.from(await s.read(`${dir}/big2.json`)).equals(Buffer.from(big)), "exclusive multipart create");

  const failing = recording((request) => (request.url.includes("partNumber=2") ? new Response("", { status: 500 }) : fetch(request)));
  const broken = makeStorage({ multipartThreshold: 5 * MiB, partSize: 5 * MiB, fetch: failing, retries: 1, retryBaseMs: 1 });
  await expectRejection(assert, () => broken.write(`${dir}/torn.json`, big), "STORAGE", "failed part");
  assert.ok(failing.seen.at(-1).startsWith("DELETE") && failing.seen.at(-1).includes("uploadId="), "the upload was aborted");
  assert.equal(await s.read(`${dir}/torn.json`), undefined, "no partial record");
  assert.deepEqual(await s.list(dir), ["big.json", "big2.json"]);
  assert.throws(() => makeStorage({ partSize: 1024 }), (e) => e.code === "INVALID_ARGUMENT");
});

test("[s3] a record over maxObjectBytes: TOO_LARGE before any request, nothing visible", async () => {
  const f = recording();
  const s = makeStorage({ maxObjectBytes: 4096, fetch: f });
  const dir = fresh("large");
  await expectRejection(assert, () => s.write(`${dir}/big.json`, "x".repeat(5000)), "TOO_LARGE", "write");
  assert.equal(f.seen.length, 0);
  const m = new ContextManager({ contextDir: dir, fileSystem: s, persistThreshold: 0 });
  const err = await expectRejection(assert, () => m.saveContext("t", {}, "y".repeat(5000)), "STORAGE", "save");
  assert.equal(err.cause?.code, "TOO_LARGE");
  assert.deepEqual(await s.list(dir), []);
});

test("[s3] the server slow or down: timeoutMs rejects with TIMEOUT (also by its old name timeout), an AbortSignal with ABORTED", async () => {
  const sockets = new Set();
  const silent = createServer((socket) => sockets.add(socket)); // accepts, never answers
  await new Promise((r) => silent.listen(0, "127.0.0.1", r));
  try {
    const endpoint = `http://127.0.0.1:${silent.address().port}`;
    const slow = makeStorage({ endpoint, timeoutMs: 200, retries: 0 });
    await expectRejection(assert, () => slow.read("/slow/x.json"), "TIMEOUT", "read");
    await expectRejection(assert, () => makeStorage({ endpoint, timeout: 200, retries: 0 }).read("/slow/x.json"), "TIMEOUT", "read, deprecated name");
    const controller = new AbortController();
    const stopped = makeStorage({ endpoint, timeout: 0, signal: controller.signal });
    const pending = stopped.write("/slow/y.json", "y");
    setTimeout(() => controller.abort(), 50);
    await expectRejection(assert, () => pending, "ABORTED", "write");
    await expectRejection(assert, () => stopped.list("/slow"), "ABORTED", "after abort");
    const down = makeStorage({ endpoint: `http://127.0.0.1:${await freePort()}`, retries: 1, retryBaseMs: 1 });
    const err = await expectRejection(assert, () => down.read("/down/x.json"), "STORAGE", "nothing listening");
    assert.ok(err.cause, "the fetch error is the cause");
    const m = new ContextManager({ contextDir: "/slow/ctx", fileSystem: slow, persistThreshold: 0 });
    const saved = await expectRejection(assert, () => m.saveContext("t", {}, 1), "STORAGE", "save");
    assert.equal(saved.cause?.code, "TIMEOUT");
    assert.equal(m.size, 0);
  } finally {
    for (const socket of sockets) socket.destroy();
    silent.close();
  }
});

test("[s3] wrong credentials: UNAUTHORIZED, and the secret is in no message", async () => {
  const secret = "wrong-Secret-Key-0123456789";
  const checks = [
    makeStorage({ secretAccessKey: secret }),
    makeStorage({ accessKeyId: "AKNOBODY", secretAccessKey: secret }),
  ];
  for (const s of checks) {
    for (const op of [() => s.read("/auth/x.json"), () => s.write("/auth/x.json", "x"), () => s.list("/auth")]) {
      const err = await expectRejection(assert, op, "UNAUTHORIZED", "wrong key");
      for (let e = err; e; e = e.cause) {
        assert.ok(!`${e.message}\n${e.stack}`.includes(secret), `no secret in: ${e.message}`);
        assert.ok(!`${e.message}`.includes(server.secretAccessKey));
      }
    }
  }
  const m = new ContextManager({ contextDir: "/auth/ctx", fileSystem: checks[0], persistThreshold: 0 });
  const err = await expectRejection(assert, () => m.saveContext("t", {}, 1), "STORAGE", "save");
  assert.equal(err.cause?.code, "UNAUTHORIZED");
  assert.ok(!err.message.includes(secret));
});

test("[s3] lock: one process by default; a lock function of your own; false for none; anything else refused (UNSUPPORTED)", async () => {
  const name = `${fresh("locks")}/s.lock`;
  const a = makeStorage();
  const b = makeStorage();
  let active = 0;
  let most = 0;
  const hold = async () => {
    active++;
    most = Math.max(most, active);
    await new Promise((r) => setTimeout(r, 10));
    active--;
  };
  await Promise.all([a.lock(name, hold), b.lock(name, hold), a.lock(name, hold)]);
  assert.equal(most, 1, "two storages of one process share the process lock");
  const shared = memoryStorage();
  const calls = [];
  const delegated = makeStorage({ lock: (lockName, fn) => (calls.push(lockName), shared.lock(lockName, fn)) });
  assert.equal(await delegated.lock(name, async () => "ran"), "ran");
  assert.deepEqual(calls, [name]);
  assert.equal(makeStorage({ lock: false }).lock, undefined);
  for (const lock of ["distributed", true, "conditional"]) {
    assert.throws(() => makeStorage({ lock }), (e) => e.code === "UNSUPPORTED" && /S3 has no locks/.test(e.message), String(lock));
  }
  assert.throws(() => s3Storage({ endpoint: server.endpoint }), (e) => e.code === "INVALID_ARGUMENT");
});

test("[s3] an AwsClient handed in signs the requests", async () => {
  const s = s3Storage({ endpoint: server.endpoint, bucket: server.bucket, client: signer });
  const p = `${fresh("client")}/c.json`;
  await s.write(p, "signed by the caller's client");
  assert.equal(toText(await s.read(p)), "signed by the caller's client");
});

test("[s3] exclusive-create race against RustFS (RUSTFS_BIN): exactly one of 20 wins", { skip: !process.env.RUSTFS_BIN && "RUSTFS_BIN is not set" }, async () => {
  const { spawn } = await import("node:child_process");
  const port = await freePort();
  const root = mkdtempSync(`${tmpdir()}/toolctx-rustfs-`);
  // flags as in https://docs.rustfs.com/reference/cli; the console stays off (it would bind :9001)
  const args = ["server", "--address", `127.0.0.1:${port}`, "--access-key", server.accessKeyId, "--secret-key", server.secretAccessKey, root];
  const child = spawn(process.env.RUSTFS_BIN, args, {
    stdio: "ignore",
    env: { ...process.env, RUSTFS_CONSOLE_ENABLE: "false", RUSTFS_UNSAFE_BYPASS_DISK_CHECK: "true" },
  });
  try {
    const endpoint = `http://127.0.0.1:${port}`;
    for (let tries = 0; ; tries++) {
      const made = await signer.fetch(`${endpoint}/race`, { method: "PUT" }).catch(() => undefined);
      if (made && (made.ok || made.status === 409)) break;
      if (tries > 600) throw new Error("RustFS did not start within 30 s");
      await new Promise((r) => setTimeout(r, 50));
    }
    const racers = Array.from({ length: 20 }, () => s3Storage({ ...credentials, endpoint, bucket: "race" }));
    const outcomes = await Promise.allSettled(racers.map((s, i) => s.write("/r/same.json", `{"by":${i}}`, { exclusive: true })));
    assert.equal(outcomes.filter((o) => o.status === "fulfilled").length, 1, "one winner");
    for (const o of outcomes.filter((o) => o.status === "rejected")) assert.equal(o.reason.code, "EEXIST");
  } finally {
    child.kill();
    rmSync(root, { recursive: true, force: true });
  }
});
