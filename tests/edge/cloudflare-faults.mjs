// Faults and bad input for toolctx/cloudflare (issue 14, item 8), run inside workerd.
// Each backend answers plain findings; cloudflare.test.mjs asserts on them.

import { ContextManager } from "toolctx";
import { durableObjectStorage, r2Storage } from "toolctx/cloudflare";

const MiB = 1024 * 1024;

async function outcome(call) {
  try {
    await call();
    return { ok: true };
  } catch (err) {
    return { ok: false, code: err?.code, message: String(err?.message ?? err), r2Code: err?.r2Code, cause: err?.cause !== undefined };
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

export function faults(backend, makeStorage, extra) {
  return { r2: r2Faults, kv: kvFaults, do: doFaults }[backend](makeStorage, extra);
}
