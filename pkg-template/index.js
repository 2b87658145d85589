// toolctx for browsers, workers and edge runtimes: the wasm core is ready when this
// module's import resolves (top-level await), and so is the window optimiser's module (its
// functions are synchronous); the conversation store's module is fetched by the first
// ConversationStore.open. The default storage is OPFS where the runtime has it, else
// IndexedDB, else memory (and onDebug says so).

import init from "./toolctx_core.js";
import { memoryStorage } from "./adapters/memory.js";
import { opfsStorage } from "./adapters/opfs.js";
import { indexedDbStorage } from "./adapters/indexeddb.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import { ContextManager } from "./context-manager.js";
import { useRuntime } from "./host.js";
import { ConversationStore, conversationModule } from "./conversation.js";
import { windowModule } from "./window.js";

await init({ module_or_path: new URL("./toolctx_core_bg.wasm", import.meta.url) });
conversationModule.provide(new URL("./toolctx_conversation_bg.wasm", import.meta.url));
windowModule.provide(new URL("./toolctx_window_bg.wasm", import.meta.url));

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
await windowModule.load();

export { ContextManager, ConversationStore };
export { memoryStorage };
export { ContextHistory, estimateTokens, findDuplicateFileReads, optimizeWindow, shouldCompact, truncationRange } from "./window.js";
export { clearToolUses } from "./clear-tool-uses.js";
