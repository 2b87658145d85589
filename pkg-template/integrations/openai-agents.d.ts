// toolctx/openai-agents: toolctx for the OpenAI Agents SDK (npm `@openai/agents` ≥ 0.20, an optional peer dependency).
import type { FunctionTool, RunContext, Tool } from "@openai/agents";
import type { ContextManager } from "../index.js";
import type { ContextToolName, ContextToolsOptions, EachContextTool, UsageSnapshot, WrapperOptions } from "../tools.js";

/** One call of a wrapped tool, as the options' functions see it. */
export interface ToolCallInfo {
  toolName: string;
  /** The arguments the model sent, parsed from JSON (handles not resolved). */
  input: unknown;
  /** The model's call id (`callId` of the function call). */
  toolCallId?: string;
  /** The run's context (`runContext.context` is what `run(agent, input, {context})` was given). */
  runContext: RunContext<unknown>;
}

export type { CompactTextLimits, ContextToolsOptions } from "../tools.js";

/** The options of `withToolContext` (see `WrapperOptions` of toolctx/tools). */
export interface ToolContextOptions extends WrapperOptions<ToolCallInfo> {}

/** read_context, search_context and grep_context (toolctx/tools' definitions) as the SDK's function tools, in that order. */
export declare function contextTools(
  manager: ContextManager,
  options?: ContextToolsOptions,
): EachContextTool<{ [N in ContextToolName]: FunctionTool<unknown, any, string> }>;

/**
 * `tools` with every function tool wrapped (a copy; the originals are left as they were):
 * its output is saved in `manager`, and one the model would read in more than
 * `maxInlineChars` characters reaches it as a compact text naming the record's handle.
 * Tools with an `outputSchema` are saved, never replaced. Hosted, computer, shell and
 * apply-patch tools pass unchanged. The retrieval tools are appended unless
 * `retrievalTools` is false.
 */
export declare function withToolContext<TContext = unknown>(
  tools: readonly Tool<TContext>[],
  manager: ContextManager,
  options?: ToolContextOptions,
): Tool<TContext>[];

/**
 * What the tools `withToolContext` returned (or an array holding some of them) kept out
 * of the prompt and read back, summed over the `withToolContext` calls they came from.
 * Throws INVALID_ARGUMENT when none of them came from `withToolContext`.
 */
export declare function usageOf(tools: readonly Tool<any>[]): UsageSnapshot;
