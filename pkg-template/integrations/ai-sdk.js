// toolctx/ai-sdk: toolctx where the Vercel AI SDK (npm `ai` 7, an optional peer
// dependency) produces tool outputs.
//
// - withToolContext(tools, manager, options) wraps a tool set: every output is saved
//   with manager.saveContext (the tool-call id in the record's description, the step's
//   query and task), a small one goes to the model as the SDK would send it, a large one
//   is replaced (through the tool's toModelOutput) by a compact text: the record's handle
//   (ctx:…), its size, its description and a capped preview of its first and last lines,
//   numbered as read_context numbers them. With `resolveHandles`, the tools named take a
//   handle where the model would re-emit a whole output. `usageOf(toolSet)` tells what
//   was kept out of the prompt.
// - contextTools(manager, options): read_context, search_context and grep_context, the
//   tools of toolctx/tools (one description, one schema, one wording in every framework)
//   as AI SDK tools. Their outputs are capped and never saved, so no evict/read loop can
//   start.
// - windowPrepareStep(options): a prepareStep that runs the window optimiser over the
//   step's messages when the window fills up.

import { jsonSchema, tool } from "ai";
import { ContextManager, estimateTokens, optimizeWindow, shouldCompact } from "toolctx";
import { toolctxError } from "../errors.js";
import { LIMITS, lineView, sumUsage } from "../tools.js";
import {
  checkManager,
  compactText,
  countAddedDefinitions,
  countedDefinitions,
  errorText,
  isForTheModel,
  lenientJson,
  modelError,
  previewSettings,
  resolveAsText,
  resolvingNames,
  retrievalOption,
  TAKES_HANDLES,
  usageOption,
} from "./offload.js";

/** The scheme of the older pointers (`toolctx://…`); the tools still take them for a handle. */
export { POINTER_SCHEME } from "../tools.js";

const MODULE = "toolctx/ai-sdk";

/** What toolctx/tools takes of the options: its limits (it checks them), and the tally. */
function toolOptions(options, usage) {
  const out = { usage };
  for (const key of Object.keys(LIMITS)) if (options[key] !== undefined) out[key] = options[key];
  return out;
}


// ---- the tools the model calls -----------------------------------------------------------

/**
 * read_context, search_context and grep_context (toolctx/tools) as an AI SDK tool set.
 * `options`: toolctx/tools' limits, and `usage` (toolctx/tools' createUsage) to count what
 * they read back.
 */
export function contextTools(manager, options = {}) {
  const definitions = countedDefinitions(manager, toolOptions(options, options.usage));
  return Object.fromEntries(
    definitions.map((d) => [
      d.name,
      tool({ description: d.description, inputSchema: jsonSchema(d.inputSchema), execute: (input) => answer(d, olderInput(d.name, input)) }),
    ]),
  );
}

/**
 * A retrieval tool's text; a failed call throws, so the SDK sends the text as an
 * `error-text` output. The SDK sends a thrown Error as its toString(): the error prints
 * as its message alone, the text every integration sends.
 */
async function answer(definition, input) {
  const { text, error } = await definition.run(input);
  if (!error) return text;
  throw printedAsMessage(modelError(text, error));
}

/** `error`, whose toString() (what the SDK sends the model) is its message alone. */
function printedAsMessage(error) {
  if (error instanceof Error) Object.defineProperty(error, "toString", { value: () => error.message, configurable: true, writable: true });
  return error;
}

/**
 * An input written for this module's earlier tools, which conversations saved with them
 * still hold, as the tools' input: `pointer` named the record (now `handle`), and
 * read_context's `offset` counted the lines to skip (now the first line); `k` was
 * search_context's `limit`. Any other input is passed as it is.
 */
function olderInput(name, input) {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return input;
  if (name === "search_context") {
    const { k, ...rest } = input;
    return k === undefined || rest.limit !== undefined ? rest : { ...rest, limit: k };
  }
  const { pointer, ...rest } = input;
  if (pointer === undefined || rest.handle !== undefined) return rest;
  const skipped = name === "read_context" && Number.isInteger(rest.offset) ? { offset: rest.offset + 1 } : {};
  return { ...rest, handle: pointer, ...skipped };
}

