// toolctx/tools: the model's tools over a ContextManager, framework-free (SPEC §1).
//
// - contextTools(manager, options) → [{name, description, inputSchema, execute, run}]:
//   read_context {handle, offset?, limit?}, search_context {query, limit?} and
//   grep_context {pattern, handle?, limit?}. `inputSchema` is JSON Schema; `execute(input)`
//   resolves to the text the model reads, whatever the input: a mistake is answered with
//   a text that names the tool and the parameter and says what would work, never a
//   rejection (SPEC §1: the tools never stall and never throw past `execute`). `run(input)`
//   resolves to `{text, error?}`: the same text, and the ToolctxError behind it when the
//   call failed (its `code`), for a caller that marks failed calls (the MCP server's
//   `isError`). Every integration (AI SDK, Anthropic, MCP, OpenAI Agents, LangChain) is
//   built from these same definitions: one description, one set of limits, one wording.
// - resolveHandles(args, manager): a copy of `args` in which every string that is exactly
//   a handle (`ctx:…`, optionally with a slice: `#L10-40` for lines, `#$.hits[0:5]` for a
//   JSON path; quotes, backticks and trailing punctuation around it are forgiven) is
//   replaced by the stored value, so a model passes a 14-character handle where it would
//   re-emit a whole output.
// - findRecord(manager, ref): the record a handle, a toolctx:// pointer, a filepath or a
//   file name names.
// - lineView(result, manager): a result as the model reads it (the lines passages number).
//
// Where things are: this file has the limits, the tools (their schemas, descriptions and
// texts) and re-exports the rest of the subpath; references.js has the reference grammar
// and what a reference reads (parseReference, findRecord, lineView, lineRange, jsonPath,
// resolveHandles) and the message helpers the three files share; grep.js has grep_context's
// matching (linePattern, plainText, scan); usage.js the usage tally (createUsage, sumUsage).
//
// Bounded by design: every input is answered in bounded time. grep_context matches with
// the core's linear-time matcher (crates/core/src/grep.rs: no look-around, no back-references; a
// pattern such as `(a+)+$` cannot backtrack), in chunks of lines, and stops at its time
// budget (`grepMillis`) saying how far it got; lines are matched in their first
// `maxMatchChars` characters; a query is clipped at `maxQueryChars`. resolveHandles walks
// without recursion, so a cycle or a 100,000-deep argument is copied as it is.
//
// The three files import nothing but each other, errors.js and protocol.js (leaf files
// beside them), and this one re-exports usage.js (which imports errors.js alone): the line
// view, the matcher and the one pointer at a filepath are the core's, reached through the
// manager (`manager[READER]`, protocol.js), so the module loads wherever the manager does
// (a bundle, a page without an import map) and uses that manager's core. A stand-in for a manager (the MCP server's view
// of a whole store) has getAllPointers, loadContexts, selectRelevant, resolveHandle and a
// READER with `lines` and `matchingLines` (and may have `pointerAt`).
//
// A record reads as its line view (the core's, crates/core/src/view.rs; see references.js):
// read_context and grep_context number its lines from 1, as the passages of search_context do.

import { toolctxError } from "./errors.js";
import { linePattern, scan } from "./grep.js";
import { checkManager, clip, count, jsonPath, lineRange, linesOf, lineView, locate, quoted, recordOf } from "./references.js";

export { findRecord, lineView, parseReference, POINTER_SCHEME, resolveHandles } from "./references.js";

/** The names of the tools, in the order contextTools gives them. */
export const TOOL_NAMES = ["read_context", "search_context", "grep_context"];

/** The limits every integration shares; `contextTools(manager, options)` may lower or raise each. */
export const LIMITS = Object.freeze({
  readLines: 200,
  maxReadLines: 1000,
  maxReadChars: 20_000,
  maxLineChars: 2_000,
  searchResults: 5,
  maxSearchResults: 20,
  maxQueryChars: 1_000,
  grepMatches: 30,
  maxGrepMatches: 200,
  grepContext: 1,
  maxGrepBytes: 16 * 1024 * 1024,
  maxPatternChars: 500,
  /** A regular expression is matched against a line's first this many characters (a minified
   * file is one line; the slowest patterns take ~8 µs a character); plain text, against all of it. */
  maxMatchChars: 16 * 1024,
  /** grep_context stops scanning after this long, and says how far it got. */
  grepMillis: 500,
});

