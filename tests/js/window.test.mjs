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

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolctx-window-")));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;

runWindowTests(test, assert, () => memoryStorage(), { api: toolctx, name: "memory" });
runWindowTests(test, assert, () => nodeStorage(), {
  api: toolctx,
  name: "node",
  contextDir: () => path.join(root, `ctx-${++n}`).split(path.sep).join("/"),
});