/**
 * @deprecated A record's result as indented JSON (a string as is): what read_context paged
 * through before it read the line view (toolctx/tools' lineView). Kept for callers.
 */
export function recordText(result) {
  if (typeof result === "string") return result;
  if (result === undefined) return "";
  return JSON.stringify(result, null, 2) ?? "";
}

// ---- the text the model reads ----------------------------------------------------------

/** The text the model would receive for a tool result output ("" for errors and denials, which go through as they are). */
function modelText(output) {
  switch (output?.type) {
    case "text":
      return output.value;
    case "json":
      return JSON.stringify(output.value) ?? "";
    case "content":
      return output.value.filter((part) => part.type === "text").map((part) => part.text).join("");
    default:
      return "";
  }
}

/**
 * What the SDK sends for an output without a toModelOutput of its own: a string as text,
 * anything else through JSON (`null` for none). An output JSON cannot hold (a BigInt, a
 * cycle) goes as text the model can read: BigInts as their digits, a cycle as
 * "[Circular]"; one that cannot be written at all (a getter that throws) as the tool's
 * error. Never a throw: the run goes on.
 */
function defaultModelOutput(toolName, output) {
  if (typeof output === "string") return { type: "text", value: output };
  try {
    return { type: "json", value: jsonValue(output) };
  } catch {
    // not JSON as it is: written leniently below
  }
  try {
    return { type: "text", value: lenientJson(output) };
  } catch (error) {
    return { type: "error-text", value: `toolctx: the output of ${toolName} cannot be sent to the model: ${error?.message ?? error}` };
  }
}

/** What the SDK sends for a non-string output: the value through JSON, `null` for none. */
function jsonValue(output) {
  const text = output === undefined ? undefined : JSON.stringify(output);
  return text === undefined ? null : JSON.parse(text);
}

// ---- the step's query and task ------------------------------------------------------------

function messageText(message) {
  if (typeof message.content === "string") return message.content;
  if (!Array.isArray(message.content)) return "";
  return message.content.filter((p) => p.type === "text").map((p) => p.text).join("\n");
}

/** The text of the last user message among the messages that led to the call. */
function lastUserText(messages) {
  for (let i = (messages?.length ?? 0) - 1; i >= 0; i--) {
    if (messages[i].role === "user") return messageText(messages[i]);
  }
  return undefined;
}

function resolve(value, call) {
  return typeof value === "function" ? value(call) : value;
}

// ---- the wrapper ----------------------------------------------------------------------------

// The tally of each tool set withToolContext returned (usageOf reads it).
const usageBySet = new WeakMap();

/**
 * Wraps each tool of `tools` that has an `execute` so its output is saved in `manager`,
 * and adds the tools of `contextTools` (unless `retrievalTools: false`).
 */
export function withToolContext(tools, manager, options = {}) {
  if (!tools || typeof tools !== "object") throw toolctxError("INVALID_ARGUMENT", `${MODULE}: tools must be a tool set (an object)`);
  checkManager(manager, MODULE);
  const s = previewSettings(options, MODULE);
  const retrieval = retrievalOption(options, Object.keys(tools), MODULE);
  const runnable = Object.keys(tools).filter((name) => typeof tools[name]?.execute === "function");
  const takers = resolvingNames(options.resolveHandles, runnable, MODULE);
  const usage = usageOption(options, MODULE);
  const context = { manager, options, s, usage, takers, describe: options.describe, saved: savedCalls(manager) };
  const wrapped = {};
  for (const [toolName, t] of Object.entries(tools)) {
    wrapped[toolName] = typeof t?.execute === "function" ? wrapTool(toolName, t, context) : t;
  }
  const set = retrieval ? { ...wrapped, ...contextTools(manager, { ...toolOptions(options), usage }) } : wrapped;
  // What the wrapper adds to every model call: the retrieval tools, and a sentence in each taker's description.
  if (retrieval) countAddedDefinitions(manager, toolOptions(options), usage);
  usage.definitions(takers.map(() => ` ${TAKES_HANDLES}`));
  usageBySet.set(set, usage);
  return set;
}

