// toolctx/tools: the model's tools over a ContextManager, framework-free (SPEC §1).
//
// - contextTools(manager, options) → [{name, description, inputSchema, execute}]:
//   read_context {handle, offset?, limit?}, search_context {query, limit?} and
//   grep_context {pattern, handle?, limit?}. `inputSchema` is JSON Schema; `execute(input)`
//   resolves to the text the model reads, or rejects with an Error whose `code` says why
//   (its message is written for the model). Every integration (AI SDK, Anthropic, MCP,
//   OpenAI Agents, LangChain) is built from these same definitions: one description, one
//   set of limits, one wording.
// - resolveHandles(args, manager): a copy of `args` in which every string that is exactly
//   a handle (`ctx:…`, optionally with a slice: `#L10-40` for lines, `#$.hits[0:5]` for a
//   JSON path) is replaced by the stored value, so a model passes a 14-character handle
//   where it would re-emit a whole output.
// - findRecord(manager, ref): the record a handle, a toolctx:// pointer, a filepath or a
//   file name names.
// - lineView(result, manager): a result as the model reads it (the lines passages number).
//
// It imports nothing but errors.js (the package's error constructor, a file beside it):
// the line view is the core's, reached through the manager (`__lines`), so the module
// loads wherever the manager does (a bundle, a page without an import map). A stand-in
// for a manager (the MCP server's view of a whole store) has getAllPointers,
// loadContexts, selectRelevant, resolveHandle and __lines (and may have __pointerAt, the
// pointer at a filepath).
//
// A record reads as its line view (the core's, src/view.rs): a string is its own lines;
// an object a field per line (a multi-line string field as its lines); an array an
// element per line. read_context and grep_context number those lines from 1, as the
// passages of search_context do.

import { toolctxError } from "./errors.js";

/** The names of the tools, in the order contextTools gives them. */
export const TOOL_NAMES = ["read_context", "search_context", "grep_context"];

/** The scheme of the older pointers (`toolctx://<filename>` or `toolctx://<filepath>`), accepted as input. */
export const POINTER_SCHEME = "toolctx://";

/** The limits every integration shares; `contextTools(manager, options)` may lower or raise each. */
export const LIMITS = Object.freeze({
  readLines: 200,
  maxReadLines: 1000,
  maxReadChars: 20_000,
  maxLineChars: 2_000,
  searchResults: 5,
  maxSearchResults: 20,
  grepMatches: 30,
  maxGrepMatches: 200,
  grepContext: 1,
  maxGrepBytes: 16 * 1024 * 1024,
  maxPatternChars: 500,
});

