// clearToolUses: tool-result clearing after Anthropic's context editing
// (`clear_tool_uses_20250919`), done on the client over any Anthropic-style message list
// (the window optimiser's shape: `{role, content}`, content a string or text / tool_use /
// tool_result blocks), so it works for any provider. Past a trigger, old tool results
// become a short placeholder; with a `manager`, each cleared result is saved first and
// the placeholder names its handle (`ctx:…`), which read_context reads back (toolctx/tools,
// and every integration's tools), so nothing is lost. Plain JS: no wasm call, no I/O but
// the manager's saves, no import but the errors module (scripts/bundle-node.mjs inlines
// it in pkg/, so the file stays one module). The package's entries re-export it; so does
// toolctx/anthropic.

import { toolctxError } from "./errors.js";

const encoder = new TextEncoder();

const bytesOf = (text) => encoder.encode(text).length;
const json = (value) => JSON.stringify(value ?? null);

function blockBytes(block) {
  if (typeof block === "string") return bytesOf(block);
  switch (block?.type) {
    case "text":
      return bytesOf(block.text ?? "");
    case "tool_use":
      return bytesOf(json(block.input));
    case "tool_result":
      return contentBytes(block.content);
    default:
      return bytesOf(json(block));
  }
}

function contentBytes(content) {
  if (content === undefined || content === null) return 0;
  if (typeof content === "string") return bytesOf(content);
  if (Array.isArray(content)) return content.reduce((n, b) => n + (b?.type === "text" ? bytesOf(b.text ?? "") : bytesOf(json(b))), 0);
  return bytesOf(json(content));
}

/** Estimated input tokens of a message list: 4 UTF-8 bytes a token, as `estimateTokens` counts them. */
export function messageTokens(messages) {
  let bytes = 0;
  for (const m of messages) bytes += typeof m.content === "string" ? bytesOf(m.content) : (m.content ?? []).reduce((n, b) => n + blockBytes(b), 0);
  return Math.ceil(bytes / 4);
}

/** `5`, `{type: "input_tokens", value: 5}` or `{type: "tool_uses", value: 5}`, as `{type, value}`. */
function threshold(value, fallback, types, name) {
  if (value === undefined || value === null) return fallback;
  const t = typeof value === "number" ? { type: types[0], value } : value;
  if (!types.includes(t?.type) || !Number.isFinite(t.value) || t.value < 0) {
    throw toolctxError("INVALID_ARGUMENT", `clearToolUses: ${name} must be a number or {type: ${types.map((x) => `"${x}"`).join(" | ")}, value}`);
  }
  return t;
}

const CLEARED_PREFIX = "[toolctx: tool result cleared";
// How toolctx/ai-sdk's compact text starts: only such a result is already saved.
const SAVED_PREFIX = "[toolctx] The output of";
// What such a text names the record by: its handle, or (written before handles) a toolctx:// pointer.
const SAVED_AS = /\bctx:[a-z2-7]{10,16}\b|toolctx:\/\/[^\s\]"'<>)]+/i;
const POINTER_SCHEME = "toolctx://";
const savedByManager = new WeakMap(); // manager → Map<tool_use_id, filepath>

/**
 * The text the model reads for a tool's content: a string, or its text blocks one after
 * another; undefined when other blocks (images, documents) are in it. (toolctx/anthropic's
 * withToolContext reads its tools' outputs so too; not part of the API.)
 */
export function contentText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content) || !content.every((b) => b?.type === "text" && typeof b.text === "string")) return undefined;
  return content.map((b) => b.text).join("");
}

/**
 * What is saved of a tool_result's content: a text that is a JSON object or array (a tool
 * that returned JSON.stringify(value)) as that value, so read_context, grep_context, `#L`
 * and `#$` see a field or an element per line, not one long line; any other content as it is.
 * (toolctx/anthropic's withToolContext saves its tools' outputs the same way; not part of the API.)
 */
export function savedValue(content) {
  const text = contentText(content);
  const start = text?.trimStart()[0];
  if (start !== "{" && start !== "[") return content;
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === "object" ? value : content;
  } catch {
    return content;
  }
}

function resultText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.filter((b) => b?.type === "text").map((b) => b.text).join("\n");
  return "";
}

/**
 * Clears old tool results from an Anthropic-style message list, as the API's
 * `clear_tool_uses_20250919` context edit does: once the input passes `trigger`, every
 * tool use but the `keep` most recent (and those of `excludeTools`) has its result
 * replaced by a placeholder (and its input emptied, with `clearToolInputs`), unless that
 * frees fewer than `clearAtLeast` tokens. The input is never modified.
 */
