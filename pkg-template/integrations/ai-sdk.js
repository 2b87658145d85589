// toolctx/ai-sdk: toolctx where the Vercel AI SDK (npm `ai`, an optional peer
// dependency) produces tool outputs.
//
// - withToolContext(tools, manager, options) wraps a tool set: every output is saved
//   with manager.saveContext (the tool-call id in the record's description, the step's
//   query and task), a small one goes to the model as the SDK would send it, a large one
//   is replaced (through the tool's toModelOutput) by a compact text: a toolctx://
//   pointer, the size, the description and a capped preview of its first and last lines.
// - contextTools(manager, options): read_context, search_context and grep_context, the
//   retrieval tools the model calls. Their outputs are capped and never saved, so no
//   evict/read loop can start.
// - windowPrepareStep(options): a prepareStep that runs the window optimiser over the
//   step's messages when the window fills up.

import { jsonSchema } from "ai";
import { ContextManager, estimateTokens, optimizeWindow, shouldCompact } from "toolctx";

/** The scheme of the pointers the model is given. */
export const POINTER_SCHEME = "toolctx://";

const DEFAULTS = {
  maxInlineChars: 16_000,
  previewLines: 5,
  previewChars: 1_500,
  wrapChars: 1_000,
  readLines: 100,
  maxReadLines: 400,
  maxReadChars: 16_000,
  searchResults: 5,
  maxSearchResults: 20,
  grepMatches: 30,
  maxGrepMatches: 100,
  maxGrepBytes: 16 * 1024 * 1024,
  maxPatternChars: 500,
};

const RETRIEVAL_TOOLS = ["read_context", "search_context", "grep_context"];

function toolctxError(code, message, cause) {
  const error = new Error(message, cause === undefined ? undefined : { cause });
  error.name = "ToolctxError";
  error.code = code;
  return error;
}

function settings(options) {
  const merged = { ...DEFAULTS };
  for (const [key, value] of Object.entries(options ?? {})) if (value !== undefined) merged[key] = value;
  for (const key of Object.keys(DEFAULTS)) {
    if (!Number.isInteger(merged[key]) || merged[key] < 1) {
      throw toolctxError("INVALID_ARGUMENT", `toolctx/ai-sdk: ${key} must be a positive integer, got ${merged[key]}`);
    }
  }
  return merged;
}

// ---- the text the model reads ----------------------------------------------------------

/** A record's result as the text read_context pages through: a string as is, anything else as indented JSON. */
export function recordText(result) {
  if (typeof result === "string") return result;
  if (result === undefined) return "";
  return JSON.stringify(result, null, 2) ?? "";
}

/** The text's display lines: its lines, each longer one cut into pieces of `width` characters. */
function displayLines(text, width) {
  const lines = [];
  for (const line of text.split("\n")) {
    if (line.length <= width) lines.push(line);
    else for (let i = 0; i < line.length; i += width) lines.push(line.slice(i, i + width));
  }
  return lines;
}

