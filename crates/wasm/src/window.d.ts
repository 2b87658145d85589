/** A text block. */
export interface TextBlock { type: "text"; text: string; [key: string]: unknown }
/** A tool call. */
export interface ToolUseBlock { type: "tool_use"; id: string; name: string; input: Record<string, unknown>; [key: string]: unknown }
/** A tool call's result. */
export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | ContentBlock[];
  is_error?: boolean;
  [key: string]: unknown;
}
/** Any other block (image, thinking, document...): kept verbatim. */
export interface OtherBlock { type: string; [key: string]: unknown }
export type ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock | OtherBlock;

/** An Anthropic-style message. */
export interface Message {
  role: "user" | "assistant";
  content: string | ContentBlock[];
  [key: string]: unknown;
}

/** How much of the middle a truncation removes (the seed's strategies). */
export type TruncationStrategy = "none" | "lastTwo" | "half" | "quarter";

/** What an edit does. */
export type WindowEditKind = "readFile" | "writeFile" | "fileMention" | "truncationNotice";

/**
 * One edit: the new content of block `block` (0 for a string content) of message
 * `message`, indices into the original messages. For a text block the new text, for a
 * `tool_result` its new content, for a write tool's `tool_use` its new `input.content`;
 * a truncation notice at `block` = the number of blocks is a text block appended.
 */
export interface WindowEdit { ts: number; message: number; block: number; kind: WindowEditKind; content: string }

/** Sizes before and after: UTF-16 characters and tokens estimated at 4 UTF-8 bytes each. */
export interface WindowMetrics {
  charsBefore: number;
  charsAfter: number;
  tokensBefore: number;
  tokensAfter: number;
  tokensSaved: number;
  /** `(charsBefore - charsAfter) / charsBefore`. */
  savedRatio: number;
  /** Share of characters the duplicate pass saved (what `minSavings` is compared with). */
  duplicateSavings: number;
  /** Blocks replaced by the duplicate notice in this call. */
  duplicatesReplaced: number;
  /** Messages missing from the result (this call's and earlier truncations). */
  messagesRemoved: number;
}

/** Which tools read and write whole files (defaults: see the README). */
export interface FileToolOptions {
  /** Tools whose `tool_result` is a file's content, found by an input `path` / `file_path`. */
  readFileTools?: string[];
  /** Tools whose `content` input is a file's new content. */
  writeFileTools?: string[];
}

export interface WindowOptions extends FileToolOptions {
  /** Share of characters the duplicate pass must save to skip truncation. Default 0.3; 0 never truncates. */
  minSavings?: number;
  /** Default `"half"`. */
  strategy?: TruncationStrategy;
  /** Timestamp of the edits (ms since the epoch). Default `Date.now()`. */
  now?: number;
  /** Apply this history's edits first and record the new ones in it (then `history.save()`). */
  history?: ContextHistory;
  /** Without a history: the range an earlier truncation removed, which a new one extends. */
  deletedRange?: [number, number];
}

export interface WindowResult {
  /** New messages; the input is never modified. */
  messages: Message[];
  /** The edits made by this call. */
  edits: WindowEdit[];
  /** The inclusive range of the input left out of `messages`, or `null`. */
  truncated: [number, number] | null;
  metrics: WindowMetrics;
}

/** How a copy of a file's content was recognised. */
export type FileReadKind = "toolResult" | "toolInput" | "readFileText" | "finalFileContent" | "fileMention";

export interface DuplicateFileRead {
  path: string;
  /** Oldest first; all but the last are replaced by `optimizeWindow`. */
  occurrences: { message: number; block: number; kind: FileReadKind }[];
}

/** Token usage of the last request. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/**
 * Replaces all but the latest copy of each file with a short notice; if that saved less
 * than `minSavings` of the characters, removes messages from the middle (keeping the
 * first user–assistant pair, never separating a tool call from its result) and appends
 * a truncation notice to the message before them.
 */
export function optimizeWindow(messages: readonly Message[], options?: WindowOptions): WindowResult;
/** Files whose content appears more than once (after the first pair), with every place it appears. */
export function findDuplicateFileReads(messages: readonly Message[], options?: FileToolOptions): DuplicateFileRead[];
/** The inclusive range a truncation with `strategy` removes, or `null` when nothing can be removed cleanly. */
export function truncationRange(messages: readonly Message[], strategy?: TruncationStrategy,
                                options?: { deletedRange?: [number, number] }): [number, number] | null;
/**
 * Whether the last request's tokens (input + output + cache reads + cache writes) reach
 * the context window minus the reserve: by default 27,000 for 64k windows, 30,000 for
 * 128k, 40,000 for 200k, otherwise min(40,000, 20% of the window).
 */
export function shouldCompact(usage: TokenUsage, contextWindow: number, options?: { reserve?: number }): boolean;
/** Estimated tokens of a text or of messages (4 UTF-8 bytes a token). */
export function estimateTokens(messagesOrText: string | readonly Message[]): number;

export interface ContextHistoryOptions {
  /** 1-128 characters of [A-Za-z0-9_-]; the file is `{contextDir}/window/{id}.json`. */
  id: string;
  /** Default: the runtime's default context dir. */
  contextDir?: string;
  storage?: StorageHost;
  /** Alias of `storage`. */
  fileSystem?: StorageHost;
  /** Start empty (and tell `onDebug`) instead of rejecting with `CORRUPT_RECORD` when the file does not parse. */
  discardCorrupt?: boolean;
  onDebug?: (msg: string) => void;
}

/** The timestamped edit history of one conversation, persisted as one JSON file. */
export class ContextHistory {
  private constructor();
  /** Loads the history (empty when the file does not exist); rejects with `CORRUPT_RECORD` when it does not parse. */
  static open(options: ContextHistoryOptions): Promise<ContextHistory>;
  readonly id: string;
  /** The history file. */
  readonly path: string;
  /** The range the latest truncation removed, or `null`. */
  readonly deletedRange: [number, number] | null;
  /** `optimizeWindow(messages, {...options, history: this})`. */
  optimize(messages: readonly Message[], options?: Omit<WindowOptions, "history">): WindowResult;
  /** The messages with every recorded edit applied and the latest truncation removed. */
  apply(messages: readonly Message[]): Message[];
  /** Copies of the edits, oldest first. */
  edits(): WindowEdit[];
  /** Drops the edits and truncations made after `ts` (ms since the epoch) and saves; resolves to how many were dropped. */
  restoreCheckpoint(ts: number): Promise<number>;
  /** Writes the history file, replacing it whole. */
  save(): Promise<void>;
  toJSON(): { id: string; path: string; edits: WindowEdit[]; truncations: { ts: number; range: [number, number] }[] };
  free(): void;
}
