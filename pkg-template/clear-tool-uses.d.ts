import type { ContextManager } from "./types.js";

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
  /**
   * Save each cleared result (unless it is already a wrapper's compact text naming its
   * handle, or an older `toolctx://` pointer); the placeholder names the record's handle
   * (`ctx:…`), which read_context reads back.
   */
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
