// toolctx on edge runtimes (Cloudflare Workers' workerd, Vercel Edge): the set-up that
// index.workerd.js and index.edge-light.js share. They differ only in how their
// platform's build spells a wasm module import; each hands the compiled module to
// start(), which instantiates it synchronously: no fetch of the wasm, no compile of bytes
// at run time, no eval. There is no file system on the edge: the default storage is
// memory (onDebug says so), under the browser's default folder "agent/context".

import { initSync } from "./toolctx_core.js";
import { memoryStorage } from "./adapters/memory.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import { setHostDefaults } from "./extras.js";

function defaultStorage() {
  const storage = memoryStorage();
  storage.description = "no persistent storage on the edge (no file system): records are kept in memory only; pass fileSystem to keep them";
  return storage;
}

/** Instantiates the core from its compiled WebAssembly.Module and registers the edge defaults. */
export function start(module) {
  initSync({ module });
  setHostDefaults({
    defaultContextDir: () => "agent/context",
    resolveDir: (dir) => dir.replace(/^\/+/, ""),
    defaultStorage,
    adaptFileSystem: fromFileSystem,
  });
}

export { ContextManager, ConversationStore } from "./extras.js";
export { memoryStorage };
export { ContextHistory, estimateTokens, findDuplicateFileReads, optimizeWindow, shouldCompact, truncationRange } from "./extras.js";
export { clearToolUses } from "./clear-tool-uses.js";
