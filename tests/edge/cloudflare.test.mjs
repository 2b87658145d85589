// toolctx/cloudflare inside real workerd (npm miniflare on 127.0.0.1, its local R2, KV, D1
// and SQLite-backed Durable Object simulators; nothing remote, no login): the shared
// conformance suites over each adapter, many writers on one bucket and one Durable Object,
// faults and bad input, and the README's worker.
//
//   node --test tests/edge/cloudflare.test.mjs        (after `make pkg`)

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { assertWrongShapes } from "../js/sqlite-shapes.mjs";
import { bundleForWorkerd } from "./bundle.mjs";
import { startWorkerd } from "./runtimes.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const WRITERS = 8;
const PER_WRITER = 500;

// Nine workers (separate isolates) sharing one R2 bucket, one KV namespace and the Durable
// Object class of w0: w0..w7 are the writers, w8 the coordinator that starts them through
// service bindings and then resumes as the ninth.
const shared = (i) => ({
  name: `w${i}`,
  r2Buckets: { BUCKET: "toolctx-bucket" },
  kvNamespaces: { KV: "toolctx-kv" },
  d1Databases: { DB: "toolctx-d1" },
  durableObjects: { STORE: i === 0 ? { className: "Store", useSQLite: true } : { className: "Store", scriptName: "w0", useSQLite: true } },
});
const workers = Array.from({ length: WRITERS + 1 }, (_, i) => shared(i));
workers[WRITERS].serviceBindings = {
  SELF: `w${WRITERS}`,
  ...Object.fromEntries(Array.from({ length: WRITERS }, (_, i) => [`W${i}`, `w${i}`])),
};

let workerd;
before(async () => {
  workerd = await startWorkerd(await bundleForWorkerd(`${here}cloudflare-worker.mjs`), workers);
});
after(() => workerd?.dispose());

// What a backend cannot do, by design, and the conformance tests that need it: KV has no
// atomic operation, so two managers of ONE session can lose each other's manifest entries
// (resume still recovers their records from the listing).
// D1 and a Durable Object's SQLite hold at most 2 MB in a row, and d1Storage and
// durableObjectSqlStorage keep one row a file: the 8 MiB files of the host suite are
// TOO_LARGE there (what they do instead: the row-limit faults below).
const ROW_LIMIT = [/a file of 8 MiB round-trips/, /readRange \(when the host has it\) of a file of 8 MiB/];
const CANNOT = { kv: [/two managers writing one session at once lose no manifest entry/], d1: ROW_LIMIT, dosql: ROW_LIMIT };

function report(backend, results) {
  const cannot = (r) => (CANNOT[backend] ?? []).some((re) => re.test(r.name));
  const failed = results.filter((r) => !r.ok && !cannot(r));
  for (const r of failed) console.log(`# not ok - ${r.name}\n#   ${r.error.replaceAll("\n", "\n#   ")}`);
  assert.deepEqual(failed.map((r) => r.name), [], "every conformance test passes");
  const skipped = results.filter(cannot).map((r) => r.name);
  return `${results.length - skipped.length} conformance tests passed${skipped.length ? `; not required: ${skipped.join(", ")}` : ""}`;
}

for (const [backend, what] of [
  ["r2", "an R2 bucket"],
  ["kv", "a KV namespace"],
  ["do", "a Durable Object's SQLite storage"],
  ["d1", "a D1 database"],
  ["dosql", "a table of a Durable Object's SQLite (durableObjectSqlStorage)"],
]) {
  test(`workerd: the conformance suites pass over ${what}`, async (t) => {
    const results = await workerd.fetch("w0", `/${backend}/suites?object=suites`);
    assert.ok(results.length > 60, `only ${results.length} conformance tests ran`);
    t.diagnostic(report(backend, results));
  });
}

