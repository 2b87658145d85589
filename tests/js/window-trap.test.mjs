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

// A history's load and write are plans the window module's driver runs: a trap in the
// module while one waits on the storage fails it with INTERNAL, however the storage's
// call ends afterwards.
test("a trap in the window module fails a history's load and save in flight with INTERNAL", async () => {
  const storage = memoryStorage();
  const first = await ContextHistory.open({ id: "f", contextDir: "/flight", storage });
  first.optimize(messages, { now: 1 });
  await first.save();

  // A storage whose reads and writes wait until the test lets them through.
  const waiting = [];
  const held = (fn) => (...a) => new Promise((resolve, reject) => waiting.push(() => Promise.resolve().then(() => fn(...a)).then(resolve, reject)));
  const slow = {
    read: held((...a) => storage.read(...a)),
    write: held((...a) => storage.write(...a)),
    remove: (...a) => storage.remove(...a),
    list: (...a) => storage.list(...a),
  };
  const called = async () => {
    while (waiting.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  };
  const trap = () => assert.throws(() => ContextHistory.__panicForTests("deliberate"), (err) => err.code === "INTERNAL");

  const opening = ContextHistory.open({ id: "f", contextDir: "/flight", storage: slow });
  await called();
  trap();
  waiting.shift()();
  await assert.rejects(opening, (err) => err.code === "INTERNAL");

  const reopening = ContextHistory.open({ id: "f", contextDir: "/flight", storage: slow });
  await called();
  waiting.shift()();
  const history = await reopening;
  assert.equal(history.edits().length, 1, "a load after the trap loads");
  history.optimize([...messages, ...read("c", "x.ts")], { now: 2 });
  assert.equal(history.edits().length, 2);
  const saving = history.save();
  await called();
  trap();
  waiting.shift()();
  await assert.rejects(saving, (err) => err.code === "INTERNAL");
  assert.equal(waiting.length, 0, "nothing else was asked of the storage");
});
