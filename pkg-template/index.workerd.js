// toolctx for Cloudflare Workers (the `workerd` condition): wrangler, and any bundler that
// follows its module rules, ships the imported .wasm as a compiled module. The exports: api.js.

import core from "./toolctx_core_bg.wasm";
import conversation from "./toolctx_conversation_bg.wasm";
import windowWasm from "./toolctx_window_bg.wasm";
import { start } from "./edge.js";

start({ core, conversation, window: windowWasm });

export * from "./api.js";
