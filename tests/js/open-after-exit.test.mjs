// Locks die with their holder, under Node (exit.mjs): the next open() after a process
// ended holding a lock (SIGKILL, process.exit, a throw), and folders that are files.
// Deno and Bun run the same tests in deno.suite.mjs and bun.suite.mjs.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { ContextManager } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { runOpenAfterExitTests } from "./exit.mjs";

const top = mkdtempSync(join(tmpdir(), "toolctx-exit-"));
process.on("exit", () => rmSync(top, { recursive: true, force: true }));
let n = 0;
const script = fileURLToPath(new URL("./exit-child.mjs", import.meta.url));

runOpenAfterExitTests({
  name: "node",
  adapter: "node",
  test,
  assert,
  ContextManager,
  makeStorage: (o) => nodeStorage(o),
  tmpDir: () => join(top, `store-${n++}`),
  spawn(args) {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "ignore"] });
    const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
    return { stdout: child.stdout, exited, kill: () => child.kill("SIGKILL") };
  },
});
