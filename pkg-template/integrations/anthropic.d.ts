import type { ContextManager, StorageHost } from "../index.js";
import type { ContextToolInputs, ContextToolName, ContextToolOptions, EachContextTool, JsonSchema } from "../tools.js";

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

/** One of toolctx/tools' tools in the shape the SDK's `betaTool` gives, for `client.beta.messages.toolRunner({tools})`. */
export interface AnthropicContextTool<Name extends string, Input> {
  type: "custom";
  name: Name;
  description: string;
  /** toolctx/tools' JSON Schema of the input. */
  input_schema: JsonSchema & { type: "object" };
  /** Resolves to the text the model reads; rejects with a toolctx error (the runner sends `Error: <message>`, `is_error`). */
  run(input: Input): Promise<string>;
  parse(input: unknown): Input;
}

/**
 * read_context, search_context and grep_context over `manager` (toolctx/tools' names,
 * descriptions and schemas), for the SDK's tool runner: a `clearToolUses` placeholder's
 * handle reads back with read_context. Throws UNSUPPORTED where toolctx/tools cannot be
 * loaded (a page without an import map for the package).
 */
export function contextTools(
  manager: ContextManager,
  options?: ContextToolOptions,
): EachContextTool<{ [N in ContextToolName]: AnthropicContextTool<N, ContextToolInputs[N]> }>;

export { clearToolUses, messageTokens } from "../clear-tool-uses.js";
export type { ClearToolUsesOptions, ClearToolUsesResult } from "../clear-tool-uses.js";