export async function clearToolUses(messages, options = {}) {
  if (!Array.isArray(messages)) throw toolctxError("INVALID_ARGUMENT", "clearToolUses: messages must be an array");
  const trigger = threshold(options.trigger, { type: "input_tokens", value: 100_000 }, ["input_tokens", "tool_uses"], "trigger");
  const keep = threshold(options.keep, { type: "tool_uses", value: 3 }, ["tool_uses"], "keep").value;
  const clearAtLeast = threshold(options.clearAtLeast, { type: "input_tokens", value: 0 }, ["input_tokens"], "clearAtLeast").value;
  const exclude = new Set(options.excludeTools ?? []);
  const clearInputs = options.clearToolInputs ?? false;
  const clearsInput = (name) => (Array.isArray(clearInputs) ? clearInputs.includes(name) : clearInputs === true);
  const { manager } = options;

  // Every tool use, in order, with where its result is.
  const uses = [];
  const byId = new Map();
  messages.forEach((m, mi) => {
    if (!Array.isArray(m?.content)) return;
    m.content.forEach((b, bi) => {
      if (b?.type === "tool_use") {
        const use = { id: b.id, name: b.name, input: b.input, use: [mi, bi], result: undefined };
        uses.push(use);
        byId.set(b.id, use);
      } else if (b?.type === "tool_result" && byId.has(b.tool_use_id)) {
        byId.get(b.tool_use_id).result = [mi, bi];
      }
    });
  });
  const blockAt = ([mi, bi]) => messages[mi].content[bi];
  const unchanged = { messages, clearedInputTokens: 0, clearedToolUses: 0 };

  const tokensBefore = options.inputTokens ?? messageTokens(messages);
  // The API clears once the prompt exceeds the trigger.
  if (trigger.type === "input_tokens" ? tokensBefore <= trigger.value : uses.length <= trigger.value) return unchanged;

  const candidates = uses
    .slice(0, Math.max(0, uses.length - keep))
    .filter((u) => u.result && !exclude.has(u.name) && !resultText(blockAt(u.result).content).startsWith(CLEARED_PREFIX));
  if (candidates.length === 0) return unchanged;

  // The edited copy: only the messages that change are copied.
  const edited = (placeholderOf) => {
    const next = messages.slice();
    const copied = new Set();
    const edit = ([mi, bi], fn) => {
      if (!copied.has(mi)) {
        next[mi] = { ...messages[mi], content: messages[mi].content.slice() };
        copied.add(mi);
      }
      next[mi].content[bi] = fn(next[mi].content[bi]);
    };
    for (const u of candidates) {
      edit(u.result, (b) => ({ ...b, content: placeholderOf(u) }));
      if (clearsInput(u.name)) edit(u.use, (b) => ({ ...b, input: {} }));
    }
    return next;
  };
  const placeholder = (u, handle) => {
    const tokens = Math.ceil(contentBytes(blockAt(u.result).content) / 4);
    const where = handle ? `; read_context {"handle": "${handle}"} reads it back` : "";
    return `${CLEARED_PREFIX} to save context (${u.name}, ~${tokens} tokens)${where}]`;
  };
  const before = messageTokens(messages);
  // Too little to clear: nothing changes, nothing is saved.
  if (before - messageTokens(edited((u) => placeholder(u))) < Math.max(1, clearAtLeast)) return unchanged;

  // Saving first: a result is cleared only once it is retrievable.
  const saved = manager ? (savedByManager.get(manager) ?? new Map()) : undefined;
  if (manager) savedByManager.set(manager, saved);
  const pointers = manager ? manager.getAllPointers() : [];
  const present = manager ? new Set(pointers.map((p) => p.filepath)) : undefined;
  const byCallId = new Map(pointers.filter((p) => typeof p.toolCallId === "string").map((p) => [p.toolCallId, p.filepath]));
  // Only saves whose record still exists are remembered (evicted since: retention, clear()),
  // so over a long run this never outgrows the manager's records plus one call's saves.
  for (const [id, filepath] of saved ?? []) if (!present.has(filepath)) saved.delete(id);
  const names = new Map(); // tool_use id → what the placeholder names: a handle, a filepath to find the handle of, or an older pointer
  for (const u of candidates) {
    const result = blockAt(u.result);
    // A handle or pointer merely quoted by a result (a README, code using toolctx) is no sign it was saved.
    const text = resultText(result.content);
    const savedAs = text.startsWith(SAVED_PREFIX) ? SAVED_AS.exec(text)?.[0] : undefined;
    if (savedAs) {
      names.set(u.id, savedAs);
    } else if (manager) {
      // Evicted since: saved again, so the placeholder never names a record that is gone.
      // Saved already: by this function earlier, or by a wrapper (toolctx/anthropic's withToolContext) under the call's id.
      let filepath = saved.get(u.id) ?? byCallId.get(u.id);
      if (filepath === undefined) {
        const args = u.input && typeof u.input === "object" && !Array.isArray(u.input) ? u.input : { input: u.input };
        filepath = await manager.saveContext(u.name, args, savedValue(result.content), { taskId: options.taskId, queryId: options.queryId, toolCallId: typeof u.id === "string" ? u.id : undefined });
      }
      saved.set(u.id, filepath);
      names.set(u.id, { filepath });
    }
  }
  const handles = manager ? handlesOf(manager, names) : names;
  const next = edited((u) => placeholder(u, handles.get(u.id)));
  const cleared = before - messageTokens(next);
  if (cleared < Math.max(1, clearAtLeast)) return unchanged;
  return { messages: next, clearedInputTokens: cleared, clearedToolUses: candidates.length };
}

/**
 * What each placeholder names: the handle of the record saved (or, for an older
 * `toolctx://` pointer another wrapper wrote, of the record it names, when the manager has
 * it; the pointer itself otherwise, which read_context also reads).
 */
function handlesOf(manager, names) {
  const pointers = manager.getAllPointers();
  const byFilepath = new Map(pointers.map((p) => [p.filepath, p.handle]));
  const byName = new Map(pointers.map((p) => [p.filename, p.handle]));
  const out = new Map();
  for (const [id, name] of names) {
    if (typeof name === "object") out.set(id, byFilepath.get(name.filepath));
    else if (!name.startsWith(POINTER_SCHEME)) out.set(id, name);
    else {
      const rest = name.slice(POINTER_SCHEME.length);
      out.set(id, byFilepath.get(rest) ?? byName.get(rest) ?? name);
    }
  }
  return out;
}

/** How many saves `clearToolUses` remembers for `manager` (for tests; not part of the API). */
export function savedCountForTests(manager) {
  return savedByManager.get(manager)?.size ?? 0;
}
