// Faults and bad input for toolctx/cloudflare (issue 14, item 8), run inside workerd.
// Each backend answers plain findings; cloudflare.test.mjs asserts on them.

import { ContextManager } from "toolctx";
import { D1_MAX_VALUE_BYTES, DO_SQL_MAX_VALUE_BYTES, d1Storage, durableObjectSqlStorage, durableObjectStorage, r2Storage } from "toolctx/cloudflare";
import { wrongShapes } from "../js/sqlite-shapes.mjs";

const MiB = 1024 * 1024;

async function outcome(call) {
  try {
    await call();
    return { ok: true };
  } catch (err) {
    return { ok: false, code: err?.code, message: String(err?.message ?? err), r2Code: err?.r2Code, sqliteCode: err?.sqliteCode, cause: err?.cause !== undefined };
  }
}

function pattern(size, seed) {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = 0x21 + ((i * 7 + seed + (i >>> 12)) % 90);
  return bytes;
}

const same = (a, b) => a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

async function r2Faults(makeStorage, { env }) {
  const storage = makeStorage();
  const dir = `faults-${crypto.randomUUID().slice(0, 8)}`;
  const invalidKey = await outcome(() => storage.write(`${dir}/${"k".repeat(1100)}.json`, "{}"));
  const contenders = await Promise.all(
    Array.from({ length: 16 }, (_, i) => outcome(() => makeStorage().write(`${dir}/race.json`, `writer ${i}`, { exclusive: true }))),
  );
  const stored = new TextDecoder().decode(await storage.read(`${dir}/race.json`));
  const winner = contenders.findIndex((c) => c.ok);
  // The lease lock: a holder that crashed (its lease expired) is taken over; a live one is
  // waited for, then TIMEOUT, and its lease stays.
  const expires = (ms) => ({ customMetadata: { expires: String(Date.now() + ms) } });
  await env.BUCKET.put(`${dir}/crashed.lock`, "a crashed holder", expires(-1000));
  const tookOver = await storage.lock(`${dir}/crashed.lock`, async () => "ran");
  const crashedLeaseGone = (await env.BUCKET.head(`${dir}/crashed.lock`)) === null;
  await env.BUCKET.put(`${dir}/live.lock`, "a live holder", expires(60_000));
  const waited = await outcome(() => r2Storage(env.BUCKET, { lockWaitMs: 300 }).lock(`${dir}/live.lock`, async () => "never"));
  const liveLeaseKept = (await (await env.BUCKET.get(`${dir}/live.lock`))?.text()) === "a live holder";
  // A holder whose lease was taken over while it ran (it stalled past the lease): LOCK_LOST,
  // and the new holder's lock object stays.
  const lost = await outcome(() =>
    storage.lock(`${dir}/lost.lock`, async () => {
      await env.BUCKET.put(`${dir}/lost.lock`, "the next holder", expires(60_000));
    }),
  );
  const nextLeaseKept = (await (await env.BUCKET.get(`${dir}/lost.lock`))?.text()) === "the next holder";
  return {
    lock: { tookOver, crashedLeaseGone, waited, liveLeaseKept, lost, nextLeaseKept },
    invalidKey,
    race: { won: contenders.filter((c) => c.ok).length, lost: contenders.filter((c) => c.code === "EEXIST").length, storedIsWinner: stored === `writer ${winner}` },
  };
}

async function kvFaults(makeStorage) {
  const storage = makeStorage();
  const dir = `faults-${crypto.randomUUID().slice(0, 8)}`;
  const tooLarge = await outcome(() => storage.write(`${dir}/big.json`, new Uint8Array(25 * MiB + 1)));
  const afterTooLarge = await storage.read(`${dir}/big.json`);
  const longKey = await outcome(() => storage.write(`${dir}/${"k".repeat(600)}.json`, "{}"));
  const manager = new ContextManager({ contextDir: `${dir}/ctx`, fileSystem: storage, persistThreshold: 0 });
  const saved = await outcome(() => manager.saveContext("readFile", { path: "huge.bin" }, "x".repeat(26 * MiB), 1, "huge"));
  const atLimit = pattern(25 * MiB, 3);
  await storage.write(`${dir}/at-limit.bin`, atLimit);
  return {
    tooLarge,
    nothingWritten: afterTooLarge === undefined,
    longKey,
    saved,
    listedAfterFailedSave: await storage.list(`${dir}/ctx`),
    atLimitRoundTrips: same(await storage.read(`${dir}/at-limit.bin`), atLimit),
  };
}

