// The window optimiser's module in browsers and workers: its functions are synchronous, so
// the module is fetched while the import of toolctx resolves (index.js awaits `loading`),
// by this module, which a bundler keeps only in a page that uses one of its exports (see
// browser-core.js: exported as bindings of this module, which package.json does not list
// among its "sideEffects").
import * as optimiser from "./window.js";
import { loading } from "./browser-loading.js";

optimiser.windowModule.provide(new URL("./toolctx_window_bg.wasm", import.meta.url));
loading.push(optimiser.windowModule.load());

export const { ContextHistory, estimateTokens, findDuplicateFileReads, optimizeWindow, shouldCompact, truncationRange } = optimiser;