/** LIMITS with `options`' values for its keys: an INVALID_ARGUMENT error for a value that is no whole number. */
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
    pattern: {
      type: "string",
      description: "A regular expression matched against each line: the usual syntax (classes, alternation, repetition, anchors, \\b), (?i) for case-insensitive; no look-around or back-references (it is matched in linear time).",
    },
    handle: { type: "string", description: "Only this saved output (its ctx:… handle); default: every saved output, newest first." },
    limit: { type: "integer", minimum: 1, description: "Most matching lines to return." },
  },
  required: ["pattern"],
  additionalProperties: false,
};

/**
 * The model's tools over `manager`: `[{name, title, description, inputSchema, execute, run}]`,
 * in TOOL_NAMES order. `options`: the limits (LIMITS' keys), and `usage` (a Usage, see
 * `createUsage`) to count what the tools read back.
 */
export function contextTools(manager, options = {}) {
  checkManager(manager, "contextTools");
  const s = limitsOf(options);
  const usage = options.usage;
  const tool = (name, title, description, inputSchema, fn) => {
    const answer = async (input) => {
      try {
        return { text: await fn(manager, input !== null && typeof input === "object" && !Array.isArray(input) ? input : {}, s) };
      } catch (error) {
        const cause = error instanceof Error ? error : new Error(String(error));
        return { text: errorText(name, cause), error: cause };
      }
    };
    // The model reads a failed call's text too: every answer is counted (as text, so a tokenizer counts it).
    const run = async (input) => {
      const answered = await answer(input);
      usage?.readBack(answered.text);
      return answered;
    };
    return { name, title, description, inputSchema, execute: async (input) => (await run(input)).text, run };
  };
  return [
    tool(
      "read_context",
      "Read a saved tool output",
      "Read a saved tool output by its handle (ctx:…), a page of numbered lines at a time " +
        `(default ${s.readLines} lines; at most ${s.maxReadLines} lines and ${count(s.maxReadChars)} characters a call). ` +
        "Structured outputs read one field or array element per line.",
      READ_SCHEMA,
      readContext,
    ),
    tool(
      "search_context",
      "Search saved tool outputs",
      "Find the saved tool outputs relevant to a query, best first: each one's handle, description and size, " +
        "and its best-matching lines with their line numbers.",
      SEARCH_SCHEMA,
      searchContext,
    ),
    tool(
      "grep_context",
      "Grep saved tool outputs",
      "Find the lines of saved tool outputs that match a regular expression: each hit with its handle, " +
        `line number and a line of context (at most ${s.maxGrepMatches} lines a call).`,
      GREP_SCHEMA,
      grepContext,
    ),
  ];
}

/** What the model reads when a call of `toolName` failed: the tool's name and the error's message (every integration's wording). */
export const errorText = (toolName, error) => `${toolName}: ${error?.message ?? String(error)}`;

/** A positive whole number a model passed as `name`, or `fallback` when it passed none; at most `max`. */
function wanted(value, fallback, max, name) {
  if (value === undefined || value === null) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    if (Number.isInteger(value) && value > 0) return max; // a huge whole number: as many as there are
    throw toolctxError("INVALID_ARGUMENT", `${name} must be a positive whole number (1, 2, …), got ${quoted(value)}`);
  }
  return Math.min(value, max);
}

/** A line as shown: clipped at `max` characters, saying how many more there are. */
function shown(line, max) {
  return line.length <= max ? line : `${line.slice(0, max)}… [${count(line.length - max)} more characters]`;
}

/** How a record is introduced in the tools' texts: its handle, what it is, its size. */
function title(pointer) {
  return `${pointer.handle} ${clip(pointer.toolDescription, 200)} (${count(pointer.size ?? 0)} bytes)`;
}

