// `manager.handleOf(filepath)` (SPEC §1): `saveContext` keeps resolving to the filepath (the
// seed's contract), and the handle of that filepath is one call away, without listing every
// pointer. A filepath the manager has no pointer at is `undefined`; a value that is not a
// string is INVALID_ARGUMENT (never a wasm fault, never a plain TypeError).

import { test } from "node:test";
import assert from "node:assert/strict";

import { ContextManager, memoryStorage } from "toolctx";

const HANDLE = /^ctx:[a-z2-7]{1,12}$/;

test("handleOf gives the handle of a saved filepath: the pointer's, which resolveHandle takes back", async () => {
  const m = await ContextManager.open({ contextDir: "/handle-of", fileSystem: memoryStorage() });
  const a = await m.saveContext("readFile", { path: "src/a.ts" }, "export const a = 1;");
  const b = await m.saveContext("grep", { pattern: "a" }, { hits: ["src/a.ts:1"] }, { taskId: 2 });
  for (const filepath of [a, b]) {
    const handle = m.handleOf(filepath);
    assert.match(handle, HANDLE);
    assert.equal(handle, m.getAllPointers().find((p) => p.filepath === filepath).handle);
    assert.equal(m.resolveHandle(handle), filepath);
  }
  assert.notEqual(m.handleOf(a), m.handleOf(b));
  await m.close();
  assert.equal(m.handleOf(a), m.getAllPointers()[0].handle, "pointers stay readable after close, and so do handles");
});

test("handleOf of a record held in memory, and of a session's record", async () => {
  const storage = memoryStorage();
  const held = new ContextManager({ contextDir: "/held", fileSystem: storage, persistThreshold: Infinity });
  const fp = await held.saveContext("readFile", { path: "x" }, "x");
  assert.match(held.handleOf(fp), HANDLE);
  const s = await ContextManager.open({ contextDir: "/held", fileSystem: storage, session: true });
  const inSession = await s.saveContext("searchCode", { query: "x" }, ["x"], { category: "code" });
  assert.match(s.handleOf(inSession), HANDLE);
  assert.equal(s.handleOf(fp), undefined, "another manager's record is not this session's");
  await s.close();
  await held.close();
});

test("a filepath the manager has no pointer at is undefined: unknown, a file name alone, a handle, after clearPointers", async () => {
  const m = new ContextManager({ contextDir: "/unknown", fileSystem: memoryStorage() });
  const fp = await m.saveContext("readFile", { path: "src/a.ts" }, "a");
  const name = m.getAllPointers()[0].filename;
  for (const other of ["", "/unknown/nope.json", name, m.handleOf(fp), `${fp}\0`, "x".repeat(100_000)]) {
    assert.equal(m.handleOf(other), undefined, JSON.stringify(other.slice(0, 40)));
  }
  m.clearPointers();
  assert.equal(m.handleOf(fp), undefined);
});

test("handleOf of anything but a string is INVALID_ARGUMENT naming the filepath, and the manager goes on", async () => {
  const m = new ContextManager({ contextDir: "/bad", fileSystem: memoryStorage() });
  const fp = await m.saveContext("readFile", { path: "src/a.ts" }, "a");
  const bad = [undefined, null, 12345, 0, {}, [], [fp], { filepath: fp }, true, 10n, Symbol("fp"), () => fp, new String(fp)];
  for (const value of bad) {
    assert.throws(
      () => m.handleOf(value),
      (err) => err.name === "ToolctxError" && err.code === "INVALID_ARGUMENT" && /filepath/.test(err.message),
      String(typeof value === "symbol" ? "symbol" : typeof value === "bigint" ? "bigint" : JSON.stringify(value)),
    );
  }
  assert.throws(() => m.handleOf(), { code: "INVALID_ARGUMENT" });
  assert.match(m.handleOf(fp), HANDLE, "no fault was left behind");
});

test("ContextManager.search gives each hit's pointer its handle, the one its session's manager gives", async () => {
  const storage = memoryStorage();
  const s = await ContextManager.open({ contextDir: "/search", fileSystem: storage, session: true });
  const fp = await s.saveContext("searchCode", { query: "token refresh" }, ["src/auth/token.ts"]);
  await s.flush();
  const hits = await ContextManager.search({ contextDir: "/search", fileSystem: storage }, "token refresh");
  assert.equal(hits.length, 1);
  assert.equal(hits[0].filepath, fp);
  assert.match(hits[0].pointer.handle, HANDLE);
  assert.equal(hits[0].pointer.handle, s.handleOf(fp));
  await s.close();
});
