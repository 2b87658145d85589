// SPEC §9 for the window optimiser: after a trap in its module the functions work again
// (the module is re-instantiated), a ContextHistory from before fails cleanly with INTERNAL
// (rejecting from save/restoreCheckpoint, throwing elsewhere), and what it saved is
// there when the history is opened again. The window optimiser is a wasm module of its
// own: a trap in the core leaves its histories alone.

import { test } from "node:test";
import assert from "node:assert/strict";

import { ContextHistory, ContextManager, memoryStorage, optimizeWindow } from "toolctx";

const read = (id, path) => [
  { role: "assistant", content: [{ type: "tool_use", id, name: "read_file", input: { path } }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: `${path} `.repeat(500) }] },
];
const messages = [
  { role: "user", content: "task" }, { role: "assistant", content: "ok" }, { role: "user", content: "go" },
  ...read("a", "x.ts"), ...read("b", "x.ts"),
];

test("a trap leaves the window functions working and old histories failing as INTERNAL", async () => {
  const storage = memoryStorage();
  const before = await ContextHistory.open({ id: "t", contextDir: "/trap", storage });
  before.optimize(messages, { now: 1 });
  await before.save();

  assert.throws(() => ContextManager.__panicForTests("deliberate"), (err) => err.code === "INTERNAL");
  assert.equal(before.edits().length, 1, "a trap in the core module leaves the window module's state");

  assert.throws(() => ContextHistory.__panicForTests("deliberate"), (err) => err.code === "INTERNAL");

  assert.equal(optimizeWindow(messages).edits.length, 1, "the functions work again");
  assert.throws(() => before.edits(), (err) => err.code === "INTERNAL");
  const saving = before.save();
  assert.ok(saving instanceof Promise, "save still returns a Promise");
  await assert.rejects(saving, (err) => err.code === "INTERNAL");
  await assert.rejects(before.restoreCheckpoint(0), (err) => err.code === "INTERNAL");

  const reopened = await ContextHistory.open({ id: "t", contextDir: "/trap", storage });
  assert.equal(reopened.edits().length, 1, "the saved history survives");
});
