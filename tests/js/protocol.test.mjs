// The step protocol (docs/protocol.md): the kinds the driver reads (pkg/protocol.js, from
// pkg-template/) are exactly the kinds the wasm modules emit (crates/wasm/src/interop/steps.rs, listed by
// each module's `__stepKinds`), and every step the driver gets is a plain object with a
// `kind` it knows, never a positional array.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as protocol from "../../pkg/protocol.js";

const pkg = new URL("../../pkg/", import.meta.url);

for (const name of ["core", "conversation", "window"]) {
  test(`protocol: the ${name} module emits exactly the kinds protocol.js names`, async () => {
    const glue = await import(new URL(`toolctx_${name}.js`, pkg).href);
    glue.initSync({ module: readFileSync(fileURLToPath(new URL(`toolctx_${name}_bg.wasm`, pkg))) });
    const emitted = glue.__stepKinds();
    // Every module's steps; the core module's requests too (crates/wasm/src/interop/requests.rs),
    // and the conversation store's operations (crates/wasm/src/interop/conversation.rs).
    const tables = { core: ["OP", "QUERY", "STEP", "STOREWIDE", "UPDATE", "WORK"], conversation: ["OP", "OPERATION", "STEP"] }[name] ?? ["OP", "STEP"];
    assert.deepEqual(Object.keys(emitted).sort(), tables);
    for (const [table, kinds] of Object.entries(emitted)) {
      assert.deepEqual({ ...protocol[table] }, kinds, `protocol.js ${table}`);
      assert.ok(Object.isFrozen(protocol[table]), `${table} is frozen`);
    }
    for (const table of tables) {
      const values = Object.values(protocol[table]);
      assert.equal(new Set(values).size, values.length, `no two kinds of ${table} alike`);
    }
  });
}

test("protocol: every step a ContextManager's driver gets is a plain object of a known kind", async () => {
  // The package's modules one by one (the Node entry inlines them), so the spy below is
  // on the glue its ContextManager calls.
  const glue = await import(new URL("toolctx_core.js", pkg).href);
  glue.initSync({ module: readFileSync(fileURLToPath(new URL("toolctx_core_bg.wasm", pkg))) });
  const { ContextManager } = await import(new URL("context-manager.js", pkg).href);
  const { memoryStorage } = await import("toolctx");
  const kinds = new Set(Object.values(protocol.STEP));
  const seen = new Set();
  const storage = memoryStorage();
  const m = new ContextManager({ storage, contextDir: "/protocol", persistThreshold: 0, session: true });
  // Every first step the core hands the package passes through its handle's `begin`.
  const handle = glue.ContextManager.prototype;
  const begin = handle.begin;
  let first;
  handle.begin = function (work) {
    const step = begin.call(this, work);
    if (step !== undefined) {
      assert.equal(Object.getPrototypeOf(step), Object.prototype, `begin(${work.kind}) gives a plain object`);
      assert.ok(kinds.has(step.kind), `${work.kind}: ${step.kind}`);
      seen.add(step.kind);
      if (work.kind === protocol.WORK.SAVE) first = step;
    }
    return step;
  };
  try {
    const filepath = await m.saveContext("readFile", { path: "a.ts" }, "export const a = 1;");
    // A save to persist is a plan whose first step writes the record, exclusively.
    assert.equal(first.kind, protocol.STEP.RUN);
    assert.deepEqual(first.ops.map((op) => [op.op, op.path, op.exclusive]), [[protocol.OP.WRITE, filepath, true]]);
    assert.deepEqual((await m.loadContexts([filepath])).map((r) => r.result), ["export const a = 1;"]);
    await m.flush();
    await m.close();
  } finally {
    handle.begin = begin;
  }
  assert.ok(seen.has(protocol.STEP.RUN), `saw ${protocol.STEP.RUN}`);
});
