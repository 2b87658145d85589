// ContextManager, as a binding of this module (api.js re-exports it): what ties the core
// module's load at import to the use of ContextManager. package.json does not list this
// file among its "sideEffects", so a bundler (Vite, Rollup, webpack, esbuild) keeps it, and
// with it the load it adds to `atImport`, only in a program that uses ContextManager; a
// re-export (`export { ContextManager } from "./context-manager.js"`) would be traced to
// context-manager.js and this file dropped, load and all. In browsers and workers index.js
// awaits the loads in `atImport`, so the core is ready when the import resolves; the other
// runtimes instantiate the core synchronously in their entry point and never call them.
// Unbundled, every file is evaluated (docs/runtimes.md).
import init from "./toolctx_core.js";
import { ContextManager as Manager } from "./context-manager.js";
import { atImport } from "./module.js";

// The glue's own URL for the core: its .wasm beside it (bundlers rewrite it to the asset's).
atImport.push(() => init());

export const ContextManager = Manager;
