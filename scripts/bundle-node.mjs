#!/usr/bin/env node
// Node's and Bun's entry, pkg/index.node.js, as one file: esbuild inlines the package's
// own modules that it imports (the export list api.js, the core's glue, context-manager,
// driver, records, pointers, host, the conversation and window glue, the node and bun
// adapters), which are loaded one by one elsewhere. Node 20's ES module loader costs about 0.4 ms of CPU a file (resolve,
// read, compile), so `import("toolctx")` loads 3 files instead of 18. The modules whose
// exports are also another entry point's stay shared files, so each has one instance in a
// process: the memory adapter (toolctx/memory) and clear-tool-uses.js (toolctx/anthropic
// re-exports it); each is made one file itself (its helpers and toolctxError inlined).
//
//   node scripts/bundle-node.mjs        (run by `make pkg` after pkg-template/ is copied)
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const pkg = join(resolve(dirname(fileURLToPath(import.meta.url)), ".."), "pkg");
const inPlace = (file, options) => build({
  entryPoints: [file], outfile: file, allowOverwrite: true, bundle: true, format: "esm", legalComments: "none", logLevel: "warning",
  banner: { js: `// Built by scripts/bundle-node.mjs from pkg-template/${relative(pkg, file)} and the package's modules it imports.` },
  ...options,
});

await inPlace(join(pkg, "index.node.js"), {
  platform: "node",
  target: "node20",
  external: ["./adapters/memory.js", "./clear-tool-uses.js"],
});
// Every runtime's entry imports them; they have no built-in imports.
await inPlace(join(pkg, "adapters", "memory.js"), { platform: "neutral" });
await inPlace(join(pkg, "clear-tool-uses.js"), { platform: "neutral" });
