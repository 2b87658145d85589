// toolctx/openai-agents: toolctx for the OpenAI Agents SDK (npm `@openai/agents` ≥ 0.20, an optional peer dependency).
import type { FunctionTool, RunContext, Tool } from "@openai/agents";
import type { ContextManager } from "../index.js";
import type { ContextToolLimits, Usage, UsageSnapshot } from "../tools.js";

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
   * Tools whose arguments go through `resolveHandles` before they run: `true` for every
   * wrapped tool, or their names. A string argument that is exactly a handle (`ctx:…`,
   * `ctx:…#L10-40`, `ctx:…#$.rows[0:5]`) becomes the stored value. Default: none.
   */
  resolveHandles?: boolean | readonly string[];
  /**
   * Called when an output cannot be saved (storage failure, a BigInt, a cycle); the output
   * then reaches the model as it would without toolctx (as text with BigInts as strings
   * when JSON cannot carry it), and the run goes on. Without it, the run rejects: the
   * SDK's ToolCallError, whose `error` is a ToolctxError with the save's code.
   */
  onSaveError?: (error: unknown, call: ToolCallInfo) => void;
  /** The record's description. Default: the core's, from the tool's name and arguments. */
  describe?: (call: ToolCallInfo) => string;
  /** The record's taskId. */
  taskId?: number | ((call: ToolCallInfo) => number | undefined);
  /** The record's queryId (see `ContextManager.hashQuery`). */
  queryId?: string | ((call: ToolCallInfo) => string | undefined);
}

/** read_context, search_context and grep_context (toolctx/tools' definitions) as the SDK's function tools, in that order. */
export declare function contextTools(
  manager: ContextManager,
  options?: ContextToolsOptions,
): [FunctionTool<unknown, any, string>, FunctionTool<unknown, any, string>, FunctionTool<unknown, any, string>];

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
