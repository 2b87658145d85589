// toolctx/sqlite under Bun (bun:sqlite) and Deno (its node:sqlite): the shared SQLite suites.
//   bun test ./tests/js/sqlite.suite.mjs
//   deno test -A --no-check tests/js/sqlite.suite.mjs

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { runSqliteSuites } from "./sqlite.mjs";

const folders = [];
const tmpDir = () => {
  const dir = mkdtempSync(`${tmpdir()}/toolctx-sqlite-`);
  folders.push(dir);
  return dir;
};

let test;
let openDatabase;
let runtime;
if (globalThis.Bun !== undefined) {
  const { test: bunTest, afterAll } = await import("bun:test");
  const { Database } = await import("bun:sqlite");
  test = (name, fn) => bunTest(name, fn, 60_000);
  openDatabase = (path) => new Database(path, { strict: true });
  runtime = "bun:sqlite";
  afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
} else {
  const { DatabaseSync } = await import("node:sqlite");
  ({ denoTest: test } = await import("../deno-test.mjs"));
  openDatabase = (path) => new DatabaseSync(path);
  runtime = "deno node:sqlite";
  globalThis.addEventListener("unload", () => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
}

runSqliteSuites({ runtime, test, assert, tmpDir, openDatabase });
