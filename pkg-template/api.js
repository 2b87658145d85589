// The public exports of `toolctx`: the one list of them. Every entry point (index.js for
// browsers and workers, index.node.js for Node and Bun, index.deno.js, index.workerd.js,
// index.edge-light.js) re-exports this module whole (`export * from "./api.js"`) after
// choosing how its runtime loads the wasm and stating its defaults (host.js); none lists a
// name of its own (tests/js/entries.test.mjs checks both).
//
// ContextManager and the window optimiser's functions are bindings of api-core.js and
// api-window.js, not re-exports of context-manager.js and window.js, so that a bundler
// keeps each of those files, with the load of its wasm module at import where the runtime
// fetches it (browsers), only in a program that uses its exports (see api-core.js).

export * from "./api-core.js"; // ContextManager
export * from "./api-window.js"; // the window optimiser's functions and ContextHistory
export { ConversationStore } from "./conversation.js";
export { memoryStorage } from "./adapters/memory.js";
export { clearToolUses } from "./clear-tool-uses.js";
