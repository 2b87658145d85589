// The context-window optimiser under Node: the shared suite over the memory and node
// adapters.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import * as toolctx from "toolctx";
import { memoryStorage } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { runWindowTests } from "./window.mjs";
import { parsedInsideWasm } from "./parse-spy.mjs";

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolctx-window-")));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;

runWindowTests(test, assert, () => memoryStorage(), { api: toolctx, name: "memory" });
runWindowTests(test, assert, () => nodeStorage(), {
  api: toolctx,
  name: "node",
  contextDir: () => path.join(root, `ctx-${++n}`).split(path.sep).join("/"),
});

// No plans are parsed inside a wasm call (tests/js/parse-spy.mjs says why).
test("[node] window: no plan is parsed inside a wasm call", async () => {
  const inWasm = await parsedInsideWasm(async () => {
    const read = (id) => ({
      role: "assistant", content: [{ type: "tool_use", id, name: "read_file", input: { path: "a.ts" } }],
    });
    const result = (id) => ({
      role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "x\n".repeat(200) }],
    });
    const messages = [{ role: "user", content: "go" }, read("a"), result("a"), read("b"), result("b")];
    const history = await toolctx.ContextHistory.open({ id: "parse", storage: memoryStorage(), contextDir: "/mem/w" });
    const out = toolctx.optimizeWindow(messages, { history });
    assert.equal(out.metrics.duplicatesReplaced, 1);
    assert.equal(history.edits().length, 1);
    assert.equal(history.apply(messages).length, 5);
    assert.equal(history.deletedRange, null);
    assert.equal(JSON.parse(JSON.stringify(history)).id, "parse");
    assert.equal(toolctx.findDuplicateFileReads(messages)[0].path, "a.ts");
    assert.equal(toolctx.truncationRange(messages, "half"), null);
  });
  assert.deepEqual(inWasm, []);
});

// The window module computes and runs no tasks (window.js does its history's I/O), so it
// carries no executor and no futures: a smaller module.
test("[node] window: the window module has no task driver", () => {
  const wasm = new URL("toolctx_window_bg.wasm", import.meta.resolve("toolctx"));
  const exports = WebAssembly.Module.exports(new WebAssembly.Module(fs.readFileSync(wasm))).map((e) => e.name);
  assert.ok(exports.some((n) => n.startsWith("contexthistory_")), "the window module");
  assert.deepEqual(exports.filter((n) => n === "__poll" || n === "__complete"), []);
});