/** A `ctx.storage` whose SQL fails on the `failAt`-th chunk insert, inside the real transaction. */
function failingOn(storage, failAt) {
  let inserts = 0;
  const sql = {
    exec(query, ...bindings) {
      if (query.startsWith("INSERT INTO toolctx_chunks") && ++inserts === failAt) throw new Error("injected SQLITE_FULL");
      return storage.sql.exec(query, ...bindings);
    },
  };
  return { sql, transactionSync: (fn) => storage.transactionSync(fn) };
}

async function doFaults(makeStorage, { storage: raw }) {
  const storage = makeStorage();
  const dir = `faults-${crypto.randomUUID().slice(0, 8)}`;
  const big = pattern(8 * MiB + 17, 1);
  await storage.write(`${dir}/big.bin`, big);
  const cells = raw.sql
    .exec("SELECT count(*) AS n, max(length(data)) AS largest FROM toolctx_chunks WHERE path = ?", `${dir}/big.bin`)
    .one();
  const bigRoundTrips = same(await storage.read(`${dir}/big.bin`), big);

  const replacement = pattern(5 * MiB, 2);
  const failed = await outcome(() => durableObjectStorage(failingOn(raw, 3)).write(`${dir}/big.bin`, replacement));
  const afterFailure = await storage.read(`${dir}/big.bin`);
  const cellsAfter = raw.sql.exec("SELECT count(*) AS n FROM toolctx_chunks WHERE path = ?", `${dir}/big.bin`).one().n;
  const fresh = await outcome(() => durableObjectStorage(failingOn(raw, 2)).write(`${dir}/new.bin`, replacement));

  const manager = new ContextManager({ contextDir: `${dir}/ctx`, fileSystem: storage, persistThreshold: 0 });
  const text = "é🙂".repeat(600_000);
  const fp = await manager.saveContext("readFile", { path: "big.txt" }, text, 1, "big");
  const [record] = await manager.loadContexts([fp]);
  return {
    cells: { count: cells.n, largest: cells.largest },
    bigRoundTrips,
    failed,
    oldValueIntact: same(afterFailure, big),
    cellsUnchanged: cellsAfter === cells.n,
    fresh,
    freshInvisible: (await storage.read(`${dir}/new.bin`)) === undefined && !(await storage.list(dir)).includes("new.bin"),
    orphanCells: raw.sql.exec("SELECT count(*) AS n FROM toolctx_chunks WHERE path = ?", `${dir}/new.bin`).one().n,
    managerRoundTrips: record?.result === text,
  };
}

/** One row a file: the value limit (2 MB a row, documented), checked before D1 or the object's SQLite sees it, and past it in SQL (an append). */
async function rowLimits(storage, dir, limit) {
  const tooLarge = await outcome(() => storage.write(`${dir}/big.bin`, new Uint8Array(limit + 1)));
  const nothingWritten = (await storage.read(`${dir}/big.bin`)) === undefined;
  const atLimit = pattern(limit, 5);
  await storage.write(`${dir}/at-limit.bin`, atLimit);
  const atLimitRoundTrips = same(await storage.read(`${dir}/at-limit.bin`), atLimit);
  const appendPast = await outcome(() => storage.append(`${dir}/at-limit.bin`, new Uint8Array(64 * 1024)));
  const intactAfterAppend = same(await storage.read(`${dir}/at-limit.bin`), atLimit);
  return { tooLarge, nothingWritten, atLimitRoundTrips, appendPast, intactAfterAppend, saysLimit: storage.maxValueBytes === limit };
}

/**
 * A store on `storage`, whose `maxValueBytes` is small, past several segments' worth of
 * records: the index segments it writes, each within the limit (none refused), and a record
 * found by a word of its own after a reopen.
 */
async function segmentsWithin(storage, dir) {
  const notes = [];
  const onDebug = (m) => notes.push(String(m));
  const contextDir = `${dir}/segments`;
  const manager = new ContextManager({ contextDir, fileSystem: storage, persistThreshold: 0, onDebug });
  const paths = [];
  for (let i = 0; i < 1200; i++) {
    const words = Array.from({ length: 40 }, (_, k) => `w${(i * 31 + k * 7) % 4001}`).join(" ");
    paths.push(await manager.saveContext("grep", { i }, `${words} needle${i}`));
  }
  await manager.close();
  const names = (await storage.list(`${contextDir}/.index`)).filter((n) => n.endsWith(".seg"));
  const sizes = await Promise.all(names.map(async (n) => (await storage.read(`${contextDir}/.index/${n}`)).length));
  const reopened = await ContextManager.open({ contextDir, fileSystem: storage, onDebug });
  const [found] = await reopened.selectRelevant("needle777", { limit: 1 });
  await reopened.close();
  return {
    count: names.length,
    largest: Math.max(...sizes),
    limit: storage.maxValueBytes,
    refused: notes.filter((m) => /could not write an index segment/.test(m)),
    found: found?.filepath === paths[777],
  };
}

