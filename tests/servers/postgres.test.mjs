// toolctx/postgres against a real PostgreSQL (Debian's), started here over a temporary data
// folder (as the `postgres` user when run as root) on a Unix socket and 127.0.0.1, and
// stopped afterwards: the shared conformance suites, the many-writer suite (8 Node
// processes), and what only a database server can get wrong: a crash mid-run, a pool
// exhausted, a statement timeout, a lock whose holder dies, secrets in messages.
//   node --test tests/servers/postgres.test.mjs

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { inspect } from "node:util";
import pg from "pg";
import { ContextManager, ConversationStore } from "toolctx";
import { postgresStorage } from "toolctx/postgres";

import { runLockTests, runSeedApiTests, runSessionTests, runStorageHostTests, expectRejection, toText } from "../js/conformance.mjs";
import { SPREAD_RACE_DELAYS, runConversationTests } from "../js/conversation.mjs";
import { nodeWriters, runManyWriterTests } from "../js/many-writers.mjs";
import { PG_PASSWORD, freePort, startPostgres } from "./local.mjs";

const server = await startPostgres();
const opened = [];
const pools = [];
after(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await Promise.all(pools.map((p) => p.end()));
  await server.stop();
});

let n = 0;
const fresh = (tag) => `/${tag}-${++n}`;
/** A storage with its own pool (closed after the run), as another process would have; the suites make hundreds, so each pool is small. */
function makeStorage(options = {}) {
  const storage = postgresStorage({ connectionString: server.connectionString }, { poolSize: 2, ...options });
  opened.push(storage);
  return storage;
}
/** A pg.Pool of the test's own (ended after the run). */
function makePool(config = {}) {
  const pool = new pg.Pool({ connectionString: server.connectionString, ...config });
  pool.on("error", () => {});
  pools.push(pool);
  return pool;
}

runStorageHostTests({ name: "postgres", makeStorage, test, assert, tmpDir: () => fresh("host") });
runSeedApiTests({ name: "postgres", makeStorage, ContextManager, test, assert, contextDir: () => fresh("seed") });
runSessionTests({ name: "postgres", makeStorage, ContextManager, test, assert, contextDir: () => fresh("ses") });
runLockTests({ name: "postgres", makeStorage, test, assert, tmpDir: () => fresh("lock") });
runConversationTests(test, assert, makeStorage, { ConversationStore, name: "postgres", contextDir: () => fresh("conv"), raceDelays: SPREAD_RACE_DELAYS });

runManyWriterTests({
  name: "postgres",
  spawnWriters: nodeWriters({ storageModule: "toolctx/postgres", storageExport: "postgresStorage", storageOptions: { connectionString: server.connectionString } }),
  makeStorage,
  ContextManager,
  test,
  assert,
  contextDir: () => fresh("many"),
});

// -- what only PostgreSQL can get wrong

test("[postgres] exclusive create: of 20 pools racing for one name, exactly one wins; the listing has it once", async () => {
  const dir = fresh("race");
  const racers = Array.from({ length: 20 }, () => makeStorage({ poolSize: 2 }));
  const outcomes = await Promise.allSettled(racers.map((s, i) => s.write(`${dir}/same.json`, `{"by":${i}}`, { exclusive: true })));
  const won = outcomes.filter((o) => o.status === "fulfilled");
  assert.equal(won.length, 1, "one winner");
  for (const o of outcomes.filter((o) => o.status === "rejected")) assert.equal(o.reason.code, "EEXIST");
  const winner = outcomes.indexOf(won[0]);
  assert.equal(toText(await racers[0].read(`${dir}/same.json`)), `{"by":${winner}}`, "the winner's bytes");
  assert.deepEqual(await racers[0].list(dir), ["same.json"]);
});

