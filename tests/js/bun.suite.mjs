// The conformance suites under Bun (the real `bun` binary from npm): the bun, node and
// memory adapters, over the built package resolved by name ("bun" export condition).
//   bun test ./tests/js/bun.suite.mjs

import { afterAll, test as bunTest } from "bun:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { ContextManager, ConversationStore } from "toolctx";
import { bunStorage } from "toolctx/bun";
import { nodeStorage } from "toolctx/node";
import { memoryStorage } from "toolctx/memory";
import { runConversationTests } from "./conversation.mjs";
import * as toolctx from "toolctx";
import { runWindowTests } from "./window.mjs";
import { runAnthropicTests } from "./anthropic.mjs";
import { memoryToolHandlers } from "toolctx/anthropic";
import { loadVectors, runLockTests, runSeedApiTests, runSessionTests, runStorageHostTests, runPointerArrayTests, runVectorTests } from "./conformance.mjs";

const test = (name, fn) => bunTest(name, fn, 60_000);
const top = mkdtempSync(`${tmpdir()}/toolctx-bun-`);
afterAll(() => rmSync(top, { recursive: true, force: true }));
let n = 0;
const fresh = (tag) => `${top}/${tag}-${n++}`;

for (const [name, makeStorage, dir] of [
  ["bun", () => bunStorage(), fresh],
  ["node-under-bun", () => nodeStorage(), fresh],
  ["memory", () => memoryStorage(), (tag) => `/ctx/${tag}-${n++}`],
]) {
  runStorageHostTests({ name, makeStorage, test, assert, tmpDir: () => dir(name) });
  runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => dir(name) });
  runSessionTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => dir(name) });
  runLockTests({ name, makeStorage, test, assert, tmpDir: () => dir(name) });
  runConversationTests(test, assert, makeStorage, { ConversationStore, name, contextDir: () => dir(name) });
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
