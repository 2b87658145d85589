// toolctx under Node: the shared conformance suites for the `node` and `memory`
// adapters, plus what only Node can check (file modes, symlinks, require(), real
// directories shared by independent storages, the default context dir).

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

import * as toolctx from "toolctx";
import { ContextManager, memoryStorage } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { memoryStorage as memoryStorageSubpath } from "toolctx/memory";

import {
  runStorageHostTests,
  runFileRangeTests,
  runSeedApiTests,
  runSessionTests,
  runLockTests,
  readRecord,
  listFiles,
  randomAfter,
  basename,
  toText,
} from "./conformance.mjs";

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolctx-js-")));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
const fresh = (prefix) => path.join(root, `${prefix}-${++n}`).split(path.sep).join("/");

// -- node adapter

runStorageHostTests({
  name: "node",
  makeStorage: () => nodeStorage(),
  test,
  assert,
  tmpDir: () => fresh("host"),
});

runFileRangeTests({
  name: "node",
  makeStorage: () => nodeStorage(),
  test,
  assert,
  tmpDir: () => fresh("range"),
  sparse(file, size, at, bytes) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(file, "w");
    try {
      fs.ftruncateSync(fd, size);
      fs.writeSync(fd, bytes, 0, bytes.length, at);
    } finally {
      fs.closeSync(fd);
    }
  },
});

runSeedApiTests({
  name: "node",
  makeStorage: () => nodeStorage(),
  ContextManager,
  test,
  assert,
  // a private parent per test, so `${contextDir}/../x.json` stays inside this test's temp dir
  contextDir: () => `${fresh("ctx")}/context`,
});

// Lock contenders are separate Node processes (tests/js/lock-contender.mjs).
const contender = {
  adapter: "node",
  spawn(args) {
    const child = spawn(process.execPath, [fileURLToPath(new URL("./lock-contender.mjs", import.meta.url)), ...args], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
    return { exited, kill: () => child.kill("SIGKILL") };
  },
};
runLockTests({ name: "node", makeStorage: (o) => nodeStorage(o), test, assert, tmpDir: () => fresh("lock"), contender });
runSessionTests({ name: "node", makeStorage: () => nodeStorage(), ContextManager, test, assert, contextDir: () => `${fresh("ses")}/context` });

test("[node] a lock taken over while its holder ran fails the operation: STORAGE, ELOCKCOMPROMISED as cause", async () => {
  const real = nodeStorage();
  const takenOver = {
    ...real,
    // Someone judges the lock stale and takes it over while the holder runs.
    lock: (name, fn) => real.lock(name, async () => {
      const out = await fn();
      fs.rmSync(name);
      fs.writeFileSync(name, "another holder");
      return out;
    }),
  };
  const dir = `${fresh("compromised")}/context`;
  let now = Date.UTC(2025, 0, 18, 14, 30, 22);
  const clock = () => now;
  const old = await ContextManager.open({ contextDir: dir, fileSystem: real, session: true, persistThreshold: 0, clock });
  await old.saveContext("t", {}, 1);
  await old.close();
  now += 2 * 86_400_000;
  const err = await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: takenOver, clock }).then(
    () => assert.fail("resolved"),
    (e) => e,
  );
  assert.equal(err.code, "STORAGE", err.message);
  assert.equal(err.cause?.code, "ELOCKCOMPROMISED", err.message);
});

