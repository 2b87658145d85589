// The README's "Differences from the original" makes claims; each test here checks one,
// against the built package on the Node file-system adapter (what a switching user runs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContextManager } from "toolctx";
import { nodeStorage } from "toolctx/node";

const top = mkdtempSync(join(tmpdir(), "toolctx-differences-"));
let n = 0;
const fresh = () => join(top, `store-${n++}`);
const manager = (contextDir, options = {}) =>
  new ContextManager({ contextDir, fileSystem: nodeStorage(), persistThreshold: 0, ...options });
const records = (dir) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")).sort() : []);

// A record as the TypeScript original writes it: pretty-printed, no "v".
function originalRecord(dir, name, result) {
  const record = {
    toolName: "readFile",
    toolDescription: "readFile path=a.ts",
    args: { path: "a.ts" },
    timestamp: "2025-01-18T14:30:22.000Z",
    result,
  };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), JSON.stringify(record, null, 2));
  return join(dir, name);
}
const ORIGINAL_NAME = "readFile_625c49607612_1737210622000_0_x9k2.json";

test("clear() removes only this manager's records; adopted records and other files stay; purge() removes every record", async () => {
  const dir = fresh();
  const a = manager(dir);
  const mine = await a.saveContext("readFile", { path: "a.ts" }, "a");
  const b = manager(dir);
  await b.saveContext("grep", { pattern: "x" }, "b");
  writeFileSync(join(dir, "notes.txt"), "mine");
  assert.equal(await a.rebuildIndex(), 2, "a adopts b's record as a pointer");
  await a.clear();
  assert.equal(records(dir).length, 1, "b's record stays");
  assert.ok(!records(dir).includes(mine.split("/").pop()), "a's own record is gone");
  assert.ok(readdirSync(dir).includes("notes.txt"));
  assert.equal(await ContextManager.purge({ contextDir: dir, fileSystem: nodeStorage() }), 1);
  assert.deepEqual(readdirSync(dir), ["notes.txt"]);
});

test("every record is written by default, as the original writes it; persistThreshold holds small ones in memory until flush()", async () => {
  const eager = fresh();
  const written = await manager(eager, { persistThreshold: undefined }).saveContext("readFile", { path: "a.ts" }, "small");
  assert.equal(JSON.parse(readFileSync(written, "utf8")).result, "small");
  const dir = fresh();
  const m = manager(dir, { persistThreshold: 32 * 1024 });
  const fp = await m.saveContext("readFile", { path: "a.ts" }, "small");
  assert.deepEqual(records(dir), [], "nothing on disk yet");
  assert.equal((await m.loadContexts([fp]))[0].result, "small", "served from memory");
  await m.flush();
  assert.deepEqual(records(dir), [fp.split("/").pop()]);
});

test("records are one compact line with \"v\":1 first; the original's pretty-printed records are read, adopted and exported", async () => {
  const dir = fresh();
  const m = manager(dir);
  const fp = await m.saveContext("readFile", { path: "a.ts" }, { lines: ["x"] });
  const text = readFileSync(fp, "utf8");
  assert.ok(text.startsWith('{"v":1,"toolName":"readFile"'), text.slice(0, 40));
  assert.ok(!text.includes("\n"));
  const original = originalRecord(dir, ORIGINAL_NAME, "from the original");
  const [record] = await m.loadContexts([original]);
  assert.equal(record.result, "from the original");
  assert.equal(record.v, undefined, "read as version 1, returned as stored");
  const other = manager(dir);
  assert.equal(await other.rebuildIndex(), 2);
  assert.ok(other.getAllPointers().some((p) => p.filepath === original));
  const exported = await ContextManager.exportRecords({ contextDir: dir, fileSystem: nodeStorage() });
  assert.equal(exported.exported, 2);
  const copy = fresh();
  await ContextManager.importRecords({ contextDir: copy, fileSystem: nodeStorage() }, exported);
  assert.equal(readFileSync(join(copy, ORIGINAL_NAME), "utf8"), readFileSync(original, "utf8"), "byte for byte");
});