async function readContext(manager, { handle, offset, limit }, s) {
  const { pointer, slice } = locate(manager, handle);
  const record = await recordOf(manager, pointer);
  if (slice?.startsWith("$")) {
    const value = jsonPath(record.result, slice, `${pointer.handle}#${slice}`, "handle");
    return `${title(pointer)}: ${clip(slice, 200)}\n${clip(JSON.stringify(value, null, 1) ?? "undefined", s.maxReadChars)}`;
  }
  const lines = lineView(record.result, manager);
  // A #L slice on the handle (the form the compact text teaches) reads those lines.
  const range = slice === undefined ? undefined : lineRange(slice, lines.length, pointer.handle);
  const first = range ? range.from : wanted(offset, 1, Number.MAX_SAFE_INTEGER, "offset");
  if (first > Math.max(1, lines.length)) {
    throw toolctxError("INVALID_ARGUMENT", `offset ${count(first)} is past the end of ${pointer.handle} (${count(lines.length)} lines); read from offset 1 to ${count(lines.length)}`);
  }
  const want = range ? Math.min(range.to - range.from + 1, s.maxReadLines) : wanted(limit, s.readLines, s.maxReadLines, "limit");
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
  if (typeof query !== "string" || query.trim() === "") throw toolctxError("INVALID_ARGUMENT", `query must be words to look for (a string), got ${quoted(query)}`);
  const want = wanted(limit, s.searchResults, s.maxSearchResults, "limit");
  const clipped = query.length > s.maxQueryChars;
  const asked = clipped ? query.slice(0, s.maxQueryChars) : query;
  const note = clipped ? `\n[query clipped to its first ${count(s.maxQueryChars)} characters: ask with the words that matter]` : "";
  const found = await manager.selectRelevant(asked, { limit: want, fallback: "none" });
  if (found.length === 0) return `No saved tool output matches "${clip(asked, 200)}".${note}`;
  const listed = found.map((hit, i) => {
    const lines = [`${i + 1}. ${title(hit.pointer)}`];
    if (hit.passage) {
      hit.passage.text.split("\n").forEach((line, k) => lines.push(`   ${hit.passage.startLine + k}: ${shown(line, 300)}`));
    }
    return lines.join("\n");
  });
  return `${listed.join("\n")}${note}`;
}

async function grepContext(manager, { pattern, handle, limit }, s) {
  const matcher = linePattern(manager, pattern, s);
  const want = wanted(limit, s.grepMatches, s.maxGrepMatches, "limit");
  // One record by its handle (with a line slice, ctx:…#L10-40, those lines), or every record, newest first.
  const named = handle === undefined ? undefined : locate(manager, handle);
  const targets = named ? [named.pointer] : manager.getAllPointers().reverse();
  const slice = named?.slice;
  if (slice?.startsWith("$")) throw toolctxError("INVALID_ARGUMENT", "handle: grep_context reads lines: pass the handle alone, or with #L<from>-<to>");
  const deadline = Date.now() + s.grepMillis;
  const out = [];
  let hits = 0;
  let bytes = 0;
  let stopped = "";
  let long = 0;
  for (let t = 0; t < targets.length && !stopped; t++) {
    if (bytes >= s.maxGrepBytes) {
      stopped = `stopped after ${count(bytes)} characters (${t} of ${targets.length} saved outputs searched); pass a handle`;
      break;
    }
    if (Date.now() >= deadline) {
      stopped = `stopped after ${count(s.grepMillis)} ms: searched ${t} of ${targets.length} saved outputs; pass a handle or narrow the pattern`;
      break;
    }
    let lines;
    try {
      lines = await linesOf(manager, targets[t]);
    } catch (error) {
      if (handle !== undefined) throw error;
      continue; // a record removed since it was listed
    }
    for (const line of lines) bytes += line.length + 1;
    const range = slice === undefined ? { from: 1, to: lines.length } : lineRange(slice, lines.length, targets[t].handle);
    // One match more than can be shown tells that there are more.
    const found = await scan(matcher, lines, { from: range.from - 1, to: range.to, enough: want - hits + 1, deadline }, s);
    long += found.clipped;
    if (found.next < range.to && found.hits.length <= want - hits) {
      stopped = `stopped after ${count(s.grepMillis)} ms: searched ${t + 1} of ${targets.length} saved outputs (${targets[t].handle} to line ${count(found.next)}); pass a handle or narrow the pattern`;
    }
    const matched = new Set(found.hits);
    let shownTo = -1;
    let titled = false;
    for (const i of found.hits) {
      if (hits === want) {
        stopped = "more matches not shown; narrow the pattern, pass a handle or raise limit";
        break;
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
        const match = k === i || matched.has(k);
        if (match && k > i) break;
        out.push(`  ${k + 1}${match ? ":" : "-"} ${shown(lines[k], 300)}`);
        shownTo = k;
      }
      hits++;
    }
  }
  const notes = [stopped, long ? `${count(long)} lines longer than ${count(s.maxMatchChars)} characters were matched in their first ${count(s.maxMatchChars)}` : ""].filter(Boolean);
  const text = hits ? out.join("\n") : `No line matches /${clip(pattern, 200)}/.`;
  return notes.length ? `${text}\n[${notes.join("; ")}]` : text;
}

// ---- accounting ---------------------------------------------------------------------------

// The usage tally lives in usage.js (one shape for every integration); re-exported here.
export { BYTES_PER_TOKEN, createUsage, sumUsage, USAGE_KEYS } from "./usage.js";