test("[node] lock options: lockWaitMs bounds the wait (TIMEOUT); after lockLeaseMs, or lockStaleMs (its old name), a lock nobody refreshed is taken over", async () => {
  const dir = fresh("lock-options");
  fs.mkdirSync(dir, { recursive: true });
  const name = `${dir}/held.lock`;
  const heldTwoSecondsAgo = () => {
    fs.writeFileSync(name, "another holder");
    const then = new Date(Date.now() - 2_000);
    fs.utimesSync(name, then, then);
  };
  heldTwoSecondsAgo();
  const started = Date.now();
  const err = await nodeStorage({ lockWaitMs: 100 }).lock(name, async () => "entered").then(() => assert.fail("entered"), (e) => e);
  assert.equal(err.code, "TIMEOUT", err.message);
  assert.ok(Date.now() - started < 5_000, "gave up after lockWaitMs, not a minute");
  for (const options of [{ lockLeaseMs: 1_000 }, { lockStaleMs: 1_000 }]) {
    heldTwoSecondsAgo();
    assert.equal(await nodeStorage({ ...options, lockWaitMs: 100 }).lock(name, async () => "taken over"), "taken over", JSON.stringify(options));
    assert.equal(fs.existsSync(name), false, "released");
  }
  assert.throws(() => nodeStorage({ lockLeaseMs: 0 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => nodeStorage({ lockWaitMs: -1 }), { code: "INVALID_ARGUMENT" });
});

// -- memory adapter

let m = 0;
runStorageHostTests({
  name: "memory",
  makeStorage: () => memoryStorageSubpath(),
  test,
  assert,
  tmpDir: () => `/h/${++m}`,
});

runSeedApiTests({
  name: "memory",
  makeStorage: () => memoryStorageSubpath(),
  ContextManager,
  test,
  assert,
  contextDir: () => `/ctx/${++m}`,
});

runLockTests({ name: "memory", makeStorage: () => memoryStorageSubpath(), test, assert, tmpDir: () => `/l/${++m}` });
runSessionTests({ name: "memory", makeStorage: () => memoryStorageSubpath(), ContextManager, test, assert, contextDir: () => `/ses/${++m}` });

// -- Node only

test("[node] package: main entry exports ContextManager and memoryStorage; subpaths resolve", () => {
  assert.equal(typeof toolctx.ContextManager, "function");
  assert.equal(typeof toolctx.memoryStorage, "function");
  assert.equal(memoryStorage, memoryStorageSubpath, "toolctx and toolctx/memory export the same memoryStorage");
  assert.equal(typeof nodeStorage, "function");
  const s = memoryStorage();
  for (const method of ["read", "write", "remove", "list"]) assert.equal(typeof s[method], "function", method);
});

test("[node] package: require('toolctx') works (require(esm)) and is the same module", async () => {
  const require = createRequire(import.meta.url);
  const cjs = require("toolctx");
  assert.equal(typeof cjs.ContextManager, "function");
  assert.equal(cjs.ContextManager, ContextManager, "one module instance for import and require");
  const storage = cjs.memoryStorage();
  const mgr = new cjs.ContextManager({ contextDir: "/req/ctx", fileSystem: storage, persistThreshold: 0 });
  const fp = await mgr.saveContext("readFile", { path: "a.ts" }, "via require");
  assert.equal((await readRecord(storage, fp)).result, "via require");
  assert.match(cjs.ContextManager.hashQuery("x"), /^q_[0-9a-f]{16}$/);
});

// What a fresh `import("toolctx")` asks Node's ES module loader for, recorded by a resolve
// hook (module.register): package files, each a file to resolve, read and compile, and
// built-ins imported as ES modules, whose facades read every export (node:fs's then loads
// Node's streams). The cost itself is a benchmark (bench/startup.mjs), never a test.
const RESOLVED_BY_IMPORT = `
import { register } from "node:module";
import { MessageChannel } from "node:worker_threads";
const { port1, port2 } = new MessageChannel();
const resolved = [];
port1.on("message", (url) => resolved.push(url));
register("data:text/javascript," + encodeURIComponent(\`
  let port;
  export function initialize(data) { port = data.port; }
  export async function resolve(specifier, context, next) {
    const result = await next(specifier, context);
    port.postMessage(result.url);
    return result;
  }\`), { data: { port: port2 }, transferList: [port2] });
await import("toolctx");
await new Promise((resolve) => setTimeout(resolve, 50));
port1.close();
process.stdout.write(JSON.stringify(resolved));
`;

test("[node] package: import('toolctx') loads 3 package files, and no built-in through an ES module facade but node:module", async () => {
  const child = spawn(process.execPath, ["--input-type=module", "-e", RESOLVED_BY_IMPORT], { cwd: process.cwd() });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  const [code] = await new Promise((resolve) => child.on("exit", (...args) => resolve(args)));
  assert.equal(code, 0);
  const resolved = JSON.parse(out);
  const pkgUrl = new URL(".", import.meta.resolve("toolctx")).href;
  const files = resolved.filter((u) => u.startsWith(pkgUrl)).map((u) => u.slice(pkgUrl.length));
  assert.deepEqual([...new Set(files)].sort(), ["adapters/memory.js", "clear-tool-uses.js", "index.node.js"]);
  assert.deepEqual([...new Set(resolved.filter((u) => u.startsWith("node:")))], ["node:module"]);
});

test("[node] default contextDir is ~/.agent/context, absolute", () => {
  // memory storage: nothing is written under the home directory
  const mgr = new ContextManager({ fileSystem: memoryStorage() });
  const expected = path.resolve(os.homedir(), ".agent", "context").split(path.sep).join("/");
  assert.equal(mgr.getContextDir(), expected);
  assert.ok(path.isAbsolute(mgr.getContextDir()));
});

test("[node] the default store is $TOOLCTX_DIR when it is set (the CLI's and the MCP server's rule too)", async () => {
  const chosen = fresh("chosen");
  const child = spawn(process.execPath, [fileURLToPath(new URL("./default-dir-child.mjs", import.meta.url))], {
    cwd: process.cwd(),
    env: { ...process.env, TOOLCTX_DIR: chosen },
  });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  const [code] = await new Promise((resolve) => child.on("exit", (...args) => resolve(args)));
  assert.equal(code, 0);
  assert.deepEqual(JSON.parse(out).dirs, [chosen, chosen]);
});

test("[node] a relative contextDir is made absolute; filepaths are absolute", async () => {
  const storage = memoryStorage();
  const mgr = new ContextManager({ contextDir: "rel/./ctx/../context", fileSystem: storage, persistThreshold: 0 });
  const expected = path.resolve("rel/context").split(path.sep).join("/");
  assert.equal(mgr.getContextDir(), expected);
  const fp = await mgr.saveContext("t", {}, 1);
  assert.ok(path.isAbsolute(fp));
  assert.equal(path.dirname(fp), expected);
  assert.deepEqual(storage.paths(), [fp]);
});

test("[node] records are real files at the returned OS path, readable by plain fs", async () => {
  const dir = `${fresh("plain")}/context`;
  const mgr = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0 });
  const fp = await mgr.saveContext("readFile", { path: "src/x.ts" }, { text: "hello" }, 2, "q_x");
  const rec = JSON.parse(fs.readFileSync(fp, "utf8"));
  assert.equal(rec.v, 1);
  assert.equal(rec.toolName, "readFile");
  assert.deepEqual(rec.result, { text: "hello" });
  assert.deepEqual(fs.readdirSync(dir), [basename(fp)]);
  // compact JSON, UTF-8
  assert.equal(fs.readFileSync(fp, "utf8"), JSON.stringify(rec));
});

