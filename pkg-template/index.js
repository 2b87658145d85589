// toolctx for browsers, workers, Deno and edge runtimes: the wasm core is ready when
// this module's import resolves (top-level await).

import init, { __setHostDefaults } from "./toolctx_core.js";
import { memoryStorage } from "./adapters/memory.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import "./extras.js";

await init({ module_or_path: new URL("./toolctx_core_bg.wasm", import.meta.url) });

__setHostDefaults({
  defaultContextDir: () => "agent/context",
  resolveDir: (dir) => dir.replace(/^\/+/, ""),
  defaultStorage: () => {
    const storage = memoryStorage();
    storage.description = "no persistent storage given: records are kept in memory only";
    return storage;
  },
  adaptFileSystem: fromFileSystem,
});

export { ContextManager } from "./toolctx_core.js";
export { memoryStorage };