const HANDLE = /^ctx:[a-z2-7]{10,12}$/i;
const HANDLE_WITH_SLICE = /^(ctx:[a-z2-7]{10,12})(?:#(.+))?$/is;

function checkManager(manager, what) {
  if (!manager || typeof manager.loadContexts !== "function" || typeof manager.getAllPointers !== "function") {
    throw toolctxError("INVALID_ARGUMENT", `toolctx/tools: ${what} needs a toolctx ContextManager`);
  }
}

function limitsOf(options) {
  const merged = { ...LIMITS };
  for (const [key, value] of Object.entries(options ?? {})) {
    if (!(key in LIMITS) || value === undefined) continue;
    if (!Number.isInteger(value) || value < (key === "grepContext" ? 0 : 1)) {
      throw toolctxError("INVALID_ARGUMENT", `toolctx/tools: ${key} must be a ${key === "grepContext" ? "non-negative" : "positive"} integer, got ${value}`);
    }
    merged[key] = value;
  }
  return merged;
}

const count = (n) => n.toLocaleString("en-US");
const clip = (text, max) => (text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`);

// ---- records --------------------------------------------------------------------------------

/** A result as the model reads it: its line view (see the module's docs; `manager`'s core makes it), as lines. */
export function lineView(result, manager) {
  checkManager(manager, "lineView");
  if (result === undefined) return [];
  return manager.__lines(JSON.stringify(result)).split("\n");
}

/**
 * The pointer of the record `ref` names: a handle (`ctx:…`), a `toolctx://` pointer (a
 * file name or a filepath after the scheme), a filepath or a file name. A NOT_FOUND error,
 * worded for the model, when no record of `manager` has it.
 */
export function findRecord(manager, ref) {
  checkManager(manager, "findRecord");
  if (typeof ref !== "string" || ref.trim() === "") {
    throw toolctxError("INVALID_ARGUMENT", "a record is named by its handle (ctx:…), which search_context and grep_context print");
  }
  const text = ref.trim();
  const name = text.startsWith(POINTER_SCHEME) ? text.slice(POINTER_SCHEME.length) : text;
  // A handle or a filepath names one pointer, read alone; a file name is looked for.
  const filepath = HANDLE.test(text) ? manager.resolveHandle(text) : name;
  const found = filepath === undefined ? undefined : pointerAt(manager, filepath);
  if (found) return found;
  if (!HANDLE.test(text)) {
    const named = manager.getAllPointers().find((p) => p.filename === name || p.handle === name);
    if (named) return named;
  }
  throw toolctxError("NOT_FOUND", `no saved tool output has the handle ${clip(text, 120)}; search_context lists the handles that exist`);
}

/** The pointer at `filepath`, or undefined: the core's one pointer (`__pointerAt`), else
 * (a stand-in for a manager) a look through every pointer. */
function pointerAt(manager, filepath) {
  if (typeof manager.__pointerAt !== "function") return manager.getAllPointers().find((p) => p.filepath === filepath);
  const json = manager.__pointerAt(filepath);
  return json === undefined ? undefined : JSON.parse(json);
}

/** The line view of the record of `pointer`, or NOT_FOUND when it can no longer be read. */
async function linesOf(manager, pointer) {
  const [record] = await manager.loadContexts([pointer.filepath]);
  if (!record) throw toolctxError("NOT_FOUND", `the saved output ${pointer.handle} can no longer be read (removed since)`);
  return lineView(record.result, manager);
}

/** A line as shown: clipped at `max` characters, saying how many more there are. */
function shown(line, max) {
  return line.length <= max ? line : `${line.slice(0, max)}… [${count(line.length - max)} more characters]`;
}

/** How a record is introduced in the tools' texts: its handle, what it is, its size. */
function title(pointer) {
  return `${pointer.handle} ${clip(pointer.toolDescription, 200)} (${count(pointer.size ?? 0)} bytes)`;
}

// ---- the tools ------------------------------------------------------------------------------

const READ_SCHEMA = {
  type: "object",
  properties: {
    handle: { type: "string", description: "The handle of a saved tool output (ctx:…), as search_context and grep_context print it." },
    offset: { type: "integer", minimum: 1, description: "The first line to read (1 is the first line; grep_context and search_context print line numbers)." },
    limit: { type: "integer", minimum: 1, description: "How many lines to read." },
  },
  required: ["handle"],
  additionalProperties: false,
};

const SEARCH_SCHEMA = {
  type: "object",
  properties: {
    query: { type: "string", description: "What you are looking for, in words." },
    limit: { type: "integer", minimum: 1, description: "How many saved outputs to list." },
  },
  required: ["query"],
  additionalProperties: false,
};

const GREP_SCHEMA = {
  type: "object",
  properties: {
    pattern: { type: "string", description: "A JavaScript regular expression, matched against each line (case-sensitive; (?i) is not supported, use [Aa])." },
    handle: { type: "string", description: "Only this saved output (its ctx:… handle); default: every saved output, newest first." },
    limit: { type: "integer", minimum: 1, description: "Most matching lines to return." },
  },
  required: ["pattern"],
  additionalProperties: false,
};

/**
 * The model's tools over `manager`: `[{name, description, inputSchema, execute}]`, in
 * TOOL_NAMES order. `options`: the limits (LIMITS' keys), and `usage` (a Usage, see
 * `createUsage`) to count what the tools read back.
 */
export function contextTools(manager, options = {}) {
  checkManager(manager, "contextTools");
  const s = limitsOf(options);
  const usage = options.usage;
  const counted = (fn) => async (input) => {
    const text = await fn(manager, input ?? {}, s);
    usage?.readBack(text.length);
    return text;
  };
  return [
    {
      name: "read_context",
      description:
        "Read a saved tool output by its handle (ctx:…), a page of numbered lines at a time " +
        `(default ${s.readLines} lines; at most ${s.maxReadLines} lines and ${count(s.maxReadChars)} characters a call). ` +
        "Structured outputs read one field or array element per line.",
      inputSchema: READ_SCHEMA,
      execute: counted(readContext),
    },
    {
      name: "search_context",
      description:
        "Find the saved tool outputs relevant to a query, best first: each one's handle, description and size, " +
        "and its best-matching lines with their line numbers.",
      inputSchema: SEARCH_SCHEMA,
      execute: counted(searchContext),
    },
    {
      name: "grep_context",
      description:
        "Find the lines of saved tool outputs that match a regular expression: each hit with its handle, " +
        `line number and a line of context (at most ${s.maxGrepMatches} lines a call).`,
      inputSchema: GREP_SCHEMA,
      execute: counted(grepContext),
    },
  ];
}

function wanted(value, fallback, max, what) {
  if (value === undefined || value === null) return fallback;
  if (!Number.isInteger(value) || value < 1) throw toolctxError("INVALID_ARGUMENT", `${what} must be a positive whole number, got ${clip(JSON.stringify(value) ?? String(value), 40)}`);
  return Math.min(value, max);
}

async function readContext(manager, { handle, offset, limit }, s) {
  const pointer = findRecord(manager, handle);
  const lines = await linesOf(manager, pointer);
  const first = wanted(offset, 1, Number.MAX_SAFE_INTEGER, "offset");
  if (first > Math.max(1, lines.length)) {
    throw toolctxError("INVALID_ARGUMENT", `offset ${first} is past the end of ${pointer.handle} (${count(lines.length)} lines)`);
  }
  const want = wanted(limit, s.readLines, s.maxReadLines, "limit");
  const width = String(Math.min(lines.length, first + want)).length;
  const out = [];
  let chars = 0;
  for (let i = first - 1; i < lines.length && out.length < want; i++) {
    const line = `${String(i + 1).padStart(width)}  ${shown(lines[i], s.maxLineChars)}`;
    if (out.length > 0 && chars + line.length + 1 > s.maxReadChars) break;
    out.push(line);
    chars += line.length + 1;
  }
  const last = first - 1 + out.length;
  const head = `${title(pointer)}: lines ${count(out.length ? first : 0)}–${count(last)} of ${count(lines.length)}`;
  const more = last < lines.length ? `\n[${count(lines.length - last)} more lines: read_context {"handle": "${pointer.handle}", "offset": ${last + 1}}]` : "";
  return `${head}\n${out.join("\n")}${more}`;
}

async function searchContext(manager, { query, limit }, s) {
  if (typeof query !== "string" || query.trim() === "") throw toolctxError("INVALID_ARGUMENT", "query must be words to look for");
  const want = wanted(limit, s.searchResults, s.maxSearchResults, "limit");
  const found = await manager.selectRelevant(query, { limit: want, fallback: "none" });
  if (found.length === 0) return `No saved tool output matches "${clip(query, 200)}".`;
  return found
    .map((hit, i) => {
      const lines = [`${i + 1}. ${title(hit.pointer)}`];
      if (hit.passage) {
        hit.passage.text.split("\n").forEach((line, k) => lines.push(`   ${hit.passage.startLine + k}: ${shown(line, 300)}`));
      }
      return lines.join("\n");
    })
    .join("\n");
}

async function grepContext(manager, { pattern, handle, limit }, s) {
  if (typeof pattern !== "string" || pattern.length === 0 || pattern.length > s.maxPatternChars) {
    throw toolctxError("INVALID_ARGUMENT", `pattern must be a regular expression of 1 to ${s.maxPatternChars} characters`);
  }
  let re;
  try {
    re = new RegExp(pattern);
  } catch (error) {
    throw toolctxError("INVALID_ARGUMENT", `invalid pattern: ${error.message}`, { cause: error });
  }
  const want = wanted(limit, s.grepMatches, s.maxGrepMatches, "limit");
  const targets = handle !== undefined ? [findRecord(manager, handle)] : manager.getAllPointers().reverse();
  const out = [];
  let hits = 0;
  let bytes = 0;
  let stopped = "";
  outer: for (let t = 0; t < targets.length; t++) {
    if (bytes >= s.maxGrepBytes) {
      stopped = `stopped after ${count(bytes)} characters (${t} of ${targets.length} saved outputs searched); pass a handle`;
      break;
    }
    let lines;
    try {
      lines = await linesOf(manager, targets[t]);
    } catch (error) {
      if (handle !== undefined) throw error;
      continue; // a record removed since it was listed
    }
    bytes += lines.reduce((n, l) => n + l.length + 1, 0);
    let shownTo = -1;
    let titled = false;
    for (let i = 0; i < lines.length; i++) {
      if (!re.test(lines[i])) continue;
      if (hits === want) {
        stopped = "more matches not shown; narrow the pattern, pass a handle or raise limit";
        break outer;
      }
      if (!titled) {
        out.push(title(targets[t]));
        titled = true;
      }
      const from = Math.max(i - s.grepContext, shownTo + 1);
      if (shownTo >= 0 && from > shownTo + 1) out.push("  --");
      for (let k = from; k <= Math.min(lines.length - 1, i + s.grepContext); k++) {
        if (k <= shownTo) continue;
        // A later line that matches is a hit of its own (shown as one), never context past the limit.
        const match = k === i || re.test(lines[k]);
        if (match && k > i && hits + 1 >= want) break;
        out.push(`  ${k + 1}${match ? ":" : "-"} ${shown(lines[k], 300)}`);
        shownTo = k;
      }
      hits++;
    }
  }
  const text = hits ? out.join("\n") : `No line matches /${clip(pattern, 200)}/.`;
  return stopped ? `${text}\n[${stopped}]` : text;
}

// ---- references passed by handle ----------------------------------------------------------------

/**
 * A copy of `args` in which every string that is exactly a handle, optionally with a
 * slice, is replaced by the stored value: `ctx:…` the whole result; `ctx:…#L10-40` (or
 * `#L10`) those lines of its line view, as one string; `ctx:…#$.hits[0:5]` the part a
 * JSON path names (`.key`, `["key"]`, `[i]`, `[start:end]`). Other values are kept as
 * they are. A handle no record has, or a slice that does not apply, is an error whose
 * message the model can act on.
 */
export async function resolveHandles(args, manager) {
  checkManager(manager, "resolveHandles");
  const walk = async (value) => {
    if (typeof value === "string") return HANDLE_WITH_SLICE.test(value.trim()) ? resolveOne(manager, value.trim()) : value;
    if (Array.isArray(value)) return Promise.all(value.map(walk));
    if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
      const out = {};
      for (const [k, v] of Object.entries(value)) out[k] = await walk(v);
      return out;
    }
    return value;
  };
  return walk(args);
}

