// toolctx for browsers and workers: each wasm module whose exports the page uses is ready
// when this module's import resolves (top-level await). The core (ContextManager) and the
// window optimiser's module (its functions are synchronous) are fetched side by side by
// browser-core.js and browser-window.js as they are evaluated, and awaited here; the
// conversation store's module is fetched by the first ConversationStore.open. In a bundle,
// a module whose exports the page never uses is left out with its fetch (package.json
// "sideEffects" lists only the entry points); unbundled, the core and window modules are
// both fetched. The default storage is OPFS where the runtime has it, else IndexedDB, else
// memory (and onDebug says so).

import { memoryStorage } from "./adapters/memory.js";
import { opfsStorage } from "./adapters/opfs.js";
import { indexedDbStorage } from "./adapters/indexeddb.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import { useRuntime } from "./host.js";
import { loading } from "./browser-loading.js";

export { ContextManager } from "./browser-core.js";
export { ConversationStore } from "./browser-conversation.js";
export { ContextHistory, estimateTokens, findDuplicateFileReads, optimizeWindow, shouldCompact, truncationRange } from "./browser-window.js";
export { memoryStorage };
export { clearToolUses } from "./clear-tool-uses.js";

function defaultStorage() {
  if (typeof navigator !== "undefined" && typeof navigator.storage?.getDirectory === "function") {
    return opfsStorage();
  }
  if (typeof indexedDB !== "undefined") return indexedDbStorage();
  const storage = memoryStorage();
  storage.description = "no persistent storage in this runtime (no OPFS, no IndexedDB): records are kept in memory only";
  return storage;
}

useRuntime({
  defaultContextDir: () => "agent/context",
  resolveDir: (dir) => dir.replace(/^\/+/, ""),
  defaultStorage,
  adaptFileSystem: fromFileSystem,
});
await Promise.all(loading);
