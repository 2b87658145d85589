// toolctx for browsers and workers: the wasm is fetched, and each module whose exports the
// program uses is ready when this module's import resolves (top-level await). The core
// (ContextManager) and the window optimiser's module (its functions are synchronous) are
// fetched side by side while the import resolves, by the loads api-core.js and
// api-window.js add to `atImport`; the conversation store's module is fetched by the first
// ConversationStore.open. In a bundle, a file whose exports the program never uses is left
// out with its load (package.json "sideEffects" lists only the entry points); unbundled,
// the core and window modules are both fetched. The default storage is OPFS where the
// runtime has it, else IndexedDB, else memory (and onDebug says so). The exports: api.js.

import { memoryStorage } from "./adapters/memory.js";
import { opfsStorage } from "./adapters/opfs.js";
import { indexedDbStorage } from "./adapters/indexeddb.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import { useRuntime } from "./host.js";
import { atImport, fetchWasm } from "./module.js";

export * from "./api.js";

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
fetchWasm();
await Promise.all(atImport.map((load) => load()));
