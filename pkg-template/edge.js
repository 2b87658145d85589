// toolctx on edge runtimes (Cloudflare Workers' workerd, Vercel Edge): the set-up that
// index.workerd.js and index.edge-light.js share. They differ only in how their
// platform's build spells a wasm module import; each hands the compiled modules to
// start(), which instantiates the core synchronously (the conversation and window modules
// at their first use): no fetch of the wasm, no compile of bytes at run time, no eval.
// There is no file system on the edge: the default storage is memory (onDebug says so),
// under the browser's default folder "agent/context". Each entry re-exports api.js.

import { initSync } from "./toolctx_core.js";
import { memoryStorage } from "./adapters/memory.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import { useRuntime } from "./host.js";
import { conversationModule } from "./conversation.js";
import { windowModule } from "./window.js";

function defaultStorage() {
  return Object.assign(memoryStorage(), {
    description: "no persistent storage on the edge (no file system): records are kept in memory only; pass fileSystem to keep them",
  });
}

/** Instantiates the core from its compiled WebAssembly.Module and states the edge defaults (host.js). */
export function start({ core, conversation, window: optimiser }) {
  initSync({ module: core });
  conversationModule.provide(() => conversation);
  windowModule.provide(() => optimiser);
  useRuntime({
    defaultContextDir: () => "agent/context",
    resolveDir: (dir) => dir.replace(/^\/+/, ""),
    defaultStorage,
    adaptFileSystem: fromFileSystem,
  });
}
