// toolctx/ai-sdk: toolctx for the Vercel AI SDK (npm `ai` 7, an optional peer dependency).
import type { ModelMessage, PrepareStepFunction, Tool, ToolSet } from "ai";
import type { ContextManager, WindowOptions, WindowResult } from "../index.js";
import type { CompactTextLimits, ContextToolInputs, ContextToolLimits, ContextToolsOptions, UsageSnapshot } from "../tools.js";

export type { ContextToolsOptions } from "../tools.js";

/** The scheme of the older pointers (`toolctx://…`): the tools still take one where a handle goes. */
export declare const POINTER_SCHEME: "toolctx://";

/** The wrapper's own sizes, in characters or lines (positive integers): toolctx/tools' `CompactTextLimits`. */
export type ToolContextSizes = CompactTextLimits;

/** @deprecated Use `ToolContextSizes` and `ContextToolsOptions`. */
export type ToolContextLimits = ToolContextSizes & Partial<ContextToolLimits>;

/** One tool call, as the options' functions see it. */
export interface ToolCallInfo {
  toolName: string;
  input: unknown;
  toolCallId: string;
  /** The messages that led to the call (the SDK's `ToolExecutionOptions.messages`). */
  messages: ModelMessage[];
}

export interface ToolContextOptions extends ToolContextSizes, ContextToolsOptions {
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
   * The tools (`true`: every tool with an `execute`) whose input goes through toolctx/tools'
   * `resolveHandles` before they run: a string argument that is exactly a handle (`ctx:…`,
   * `ctx:…#L10-40`, `ctx:…#$.path`) becomes the value it names, so the model passes a stored
   * output by handle instead of re-emitting it. Their descriptions say so; the record of a call
   * keeps the input as the model gave it. A handle that names nothing is the tool's error.
   * (A tool whose input schema is validated, zod for one, must accept a string there.)
   */
  resolveHandles?: boolean | string[];
  /**
   * Called when an output cannot be saved (`NOT_SERIALIZABLE`: a BigInt, a cycle;
   * `TOO_LARGE`; the host failed); the output then reaches the model as it would without
   * toolctx, and one JSON cannot hold as text (BigInts as their digits, a cycle as
   * "[Circular]"). The run goes on. Without it, the tool call fails with the toolctx error.
   */
  onSaveError?: (error: unknown, call: ToolCallInfo) => void;
}

/**
 * The tools the model calls, toolctx/tools' definitions as AI SDK tools: same names,
 * descriptions and JSON Schemas, one per name of `ContextToolInputs`. Their outputs are
 * capped and never saved. (A type, not an interface: a ToolSet needs an index signature.)
 */
export type ContextTools = { [N in keyof ContextToolInputs]: Tool<ContextToolInputs[N], string> };

/**
 * Wraps every tool of `tools` that has an `execute`: its output is saved in `manager`
 * (tool-call id, the step's query and task) and a large one reaches the model as its handle
 * and a preview (through the tool's `toModelOutput`). Adds the tools of `contextTools`
 * unless `retrievalTools` is false. `usageOf(result)` tells what it kept out of the prompt.
 */
export declare function withToolContext<TOOLS extends ToolSet>(
  tools: TOOLS,
  manager: ContextManager,
  options?: ToolContextOptions,
): TOOLS & ContextTools;

/**
 * What a tool set `withToolContext` returned kept out of the prompt so far: outputs
 * replaced by their handle, the characters and estimated tokens the model was not sent,
 * and what its tools read back. Throws INVALID_ARGUMENT for any other object (a copy too:
 * pass `options.usage` to tally into a Usage of your own).
 */
export declare function usageOf(toolSet: ToolSet): UsageSnapshot;

/** The tools the model calls, alone. */
export declare function contextTools(manager: ContextManager, options?: ContextToolsOptions): ContextTools;

/** @deprecated A record's result as indented JSON (a string as is); read_context now reads its line view (toolctx/tools' `lineView`). */
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
