// toolctx/langchain: toolctx for LangChain.js and LangGraph.js (npm `@langchain/core` ≥ 1.0, an optional peer dependency).
import type { DynamicStructuredTool, ToolRunnableConfig } from "@langchain/core/tools";
import type { ContextManager } from "../index.js";
import type { ContextToolInputs, ContextToolName, ContextToolsOptions, EachContextTool, JsonSchema, UsageSnapshot, WrapperOptions } from "../tools.js";

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

export type { CompactTextLimits, ContextToolsOptions } from "../tools.js";

/** The options of `withToolContext` (see `WrapperOptions` of toolctx/tools). */
export interface ToolContextOptions extends WrapperOptions<ToolCallInfo> {}

/** A retrieval tool: a LangChain tool with toolctx/tools' name, description and JSON Schema. */
export type ContextTool<Input> = DynamicStructuredTool<JsonSchema, Input, Input, string>;

/** Each retrieval tool by its name (toolctx/tools' `ContextToolInputs`). */
export type ContextTools = { [N in ContextToolName]: ContextTool<ContextToolInputs[N]> };

/**
 * read_context, search_context and grep_context (toolctx/tools' definitions) as LangChain
 * tools, in that order. A mistake of the model comes back as a ToolMessage with status
 * "error"; invoked without a tool call, the tool throws the ToolctxError instead.
 */
export declare function contextTools(
  manager: ContextManager,
  options?: ContextToolsOptions,
): EachContextTool<ContextTools>;

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
): Array<T | ContextTools[ContextToolName]>;

/**
 * What the tools `withToolContext` returned (or an array holding some of them) kept out
 * of the prompt and read back, summed over the `withToolContext` calls they came from.
 * Throws INVALID_ARGUMENT when none of them came from `withToolContext`.
 */
export declare function usageOf(tools: readonly unknown[]): UsageSnapshot;
