// Pointer lists under Node, what the shared conformance module cannot check in every
// runtime: they print as what they hold and are no Proxy (STYLE.md: plain data at the
// boundary). The runtime-independent part is runPointerArrayTests (conformance.mjs).

import { test } from "node:test";
import assert from "node:assert/strict";
import { inspect, types } from "node:util";

import { ContextManager, memoryStorage } from "toolctx";

async function store(n) {
  const m = new ContextManager({ contextDir: "/inspect", fileSystem: memoryStorage(), persistThreshold: Infinity, memoryBudget: Infinity });
  const paths = [];
  for (let i = 0; i < n; i++) paths.push(await m.saveContext("readFile", { path: `src/file${i}.ts` }, i, i % 2, "q"));
  return { m, paths };
}

test("pointer lists of 1,100 are plain arrays (no Proxy) that console.log prints as objects", async () => {
  const { m, paths } = await store(1100);
  for (const list of [m.getAllPointers(), m.getPointersForQuery("q"), m.getPointersForTask(0)]) {
    assert.equal(types.isProxy(list), false);
    assert.ok(list.every((p) => !types.isProxy(p) && !types.isProxy(p.args)));
    const shown = inspect(list, { maxArrayLength: 3 });
    assert.ok(!shown.includes("undefined"), shown);
    assert.ok(shown.includes(`filepath: '${list[0].filepath}'`), shown);
  }
  assert.ok(inspect(m.getAllPointers()).includes(paths[99]));
});