for (const [backend, what] of [["r2", "one R2 bucket"], ["do", "one Durable Object"]]) {
  test(`workerd: ${WRITERS} workers save ${PER_WRITER} records each into ${what}; a ninth resumes all, byte for byte`, async (t) => {
    const { staleId, summaries, seen } = await workerd.fetch(`w${WRITERS}`, `/${backend}/fleet?writers=${WRITERS}&n=${PER_WRITER}`, { method: "POST" });
    const names = summaries.flatMap((s) => s.filepaths);
    assert.equal(names.length, WRITERS * PER_WRITER);
    assert.equal(new Set(names).size, WRITERS * PER_WRITER, "every name is unique");
    // Under the session's lock each cleanup reads the manifest again, so exactly one removes it.
    assert.deepEqual(summaries.flatMap((s) => s.removed), [staleId], "one cleanup removed the stale session, and only it");

    const sessions = summaries.map(({ writer, sessionId }) => ({ writer, sessionId }));
    assert.equal(seen.records, WRITERS * PER_WRITER, "the ninth sees every record");
    assert.equal(seen.unique, WRITERS * PER_WRITER);
    assert.deepEqual(seen.mismatched, [], "every record byte for byte");
    assert.deepEqual(seen.sessionsListed.sort(), sessions.map((s) => s.sessionId).sort(), "no active session was removed");
    t.diagnostic(`${seen.records} records from ${WRITERS} writers, ${seen.unique} unique names`);
  });
}

test("workerd R2: a bad key is a typed STORAGE error with R2's code; of 16 exclusive creates of one key exactly one wins", async () => {
  const found = await workerd.fetch("w0", "/r2/faults");
  assert.equal(found.invalidKey.code, "STORAGE");
  assert.equal(found.invalidKey.r2Code, 10020, found.invalidKey.message);
  assert.ok(found.invalidKey.cause, "the binding's error is the cause");
  assert.deepEqual(found.race, { won: 1, lost: 15, storedIsWinner: true });
});

test("workerd R2: the lease lock takes over from a crashed holder and times out, typed, behind a live one", async () => {
  const { lock } = await workerd.fetch("w0", "/r2/faults");
  assert.equal(lock.tookOver, "ran");
  assert.ok(lock.crashedLeaseGone, "released after the holder ran");
  assert.equal(lock.waited.code, "TIMEOUT", lock.waited.message);
  assert.ok(lock.liveLeaseKept, "the live holder's lease is untouched");
  assert.equal(lock.lost.code, "LOCK_LOST", `a holder whose lease was taken over: ${JSON.stringify(lock.lost)}`);
  assert.ok(lock.nextLeaseKept, "the next holder's lease is untouched");
});

test("workerd KV: a value over 25 MiB or a key over 512 bytes is TOO_LARGE and nothing is written", async () => {
  const found = await workerd.fetch("w0", "/kv/faults");
  assert.equal(found.tooLarge.code, "TOO_LARGE", found.tooLarge.message);
  assert.ok(found.nothingWritten);
  assert.equal(found.longKey.code, "TOO_LARGE", found.longKey.message);
  assert.equal(found.saved.ok, false, "saving a 26 MiB record fails");
  assert.match(found.saved.message, /TOO_LARGE/);
  assert.deepEqual(found.listedAfterFailedSave, [], "no record is visible");
  assert.ok(found.atLimitRoundTrips, "25 MiB exactly is accepted");
});

test("workerd Durable Object: 8 MiB is cut into cells under 2 MB; a write failing midway leaves nothing of itself", async () => {
  const found = await workerd.fetch("w0", "/do/faults?object=faults");
  assert.ok(found.cells.largest <= 2_000_000, `largest cell ${found.cells.largest} bytes`);
  assert.ok(found.cells.count >= 5, `${found.cells.count} cells`);
  assert.ok(found.bigRoundTrips);
  assert.equal(found.failed.ok, false);
  assert.match(found.failed.message, /injected/);
  assert.ok(found.oldValueIntact, "the value it was replacing is intact");
  assert.ok(found.cellsUnchanged, "no cell of the failed write remains");
  assert.equal(found.fresh.ok, false);
  assert.ok(found.freshInvisible, "a failed first write leaves no file");
  assert.equal(found.orphanCells, 0);
  assert.ok(found.managerRoundTrips, "a record over 2 MB saves and loads through the manager");
});

