// The conformance suites for one browser context (page or dedicated worker): every
// adapter that works there, over the built package in /pkg.

import { ContextManager, ConversationStore } from "/pkg/index.js";
import { memoryStorage } from "/pkg/adapters/memory.js";
import { opfsStorage } from "/pkg/adapters/opfs.js";
import { indexedDbStorage } from "/pkg/adapters/indexeddb.js";
import { loadVectors, runLockTests, runSeedApiTests, runSessionTests, runStorageHostTests, runPointerArrayTests, runVectorTests } from "/tests/js/conformance.mjs";
import { SPREAD_RACE_DELAYS, runConversationTests } from "/tests/js/conversation.mjs";
import * as toolctx from "/pkg/index.js";
import { runWindowTests } from "/tests/js/window.mjs";
import { runAnthropicTests } from "/tests/js/anthropic.mjs";
import { runTrapTests } from "/tests/js/trap.mjs";
import { memoryToolHandlers } from "/pkg/integrations/anthropic.js";
import assert from "./assert.mjs";
import { run, test } from "./harness.mjs";

let n = 0;
const fresh = (tag) => `toolctx-test/${tag}-${Date.now().toString(36)}-${n++}`;

export async function runSuites(context, only) {
  const adapters = {
    memory: () => memoryStorage(),
    opfs: () => opfsStorage(),
    indexeddb: () => indexedDbStorage({ database: "toolctx-test" }),
  };
  if (context === "worker") delete adapters.indexeddb; // covered on the main thread
  for (const [name, makeStorage] of Object.entries(adapters)) {
    const label = `${context}/${name}`;
    runStorageHostTests({ name: label, makeStorage, test, assert, tmpDir: () => fresh(name) });
    runSeedApiTests({
      name: label,
      makeStorage,
      ContextManager,
      test,
      assert,
      contextDir: () => fresh(name),
    });
    runSessionTests({ name: label, makeStorage, ContextManager, test, assert, contextDir: () => fresh(name), manySaves: name !== "opfs" });
    runLockTests({ name: label, makeStorage, test, assert, tmpDir: () => fresh(name) });
    if (name !== "memory") {
      const api = { memoryToolHandlers, clearToolUses: toolctx.clearToolUses, ContextManager };
      runAnthropicTests(test, assert, makeStorage, { api, name: label, dir: () => fresh("anthropic") });
    }
  }
  // Conversations (SPEC §7): IndexedDB (OPFS in a worker) locally, syncing to OPFS.
  runConversationTests(test, assert, context === "worker" ? adapters.opfs : adapters.indexeddb, {
    ConversationStore,
    name: `${context}`,
    contextDir: () => fresh("conv"),
    makeRemote: adapters.opfs,
    raceDelays: SPREAD_RACE_DELAYS,
  });
  const windowStorage = context === "worker" ? adapters.opfs : adapters.indexeddb;
  runWindowTests(test, assert, windowStorage, { api: toolctx, name: context, contextDir: () => fresh("window") });
  const vectors = await loadVectors(async (file) => (await fetch(`/tests/vectors/${file}`)).text());
  runVectorTests({ name: `${context} vectors`, test, assert, ContextManager, memoryStorage, vectors });
  runPointerArrayTests({ name: context, ContextManager, memoryStorage, test, assert });
  runTrapTests({ name: context, test, assert, toolctx }); // last: a trap costs earlier managers their state
  if (context === "worker") {
    test("[worker/opfs] new records are written through sync access handles", () => {
      assert.equal(opfsStorage().description, "opfs storage (sync access handles)");
    });
  }
  return run({ only });
}