test("[postgres] one row a file in the table: path, bytes, size, created; bytes that are not UTF-8 round-trip; append is one statement", async () => {
  const s = makeStorage();
  const dir = fresh("rows");
  const bytes = Uint8Array.from([0, 255, 254, 0xc3, 0x28, 10, 13, 0]);
  await s.write(`${dir}/raw.bin`, bytes);
  await s.append(`${dir}/raw.bin`, Uint8Array.from([0, 1]));
  await s.append(`${dir}/new.jsonl`, "line\n");
  assert.deepEqual([...(await s.read(`${dir}/raw.bin`))], [...bytes, 0, 1]);
  const { rows } = await makePool().query("SELECT path, size, octet_length(bytes) AS length, created <= modified AS ordered FROM toolctx_files WHERE path LIKE $1 ORDER BY path", [`${dir}/%`]);
  assert.deepEqual(
    rows.map((r) => [r.path, Number(r.size), r.length, r.ordered]),
    [
      [`${dir}/new.jsonl`, 5, 5, true],
      [`${dir}/raw.bin`, 10, 10, true],
    ],
  );
});

test("[postgres] listing is a key range, not a pattern: folders named with % and _ list only their own children", async () => {
  const s = makeStorage();
  const dir = fresh("like");
  await s.write(`${dir}/a%/x.json`, "1");
  await s.write(`${dir}/ab/y.json`, "2");
  await s.write(`${dir}/a_/z.json`, "3");
  await s.write(`${dir}/a%b/w.json`, "4");
  await s.write(`${dir}/a%.json`, "5");
  assert.deepEqual(await s.list(`${dir}/a%`), ["x.json"]);
  assert.deepEqual(await s.list(`${dir}/a_`), ["z.json"]);
  assert.deepEqual(await s.list(dir), ["a%.json", "a%/", "a%b/", "a_/", "ab/"].sort());
  assert.deepEqual(await s.list(`${dir}/a`), [], "a prefix of a folder's name is not that folder");
});

test("[postgres] the table is configurable and quoted; a name PostgreSQL would cut or cannot hold is INVALID_ARGUMENT", async () => {
  const odd = 'agents "ctx"; DROP TABLE toolctx_files; --';
  const s = makeStorage({ table: odd });
  const dir = fresh("table");
  await s.write(`${dir}/a.json`, "in the odd table");
  assert.equal(toText(await s.read(`${dir}/a.json`)), "in the odd table");
  assert.equal(await makeStorage().read(`${dir}/a.json`), undefined, "not in the default table");
  const { rows } = await makePool().query("SELECT to_regclass($1) IS NOT NULL AS odd, to_regclass('toolctx_files') IS NOT NULL AS default_", [`"${odd.replaceAll('"', '""')}"`]);
  assert.deepEqual(rows[0], { odd: true, default_: true });
  for (const table of ["", "x".repeat(64), "a\0b", " padded", 7]) {
    assert.throws(() => postgresStorage({ connectionString: server.connectionString }, { table }), { code: "INVALID_ARGUMENT" });
  }
});

test("[postgres] eight pools creating the table at once: all succeed (the creation is serialised)", async () => {
  const table = `created_together_${n}`;
  const stores = Array.from({ length: 8 }, () => makeStorage({ table, poolSize: 2 }));
  await Promise.all(stores.map((s, i) => s.write(`/together/${i}.json`, String(i))));
  assert.equal((await stores[0].list("/together")).length, 8);
});

