// The wasm modules being fetched while a browser page imports toolctx. Each of
// browser-core.js and browser-window.js that the page keeps adds its module's load here as
// it is evaluated, before anything awaits; index.js then awaits them all, so the modules a
// page uses are fetched side by side and ready when the import resolves.

/** The Promises of the modules' loads, in the order the modules were evaluated. */
export const loading = [];
