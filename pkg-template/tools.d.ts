// toolctx/tools: the model's tools over a ContextManager, framework-free (SPEC §1).
import type { ContextManager, ContextPointer } from "./types.js";

/** A JSON Schema object (the tools' input schemas). */
export type JsonSchema = { [key: string]: unknown };

/**
 * The model's tools, each one's input by its name: the one place the types list them. The
 * tuple `ContextToolNames` gives their order (that of `contextTools` and `TOOL_NAMES`);
 * every integration's types are derived from these two (`EachContextTool`), so a tool added
 * to tools.js is typed here and nowhere else.
 */
export interface ContextToolInputs {
  /** A page of a saved output's numbered lines (offset: the first line, from 1). */
  read_context: ReadInput;
  /** The store's ranking, best first: handles, descriptions, sizes and best-matching lines. */
  search_context: SearchInput;
  /** The lines that match, with their handles and line numbers. */
  grep_context: GrepInput;
}

/** The name of one of the model's tools. */
export type ContextToolName = keyof ContextToolInputs;

/** The tools' names in the order `contextTools` returns them. */
export type ContextToolNames = readonly ["read_context", "search_context", "grep_context"];

/**
 * The tools in order as an integration types them: `Tools` gives each name its type, for
 * example `{ [N in ContextToolName]: Tool<ContextToolInputs[N]> }`, and this is the tuple
 * `[Tools["read_context"], Tools["search_context"], Tools["grep_context"]]`. (`Names` is a
 * parameter so that the mapped type maps a tuple to a tuple; leave it to its default.)
 */
export type EachContextTool<Tools extends { [N in ContextToolName]: unknown }, Names extends readonly ContextToolName[] = ContextToolNames> = {
  -readonly [I in keyof Names]: Tools[Names[I]];
};

/** One tool the model calls: what every integration is built from. */
export interface ContextTool<Input = Record<string, unknown>, Name extends ContextToolName = ContextToolName> {
  name: Name;
  /** A short name for people (an MCP client's list of tools). */
  title: string;
  description: string;
  /** JSON Schema of the input. */
  inputSchema: JsonSchema;
  /**
   * Resolves to the text the model reads, whatever the input (never rejects): a call that
   * fails is answered with `"<tool>: <parameter> …"`, saying what would work.
   */
  execute(input: Input): Promise<string>;
  /** The same answer, with the ToolctxError behind it when the call failed (its `code` says why). */
  run(input: Input): Promise<{ text: string; error?: Error & { code: string } }>;
}

export interface ReadInput { handle: string; offset?: number; limit?: number }
export interface SearchInput { query: string; limit?: number }
export interface GrepInput { pattern: string; handle?: string; limit?: number }

/** The limits every integration shares. */
export interface ContextToolLimits {
  readLines: number;
  maxReadLines: number;
  maxReadChars: number;
  maxLineChars: number;
  searchResults: number;
  maxSearchResults: number;
  grepMatches: number;
  maxGrepMatches: number;
  /** Lines of context around a grep hit (0 for none). */
  grepContext: number;
  maxGrepBytes: number;
  maxPatternChars: number;
  /** A search_context query is clipped to this many characters. */
  maxQueryChars: number;
  /** grep_context matches a regular expression against a line's first this many characters (plain text, against all of it). */
  maxMatchChars: number;
  /** grep_context stops scanning after this many milliseconds, and says how far it got. */
  grepMillis: number;
}

export interface ContextToolOptions extends Partial<ContextToolLimits> {
  /** Counts what the tools read back. */
  usage?: Usage;
}

/** The options of every integration's `contextTools`: the limits, and the tally. */
export type ContextToolsOptions = ContextToolOptions;

/** Sizes of the compact text that stands for a large output (positive integers). */
export interface CompactTextLimits {
  /** An output the model would read in more characters than this reaches it as a compact text with the record's handle. Default 16000. */
  maxInlineChars?: number;
  /** Lines of the preview from the start, and again from the end. Default 5. */
  previewLines?: number;
  /** Characters of the whole preview. Default 1500. */
  previewChars?: number;
}

/**
 * The options of the framework wrappers' `withToolContext` (toolctx/openai-agents,
 * toolctx/langchain; toolctx/ai-sdk takes these and more). `Call` is what the framework
 * tells of one tool call.
 */
export interface WrapperOptions<Call> extends CompactTextLimits, ContextToolOptions {
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
   * then reaches the model as it would without toolctx (as text, BigInts as their digits,
   * when JSON cannot carry it), and the run goes on. Without it, the tool call fails with
   * a ToolctxError whose code is the save's.
   */
  onSaveError?: (error: unknown, call: Call) => void;
  /** The record's description. Default: the core's, from the tool's name and arguments. */
  describe?: (call: Call) => string;
  /** The record's taskId. */
  taskId?: number | ((call: Call) => number | undefined);
  /** The record's queryId (see `ContextManager.hashQuery`). */
  queryId?: string | ((call: Call) => string | undefined);
}

import type { Usage } from "./usage.js";
export type { Tokenizer, Usage, UsageOptions, UsageSnapshot } from "./usage.js";
export { BYTES_PER_TOKEN, createUsage, sumUsage, USAGE_KEYS } from "./usage.js";

export const TOOL_NAMES: ContextToolNames;
export const POINTER_SCHEME: "toolctx://";
export const LIMITS: Readonly<ContextToolLimits>;

/** read_context, search_context and grep_context over `manager`, in that order. */
export function contextTools(
  manager: ContextManager,
  options?: ContextToolOptions,
): EachContextTool<{ [N in ContextToolName]: ContextTool<ContextToolInputs[N], N> }>;

/**
 * A copy of `args` with every string that is exactly a handle (optionally `#L10-40` or
 * `#$.path`; quotes, backticks and trailing punctuation forgiven) replaced by the stored
 * value. Arrays and plain objects are copied with their shape (cycles, any depth, own
 * `__proto__` keys); other values are kept.
 */
export function resolveHandles<T>(args: T, manager: ContextManager, options?: { asText?: boolean }): Promise<T>;

/** What the model reads when a call of `toolName` failed: `"<toolName>: <message>"`, in every integration. */
export function errorText(toolName: string, error: unknown): string;

/** The handle and slice a model's text names (`ctx:…`, `` `ctx:…#L10-40`. ``), or undefined for anything else. */
export function parseReference(text: unknown): { handle: string; slice?: string } | undefined;

/** The pointer of the record a handle, a toolctx:// pointer, a filepath or a file name names; throws NOT_FOUND. */
export function findRecord(manager: ContextManager, ref: string): ContextPointer;

/** A result as the model reads it: one line per field or array element (the lines passages number). */
export function lineView(result: unknown, manager: ContextManager): string[];