test("[node] the default storage (no fileSystem given) is the file system", async () => {
  const dir = `${fresh("default")}/context`;
  const mgr = new ContextManager({ contextDir: dir, persistThreshold: 0 });
  const fp = await mgr.saveContext("t", { a: 1 }, "on disk");
  assert.equal(JSON.parse(fs.readFileSync(fp, "utf8")).result, "on disk");
  await mgr.clear();
  assert.equal(fs.existsSync(fp), false);
});

// A script that saves two small outputs with the default options and exits at once,
// without close(): what a user's agent does when it finishes.
const SAVE_AND_EXIT = `
import { ContextManager } from "toolctx";
const m = new ContextManager({ contextDir: process.argv[1] });
await m.saveContext("grep", { pattern: "TODO" }, ["src/a.ts:3: // TODO"]);
await m.saveContext("readFile", { path: "a.ts" }, "export const a = 1;");
process.exit(0);
`;

test("[node] durable by default: saves acknowledged before a process exits without close() are all on disk", async () => {
  const dir = `${fresh("exit")}/context`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", SAVE_AND_EXIT, dir], { cwd: process.cwd() });
  const [code] = await new Promise((resolve) => child.on("exit", (...args) => resolve(args)));
  assert.equal(code, 0);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json"));
  assert.equal(files.length, 2, `2 of 2 saves are stored: ${files}`);
  const reopened = await ContextManager.open({ contextDir: dir });
  await reopened.rebuildIndex();
  assert.equal(reopened.size, 2);
});

