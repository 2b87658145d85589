// toolctx for Node and Bun: the wasm core loads synchronously, so the package works
// from `import` and from `require` (Node's require(esm)), and the default storage is
// the file system under ~/.agent/context (toolctx/node, or toolctx/bun under Bun).

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { resolve, sep } from "node:path";
import { initSync } from "./toolctx_core.js";
import { nodeStorage } from "./adapters/node.js";
import { bunStorage } from "./adapters/bun.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import { ContextManager, ConversationStore, setHostDefaults } from "./extras.js";

initSync({ module: readFileSync(new URL("./toolctx_core_bg.wasm", import.meta.url)) });

const toSlashes = (p) => (sep === "/" ? p : p.split(sep).join("/"));

setHostDefaults({
  defaultContextDir: () => resolve(homedir(), ".agent", "context"),
  resolveDir: (dir) => toSlashes(resolve(dir)),
  defaultStorage: () => (typeof Bun === "undefined" ? nodeStorage() : bunStorage()),
  adaptFileSystem: fromFileSystem,
});

export { ContextManager, ConversationStore };
export { memoryStorage } from "./adapters/memory.js";
export { ContextHistory, estimateTokens, findDuplicateFileReads, optimizeWindow, shouldCompact, truncationRange } from "./extras.js";
export { clearToolUses } from "./clear-tool-uses.js";