// A file name as the TypeScript original's generateFilename makes it: the tool name with
// every character outside [A-Za-z0-9] made '_', 1 to 8 hex digits of Math.abs of a 32-bit
// string hash of the args, Date.now(), the counter, and Math.random().toString(36)'s
// characters 2 to 6 (fewer when the number prints short).
function originalHash(text) {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = ((hash << 5) - hash + text.charCodeAt(i)) | 0;
  return Math.abs(hash).toString(16).slice(0, 8);
}
const originalName = (toolName, args, ms, counter, random) =>
  `${toolName.replace(/[^\dA-Za-z]/g, "_")}_${originalHash(JSON.stringify(args))}_${ms}_${counter}_${random.toString(36).slice(2, 6)}.json`;

test("the original's records, whatever their names, are records to adopt, load, export, import and purge (one name grammar)", async () => {
  const dir = fresh();
  const names = [
    originalName("readFile", { path: "a.ts" }, 1735012345678, 0, 0.123456789), // 8 hex digits or fewer, 4 random characters
    originalName("web.search-v2", { q: "x" }, 1735012345679, 1, 0.5), // "0.i": one random character
    originalName("grep", {}, 1735012345680, 2, 0.25), // "0.9": the hash of "{}"
  ];
  assert.ok(names.some((n) => /_[0-9a-f]{1,7}_/.test(n)), `a short hash among ${names}`);
  assert.match(names[1], /^web_search_v2_[0-9a-f]{1,8}_1735012345679_1_[a-z0-9]{1}\.json$/);
  const paths = names.map((name) => originalRecord(dir, name, `from ${name}`));
  writeFileSync(join(dir, "notes.json"), "{}");
  const m = manager(dir);
  assert.equal(await m.rebuildIndex(), 3, "adopted");
  assert.deepEqual((await m.loadContexts(paths)).map((r) => r.result), names.map((n) => `from ${n}`), "loaded");
  const exported = await ContextManager.exportRecords({ contextDir: dir, fileSystem: nodeStorage() });
  assert.equal(exported.exported, 3, "exported");
  assert.deepEqual(exported.skipped, []);
  const copy = fresh();
  await ContextManager.importRecords({ contextDir: copy, fileSystem: nodeStorage() }, exported);
  assert.deepEqual(records(copy), [...names].sort(), "imported under the same names");
  assert.equal(await ContextManager.purge({ contextDir: dir, fileSystem: nodeStorage() }), 3, "purged");
  assert.deepEqual(readdirSync(dir), ["notes.json"], "a file that is not a record stays");
});

test("tool names: every character outside [A-Za-z0-9_-] becomes '-', at most 64 kept, 'tool' when empty", async () => {
  const dir = fresh();
  const m = manager(dir);
  const name = async (tool) => (await m.saveContext(tool, {}, 1)).split("/").pop().split("_")[0];
  assert.equal(await name("my tool/../x"), "my-tool----x");
  assert.equal(await name("détails"), "d-tails");
  assert.equal(await name(""), "tool");
  assert.ok((await name("a".repeat(300))).length <= 64);
  for (const f of readdirSync(dir)) assert.match(f, /^[A-Za-z0-9_-]{1,64}_[0-9a-f]{12}_[0-9]{13}_[0-9]+_[a-z0-9]{4}\.json$/);
});

test("descriptions: the tool name's words, then key=value pairs", async () => {
  const m = manager(fresh());
  await m.saveContext("readFile", { path: "src/auth/login.ts" }, "x");
  await m.saveContext("search_code", { query: "AuthError", limit: 5 }, "x");
  assert.deepEqual(
    m.getAllPointers().map((p) => p.toolDescription),
    ["read file: path=src/auth/login.ts", "search code: query=AuthError, limit=5"],
  );
});

test("ranking: BM25 by default, the overlap count on request; the same relevant set, rare words first", async () => {
  const m = manager(fresh());
  for (let i = 0; i < 5; i++) await m.saveContext("readFile", { path: `src/auth/part${i}.ts` }, "x");
  await m.saveContext("grep", { pattern: "token" }, "x");
  const pointers = m.getAllPointers();
  const bm25 = m.selectRelevantContexts("auth token", pointers);
  assert.deepEqual(bm25, m.selectRelevantContexts("auth token", pointers, { strategy: "bm25" }));
  const overlap = m.selectRelevantContexts("auth token", pointers, { strategy: "overlap" });
  assert.deepEqual([...bm25].sort(), [...overlap].sort(), "same set");
  assert.equal(bm25[0], pointers[5].filepath, "the rare word ranks first under BM25");
  assert.equal(overlap[0], pointers[0].filepath, "a tie in the overlap count keeps the given order");
});