test("[postgres] lock: held on a connection; when its holder process is killed, another takes it at once (no lease waited out)", async () => {
  const name = `${fresh("dies")}/sessions/x.lock`;
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { postgresStorage } from "toolctx/postgres";
       const s = postgresStorage({ connectionString: process.argv[1] });
       await s.lock(process.argv[2], () => { console.log("held"); return new Promise(() => {}); });`,
      server.connectionString,
      name,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => String(chunk).includes("held") && resolve());
    child.once("exit", (code) => reject(new Error(`the holder exited (${code}) before it held the lock`)));
  });
  const s = makeStorage({ lockWaitMs: 0 });
  await expectRejection(assert, () => s.lock(name, async () => "second"), "TIMEOUT", "while the holder lives");
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
  const t = makeStorage({ lockWaitMs: 5000 }); // far under the 30 s lease a lease lock would wait out
  assert.equal(await t.lock(name, async () => "taken over"), "taken over");
});

test("[postgres] lock: a holder whose connection is killed learns it (signal aborts, LOCK_LOST); the lock is free for the next", async () => {
  const s = makeStorage();
  const admin = makePool();
  const name = `${fresh("lost")}/l.lock`;
  let aborted = false;
  const err = await expectRejection(
    assert,
    () =>
      s.lock(name, async (hold) => {
        // The backend holding this lock alone (its key: postgres.js's lockKey in the default table).
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted
             AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
          [`toolctx toolctx_files ${name}`],
        );
        for (let i = 0; i < 100 && !hold.signal.aborted; i++) await new Promise((r) => setTimeout(r, 20));
        aborted = hold.signal.aborted;
      }),
    "LOCK_LOST",
    "killed holder",
  );
  assert.ok(aborted, "the holder's signal aborted");
  assert.match(err.message, /connection/);
  assert.equal(await s.lock(name, async () => "again"), "again", "a new connection takes it");
});

test("[postgres] lock: a lock whose deadline went while its retry slept takes no share of another name's lock connection; the connection goes back to the pool", async () => {
  // A pool whose first connect is refused, as a server restarting refuses it: the lock of
  // "b" fails transiently, sleeps 1-2 s before its retry, and its 800 ms deadline goes
  // meanwhile. The lock of "a" then holds the lock connection past the end of that sleep.
  // The retry must not join that connection: no one would leave it, so it would never go
  // back to the pool (and close() of a storage that owns its pool would wait for it forever).
  const pool = new pg.Pool({ connectionString: server.connectionString, max: 4 });
  pool.on("error", () => {});
  let refused = 0;
  const restarting = {
    query: (...args) => pool.query(...args),
    connect: () => (refused++ === 0 ? Promise.reject(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1"), { code: "ECONNREFUSED" })) : pool.connect()),
  };
  const s = postgresStorage({ pool: restarting }, { timeoutMs: 800, retryBaseMs: 2000 });
  const started = Date.now();
  const dir = fresh("abandoned");
  await expectRejection(assert, () => s.lock(`${dir}/b.lock`, async () => "b"), "TIMEOUT", "the lock whose retry sleeps past its deadline");
  assert.equal(refused, 1);
  const held = await s.lock(`${dir}/a.lock`, async () => {
    await new Promise((resolve) => setTimeout(resolve, started + 2500 - Date.now())); // past the retry's sleep
    return "a";
  });
  assert.equal(held, "a");
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(pool.totalCount - pool.idleCount, 0, "no connection of the pool is still checked out");
  await pool.end();
});

test("[postgres] a pool exhausted: operations reject with TIMEOUT within timeoutMs, then work once a connection is free", async () => {
  const pool = makePool({ max: 1 });
  const taken = await pool.connect();
  const s = postgresStorage({ pool }, { timeoutMs: 300 });
  try {
    await expectRejection(assert, () => s.read("/exhausted/a.json"), "TIMEOUT", "read");
  } finally {
    taken.release();
  }
  await s.write("/exhausted/a.json", "after");
  assert.equal(toText(await s.read("/exhausted/a.json")), "after");
  await s.close();
  assert.equal((await pool.query("SELECT 1 AS one")).rows[0].one, 1, "close() leaves the caller's pool open");
});

test("[postgres] a statement timeout (the server cancels it): TIMEOUT, with the SQLSTATE as sqlState", async () => {
  const s = postgresStorage({ pool: makePool({ statement_timeout: 200 }) }, { timeoutMs: 5000 });
  const dir = fresh("stmt");
  await s.write(`${dir}/a.json`, "a");
  const blocker = await makePool().connect();
  try {
    await blocker.query("BEGIN");
    await blocker.query("LOCK TABLE toolctx_files IN ACCESS EXCLUSIVE MODE");
    const err = await expectRejection(assert, () => s.read(`${dir}/a.json`), "TIMEOUT", "a read behind a table lock");
    assert.equal(err.sqlState, "57014", "query_canceled");
  } finally {
    await blocker.query("ROLLBACK");
    blocker.release();
  }
  assert.equal(toText(await s.read(`${dir}/a.json`)), "a");
});

test("[postgres] secrets: a wrong password is UNAUTHORIZED, a server away or a URL that does not parse rejects, and no password is in any message, cause or stack", async () => {
  const noSecret = (err, secret) => {
    const shown = inspect(err, { depth: 20 });
    assert.ok(!shown.includes(secret), `no secret in: ${shown}`);
    for (let e = err; e; e = e.cause) assert.ok(!String(e.stack).includes(secret), "no secret in a stack");
  };
  const wrong = postgresStorage({ connectionString: server.connectionString.replace(PG_PASSWORD, "wrong-s3cr3t-pw") }, { timeoutMs: 3000 });
  const err = await expectRejection(assert, () => wrong.read("/auth/x.json"), "UNAUTHORIZED", "wrong password");
  noSecret(err, "wrong-s3cr3t-pw");
  const m = new ContextManager({ contextDir: "/auth/ctx", fileSystem: wrong, persistThreshold: 0 });
  noSecret(await expectRejection(assert, () => m.saveContext("t", {}, 1), "STORAGE", "save"), "wrong-s3cr3t-pw");
  await wrong.close();

  const away = postgresStorage({ connectionString: `postgresql://toolctx:away-s3cr3t-pw@127.0.0.1:${await freePort()}/toolctx` }, { timeoutMs: 3000, retryBaseMs: 10 });
  noSecret(await expectRejection(assert, () => away.read("/away/x.json"), undefined, "server away"), "away-s3cr3t-pw");
  await away.close();

  for (const password of ["s3cr3t#pw", "s3cr3t/pw@x"]) {
    const bad = postgresStorage({ connectionString: `postgresql://toolctx:${password}@127.0.0.1:${server.port}/toolctx` }, { timeoutMs: 3000, retries: 0 });
    noSecret(await expectRejection(assert, () => bad.read("/url/x.json"), undefined, password), "s3cr3t");
    await bad.close();
  }
});

