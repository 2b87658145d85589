// toolctx/sqlite's suites, for every runtime with a SQLite of its own (Node with
// better-sqlite3 or node:sqlite, Bun's bun:sqlite, Deno's node:sqlite): the shared
// conformance suites over one database file that every storage opens anew (as another
// process would), and what only SQLite can get wrong.
//
//   runSqliteSuites({ runtime, test, assert, tmpDir, openDatabase })
//
// `tmpDir()`: a fresh absolute folder; `openDatabase(path)`: the runtime's own database
// object at `path` (handed in as `{database}`). Runtime-neutral: no node:test import.

import { ContextManager, ConversationStore } from "toolctx";
import { sqliteStorage } from "toolctx/sqlite";
import { runLockTests, runSeedApiTests, runSessionTests, runStorageHostTests, expectRejection, toText } from "./conformance.mjs";
import { SPREAD_RACE_DELAYS, runConversationTests } from "./conversation.mjs";
import { assertWrongShapes, wrongShapes } from "./sqlite-shapes.mjs";

export function runSqliteSuites({ runtime, test, assert, tmpDir, openDatabase }) {
  const name = `${runtime} sqlite`;
  const file = `${tmpDir()}/store.db`;
  const opened = [];
  let n = 0;
  const fresh = (tag) => `/${tag}-${++n}`;
  /** A storage with its own connection to the shared file. */
  const makeStorage = (options = {}) => {
    const storage = sqliteStorage({ path: file }, options);
    opened.push(storage);
    return storage;
  };

  runStorageHostTests({ name, makeStorage, test, assert, tmpDir: () => fresh("host") });
  runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("seed") });
  runSessionTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("ses") });
  runLockTests({ name, makeStorage, test, assert, tmpDir: () => fresh("lock") });
  runConversationTests(test, assert, makeStorage, { ConversationStore, name, contextDir: () => fresh("conv"), raceDelays: SPREAD_RACE_DELAYS });

  const t = (title, fn) => test(`[${name}] ${title}`, fn);

  t("it answers synchronously: a read is a value, not a Promise; a failure is a rejected Promise", async () => {
    const s = makeStorage();
    const dir = fresh("sync");
    assert.equal(s.write(`${dir}/a.json`, "a"), undefined);
    const read = s.read(`${dir}/a.json`);
    assert.ok(read instanceof Uint8Array, "the bytes at once");
    assert.equal(toText(read), "a");
    assert.deepEqual(s.list(dir), ["a.json"]);
    const closed = sqliteStorage({ path: file });
    closed.close();
    await expectRejection(assert, () => closed.read(`${dir}/a.json`), "STORAGE", "a read after close()");
  });

  t("one row a file: bytes that are not UTF-8 round-trip, append stays bytes, readRange counts bytes", () => {
    const s = makeStorage();
    const dir = fresh("rows");
    const bytes = Uint8Array.from([0, 255, 254, 0xc3, 0x28, 10, 13, 0]);
    s.write(`${dir}/raw.bin`, bytes);
    s.append(`${dir}/raw.bin`, Uint8Array.from([0, 1]));
    s.append(`${dir}/new.bin`, Uint8Array.from([0xff, 0]));
    assert.deepEqual([...s.read(`${dir}/raw.bin`)], [...bytes, 0, 1]);
    assert.deepEqual([...s.read(`${dir}/new.bin`)], [0xff, 0]);
    assert.deepEqual([...s.readRange(`${dir}/raw.bin`, 1, 3)], [255, 254, 0xc3]);
    assert.deepEqual([...s.readRange(`${dir}/raw.bin`, 8, 10)], [0, 1]);
    const db = openDatabase(file);
    try {
      const row = db.prepare("SELECT size, typeof(bytes) AS type, created <= modified AS ordered FROM toolctx_files WHERE path = ?").get(`${dir}/raw.bin`);
      assert.deepEqual({ ...row, size: Number(row.size), ordered: Number(row.ordered) }, { size: 10, type: "blob", ordered: 1 });
    } finally {
      db.close();
    }
  });

  t("listing is a key range, not a pattern: folders named with % and _ list only their own children", () => {
    const s = makeStorage();
    const dir = fresh("like");
    for (const path of ["a%/x.json", "ab/y.json", "a_/z.json", "a%b/w.json", "a%.json", "é/ü.json"]) s.write(`${dir}/${path}`, "1");
    assert.deepEqual(s.list(`${dir}/a%`), ["x.json"]);
    assert.deepEqual(s.list(`${dir}/a_`), ["z.json"]);
    assert.deepEqual(s.list(`${dir}/é`), ["ü.json"]);
    assert.deepEqual(s.list(dir), ["a%.json", "a%/", "a%b/", "a_/", "ab/", "é/"].sort());
    assert.deepEqual(s.list(`${dir}/a`), [], "a prefix of a folder's name is not that folder");
  });

  t("the table is configurable and quoted; a bad name is INVALID_ARGUMENT", () => {
    const odd = 'agents "ctx"; DROP TABLE toolctx_files; --';
    const s = makeStorage({ table: odd });
    const dir = fresh("table");
    s.write(`${dir}/a.json`, "odd");
    assert.equal(toText(s.read(`${dir}/a.json`)), "odd");
    assert.equal(makeStorage().read(`${dir}/a.json`), undefined, "not in the default table");
    for (const table of ["", "a\0b", " padded", 7]) assert.throws(() => sqliteStorage({ path: file }, { table }), { code: "INVALID_ARGUMENT" });
    assert.throws(() => sqliteStorage({}), { code: "INVALID_ARGUMENT" });
    assert.throws(() => sqliteStorage({ database: {} }), { code: "INVALID_ARGUMENT" });
  });

  t("a table or a row of the wrong shape, made by other SQL, typed as toolctx/cloudflare's SQL storages type it: other columns INVALID_ARGUMENT; an INTEGER, REAL or NULL value CORRUPT_RECORD, whole or by range; TEXT its UTF-8 bytes", async () => {
    const db = openDatabase(file);
    try {
      const exec = (text, ...params) => db.prepare(text).run(...params);
      assertWrongShapes(assert, await wrongShapes((table) => makeStorage({ table }), exec, fresh("shapes")));
    } finally {
      db.close();
    }
  });

  t("a database handed in is used and left open by close()", () => {
    const db = openDatabase(file);
    const s = sqliteStorage({ database: db });
    const dir = fresh("given");
    s.write(`${dir}/g.json`, "given");
    s.close();
    assert.equal(toText(db.prepare("SELECT bytes FROM toolctx_files WHERE path = ?").get(`${dir}/g.json`).bytes), "given");
    db.close();
    assert.equal(toText(makeStorage().read(`${dir}/g.json`)), "given", "another connection reads it");
  });

  t("a write while another connection holds the write lock past busyTimeoutMs: TIMEOUT (SQLITE_BUSY), then it works", async () => {
    const s = makeStorage({ busyTimeoutMs: 50 });
    const dir = fresh("busy");
    const db = openDatabase(file);
    db.exec("BEGIN IMMEDIATE");
    try {
      const err = await expectRejection(assert, () => s.write(`${dir}/a.json`, "a"), "TIMEOUT", "a write behind another's transaction");
      assert.equal(err.sqliteCode, "SQLITE_BUSY");
    } finally {
      db.exec("ROLLBACK");
      db.close();
    }
    s.write(`${dir}/a.json`, "a");
    assert.equal(toText(s.read(`${dir}/a.json`)), "a");
  });

  t("lock: a lease row holding its holder; a row whose holder is a process that has ended is taken over at once", async () => {
    const s = makeStorage({ lockWaitMs: 0 });
    const lockName = `${fresh("gone")}/l.lock`;
    const db = openDatabase(file);
    try {
      const row = (holder) =>
        db.prepare("INSERT OR REPLACE INTO toolctx_files_locks (name, token, holder, expires) VALUES (?, ?, ?, ?)").run(lockName, "theirs", JSON.stringify(holder), Date.now() + 3_600_000);
      const [me] = await s.lock(lockName, async () => db.prepare("SELECT holder FROM toolctx_files_locks WHERE name = ?").all(lockName).map((r) => JSON.parse(r.holder)));
      assert.equal(me.pid, globalThis.Deno?.pid ?? globalThis.process.pid, "the row names its holder's pid");
      row(me); // held by this live process under another token: waited for
      await expectRejection(assert, () => s.lock(lockName, async () => "no"), "TIMEOUT", "a live holder's lock");
      row({ ...me, pid: 2 ** 22 + 12345 }); // the same machine, a pid no process has
      assert.equal(await s.lock(lockName, async () => "taken over"), "taken over", "a dead holder's lock is not waited out");
    } finally {
      db.close();
    }
  });

  test(`[${name}] the storages close`, () => {
    for (const s of opened) s.close();
  });
}
