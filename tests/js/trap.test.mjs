// SPEC §9: should the core ever panic, the caller gets an Error with code INTERNAL (not a
// WebAssembly RuntimeError), the module is re-instantiated so later calls work, and
// managers from before the trap fail cleanly (rejecting, never throwing, from I/O
// methods) while their persisted records stay loadable. The shared trap tests
// (tests/js/trap.mjs: every kind of export) run here, in Deno, Bun and Chromium.

import { test } from "node:test";
import assert from "node:assert/strict";

import * as toolctx from "toolctx";
import { runTrapTests } from "./trap.mjs";

const { ContextManager, memoryStorage } = toolctx;

test("a trap becomes INTERNAL, the module comes back, old managers fail cleanly", async () => {
  const storage = memoryStorage();
  const before = new ContextManager({ contextDir: "/trap", fileSystem: storage, persistThreshold: 0 });
  const kept = await before.saveContext("readFile", { path: "a.ts" }, "kept");

  assert.throws(() => ContextManager.__panicForTests("deliberate"), (err) => {
    assert.ok(err instanceof Error);
    assert.equal(err.code, "INTERNAL");
    assert.ok(err.cause instanceof WebAssembly.RuntimeError, "the trap is the cause");
    return true;
  });

  const after = new ContextManager({ contextDir: "/trap", fileSystem: storage, persistThreshold: 0 });
  await after.saveContext("grep", { q: "x" }, [1]);
  assert.equal(after.size, 1, "a new manager works");
  assert.equal(ContextManager.hashQuery("x"), "q_2d711642b726b044");

  const p = before.saveContext("t", {}, 1);
  assert.ok(p instanceof Promise, "an I/O method of an old manager still returns a Promise");
  await assert.rejects(p, (err) => err.code === "INTERNAL");
  assert.throws(() => before.getAllPointers(), (err) => err.code === "INTERNAL");

  const reader = new ContextManager({ contextDir: "/trap", fileSystem: storage });
  assert.equal(await reader.rebuildIndex(), 2, "persisted records survive");
  assert.ok(reader.getAllPointers().some((q) => q.filepath === kept));
});

runTrapTests({ name: "node", test, assert, toolctx });
