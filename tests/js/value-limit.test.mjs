// A storage whose values have a largest size (`maxValueBytes`: D1's and a Durable Object's
// 2 MB rows, a user's own) gets no index segment over it: the segment a write would make is
// cut into several, and segments whose merge would be over it are not merged. Before, the
// first segment over the limit was refused by the storage, and the next save made and sent
// it again, and so on: every save past the backlog paid a whole segment's encoding, and no
// record reached a segment.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ContextManager } from "toolctx";
import { memoryStorage } from "toolctx/memory";

/** A memory storage that refuses a value over `limit` bytes, as the SQL adapters do, and says so in `maxValueBytes`. */
function limitedStorage(limit) {
  const inner = memoryStorage();
  const refused = [];
  const size = (data) => (typeof data === "string" ? new TextEncoder().encode(data).length : data.length);
  return {
    ...inner,
    maxValueBytes: limit,
    refused,
    async write(path, data, options) {
      if (size(data) > limit) {
        refused.push(`${path}: ${size(data)} bytes`);
        throw Object.assign(new Error(`${path}: over the ${limit}-byte value limit`), { code: "TOO_LARGE" });
      }
      return inner.write(path, data, options);
    },
  };
}

const WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omicron sigma upsilon".split(" ");
/** A result of 60 words, most of them distinct across records (numbered), so segments grow with the records. */
const text = (i) => Array.from({ length: 60 }, (_, k) => `${WORDS[(i + k) % WORDS.length]}${(i * 31 + k * 7) % 5003}`).join(" ");

test("a storage's maxValueBytes: segments are cut and merged within it; every record is found after a reopen", async () => {
  const limit = 48 * 1024;
  const storage = limitedStorage(limit);
  const notes = [];
  const manager = new ContextManager({ contextDir: "/limited", fileSystem: storage, persistThreshold: 0, onDebug: (m) => notes.push(String(m)) });
  const paths = [];
  for (let i = 0; i < 3000; i++) paths.push(await manager.saveContext("grep", { i }, `${text(i)} needle${i}`));
  await manager.close();
  assert.deepEqual(storage.refused, [], "no value over the limit was written");
  assert.ok(notes.some((m) => /not merged: together over the storage.s largest value \(49152 bytes\)/.test(m)), "a merge over the limit was left undone");
  const segments = await storage.list("/limited/.index");
  assert.ok(segments.filter((n) => n.endsWith(".seg")).length > 1, `several segments: ${segments}`);
  for (const name of segments.filter((n) => n.endsWith(".seg"))) {
    assert.ok((await storage.read(`/limited/.index/${name}`)).length <= limit, `${name} within the limit`);
  }
  const held = segments.filter((n) => n.endsWith(".seg")).reduce((sum, n) => sum + Number(n.split("-")[0]), 0);
  assert.ok(held >= 3000, `the segments hold every record (${held})`);

  const reopened = await ContextManager.open({ contextDir: "/limited", fileSystem: storage, onDebug: (m) => notes.push(String(m)) });
  try {
    for (const i of [0, 1234, 2999]) {
      const [first] = await reopened.selectRelevant(`needle${i}`, { limit: 1 });
      assert.equal(first?.filepath, paths[i], `needle${i}`);
    }
    assert.ok(!notes.some((m) => /no segment held|could not write an index segment/.test(m)), notes.filter((m) => /segment/.test(m)).join("\n"));
  } finally {
    await reopened.close();
  }
});

test("maxValueBytes must be a whole number of bytes ≥ 1 where a storage gives it", async () => {
  for (const bad of [0, -1, 1.5, "2000000", Number.NaN]) {
    const storage = { ...memoryStorage(), maxValueBytes: bad };
    assert.throws(() => new ContextManager({ contextDir: "/bad", fileSystem: storage }), (err) => err.code === "INVALID_ARGUMENT" && /maxValueBytes/.test(err.message), String(bad));
  }
});

test("a segment write that keeps failing is tried again as records double, not at every save", async () => {
  const inner = memoryStorage();
  let attempts = 0;
  const storage = {
    ...inner,
    async write(path, data, options) {
      if (path.includes("/.index/")) {
        attempts++;
        throw Object.assign(new Error("the disk is full"), { code: "ENOSPC" });
      }
      return inner.write(path, data, options);
    },
  };
  const notes = [];
  const manager = new ContextManager({ contextDir: "/failing", fileSystem: storage, persistThreshold: 0, onDebug: (m) => notes.push(String(m)) });
  const paths = [];
  for (let i = 0; i < 3000; i++) paths.push(await manager.saveContext("grep", { i }, `${text(i)} needle${i}`));
  assert.ok(notes.some((m) => /could not write an index segment: .*disk is full/.test(m)), "onDebug says why");
  // 1,024 records wait before the first try (a loop of awaited saves), then 2,048: two tries, not one a save
  assert.ok(attempts >= 1 && attempts <= 3, `${attempts} tries of a segment write over 3,000 saves`);
  const [first] = await manager.selectRelevant("needle2999", { limit: 1 });
  assert.equal(first?.filepath, paths[2999], "every record is still ranked from memory");
  await manager.close().catch(() => {});
});
