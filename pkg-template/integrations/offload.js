// What every framework wrapper of toolctx shares (toolctx/ai-sdk, toolctx/openai-agents,
// toolctx/langchain; internal, not an entry point of the package): saving a tool's output,
// the compact text a large output becomes for the model (one wording everywhere), the
// options they take alike, and output JSON cannot hold.
//
// A wrapper saves every output with manager.saveContext. An output the model would read
// in more than `maxInlineChars` characters reaches it as the compact text: the record's
// handle (ctx:…), its size, a numbered preview of its first and last lines, and how to
// read it back with the tools of toolctx/tools. Tools named in `resolveHandles` take a
// handle where the model would re-emit a whole output.

import { toolctxError } from "../errors.js";
import { contextTools as toolDefinitions, createUsage, errorText, findRecord, lineView, resolveHandles, sumUsage, TOOL_NAMES } from "../tools.js";

export { errorText };

/** The sizes of the compact text, in characters or lines; each wrapper option may change them. */
export const PREVIEW_DEFAULTS = Object.freeze({
  /** An output the model would read in more characters than this is replaced by the compact text. */
  maxInlineChars: 16_000,
  /** Lines of the preview from the start, and again from the end. */
  previewLines: 5,
  /** Characters of the whole preview. */
  previewChars: 1_500,
});

/** However many lines share the preview, each keeps at least this many characters. */
const MIN_PREVIEW_LINE_CHARS = 40;
/** At most this many tool names are listed in the compact text as taking a handle. */
const MAX_LISTED_TAKERS = 10;
/** How much of a record's description the compact text quotes. */
const QUOTED_DESCRIPTION = 300;

/** What a tool that resolves handles tells the model, after its own description. */
export const TAKES_HANDLES =
  'Any string argument may be the handle of a saved tool output ("ctx:…"; "ctx:…#L10-40" for those lines, ' +
  '"ctx:…#$.items[0:5]" for part of a JSON value): the tool receives that value instead.';

/** The errors worded for the model: toolctx/tools' and resolveHandles' answers to a call it got wrong (a handle no record has, a bad slice or pattern). Others (storage, a closed manager, a trap) are the application's. */
const MODEL_ERRORS = ["NOT_FOUND", "INVALID_ARGUMENT"];

export function isForTheModel(error) {
  return error?.name === "ToolctxError" && MODEL_ERRORS.includes(error.code) && typeof error.message === "string";
}

/** `manager`, checked to be a toolctx ContextManager. */
export function checkManager(manager, module) {
  if (!manager || typeof manager.saveContext !== "function" || typeof manager.getAllPointers !== "function") {
    throw toolctxError("INVALID_ARGUMENT", `${module}: manager must be a toolctx ContextManager`);
  }
}

