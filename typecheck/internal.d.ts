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
  /** What the package asks of the core module: a plain object whose `kind` protocol.js names (crates/wasm/src/interop/requests.rs). */
  type Request = { kind: string; [field: string]: unknown };

  // The core's handle (crates/wasm/src/manager/mod.rs), which context-manager.js wraps: its
  // few exports, typed as loosely as the wasm-bindgen glue takes them.
  namespace ContextManager {
    /** The first step of a workflow with no manager yet, over the folder and storage `options` name (protocol.js START). */
    function start(options: unknown, work: Request): any;
    /** The answer to `request`, which needs no manager (protocol.js COMPUTE). */
    function compute(request: Request): any;
  }
  interface ContextManager {
    /** The first step of the workflow `work` (protocol.js WORK). */
    begin(work: Request): any;
    /** The answer to `query` (protocol.js QUERY). */
    query(query: Request): any;
    /** Makes the change `update` (protocol.js UPDATE); `indexSome` answers whether records still wait. */
    update(update: Request): any;
  }
}