const mode = (p) => fs.statSync(p).mode & 0o777;

test("[node] file modes: folders 0700, files 0600 (records, replaced files, appended files)", async () => {
  const top = fresh("modes");
  const dir = `${top}/a/b/context`;
  const mgr = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0 });
  const fp = await mgr.saveContext("readFile", { path: "secret.env" }, { token: "s3cr3t" });
  assert.equal(mode(fp).toString(8), "600", "record file 0600");
  for (const d of [`${top}/a`, `${top}/a/b`, dir]) assert.equal(mode(d).toString(8), "700", `${d} 0700`);

  const s = nodeStorage();
  const replaced = `${top}/x/y/replaced.json`;
  await s.write(replaced, "one");
  assert.equal(mode(replaced).toString(8), "600");
  await s.write(replaced, "two");
  assert.equal(mode(replaced).toString(8), "600", "after an atomic replace");
  assert.equal(mode(`${top}/x`).toString(8), "700");
  assert.equal(mode(`${top}/x/y`).toString(8), "700");
  const excl = `${top}/x/excl.json`;
  await s.write(excl, "e", { exclusive: true });
  assert.equal(mode(excl).toString(8), "600");
  if (s.append) {
    const log = `${top}/z/log.jsonl`;
    await s.append(log, "a\n");
    await s.append(log, "b\n");
    assert.equal(fs.readFileSync(log, "utf8"), "a\nb\n");
    assert.equal(mode(log).toString(8), "600");
    assert.equal(mode(`${top}/z`).toString(8), "700");
  }
  // no temporary files left behind by replacing writes
  assert.deepEqual(fs.readdirSync(`${top}/x/y`), ["replaced.json"]);
});

/** A manager over node fs in `dir` that writes every record and collects onDebug calls. */
function debugManager(dir) {
  const debug = [];
  const mgr = new ContextManager({
    contextDir: dir,
    fileSystem: nodeStorage(),
    persistThreshold: 0,
    onDebug: (msg, data) => debug.push({ msg, data }),
  });
  return { mgr, debug };
}

test("[node] a symbolic link in the store is not followed on read", async () => {
  const top = fresh("symlink");
  const dir = `${top}/context`;
  const { mgr, debug } = debugManager(dir);
  const real = await mgr.saveContext("readFile", { path: "ok.ts" }, "inside");
  // a record-shaped file outside the store, and a record-named link to it inside
  const secretDir = `${top}/outside`;
  fs.mkdirSync(secretDir);
  const secret = `${secretDir}/secret.json`;
  fs.writeFileSync(secret, fs.readFileSync(real, "utf8").replace('"inside"', '"SECRET"'));
  const link = `${dir}/readFile_0123456789ab_1700000000000_0_link.json`;
  fs.symlinkSync(secret, link);

  const recs = await mgr.loadContexts([link, real]);
  assert.deepEqual(recs.map((r) => r.result), ["inside"], "the link target is not served");
  assert.ok(
    debug.some(({ data }) => data && typeof data.path === "string" && basename(data.path) === basename(link)),
    `onDebug names the link: ${JSON.stringify(debug)}`,
  );

  // at the host level: reading the link does not return the target's content
  let got;
  try {
    got = await nodeStorage().read(link);
  } catch {
    got = undefined;
  }
  assert.ok(got === undefined || !toText(got).includes("SECRET"), "host read does not follow the link");
});

