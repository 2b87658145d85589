// toolctx for Cloudflare Workers (the `workerd` condition): wrangler, and any bundler that
// follows its module rules, ships the imported .wasm as a compiled module.

import module from "./toolctx_core_bg.wasm";
import { start } from "./edge.js";

start(module);

export {
  ContextHistory, ContextManager, ConversationStore, estimateTokens, findDuplicateFileReads, memoryStorage, optimizeWindow,
  shouldCompact, truncationRange, clearToolUses,
} from "./edge.js";