test("[postgres] close() is final for its own pool: an operation after it rejects with STORAGE", async () => {
  const s = postgresStorage({ connectionString: server.connectionString });
  await s.write("/closed/a.json", "a");
  await s.close();
  const err = await expectRejection(assert, () => s.read("/closed/a.json"), "STORAGE", "a read after close()");
  assert.match(err.message, /closed/);
});

test("[postgres] the server crashes mid-run (pg_ctl stop -m immediate): saves reject with a code within 10 s; after a restart every acknowledged record is there, and the same storage works again", async () => {
  const own = await startPostgres();
  const s = postgresStorage({ connectionString: own.connectionString }, { timeoutMs: 3000 });
  const m = new ContextManager({ contextDir: "/crash/ctx", fileSystem: s, persistThreshold: 0 });
  try {
    const acknowledged = [];
    let rejection;
    let crashedAt;
    for (let i = 0; i < 2000 && rejection === undefined; i++) {
      if (i === 40) {
        own.crash();
        crashedAt = Date.now();
      }
      try {
        acknowledged.push([await m.saveContext("grep", { i }, { i, text: `record ${i} `.repeat(20) }), i]);
      } catch (err) {
        rejection = err;
      }
    }
    assert.ok(rejection, "a save rejected once the server was gone");
    const waited = Date.now() - crashedAt;
    assert.ok(waited < 10_000, `the first save after the crash rejected after ${waited} ms`);
    assert.equal(typeof rejection.code, "string");
    assert.ok(["STORAGE", "TIMEOUT"].includes(rejection.cause?.code ?? rejection.code), `code ${rejection.code} / ${rejection.cause?.code}`);
    assert.ok(acknowledged.length >= 40, `${acknowledged.length} saves acknowledged before the crash`);

    own.restart();
    const again = postgresStorage({ connectionString: own.connectionString });
    try {
      const loaded = await new ContextManager({ contextDir: "/crash/ctx", fileSystem: again }).loadContexts(acknowledged.map(([fp]) => fp));
      assert.equal(loaded.length, acknowledged.length, "every acknowledged record is there");
      for (const [k, record] of loaded.entries()) assert.deepEqual(record.result, { i: acknowledged[k][1], text: `record ${acknowledged[k][1]} `.repeat(20) });
    } finally {
      await again.close();
    }
    // the storage of before the crash: its pooled connections are dead; a read is tried again on a new one
    assert.ok(await m.saveContext("grep", { after: true }, "after the restart"), "the old storage saves again");
  } finally {
    await s.close();
    await own.stop();
  }
});
