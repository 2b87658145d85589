
/** Who wrote a message. */
export type MessageRole = "user" | "assistant" | "tool" | "system";

/** A tool call a message made. */
export interface ToolCall {
  name: string;
  args?: unknown;
}

/** One message of a conversation (one line of `messages.jsonl`); the window optimiser's `Message` is the Anthropic-style one. */
export interface ConversationMessage {
  id: string;
  role: MessageRole;
  content: string;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
  toolCalls?: ToolCall[];
  success?: boolean;
}

/** A message to append; `id` (1-128 of `[A-Za-z0-9_-]`) and `timestamp` default to fresh ones. */
export interface MessageInput {
  role: MessageRole;
  content: string;
  id?: string;
  timestamp?: string;
  toolCalls?: ToolCall[];
  success?: boolean;
}

/** A conversation's `metadata.json`. */
export interface ConversationMetadata {
  id: string;
  title?: string;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
  artifactCount: number;
}

/** An artifact's meta file. */
export interface ArtifactMeta {
  id: string;
  /** `file`, `search_result`, `command_output`, … (1-64 of `[A-Za-z0-9_-]`). */
  type: string;
  name: string;
  mimeType: string;
  /** Bytes of the content (UTF-8). */
  size: number;
  createdAt: string;
}

/** An artifact to store. */
export interface ArtifactInput {
  type: string;
  name: string;
  content: string;
  /** Default `text/plain`. */
  mimeType?: string;
}

export interface ConversationStats {
  conversationId: string;
  messages: number;
  messagesByRole: Record<MessageRole, number>;
  artifacts: number;
  artifactsByType: Record<string, number>;
  /** UTF-8 bytes of the messages' content. */
  messageBytes: number;
  artifactBytes: number;
  bytes: number;
  /** Tokens of the messages, at 4 bytes a token (artifacts are referenced, not sent). */
  estimatedTokens: number;
  /** `estimatedTokens × costPerToken`, when `costPerToken` was given. */
  estimatedCost?: number;
}

export interface PruneOptions {
  /** The current task: messages sharing its keywords score higher. */
  task?: string;
  /** Token budget of the messages kept (the most recent ones stay even beyond it). */
  maxTokens: number;
  /** The most recent messages always kept (default 10). */
  keepRecent?: number;
  /** "Now" for recency, ms since the epoch (default the store's clock). */
  now?: number;
  /** Rewrite `messages.jsonl` with the kept messages (one atomic whole-file write). Default: only report. */
  apply?: boolean;
}

export interface PruneResult {
  kept: ConversationMessage[];
  dropped: ConversationMessage[];
  tokensBefore: number;
  tokensAfter: number;
}

export interface SyncFailure {
  /** The queue item's file name (`remote index` when pulling failed). */
  item: string;
  conversationId?: string;
  /** The error's code: `STORAGE`, `QUOTA_EXCEEDED`, `NOT_FOUND` (an artifact's local content is missing), `CORRUPT_RECORD`, … */
  code: string;
  error: string;
  attempts: number;
}

export interface SyncResult {
  /** Queue items pushed (and removed from the queue). */
  pushed: number;
  /** Conversations changed locally by what the remote had. */
  pulled: number;
  /** Items that failed this time; they stay queued and are retried with backoff. */
  failed: SyncFailure[];
  /** Items still queued. */
  pending: number;
}

export interface ConversationStoreOptions {
  /** Default: `~/.agent/context` on Node/Deno/Bun; `agent/context` in browsers. Conversations live in `{contextDir}/conversations/`. */
  contextDir?: string;
  /** The local storage (default: the runtime's). */
  storage?: StorageHost | IFileSystem;
  /** Alias of `storage`. */
  fileSystem?: StorageHost | IFileSystem;
  /** A second storage to sync to (local-first: writes land locally, `sync()` pushes). */
  remote?: StorageHost | IFileSystem;
  /** The folder on the remote (default `contextDir`). */
  remoteDir?: string;
  /** Milliseconds since the epoch (tests; drives the retry backoff). Default `Date.now`. */
  clock?: () => number;
  /** Random characters for ids: `(n) => n chars of [a-z0-9]`, or `() => number in [0, 1)` (tests). Default: the CSPRNG. */
  random?: ((n: number) => string) | (() => number);
  /** Receives warnings: torn lines skipped, unresolved references, sync failures. */
  onDebug?: (msg: string, data?: unknown) => void;
  /** Backoff between attempts of a failed sync item: `baseMs × 2^(attempts-1)` up to `maxMs` (defaults 1000 and 300000). */
  syncRetry?: { baseMs?: number; maxMs?: number };
}

/** Conversations (`messages.jsonl`, `metadata.json`, `artifacts/`) with an index, stats, pruning, export/import and sync. */
export class ConversationStore {
  private constructor();
  static open(options?: ConversationStoreOptions): Promise<ConversationStore>;
  createConversation(init?: { title?: string; id?: string }): Promise<ConversationMetadata>;
  /** From `index.json`, newest `updatedAt` first. */
  listConversations(): Promise<ConversationMetadata[]>;
  /** `NOT_FOUND` when missing. */
  getConversation(id: string): Promise<ConversationMetadata>;
  /** Removes the conversation and everything in it (on the remote at the next sync); `NOT_FOUND` when missing. */
  deleteConversation(id: string): Promise<void>;
  /** `INVALID_ARGUMENT` for a bad role, id or timestamp, or an id the conversation has. */
  appendMessage(conversationId: string, message: MessageInput): Promise<ConversationMessage>;
  /** In conversation order: timestamp, then id (generated ids sort in append order). */
  getMessages(conversationId: string, filter?: { role?: MessageRole }): Promise<ConversationMessage[]>;
  storeArtifact(conversationId: string, artifact: ArtifactInput): Promise<ArtifactMeta>;
  /** Stores the artifact and appends the message with ` (artifact://{id})` after its content. */
  appendWithArtifact(conversationId: string, message: MessageInput, artifact: ArtifactInput):
    Promise<{ message: ConversationMessage; artifact: ArtifactMeta }>;
  /** `NOT_FOUND` when missing. */
  getArtifact(conversationId: string, artifactId: string): Promise<ArtifactMeta & { content: string }>;
  listArtifacts(conversationId: string): Promise<ArtifactMeta[]>;
  /** The artifacts `text` references as `artifact://{id}`; missing ones are skipped (onDebug). */
  resolveArtifacts(conversationId: string, text: string): Promise<(ArtifactMeta & { content: string })[]>;
  stats(conversationId: string, options?: { costPerToken?: number }): Promise<ConversationStats>;
  prune(conversationId: string, options: PruneOptions): Promise<PruneResult>;
  export(conversationId: string, format: "json" | "jsonl" | "markdown"): Promise<string>;
  /** Restores (or merges into an existing conversation) a `json`/`jsonl` export; format guessed when not given. */
  import(text: string, options?: { format?: "json" | "jsonl" }): Promise<ConversationMetadata>;
  sync(): Promise<SyncResult>;
  syncStatus(): Promise<{ pending: number; failed: number }>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
  free(): void;
}