async function d1Faults(makeStorage, { env }) {
  const storage = makeStorage();
  const dir = `faults-${crypto.randomUUID().slice(0, 8)}`;
  const limits = await rowLimits(storage, dir, D1_MAX_VALUE_BYTES);
  const contenders = await Promise.all(
    Array.from({ length: 16 }, (_, i) => outcome(() => makeStorage().write(`${dir}/race.json`, `writer ${i}`, { exclusive: true }))),
  );
  const stored = new TextDecoder().decode(await storage.read(`${dir}/race.json`));
  const winner = contenders.findIndex((c) => c.ok);
  // The lease row: a holder that crashed (its lease ran out) is taken over; a live one is
  // waited for, then TIMEOUT, and its row stays; a holder whose row was taken over while
  // it ran gets LOCK_LOST, and the next holder's row stays.
  const plant = (name, token, expires) =>
    env.DB.prepare("INSERT OR REPLACE INTO toolctx_files_locks (name, token, holder, expires) VALUES (?, ?, '{}', ?)").bind(name, token, expires).run();
  const tokenOf = async (name) => (await env.DB.prepare("SELECT token FROM toolctx_files_locks WHERE name = ?").bind(name).first())?.token;
  await plant(`${dir}/crashed`, "a crashed holder", Date.now() - 1000);
  const tookOver = await storage.lock(`${dir}/crashed`, async () => "ran");
  const crashedLeaseGone = (await tokenOf(`${dir}/crashed`)) === undefined;
  await plant(`${dir}/live`, "a live holder", Date.now() + 60_000);
  const waited = await outcome(() => d1Storage(env.DB, { lockWaitMs: 300 }).lock(`${dir}/live`, async () => "never"));
  const liveLeaseKept = (await tokenOf(`${dir}/live`)) === "a live holder";
  const lost = await outcome(() => storage.lock(`${dir}/lost`, () => plant(`${dir}/lost`, "the next holder", Date.now() + 60_000)));
  const nextLeaseKept = (await tokenOf(`${dir}/lost`)) === "the next holder";
  const exec = (text, ...params) => env.DB.prepare(text).bind(...params).run();
  const shapes = await wrongShapes((table) => d1Storage(env.DB, { table }), exec, dir);
  return {
    ...limits,
    segments: await segmentsWithin(d1Storage(env.DB, { table: "toolctx_small_rows", maxValueBytes: 32 * 1024 }), dir),
    race: { won: contenders.filter((c) => c.ok).length, lost: contenders.filter((c) => c.code === "EEXIST").length, storedIsWinner: stored === `writer ${winner}` },
    lock: { tookOver, crashedLeaseGone, waited, liveLeaseKept, lost, nextLeaseKept },
    shapes,
  };
}

async function doSqlFaults(makeStorage, { storage: raw }) {
  const storage = makeStorage();
  const dir = `faults-${crypto.randomUUID().slice(0, 8)}`;
  const limits = await rowLimits(storage, dir, DO_SQL_MAX_VALUE_BYTES);
  // Beside durableObjectStorage in one object: one path, two tables, two values.
  const cells = durableObjectStorage(raw);
  await cells.write(`${dir}/both.json`, "cells");
  await storage.write(`${dir}/both.json`, "row");
  const both = [await cells.read(`${dir}/both.json`), await storage.read(`${dir}/both.json`)].map((b) => new TextDecoder().decode(b));
  const row = raw.sql.exec("SELECT size, length(bytes) AS stored FROM toolctx_records WHERE path = ?", `${dir}/both.json`).one();
  const otherShape = await outcome(() => durableObjectSqlStorage(raw, { table: "toolctx_files" }));
  const exec = (text, ...params) => raw.sql.exec(text, ...params);
  const shapes = await wrongShapes((table) => durableObjectSqlStorage(raw, { table }), exec, dir);
  // One lock per object, whichever adapter takes it.
  let whileHeld;
  await cells.lock(`${dir}/shared`, async () => {
    whileHeld = await outcome(() => storage.lock(`${dir}/shared`, async () => "ran", { wait: false }));
  });
  const read = storage.read(`${dir}/both.json`);
  return {
    ...limits,
    both,
    row,
    otherShape,
    shapes,
    whileHeld,
    synchronous: read instanceof Uint8Array,
  };
}

export function faults(backend, makeStorage, extra) {
  return { r2: r2Faults, kv: kvFaults, do: doFaults, d1: d1Faults, dosql: doSqlFaults }[backend](makeStorage, extra);
}