const count = (n) => n.toLocaleString("en-US");
const clip = (text, max) => (text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`);
const valueOf = (option, call) => (typeof option === "function" ? option(call) : option);

/** The compact-text sizes of `options` (PREVIEW_DEFAULTS' keys), checked. */
export function previewSettings(options, module) {
  const s = { ...PREVIEW_DEFAULTS };
  for (const key of Object.keys(PREVIEW_DEFAULTS)) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1) throw toolctxError("INVALID_ARGUMENT", `${module}: ${key} must be a positive integer, got ${value}`);
    s[key] = value;
  }
  return s;
}

/** The names of the tools whose input goes through resolveHandles: `true` all of `names`, an array those (each one of `names`). */
export function resolvingNames(option, names, module) {
  if (option === undefined || option === false) return [];
  if (option === true) return [...names];
  if (!Array.isArray(option) || option.some((name) => typeof name !== "string")) {
    throw toolctxError("INVALID_ARGUMENT", `${module}: resolveHandles must be true, false or a list of tool names`);
  }
  const missing = option.filter((name) => !names.includes(name));
  if (missing.length > 0) {
    throw toolctxError("INVALID_ARGUMENT", `${module}: resolveHandles names ${missing.map((n) => JSON.stringify(n)).join(", ")}, which is not one of the tools it wraps`);
  }
  return [...new Set(option)];
}

/**
 * The tally a wrapper counts in: `options.usage` (checked), else a new one counting with
 * `options.tokenizer` (text → tokens; 4 characters a token without one).
 */
export function usageOption(options, module) {
  if (options.usage !== undefined && options.tokenizer !== undefined) {
    throw toolctxError("INVALID_ARGUMENT", `${module}: give tokenizer or usage, not both (createUsage({tokenizer}) takes the tokenizer)`);
  }
  if (options.tokenizer !== undefined && typeof options.tokenizer !== "function") {
    throw toolctxError("INVALID_ARGUMENT", `${module}: tokenizer must be a function (text) => number of tokens`);
  }
  const usage = options.usage ?? createUsage({ tokenizer: options.tokenizer });
  for (const method of ["offloaded", "readBack", "snapshot", "definitions", "modelCalls"]) {
    if (typeof usage?.[method] !== "function") {
      throw toolctxError("INVALID_ARGUMENT", `${module}: usage must be a tally from createUsage() (toolctx/tools)`);
    }
  }
  return usage;
}

/** toolctx/tools' limits among `options` (the rest are the wrapper's). */
function limitsOf(options) {
  const { usage: _usage, tokenizer: _tokenizer, ...limits } = options ?? {};
  return limits;
}

/**
 * toolctx/tools' definitions over `manager` (its limits taken from `options`), each with
 * `run(input)` → `{text, error?}`: the text the model reads (a mistake's text names the
 * tool: `read_context: …`, the same in every integration and the MCP server), and the
 * error behind a failed call, for the framework to mark the result as one. What they read
 * back is counted in `options.usage` (the text itself, so a tokenizer counts it).
 */
export function countedDefinitions(manager, options = {}) {
  const { usage } = options;
  if (usage !== undefined && typeof usage?.readBack !== "function") {
    throw toolctxError("INVALID_ARGUMENT", "toolctx/tools: usage must be a tally from createUsage()");
  }
  return toolDefinitions(manager, { ...limitsOf(options), usage }).map(({ name, description, inputSchema, run }) => ({ name, description, inputSchema, run }));
}

/**
 * The error a framework reports for a failed call of a retrieval tool, or for a handle
 * that did not resolve: a ToolctxError whose message is exactly the text the model is to
 * read (the original error as its cause). An error not written for the model (storage, a
 * closed manager) is the application's, and is returned as it is.
 */
export function modelError(text, error) {
  if (!isForTheModel(error)) return error;
  const code = error.code === "NOT_FOUND" ? "NOT_FOUND" : "INVALID_ARGUMENT"; // MODEL_ERRORS
  return toolctxError(code, text, { cause: error });
}

/** Counts the retrieval tools' definitions in `usage`: what the wrapper adds to every model call. */
export function countAddedDefinitions(manager, options, usage) {
  usage.definitions(toolDefinitions(manager, limitsOf(options)).map(definitionText));
}

/** A definition as a model is sent it (the JSON of its name, description and schema): what its tokens are counted on. */
export const definitionText = (d) => JSON.stringify({ name: d.name, description: d.description, input_schema: d.inputSchema });

/**
 * A copy of `args`, which the tool's schema has validated, with every string that is a
 * handle replaced by the stored output as text: a string as it is, any other value (a
 * JSON record, a `#$` slice) as its JSON text, indented. Since the schema took a string
 * there, it still takes what replaces it; resolveHandles of toolctx/tools reads each
 * handle (and says what is wrong with one, for the model).
 */
export function resolveAsText(args, manager) {
  return resolveHandles(args, manager, { asText: true });
}

/** Whether the retrieval tools are added (`retrievalTools`, default true); none of `names` may then be one of theirs. */
export function retrievalOption(options, names, module) {
  const retrieval = options.retrievalTools ?? true;
  if (typeof retrieval !== "boolean") throw toolctxError("INVALID_ARGUMENT", `${module}: retrievalTools must be true or false`);
  const taken = retrieval ? names.find((name) => TOOL_NAMES.includes(name)) : undefined;
  if (taken) throw toolctxError("INVALID_ARGUMENT", `${module}: the tools already have one named ${taken}; pass retrievalTools: false to add none`);
  return retrieval;
}

/** The args a record keeps: the model's input when it is an object, else `{input}`. */
export function argsOf(input) {
  return input !== null && typeof input === "object" && !Array.isArray(input) ? input : { input };
}

/** JSON with BigInts as strings of their digits and an object met again inside itself as "[Circular]". */
export function lenientJson(value) {
  const ancestors = [];
  const text = JSON.stringify(value, function (key, v) {
    if (typeof v === "bigint") return v.toString();
    if (v === null || typeof v !== "object") return v;
    // `this` holds `key`: the objects after it on the path are done with.
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(v)) return "[Circular]";
    ancestors.push(v);
    return v;
  });
  return text ?? "null";
}

