// toolctx/sqlite under Node: node:sqlite where Node has it (22.5 and later), else npm
// better-sqlite3 (a devDependency, 12.x: 13 needs Node 22). The shared SQLite suites
// (sqlite.mjs), then what needs processes: 8 writer processes on one database file, and a
// lock whose holder is killed.
//   node --test tests/js/sqlite.test.mjs

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { ContextManager } from "toolctx";
import { sqliteStorage } from "toolctx/sqlite";
import { expectRejection } from "./conformance.mjs";
import { nodeWriters, runManyWriterTests } from "./many-writers.mjs";
import { runSqliteSuites } from "./sqlite.mjs";

const folders = [];
const tmpDir = () => {
  const dir = mkdtempSync(`${tmpdir()}/toolctx-sqlite-`);
  folders.push(dir);
  return dir;
};
after(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

const nodeSqlite = process.getBuiltinModule?.("node:sqlite");
const openDatabase = nodeSqlite?.DatabaseSync
  ? (path) => new nodeSqlite.DatabaseSync(path)
  : (path) => new (createRequire(import.meta.url)("better-sqlite3"))(path);

runSqliteSuites({ runtime: nodeSqlite ? "node:sqlite" : "better-sqlite3", test, assert, tmpDir, openDatabase });

const shared = `${tmpDir()}/many.db`;
runManyWriterTests({
  name: "sqlite",
  spawnWriters: nodeWriters({ storageModule: "toolctx/sqlite", storageExport: "sqliteStorage", storageOptions: { path: shared } }),
  makeStorage: () => sqliteStorage({ path: shared }),
  ContextManager,
  test,
  assert,
  contextDir: () => "/many",
});

test("[sqlite] lock: when its holder process is killed, another process takes it at once (its pid is gone: no lease waited out)", async () => {
  const file = `${tmpDir()}/lock.db`;
  const name = "/dies/sessions/x.lock";
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { sqliteStorage } from "toolctx/sqlite";
       const s = sqliteStorage({ path: process.argv[1] });
       await s.lock(process.argv[2], () => { console.log("held"); return new Promise(() => {}); });`,
      file,
      name,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => String(chunk).includes("held") && resolve());
    child.once("exit", (code) => reject(new Error(`the holder exited (${code}) before it held the lock`)));
  });
  const s = sqliteStorage({ path: file }, { lockWaitMs: 0 });
  await expectRejection(assert, () => s.lock(name, async () => "second"), "TIMEOUT", "while the holder lives");
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
  assert.equal(await s.lock(name, async () => "taken over"), "taken over", "at once, though the lease (30 s) runs on");
  s.close();
});
