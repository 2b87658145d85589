// The public types of `toolctx/window` (the context-window optimiser). It is the same entry point as `toolctx`,
// narrowed to these exports; the window module is instantiated by their first use.
export { optimizeWindow, findDuplicateFileReads, truncationRange, shouldCompact, estimateTokens, ContextHistory } from "./types.js";
export type {
  TextBlock, ToolUseBlock, ToolResultBlock, OtherBlock, ContentBlock, Message, TruncationStrategy, WindowEditKind,
  WindowEdit, WindowMetrics, FileToolOptions, WindowOptions, WindowResult, FileReadKind, DuplicateFileRead,
  TokenUsage, ContextHistoryOptions,
} from "./types.js";
