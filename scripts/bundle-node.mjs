#!/usr/bin/env node
// Node's and Bun's entry, pkg/index.node.js, as one file: esbuild inlines the package's
// own modules that it imports (the core's glue, extras, driver, records, pointers, host,
// the conversation and window glue), which are loaded one by one elsewhere. Node's ES
// module loader costs about 0.4 ms a module, so `import("toolctx")` loads 6 modules
// instead of 18. The modules whose exports are also another entry point's stay shared,
// imported as files, so each has one instance in a process: the memory, node and bun
// adapters (toolctx/memory, toolctx/node, toolctx/bun) and clear-tool-uses.js
// (toolctx/anthropic re-exports it).
//
//   node scripts/bundle-node.mjs        (run by `make pkg` after pkg-template/ is copied)
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const entry = join(resolve(dirname(fileURLToPath(import.meta.url)), ".."), "pkg", "index.node.js");
await build({
  entryPoints: [entry],
  outfile: entry,
  allowOverwrite: true,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["./adapters/memory.js", "./adapters/node.js", "./adapters/bun.js", "./clear-tool-uses.js"],
  legalComments: "none",
  logLevel: "warning",
});