/** What both one-row-a-file adapters do at their 2 MB row limit (cloudflare-faults.mjs's rowLimits). */
function assertRowLimits(found) {
  assert.equal(found.tooLarge.code, "TOO_LARGE", found.tooLarge.message);
  assert.ok(found.nothingWritten, "a value over the limit writes nothing");
  assert.ok(found.atLimitRoundTrips, "a value at the limit round-trips: the limit fits under the real one");
  assert.equal(found.appendPast.code, "TOO_LARGE", `an append past the row limit: ${JSON.stringify(found.appendPast)}`);
  assert.ok(found.intactAfterAppend, "the value is as it was before the failed append");
  assert.ok(found.saysLimit, "the storage's maxValueBytes is its limit (the index writes its segments within it)");
}

test("workerd D1: values over the row limit are TOO_LARGE, and index segments stay within it; of 16 exclusive creates one wins; the lease row is taken over, waited for and lost, typed; a table or row of the wrong shape typed as Durable Object SQL's", async () => {
  const found = await workerd.fetch("w0", "/d1/faults");
  assertRowLimits(found);
  assert.deepEqual(found.race, { won: 1, lost: 15, storedIsWinner: true });
  const { lock } = found;
  assert.equal(lock.tookOver, "ran");
  assert.ok(lock.crashedLeaseGone, "released after the holder ran");
  assert.equal(lock.waited.code, "TIMEOUT", lock.waited.message);
  assert.ok(lock.liveLeaseKept, "the live holder's row is untouched");
  assert.equal(lock.lost.code, "LOCK_LOST", JSON.stringify(lock.lost));
  assert.ok(lock.nextLeaseKept, "the next holder's row is untouched");
  assertWrongShapes(assert, found.shapes);
  const { segments } = found;
  assert.deepEqual(segments.refused, [], "no index segment over the storage's maxValueBytes");
  assert.ok(segments.count > 1 && segments.largest <= segments.limit, `${segments.count} segments, the largest ${segments.largest} of ${segments.limit} bytes`);
  assert.ok(segments.found, "a record found by its own word after a reopen");
});

test("workerd Durable Object SQL: the row limit, typed; beside durableObjectStorage in one object (own table, one lock); synchronous; a table or row of the wrong shape typed as D1's", async () => {
  const found = await workerd.fetch("w0", "/dosql/faults?object=faults");
  assertRowLimits(found);
  assert.deepEqual(found.both, ["cells", "row"], "each adapter reads its own value");
  assert.deepEqual(found.row, { size: 3, stored: 3 }, "one row, bytes and size");
  assert.equal(found.otherShape.code, "INVALID_ARGUMENT", `durableObjectStorage's table: ${found.otherShape.message}`);
  assertWrongShapes(assert, found.shapes);
  assert.equal(found.whileHeld.code, "TIMEOUT", `the lock durableObjectStorage holds: ${JSON.stringify(found.whileHeld)}`);
  assert.ok(found.synchronous, "a read answers with the bytes, not a Promise");
});

test("README: the toolctx/cloudflare worker runs in workerd and answers what the README says", async () => {
  const readme = readFileSync(new URL("../../docs/storage.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("## Cloudflare Workers"));
  const [code] = section.match(/```js\n([\s\S]*?)```/).slice(1);
  const [, path, promised] = code.match(/^\/\/ GET (\S+) → (.*)$/m);
  const bundle = await bundleForWorkerd({ stdin: { contents: code, resolveDir: here, sourcefile: "readme-worker.mjs" } });
  const readmeWorker = await startWorkerd(bundle, [
    { name: "readme", r2Buckets: ["MY_BUCKET"], durableObjects: { AGENT: { className: "Agent", useSQLite: true } } },
  ]);
  try {
    assert.deepEqual(await readmeWorker.fetch("readme", path), JSON.parse(promised));
  } finally {
    await readmeWorker.dispose();
  }
});
