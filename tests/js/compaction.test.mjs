// A store whose records go (retention's evictions, files removed by another program) keeps
// its index segments compact: a segment at least half of whose records are gone is merged
// (crates/core/src/store/holdings.rs). Before, only ten segments of one size merged: 6,000
// saves under `maxRecords: 500` left 3,000 segment entries for 500 records, and on a storage
// with a largest value (segments over half of it take no merge) 96 segments.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ContextManager } from "toolctx";
import { memoryStorage } from "toolctx/memory";

const WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omicron sigma upsilon".split(" ");
/** A result of 60 words, most of them distinct across records, so segments grow with the records. */
const text = (i) => Array.from({ length: 60 }, (_, k) => `${WORDS[(i + k) % WORDS.length]}${(i * 31 + k * 7) % 5003}`).join(" ");

/** The segments of `dir`, and the record entries they hold (their names say how many). */
async function segmentsOf(storage, dir) {
  const names = (await storage.list(`${dir}/.index`)).filter((n) => n.endsWith(".seg"));
  return { count: names.length, entries: names.reduce((sum, n) => sum + Number(n.split("-")[0]), 0) };
}

for (const [what, maxValueBytes] of [["any storage", undefined], ["a storage with maxValueBytes", 48 * 1024]]) {
  test(`${what}: segments of evicted records are compacted as a manager saves`, async () => {
    const storage = { ...memoryStorage(), ...(maxValueBytes ? { maxValueBytes } : {}) };
    const manager = new ContextManager({ contextDir: "/c", fileSystem: storage, persistThreshold: 0, retention: { maxRecords: 500 } });
    const paths = [];
    for (let i = 0; i < 6000; i++) paths.push(await manager.saveContext("grep", { i }, `${text(i)} needle${i}`));
    await manager.close();
    const records = (await storage.list("/c")).filter((n) => n.endsWith(".json"));
    assert.equal(records.length, 500);
    const { count, entries } = await segmentsOf(storage, "/c");
    assert.ok(entries >= 500 && entries <= 2 * 500, `${entries} segment entries (${count} segments) for 500 records`);

    const reopened = await ContextManager.open({ contextDir: "/c", fileSystem: storage, readOnly: true });
    try {
      const [last] = await reopened.selectRelevant("needle5999", { limit: 1 });
      assert.equal(last?.filepath, paths[5999]);
      assert.equal(reopened.getAllPointers().length, 500);
    } finally {
      await reopened.close();
    }
  });
}

test("records removed by another program: the next writer compacts the segments that held them", async () => {
  const storage = memoryStorage();
  const first = new ContextManager({ contextDir: "/c", fileSystem: storage, persistThreshold: 0 });
  const paths = [];
  for (let i = 0; i < 3000; i++) paths.push(await first.saveContext("grep", { i }, `${text(i)} needle${i}`));
  await first.close();
  assert.equal((await segmentsOf(storage, "/c")).entries, 3000);
  // Another program removes the first 2,000 records.
  for (const path of paths.slice(0, 2000)) await storage.remove(path);

  const second = await ContextManager.open({ contextDir: "/c", fileSystem: storage, persistThreshold: 0 });
  await second.saveContext("grep", { i: 3000 }, `${text(3000)} needle3000`);
  await second.close();
  const { count, entries } = await segmentsOf(storage, "/c");
  assert.ok(entries <= 2 * 1001, `${entries} segment entries (${count} segments) for 1,001 records`);

  const third = await ContextManager.open({ contextDir: "/c", fileSystem: storage, readOnly: true });
  try {
    assert.equal(third.getAllPointers().length, 1001);
    for (const i of [2000, 2999, 3000]) {
      const [hit] = await third.selectRelevant(`needle${i}`, { limit: 1 });
      assert.match(hit?.filepath ?? "", /grep_/, `needle${i}`);
    }
  } finally {
    await third.close();
  }
});
