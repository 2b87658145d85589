// toolctx/langchain: toolctx for LangChain.js and LangGraph.js (npm `@langchain/core` ≥ 1.0, an optional peer dependency).
import type { DynamicStructuredTool, ToolRunnableConfig } from "@langchain/core/tools";
import type { ContextManager } from "../index.js";
import type { ContextToolLimits, GrepInput, JsonSchema, ReadInput, SearchInput, Usage, UsageSnapshot } from "../tools.js";

/** One call of a wrapped tool, as the options' functions see it. */
export interface ToolCallInfo {
  toolName: string;
  /** The arguments the model sent (handles not resolved); the tool's input when called without a tool call. */
  input: unknown;
  /** The model's tool-call id, when the tool was invoked with a ToolCall. */
  toolCallId?: string;
  /** The call's RunnableConfig (`configurable`, `metadata`, `toolCall`…). */
  config?: ToolRunnableConfig;
}

/** Sizes of the compact text that stands for a large output (positive integers). */
export interface CompactTextLimits {
  /** An output the model would read in more characters than this reaches it as a compact text with the record's handle. Default 16000. */
  maxInlineChars?: number;
  /** Lines of the preview from the start, and again from the end. Default 5. */
  previewLines?: number;
  /** Characters of the whole preview. Default 1500. */
  previewChars?: number;
}

export interface ContextToolsOptions extends Partial<ContextToolLimits> {
  /** Counts what the tools read back (a tally from `createUsage()` of toolctx/tools). */
  usage?: Usage;
}

export interface ToolContextOptions extends CompactTextLimits, ContextToolsOptions {
  /** Add read_context, search_context and grep_context. Default true. */
  retrievalTools?: boolean;
  /**
   * Tools whose arguments go through `resolveHandles` before their schema validates them:
   * `true` for every wrapped tool, or their names. A string argument that is exactly a
   * handle (`ctx:…`, `ctx:…#L10-40`, `ctx:…#$.rows[0:5]`) becomes the stored value.
   * Default: none.
   */
  resolveHandles?: boolean | readonly string[];
  /**
   * Called when an output cannot be saved (storage failure, a BigInt, a cycle); the output
   * then reaches the model as it would without toolctx (as text with BigInts as strings
   * when JSON cannot carry it). Without it, the tool call rejects with a ToolctxError
   * whose code is the save's.
   */
  onSaveError?: (error: unknown, call: ToolCallInfo) => void;
  /** The record's description. Default: the core's, from the tool's name and arguments. */
  describe?: (call: ToolCallInfo) => string;
  /** The record's taskId. */
  taskId?: number | ((call: ToolCallInfo) => number | undefined);
  /** The record's queryId (see `ContextManager.hashQuery`). */
  queryId?: string | ((call: ToolCallInfo) => string | undefined);
}

/** A retrieval tool: a LangChain tool with toolctx/tools' name, description and JSON Schema. */
export type ContextTool<Input> = DynamicStructuredTool<JsonSchema, Input, Input, string>;

/**
 * read_context, search_context and grep_context (toolctx/tools' definitions) as LangChain
 * tools, in that order. A mistake of the model comes back as a ToolMessage with status
 * "error"; invoked without a tool call, the tool throws the ToolctxError instead.
 */
export declare function contextTools(
  manager: ContextManager,
  options?: ContextToolsOptions,
): [ContextTool<ReadInput>, ContextTool<SearchInput>, ContextTool<GrepInput>];

/**
 * `tools` with every structured tool wrapped (a new DynamicStructuredTool with the
 * original's name, description, schema, responseFormat and returnDirect; the originals
 * are left as they were): its output is saved in `manager`, and one the model would read
 * in more than `maxInlineChars` characters reaches it as a compact text naming the
 * record's handle. Artifacts, and ToolMessages or Commands a tool returns itself, pass
 * unchanged. The retrieval tools are appended unless `retrievalTools` is false.
 */
export declare function withToolContext<T extends object>(
  tools: readonly T[],
  manager: ContextManager,
  options?: ToolContextOptions,
): Array<T | ContextTool<ReadInput> | ContextTool<SearchInput> | ContextTool<GrepInput>>;

/**
 * What the tools `withToolContext` returned (or an array holding some of them) kept out
 * of the prompt and read back, summed over the `withToolContext` calls they came from.
 * Throws INVALID_ARGUMENT when none of them came from `withToolContext`.
 */
export declare function usageOf(tools: readonly unknown[]): UsageSnapshot;
