// toolctx for Deno: the wasm core is read from the package and ready when this module's
// import resolves; the default storage is the file system under ~/.agent/context.

import { initSync } from "./toolctx_core.js";
import { denoStorage } from "./adapters/deno.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import { ContextManager, ConversationStore, setHostDefaults } from "./extras.js";

initSync({ module: await Deno.readFile(new URL("./toolctx_core_bg.wasm", import.meta.url)) });

function home() {
  try {
    return Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? ".";
  } catch {
    return "."; // no --allow-env: the working directory stands in for home
  }
}

setHostDefaults({
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
export { ContextHistory, estimateTokens, findDuplicateFileReads, optimizeWindow, shouldCompact, truncationRange } from "./extras.js";
export { clearToolUses } from "./clear-tool-uses.js";
