// A storage whose values have a largest size (`maxValueBytes`: D1's and a Durable Object's
// 2 MB rows, a user's own) gets no index segment over it: the segment a write would make is
// cut into several, a merge too, and a segment over half the limit takes no more merges. Before, the
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
  const written = [];
  const size = (data) => (typeof data === "string" ? new TextEncoder().encode(data).length : data.length);
  return {
    ...inner,
    maxValueBytes: limit,
    refused,
    written,
    async write(path, data, options) {
      written.push([path, size(data)]);
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
  const segments = await storage.list("/limited/.index");
  assert.ok(segments.filter((n) => n.endsWith(".seg")).length > 1, `several segments: ${segments}`);
  for (const name of segments.filter((n) => n.endsWith(".seg"))) {
    assert.ok((await storage.read(`/limited/.index/${name}`)).length <= limit, `${name} within the limit`);
  }
  const held = segments.filter((n) => n.endsWith(".seg")).reduce((sum, n) => sum + Number(n.split("-")[0]), 0);
  assert.equal(held, 3000, "the segments hold every record once");

  const reopened = await ContextManager.open({ contextDir: "/limited", fileSystem: storage, onDebug: (m) => notes.push(String(m)) });
  try {
    for (const i of [0, 1234, 2999]) {
      const [first] = await reopened.selectRelevant(`needle${i}`, { limit: 1 });
      assert.equal(first?.filepath, paths[i], `needle${i}`);
    }
    assert.ok(!notes.some((m) => /no segment holds it|could not write an index segment/.test(m)), notes.filter((m) => /segment/.test(m)).join("\n"));
    // Another process saves a few more: it writes their segment, and merges none of the
    // segments near the limit again (they would only be cut the same way).
    const before = (await storage.list("/limited/.index")).filter((n) => n.endsWith(".seg"));
    assert.ok(before.length >= 10, "enough segments for a merge");
    for (let i = 3000; i < 3300; i++) await reopened.saveContext("grep", { i }, `${text(i)} needle${i}`);
    await reopened.flush();
    const after = await storage.list("/limited/.index");
    assert.deepEqual(before.filter((n) => !after.includes(n)), [], "no segment near the limit merged again");
  } finally {
    await reopened.close();
  }
});

test("a record whose index alone is over maxValueBytes is held by no segment, said once, and found after a reopen", async () => {
  const storage = limitedStorage(64 * 1024);
  const notes = [];
  const onDebug = (m) => notes.push(String(m));
  const manager = new ContextManager({ contextDir: "/big", fileSystem: storage, persistThreshold: 0, onDebug });
  // random bytes as base64: its words (cut at each case change and digit) are mostly distinct,
  // so the record's index is larger than its text
  const random = crypto.getRandomValues(new Uint8Array(36 * 1024));
  const big = await manager.saveContext("fetch", { url: "https://example.com/blob.bin" }, Buffer.from(random).toString("base64"));
  for (let i = 0; i < 1500; i++) await manager.saveContext("grep", { i }, `${text(i)} needle${i}`);
  await manager.close();
  assert.deepEqual(storage.refused, [], "no value over the limit was written");
  assert.equal(notes.filter((m) => m.includes("a record's index is over the storage's largest value")).length, 1, "said once");
  const names = (await storage.list("/big/.index")).filter((n) => n.endsWith(".seg"));
  assert.equal(names.reduce((sum, n) => sum + Number(n.split("-")[0]), 0), 1500, "the others, each in one segment");
  const reopened = await ContextManager.open({ contextDir: "/big", fileSystem: storage, onDebug });
  try {
    const [first] = await reopened.selectRelevant("example.com blob.bin", { limit: 1 });
    assert.equal(first?.filepath, big, "read as a record no segment holds");
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