/**
 * What the tool set `withToolContext` returned kept out of the prompt so far, read back
 * and added (toolctx/tools' usage snapshot). `options.modelCalls`: how many model calls
 * went out with the set (`result.steps.length`), each carrying the added definitions.
 */
export function usageOf(toolSet, options = {}) {
  const usage = usageBySet.get(toolSet);
  if (!usage) throw toolctxError("INVALID_ARGUMENT", `${MODULE}: usageOf takes a tool set that withToolContext returned`);
  return sumUsage([usage.snapshot()], options?.modelCalls);
}

// The calls a manager's wrappers saved lately: tool-call id → {filepath, description}, or
// `null` for a call whose save failed. Shared by every wrapper over the same manager.
// Older calls are found by their record's toolCallId (findSaved).
const REMEMBERED_CALLS = 10_000;
const savedByManager = new WeakMap();
function savedCalls(manager) {
  let calls = savedByManager.get(manager);
  if (!calls) savedByManager.set(manager, (calls = new Map()));
  return calls;
}

function remember(calls, toolCallId, entry) {
  calls.delete(toolCallId);
  calls.set(toolCallId, entry);
  if (calls.size > REMEMBERED_CALLS) calls.delete(calls.keys().next().value);
}

const isAsyncIterable = (value) => value !== null && typeof value?.[Symbol.asyncIterator] === "function";
const isAsyncGeneratorFunction = (fn) => Object.prototype.toString.call(fn) === "[object AsyncGeneratorFunction]";

function wrapTool(toolName, original, { manager, options, s, usage, takers, describe, saved }) {
  const save = async (input, execution, output) => {
    const call = { toolName, input, toolCallId: execution.toolCallId, messages: execution.messages };
    const query = resolve(options.query, call) ?? lastUserText(execution.messages);
    const queryId = resolve(options.queryId, call) ?? (query ? ContextManager.hashQuery(query) : undefined);
    // The step number: each earlier step left one assistant message.
    const taskId = resolve(options.taskId, call) ?? 1 + (execution.messages ?? []).filter((m) => m.role === "assistant").length;
    const description = describe?.(call);
    const args = input !== null && typeof input === "object" && !Array.isArray(input) ? input : { input };
    try {
      const saveOptions = { queryId, taskId, toolCallId: execution.toolCallId, ...(description !== undefined && { description }) };
      const filepath = await manager.saveContext(toolName, args, output, saveOptions);
      remember(saved, execution.toolCallId, { filepath });
    } catch (error) {
      remember(saved, execution.toolCallId, null);
      if (!options.onSaveError) {
        throw toolctxError(error?.code ?? "STORAGE", `toolctx could not save the output of ${toolName}: ${error?.message ?? error}`, { cause: error });
      }
      options.onSaveError(error, call); // the output then reaches the model as it would without toolctx
    }
  };

  /** The tool run on `args`; its output (a streaming tool's last value) saved with the input the model gave. */
  const run = (args, input, execution) => {
    const result = original.execute(args, execution);
    if (isAsyncIterable(result)) return saveLast(result, input, execution, save);
    return Promise.resolve(result).then(async (output) => {
      await save(input, execution, output);
      return output;
    });
  };

  const takesHandles = takers.includes(toolName);
  let execute = (input, execution) => run(input, input, execution);
  if (takesHandles && isAsyncGeneratorFunction(original.execute)) {
    execute = async function* (input, execution) {
      yield* run(await resolved(toolName, input, manager), input, execution);
    };
  } else if (takesHandles) {
    // Resolving is asynchronous, so a tool that is not an async generator function gives
    // its output at once: should it return an async iterable, its last value.
    execute = async (input, execution) => lastValue(await run(await resolved(toolName, input, manager), input, execution));
  }

  // toModelOutput runs once per tool result, and again whenever convertToModelMessages rebuilds the conversation.
  const counted = new Map();
  const toModelOutput = async ({ toolCallId, input, output }) => {
    const own = original.toModelOutput ? await original.toModelOutput({ toolCallId, input, output }) : defaultModelOutput(toolName, output);
    const text = modelText(own);
    const chars = text.length;
    if (chars <= s.maxInlineChars) return own;
    let entry = saved.has(toolCallId) ? saved.get(toolCallId) : findSaved(manager, toolCallId);
    if (entry === undefined) {
      // An output this manager never saw (a conversation rebuilt elsewhere): save it now.
      await save(input, { toolCallId, messages: [] }, output);
      entry = saved.get(toolCallId);
    }
    if (!entry) return own; // its save failed and onSaveError chose to go on: the model gets it all
    // Evicted since (retention, clear()): a handle to it would answer NOT_FOUND, so the model gets it all.
    const pointer = manager.getAllPointers().find((p) => p.filepath === entry.filepath);
    if (!pointer) return own;
    const value = compactText({ handle: pointer.handle, toolName, chars, lines: lineView(output, manager), takers, description: pointer.toolDescription }, s);
    if (!counted.has(toolCallId)) {
      remember(counted, toolCallId, true);
      usage.offloaded(text, value);
    }
    return { type: "text", value };
  };

  const description = takesHandles ? [original.description, TAKES_HANDLES].filter(Boolean).join(" ") : original.description;
  return { ...original, ...(description !== undefined && { description }), execute, toModelOutput };
}

