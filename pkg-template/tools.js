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
// Bounded by design: every input is answered in bounded time. grep_context matches with
// the core's linear-time matcher (crates/core/src/grep.rs: no look-around, no back-references; a
// pattern such as `(a+)+$` cannot backtrack), in chunks of lines, and stops at its time
// budget (`grepMillis`) saying how far it got; lines are matched in their first
// `maxMatchChars` characters; a query is clipped at `maxQueryChars`. resolveHandles walks
// without recursion, so a cycle or a 100,000-deep argument is copied as it is.
//
// Why one file of ~700 lines: its four sections (references, the tools, references passed
// by handle, accounting) share the reference grammar, the limits and the message helpers,
// and the subpath `toolctx/tools` is one module that loads wherever the manager does. Its
// seams, for a split: references.js (parseReference, findRecord, lineRange, jsonPath,
// resolveHandles) and grep.js (linePattern, plainText, scan), beside the tools.
//
// It imports nothing but errors.js and protocol.js (leaf files beside it): the line view,
// the matcher and the one pointer at a filepath are the core's, reached through the
// manager (`manager[READER]`, protocol.js), so the module loads wherever the manager does
// (a bundle, a page without an import map) and uses that manager's core. A stand-in for a
// manager (the MCP server's view of a whole store) has getAllPointers, loadContexts,
// selectRelevant, resolveHandle and a READER with `lines` and `linePattern` (and may have
// `pointerAt`).
//
// A record reads as its line view (the core's, crates/core/src/view.rs): a string is its own lines;
// an object a field per line (a multi-line string field as its lines); an array an
// element per line. read_context and grep_context number those lines from 1, as the
// passages of search_context do.

import { toolctxError } from "./errors.js";
import { READER } from "./protocol.js";

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

/** Characters of lines handed to the matcher at once: the time between two looks at the clock. */
const GREP_CHUNK_CHARS = 8 * 1024;

/** A handle, optionally with a slice: lines (`#L10-40`, `#L10`) or a JSON path (`#$` and
 * what follows it, without white space but inside quoted keys). Nothing else: a handle
 * followed by prose is prose. */
