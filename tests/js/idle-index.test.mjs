// Index work off the save path (issue 35): a save resolves with its record written and its
// pointer added (its metadata indexed); the content of its result is indexed afterwards,
// in idle time, a slice at a time (driver.js `indexInIdleTime`, the core's `indexSome`).
// The spy is on the core handle's `update` of the package's modules loaded one by one
// (the Node entry inlines them), as tests/js/protocol.test.mjs does.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as protocol from "../../pkg/protocol.js";

const pkg = new URL("../../pkg/", import.meta.url);

test("a save resolves before its result's content is indexed; idle time indexes it in slices, oldest first, and a query sees it", async () => {
  const glue = await import(new URL("toolctx_core.js", pkg).href);
  glue.initSync({ module: readFileSync(fileURLToPath(new URL("toolctx_core_bg.wasm", pkg))) });
  const { ContextManager } = await import(new URL("context-manager.js", pkg).href);
  const { memoryStorage } = await import("toolctx");
  const handle = glue.ContextManager.prototype;
  const update = handle.update;
  /** Each slice's answer (whether records still wait), in order. */
  const slices = [];
  handle.update = function (u) {
    const out = update.call(this, u);
    if (u.kind === protocol.UPDATE.INDEX_SOME) slices.push(out);
    return out;
  };
  try {
    const m = new ContextManager({ storage: memoryStorage(), contextDir: "/idle", persistThreshold: 0 });
    // Six results of about 100 KB: a slice (64 KB of results) indexes one at a time.
    const paths = [];
    for (let i = 0; i < 6; i++) {
      const text = `${"filler words of a long file\n".repeat(3600)}marker${i}\n`;
      paths.push(await m.saveContext("read_file", { path: `src/f${i}.ts` }, text));
      assert.equal(slices.length, 0, `save ${i} resolved before any content was indexed`);
    }
    for (let waited = 0; slices.at(-1) !== false && waited < 5000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(slices.length >= 2, `indexed in slices: ${slices}`);
    assert.equal(slices.at(-1), false, "until none waits");
    assert.ok(slices.slice(0, -1).every((more) => more === true), `${slices}`);
    const hits = await m.selectRelevant("marker5");
    assert.deepEqual(hits.map((h) => h.filepath), [paths[5]]);
    await m.close();
  } finally {
    handle.update = update;
  }
});