/** `output` as it is when JSON can carry it, else as lenient JSON text (String(output) when even that fails). */
export function jsonSafe(output) {
  try {
    JSON.stringify(output);
    return output;
  } catch {
    try {
      return lenientJson(output);
    } catch {
      return String(output);
    }
  }
}

/**
 * The compact text the model reads instead of a large output: what it was and where it
 * went (`handle`), a numbered preview of its first and last `lines` (numbered as
 * read_context numbers them), how to read it back, and which tools (`takers`) take the
 * handle itself. `description` is quoted when given.
 */
export function compactText({ handle, toolName, chars, lines, takers = [], description }, s) {
  const head = lines.slice(0, s.previewLines);
  const tailFrom = Math.max(head.length, lines.length - s.previewLines);
  const tail = lines.slice(tailFrom);
  const width = String(lines.length).length;
  const share = Math.max(MIN_PREVIEW_LINE_CHARS, Math.floor(s.previewChars / Math.max(1, head.length + tail.length)) - width - 2);
  const numbered = (line, i) => `${String(i + 1).padStart(width)}  ${clip(line, share)}`;
  const preview = head.map((line, i) => numbered(line, i));
  if (tailFrom > head.length) preview.push(`… ${count(tailFrom - head.length)} lines not shown …`);
  preview.push(...tail.map((line, i) => numbered(line, tailFrom + i)));
  const text = [
    `[toolctx] The output of ${toolName} (${count(chars)} characters in ${count(lines.length)} line${lines.length === 1 ? "" : "s"}) ` +
      `was saved as ${handle} instead of being shown in full.`,
    ...(description ? [`Description: ${clip(description, QUOTED_DESCRIPTION)}`] : []),
    "Preview (first and last lines, numbered):",
    ...preview,
    `Read it with read_context {"handle": "${handle}"} ("offset": the first line, "limit": how many), ` +
      `find lines with grep_context {"pattern": "…", "handle": "${handle}"}, or search every saved output with search_context.`,
  ];
  if (takers.length > 0) {
    const listed = takers.slice(0, MAX_LISTED_TAKERS).join(", ") + (takers.length > MAX_LISTED_TAKERS ? ", …" : "");
    text.push(`To hand the whole output to ${listed}, pass "${handle}" as an argument's value (or "${handle}#L10-40" for lines 10 to 40).`);
  }
  return text.join("\n");
}

/**
 * What the wrapped tools of one wrapper call share: the options checked once, the tally,
 * and `offload`, which saves one call's output and resolves to what the model gets in
 * its place. `names`: the tools being wrapped; `allNames`: every tool's name (none may
 * be a retrieval tool's when those are added).
 */