/** `input` with its handles resolved (as text: the SDK has validated it); a handle that names nothing is the tool's error, worded as the retrieval tools word theirs. */
async function resolved(toolName, input, manager) {
  try {
    return await resolveAsText(input, manager);
  } catch (error) {
    throw isForTheModel(error) ? printedAsMessage(modelError(errorText(toolName, error), error)) : error;
  }
}

/** A streaming tool: every value goes through; the last one (the output) is saved. */
async function* saveLast(iterable, input, execution, save) {
  let last;
  let any = false;
  for await (const value of iterable) {
    last = value;
    any = true;
    yield value;
  }
  if (any) await save(input, execution, last);
}

async function lastValue(value) {
  if (!isAsyncIterable(value)) return value;
  let last;
  for await (const v of value) last = v;
  return last;
}

/**
 * A call saved by another wrapper or process (a resumed session, say): the pointer whose
 * toolCallId is the call's, or (a record saved before toolCallId was stored) whose
 * description carries the tool-call id.
 */
function findSaved(manager, toolCallId) {
  const mark = `[tool call ${toolCallId}]`;
  const pointers = manager.getAllPointers();
  for (let i = pointers.length - 1; i >= 0; i--) { // the newest, should an id come back
    const p = pointers[i];
    if (p.toolCallId === toolCallId || (p.toolCallId === undefined && p.toolDescription.endsWith(mark))) {
      return { filepath: p.filepath };
    }
  }
  return undefined;
}

// ---- the window optimiser before each step ----------------------------------------------------

/** A ModelMessage tool output as the text a tool_result block holds. */
function outputText(output) {
  switch (output?.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value) ?? "";
    case "content":
      return output.value.filter((p) => p.type === "text").map((p) => p.text).join("\n");
    case "execution-denied":
      return output.reason ?? "execution denied";
    default:
      return "";
  }
}

/**
 * The AI SDK's messages as the optimiser's (Anthropic-style) messages: system messages
 * are left out (never edited), tool messages become user messages of tool_result blocks,
 * tool calls tool_use blocks; any other part is an opaque block, kept as it is.
 * `index[i]` is the position in `messages` of window message `i`.
 */
