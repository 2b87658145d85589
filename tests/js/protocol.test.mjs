// The step protocol (docs/protocol.md) and the boundary it crosses (SPEC §0: narrow and
// typed). The core module has a handful of exports of its own, named here, so that none is
// added (or comes back) silently; every step the driver gets is a plain object with a
// `kind` it knows, never a positional array. That protocol.js names exactly the kinds the
// modules emit and read is checked in wasm, where the Rust enums are (crates/wasm/src/interop/named.rs
// imports protocol.js): no module exports a list of its kinds.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as protocol from "../../pkg/protocol.js";

const pkg = new URL("../../pkg/", import.meta.url);

/** A module's own exports: not wasm-bindgen's memory, allocator, tables, guards and `free`s. */
function ownExports(name) {
  const module = new WebAssembly.Module(readFileSync(fileURLToPath(new URL(`toolctx_${name}_bg.wasm`, pkg))));
  return WebAssembly.Module.exports(module)
    .map((e) => e.name)
    .filter((n) => !/^(memory|__wbindgen|__externref|__wbg_|__abort_handler|__instance_terminated)/.test(n))
    .sort();
}

/** The most exports of its own the core module may have (issue 34). */
const MOST = 8;

test(`protocol: the core module has at most ${MOST} exports of its own, these`, () => {
  const own = ownExports("core");
  assert.ok(own.length <= MOST, `${own.length} exports: ${own.join(", ")}`);
  // The constructor; begin, query and update on a handle; start and compute with none;
  // and the stepping of every plan (crates/wasm/src/manager/mod.rs, plans.rs).
  assert.deepEqual(own, [
    "__planStep",
    "contextmanager_begin",
    "contextmanager_compute",
    "contextmanager_new",
    "contextmanager_query",
    "contextmanager_start",
    "contextmanager_update",
  ]);
});

for (const name of ["conversation", "window"]) {
  test(`protocol: the ${name} module exports no list of kinds and no start function`, () => {
    const own = ownExports(name);
    assert.ok(own.includes("__planStep"), own.join(", "));
    assert.deepEqual(own.filter((n) => n === "__stepKinds" || n === "start"), []);
  });
}

test("protocol: protocol.js's tables are frozen, no two kinds of one alike", () => {
  const tables = ["STEP", "OP", "WORK", "QUERY", "UPDATE", "START", "COMPUTE", "OPERATION"];
  assert.deepEqual(Object.keys(protocol).filter((k) => /^[A-Z_]+$/.test(k) && k !== "READER").sort(), [...tables].sort());
  for (const table of tables) {
    assert.ok(Object.isFrozen(protocol[table]), `${table} is frozen`);
    const values = Object.values(protocol[table]);
    assert.equal(new Set(values).size, values.length, `no two kinds of ${table} alike`);
  }
});

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
