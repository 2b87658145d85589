// toolctx for Vercel Edge Functions and Next.js middleware (the `edge-light` condition):
// their build turns a `.wasm?module` import into a compiled module. The exports: api.js.

import core from "./toolctx_core_bg.wasm?module";
import conversation from "./toolctx_conversation_bg.wasm?module";
import windowWasm from "./toolctx_window_bg.wasm?module";
import { start } from "./edge.js";

start({ core, conversation, window: windowWasm });

export * from "./api.js";
