// toolctx for Deno: the wasm core is read from the package and ready when this module's
// import resolves; the default storage is the file system under ~/.agent/context. The
// conversation and window modules are read and instantiated by their first use. The
// exports: api.js.

import { initSync } from "./toolctx_core.js";
import { denoStorage } from "./adapters/deno.js";
import { fromFileSystem } from "./adapters/seed-fs.js";
import { noteDefaultDir, useRuntime } from "./host.js";
import { conversationModule } from "./conversation.js";
import { windowModule } from "./window.js";

export * from "./api.js";

const file = (name) => new URL(`./toolctx_${name}_bg.wasm`, import.meta.url);
initSync({ module: await Deno.readFile(file("core")) });
conversationModule.provide(() => Deno.readFileSync(file("conversation")));
windowModule.provide(() => Deno.readFileSync(file("window")));

/** The default store: $TOOLCTX_DIR, else ~/.agent/context (one rule for the library, the
 * CLI and the MCP server). Without --allow-env neither can be read: .agent/context in the
 * working directory, and the first manager with onDebug that takes it hears why. */
function defaultDir() {
  // Each variable on its own: --allow-env=HOME alone still finds ~/.agent/context.
  const env = (name) => {
    try {
      return Deno.env.get(name) || undefined;
    } catch {
      return undefined;
    }
  };
  const home = env("HOME") ?? env("USERPROFILE");
  const dir = env("TOOLCTX_DIR") ?? (home === undefined ? undefined : `${home}/.agent/context`);
  if (dir !== undefined) return dir;
  noteDefaultDir("Deno gives no access to the environment (run with --allow-env): $TOOLCTX_DIR and ~/.agent/context cannot be read, so the default store is .agent/context in the working directory; pass contextDir to choose it");
  return ".agent/context";
}

useRuntime({
  defaultContextDir: defaultDir,
  resolveDir: (dir) => {
    const slashed = dir.replaceAll("\\", "/");
    return slashed.startsWith("/") || /^[A-Za-z]:\//.test(slashed) ? slashed : `${Deno.cwd()}/${slashed}`;
  },
  defaultStorage: () => denoStorage(),
  adaptFileSystem: fromFileSystem,
});
