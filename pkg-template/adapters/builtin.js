// Node's built-in modules (also Bun's and Deno's), loaded as CommonJS exports rather than
// through `import … from "node:fs"`: the ES module facade of a built-in reads every export
// once, and node:fs's lazy `ReadStream` getter then loads Node's whole streams stack. In a
// fresh Node 20 that made `import("toolctx")` pay about 2 ms of CPU for fs, fs/promises, os
// and path (bench/startup.mjs). `process.getBuiltinModule` is Node's way to this (20.16+,
// Bun, Deno); createRequire serves the Node 20 releases before it.

import { createRequire } from "node:module";

/** `builtin("node:fs")`: the built-in module's exports. */
export const builtin = globalThis.process?.getBuiltinModule ?? createRequire(import.meta.url);
