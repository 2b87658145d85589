// toolctx for Deno: the wasm core is read from the package and ready when this module's
// import resolves; the default storage is the file system under ~/.agent/context. The
// conversation and window modules are read and instantiated by their first use.

import { initSync } from "./toolctx_core.js";
import { denoStorage } from "./adapters/deno.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import { ContextManager } from "./extras.js";
import { useRuntime } from "./host.js";
import { ConversationStore, conversationModule } from "./conversation.js";
import { windowModule } from "./window.js";

const file = (name) => new URL(`./toolctx_${name}_bg.wasm`, import.meta.url);
initSync({ module: await Deno.readFile(file("core")) });
conversationModule.provide(() => Deno.readFileSync(file("conversation")));
windowModule.provide(() => Deno.readFileSync(file("window")));

function home() {
  try {
    return Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? ".";
  } catch {
    return "."; // no --allow-env: the working directory stands in for home
  }
}

useRuntime({
  defaultContextDir: () => `${home()}/.agent/context`,
  resolveDir: (dir) => {
    const slashed = dir.replaceAll("\\", "/");
    return slashed.startsWith("/") || /^[A-Za-z]:\//.test(slashed) ? slashed : `${Deno.cwd()}/${slashed}`;
  },
  defaultStorage: () => denoStorage(),
  adaptFileSystem: fromFileSystem,
});

export { ContextManager, ConversationStore };
export { memoryStorage } from "./adapters/memory.js";
export { ContextHistory, estimateTokens, findDuplicateFileReads, optimizeWindow, shouldCompact, truncationRange } from "./window.js";
export { clearToolUses } from "./clear-tool-uses.js";
