// toolctx for Vercel Edge Functions and Next.js middleware (the `edge-light` condition):
// their build turns a `.wasm?module` import into a compiled module.

import module from "./toolctx_core_bg.wasm?module";
import { start } from "./edge.js";

start(module);

export {
  ContextHistory, ContextManager, ConversationStore, estimateTokens, findDuplicateFileReads, memoryStorage, optimizeWindow,
  shouldCompact, truncationRange, clearToolUses,
} from "./edge.js";
