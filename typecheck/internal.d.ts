// The package's internal exports, which its published declarations leave out: what the
// type check of pkg-template/ (tsconfig.json) sees of them. A JS file that imports
// "./conversation.js" is typed by conversation.d.ts beside it, the public face, and the
// wasm-bindgen glue's .d.ts skips the exports marked skip_typescript in crates/wasm/src/.
// Not published.

import type { WasmModule } from "../pkg-template/module.js";

declare module "../pkg-template/conversation.js" {
  /** The conversation store's wasm module (module.js), provided by each entry point. */
  export const conversationModule: WasmModule;
}

declare module "../pkg-template/window.js" {
  /** The window optimiser's wasm module (module.js), provided by each entry point. */
  export const windowModule: WasmModule;
}

declare module "../pkg/toolctx_core.js" {
  // The core's internal statics (context-manager.js wraps each), typed as loosely as the
  // wasm-bindgen glue takes them.
  namespace ContextManager {
    /** A manager and the first step of its opening plan. */
    function __open(options: unknown): { manager: ContextManager; step: any };
    function __panicForTests(message: string): void;
    function __panicForTestsAsync(message: string): any;
    /** The query's vector for hybrid ranking, from what the `embed` option returned. */
    function __queryVector(vector: unknown): any;
    /** The best-matching lines of a record's result for `query`, as JSON. */
    function __passage(query: string, resultJson: string): string;
  }

  /** grep_context's linear-time line matcher (crates/wasm/src/manager/grep.rs). */
  export class LinePattern {
    constructor(pattern: string);
    /** The indexes of the lines of `text` that match. */
    matchingLines(text: string): Uint32Array;
    free(): void;
  }
}