export function createOffloader(manager, options, names, allNames, module) {
  const s = previewSettings(options, module);
  const retrievalTools = retrievalOption(options, allNames, module);
  for (const key of ["onSaveError", "describe"]) {
    if (options[key] !== undefined && typeof options[key] !== "function") throw toolctxError("INVALID_ARGUMENT", `${module}: ${key} must be a function`);
  }
  const usage = usageOption(options, module);
  const takers = resolvingNames(options.resolveHandles, names, module);
  // What the wrapper adds to every model call: the TAKES_HANDLES sentence of each taker's description.
  usage.definitions(takers.map(() => ` ${TAKES_HANDLES}`));

  /**
   * Saves `output` of `call` ({toolName, input, toolCallId, …}). `text`: what the model
   * would read, or undefined when it is not text (never replaced).
   * Resolves to the compact text when the output is large and saved, else to the output
   * (made JSON-safe when its save failed and onSaveError let the run go on).
   */
  async function offload(call, output, text) {
    const chars = text?.length;
    let filepath;
    try {
      const saveOptions = {
        toolCallId: call.toolCallId,
        description: options.describe?.(call),
        taskId: valueOf(options.taskId, call),
        queryId: valueOf(options.queryId, call),
      };
      for (const key of Object.keys(saveOptions)) if (saveOptions[key] === undefined) delete saveOptions[key];
      filepath = await manager.saveContext(call.toolName, argsOf(call.input), output, saveOptions);
    } catch (error) {
      if (!options.onSaveError) {
        throw toolctxError(error?.code ?? "STORAGE", `${module}: the output of ${call.toolName} could not be saved: ${error?.message ?? error}`, { cause: error });
      }
      options.onSaveError(error, call); // the output then reaches the model as it would without toolctx
      return jsonSafe(output);
    }
    if (chars === undefined || chars <= s.maxInlineChars) return output;
    let pointer;
    try {
      pointer = findRecord(manager, filepath);
    } catch {
      return output; // evicted at once (retention): a handle would answer NOT_FOUND, so the model gets it all
    }
    const compact = compactText({ handle: pointer.handle, toolName: call.toolName, chars, lines: lineView(output, manager), takers, description: pointer.toolDescription }, s);
    usage.offloaded(text, compact);
    return compact;
  }

  return { offload, usage, retrievalTools, resolves: (name) => takers.includes(name) };
}

// ---- wrappers that hand back an array of a framework's tools (Agents, LangChain) ---------------

// The tally of each tool a wrapper returned, for usageOfTools.
const usageByTool = new WeakMap();

/**
 * `tools` (an array of a framework's tools) with each tool `canWrap` accepts wrapped by
 * `wrap(tool, offloader)`, and the retrieval tools (`contextTools(manager, options)`, the
 * framework's) added unless `retrievalTools: false`. Other tools pass unchanged. `nameOf`
 * reads any tool's name (for the check that no retrieval tool's name is taken).
 */
export function wrapTools(tools, manager, options, { module, canWrap, wrap, contextTools, nameOf = (t) => t?.name }) {
  if (!Array.isArray(tools)) throw toolctxError("INVALID_ARGUMENT", `${module}: tools must be an array of the framework's tools`);
  checkManager(manager, module);
  if (options === null || typeof options !== "object") throw toolctxError("INVALID_ARGUMENT", `${module}: options must be an object`);
  const allNames = tools.map(nameOf).filter((name) => typeof name === "string");
  const offloader = createOffloader(manager, options, tools.filter(canWrap).map((t) => t.name), allNames, module);
  const wrapped = tools.map((t) => (canWrap(t) ? wrap(t, offloader) : t));
  const retrieval = offloader.retrievalTools ? contextTools(manager, { ...options, usage: offloader.usage, tokenizer: undefined }) : [];
  if (offloader.retrievalTools) countAddedDefinitions(manager, options, offloader.usage);
  const all = [...wrapped, ...retrieval];
  for (const t of all) if (canWrap(t)) usageByTool.set(t, offloader.usage);
  return all;
}

/**
 * What the tools of `tools` (what wrapTools returned, or any array holding its tools)
 * kept out of the prompt and read back: the sum over the wrapTools calls they came from.
 * `options.modelCalls`: how many model calls went out (each carried the added definitions).
 */
export function usageOfTools(tools, module, options = {}) {
  const tallies = new Set();
  for (const t of Array.isArray(tools) ? tools : []) {
    const usage = usageByTool.get(t);
    if (usage) tallies.add(usage);
  }
  if (tallies.size === 0) throw toolctxError("INVALID_ARGUMENT", `${module}: usageOf takes the tools withToolContext returned`);
  return sumUsage([...tallies].map((u) => u.snapshot()), options?.modelCalls);
}