function clip(text, max) {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

const count = (n) => n.toLocaleString("en-US");

/** How many characters the model would receive for a tool result output. */
function modelChars(output) {
  switch (output?.type) {
    case "text":
      return output.value.length;
    case "json":
      return (JSON.stringify(output.value) ?? "").length;
    case "content":
      return output.value.reduce((n, part) => n + (part.type === "text" ? part.text.length : 0), 0);
    default:
      return 0; // errors and denials go through as they are
  }
}

/** The compact text that stands for a large output. */
function compactText({ pointer, toolName, toolCallId, description, text }, s) {
  const lines = displayLines(text, s.wrapChars);
  const head = lines.slice(0, s.previewLines);
  const tail = lines.length > 2 * s.previewLines ? lines.slice(-s.previewLines) : lines.slice(s.previewLines);
  const omitted = lines.length - head.length - tail.length;
  // Each preview line gets an equal share of the character budget.
  const share = Math.max(20, Math.floor(s.previewChars / Math.max(1, head.length + tail.length)));
  const preview = [...head.map((l) => clip(l, share))];
  if (omitted > 0) preview.push(`… ${count(omitted)} lines not shown …`);
  preview.push(...tail.map((l) => clip(l, share)));
  return [
    `[toolctx] The output of ${toolName} (tool call ${clip(toolCallId, 80)}) is ${count(text.length)} characters ` +
      `in ${count(lines.length)} lines; it was saved as ${pointer} instead of being shown in full.`,
    `Description: ${clip(description, 300)}`,
    `Preview (first and last lines):`,
    ...preview,
    `Read it with read_context({"pointer": "${pointer}", "offset": 0, "limit": ${s.readLines}}); ` +
      `find records with search_context, lines with grep_context.`,
  ].join("\n");
}

// ---- the record's description ----------------------------------------------------------

function argsSummary(input) {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return clip(JSON.stringify(input) ?? "", 120);
  const entries = Object.entries(input);
  const parts = entries.slice(0, 12).map(([k, v]) => `${k}=${clip(typeof v === "string" ? v : JSON.stringify(v) ?? "", 120)}`);
  if (entries.length > 12) parts.push(`… ${entries.length - 12} more`);
  return parts.join(", ");
}

/** The default description: the tool, its arguments and the tool-call id (how a record is found by call). */
function defaultDescribe({ toolName, input, toolCallId }) {
  const args = argsSummary(input);
  return `${toolName}${args ? `: ${args}` : ""} [tool call ${toolCallId}]`;
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

/**
 * Wraps each tool of `tools` that has an `execute` so its output is saved in `manager`,
 * and adds the retrieval tools (unless `retrievalTools: false`).
 */
export function withToolContext(tools, manager, options = {}) {
  if (!tools || typeof tools !== "object") throw toolctxError("INVALID_ARGUMENT", "toolctx/ai-sdk: tools must be a tool set (an object)");
  if (!manager || typeof manager.saveContext !== "function") {
    throw toolctxError("INVALID_ARGUMENT", "toolctx/ai-sdk: manager must be a toolctx ContextManager");
  }
  const s = settings(pick(options, Object.keys(DEFAULTS)));
  const retrieval = options.retrievalTools ?? true;
  if (retrieval) {
    for (const name of RETRIEVAL_TOOLS) {
      if (name in tools) throw toolctxError("INVALID_ARGUMENT", `toolctx/ai-sdk: the tool set already has a tool named ${name}`);
    }
  }
  const describe = options.describe ?? defaultDescribe;
  const saved = savedCalls(manager);
  const wrapped = {};
  for (const [toolName, tool] of Object.entries(tools)) {
    wrapped[toolName] = typeof tool?.execute === "function" ? wrapTool(toolName, tool, manager, options, s, describe, saved) : tool;
  }
  return retrieval ? { ...wrapped, ...contextTools(manager, options) } : wrapped;
}

function pick(object, keys) {
  return Object.fromEntries(keys.filter((k) => object[k] !== undefined).map((k) => [k, object[k]]));
}

// The calls a manager's wrappers saved lately: tool-call id → {filepath, pointer,
// description}, or `null` for a call whose save failed. Shared by every wrapper over the
// same manager, and by read_context. Older calls are found by their description.
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

function wrapTool(toolName, tool, manager, options, s, describe, saved) {
  const save = async (input, execution, output) => {
    const call = { toolName, input, toolCallId: execution.toolCallId, messages: execution.messages };
    const query = resolve(options.query, call) ?? lastUserText(execution.messages);
    const queryId = resolve(options.queryId, call) ?? (query ? ContextManager.hashQuery(query) : undefined);
    // The step number: each earlier step left one assistant message.
    const taskId = resolve(options.taskId, call) ?? 1 + (execution.messages ?? []).filter((m) => m.role === "assistant").length;
    const description = describe(call);
    const args = input !== null && typeof input === "object" && !Array.isArray(input) ? input : { input };
    try {
      const filepath = await manager.saveContext(toolName, args, output, { queryId, taskId, description, toolCallId: execution.toolCallId });
      const filename = filepath.slice(filepath.lastIndexOf("/") + 1);
      remember(saved, execution.toolCallId, { filepath, pointer: POINTER_SCHEME + filename, description });
    } catch (error) {
      remember(saved, execution.toolCallId, null);
      if (!options.onSaveError) {
        throw toolctxError(error?.code ?? "STORAGE", `toolctx could not save the output of ${toolName}: ${error?.message ?? error}`, error);
      }
      options.onSaveError(error, call); // the output then reaches the model as it would without toolctx
    }
  };

  const execute = (input, execution) => {
    const result = tool.execute(input, execution);
    if (result && typeof result[Symbol.asyncIterator] === "function") return saveLast(result, input, execution, save);
    return Promise.resolve(result).then(async (output) => {
      await save(input, execution, output);
      return output;
    });
  };

  const toModelOutput = async ({ toolCallId, input, output }) => {
    const own = tool.toModelOutput
      ? await tool.toModelOutput({ toolCallId, input, output })
      : typeof output === "string" ? { type: "text", value: output } : { type: "json", value: jsonValue(output) };
    if (modelChars(own) <= s.maxInlineChars) return own;
    let entry = saved.has(toolCallId) ? saved.get(toolCallId) : findSaved(manager, toolCallId);
    if (entry === undefined) {
      // An output this manager never saw (a conversation rebuilt elsewhere): save it now.
      await save(input, { toolCallId, messages: [] }, output);
      entry = saved.get(toolCallId);
    }
    if (!entry) return own; // its save failed and onSaveError chose to go on: the model gets it all
    // Evicted since (retention, clear()): a pointer to it would answer NOT_FOUND, so the model gets it all.
    if (!manager.getAllPointers().some((p) => p.filepath === entry.filepath)) return own;
    const text = recordText(output);
    return { type: "text", value: compactText({ ...entry, toolName, toolCallId, text }, s) };
  };

  return { ...tool, execute, toModelOutput };
}

/** What the SDK sends for a non-string output: the value through JSON, `null` for none. */
function jsonValue(output) {
  const text = output === undefined ? undefined : JSON.stringify(output);
  return text === undefined ? null : JSON.parse(text);
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
      return { filepath: p.filepath, pointer: POINTER_SCHEME + p.filename, description: p.toolDescription };
    }
  }
  return undefined;
}