test("matching: whole words whatever the case; identifiers across conventions; no substrings", async () => {
  const m = manager(fresh());
  const camel = await m.saveContext("readFile", { path: "a.ts" }, "x");
  const snake = await m.saveContext("read_file", { path: "b.ts" }, "x");
  const catalog = await m.saveContext("fetch", { url: "catalog" }, "x");
  const pointers = m.getAllPointers();
  const pick = (q) => m.selectRelevantContexts(q, pointers, { fallback: "none" }).sort();
  for (const q of ["READFILE", "ReadFile", "readfile", "read_file", "read file"]) {
    assert.deepEqual(pick(q), [camel, snake].sort(), q);
  }
  assert.deepEqual(pick("catalog"), [catalog]);
  assert.deepEqual(pick("log"), [], "no substring match");
});

test("loadContexts reads only inside contextDir and reports the rest as 'Failed to load <path>'", async () => {
  const dir = fresh();
  const messages = [];
  const m = manager(dir, { onDebug: (msg) => messages.push(msg) });
  const outside = originalRecord(join(top, "elsewhere"), ORIGINAL_NAME, "secret");
  const sneaky = `${dir}/../elsewhere/${ORIGINAL_NAME}`;
  assert.deepEqual(await m.loadContexts([outside, sneaky]), []);
  assert.ok(messages.includes(`Failed to load ${outside}: outside the context dir`), messages.join("\n"));
  assert.ok(messages.some((msg) => msg.startsWith(`Failed to load ${sneaky}:`)));
});

test("a lone surrogate rejects the save with NOT_SERIALIZABLE and writes nothing", async () => {
  const dir = fresh();
  const m = manager(dir);
  await assert.rejects(m.saveContext("t", { q: "\uD800" }, 1), { code: "NOT_SERIALIZABLE" });
  await assert.rejects(m.saveContext("t", {}, "ok \uDC00"), { code: "NOT_SERIALIZABLE" });
  assert.equal(m.size, 0);
  assert.deepEqual(records(dir), []);
});

test("errors carry a stable code and the host's error as cause", async () => {
  const failure = Object.assign(new Error("disk on fire"), { code: "EIO" });
  const storage = {
    read: async () => undefined,
    write: async () => { throw failure; },
    remove: async () => {},
    list: async () => [],
  };
  const m = new ContextManager({ contextDir: "/ctx", fileSystem: storage, persistThreshold: 0 });
  await assert.rejects(m.saveContext("t", {}, 1), (err) => {
    assert.ok(err instanceof Error);
    assert.equal(err.code, "STORAGE");
    assert.equal(err.cause, failure);
    return true;
  });
});

test("kept from the original: onDebug hears the folder and storage at construction", () => {
  const messages = [];
  const dir = fresh();
  manager(dir, { onDebug: (msg) => messages.push(msg) });
  assert.ok(messages.some((msg) => msg.startsWith(`ContextManager initialized in ${dir} with `)), messages.join("\n"));
});

test("ranking reads the result's content, stems words, and counts a repeated output once in selectRelevant", async () => {
  const m = manager(fresh());
  const refresh = await m.saveContext("readFile", { path: "src/auth/refresh.ts" }, "export function rotateToken() { /* rotate the expired refresh token */ }");
  const refunds = await m.saveContext("listDirectory", { path: "src/billing" }, ["refunds.ts", "invoices.ts"]);
  const pointers = m.getAllPointers();
  assert.deepEqual(m.selectRelevantContexts("expired", pointers, { fallback: "none" }), [refresh], "found by its content");
  assert.ok(m.selectRelevantContexts("refund", pointers, { fallback: "none" }).includes(refunds), "refund finds refunds.ts");
  const again = await m.saveContext("readFile", { path: "src/auth/refresh.ts" }, "export function rotateToken() { /* rotate the expired refresh token */ }");
  const scored = await m.selectRelevant("expired refresh token");
  assert.deepEqual(scored.map((s) => s.filepath), [again], "the latest copy, once");
});