test("[node] a symbolic link to a folder outside the store is not followed on read", async () => {
  const top = fresh("symdir");
  const dir = `${top}/context`;
  const { mgr, debug } = debugManager(dir);
  const real = await mgr.saveContext("readFile", { path: "ok.ts" }, "inside");
  const outside = `${top}/outside`;
  fs.mkdirSync(outside);
  const target = `${outside}/readFile_0123456789ab_1700000000000_0_outs.json`;
  fs.writeFileSync(target, fs.readFileSync(real, "utf8").replace('"inside"', '"SECRET"'));
  fs.symlinkSync(outside, `${dir}/linked`);
  const viaLink = `${dir}/linked/${basename(target)}`;
  const recs = await mgr.loadContexts([viaLink, real]);
  assert.deepEqual(recs.map((r) => r.result), ["inside"], "a record reached through a linked folder is not served");
  assert.ok(
    debug.some(({ data }) => data && typeof data.path === "string" && basename(data.path) === basename(viaLink)),
    `onDebug names the path: ${JSON.stringify(debug)}`,
  );
});

test("[node] nodeStorage reads small files with blocking calls and larger ones asynchronously, with the same checks", async () => {
  const top = fresh("syncread");
  const dir = `${top}/context`;
  const outside = `${top}/outside`;
  fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(outside);
  fs.symlinkSync(outside, `${dir}/linked`);
  for (const [label, bytes] of [["small", 50], ["large", 5000]]) {
    const data = new TextEncoder().encode("x".repeat(bytes));
    fs.writeFileSync(`${dir}/${label}.json`, data);
    fs.writeFileSync(`${outside}/${label}.json`, data);
    fs.symlinkSync(`${outside}/${label}.json`, `${dir}/${label}-link.json`);
    for (const syncReadMaxBytes of [0, 100, 1 << 20]) {
      const s = nodeStorage({ syncReadMaxBytes });
      const at = `${label} with syncReadMaxBytes ${syncReadMaxBytes}`;
      assert.deepEqual(new Uint8Array(await s.read(`${dir}/${label}.json`, { root: dir })), data, at);
      assert.equal(await s.read(`${dir}/missing.json`, { root: dir }), undefined, at);
      const refused = s.read(`${dir}/linked/${label}.json`, { root: dir });
      assert.ok(refused instanceof Promise, `${at}: a refusal rejects, never throws`);
      await assert.rejects(refused, { code: "OUTSIDE_STORE" }, at);
      // A link to a file is not followed (O_NOFOLLOW): refused, never its target's bytes.
      const viaLink = await s.read(`${dir}/${label}-link.json`, { root: dir }).then((v) => v, (e) => e);
      assert.ok(viaLink instanceof Error, `${at}: a linked file is refused, got ${viaLink}`);
      // readRange: blocking up to syncReadMaxBytes of range, the same checks as read.
      assert.deepEqual(new Uint8Array(await s.readRange(`${dir}/${label}.json`, 5, bytes, { root: dir })), data.subarray(5), `${at}: range`);
      assert.equal(await s.readRange(`${dir}/missing.json`, 0, bytes, { root: dir }), undefined, `${at}: range`);
      const refusedRange = s.readRange(`${dir}/linked/${label}.json`, 0, bytes, { root: dir });
      assert.ok(refusedRange instanceof Promise, `${at}: a refused range rejects, never throws`);
      await assert.rejects(refusedRange, { code: "OUTSIDE_STORE" }, `${at}: range`);
      const rangeViaLink = await s.readRange(`${dir}/${label}-link.json`, 0, bytes, { root: dir }).then((v) => v, (e) => e);
      assert.ok(rangeViaLink instanceof Error, `${at}: a range of a linked file is refused, got ${rangeViaLink}`);
    }
  }
});

test("[node] nodeStorage reads a record of up to 256 KiB with blocking calls by default: its bytes are read before read() returns", async () => {
  const dir = fresh("syncdefault");
  fs.mkdirSync(dir, { recursive: true });
  const data = new TextEncoder().encode("x".repeat(100 * 1024));
  fs.writeFileSync(`${dir}/r.json`, data);
  const s = nodeStorage();
  const reading = s.read(`${dir}/r.json`, { root: dir });
  fs.unlinkSync(`${dir}/r.json`); // an asynchronous read would find the file gone
  assert.deepEqual(new Uint8Array(await reading), data);
});