// ---- the retrieval tools ---------------------------------------------------------------------

const READ_SCHEMA = {
  type: "object",
  properties: {
    pointer: { type: "string", description: "The toolctx:// pointer of a saved tool output." },
    offset: { type: "integer", minimum: 0, description: "Lines to skip (0 starts at the first line; grep_context's line N is offset N-1)." },
    limit: { type: "integer", minimum: 1, description: "Lines to return." },
  },
  required: ["pointer"],
  additionalProperties: false,
};

const SEARCH_SCHEMA = {
  type: "object",
  properties: {
    query: { type: "string", description: "What you are looking for, in words." },
    k: { type: "integer", minimum: 1, description: "How many records to list." },
  },
  required: ["query"],
  additionalProperties: false,
};

const GREP_SCHEMA = {
  type: "object",
  properties: {
    pattern: { type: "string", description: "A JavaScript regular expression, matched against each line." },
    pointer: { type: "string", description: "Only this record (a toolctx:// pointer); default: every saved output." },
    ignoreCase: { type: "boolean" },
    limit: { type: "integer", minimum: 1, description: "Most matching lines to return." },
  },
  required: ["pattern"],
  additionalProperties: false,
};

/** read_context, search_context and grep_context over `manager`'s records. */
export function contextTools(manager, options = {}) {
  if (!manager || typeof manager.loadContexts !== "function") {
    throw toolctxError("INVALID_ARGUMENT", "toolctx/ai-sdk: manager must be a toolctx ContextManager");
  }
  const s = settings(pick(options, Object.keys(DEFAULTS)));
  return {
    read_context: {
      description:
        "Read a saved tool output by its toolctx:// pointer, a page of lines at a time " +
        `(at most ${s.maxReadLines} lines and ${count(s.maxReadChars)} characters a call).`,
      inputSchema: jsonSchema(READ_SCHEMA),
      execute: (input) => readContext(manager, input, s),
    },
    search_context: {
      description: "Find saved tool outputs relevant to a query: their toolctx:// pointers and descriptions, best first.",
      inputSchema: jsonSchema(SEARCH_SCHEMA),
      execute: (input) => searchContext(manager, input, s),
    },
    grep_context: {
      description:
        "Find the lines of saved tool outputs that match a regular expression: pointer, line number and line " +
        `(at most ${s.maxGrepMatches} lines a call).`,
      inputSchema: jsonSchema(GREP_SCHEMA),
      execute: (input) => grepContext(manager, input, s),
    },
  };
}

/** The manager's pointer for a toolctx:// pointer, or a NOT_FOUND error the model can read. */
function resolvePointer(manager, pointer) {
  if (typeof pointer !== "string" || !pointer.startsWith(POINTER_SCHEME)) {
    throw toolctxError("INVALID_ARGUMENT", `not a toolctx pointer: ${clip(String(pointer), 200)} (expected ${POINTER_SCHEME}<name>)`);
  }
  const name = pointer.slice(POINTER_SCHEME.length);
  for (const entry of savedCalls(manager).values()) {
    if (entry?.pointer === pointer) return { filepath: entry.filepath, name };
  }
  // toolctx://{filename} is this module's form; toolctx://{filepath} is what clearToolUses and the MCP server write.
  const found = manager.getAllPointers().find((p) => p.filename === name || p.filepath === name);
  if (!found) {
    throw toolctxError("NOT_FOUND", `no saved tool output at ${clip(pointer, 200)}; search_context lists the pointers that exist`);
  }
  return { filepath: found.filepath, name };
}