async function resolveOne(manager, text) {
  const [, handle, slice] = HANDLE_WITH_SLICE.exec(text);
  const pointer = findRecord(manager, handle);
  const [record] = await manager.loadContexts([pointer.filepath]);
  if (!record) throw toolctxError("NOT_FOUND", `the saved output ${pointer.handle} can no longer be read (removed since)`);
  if (slice === undefined) return record.result;
  const lines = /^L(\d+)(?:-L?(\d+))?$/i.exec(slice);
  if (lines) {
    const view = lineView(record.result, manager);
    const from = Number(lines[1]);
    const to = lines[2] === undefined ? from : Number(lines[2]);
    if (from < 1 || to < from || from > view.length) {
      throw toolctxError("INVALID_ARGUMENT", `${text}: lines ${from}-${to} are not within the ${count(view.length)} lines of ${pointer.handle}`);
    }
    return view.slice(from - 1, to).join("\n");
  }
  if (slice.startsWith("$")) return jsonPath(record.result, slice, text);
  throw toolctxError("INVALID_ARGUMENT", `${text}: a slice is #L<from>-<to> (lines) or #$<path> (a JSON path such as $.hits[0:5])`);
}

/** The part of `value` that `path` ($, .key, ["key"], [i], [start:end]) names. */
function jsonPath(value, path, text) {
  const step = /^(?:\.([A-Za-z_$][\w$-]*)|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[\s*(-?\d+)\s*\]|\[\s*(-?\d*)\s*:\s*(-?\d*)\s*\])/;
  let rest = path.slice(1);
  let at = value;
  while (rest.length > 0) {
    const m = step.exec(rest);
    if (!m) throw toolctxError("INVALID_ARGUMENT", `${text}: cannot read the JSON path at "${clip(rest, 60)}"`);
    rest = rest.slice(m[0].length);
    const key = m[1] ?? (m[2] !== undefined ? JSON.parse(`"${m[2]}"`) : undefined);
    if (key !== undefined) {
      if (at === null || typeof at !== "object" || Array.isArray(at) || !Object.hasOwn(at, key)) {
        throw toolctxError("INVALID_ARGUMENT", `${text}: no field "${clip(key, 60)}" there`);
      }
      at = at[key];
    } else if (m[3] !== undefined) {
      if (!Array.isArray(at)) throw toolctxError("INVALID_ARGUMENT", `${text}: [${m[3]}] needs an array`);
      const i = Number(m[3]) < 0 ? at.length + Number(m[3]) : Number(m[3]);
      if (i < 0 || i >= at.length) throw toolctxError("INVALID_ARGUMENT", `${text}: index ${m[3]} is outside the ${at.length} elements`);
      at = at[i];
    } else {
      if (!Array.isArray(at) && typeof at !== "string") throw toolctxError("INVALID_ARGUMENT", `${text}: a slice needs an array or a string`);
      at = at.slice(m[4] === "" ? 0 : Number(m[4]), m[5] === "" ? undefined : Number(m[5]));
    }
  }
  return at;
}

