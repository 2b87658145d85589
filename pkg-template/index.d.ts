// The public types of `toolctx` (every entry point: Node, Deno, Bun, browsers). types.d.ts
// is assembled at build time from crates/wasm/src/*.d.ts (the same text wasm-bindgen puts in
// toolctx_core.d.ts, which is internal and not shipped).
export * from "./types.js";
// The storage host interface, from its leaf file (the adapters' types import it there).
export type { StorageData, StorageHost } from "./adapters/host.js";
export { memoryStorage } from "./adapters/memory.js";
export { clearToolUses } from "./clear-tool-uses.js";
export type { ClearToolUsesOptions, ClearToolUsesResult } from "./clear-tool-uses.js";