const HANDLE_WITH_SLICE = /^(ctx:[a-z2-7]{10,12})(?:#(L\d+(?:-L?\d+)?|\$(?:[^\s"]|"(?:[^"\\]|\\.)*")*))?$/i;
/** What models put around a handle: quotes and brackets of every kind, and punctuation after it. */
const OPENERS = "`'\"“‘«<([{";
const CLOSERS = "`'\"”’»>)]}";
/** What a model puts after a handle: punctuation, and a closing quote or bracket without its opener. */
const TRAILING = /[.,;:!?)>'"`”’»]$/;

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
/** A value as a message quotes it: JSON where it can be, clipped. */
const quoted = (value) => {
  let text;
  try {
    text = typeof value === "bigint" ? `${value}n` : JSON.stringify(value);
  } catch {
    text = undefined; // a cycle
  }
  return clip(text ?? String(typeof value === "symbol" ? value.description : typeof value), 60);
};

// ---- references -----------------------------------------------------------------------------

/**
 * The handle and slice `text` names, as a model writes it (`ctx:…`, `ctx:…#L10-40`,
 * `ctx:…#$.a[0]`), forgiving what models put around it: white space, a pair of quotes,
 * backticks (one or three) or brackets, and punctuation after it. Undefined when `text` is
 * anything else (prose that mentions a handle included).
 */
export function parseReference(text) {
  if (typeof text !== "string" || text.length > 4096) return undefined;
  let t = text.trim();
  // Peeled one layer at a time: a pair (quotes, backticks, brackets), else a character after
  // it (punctuation, a closer without its opener), else an opener without its closer.
  for (;;) {
    const open = OPENERS.indexOf(t[0]);
    let next;
    if (open >= 0 && t.length > 1 && t[t.length - 1] === CLOSERS[open]) next = t.slice(1, -1);
    else if (TRAILING.test(t) && !HANDLE_WITH_SLICE.test(t)) next = t.slice(0, -1);
    else if (open >= 0 && !HANDLE_WITH_SLICE.test(t)) next = t.slice(1);
    else break;
    t = next.trim();
  }
  const m = HANDLE_WITH_SLICE.exec(t);
  return m ? { handle: m[1].toLowerCase(), slice: m[2] } : undefined;
}

/** A result as the model reads it: its line view (see the module's docs; `manager`'s core makes it), as lines. */
export function lineView(result, manager) {
  checkManager(manager, "lineView");
  if (result === undefined) return [];
  return manager[READER].lines(JSON.stringify(result)).split("\n");
}

/**
 * The pointer of the record `ref` names: a handle (`ctx:…`, decorated or with a slice as
 * models write it), a `toolctx://` pointer (a file name or a filepath after the scheme), a
 * filepath or a file name. A NOT_FOUND error, worded for the model, when no record of
 * `manager` has it.
 */
export function findRecord(manager, ref) {
  checkManager(manager, "findRecord");
  return locate(manager, ref).pointer;
}

/** The pointer of the record `ref` names (findRecord) and the slice given with its handle (`#L…`, `#$…`), if any. */
function locate(manager, ref) {
  if (typeof ref !== "string" || ref.trim() === "") {
    throw toolctxError("INVALID_ARGUMENT", `handle: a record is named by its handle (ctx:…), which search_context and grep_context print; got ${quoted(ref)}`);
  }
  const reference = parseReference(ref);
  const text = ref.trim();
  const name = text.startsWith(POINTER_SCHEME) ? text.slice(POINTER_SCHEME.length) : text;
  // A handle or a filepath names one pointer, read alone; a file name is looked for.
  const filepath = reference ? manager.resolveHandle(reference.handle) : name;
  const found = filepath === undefined ? undefined : pointerAt(manager, filepath);
  if (found) return { pointer: found, slice: reference?.slice };
  if (!reference) {
    const named = manager.getAllPointers().find((p) => p.filename === name || p.handle === name);
    if (named) return { pointer: named };
    if (/^\W*ctx:[a-z2-7]{10,12}#/i.test(text)) {
      throw toolctxError("INVALID_ARGUMENT", `handle: a slice is #L<from>-<to> (lines) or #$<path> (a JSON path such as $.hits[0:5]); got ${clip(text, 80)}`);
    }
  }
  throw toolctxError("NOT_FOUND", `handle: no saved tool output has the handle ${clip(reference?.handle ?? text, 120)}; search_context lists the handles that exist`);
}

/** The pointer at `filepath`, or undefined: the core's one pointer, else (a stand-in for a
 * manager) a look through every pointer. */
function pointerAt(manager, filepath) {
  const reader = manager[READER];
  if (typeof reader?.pointerAt !== "function") return manager.getAllPointers().find((p) => p.filepath === filepath);
  return reader.pointerAt(filepath);
}

/** The record of `pointer`, or NOT_FOUND when it can no longer be read. */
async function recordOf(manager, pointer) {
  const [record] = await manager.loadContexts([pointer.filepath]);
  if (!record) throw toolctxError("NOT_FOUND", `handle: the saved output ${pointer.handle} can no longer be read (removed since)`);
  return record;
}

/** The line view of the record of `pointer`. */
async function linesOf(manager, pointer) {
  return lineView((await recordOf(manager, pointer)).result, manager);
}

/**
 * A `#L<from>-<to>` slice as 1-based lines `{from, to}` of a view of `total` lines: the
 * bounds in either order, `to` past the end read as the end. An INVALID_ARGUMENT error
 * naming what exists when the lines start past the end.
 */
function lineRange(slice, total, handle) {
  const m = /^L(\d+)(?:-L?(\d+))?$/i.exec(slice);
  if (!m) throw toolctxError("INVALID_ARGUMENT", `handle: #${clip(slice, 40)} is no line slice: read lines with #L<from>-<to>`);
  let [from, to] = [Number(m[1]), m[2] === undefined ? Number(m[1]) : Number(m[2])];
  if (to < from) [from, to] = [to, from];
  if (from < 1) throw toolctxError("INVALID_ARGUMENT", `handle: lines are numbered from 1 (${handle}#L${m[1]}${m[2] ? `-${m[2]}` : ""})`);
  if (from > total) {
    throw toolctxError("INVALID_ARGUMENT", `handle: ${handle} has ${count(total)} lines, so #L${from}${to === from ? "" : `-${to}`} is past its end; ask for lines 1-${count(total)}`);
  }
  return { from, to: Math.min(to, total) };
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

/**
 * The core's matcher for a pattern as a model writes it: a plain pattern, or the
 * JavaScript literal form `/…/i` (its flags: `i` → case-insensitive, `s` → `.` matches
 * anything; `g`, `m`, `u` and `y` mean nothing for one line).
 */
function linePattern(manager, pattern, s) {
  if (typeof pattern !== "string" || pattern.length === 0) throw toolctxError("INVALID_ARGUMENT", `pattern must be a regular expression (a non-empty string), got ${quoted(pattern)}`);
  if (pattern.length > s.maxPatternChars) {
    throw toolctxError("INVALID_ARGUMENT", `pattern is ${count(pattern.length)} characters; at most ${count(s.maxPatternChars)}: match a distinctive part of the line`);
  }
  const literal = /^\/(.+)\/([gimsuy]+)$/s.exec(pattern);
  const source = literal ? `${literal[2].includes("i") ? "(?i)" : ""}${literal[2].includes("s") ? "(?s)" : ""}${literal[1]}` : pattern;
  const plain = PLAIN_TEXT.exec(source);
  if (plain) return plainText(plain[2], plain[1] !== undefined);
  let compiled;
  try {
    compiled = manager[READER].linePattern(source);
  } catch (error) {
    if (error?.code !== "INVALID_ARGUMENT") throw error;
    throw toolctxError("INVALID_ARGUMENT", `pattern: ${error.message}`, { cause: error });
  }
  return {
    wholeLines: false, // the automaton's time grows with the line: maxMatchChars bounds it
    matchingLines: (lines) => compiled.matchingLines(lines.join("\n")), // one crossing into the core a chunk
    free: () => compiled.free(),
  };
}

/** A pattern with no regular-expression syntax (optionally after `(?i)`): text to find as it is. */
const PLAIN_TEXT = /^(\(\?i\))?([^\\^$.|?*+()[\]{}]+)$/;

/**
 * The matcher of a plain-text pattern, with the interface of the core's (linePattern):
 * the text is found with `includes` (the engine's own substring search, many times faster
 * than the core's automaton, which has no literal search of its own), case-folded with
 * `(?i)`.
 */
function plainText(text, caseless) {
  const needle = caseless ? text.toLowerCase() : text;
  return {
    wholeLines: true, // a substring search is fast enough for any line
    matchingLines(lines) {
      const hits = [];
      lines.forEach((line, i) => {
        if ((caseless ? line.toLowerCase() : line).includes(needle)) hits.push(i);
      });
      return hits;
    },
    free() {},
  };
}

/** How long a grep matches before it lets other work run (the MCP server's other calls). */
const GREP_YIELD_MS = 20;

/** A turn of the event loop (a macrotask: timers and I/O run). */
const yieldToOthers = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * The 0-based numbers of the lines of `lines` from `from` up to `to` that match, scanned
 * in chunks until `enough` matches, `to`, or `deadline`, letting other work run every
 * GREP_YIELD_MS: `{hits, next, clipped}`, where `next` is the first line not scanned and
 * `clipped` counts the lines matched in their first maxMatchChars characters only.
 */
async function scan(pattern, lines, { from, to, enough, deadline }, s) {
  const hits = [];
  let clipped = 0;
  let i = from;
  let since = Date.now();
  while (i < to && hits.length < enough && Date.now() < deadline) {
    if (Date.now() - since >= GREP_YIELD_MS) {
      await yieldToOthers();
      since = Date.now();
    }
    const chunk = [];
    let chars = 0;
    for (let j = i; j < to && (chunk.length === 0 || chars < GREP_CHUNK_CHARS); j++) {
      const cut = lines[j].length > s.maxMatchChars && !pattern.wholeLines;
      const line = cut ? lines[j].slice(0, s.maxMatchChars) : lines[j];
      if (cut) clipped++;
      chunk.push(line);
      chars += line.length + 1;
    }
    for (const k of pattern.matchingLines(chunk)) hits.push(i + k);
    i += chunk.length;
  }
  return { hits, next: i, clipped };
}

async function grepContext(manager, { pattern, handle, limit }, s) {
  const matcher = linePattern(manager, pattern, s);
  try {
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
  } finally {
    matcher.free();
  }
}

// ---- references passed by handle ----------------------------------------------------------------

/** Whether `value` is a container resolveHandles copies: an array, or a plain object (its prototype Object.prototype or null). */
function copied(value) {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of `args` in which every string that is exactly a handle, optionally with a
 * slice, is replaced by the stored value: `ctx:…` the whole result; `ctx:…#L10-40` (or
 * `#L10`) those lines of its line view, as one string; `ctx:…#$.hits[0:5]` the part a
 * JSON path names (`.key`, `["key"]`, `[i]`, `[start:end]`). Quotes, backticks and
 * trailing punctuation a model puts around a handle are forgiven (`parseReference`).
 * Arrays and plain objects are copied (own keys such as `__proto__` stay keys; a cycle
 * or any depth of nesting is copied as it is); other values are kept as they are. A
 * handle no record has, or a slice that does not apply, is an error whose message names
 * the argument and the model can act on. `options.asText`: a stored value that is not a
 * string is given as its JSON text (indented), for a parameter that takes text.
 */
export async function resolveHandles(args, manager, options = {}) {
  checkManager(manager, "resolveHandles");
  const asText = options?.asText === true;
  // 1. The references, each once with where it was first seen (a walk without recursion:
  // any depth, cycles seen once; a place is its key and its parent's place, made a path
  // only for an error).
  const texts = new Map();
  const seen = new Set();
  const stack = [{ value: args, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const place = stack.pop();
    const { value } = place;
    if (typeof value === "string") {
      const reference = parseReference(value);
      if (reference && !texts.has(value)) texts.set(value, { reference, place });
    } else if (copied(value) && !seen.has(value)) {
      seen.add(value);
      const array = Array.isArray(value);
      // Pushed last to first, so that places are visited in order: an error names the first.
      for (const key of Object.keys(value).reverse()) stack.push({ value: value[key], key: array ? Number(key) : key, parent: place });
    }
  }
  if (texts.size > MAX_REFERENCES) {
    throw toolctxError("INVALID_ARGUMENT", `the arguments hold ${count(texts.size)} different handles; at most ${MAX_REFERENCES} are resolved in one call`);
  }
  // 2. Their values, each record read once; an error names the argument the handle was in.
  const values = new Map();
  const records = new Map();
  for (const [text, { reference, place }] of texts) {
    try {
      const value = await resolveOne(manager, reference, records);
      values.set(text, asText && typeof value !== "string" ? (JSON.stringify(value, null, 2) ?? String(value)) : value);
    } catch (error) {
      if (error?.code !== "NOT_FOUND" && error?.code !== "INVALID_ARGUMENT") throw error; // the storage's, not the model's
      const code = error.code === "NOT_FOUND" ? "NOT_FOUND" : "INVALID_ARGUMENT";
      throw toolctxError(code, `${pathOf(place)}: ${error.message.replace(/^handle: /, "")}`, { cause: error });
    }
  }
  // 3. The copy, with the same shape (cycles and shared parts included).
  const copies = new Map();
  const pending = [];
  const copyOf = (value) => {
    if (typeof value === "string") return values.has(value) ? values.get(value) : value;
    if (!copied(value)) return value;
    let copy = copies.get(value);
    if (copy === undefined) {
      copy = Array.isArray(value) ? new Array(value.length) : Object.create(Object.getPrototypeOf(value));
      copies.set(value, copy);
      pending.push(value);
    }
    return copy;
  };
  const root = copyOf(args);
  while (pending.length > 0) {
    const value = pending.pop();
    const copy = copies.get(value);
    for (const key of Object.keys(value)) {
      // defineProperty, not assignment: an own "__proto__" key stays a key.
      Object.defineProperty(copy, key, { value: copyOf(value[key]), writable: true, enumerable: true, configurable: true });
    }
  }
  return root;
}

/** A place of resolveHandles' walk as a path (`text`, `items[2].path`; the arguments themselves: `arguments`). */
function pathOf(place) {
  const parts = [];
  for (let at = place; at?.parent !== undefined; at = at.parent) {
    parts.push(typeof at.key === "number" ? `[${at.key}]` : /^[A-Za-z_$][\w$]*$/.test(at.key) ? `.${at.key}` : `[${JSON.stringify(at.key)}]`);
  }
  const path = parts.reverse().join("");
  return path === "" ? "arguments" : path.replace(/^\./, "");
}

/** How many different references one resolveHandles call resolves at most. */
const MAX_REFERENCES = 100;

/** The value `{handle, slice}` names; `records` keeps each record (and its line view) read by this call. */
async function resolveOne(manager, { handle, slice }, records) {
  const pointer = findRecord(manager, handle);
  let read = records.get(pointer.filepath);
  if (read === undefined) records.set(pointer.filepath, (read = { record: await recordOf(manager, pointer) }));
  const { record } = read;
  if (slice === undefined) return record.result;
  const text = `${pointer.handle}#${slice}`;
  if (slice.startsWith("$")) return jsonPath(record.result, slice, text);
  const view = (read.view ??= lineView(record.result, manager));
  const { from, to } = lineRange(slice, view.length, pointer.handle);
  return view.slice(from - 1, to).join("\n");
}

/** The part of `value` that `path` ($, .key, ["key"], [i], [start:end]) names; errors begin with `name`. */
function jsonPath(value, path, text, name = clip(text, 80)) {
  const step = /^(?:\.([A-Za-z_$][\w$-]*)|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[\s*(-?\d+)\s*\]|\[\s*(-?\d+)?\s*:\s*(-?\d+)?\s*\])/;
  const where = name === clip(text, 80) ? "" : ` (in ${clip(text, 80)})`;
  const fail = (why) => toolctxError("INVALID_ARGUMENT", `${name}: ${why}${where}`);
  let rest = path.slice(1);
  let at = value;
  while (rest.length > 0) {
    const m = step.exec(rest);
    if (!m) throw fail(`cannot read the JSON path at "${clip(rest, 60)}"; a path is $ then .key, ["key"], [i] or [start:end]`);
    rest = rest.slice(m[0].length);
    let key = m[1];
    if (m[2] !== undefined) {
      try {
        key = JSON.parse(`"${m[2]}"`);
      } catch {
        throw fail(`["${clip(m[2], 40)}"] is not a JSON string (a bad escape)`);
      }
    }
    if (key !== undefined) {
      if (at === null || typeof at !== "object" || Array.isArray(at) || !Object.hasOwn(at, key)) throw fail(`no field "${clip(key, 60)}" there`);
      at = at[key];
    } else if (m[3] !== undefined) {
      if (!Array.isArray(at)) throw fail(`[${m[3]}] needs an array`);
      const i = Number(m[3]) < 0 ? at.length + Number(m[3]) : Number(m[3]);
      if (i < 0 || i >= at.length) throw fail(`index ${m[3]} is outside the ${at.length} elements`);
      at = at[i];
    } else {
      if (!Array.isArray(at) && typeof at !== "string") throw fail("a slice needs an array or a string");
      at = at.slice(m[4] === undefined ? 0 : Number(m[4]), m[5] === undefined ? undefined : Number(m[5]));
    }
  }
  return at;
}

// ---- accounting ---------------------------------------------------------------------------

// The usage tally lives in usage.js (one shape for every integration); re-exported here.
export { BYTES_PER_TOKEN, createUsage, sumUsage, USAGE_KEYS } from "./usage.js";
