// The public types of `toolctx/conversation` (the conversation store). It is the same entry point as `toolctx`,
// narrowed to these exports; the conversation module is instantiated by their first use.
export { ConversationStore } from "./types.js";
export type {
  MessageRole, ToolCall, ConversationMessage, MessageInput, ConversationMetadata, ArtifactMeta, ArtifactInput,
  ConversationStats, PruneOptions, PruneResult, SyncFailure, SyncResult, ConversationStoreOptions,
} from "./types.js";