test("[node] two managers with independent storages share one real directory without losing records", async () => {
  const dir = `${fresh("shared")}/context`;
  const seq = () => {
    let x = 12345;
    return () => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x / 2147483648;
    };
  };
  // same clock and the same random sequence: the names collide and must be re-drawn
  const clock = () => 1700000000000;
  const m1 = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0, clock, random: seq() });
  const m2 = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0, clock, random: seq() });
  const m3 = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0 });
  const saves = [];
  for (let i = 0; i < 200; i++) {
    saves.push(m1.saveContext("grep", { q: "same" }, `m1-${i}`));
    saves.push(m2.saveContext("grep", { q: "same" }, `m2-${i}`));
    saves.push(m3.saveContext("grep", { q: "same" }, `m3-${i}`));
  }
  const fps = await Promise.all(saves);
  assert.equal(new Set(fps).size, 600);
  const onDisk = fs.readdirSync(dir).sort();
  assert.equal(onDisk.length, 600, "600 files in the directory");
  assert.deepEqual(onDisk, fps.map((fp) => basename(fp)).sort());
  const results = new Set(onDisk.map((f) => JSON.parse(fs.readFileSync(`${dir}/${f}`, "utf8")).result));
  assert.equal(results.size, 600, "every record holds its own result: nothing was replaced");
  // each manager loads its own
  const own1 = await m1.loadContexts(fps.filter((_, i) => i % 3 === 0));
  assert.deepEqual(own1.map((r) => r.result), Array.from({ length: 200 }, (_, i) => `m1-${i}`));
  // clearing one manager leaves the others' files
  await m2.clearContextDir();
  assert.equal(fs.readdirSync(dir).length, 400);
  assert.equal((await listFiles(nodeStorage(), dir)).length, 400);
});

test("[node] a forced collision with a constant random part is resolved by re-drawing", async () => {
  const dir = `${fresh("collide")}/context`;
  const clock = () => 1700000000000;
  const a = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0, clock, random: () => 0.5 });
  const b = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0, clock, random: randomAfter(0.5, 4) });
  const fa = await a.saveContext("t", { same: true }, "A");
  const fb = await b.saveContext("t", { same: true }, "B");
  assert.notEqual(fa, fb);
  assert.equal(JSON.parse(fs.readFileSync(fa, "utf8")).result, "A");
  assert.equal(JSON.parse(fs.readFileSync(fb, "utf8")).result, "B");
});

// -- package surface (SPEC §1)

const require = createRequire(import.meta.url);
const pkgJson = require("toolctx/package.json");
const pkgDir = path.dirname(require.resolve("toolctx/package.json"));

test("[node] package.json: ESM, engines node >= 20, licence MIT OR Apache-2.0", () => {
  assert.equal(pkgJson.name, "toolctx");
  assert.equal(pkgJson.type, "module");
  assert.equal(pkgJson.license, "MIT OR Apache-2.0");
  assert.match(pkgJson.engines?.node ?? "", />=\s*20/);
});

test("[node] package ships a non-empty CHANGELOG and both licence files", () => {
  for (const f of ["CHANGELOG.md", "LICENSE-MIT", "LICENSE-APACHE"]) {
    const p = path.join(pkgDir, f);
    assert.ok(fs.existsSync(p), `${f} present`);
    assert.ok(fs.statSync(p).size > 0, `${f} not empty`);
  }
});

for (const sub of [".", "./node", "./deno", "./bun", "./opfs", "./indexeddb", "./memory"]) {
  test(`[node] package exports ${JSON.stringify(sub)} with "types" first and the files present`, () => {
    const entry = pkgJson.exports?.[sub];
    assert.ok(entry && typeof entry === "object", `exports[${JSON.stringify(sub)}] exists`);
    assert.equal(Object.keys(entry)[0], "types", "types condition first");
    const targets = new Set();
    const walk = (v) => (typeof v === "string" ? targets.add(v) : Object.values(v).forEach(walk));
    walk(entry);
    for (const target of targets) assert.ok(fs.existsSync(path.join(pkgDir, target)), `${target} exists in the package`);
  });
}

