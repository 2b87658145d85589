// toolctx/ai-sdk: toolctx for the Vercel AI SDK (npm `ai` 7, an optional peer dependency).
import type { ModelMessage, PrepareStepFunction, Tool, ToolSet } from "ai";
import type { ContextManager, WindowOptions, WindowResult } from "../index.js";

/** The scheme of the pointers the model is given: `toolctx://{record filename}`. */
export declare const POINTER_SCHEME: "toolctx://";

/** Sizes and caps, all in characters or lines (positive integers). */
export interface ToolContextLimits {
  /** An output the model would receive in more characters than this is replaced by a pointer and a preview. Default 16000. */
  maxInlineChars?: number;
  /** Lines of the preview from the start, and again from the end. Default 5. */
  previewLines?: number;
  /** Characters of the whole preview. Default 1500. */
  previewChars?: number;
  /** Lines longer than this count as several lines of this many characters (preview, read_context, grep_context). Default 1000. */
  wrapChars?: number;
  /** read_context lines when the model gives no limit. Default 100. */
  readLines?: number;
  /** Most read_context lines a call. Default 400. */
  maxReadLines?: number;
  /** Most read_context characters a call. Default 16000. */
  maxReadChars?: number;
  /** search_context results when the model gives no k. Default 5. */
  searchResults?: number;
  /** Most search_context results. Default 20. */
  maxSearchResults?: number;
  /** grep_context lines when the model gives no limit. Default 30. */
  grepMatches?: number;
  /** Most grep_context lines a call. Default 100. */
  maxGrepMatches?: number;
  /** Characters of records grep_context reads a call before it stops. Default 16 MiB. */
  maxGrepBytes?: number;
  /** Longest grep_context pattern. Default 500. */
  maxPatternChars?: number;
}

/** One tool call, as the options' functions see it. */
export interface ToolCallInfo {
  toolName: string;
  input: unknown;
  toolCallId: string;
  /** The messages that led to the call (the SDK's `ToolExecutionOptions.messages`). */
  messages: ModelMessage[];
}

export interface ToolContextOptions extends ToolContextLimits {
  /** The record's queryId. Default: `ContextManager.hashQuery(query)`. */
  queryId?: string | ((call: ToolCallInfo) => string | undefined);
  /** The query hashed into the queryId. Default: the text of the last user message before the call. */
  query?: string | ((call: ToolCallInfo) => string | undefined);
  /** The record's taskId. Default: the step number, from 1. */
  taskId?: number | ((call: ToolCallInfo) => number | undefined);
  /**
   * The record's description. Default: `"{toolName}: {key=value, ...} [tool call {toolCallId}]"`.
   * The record of a call is found by its `toolCallId` (stored in the record), whatever the description.
   */
  describe?: (call: ToolCallInfo) => string;
  /** Add read_context, search_context and grep_context. Default true. */
  retrievalTools?: boolean;
  /**
   * Called when an output cannot be saved; the output then reaches the model as it
   * would without toolctx. Without it, the tool call fails with the toolctx error.
   */
  onSaveError?: (error: unknown, call: ToolCallInfo) => void;
}

/** The retrieval tools the model calls. Their outputs are capped and never saved. (A type, not an interface: a ToolSet needs an index signature.) */
export type ContextTools = {
  /** `{pointer, offset?, limit?}`: a page of a saved output's lines, with a continuation hint. */
  read_context: Tool<{ pointer: string; offset?: number; limit?: number }, string>;
  /** `{query, k?}`: the store's ranking, best first, with descriptions. */
  search_context: Tool<{ query: string; k?: number }, string>;
  /** `{pattern, pointer?, ignoreCase?, limit?}`: matching lines, as `pointer:line: text`. */
  grep_context: Tool<{ pattern: string; pointer?: string; ignoreCase?: boolean; limit?: number }, string>;
};

/**
 * Wraps every tool of `tools` that has an `execute`: its output is saved in `manager`
 * (tool-call id, the step's query and task) and a large one reaches the model as a
 * pointer and a preview (through the tool's `toModelOutput`). Adds the retrieval tools
 * unless `retrievalTools` is false.
 */
export declare function withToolContext<TOOLS extends ToolSet>(
  tools: TOOLS,
  manager: ContextManager,
  options?: ToolContextOptions,
): TOOLS & ContextTools;

/** The retrieval tools alone. */
export declare function contextTools(manager: ContextManager, options?: ToolContextLimits): ContextTools;

/** A record's result as read_context shows it: a string as is, anything else as indented JSON. */
export declare function recordText(result: unknown): string;

export interface WindowPrepareStepOptions extends Omit<WindowOptions, "history"> {
  /** The model's context window in tokens: optimise when the last step's usage reaches it minus the reserve. */
  contextWindow?: number;
  /** Tokens kept for the answer (default: `shouldCompact`'s table). */
  reserve?: number;
  /** Optimise before every step (add `minSavings: 0` to only deduplicate: otherwise the optimiser truncates whenever deduplication saves less than 30%). */
  always?: boolean;
  /** Receives each optimiser result (edits, truncation, metrics). */
  onOptimize?: (result: WindowResult) => void;
}

/** A `prepareStep` that runs `optimizeWindow` over the step's messages when the window fills up. */
export declare function windowPrepareStep<TOOLS extends ToolSet = ToolSet>(options: WindowPrepareStepOptions): PrepareStepFunction<TOOLS>;

/** The AI SDK's messages as the optimiser's, and where each came from. */
export declare function toWindowMessages(messages: ModelMessage[]): { window: import("../index.js").Message[]; index: number[] };

/** The optimiser's edits and truncation applied to the AI SDK's messages. */
export declare function applyWindowResult(
  messages: ModelMessage[],
  converted: { index: number[] },
  result: Pick<WindowResult, "edits" | "truncated">,
): ModelMessage[];