// ---- accounting ---------------------------------------------------------------------------

/** The estimate `maxTokens` budgets use too (the core's `estimated_tokens`): 4 bytes a token. */
export const BYTES_PER_TOKEN = 4;

/**
 * A tally of what a wrapper kept out of the prompt: `offloaded(chars)` when an output of
 * `chars` characters went to storage and the model got `shownChars` instead,
 * `readBack(chars)` when a tool read some back. `snapshot()` →
 * `{outputsOffloaded, charsKeptOut, tokensKeptOut, readsBack, charsReadBack}`
 * (tokens estimated as selection budgets estimate them: BYTES_PER_TOKEN characters a token).
 */
export function createUsage() {
  const tally = { outputsOffloaded: 0, charsKeptOut: 0, tokensKeptOut: 0, readsBack: 0, charsReadBack: 0 };
  return {
    offloaded(chars, shownChars = 0) {
      tally.outputsOffloaded++;
      const kept = Math.max(0, chars - shownChars);
      tally.charsKeptOut += kept;
      tally.tokensKeptOut += Math.ceil(kept / BYTES_PER_TOKEN);
    },
    readBack(chars) {
      tally.readsBack++;
      tally.charsReadBack += chars;
    },
    snapshot() {
      return { ...tally };
    },
  };
}
