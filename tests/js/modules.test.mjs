// The package ships three wasm modules (core, conversation, window): importing toolctx
// for ContextManager instantiates the core only; the conversation store's and the window
// optimiser's modules are instantiated by their first use, each once.

import { test } from "node:test";
import assert from "node:assert/strict";

// Every instantiation, named by an export only that module has. Patched before the
// package is imported (a dynamic import below), as Node's initSync calls `new Instance`.
const instantiated = [];
const Instance = WebAssembly.Instance;
WebAssembly.Instance = class extends Instance {
  constructor(module, imports) {
    super(module, imports);
    const names = WebAssembly.Module.exports(module).map((e) => e.name);
    const which = [
      names.includes("contextmanager_new") && "core",
      names.some((n) => n.startsWith("conversationstore_")) && "conversation",
      names.some((n) => n.startsWith("contexthistory_")) && "window",
    ].filter(Boolean);
    instantiated.push(which.join("+"));
  }
};

test("import { ContextManager } instantiates only the core module; the others load on first use", async () => {
  const { ContextManager, ConversationStore, memoryStorage, optimizeWindow, estimateTokens } = await import("toolctx");
  assert.deepEqual(instantiated, ["core"], "the import");

  const manager = new ContextManager({ storage: memoryStorage(), contextDir: "/modules", persistThreshold: 0 });
  await manager.saveContext("readFile", { path: "a.ts" }, "export const a = 1;");
  assert.equal(manager.getAllPointers().length, 1);
  assert.deepEqual(instantiated, ["core"], "a ContextManager at work");

  assert.equal(estimateTokens("abcdefgh"), 2);
  assert.equal(optimizeWindow([{ role: "user", content: "hi" }]).messages.length, 1);
  assert.deepEqual(instantiated, ["core", "window"], "the window functions");

  const store = await ConversationStore.open({ storage: memoryStorage(), contextDir: "/modules" });
  const { id } = await store.createConversation({ title: "t" });
  await store.appendMessage(id, { role: "user", content: "hello" });
  assert.equal((await store.getMessages(id)).length, 1);
  await ConversationStore.open({ storage: memoryStorage(), contextDir: "/modules2" });
  assert.deepEqual(instantiated, ["core", "window", "conversation"], "the conversation store, once");
});

test("toolctx/conversation and toolctx/window are the same exports as toolctx's", async () => {
  const main = await import("toolctx");
  const conversation = await import("toolctx/conversation");
  const window = await import("toolctx/window");
  assert.equal(conversation.ConversationStore, main.ConversationStore);
  for (const name of ["optimizeWindow", "findDuplicateFileReads", "truncationRange", "shouldCompact", "estimateTokens", "ContextHistory"]) {
    assert.equal(window[name], main[name], name);
  }
});

// Every workflow of the core runs as synchronous steps that driver.js follows (plans, a
// save's write, a load's reads), so the core module carries no executor: no __poll, no
// __complete, and no test hook counting tasks.
test("the core module has no task driver", async () => {
  const fs = await import("node:fs");
  const wasm = new URL("toolctx_core_bg.wasm", import.meta.resolve("toolctx"));
  const exports = WebAssembly.Module.exports(new WebAssembly.Module(fs.readFileSync(wasm))).map((e) => e.name);
  assert.ok(exports.some((n) => n.startsWith("contextmanager_")), "the core module");
  assert.deepEqual(exports.filter((n) => n === "__poll" || n === "__complete" || n.includes("tasksspawned")), []);
});