async function loadText(manager, filepath, pointer) {
  const [record] = await manager.loadContexts([filepath]);
  if (!record) throw toolctxError("NOT_FOUND", `the record behind ${clip(pointer, 200)} can no longer be read`);
  return recordText(record.result);
}

async function readContext(manager, { pointer, offset = 0, limit }, s) {
  const { filepath } = resolvePointer(manager, pointer);
  const lines = displayLines(await loadText(manager, filepath, pointer), s.wrapChars);
  const start = Math.max(0, Math.trunc(offset));
  if (start >= lines.length && lines.length > 0) {
    throw toolctxError("INVALID_ARGUMENT", `offset ${start} is past the end of ${pointer} (${count(lines.length)} lines)`);
  }
  const want = Math.min(Math.max(1, Math.trunc(limit ?? s.readLines)), s.maxReadLines);
  const out = [];
  let chars = 0;
  for (let i = start; i < lines.length && out.length < want; i++) {
    if (out.length > 0 && chars + lines[i].length + 1 > s.maxReadChars) break;
    out.push(lines[i]);
    chars += lines[i].length + 1;
  }
  const end = start + out.length;
  const header = `${pointer}: lines ${count(lines.length ? start + 1 : 0)}–${count(end)} of ${count(lines.length)}`;
  const more = end < lines.length ? `\n[${count(lines.length - end)} more lines: read_context with offset=${end}]` : "";
  return `${header}\n${out.join("\n")}${more}`;
}

async function searchContext(manager, { query, k }, s) {
  const limit = Math.min(Math.max(1, Math.trunc(k ?? s.searchResults)), s.maxSearchResults);
  const found = await manager.selectRelevant(String(query), { limit, fallback: "none" });
  if (found.length === 0) return `No saved tool output matches "${clip(String(query), 200)}".`;
  return found
    .map(({ pointer: p, score }, i) =>
      `${i + 1}. ${POINTER_SCHEME}${p.filename} (${p.toolName}, ${count(p.size ?? 0)} bytes, score ${score.toFixed(2)}): ${clip(p.toolDescription, 300)}`)
    .join("\n");
}

async function grepContext(manager, { pattern, pointer, ignoreCase = false, limit }, s) {
  if (typeof pattern !== "string" || pattern.length === 0 || pattern.length > s.maxPatternChars) {
    throw toolctxError("INVALID_ARGUMENT", `pattern must be 1 to ${s.maxPatternChars} characters`);
  }
  let re;
  try {
    re = new RegExp(pattern, ignoreCase ? "i" : "");
  } catch (error) {
    throw toolctxError("INVALID_ARGUMENT", `invalid pattern: ${error.message}`, error);
  }
  const want = Math.min(Math.max(1, Math.trunc(limit ?? s.grepMatches)), s.maxGrepMatches);
  const targets = pointer
    ? [{ ...resolvePointer(manager, pointer), pointer }]
    : manager.getAllPointers().reverse().map((p) => ({ filepath: p.filepath, pointer: POINTER_SCHEME + p.filename }));
  const hits = [];
  let scanned = 0;
  let bytes = 0;
  let stopped = "";
  outer: for (const target of targets) {
    if (bytes >= s.maxGrepBytes) {
      stopped = `stopped after ${count(bytes)} characters (${scanned} of ${targets.length} records searched)`;
      break;
    }
    const text = await loadText(manager, target.filepath, target.pointer).catch((error) => {
      if (pointer) throw error;
      return ""; // a record gone since it was listed
    });
    scanned++;
    bytes += text.length;
    const lines = displayLines(text, s.wrapChars);
    for (let i = 0; i < lines.length; i++) {
      if (!re.test(lines[i])) continue;
      if (hits.length === want) {
        stopped = `more matches not shown; narrow the pattern or pass a pointer`;
        break outer;
      }
      hits.push(`${target.pointer}:${i + 1}: ${clip(lines[i].trim(), 300)}`);
    }
  }
  const summary = hits.length ? hits.join("\n") : `No line matches /${clip(pattern, 200)}/.`;
  return stopped ? `${summary}\n[${stopped}]` : summary;
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