test("[node] package declares the toolctx command-line tool as its bin", () => {
  const bin = typeof pkgJson.bin === "string" ? pkgJson.bin : pkgJson.bin?.toolctx;
  assert.equal(typeof bin, "string", "bin.toolctx declared");
  const file = path.join(pkgDir, bin);
  assert.ok(fs.existsSync(file), `${bin} exists`);
  assert.ok(fs.readFileSync(file, "utf8").startsWith("#!/usr/bin/env node\n"), "node shebang");
  assert.ok(fs.statSync(file).mode & 0o100, "executable");
  assert.ok(pkgJson.files.some((f) => bin.replace(/^\.\//, "").startsWith(f.replace(/\/$/, ""))), "bin shipped in files");
  // Every package the bin imports is a runtime dependency of the package (tests/js/cli.test.mjs runs it).
  const imports = fs.readdirSync(path.dirname(file)).flatMap((f) =>
    [...fs.readFileSync(path.join(path.dirname(file), f), "utf8").matchAll(/^import .* from "([^".][^"]*)";$/gm)].map((m) => m[1]),
  );
  for (const name of imports.filter((i) => !i.startsWith("node:"))) {
    assert.ok(pkgJson.dependencies?.[name], `${name} is in dependencies`);
  }
});

test("[node] nodeStorage({durability: 'strict'}) writes and replaces files", async () => {
  const s = nodeStorage({ durability: "strict" });
  const dir = fresh("strict");
  await s.write(`${dir}/a/rec.json`, "one", { exclusive: true });
  await s.write(`${dir}/a/rec.json`, "two");
  assert.equal(fs.readFileSync(`${dir}/a/rec.json`, "utf8"), "two");
  assert.equal(mode(`${dir}/a/rec.json`).toString(8), "600");
});

test("[node] nodeStorage writes a large record's parts with one gather write (writev): blocking, async, strict", async () => {
  const dir = fresh("writeparts");
  const encode = (text) => new TextEncoder().encode(text);
  for (const [label, options] of [["blocking", {}], ["async", { syncCreateMaxBytes: 0 }], ["strict", { durability: "strict" }]]) {
    const s = nodeStorage(options);
    const gather = s.write[Symbol.for("toolctx.writeParts")];
    assert.equal(typeof gather, "function", label);
    const parts = [encode('{"head":1,"result":'), encode(JSON.stringify("y".repeat(300_000))), encode("}")];
    await gather(`${dir}/${label}/rec.json`, parts, { exclusive: true });
    assert.deepEqual(JSON.parse(fs.readFileSync(`${dir}/${label}/rec.json`, "utf8")), { head: 1, result: "y".repeat(300_000) }, label);
    assert.equal(mode(`${dir}/${label}/rec.json`).toString(8), "600", label);
    await assert.rejects(gather(`${dir}/${label}/rec.json`, parts, { exclusive: true }), { code: "EEXIST" }, label);
  }
  // Through a manager: the large record is the same file a joined write makes.
  const m = new ContextManager({ contextDir: `${dir}/store`, fileSystem: nodeStorage(), persistThreshold: 0 });
  const result = { content: "z".repeat(70_000) };
  const path = await m.saveContext("readFile", { path: "a.ts" }, result);
  assert.deepEqual(JSON.parse(fs.readFileSync(path, "utf8")).result, result);
  await m.close();
});

// A child process whose gather writes (fs.writevSync, FileHandle#writev) stop short after
// 4,093 bytes, patched before the adapter loads: each record then takes many calls.
const SHORT_WRITEVS = `
import fs from "node:fs";
const [dir] = process.argv.slice(1);
const CAP = 4093;
let calls = 0;
const capped = (buffers) => {
  calls++;
  const out = [];
  let left = CAP;
  for (const b of buffers) {
    if (left === 0) break;
    out.push(b.subarray(0, Math.min(b.length, left)));
    left -= out.at(-1).length;
  }
  return out;
};
const writevSync = fs.writevSync;
fs.writevSync = (fd, buffers, position) => writevSync(fd, capped(buffers), position);
const probe = await fs.promises.open(dir + "/probe", "w");
const FileHandle = Object.getPrototypeOf(probe);
await probe.close();
const writev = FileHandle.writev;
FileHandle.writev = function (buffers, position) { return writev.call(this, capped(buffers), position); };
const { nodeStorage } = await import("toolctx/node");
const encode = (text) => new TextEncoder().encode(text);
const out = {};
for (const [label, options] of [["blocking", {}], ["async", { syncCreateMaxBytes: 0 }], ["strict", { durability: "strict" }]]) {
  const parts = [encode(""), encode('{"head":"é",'), encode(""), encode('"result":' + JSON.stringify("ü".repeat(20_000))), encode("}")];
  const before = calls;
  const s = nodeStorage(options);
  await s.write[Symbol.for("toolctx.writeParts")](dir + "/" + label + ".json", parts, { exclusive: true });
  await s.write[Symbol.for("toolctx.writeParts")](dir + "/" + label + ".json", parts);
  out[label] = { calls: calls - before, record: JSON.parse(fs.readFileSync(dir + "/" + label + ".json", "utf8")), files: fs.readdirSync(dir).length };
}
process.stdout.write(JSON.stringify(out));
`;

test("[node] nodeStorage's gather write goes on where writev stopped short, in every mode, and leaves no temporary file", async () => {
  const dir = fresh("shortwritev");
  fs.mkdirSync(dir, { recursive: true });
  const child = spawn(process.execPath, ["--input-type=module", "-e", SHORT_WRITEVS, dir], { cwd: process.cwd() });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  child.stderr.on("data", (chunk) => (err += chunk));
  const [code] = await new Promise((resolve) => child.on("exit", (...args) => resolve(args)));
  assert.equal(code, 0, err);
  const results = JSON.parse(out);
  for (const [label, { calls, record }] of Object.entries(results)) {
    assert.deepEqual(record, { head: "é", result: "ü".repeat(20_000) }, label);
    // About 40 KB in parts of at most 4,093 bytes, twice (the exclusive create, then the replace).
    assert.ok(calls >= 20, `${label}: ${calls} calls`);
  }
  assert.equal(results.strict.files, 4, "probe + three records: no temporary file left");
});

test("[node] close() of two managers writing one session leaves no lock file, no timer, no write behind", async () => {
  const dir = fresh("close");
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
  // Record writes take a while, so the saves are still in flight when close() is called.
  const slow = () => {
    const s = nodeStorage();
    const write = async (p, d, o) => {
      if (basename(p).startsWith("t_")) await new Promise((resolve) => setTimeout(resolve, 30));
      return s.write(p, d, o);
    };
    return { ...s, write };
  };
  const first = await ContextManager.open({ contextDir: dir, fileSystem: slow(), persistThreshold: 0, session: true });
  const second = new ContextManager({ contextDir: dir, fileSystem: slow(), persistThreshold: 0, session: first.sessionId });
  const before = timers();
  // Both contend for the session's manifest lock (lock file, retried on a timer) while they close.
  const saves = [];
  for (let i = 0; i < 20; i++) saves.push(first.saveContext("t", { i }, "x".repeat(100)), second.saveContext("u", { i }, "y"));
  await Promise.all([first.close(), second.close()]);
  const listing = () => fs.readdirSync(path.join(dir, "sessions"), { recursive: true }).sort();
  const after = listing();
  assert.deepEqual(after.filter((f) => f.endsWith(".lock") || f.includes(".tmp")), [], "no lock or temporary file left");
  assert.ok(timers() <= before, `no timer left running (${timers()} > ${before})`);
  const paths = await Promise.all(saves);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "sessions", first.sessionId, ".manifest.json"), "utf8"));
  assert.equal(Object.keys(manifest.context_files).length, 40, "every save in flight at close() is in the manifest");
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(listing(), after, "nothing written after close() resolved");
  assert.equal(paths.length, 40);
});
