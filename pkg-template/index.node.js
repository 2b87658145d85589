// toolctx for Node and Bun: the wasm core loads synchronously, so the package works
// from `import` and from `require` (Node's require(esm)), and the default storage is
// the file system under ~/.agent/context (toolctx/node, or toolctx/bun under Bun).
// The conversation and window modules are read and instantiated by their first use.
// The exports: api.js.

import { builtin } from "./adapters/builtin.js";
import { initSync } from "./toolctx_core.js";
import { nodeStorage } from "./adapters/node.js";
import { bunStorage } from "./adapters/bun.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import { useRuntime } from "./host.js";
import { conversationModule } from "./conversation.js";
import { windowModule } from "./window.js";

export * from "./api.js";

// Node 20 and 21 (V8 11): a call into wasm that V8 inlines into optimised JavaScript
// aborts the process ("Fatal error ... unreachable code", in
// Deoptimizer::DoComputeBuiltinContinuation) when that code is deoptimised during the
// call, as the driver's loop can be (tests/js/vectors.test.mjs aborted so). Turning that
// inlining off avoids it; calls into wasm are otherwise unchanged. Bun is not V8, and
// later V8s keep their flags.
if (typeof Bun === "undefined" && Number(process.versions.v8?.split(".")[0]) < 12) {
  builtin("node:v8").setFlagsFromString("--no-turbo-inline-js-wasm-calls");
}

const { readFileSync } = builtin("node:fs");
const { resolve, sep } = builtin("node:path");

const wasm = (name) => () => readFileSync(new URL(`./toolctx_${name}_bg.wasm`, import.meta.url));
initSync({ module: wasm("core")() });
conversationModule.provide(wasm("conversation"));
windowModule.provide(wasm("window"));

const toSlashes = (p) => (sep === "/" ? p : p.split(sep).join("/"));

useRuntime({
  // One rule for the library, the CLI and the MCP server: $TOOLCTX_DIR, else ~/.agent/context.
  // node:os is loaded here, by the first manager without a contextDir, not by the import
  // (about 0.13 ms in a fresh Node 20).
  defaultContextDir: () => resolve(process.env.TOOLCTX_DIR || resolve(builtin("node:os").homedir(), ".agent", "context")),
  resolveDir: (dir) => toSlashes(resolve(dir)),
  defaultStorage: () => (typeof Bun === "undefined" ? nodeStorage() : bunStorage()),
  adaptFileSystem: fromFileSystem,
});
