// The conformance suites under Bun (the real `bun` binary from npm): the bun, node, memory and
// unstorage (memory driver) adapters, over the built package resolved by name ("bun" export condition).
//   bun test ./tests/js/bun.suite.mjs

import { afterAll, test as bunTest } from "bun:test";
import { runTrapTests } from "./trap.mjs";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { closeSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { ContextManager, ConversationStore } from "toolctx";
import { bunStorage } from "toolctx/bun";
import { nodeStorage } from "toolctx/node";
import { memoryStorage } from "toolctx/memory";
import { unstorageStorage } from "toolctx/unstorage";
import { createStorage } from "unstorage";
import unstorageMemoryDriver from "unstorage/drivers/memory";
import { runConversationTests } from "./conversation.mjs";
import * as toolctx from "toolctx";
import { runWindowTests } from "./window.mjs";
import { runAiSdkTests } from "./ai-sdk.mjs";
import { runToolTests } from "./tools.mjs";
import * as contextToolsModule from "toolctx/tools";
import { runAnthropicTests } from "./anthropic.mjs";
import { memoryToolHandlers } from "toolctx/anthropic";
import { runOpenAfterExitTests } from "./exit.mjs";
import {
  expectRejection,
  loadVectors,
  runFileRangeTests,
  runLockTests,
  runSeedApiTests,
  runSessionTests,
  runStorageHostTests,
  runPointerArrayTests,
  runVectorTests,
} from "./conformance.mjs";

const test = (name, fn) => bunTest(name, fn, 60_000);
const top = mkdtempSync(`${tmpdir()}/toolctx-bun-`);
// A generous timeout: removing every store the suite made can take seconds on a busy machine.
afterAll(() => rmSync(top, { recursive: true, force: true }), 120_000);
let n = 0;
const fresh = (tag) => `${top}/${tag}-${n++}`;

// Lock contenders are separate Bun processes (tests/js/lock-contender.mjs).
const contender = (adapter) => ({
  adapter,
  spawn(args) {
    const script = new URL("./lock-contender.mjs", import.meta.url).pathname;
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "inherit", "inherit"] });
    const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
    return { exited, kill: () => child.kill("SIGKILL") };
  },
});

for (const [name, makeStorage, dir, lockContender] of [
  ["bun", (o) => bunStorage(o), fresh, contender("bun")],
  ["node-under-bun", (o) => nodeStorage(o), fresh, contender("node")],
  ["memory", () => memoryStorage(), (tag) => `/ctx/${tag}-${n++}`],
]) {
  runStorageHostTests({ name, makeStorage, test, assert, tmpDir: () => dir(name) });
  runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => dir(name) });
  runSessionTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => dir(name) });
  runLockTests({ name, makeStorage, test, assert, tmpDir: () => dir(name), contender: lockContender });
  runConversationTests(test, assert, makeStorage, { ConversationStore, name, contextDir: () => dir(name) });
}

runFileRangeTests({
  name: "bun",
  makeStorage: () => bunStorage(),
  test,
  assert,
  tmpDir: () => fresh("range"),
  sparse(path, size, at, bytes) {
    mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    const fd = openSync(path, "w");
    try {
      ftruncateSync(fd, size);
      writeSync(fd, bytes, 0, bytes.length, at);
    } finally {
      closeSync(fd);
    }
  },
});

// Locks die with their holder: open() after a Bun process ended holding one (exit.mjs).
runOpenAfterExitTests({
  name: "bun",
  adapter: "bun",
  test,
  assert,
  ContextManager,
  makeStorage: (o) => bunStorage(o),
  tmpDir: () => fresh("exit"),
  spawn(args) {
    const script = new URL("./exit-child.mjs", import.meta.url).pathname;
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "ignore"] });
    const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
    return { stdout: child.stdout, exited, kill: () => child.kill("SIGKILL") };
  },
});

// toolctx/unstorage over unstorage's memory driver (no locks: sessions are refused, see unstorage.test.mjs)
{
  const shared = createStorage({ driver: unstorageMemoryDriver() });
  const makeStorage = () => unstorageStorage({ storage: shared });
  runStorageHostTests({ name: "unstorage memory", makeStorage, test, assert, tmpDir: () => `/ctx/host-${n++}` });
  runSeedApiTests({ name: "unstorage memory", makeStorage, ContextManager, test, assert, contextDir: () => `/ctx/seed-${n++}` });
  test("[unstorage memory] a session is refused: STORAGE caused by UNSUPPORTED", async () => {
    const err = await expectRejection(assert, () => ContextManager.open({ contextDir: "/ctx/s", fileSystem: makeStorage(), session: true }), "STORAGE");
    assert.equal(err.cause?.code, "UNSUPPORTED");
  });
}

runWindowTests(test, assert, () => bunStorage(), { api: toolctx, name: "bun", contextDir: () => fresh("window") });
runAnthropicTests(test, assert, () => bunStorage(), { api: { memoryToolHandlers, clearToolUses: toolctx.clearToolUses, ContextManager }, name: "bun", dir: () => fresh("anthropic") });

const vectors = await loadVectors((file) => readFileSync(new URL(`../vectors/${file}`, import.meta.url), "utf8"));
runVectorTests({ name: "bun vectors", test, assert, ContextManager, memoryStorage, vectors });
runPointerArrayTests({ name: "bun", ContextManager, memoryStorage, test, assert });

test("[bun] the default storage is bunStorage under ~/.agent/context", () => {
  const debug = [];
  const m = new ContextManager({ contextDir: fresh("default"), onDebug: (msg) => debug.push(msg) });
  assert.ok(debug.includes("bun fs storage"), JSON.stringify(debug));
  assert.equal(new ContextManager({ fileSystem: memoryStorage() }).getContextDir(), `${process.env.HOME}/.agent/context`);
  assert.ok(m.getContextDir().startsWith(top));
});

test("[bun] files are created 0600 in folders 0700, also by the synchronous create path", async () => {
  const dir = fresh("modes");
  const m = new ContextManager({ contextDir: dir, fileSystem: bunStorage(), persistThreshold: 0 });
  const fp = await m.saveContext("t", {}, "secret");
  assert.equal(statSync(fp).mode & 0o777, 0o600);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
});

runAiSdkTests(test, assert); // toolctx/ai-sdk with the real `ai` (ai-sdk.mjs)
runToolTests({ test, assert, ContextManager, memoryStorage, tools: contextToolsModule }); // toolctx/tools (tools.mjs)
runTrapTests({ name: "bun", test, assert, toolctx }); // last: a trap costs earlier managers their state
