// The core module (ContextManager) in browsers and workers: fetched while the import of
// toolctx resolves (index.js awaits `loading`), by this module, which package.json does not
// list among its "sideEffects". A bundler (Vite, Rollup, webpack, esbuild) therefore keeps
// this module, and with it the fetch, only in a page that uses ContextManager. So that it
// does, ContextManager is exported as a binding of this module: a re-export
// (`export { ContextManager } from`) would be traced to context-manager.js and this module
// dropped, fetch and all. Unbundled, every browser-*.js is evaluated (docs/runtimes.md).
import init from "./toolctx_core.js";
import { ContextManager as Manager } from "./context-manager.js";
import { loading } from "./browser-loading.js";

loading.push(init({ module_or_path: new URL("./toolctx_core_bg.wasm", import.meta.url) }));

export const ContextManager = Manager;
