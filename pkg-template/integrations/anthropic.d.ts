import type { ContextManager, StorageHost } from "../index.js";

/** The commands of Anthropic's memory tool (`memory_20250818`), as the SDK types them. */
export interface MemoryViewCommand { command: "view"; path: string; view_range?: Array<number> }
export interface MemoryCreateCommand { command: "create"; path: string; file_text: string }
export interface MemoryStrReplaceCommand { command: "str_replace"; path: string; old_str: string; new_str: string }
export interface MemoryInsertCommand { command: "insert"; path: string; insert_line: number; insert_text: string }
export interface MemoryDeleteCommand { command: "delete"; path: string }
export interface MemoryRenameCommand { command: "rename"; old_path: string; new_path: string }

/**
 * One handler per command, each resolving to the text the model reads or rejecting with
 * the protocol's error text: the shape of the SDK's `MemoryToolHandlers`, so the object
 * goes straight to `betaMemoryTool(handlers)`.
 */
export interface MemoryToolHandlers {
  view(command: MemoryViewCommand): Promise<string>;
  create(command: MemoryCreateCommand): Promise<string>;
  str_replace(command: MemoryStrReplaceCommand): Promise<string>;
  insert(command: MemoryInsertCommand): Promise<string>;
  delete(command: MemoryDeleteCommand): Promise<string>;
  rename(command: MemoryRenameCommand): Promise<string>;
}

export interface MemoryToolOptions {
  /** Where the memory files are kept: any StorageHost (toolctx/node, toolctx/opfs, toolctx/indexeddb, toolctx/memory, your own). */
  storage: StorageHost;
  /** The folder holding `memories/` (default `"memory"`, like the SDK's `./memory`): `/memories/a.md` is `{dir}/memories/a.md`. */
  dir?: string;
}

/** Handlers for Anthropic's memory tool over a toolctx StorageHost; pass them to the SDK's `betaMemoryTool`. */
export function memoryToolHandlers(options: MemoryToolOptions): MemoryToolHandlers;

/** The segments under /memories of a memory path; throws the protocol's error for a path outside it or one that tries to leave it. */
export function memorySegments(memoryPath: string): string[];

/** A threshold as the API writes it, or a plain number. */
export type InputTokens = number | { type: "input_tokens"; value: number };
export type ToolUses = number | { type: "tool_uses"; value: number };

export interface ClearToolUsesOptions {
  /** Clear once the input exceeds this (default 100,000 input tokens); `{type: "tool_uses", value}` counts tool uses instead. */
  trigger?: InputTokens | { type: "tool_uses"; value: number };
  /** The most recent tool uses left whole (default 3). */
  keep?: ToolUses;
  /** Clear only if at least this many tokens are freed (default: any). */
  clearAtLeast?: InputTokens;
  /** Tools whose uses are never cleared. */
  excludeTools?: string[];
  /** Also empty the inputs of cleared tool uses: all (`true`) or those of the tools named. */
  clearToolInputs?: boolean | string[];
  /** The input tokens of the conversation as the last response reported them; otherwise estimated (4 bytes a token). */
  inputTokens?: number;
  /** Save each cleared result (unless it already names a `toolctx://` pointer); the placeholder names the pointer. */
  manager?: ContextManager;
  /** Given to `saveContext` with each saved result. */
  taskId?: number;
  queryId?: string;
}

export interface ClearToolUsesResult<M> {
  /** The edited list (the input itself when nothing was cleared; never modified). */
  messages: M[];
  clearedInputTokens: number;
  clearedToolUses: number;
}

/** Anthropic's `clear_tool_uses_20250919` context edit, on the client, over any Anthropic-style message list. */
export function clearToolUses<M extends { role: string; content?: unknown }>(messages: M[], options?: ClearToolUsesOptions): Promise<ClearToolUsesResult<M>>;

/** Estimated input tokens of a message list (4 UTF-8 bytes a token, as `estimateTokens` counts them). */
export function messageTokens(messages: ReadonlyArray<{ role: string; content?: unknown }>): number;
