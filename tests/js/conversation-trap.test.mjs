// SPEC §9 for the conversation store, a wasm module of its own: a trap in it becomes
// INTERNAL, the module is re-instantiated, a store from before fails cleanly (rejecting)
// while what it stored stays readable, and the core module's managers are not touched.

import { test } from "node:test";
import assert from "node:assert/strict";

import { ContextManager, ConversationStore, memoryStorage } from "toolctx";

test("a trap in the conversation module: INTERNAL, the module comes back, old stores fail cleanly", async () => {
  const storage = memoryStorage();
  const manager = new ContextManager({ contextDir: "/trap", storage, persistThreshold: 0 });
  await manager.saveContext("readFile", { path: "a.ts" }, "kept");
  const before = await ConversationStore.open({ contextDir: "/trap", storage });
  const { id } = await before.createConversation({ title: "t" });
  await before.appendMessage(id, { role: "user", content: "hello" });

  assert.throws(() => ConversationStore.__panicForTests("deliberate"), (err) => {
    assert.equal(err.code, "INTERNAL");
    assert.ok(err.cause instanceof WebAssembly.RuntimeError, "the trap is the cause");
    return true;
  });

  await assert.rejects(before.getMessages(id), (err) => err.code === "INTERNAL");
  const after = await ConversationStore.open({ contextDir: "/trap", storage });
  assert.deepEqual((await after.getMessages(id)).map((m) => m.content), ["hello"], "what was stored survives");
  assert.equal(manager.getAllPointers().length, 1, "the core module's manager is untouched");
});