export function toWindowMessages(messages) {
  const window = [];
  const index = [];
  messages.forEach((message, i) => {
    if (message.role === "system") return;
    index.push(i);
    const role = message.role === "assistant" ? "assistant" : "user";
    if (typeof message.content === "string") {
      window.push({ role, content: message.content });
      return;
    }
    const content = message.content.map((part) => {
      switch (part.type) {
        case "text":
          return { type: "text", text: part.text };
        case "tool-call":
          return { type: "tool_use", id: part.toolCallId, name: part.toolName, input: part.input ?? {} };
        case "tool-result":
          return {
            type: "tool_result",
            tool_use_id: part.toolCallId,
            content: outputText(part.output),
            is_error: part.output?.type === "error-text" || part.output?.type === "error-json",
          };
        default:
          return { type: `ai-sdk:${part.type}` };
      }
    });
    window.push({ role, content });
  });
  return { window, index };
}

/** Applies the optimiser's edits and truncation (indices into `toWindowMessages`) to the AI SDK's messages. */
export function applyWindowResult(messages, { index }, { edits, truncated }) {
  const next = messages.map((m) => (typeof m.content === "string" ? { ...m } : { ...m, content: [...m.content] }));
  const notices = new Map(); // message position → notice texts for tool messages (they cannot hold text)
  for (const edit of edits) {
    const at = index[edit.message];
    const message = next[at];
    if (typeof message.content === "string") {
      if (edit.block === 0 && edit.kind !== "truncationNotice") message.content = edit.content;
      else message.content = [{ type: "text", text: message.content }, { type: "text", text: edit.content }];
      continue;
    }
    const part = message.content[edit.block];
    if (part === undefined) { // an appended notice
      if (message.role === "tool") notices.set(at, [...(notices.get(at) ?? []), edit.content]);
      else message.content.push({ type: "text", text: edit.content });
    } else if (part.type === "tool-result") {
      message.content[edit.block] = { ...part, output: { type: "text", value: edit.content } };
    } else if (part.type === "tool-call") {
      message.content[edit.block] = { ...part, input: { ...part.input, content: edit.content } };
    } else if (part.type === "text") {
      message.content[edit.block] = { ...part, text: edit.content };
    }
  }
  const removed = truncated ? new Set(index.slice(truncated[0], truncated[1] + 1)) : new Set();
  const out = [];
  next.forEach((message, i) => {
    if (removed.has(i)) return;
    out.push(message);
    for (const text of notices.get(i) ?? []) out.push({ role: "user", content: [{ type: "text", text }] });
  });
  return out;
}

/**
 * A `prepareStep` that runs `optimizeWindow` over the step's messages when the window
 * fills up: when the last step's usage (or, before the first, the estimated size of the
 * messages) reaches `contextWindow` minus the reserve for the answer, as `shouldCompact`
 * decides; with `always: true`, before every step. The SDK carries the returned messages
 * forward to later steps.
 */
export function windowPrepareStep(options = {}) {
  const { contextWindow, reserve, always = false, onOptimize, ...windowOptions } = options;
  if (!always && !(Number.isFinite(contextWindow) && contextWindow > 0)) {
    throw toolctxError("INVALID_ARGUMENT", "toolctx/ai-sdk: windowPrepareStep needs a contextWindow (tokens) or always: true");
  }
  if ("history" in windowOptions) {
    throw toolctxError("INVALID_ARGUMENT", "toolctx/ai-sdk: windowPrepareStep takes no history: the SDK carries the optimised messages forward");
  }
  return ({ messages, steps }) => {
    const converted = toWindowMessages(messages);
    if (!always) {
      const usage = steps?.at(-1)?.usage;
      const last = usage?.inputTokens != null
        ? { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens ?? 0 }
        : { inputTokens: estimateTokens(converted.window) };
      if (!shouldCompact(last, contextWindow, reserve === undefined ? undefined : { reserve })) return undefined;
    }
    const result = optimizeWindow(converted.window, windowOptions);
    onOptimize?.(result);
    if (result.edits.length === 0 && !result.truncated) return undefined;
    return { messages: applyWindowResult(messages, converted, result) };
  };
}
